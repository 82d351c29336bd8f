// fat::Editor: changes read back through fat::Volume, checked clean by
// fat::check_volume, and cut after every write (a device that stops
// accepting writes after the Nth: what a crash leaves) without harming what
// was there. The same through the reference tools: tests/oracle/fat_edit*.sh.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "edit_test_support.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/edit.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/file.hpp"

using namespace fsimg;
using namespace fsimg::fat;
using namespace fsimg::test;

namespace {

Layout plan(std::uint64_t bytes, FatType type, std::uint32_t cluster, std::uint32_t root_entries = 512) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.type = type;
    r.cluster_bytes = cluster;
    r.root_entry_count = root_entries;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

io::MemoryImage formatted(const Layout& l, const std::string& label = "") {
    io::MemoryImage img(l.volume_bytes());
    FormatOptions o;
    o.volume_id = 0x12345678;
    o.label = label;
    o.timestamp_unix = 1700000000;
    format_volume(img, l, o);
    return img;
}

std::string read_back(const io::BlockDevice& dev, const std::string& path) {
    const Volume v(dev);
    const auto r = v.lookup(path);
    REQUIRE(r.has_value());
    std::string out;
    v.read_file(*r, [&](std::span<const std::byte> s) {
        out.append(reinterpret_cast<const char*>(s.data()), s.size());
    });
    return out;
}

/// The codes our checker raises, with their counts.
std::map<std::string, std::size_t> findings(const io::BlockDevice& dev) {
    check::Findings f;
    (void)fat::check_volume(dev, f);
    std::map<std::string, std::size_t> out;
    for (const auto& x : f.all()) ++out[std::string(x.code)];
    return out;
}

/// "" when the checker finds nothing, else its findings, one per line.
std::string problems(const io::BlockDevice& dev) {
    check::Findings f;
    (void)fat::check_volume(dev, f);
    std::string out;
    for (const auto& x : f.all()) out += fmt::format("{}: {}\n", x.code, x.message);
    return out;
}

EditOptions opts() {
    EditOptions o;
    o.now = 1700000000;
    o.clamp = 1700000000;
    return o;
}

DirId dir_of(Editor& e, const std::string& path) {
    const auto r = e.lookup(path);
    REQUIRE(r.has_value());
    return e.directory_of(*r);
}

}  // namespace

TEST_CASE("fat edit: files and directories added read back and check clean", "[fat][edit]") {
    for (const FatType type : {FatType::fat12, FatType::fat16, FatType::fat32}) {
        const Layout l = type == FatType::fat32   ? plan(40 << 20, type, 512)
                         : type == FatType::fat16 ? plan(24 << 20, type, 2048)
                                                  : plan(4 << 20, type, 1024);
        io::MemoryImage img = formatted(l, "EDIT");
        HostFiles h;
        const std::string small = pattern(5000, 1), empty, big = pattern(300000, 2);
        Source s1(h.make("small.bin", small)), s2(h.make("empty", empty)), s3(h.make("big", big));
        Editor e(img, opts());
        const DirRecord sub = e.add_directory(kRootDir, "Sub Dir", {});
        CHECK(sub.name == "Sub Dir");
        CHECK(sub.short_name_raw == "SUBDIR~1");
        e.add_file(e.directory_of(sub), "hello.txt", s1.open(), {});
        e.add_file(kRootDir, "EMPTY", s2.open(), {});
        const DirRecord b = e.add_file(kRootDir, "A long name.data", s3.open(), {});
        CHECK(b.short_name_raw == "ALONGN~1.DAT");
        e.finish();
        INFO(fmt::format("FAT{}", type == FatType::fat12 ? 12 : type == FatType::fat16 ? 16 : 32));
        CHECK(read_back(img, "/Sub Dir/hello.txt") == small);
        CHECK(read_back(img, "/sub dir/HELLO.TXT") == small);
        CHECK(read_back(img, "/EMPTY").empty());
        CHECK(read_back(img, "/a long name.data") == big);
        // "hello.txt" is a lower-case 8.3 name: a short entry alone with the NT case bits.
        const Volume v(img);
        const auto hello = v.lookup("/Sub Dir/hello.txt");
        REQUIRE(hello);
        CHECK_FALSE(hello->has_long_name);
        CHECK(hello->entry.nt_res == (kNtLowerBase | kNtLowerExt));
        CHECK(problems(img) == "");
        if (type != FatType::fat12)
            CHECK((v.fat_entry(1) & (type == FatType::fat16 ? 0x8000u : 0x08000000u)) != 0);
    }
}

TEST_CASE("fat edit: a directory grows past one cluster, a fixed root fills, a full volume refuses",
          "[fat][edit]") {
    HostFiles h;
    Source s(h.make("x", "content"));
    {
        const Layout l = plan(24 << 20, FatType::fat16, 512);
        io::MemoryImage img = formatted(l);
        Editor e(img, opts());
        const DirId d = e.directory_of(e.add_directory(kRootDir, "many", {}));
        for (int i = 0; i < 60; ++i)
            e.add_file(d, fmt::format("a file with a long name {:02}.txt", i), s.open(), {});
        e.finish();
        // 60 names of 30 characters (3 LFN entries + the short one) + "." and "..": 242 entries, 16 clusters
        // of 16.
        const Volume v(img);
        CHECK(v.read_directory(dir_of(e, "/many")).records.size() == 62);
        CHECK(v.follow_chain(dir_of(e, "/many"), 100).clusters == 16);
        CHECK(read_back(img, "/many/a file with a long name 59.txt") == "content");
        CHECK(problems(img) == "");
    }
    {
        const Layout l = plan(4 << 20, FatType::fat12, 1024, 16);
        REQUIRE(l.root_entry_count == 16);
        io::MemoryImage img = formatted(l);
        Editor e(img, opts());
        for (int i = 0; i < 16; ++i) e.add_file(kRootDir, fmt::format("F{}.TXT", i), s.open(), {});
        const auto before = img.bytes();
        REQUIRE_THROWS_WITH(
            e.add_file(kRootDir, "ONE.MORE", s.open(), {}),
            Catch::Contains("no space left in the root directory: a FAT12 root holds 16 entries"));
        e.finish();
        CHECK(read_back(img, "/F15.TXT") == "content");
        CHECK(problems(img) == "");  // nothing lost: the clusters of the refused file were freed
    }
    {
        const Layout l = plan(4 << 20, FatType::fat12, 4096);
        io::MemoryImage img = formatted(l);
        Source huge(h.make("huge", pattern(5 << 20, 3)));
        Editor e(img, opts());
        REQUIRE_THROWS_WITH(e.add_file(kRootDir, "huge", huge.open(), {}),
                            Catch::Contains("no space left on the volume"));
        e.finish();
        CHECK(problems(img) == "");
        CHECK(Volume(img).read_directory(0).records.empty());
    }
}

TEST_CASE("fat edit: remove, rename, move, replace, attributes, label keep the volume clean", "[fat][edit]") {
    const Layout l = plan(40 << 20, FatType::fat32, 512);
    io::MemoryImage img = formatted(l, "OLD");
    HostFiles h;
    const std::string c1 = pattern(2000, 4), c2 = pattern(70000, 5), c3 = pattern(123, 6);
    Source s1(h.make("1", c1)), s2(h.make("2", c2)), s3(h.make("3", c3));
    check::Findings f0;
    const std::uint64_t free_at_start = fat::check_volume(img, f0).free_clusters;
    {
        Editor e(img, opts());
        const DirId a = e.directory_of(e.add_directory(kRootDir, "a", {}));
        const DirId b = e.directory_of(e.add_directory(a, "b", {}));
        e.add_file(b, "deep file.txt", s1.open(), {});
        e.add_file(a, "readme.txt", s2.open(), {});
        e.add_file(kRootDir, "keep.bin", s3.open(), {});
        e.finish();
    }
    REQUIRE(problems(img) == "");
    {
        Editor e(img, opts());
        // A case-only rename in place, a move of a directory to the root (".." rewritten).
        const DirId a = dir_of(e, "/a");
        e.rename(a, *e.find(a, "readme.txt"), a, "README.TXT", false);
        e.rename(a, *e.find(a, "b"), kRootDir, "b moved", false);
        e.set_attributes(kRootDir, *e.find(kRootDir, "keep.bin"), kAttrReadOnly | kAttrHidden, kAttrArchive);
        e.replace_file(kRootDir, *e.find(kRootDir, "keep.bin"), s1.open(), {});
        e.set_label("Mixed Case");
        e.set_volume_id(0xCAFEF00D);
        e.finish();
    }
    // The label keeps its case; our checker warns as Windows would not write it.
    CHECK(findings(img) == std::map<std::string, std::size_t>{{"compat.label.chars", 1}});
    {
        const Volume v(img);
        const auto r = v.lookup("/a/README.TXT");
        REQUIRE(r);
        CHECK(r->name == "README.TXT");
        CHECK(read_back(img, "/a/README.TXT") == c2);
        CHECK(read_back(img, "/b moved/deep file.txt") == c1);
        CHECK_FALSE(v.lookup("/a/b"));
        const auto k = v.lookup("/keep.bin");
        REQUIRE(k);
        CHECK((k->entry.attr & (kAttrReadOnly | kAttrHidden | kAttrArchive)) ==
              (kAttrReadOnly | kAttrHidden | kAttrArchive));
        CHECK(read_back(img, "/keep.bin") == c1);
        CHECK(v.boot().boot.volume_id == 0xCAFEF00D);
        CHECK(v.boot().boot.volume_label == "Mixed Case ");
        REQUIRE(v.boot().root_label);
        CHECK(*v.boot().root_label == "Mixed Case ");
        // The FAT32 backup boot sector follows.
        REQUIRE(v.boot().backup);
        CHECK(v.boot().backup->volume_id == 0xCAFEF00D);
    }
    {
        Editor e(img, opts());
        CHECK(e.label() == "Mixed Case");
        e.remove(kRootDir, *e.find(kRootDir, "a"));
        e.remove(kRootDir, *e.find(kRootDir, "b moved"));
        e.remove(kRootDir, *e.find(kRootDir, "keep.bin"));
        e.set_label("");
        e.finish();
        CHECK(e.label().empty());
    }
    check::Findings f;
    const auto sum = fat::check_volume(img, f);
    CHECK(f.all().empty());
    CHECK(sum.free_clusters == free_at_start);
    // FSInfo's free count follows exactly.
    CHECK(Volume(img).boot().fsinfo->free_count == free_at_start);
}

TEST_CASE("fat edit: a free gap too small is passed over, only fragments left make a fragmented chain",
          "[fat][edit]") {
    const Layout l = plan(1 << 20, FatType::fat12, 512);
    io::MemoryImage img = formatted(l);
    HostFiles h;
    const std::string two = pattern(1024, 7), ten = pattern(5000, 8);
    Source s2(h.make("two", two)), s10(h.make("ten", ten));
    Editor e(img, opts());
    e.add_file(kRootDir, "A", s2.open(), {});
    e.add_file(kRootDir, "B", s2.open(), {});
    e.add_file(kRootDir, "C", s2.open(), {});
    e.remove(kRootDir, *e.find(kRootDir, "B"));
    const DirRecord d = e.add_file(kRootDir, "D", s10.open(), {});
    const Chain c = e.volume().follow_chain(d.entry.first_cluster, 100);
    CHECK(c.runs.size() == 1);  // contiguous, after C, not in B's 2-cluster gap
    CHECK(c.clusters == 10);
    e.finish();
    CHECK(read_back(img, "/D") == ten);
    CHECK(problems(img) == "");
}

TEST_CASE("fat edit: cut after every write, what was there is intact and the change absent or complete",
          "[fat][edit][cut]") {
    struct Step {
        const char* what;
        bool may_cross_link;  // moving to another directory: both names for a moment (edit.hpp)
        void (*run)(Editor&, Source&);
    };
    const Step steps[] = {
        {"cp", false,
         [](Editor& e, Source& s) {
             e.add_file(dir_of(e, "/dir"), "a new file with a long name.txt", s.open(), {});
         }},
        {"cp into the full root", false,
         [](Editor& e, Source& s) { e.add_file(kRootDir, "another long name.txt", s.open(), {}); }},
        {"replace", false,
         [](Editor& e, Source& s) { e.replace_file(kRootDir, *e.find(kRootDir, "old.txt"), s.open(), {}); }},
        {"rm", false, [](Editor& e, Source&) { e.remove(kRootDir, *e.find(kRootDir, "old.txt")); }},
        {"rm -r", false, [](Editor& e, Source&) { e.remove(kRootDir, *e.find(kRootDir, "dir")); }},
        {"mkdir", false, [](Editor& e, Source&) { e.add_directory(kRootDir, "New Directory", {}); }},
        {"mv in place", false,
         [](Editor& e, Source&) {
             e.rename(kRootDir, *e.find(kRootDir, "old.txt"), kRootDir, "OLD.TXT", false);
         }},
        {"mv longer", false,
         [](Editor& e, Source&) {
             e.rename(kRootDir, *e.find(kRootDir, "old.txt"), kRootDir, "a much longer name than before.txt",
                      false);
         }},
        {"mv to a directory", true,
         [](Editor& e, Source&) {
             e.rename(kRootDir, *e.find(kRootDir, "old.txt"), dir_of(e, "/dir"), "old.txt", false);
         }},
        {"label", false, [](Editor& e, Source&) { e.set_label("NEWLABEL"); }},
    };
    HostFiles h;
    const std::string old_content = pattern(3000, 9), dir_content = pattern(1500, 10),
                      fresh = pattern(9000, 11);
    Source sold(h.make("old", old_content)), sdir(h.make("d", dir_content)), snew(h.make("new", fresh));
    for (const FatType type : {FatType::fat16, FatType::fat32}) {
        const Layout l = type == FatType::fat32 ? plan(40 << 20, type, 512) : plan(24 << 20, type, 512, 16);
        io::MemoryImage base = formatted(l, "BASE");
        {
            Editor e(base, opts());
            e.add_file(kRootDir, "old.txt", sold.open(), {});
            const DirId d = e.directory_of(e.add_directory(kRootDir, "dir", {}));
            for (int i = 0; i < 7; ++i) e.add_file(d, fmt::format("inner file {}.txt", i), sdir.open(), {});
            if (type == FatType::fat16)  // fill the 16-entry root but for 2 entries
                for (int i = 0; i < 11; ++i) e.add_file(kRootDir, fmt::format("R{}.TXT", i), sdir.open(), {});
            e.finish();
        }
        REQUIRE(problems(base) == "");
        for (const Step& st : steps) {
            // The number of writes the whole step makes, then every cut before it.
            io::MemoryImage full = base;
            std::uint64_t total = 0;
            {
                CutAfter dev(full, UINT64_MAX);
                Editor e(dev, opts());
                try {
                    st.run(e, snew);
                    e.finish();
                } catch (const Error& err) {
                    // The full root refuses on FAT16: then the image must equal... what a cut leaves.
                    CHECK(std::string(err.what()).find("no space") != std::string::npos);
                }
                total = dev.writes();
            }
            INFO(fmt::format("FAT{} {}: {} writes", type == FatType::fat16 ? 16 : 32, st.what, total));
            // The full FAT16 root refuses before its first write (the space is planned first).
            if (type == FatType::fat16 && std::string(st.what) == "cp into the full root") {
                CHECK(total == 0);
            } else {
                CHECK(total >= 1);
            }
            io::MemoryImage img = base;
            WrittenRanges written;
            for (std::uint64_t n = 0; n <= total; ++n) {
                INFO("cut after write " << n);
                rewind(img, base, written);
                {
                    CutAfter dev(img, n, &written);
                    Editor e(dev, opts());
                    try {
                        st.run(e, snew);
                        e.finish();
                    } catch (const Error&) {
                    }
                }
                std::set<std::string> allowed = {"fat.chain.lost", "fat.fat.dirty", "fat.fsinfo.free-count",
                                                 "fat.fsinfo.next-free", "fat.fat.copies-differ"};
                if (st.may_cross_link) allowed.insert("fat.chain.cross-link");
                if (std::string(st.what) == "label") {
                    allowed.insert("fat.label.mismatch");
                    allowed.insert("fat.boot.backup-differs");
                }
                for (const auto& [code, count] : findings(img)) {
                    INFO(code << " x" << count);
                    CHECK(allowed.count(code) == 1);
                }
                // What was there reads back unchanged, under its old or its new name.
                const Volume v(img);
                const bool old_there = v.lookup("/old.txt").has_value() || v.lookup("/OLD.TXT").has_value();
                const auto old_name = v.lookup("/old.txt") ? "/old.txt"
                                      : v.lookup("/a much longer name than before.txt")
                                          ? "/a much longer name than before.txt"
                                      : v.lookup("/dir/old.txt") ? "/dir/old.txt"
                                                                 : "";
                const std::string what = st.what;
                if (what == "rm" || what == "replace") {
                    if (old_there) {
                        const std::string c = read_back(img, "/old.txt");
                        CHECK((c == old_content || (what == "replace" && c == fresh)));
                    }
                } else if (what != "rm -r") {
                    REQUIRE(std::string(old_name) != "");
                    CHECK(read_back(img, old_name) == old_content);
                }
                if (what != "rm -r") {
                    for (int i = 0; i < 7; ++i)
                        CHECK(read_back(img, fmt::format("/dir/inner file {}.txt", i)) == dir_content);
                } else if (v.lookup("/dir")) {
                    for (int i = 0; i < 7; ++i)
                        CHECK(read_back(img, fmt::format("/dir/inner file {}.txt", i)) == dir_content);
                }
                if (what == "cp" && v.lookup("/dir/a new file with a long name.txt"))
                    CHECK(read_back(img, "/dir/a new file with a long name.txt") == fresh);
            }
        }
    }
}

TEST_CASE("fat edit: a refusal writes nothing (space for data and directory growth planned first)",
          "[fat][edit]") {
    HostFiles h;
    Source one(h.make("one", "x"));
    {
        // Directory d full to its cluster's end, one free cluster left: a file whose data
        // would fit but whose entry needs d to grow is refused before its data is written.
        const Layout l = plan(1 << 20, FatType::fat12, 512);
        io::MemoryImage img = formatted(l);
        Editor e(img, opts());
        DirId d = e.directory_of(e.add_directory(kRootDir, "D", {}));
        for (int i = 0; i < 14; ++i) e.add_file(d, fmt::format("F{}.TXT", i), one.open(), {});  // 2 + 14 = 16
        e.finish();
        check::Findings f;
        const auto free = fat::check_volume(img, f).free_clusters;
        REQUIRE(free > 2);
        Editor e2(img, opts());
        d = dir_of(e2, "/D");
        Source fill(h.make("fill", pattern((free - 1) * 512, 5)));
        e2.add_file(kRootDir, "FILL.BIN", fill.open(), {});
        const auto before = img.bytes();
        REQUIRE_THROWS_WITH(
            e2.add_file(d, "LAST.TXT", one.open(), {}),
            Catch::Contains("no space left on the volume: 2 clusters of 512 bytes are needed, 1 "
                            "are free"));
        CHECK(img.bytes() == before);
        REQUIRE_THROWS_WITH(e2.add_directory(d, "SUB", {}), Catch::Contains("no space left on the volume"));
        CHECK(img.bytes() == before);
        e2.finish();
        CHECK(problems(img) == "");
    }
    {
        // A FAT12 root of 16 entries with one deleted: 15 in use, and the message says so.
        const Layout l = plan(4 << 20, FatType::fat12, 1024, 16);
        io::MemoryImage img = formatted(l);
        Editor e(img, opts());
        for (int i = 0; i < 16; ++i) e.add_file(kRootDir, fmt::format("F{}.TXT", i), one.open(), {});
        e.remove(kRootDir, *e.find(kRootDir, "F3.TXT"));
        const auto before = img.bytes();
        REQUIRE_THROWS_WITH(e.add_file(kRootDir, "a long name.txt", one.open(), {}),
                            Catch::Contains("a FAT12 root holds 16 entries and 15 are in use"));
        CHECK(img.bytes() == before);
        e.finish();
        CHECK(problems(img) == "");
    }
}
