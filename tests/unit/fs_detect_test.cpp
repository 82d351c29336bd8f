// fs::detect, fs::open_view and fs::check_volume (include/fsimg/fs/) on
// volumes formatted in memory: one detector, backups honoured, two equal
// matches refused, the same answer for every reader.
#include <catch2/catch.hpp>

#include <variant>

#include "fsimg/core/error.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/fs/view.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "ntfs_fixture.hpp"

using namespace fsimg;

namespace {

io::MemoryImage fat_image(std::uint64_t bytes, fat::FatType type) {
    fat::LayoutRequest r;
    r.volume_bytes = bytes;
    r.type = type;
    auto l = fat::plan_layout(r);
    REQUIRE(std::holds_alternative<fat::Layout>(l));
    io::MemoryImage dev(bytes);
    fat::FormatOptions o;
    o.volume_id = 0x1234ABCD;
    o.label = "TEST";
    fat::format_volume(dev, std::get<fat::Layout>(l), o);
    return dev;
}

io::MemoryImage exfat_image(std::uint64_t bytes) {
    exfat::LayoutRequest r;
    r.volume_bytes = bytes;
    auto l = exfat::plan_layout(r);
    REQUIRE(std::holds_alternative<exfat::Layout>(l));
    io::MemoryImage dev(bytes);
    exfat::format_volume(dev, std::get<exfat::Layout>(l), exfat::FormatOptions{0x1234ABCD, "TEST", true});
    return dev;
}

io::MemoryImage ntfs_image(std::uint64_t bytes) {
    io::MemoryImage dev(bytes);
    ntfs::format_volume(dev, ntfs::test::must(bytes), ntfs::test::opts());
    return dev;
}

void zero(io::MemoryImage& dev, std::uint64_t at, std::uint64_t n) {
    dev.write_at(at, std::vector<std::byte>(n));
}

fs::Detection detected(const io::BlockDevice& d) { return fs::detect(d); }

}  // namespace

TEST_CASE("detect names each filesystem by its signature", "[fs]") {
    for (const auto type : {fat::FatType::fat12, fat::FatType::fat16, fat::FatType::fat32}) {
        const auto dev = fat_image(type == fat::FatType::fat32 ? 40u << 20 : 16u << 20, type);
        const auto d = detected(dev);
        CHECK(d.kind == fs::Kind::fat);
        CHECK(d.certainty == fs::Certainty::signature);
        CHECK_FALSE(d.through_backup);
    }
    CHECK(detected(exfat_image(8u << 20)).kind == fs::Kind::exfat);
    const auto n = detected(ntfs_image(8u << 20));
    CHECK(n.kind == fs::Kind::ntfs);
    CHECK(n.certainty == fs::Certainty::signature);
    CHECK(fs::name(fs::Kind::exfat) == "exfat");
    CHECK(fs::label(fs::Kind::ntfs) == "NTFS");
}

TEST_CASE("a volume whose sector 0 is damaged is read through its backup boot sector", "[fs]") {
    SECTION("NTFS: OEM ID overwritten (images/ntfs-boot-oem_id), the jump still looks like FAT's") {
        auto dev = ntfs_image(8u << 20);
        dev.write_at(3, std::vector<std::byte>(8, std::byte{'X'}));
        const auto d = detected(dev);
        CHECK(d.kind == fs::Kind::ntfs);
        CHECK(d.certainty == fs::Certainty::backup);
        REQUIRE(d.through_backup);
        CHECK(d.backup_offset == (8u << 20) - 512);
        CHECK(d.note.find("ntfs.boot.oem_id") != std::string::npos);
        const auto view = fs::open_view(dev);
        CHECK(view->kind() == fs::Kind::ntfs);
        CHECK(view->open_problems().front() == d.note);
        const auto root = view->lookup("/");
        REQUIRE(root);
        std::vector<std::string> problems;
        CHECK(view->list(*root, problems).empty());  // the system files are not listed
        CHECK(problems.empty());
        check::Findings f;
        const auto c = fs::check_volume(dev, f);
        CHECK(c.detection.kind == fs::Kind::ntfs);
        CHECK(c.summary.type == "NTFS");
        CHECK(f.has("ntfs.boot.oem_id"));
        CHECK(c.summary.complete);
    }
    SECTION("FAT32: sector 0 zeroed, the backup at sector 6") {
        auto dev = fat_image(40u << 20, fat::FatType::fat32);
        zero(dev, 0, 512);
        const auto d = detected(dev);
        CHECK(d.kind == fs::Kind::fat);
        CHECK(d.certainty == fs::Certainty::backup);
        REQUIRE(d.through_backup);
        CHECK(d.backup_offset == 6 * 512);
        const auto view = fs::open_view(dev);
        REQUIRE(view->lookup("/"));
        check::Findings f;
        const auto c = fs::check_volume(dev, f);
        CHECK(c.summary.type == "FAT32");
        CHECK(c.summary.complete);
        REQUIRE(f.size() == 1);
        CHECK(f.all()[0].code == "fat.boot.main-damaged");
    }
    SECTION("FAT32: a BPB without geometry, the jump intact") {
        auto dev = fat_image(40u << 20, fat::FatType::fat32);
        zero(dev, 0x0B, 2);  // BPB_BytsPerSec 0
        const auto d = detected(dev);
        CHECK(d.kind == fs::Kind::fat);
        CHECK(d.through_backup);
        CHECK(d.note.find("BPB_BytsPerSec is 0") != std::string::npos);
    }
    SECTION("FAT16 (no backup): a broken BPB is still FAT, weakly") {
        auto dev = fat_image(16u << 20, fat::FatType::fat16);
        zero(dev, 0x0B, 2);
        const auto d = detected(dev);
        CHECK(d.kind == fs::Kind::fat);
        CHECK(d.certainty == fs::Certainty::weak);
        check::Findings f;
        fs::check_volume(dev, f);
        CHECK(f.has("fat.boot.geometry"));
    }
    SECTION("exFAT: sector 0 zeroed, the backup boot region at sector 12") {
        auto dev = exfat_image(8u << 20);
        zero(dev, 0, 512);
        const auto d = detected(dev);
        CHECK(d.kind == fs::Kind::exfat);
        CHECK(d.certainty == fs::Certainty::backup);
        const auto view = fs::open_view(dev);
        CHECK(view->open_problems().front().find("backup boot region") != std::string::npos);
    }
}

TEST_CASE("detect refuses two equal matches and names what is not a filesystem", "[fs]") {
    // A zeroed exFAT sector 0 whose device also ends in a valid NTFS backup
    // boot sector: both backups are whole, nothing says which to trust.
    auto dev = exfat_image(8u << 20);
    zero(dev, 0, 512);
    const auto n = ntfs_image(8u << 20);
    std::vector<std::byte> last(512);
    n.read_at((8u << 20) - 512, last);
    dev.write_at((8u << 20) - 512, last);
    try {
        fs::detect(dev);
        FAIL("two backups accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
        CHECK(std::string(e.what()).find("both") != std::string::npos);
    }
    io::MemoryImage zeros(1u << 20);
    CHECK_FALSE(fs::probe(zeros));
    try {
        fs::detect(zeros);
        FAIL("zeros detected");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::not_this_fs);
        CHECK(std::string(e.what()).find("only zeros") != std::string::npos);
    }
    io::MemoryImage tiny(100);
    CHECK_FALSE(fs::probe(tiny));
}

TEST_CASE("open_view lists each filesystem's root through one face", "[fs]") {
    const auto f = fat_image(16u << 20, fat::FatType::fat16);
    const auto x = exfat_image(8u << 20);
    const auto n = ntfs_image(8u << 20);
    for (const io::BlockDevice* dev :
         {static_cast<const io::BlockDevice*>(&f), static_cast<const io::BlockDevice*>(&x),
          static_cast<const io::BlockDevice*>(&n)}) {
        const auto view = fs::open_view(*dev);
        const auto root = view->lookup("/");
        REQUIRE(root);
        CHECK(root->is_dir);
        CHECK(root->is_root);
        std::vector<std::string> problems;
        CHECK(view->list(*root, problems).empty());
        CHECK(problems.empty());
        CHECK(view->has_short_names() == (view->kind() == fs::Kind::fat));
        check::Findings findings;
        const auto c = fs::check_volume(*dev, findings);
        CHECK(c.detection.kind == view->kind());
        CHECK(c.summary.complete);
        // The root; NTFS also counts $Extend (a system directory record).
        CHECK(c.summary.directories == (view->kind() == fs::Kind::ntfs ? 2u : 1u));
        CHECK_FALSE(findings.has_errors());
    }
}
