// exfat::Editor: changes read back through exfat::Volume, checked clean by
// exfat::check_volume, and cut after every write (a device that stops
// accepting writes after the Nth: what a crash leaves) without harming what
// was there. The same through the reference tools: tests/oracle/exfat_edit*.sh.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <variant>

#include "edit_test_support.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/exfat/edit.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"

using namespace fsimg;
using namespace fsimg::exfat;
using namespace fsimg::test;

namespace {

Layout plan(std::uint64_t bytes, std::uint32_t cluster) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.cluster_bytes = cluster;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

io::MemoryImage formatted(const Layout& l, const std::string& label = "") {
    io::MemoryImage img(l.volume_bytes());
    FormatOptions o;
    o.volume_serial_number = 0x12345678;
    o.label = label;
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

std::map<std::string, std::size_t> findings(const io::BlockDevice& dev) {
    check::Findings f;
    (void)exfat::check_volume(dev, f);
    std::map<std::string, std::size_t> out;
    for (const auto& x : f.all()) ++out[std::string(x.code)];
    return out;
}

std::string problems(const io::BlockDevice& dev) {
    check::Findings f;
    (void)exfat::check_volume(dev, f);
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

TEST_CASE("exfat edit: files and directories added read back and check clean", "[exfat][edit]") {
    for (const std::uint32_t cluster : {512u, 4096u, 65536u}) {
        INFO("cluster " << cluster);
        const Layout l = plan(cluster == 65536 ? 64 << 20 : 16 << 20, cluster);
        io::MemoryImage img = formatted(l, "EDIT");
        HostFiles h;
        const std::string small = pattern(5000, 1), big = pattern(300000, 2);
        Source s1(h.make("small.bin", small)), s2(h.make("empty", "")), s3(h.make("big", big));
        Editor e(img, opts());
        const FileRecord sub = e.add_directory(kRootDir, "Sub Dir", {});
        CHECK(sub.name == "Sub Dir");
        CHECK(sub.is_directory());
        CHECK(sub.no_fat_chain());
        CHECK(sub.data_length == cluster);
        e.add_file(e.directory_of(sub), "hello.txt", s1.open(), {});
        e.add_file(kRootDir, "EMPTY", s2.open(), {});
        const FileRecord b = e.add_file(kRootDir, "A long name.data", s3.open(), {});
        CHECK(b.no_fat_chain());  // one run: NoFatChain, no FAT entries
        CHECK(b.data_length == big.size());
        // Names are unique up-cased through the up-case table.
        REQUIRE_THROWS_WITH(e.add_file(kRootDir, "a LONG name.DATA", s1.open(), {}),
                            Catch::Contains("already exists"));
        REQUIRE_THROWS_WITH(e.add_directory(kRootDir, "bad:name", {}), Catch::Contains("bad:name"));
        // The first change marked the volume dirty, in the main boot sector only.
        CHECK((Volume(img).boot().main.boot.volume_flags & kVolumeFlagVolumeDirty) != 0);
        CHECK((Volume(img).boot().backup->boot.volume_flags & kVolumeFlagVolumeDirty) == 0);
        e.finish();
        CHECK(read_back(img, "/Sub Dir/hello.txt") == small);
        CHECK(read_back(img, "/sub dir/HELLO.TXT") == small);
        CHECK(read_back(img, "/EMPTY").empty());
        CHECK(read_back(img, "/a long name.data") == big);
        const Volume v(img);
        CHECK((v.boot().main.boot.volume_flags & kVolumeFlagVolumeDirty) == 0);
        CHECK(v.boot().main.checksum_ok);  // VolumeFlags and PercentInUse are outside the checksum
        CHECK(v.boot().main.boot.percent_in_use == v.used_clusters() * 100 / v.cluster_count());
        const auto hello = v.lookup("/Sub Dir/hello.txt");
        REQUIRE(hello);
        CHECK(hello->checksum_ok());
        CHECK(hello->name_hash_ok());
        CHECK(hello->attributes == kFileAttrArchive);
        CHECK(problems(img) == "");
    }
}

TEST_CASE(
    "exfat edit: directories grow past one cluster, a fragmented file gets a FAT chain, a full volume "
    "refuses",
    "[exfat][edit]") {
    HostFiles h;
    Source s(h.make("x", "content"));
    {
        const Layout l = plan(8 << 20, 512);
        io::MemoryImage img = formatted(l);
        Editor e(img, opts());
        const DirId d = e.directory_of(e.add_directory(kRootDir, "many", {}));
        e.add_file(kRootDir, "blocker", s.open(),
                   {});  // takes the cluster after "many": it cannot stay contiguous
        for (int i = 0; i < 40; ++i)
            e.add_file(d, fmt::format("a file with a long name {:02}.txt", i), s.open(), {});
        for (int i = 0; i < 40; ++i)
            e.add_file(kRootDir, fmt::format("root file number {:02}.txt", i), s.open(), {});
        e.finish();
        const Volume v(img);
        const auto many = v.lookup("/many");
        REQUIRE(many);
        // 40 sets of 4 entries (names of 30 units: 2 File Name entries): 160 entries, 10 clusters of 16.
        CHECK(many->data_length == 10 * 512);
        CHECK(many->valid_data_length == 10 * 512);
        CHECK_FALSE(many->no_fat_chain());  // fragmented: switched to a FAT chain
        CHECK(v.read_directory(*many).files.size() == 40);
        CHECK(v.follow_chain(v.root_cluster(), 100).clusters >= 11);  // 3 system + 42 sets of 4 entries
        CHECK(read_back(img, "/many/a file with a long name 39.txt") == "content");
        CHECK(read_back(img, "/root file number 39.txt") == "content");
        CHECK(problems(img) == "");
    }
    {
        const Layout l = plan(8 << 20, 512);
        io::MemoryImage img = formatted(l);
        const std::string two = pattern(1024, 7), ten = pattern(5000, 8);
        Source s2(h.make("two", two)), s10(h.make("ten", ten));
        Editor e(img, opts());
        e.add_file(kRootDir, "A", s2.open(), {});
        e.add_file(kRootDir, "B", s2.open(), {});
        e.add_file(kRootDir, "C", s2.open(), {});
        e.remove(kRootDir, *e.find(kRootDir, "B"));
        const FileRecord d = e.add_file(kRootDir, "D", s10.open(), {});
        CHECK(d.no_fat_chain());  // contiguous, after C, not in B's 2-cluster gap
        e.finish();
        CHECK(read_back(img, "/D") == ten);
        CHECK(problems(img) == "");
    }
    {
        // Only fragments are left: the file is FAT-chained.
        const Layout l = plan(1 << 20, 4096);
        io::MemoryImage img = formatted(l);
        const std::string one = pattern(4096, 9);
        Source s1(h.make("one", one));
        Editor e(img, opts());
        std::uint64_t files = 0;  // until the volume is full (the root grows on the way)
        try {
            for (;; ++files) e.add_file(kRootDir, fmt::format("f{}", files), s1.open(), {});
        } catch (const Error& err) {
            CHECK(std::string(err.what()).find("no space left") != std::string::npos);
        }
        REQUIRE(files > 100);
        INFO(problems(img));
        CHECK(problems(img).find("exfat.bitmap.lost") ==
              std::string::npos);  // the refused file's clusters freed
        for (std::uint64_t i = 0; i < files; i += 2)
            e.remove(kRootDir, *e.find(kRootDir, fmt::format("f{}", i)));
        const std::string three = pattern(3 * 4096 - 10, 10);
        Source s3(h.make("three", three));
        const FileRecord f = e.add_file(kRootDir, "fragmented", s3.open(), {});
        CHECK_FALSE(f.no_fat_chain());
        CHECK(e.volume().follow_chain(f.first_cluster, 10).runs.size() == 3);
        Source huge(h.make("huge", pattern(2 << 20, 3)));
        REQUIRE_THROWS_WITH(e.add_file(kRootDir, "huge", huge.open(), {}),
                            Catch::Contains("no space left on the volume"));
        e.finish();
        CHECK(read_back(img, "/fragmented") == three);
        CHECK_FALSE(Volume(img).lookup("/huge"));
        CHECK(problems(img) == "");
    }
}

TEST_CASE("exfat edit: remove, rename, move, replace, attributes, label, serial keep the volume clean",
          "[exfat][edit]") {
    const Layout l = plan(16 << 20, 512);
    io::MemoryImage img = formatted(l, "OLD");
    HostFiles h;
    const std::string c1 = pattern(2000, 4), c2 = pattern(70000, 5), c3 = pattern(123, 6);
    Source s1(h.make("1", c1)), s2(h.make("2", c2)), s3(h.make("3", c3));
    check::Findings f0;
    const std::uint64_t free_at_start = exfat::check_volume(img, f0).free_clusters;
    const auto root_clusters = [&] {
        const Volume v(img);
        return v.follow_chain(v.root_cluster(), 100).clusters;
    };
    const std::uint64_t root_at_start = root_clusters();
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
        const DirId a = dir_of(e, "/a");
        e.rename(a, *e.find(a, "readme.txt"), a, "README.TXT", false);  // case only
        e.rename(a, *e.find(a, "b"), kRootDir, "b moved", false);
        e.rename(kRootDir, *e.find(kRootDir, "b moved"), kRootDir,
                 "b moved with a much longer name than before", false);
        REQUIRE_THROWS_WITH(e.rename(kRootDir, *e.find(kRootDir, "a"), a, "a", false),
                            Catch::Contains("into itself"));
        e.set_attributes(kRootDir, *e.find(kRootDir, "keep.bin"), kFileAttrReadOnly | kFileAttrHidden,
                         kFileAttrArchive);
        e.replace_file(kRootDir, *e.find(kRootDir, "keep.bin"), s1.open(), {});
        e.set_label("Mixed Case");
        e.set_volume_id(0xCAFEF00D);
        e.finish();
        CHECK(e.label() == "Mixed Case");
    }
    CHECK(problems(img) == "");
    {
        const Volume v(img);
        const auto r = v.lookup("/a/README.TXT");
        REQUIRE(r);
        CHECK(r->name == "README.TXT");
        CHECK(read_back(img, "/a/README.TXT") == c2);
        CHECK(read_back(img, "/b moved with a much longer name than before/deep file.txt") == c1);
        CHECK_FALSE(v.lookup("/a/b"));
        const auto k = v.lookup("/keep.bin");
        REQUIRE(k);
        CHECK(k->attributes == (kFileAttrReadOnly | kFileAttrHidden | kFileAttrArchive));
        CHECK(read_back(img, "/keep.bin") == c1);
        CHECK(v.boot().main.boot.volume_serial_number == 0xCAFEF00D);
        CHECK(v.boot().backup->boot.volume_serial_number == 0xCAFEF00D);
        CHECK(v.boot().main.checksum_ok);
        CHECK(v.boot().backup->checksum_ok);
        CHECK(v.boot().backup_identical);
        REQUIRE(v.boot().label);
        CHECK(label_text(*v.boot().label) == "Mixed Case");
    }
    {
        Editor e(img, opts());
        // mv -f onto an existing file: the target takes the source's data.
        e.add_file(kRootDir, "other.bin", s2.open(), {});
        e.rename(kRootDir, *e.find(kRootDir, "other.bin"), dir_of(e, "/a"), "readme.txt", true);
        e.finish();
        CHECK(read_back(img, "/a/readme.txt") == c2);
        CHECK_FALSE(Volume(img).lookup("/other.bin"));
    }
    CHECK(problems(img) == "");
    {
        Editor e(img, opts());
        e.remove(kRootDir, *e.find(kRootDir, "a"));
        e.remove(kRootDir, *e.find(kRootDir, "b moved with a much longer name than before"));
        e.remove(kRootDir, *e.find(kRootDir, "keep.bin"));
        e.set_label("");
        e.finish();
        CHECK(e.label().empty());
    }
    {
        // A root without a Volume Label entry gets one (the label entry marked unused first).
        Editor e(img, opts());
        e.set_label("");
        e.finish();
        const Volume v(img);
        std::vector<std::byte> root = v.read_directory_bytes(v.root_record());
        std::size_t at = 0;
        while (root[at] != std::byte{kEntryVolumeLabel}) at += kDirEntrySize;
        const std::array<std::byte, 1> unused{std::byte{kEntryVolumeLabel & 0x7F}};
        img.write_at(v.cluster_offset(v.root_cluster()) + at, unused);
    }
    {
        Editor e(img, opts());
        CHECK(e.label().empty());
        e.set_label("Vol \u00dcmlaut");
        e.finish();
        CHECK(Editor(img, opts()).label() == "Vol \u00dcmlaut");
    }
    check::Findings f;
    const auto sum = exfat::check_volume(img, f);
    CHECK(f.all().empty());
    // Everything added is freed again; a directory does not shrink (the root grew).
    CHECK(sum.free_clusters + (root_clusters() - root_at_start) == free_at_start);
    const Volume v(img);
    CHECK(v.read_directory(v.root_record()).files.empty());
    // The sets removed are marked unused (InUse cleared: 0x85 -> 0x05), not zeroed.
    const auto root = v.read_directory_bytes(v.root_record());
    CHECK(std::count(root.begin(), root.end(), std::byte{0x05}) >= 1);
}

TEST_CASE("exfat edit: cut after every write, what was there is intact and the change absent or complete",
          "[exfat][edit][cut]") {
    struct Step {
        const char* what;
        bool may_cross_link;  // moving to another directory: both sets for a moment (edit.hpp)
        void (*run)(Editor&, Source&);
    };
    const Step steps[] = {
        {"cp", false,
         [](Editor& e, Source& s) {
             e.add_file(dir_of(e, "/dir"), "a new file with a long name.txt", s.open(), {});
         }},
        {"cp into a full root cluster", false,
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
        {"mv longer", true,  // the full root grows: no one-write span, the new set first (edit.hpp)
         [](Editor& e, Source&) {
             e.rename(kRootDir, *e.find(kRootDir, "old.txt"), kRootDir, "a much longer name than before.txt",
                      false);
         }},
        {"mv to a directory", true,
         [](Editor& e, Source&) {
             e.rename(kRootDir, *e.find(kRootDir, "old.txt"), dir_of(e, "/dir"), "old.txt", false);
         }},
        {"attrib", false,
         [](Editor& e, Source&) {
             e.set_attributes(kRootDir, *e.find(kRootDir, "old.txt"), kFileAttrReadOnly, 0);
         }},
        {"label", false, [](Editor& e, Source&) { e.set_label("NEWLABEL"); }},
        {"serial", false, [](Editor& e, Source&) { e.set_volume_id(0xABCD1234); }},
    };
    HostFiles h;
    const std::string old_content = pattern(3000, 9), dir_content = pattern(1500, 10),
                      fresh = pattern(9000, 11);
    Source sold(h.make("old", old_content)), sdir(h.make("d", dir_content)), snew(h.make("new", fresh));
    const Layout l = plan(8 << 20, 512);
    io::MemoryImage base = formatted(l, "BASE");
    {
        Editor e(base, opts());
        e.add_file(kRootDir, "old.txt", sold.open(), {});
        const DirId d = e.directory_of(e.add_directory(kRootDir, "dir", {}));
        for (int i = 0; i < 3; ++i) e.add_file(d, fmt::format("inner file {}.txt", i), sdir.open(), {});
        e.add_file(kRootDir, "filler file name.txt", sdir.open(),
                   {});  // the root: 3 system entries + 3 + 3 + 4 = 13 of 16
        e.finish();
    }
    REQUIRE(problems(base) == "");
    for (const Step& st : steps) {
        io::MemoryImage full = base;
        std::uint64_t total = 0;
        {
            CutAfter dev(full, UINT64_MAX);
            Editor e(dev, opts());
            st.run(e, snew);
            e.finish();
            total = dev.writes();
        }
        INFO(fmt::format("{}: {} writes", st.what, total));
        CHECK(total >= 3);
        CHECK(problems(full) == "");
        io::MemoryImage img = base;
        WrittenRanges written;
        for (std::uint64_t n = 0; n <= total; ++n) {
            INFO("cut after write " << n);
            rewind(img, base, written);
            {
                CutAfter dev(img, n, &written);
                try {
                    Editor e(dev, opts());
                    st.run(e, snew);
                    e.finish();
                } catch (const Error&) {
                }
            }
            std::set<std::string> allowed = {"exfat.boot.dirty", "exfat.bitmap.lost",
                                             "exfat.bitmap.percent-in-use"};
            if (st.may_cross_link) allowed.insert("exfat.chain.cross-link");
            if (std::string(st.what) == "serial") allowed.insert("exfat.boot.backup-differs");
            for (const auto& [code, count] : findings(img)) {
                INFO(code << " x" << count << "\n" << problems(img));
                CHECK(allowed.count(code) == 1);
            }
            const Volume v(img);
            const std::string what = st.what;
            const char* old_name = v.lookup("/old.txt") ? "/old.txt"
                                   : v.lookup("/a much longer name than before.txt")
                                       ? "/a much longer name than before.txt"
                                   : v.lookup("/dir/old.txt") ? "/dir/old.txt"
                                                              : "";
            if (what == "rm" || what == "replace") {
                if (v.lookup("/old.txt")) {
                    const std::string c = read_back(img, "/old.txt");
                    CHECK((c == old_content || (what == "replace" && c == fresh)));
                }
            } else if (what != "rm -r") {
                REQUIRE(std::string(old_name) != "");
                CHECK(read_back(img, old_name) == old_content);
            }
            if (what != "rm -r" || v.lookup("/dir")) {
                for (int i = 0; i < 3; ++i)
                    CHECK(read_back(img, fmt::format("/dir/inner file {}.txt", i)) == dir_content);
            }
            CHECK(read_back(img, "/filler file name.txt") == dir_content);
            if (what == "cp" && v.lookup("/dir/a new file with a long name.txt"))
                CHECK(read_back(img, "/dir/a new file with a long name.txt") == fresh);
            if (what == "serial") CHECK((v.boot().main.checksum_ok || v.boot().use_backup));
        }
    }
}

namespace {

/// Makes directory `name` of the root FAT-chained, as exfat-fuse writes
/// directories: GeneralSecondaryFlags 0x01, its FAT entries a chain.
void make_fat_chained(io::MemoryImage& img, const std::string& name) {
    const Volume v(img);
    const auto r = v.lookup("/" + name);
    REQUIRE(r);
    REQUIRE(r->no_fat_chain());
    REQUIRE(r->data_length == v.cluster_bytes());
    std::vector<std::byte> root = v.read_directory_bytes(v.root_record());
    REQUIRE(std::size_t(r->index + r->entries) * kDirEntrySize <= v.cluster_bytes());  // in the first cluster
    const auto set = std::span(root).subspan(std::size_t(r->index) * kDirEntrySize,
                                             std::size_t(r->entries) * kDirEntrySize);
    set[kDirEntrySize + stream_off::GeneralSecondaryFlags] = std::byte{kSecondaryAllocationPossible};
    const std::uint16_t sum = entry_set_checksum(set);
    set[file_off::SetChecksum] = static_cast<std::byte>(sum & 0xFF);
    set[file_off::SetChecksum + 1] = static_cast<std::byte>(sum >> 8);
    img.write_at(v.cluster_offset(v.root_cluster()) + std::uint64_t(r->index) * kDirEntrySize, set);
    const std::array<std::byte, 4> eoc{std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}};
    img.write_at(std::uint64_t(v.boot_sector().fat_offset) * v.bytes_per_sector() + 4ull * r->first_cluster,
                 eoc);
}

}  // namespace

TEST_CASE("exfat edit: a FAT-chained directory grown by its next cluster becomes NoFatChain in one write",
          "[exfat][edit][cut]") {
    HostFiles h;
    Source s(h.make("x", ""));  // empty files: no clusters, so the one after the directory stays free
    const Layout l = plan(8 << 20, 512);
    io::MemoryImage base = formatted(l);
    {
        Editor e(base, opts());
        const DirId d = e.directory_of(e.add_directory(kRootDir, "chained", {}));
        for (int i = 0; i < 4; ++i)
            e.add_file(d, fmt::format("a file with a long name {:02}.txt", i), s.open(), {});
        e.finish();  // 16 entries: the directory's one cluster is full; the next cluster is free
    }
    make_fat_chained(base, "chained");
    REQUIRE(problems(base) == "");
    REQUIRE_FALSE(Volume(base).lookup("/chained")->no_fat_chain());
    const auto add = [&](io::BlockDevice& dev) {
        Editor e(dev, opts());
        e.add_file(dir_of(e, "/chained"), "one more file with a long name.txt", s.open(), {});
        e.finish();
    };
    io::MemoryImage full = base;
    CutAfter counting(full, UINT64_MAX);
    add(counting);
    {
        const Volume v(full);
        const auto r = v.lookup("/chained");
        REQUIRE(r);
        CHECK(r->no_fat_chain());
        CHECK(r->data_length == 2 * 512);
        CHECK(read_back(full, "/chained/one more file with a long name.txt").empty());
        CHECK(problems(full) == "");
    }
    io::MemoryImage img = base;
    WrittenRanges written;
    for (std::uint64_t n = 0; n <= counting.writes(); ++n) {
        INFO("cut after write " << n << " of " << counting.writes());
        rewind(img, base, written);
        CutAfter dev(img, n, &written);
        try {
            add(dev);
        } catch (const Error&) {
        }
        for (const auto& [code, count] : findings(img)) {
            INFO(code << "\n" << problems(img));
            CHECK((code == "exfat.boot.dirty" || code == "exfat.bitmap.lost" ||
                   code == "exfat.bitmap.percent-in-use"));
        }
        for (int i = 0; i < 4; ++i)
            CHECK(
                Volume(img).lookup(fmt::format("/chained/a file with a long name {:02}.txt", i)).has_value());
    }
}

TEST_CASE("exfat edit: a refusal writes nothing (space for data and directory growth planned first)",
          "[exfat][edit]") {
    // Directory D full to its cluster's end (512-byte clusters: 16 entries, 5 sets of 3),
    // one free cluster left: a file whose data would fit but whose set needs D to grow is
    // refused before its data is written.
    const Layout l = plan(16 << 20, 512);
    io::MemoryImage img = formatted(l);
    HostFiles h;
    Source one(h.make("one", "x"));
    Editor e(img, opts());
    DirId d = e.directory_of(e.add_directory(kRootDir, "D", {}));
    for (int i = 0; i < 5; ++i) e.add_file(d, fmt::format("F{}", i), one.open(), {});
    e.finish();
    check::Findings f;
    const auto free = exfat::check_volume(img, f).free_clusters;
    REQUIRE(free > 2);
    Editor e2(img, opts());
    d = dir_of(e2, "/D");
    Source fill(h.make("fill", pattern((free - 1) * 512, 5)));
    e2.add_file(kRootDir, "FILL.BIN", fill.open(), {});
    const auto before = img.bytes();
    REQUIRE_THROWS_WITH(e2.add_file(d, "LAST", one.open(), {}),
                        Catch::Contains("no space left on the volume: 2 clusters"));
    CHECK(img.bytes() == before);
    REQUIRE_THROWS_WITH(e2.add_directory(d, "SUB", {}), Catch::Contains("no space left on the volume"));
    CHECK(img.bytes() == before);
    e2.finish();
    CHECK(problems(img) == "");
}
