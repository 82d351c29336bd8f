// fsck passes and the read-only Volume on in-memory images: a formatted
// volume plus files written by hand, then one precise damage per case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <variant>

#include "fsimg/check/codes.hpp"
#include "fsimg/check/exit_code.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"

using namespace fsimg;
using namespace fsimg::fat;

namespace {

struct TestVolume {
    Layout layout;
    io::MemoryImage dev;
    std::uint32_t next_free = 3;  // cluster 2 may be the FAT32 root
    std::uint32_t root_slot = 1;  // slot 0 holds the label

    TestVolume(std::uint64_t bytes, FatType type, std::uint32_t cluster)
        : layout(plan(bytes, type, cluster)), dev(bytes) {
        FormatOptions o;
        o.volume_id = 0x1234ABCD;
        o.label = "TEST";
        format_volume(dev, layout, o);
        if (type == FatType::fat32) {  // files are added without updating FSInfo
            std::array<std::byte, 4> unknown{std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF},
                                             std::byte{0xFF}};
            dev.write_at(std::uint64_t(layout.fsinfo_sector) * layout.bytes_per_sector + 488, unknown);
        }
    }
    static Layout plan(std::uint64_t bytes, FatType type, std::uint32_t cluster) {
        LayoutRequest r;
        r.volume_bytes = bytes;
        r.type = type;
        r.cluster_bytes = cluster;
        auto v = plan_layout(r);
        REQUIRE(std::holds_alternative<Layout>(v));
        return std::get<Layout>(v);
    }
    void set_fat(std::uint32_t n, std::uint32_t value) {
        for (unsigned copy = 0; copy < layout.num_fats; ++copy) {
            std::vector<std::byte> fat(layout.fat_bytes());
            const std::uint64_t at =
                (layout.first_fat_sector + std::uint64_t(copy) * layout.fat_size_sectors) *
                layout.bytes_per_sector;
            dev.read_at(at, fat);
            set_fat_entry(fat, layout.type, n, value);
            dev.write_at(at, fat);
        }
    }
    std::uint64_t root_slot_offset(std::uint32_t slot) const {
        if (layout.type == FatType::fat32) return layout.cluster_offset(layout.root_cluster) + slot * 32;
        return layout.first_root_dir_sector * layout.bytes_per_sector + slot * 32;
    }
    /// Adds a file of `size` bytes (filled with `fill`) in the root; returns its slot offset.
    std::uint64_t add_file(const char* name11, std::uint32_t size, std::uint8_t fill = 'x') {
        const std::uint32_t cb = layout.cluster_bytes();
        const std::uint32_t n = (size + cb - 1) / cb;
        const std::uint32_t first = n ? next_free : 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            set_fat(next_free, i + 1 == n ? end_of_chain(layout.type) : next_free + 1);
            std::vector<std::byte> data(cb, std::byte{fill});
            dev.write_at(layout.cluster_offset(next_free), data);
            ++next_free;
        }
        DirEntry e;
        std::copy(name11, name11 + 11, e.name.begin());
        e.attr = kAttrArchive;
        e.first_cluster = first;
        e.file_size = size;
        e.wrt_date = 0x5821;
        std::array<std::byte, 32> raw{};
        encode_dir_entry(e, raw);
        const std::uint64_t at = root_slot_offset(root_slot++);
        dev.write_at(at, raw);
        return at;
    }
    std::set<std::string> codes() {
        check::Findings f;
        check_volume(dev, f);
        std::set<std::string> out;
        for (const auto& x : f.all()) {
            if (x.severity != check::Severity::info) out.insert(std::string(x.code));
        }
        return out;
    }
};

using Codes = std::set<std::string>;

}  // namespace

TEST_CASE("the code registry is sorted, unique and documented", "[check]") {
    const auto codes = check::all_codes();
    REQUIRE(codes.size() > 40);
    for (std::size_t i = 1; i < codes.size(); ++i) CHECK(codes[i - 1].code < codes[i].code);
    for (const auto& c : codes) {
        CHECK(!c.meaning.empty());
        CHECK((c.code.starts_with("fat.") || c.code.starts_with("exfat.") || c.code.starts_with("ntfs.") ||
               c.code.starts_with("compat.") || c.code.starts_with("part.")));
        CHECK(check::find_code(c.code) == &c);
    }
    CHECK(check::find_code("fat.no.such") == nullptr);
    check::Findings f;
    f.add("compat.fat32.few-clusters", {}, "x");
    CHECK(check::fsck_exit_for(f) == check::kFsckClean);
    f.add("fat.chain.loop", {}, "y");
    CHECK(check::fsck_exit_for(f) == check::kFsckUncorrected);
}

TEST_CASE("freshly formatted volumes are clean", "[check]") {
    for (auto [bytes, type, cluster] :
         {std::tuple{4u << 20, FatType::fat12, 1024u}, std::tuple{16u << 20, FatType::fat16, 2048u},
          std::tuple{40u << 20, FatType::fat32, 512u}}) {
        TestVolume v(bytes, type, cluster);
        CHECK(v.codes() == Codes{});
        v.add_file("A       TXT", 3000);
        v.add_file("B       TXT", 0);
        CHECK(v.codes() == Codes{});
    }
}

TEST_CASE("each damage gives its code", "[check]") {
    const FatType type = GENERATE(FatType::fat12, FatType::fat16, FatType::fat32);
    const std::uint64_t bytes = type == FatType::fat12   ? 4u << 20
                                : type == FatType::fat16 ? 16u << 20
                                                         : 40u << 20;
    const std::uint32_t cluster = type == FatType::fat32 ? 512 : 1024;
    TestVolume v(bytes, type, cluster);
    const std::uint64_t a = v.add_file("A       TXT", 3 * cluster);  // clusters 3, 4, 5
    const std::uint64_t b = v.add_file("B       TXT", 2 * cluster);  // clusters 6, 7
    const std::uint32_t eoc = end_of_chain(type);
    SECTION("loop") {
        v.set_fat(5, 3);
        CHECK(v.codes() == Codes{"fat.chain.loop"});
    }
    SECTION("cross-link") {
        v.set_fat(7, 3);
        CHECK(v.codes() == Codes{"fat.chain.cross-link"});
        // Both owners in the structured location, not only in the message.
        check::Findings f;
        check_volume(v.dev, f);
        REQUIRE(f.size() == 1);
        CHECK(f.all()[0].where.object == "/B.TXT");
        CHECK(f.all()[0].where.other_owner == "/A.TXT");
    }
    SECTION("link into a free cluster") {
        v.set_fat(5, 100);
        CHECK(v.codes() == Codes{"fat.chain.free-link"});
    }
    SECTION("link out of range") {
        v.set_fat(5, type == FatType::fat12 ? 0xFF0 : 1);
        CHECK(v.codes() == Codes{"fat.chain.out-of-range"});
    }
    SECTION("lost chain") {
        v.set_fat(50, 51);
        v.set_fat(51, eoc);
        check::Findings f;
        const auto s = check_volume(v.dev, f);
        REQUIRE(f.size() == 1);
        CHECK(f.all()[0].code == "fat.chain.lost");
        CHECK(f.all()[0].count == 2);
        CHECK(s.lost_clusters == 2);
    }
    SECTION("size beyond the chain, and a chain longer than the size") {
        std::array<std::byte, 4> size{};
        core::store_le32(size, 0, 10 * cluster);
        v.dev.write_at(a + 28, size);
        core::store_le32(size, 0, 1);
        v.dev.write_at(b + 28, size);
        CHECK(v.codes() == Codes{"fat.chain.too-long", "fat.chain.too-short"});
    }
    SECTION("duplicate and invalid short names") {
        const std::array<std::byte, 11> dup = [] {
            std::array<std::byte, 11> n{};
            const char* s = "A       TXT";
            for (int i = 0; i < 11; ++i) n[i] = std::byte(s[i]);
            return n;
        }();
        v.dev.write_at(b, dup);
        CHECK(v.codes() == Codes{"fat.name.duplicate"});
        const std::array<std::byte, 1> q{std::byte{'?'}};
        v.dev.write_at(b, q);
        CHECK(v.codes() == Codes{"fat.name.invalid-short"});
    }
    SECTION("FAT copies differ") {
        std::array<std::byte, 1> x{std::byte{0x77}};
        const Layout& l = v.layout;
        v.dev.write_at((l.first_fat_sector + l.fat_size_sectors) * l.bytes_per_sector + 200, x);
        CHECK(v.codes() == Codes{"fat.fat.copies-differ"});
    }
    SECTION("a truncated image") {
        std::vector<std::byte> cut(v.dev.bytes().begin(), v.dev.bytes().end() - 4096);
        io::MemoryImage small(std::move(cut));
        check::Findings f;
        check_volume(small, f);
        CHECK(f.has("fat.boot.image-truncated"));
        CHECK(f.has_errors());
    }
}

TEST_CASE("the Volume reads files and finds paths case-insensitively", "[volume]") {
    TestVolume v(16u << 20, FatType::fat16, 2048);
    v.add_file("README  TXT", 5000, 'r');
    Volume vol(v.dev);
    const auto r = vol.lookup("/readme.txt");
    REQUIRE(r);
    CHECK(r->entry.file_size == 5000);
    std::string data;
    vol.read_file(*r, [&](std::span<const std::byte> s) {
        for (auto b : s) data.push_back(char(b));
    });
    CHECK(data == std::string(5000, 'r'));
    CHECK(!vol.lookup("nothere.txt"));
    CHECK_THROWS_AS(vol.lookup("README.TXT/x"), Error);
    const Chain c = vol.follow_chain(3, 100);
    CHECK(c.clusters == 3);
    CHECK(c.end == ChainEnd::end_of_chain);
    v.set_fat(4, 3);  // loop 3 -> 4 -> 3: shorter than the size needs
    Volume vol2(v.dev);
    CHECK(vol2.follow_chain(3, 1000).end == ChainEnd::loop);
    CHECK_THROWS_AS(vol2.read_file(*vol2.lookup("readme.txt"), [](std::span<const std::byte>) {}), Error);
}

TEST_CASE("long names are assembled and their anomalies reported", "[directory]") {
    std::array<std::uint8_t, 11> short_name{};
    std::copy_n("LONGNA~1TXT", 11, short_name.begin());
    const std::u16string name = u"Long name \u00e9.txt";  // 16 units: two LFN entries
    const std::uint8_t sum = lfn_checksum(short_name);
    auto lfn = [&](std::uint8_t ord, std::size_t part) {
        std::array<std::byte, 32> e{};
        e[0] = std::byte(ord);
        e[11] = std::byte(kAttrLongName);
        e[13] = std::byte(sum);
        constexpr std::size_t offs[13] = {1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30};
        for (std::size_t i = 0; i < 13; ++i) {
            const std::size_t k = part * 13 + i;
            const char16_t u = k < name.size() ? name[k] : k == name.size() ? u'\0' : u'\xFFFF';
            e[offs[i]] = std::byte(u & 0xFF);
            e[offs[i] + 1] = std::byte(u >> 8);
        }
        return e;
    };
    DirEntry d;
    d.name = short_name;
    d.attr = kAttrArchive;
    std::array<std::byte, 32> s{};
    encode_dir_entry(d, s);
    std::vector<std::byte> dir;
    auto put = [&](const std::array<std::byte, 32>& e) { dir.insert(dir.end(), e.begin(), e.end()); };
    put(lfn(0x42, 1));
    put(lfn(0x01, 0));
    put(s);
    dir.resize(dir.size() + 32);  // end marker
    ParsedDirectory p = parse_directory(dir);
    REQUIRE(p.records.size() == 1);
    CHECK(p.anomalies.empty());
    CHECK(p.records[0].has_long_name);
    CHECK(p.records[0].name == "Long name \xc3\xa9.txt");
    CHECK(p.records[0].short_name == "LONGNA~1.TXT");
    CHECK(p.records[0].first_index == 0);

    auto bad = dir;
    bad[13] = std::byte(sum + 1);
    bad[32 + 13] = std::byte(sum + 1);
    p = parse_directory(bad);
    REQUIRE(p.anomalies.size() == 1);
    CHECK(p.anomalies[0].kind == LfnAnomaly::Kind::checksum);
    CHECK(p.records[0].name == "LONGNA~1.TXT");

    bad = dir;
    bad[32] = std::byte(0x03);
    p = parse_directory(bad);
    REQUIRE(!p.anomalies.empty());
    CHECK(p.anomalies[0].kind == LfnAnomaly::Kind::sequence);

    bad = dir;
    bad[64] = std::byte(0xE5);  // short entry deleted, LFN entries left
    p = parse_directory(bad);
    CHECK(p.records.empty());
    REQUIRE(p.anomalies.size() == 1);
    CHECK(p.anomalies[0].kind == LfnAnomaly::Kind::orphan);
}

TEST_CASE("case folding for FAT name comparison", "[directory]") {
    CHECK(fold_case("readme.txt") == "README.TXT");
    CHECK(fold_case("caf\xc3\xa9", true) == "CAF\xc3\xa9");
    CHECK(fold_case("caf\xc3\xa9") == "CAF\xc3\x89");
    CHECK(fold_case("\xd0\xba") == "\xd0\x9a");  // Cyrillic ka
    // Windows' up-case table beyond the letters mapped one block at a time:
    // Greek with tonos (U+03AC -> U+0386, U+03CE -> U+038F), y with diaeresis
    // (U+00FF -> U+0178), Latin Extended-B (U+0183 -> U+0182).
    CHECK(fold_case("\xce\xac") == "\xce\x86");
    CHECK(fold_case("\xcf\x8e") == "\xce\x8f");
    CHECK(fold_case("\xc3\xbf") == "\xc5\xb8");
    CHECK(fold_case("\xc6\x83") == "\xc6\x82");
    CHECK(fold_case("\xce\xac", true) == "\xce\xac");  // ASCII only: left
}

TEST_CASE("hostile images never crash the checker or the reader", "[check][hostile]") {
    TestVolume base(4u << 20, FatType::fat12, 1024);
    base.add_file("A       TXT", 5000);
    base.add_file("B       TXT", 100);
    std::mt19937 rng(12345);
    const auto& bytes = base.dev.bytes();
    const std::size_t meta = std::size_t(base.layout.cluster_offset(12));
    for (int round = 0; round < 300; ++round) {
        std::vector<std::byte> img(bytes.begin(), bytes.end());
        const int flips = 1 + int(rng() % 40);
        for (int i = 0; i < flips; ++i) img[rng() % meta] = std::byte(rng() & 0xFF);
        io::MemoryImage dev(std::move(img));
        check::Findings f;
        try {
            check_volume(dev, f);
            Volume vol(dev);
            for (const auto& r : vol.read_directory(0).records) {
                if (r.kind == RecordKind::file) {
                    try {
                        vol.read_file(r, [](std::span<const std::byte>) {});
                    } catch (const Error&) {
                    }
                }
            }
        } catch (const Error&) {
        }
    }
    SUCCEED("no crash");
}

TEST_CASE("every finding code is documented in docs/fsck-codes.md", "[check]") {
    std::ifstream in(std::string(FSIMG_SOURCE_DIR) + "/docs/fsck-codes.md");
    REQUIRE(in);
    const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& c : check::all_codes()) {
        INFO(c.code);
        CHECK(doc.find("| `" + std::string(c.code) + "` |") != std::string::npos);
    }
}

TEST_CASE("OEM bytes of labels are decoded through code page 850") {
    // mlabel ::DONNÉES writes CP850 0x90 for É.
    CHECK(fsimg::fat::oem_text(std::string("DONN\x90"
                                           "ES    ",
                                           11)) ==
          "DONN\xC3\x89"
          "ES    ");
    CHECK(fsimg::fat::oem_text("MSWIN4.1") == "MSWIN4.1");
    CHECK(fsimg::core::is_valid_utf8(fsimg::fat::oem_text(std::string("\x80\xFF\x01", 3))));
}

TEST_CASE("a boot-sector label copy that differs from the root label is a note", "[check][label]") {
    // Windows format/Explorer write the label to the root directory and may
    // leave BS_VolLab "NO NAME"; Windows, the Linux vfat driver and macOS show
    // the root entry. fsck.fat 4.2 -n on these bytes: "There is no label in
    // boot sector, but there is volume label 'TEST' stored in root directory"
    // and it offers to copy the root label to the boot sector.
    const FatType type = GENERATE(FatType::fat16, FatType::fat32);
    TestVolume v(type == FatType::fat16 ? 16u << 20 : 40u << 20, type, type == FatType::fat16 ? 1024 : 512);
    const std::size_t at = type == FatType::fat32 ? off::VolLab32 : off::VolLab16;
    const auto put = [&](const char* s11) {
        std::array<std::byte, 11> b{};
        for (int i = 0; i < 11; ++i) b[i] = std::byte(s11[i]);
        v.dev.write_at(at, b);
        if (type == FatType::fat32)  // the backup's copy too: not a backup difference
            v.dev.write_at(std::uint64_t(v.layout.backup_boot_sector) * v.layout.bytes_per_sector + at, b);
    };
    const auto severity_of = [&](std::string_view code) {
        check::Findings f;
        check_volume(v.dev, f);
        for (const auto& x : f.all())
            if (x.code == code) return std::optional<check::Severity>(x.severity);
        return std::optional<check::Severity>();
    };
    CHECK(severity_of("fat.label.mismatch") == std::nullopt);
    put("NO NAME    ");
    CHECK(v.codes() == Codes{});
    CHECK(severity_of("fat.label.mismatch") == check::Severity::info);
    put("OTHER      ");
    CHECK(v.codes() == Codes{});
    CHECK(severity_of("fat.label.mismatch") == check::Severity::info);
    // An invalid label stays an error, in the root directory or the boot sector.
    put("BAD?NAME   ");
    CHECK(v.codes() == Codes{});  // with a root label, the boot copy is only compared
    std::array<std::byte, 1> q{std::byte{'?'}};
    v.dev.write_at(v.root_slot_offset(0) + 1, q);
    CHECK(v.codes() == Codes{"fat.label.invalid"});
}

TEST_CASE("BPB_FSInfo 0 or 0xFFFF means no FSInfo sector: a warning", "[check][fsinfo]") {
    // fsck.fat 4.2 -n with BPB_FSInfo = 0: "No FSINFO sector / Not
    // automatically creating it", exit 0; the Linux driver reads sector 1 for
    // a 0 (fs/fat/inode.c) and only logs a bad signature there.
    TestVolume v(40u << 20, FatType::fat32, 512);
    const auto set_fsinfo = [&](std::uint16_t n) {
        std::array<std::byte, 2> b{};
        core::store_le16(b, 0, n);
        v.dev.write_at(off::FSInfo, b);
        v.dev.write_at(std::uint64_t(v.layout.backup_boot_sector) * v.layout.bytes_per_sector + off::FSInfo,
                       b);
    };
    set_fsinfo(0);
    CHECK(v.codes() == Codes{"fat.fsinfo.none"});
    set_fsinfo(0xFFFF);
    CHECK(v.codes() == Codes{"fat.fsinfo.none"});
    {
        check::Findings f;
        check_volume(v.dev, f);
        CHECK(check::fsck_exit_for(f) == check::kFsckClean);
    }
    // A sector past the reserved region is still an error: a driver that
    // follows it reads a FAT sector as FSInfo.
    set_fsinfo(static_cast<std::uint16_t>(v.layout.reserved_sectors + 3));
    CHECK(v.codes() == Codes{"fat.fsinfo.location"});
}

TEST_CASE("a backup boot sector that differs only in boot code is a note", "[check][backup]") {
    // Boot-loader installers rewrite sector 0's jump, OEM name and boot code
    // and leave the backup. fsck.fat 4.2 -n on these bytes: "There are
    // differences between boot sector and its backup. This is mostly
    // harmless", exit 0.
    TestVolume v(40u << 20, FatType::fat32, 512);
    const auto info_codes = [&] {
        check::Findings f;
        check_volume(v.dev, f);
        std::set<std::string> out;
        for (const auto& x : f.all())
            if (x.severity == check::Severity::info) out.insert(std::string(x.code));
        return out;
    };
    const std::array<std::byte, 8> oem{std::byte{'S'}, std::byte{'Y'}, std::byte{'S'}, std::byte{'L'},
                                       std::byte{'I'}, std::byte{'N'}, std::byte{'U'}, std::byte{'X'}};
    v.dev.write_at(off::OEMName, oem);
    v.dev.write_at(off::BootCode32 + 0x40, oem);
    v.dev.write_at(off::Signature - 8, oem);
    CHECK(v.codes() == Codes{});
    CHECK(info_codes() == Codes{"fat.boot.backup-boot-code"});
    // A BPB field that differs stays an error, boot code or not.
    std::array<std::byte, 1> spt{std::byte{0x11}};
    v.dev.write_at(off::SecPerTrk, spt);
    CHECK(v.codes() == Codes{"fat.boot.backup-differs"});
}

TEST_CASE("an unclean unmount is one finding, whichever dirty bits say so", "[check][dirty]") {
    // fsck.fat 4.2 -n on each of these images says "Dirty bit is set. Fs was
    // not properly unmounted" once: BS_Reserved1 bit 0, FAT[1]'s
    // clean-shutdown bit cleared, or both.
    const FatType type = GENERATE(FatType::fat16, FatType::fat32);
    TestVolume v(type == FatType::fat16 ? 16u << 20 : 40u << 20, type, type == FatType::fat16 ? 1024 : 512);
    const std::uint32_t clean = type == FatType::fat16 ? 0x8000 : 0x08000000;
    const std::size_t flags = type == FatType::fat32 ? off::Reserved1_32 : off::Reserved1_16;
    const auto set_boot_dirty = [&] {
        std::array<std::byte, 1> b{std::byte{0x01}};
        v.dev.write_at(flags, b);
        if (type == FatType::fat32)  // the backup too, so that it does not differ (a note of its own)
            v.dev.write_at(std::uint64_t(v.layout.backup_boot_sector) * v.layout.bytes_per_sector + flags, b);
    };
    const auto findings = [&] {
        check::Findings f;
        check_volume(v.dev, f);
        return f.size();
    };
    SECTION("FAT[1] only") {
        v.set_fat(1, end_of_chain(type) & ~clean);
        CHECK(v.codes() == Codes{"fat.fat.dirty"});
        CHECK(findings() == 1);
    }
    SECTION("BS_Reserved1 only") {
        set_boot_dirty();
        CHECK(v.codes() == Codes{"fat.boot.dirty"});
        CHECK(findings() == 1);
    }
    SECTION("both") {
        set_boot_dirty();
        v.set_fat(1, end_of_chain(type) & ~clean);
        CHECK(v.codes() == Codes{"fat.boot.dirty"});
        CHECK(findings() == 1);
    }
}

TEST_CASE("entries after the end-of-directory marker are examined", "[check][after-end]") {
    // The specification says no entry follows a 0x00 one; the Linux vfat
    // driver takes it for a free entry and reads on (fs/fat/dir.c IS_FREE),
    // so it still shows a file written there, and follows a directory.
    const FatType type = GENERATE(FatType::fat16, FatType::fat32);
    TestVolume v(type == FatType::fat16 ? 16u << 20 : 40u << 20, type, 512);
    v.add_file("A       TXT", 1000);  // slot 1; slot 2 is the end marker
    SECTION("a file after the marker is reported, its clusters not called lost") {
        v.root_slot = 5;
        v.add_file("HIDDEN  TXT", 1500);
        check::Findings f;
        const auto s = check_volume(v.dev, f);
        CHECK(v.codes() == Codes{"fat.dir.entry-after-end"});
        CHECK(s.lost_clusters == 0);
        CHECK(s.files == 2);
        for (const auto& x : f.all()) {
            if (x.code != "fat.dir.entry-after-end") continue;
            CHECK_THAT(x.message, Catch::Contains("HIDDEN.TXT") && Catch::Contains("entry 5") &&
                                      Catch::Contains("marker (entry 2)"));
        }
    }
    SECTION("a directory loop hidden after the marker") {
        DirEntry e;
        const char* n = "LOOP       ";
        std::copy(n, n + 11, e.name.begin());
        e.attr = kAttrDirectory;
        e.first_cluster = type == FatType::fat32 ? v.layout.root_cluster : 3;  // the root / A.TXT's cluster
        std::array<std::byte, 32> raw{};
        encode_dir_entry(e, raw);
        v.dev.write_at(v.root_slot_offset(7), raw);
        const Codes got = v.codes();
        CHECK(got.count("fat.dir.entry-after-end") == 1);
        if (type == FatType::fat32) CHECK(got == Codes{"fat.dir.entry-after-end", "fat.dir.loop"});
    }
    SECTION("deleted entries after the marker are nothing to report") {
        std::array<std::byte, 32> raw{};
        raw[0] = std::byte{0xE5};
        raw[11] = std::byte{kAttrArchive};
        v.dev.write_at(v.root_slot_offset(6), raw);
        CHECK(v.codes() == Codes{});
    }
}

TEST_CASE("long names padded with 0x0000 after the terminator: a warning", "[check][lfn-padding]") {
    // The name is padded with 0xFFFF after its 0x0000 terminator [FATGEN
    // "Long File Name Implementation"]. fsck.fat 4.2 -n and mtools accept a
    // name padded with 0x0000 (tried on a mcopy image, "Long nm.txt"), the
    // Linux driver stops at the terminator; 7-Zip drops such names.
    TestVolume v(16u << 20, FatType::fat16, 1024);
    const std::u16string name = u"Long nm.txt";  // 11 units: terminator, then one unit of padding
    std::array<std::uint8_t, 11> short_name{};
    std::copy_n("LONGNM~1TXT", 11, short_name.begin());
    std::vector<std::byte> entries(64);
    encode_lfn_entries(name, lfn_checksum(short_name), std::span<std::byte>(entries).first(32));
    DirEntry d;
    d.name = short_name;
    d.attr = kAttrArchive;
    encode_dir_entry(d, std::span<std::byte>(entries).subspan(32).first<32>());
    v.dev.write_at(v.root_slot_offset(1), entries);
    CHECK(v.codes() == Codes{});
    // The unit after the terminator (entry offset 30) set to 0x0000.
    const std::array<std::byte, 2> zero{};
    v.dev.write_at(v.root_slot_offset(1) + 30, zero);
    CHECK(v.codes() == Codes{"fat.lfn.padding"});
    const Volume vol(v.dev);
    CHECK(vol.lookup("/Long nm.txt").has_value());  // the name still reads
}

TEST_CASE("FAT timestamps: creation tenths add a second, invalid dates say so", "[check][timestamp]") {
    // DIR_CrtTimeTenth counts 10 ms units 0..199: 100..199 are the odd second
    // the two-second DIR_CrtTime cannot hold [FATGEN "Directory Entry"].
    const std::uint16_t date = (44 << 9) | (5 << 5) | 1;     // 2024-05-01
    const std::uint16_t time = (12 << 11) | (34 << 5) | 28;  // 12:34:56
    CHECK(timestamp_text(date, time) == "2024-05-01 12:34:56");
    CHECK(timestamp_text(date, time, true, 99) == "2024-05-01 12:34:56");
    CHECK(timestamp_text(date, time, true, 150) == "2024-05-01 12:34:57");
    CHECK(timestamp_text(date, time, true, 200) == "invalid (date 0x58A1, time 0x645C)");
    CHECK(timestamp_text(0, 0) == "-");  // not set
    // Day 0 and month 0: the Linux driver takes them for 1 (fat_time_fat2unix);
    // fsck.fat 4.2 does not judge dates.
    CHECK(timestamp_text(0x5800, 0) == "invalid (date 0x5800, time 0x0000)");
    CHECK(timestamp_text(0x5801, 0, false) == "invalid (date 0x5801)");
    CHECK(timestamp_problem(0x5800, 0) == "day 0, month 0");
    CHECK(timestamp_problem(date, time, true, 150).empty());

    TestVolume v(16u << 20, FatType::fat16, 1024);
    const std::uint64_t a = v.add_file("A       TXT", 100);
    CHECK(v.codes() == Codes{});
    std::array<std::byte, 2> d{};
    core::store_le16(d, 0, 0x5800);  // DIR_WrtDate: 2024, month 0, day 0
    v.dev.write_at(a + 24, d);
    CHECK(v.codes() == Codes{"fat.dir.timestamp"});
    check::Findings f;
    check_volume(v.dev, f);
    for (const auto& x : f.all()) {
        if (x.code == "fat.dir.timestamp")
            CHECK_THAT(x.message, Catch::Contains("A.TXT") && Catch::Contains("day 0"));
    }
}
