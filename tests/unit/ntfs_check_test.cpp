// NTFS fsck (include/fsimg/ntfs/check.hpp) on MemoryImages made by
// format_volume: clean volumes report nothing; one precise damage gives
// exactly its code; a broken main boot sector is checked through the
// backup; random damage never crashes, hangs or throws.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "fsimg/check/codes.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "ntfs_fixture.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
using fsimg::ntfs::test::must;
using fsimg::ntfs::test::opts;

namespace {

io::MemoryImage formatted(std::uint64_t bytes = 16u << 20, std::uint32_t cluster = 4096,
                          std::uint32_t bps = 512) {
    const Layout L = must(bytes, cluster, bps);
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, opts());
    return img;
}

std::set<std::string> codes_of(const io::BlockDevice& d, CheckSummary* s = nullptr) {
    check::Findings f;
    const CheckSummary sum = check_volume(d, f);
    if (s) *s = sum;
    std::set<std::string> out;
    for (const auto& x : f.all()) out.insert(std::string(x.code));
    return out;
}

/// Edits MFT record n in place: fixups removed, `edit` called, fixups
/// applied again; $MFTMirr's copy too for records 0..3.
template <class F>
void edit_record(io::MemoryImage& img, std::uint64_t n, F edit) {
    const Volume v(img);
    const std::uint32_t rs = v.geometry().mft_record_bytes;
    const std::uint64_t at = *v.device_offset(v.mft_data(), n * rs);
    std::vector<std::byte> r(rs);
    img.read_at(at, r);
    REQUIRE_FALSE(verify_and_remove_fixups(r));
    edit(r);
    apply_fixups(r, core::load_le16(r, 4), core::load_le16(r, core::load_le16(r, 4)));
    img.write_at(at, r);
    if (n < 4) img.write_at(v.boot().mftmirr_lcn * v.geometry().cluster_bytes + n * rs, r);
}

/// The offset of the value of record n's first attribute of `type`.
std::size_t value_at(std::span<const std::byte> r, AttrType type) {
    std::size_t pos = core::load_le16(r, 0x14);
    while (core::load_le32(r, pos) != 0xFFFFFFFF) {
        if (core::load_le32(r, pos) == static_cast<std::uint32_t>(type))
            return pos + core::load_le16(r, pos + 0x14);
        pos += core::load_le32(r, pos + 4);
    }
    FAIL("no such attribute");
    return 0;
}

}  // namespace

TEST_CASE("ntfs check: clean volumes report nothing and count what they hold", "[ntfs_check]") {
    const auto bps = GENERATE(512u, 4096u);
    const auto cluster = GENERATE(512u, 4096u, 65536u);
    if (cluster < bps) return;
    INFO("sector " << bps << " cluster " << cluster);
    const io::MemoryImage img = formatted(16u << 20, cluster, bps);
    CheckSummary s;
    CHECK(codes_of(img, &s).empty());
    CHECK(s.complete);
    CHECK(s.cluster_bytes == cluster);
    CHECK(s.cluster_count == (16u << 20) / cluster - 1);  // total sectors: the device's minus the backup
    CHECK(s.directories == 2);                            // the root and $Extend
    CHECK(s.marked_clusters == s.used_clusters);
    CHECK(s.free_clusters == s.cluster_count - s.marked_clusters);
    CHECK(s.lost_clusters == 0);
    CHECK(looks_like_ntfs(img));
}

TEST_CASE("ntfs check: every code it can report is registered as ntfs.*", "[ntfs_check]") {
    std::size_t n = 0;
    for (const auto& c : check::all_codes())
        if (c.code.substr(0, 5) == "ntfs.") ++n;
    CHECK(n == 78);
    for (const char* c : {"ntfs.boot.oem_id", "ntfs.record.fixup", "ntfs.attr.order", "ntfs.run.cross-link",
                          "ntfs.bitmap.lost", "ntfs.index.order", "ntfs.tree.orphan", "ntfs.volume.dirty",
                          "ntfs.upcase.ascii", "ntfs.reparse.missing-entry", "ntfs.logfile.unclean",
                          "ntfs.logfile.unknown", "ntfs.attr.missing-data"})
        CHECK(check::find_code(c) != nullptr);
    CHECK(check::find_code("ntfs.volume.dirty")->severity == check::Severity::warning);
}

TEST_CASE("ntfs check: a broken main boot sector is checked through the backup", "[ntfs_check]") {
    io::MemoryImage img = formatted();
    const std::array<std::byte, 2> bad{std::byte{0xF4}, std::byte{0x01}};  // 500 bytes per sector
    img.write_at(off::BytesPerSector, bad);
    CHECK(looks_like_ntfs(img));
    check::Findings f;
    const CheckSummary s = check_volume(img, f);
    REQUIRE(f.size() == 1);
    CHECK(f.all()[0].code == "ntfs.boot.bytes_per_sector");
    CHECK(f.all()[0].severity == check::Severity::error);  // fatal only without a backup
    CHECK(s.complete);

    // Both broken: fatal, nothing more.
    img.write_at(img.size() - 512 + off::BytesPerSector, bad);
    check::Findings g;
    CHECK_FALSE(check_volume(img, g).complete);
    REQUIRE(g.size() == 1);
    CHECK(g.all()[0].severity == check::Severity::fatal);

    io::MemoryImage zero(1u << 20);
    CHECK_FALSE(looks_like_ntfs(zero));
    check::Findings h;
    CHECK_THROWS_AS(check_volume(zero, h), Error);
}

TEST_CASE("ntfs check: the backup boot sector and the image size", "[ntfs_check]") {
    io::MemoryImage img = formatted();
    const std::array<std::byte, 1> x{std::byte{0x5A}};
    img.write_at(img.size() - 512 + off::VolumeSerialNumber, x);
    CHECK(codes_of(img) == std::set<std::string>{"ntfs.boot.backup-differs"});

    const io::MemoryImage full = formatted();
    std::vector<std::byte> bytes(full.size());
    full.read_at(0, bytes);
    io::MemoryImage no_backup(std::vector<std::byte>(bytes.begin(), bytes.end() - 512));
    CHECK(codes_of(no_backup) == std::set<std::string>{"ntfs.boot.backup-missing"});
    io::MemoryImage cut(std::vector<std::byte>(bytes.begin(), bytes.end() - (1u << 20)));
    CHECK(codes_of(cut).count("ntfs.boot.image-truncated") == 1);
}

TEST_CASE("ntfs check: record, bitmap and system-file damage give exactly their code", "[ntfs_check]") {
    using Codes = std::set<std::string>;
    SECTION("record flags") {
        io::MemoryImage img = formatted();
        edit_record(img, 9, [](std::span<std::byte> r) {
            core::store_le16(r, 0x16, core::load_le16(r, 0x16) | 0x100);
        });
        CHECK(codes_of(img) == Codes{"ntfs.record.flags"});
    }
    SECTION("link count") {
        io::MemoryImage img = formatted();
        edit_record(img, 7, [](std::span<std::byte> r) { core::store_le16(r, 0x12, 2); });
        CHECK(codes_of(img) == Codes{"ntfs.record.link-count"});
    }
    SECTION("bytes allocated") {
        io::MemoryImage img = formatted();
        edit_record(img, 9, [](std::span<std::byte> r) { core::store_le32(r, 0x1C, 4096); });
        CHECK(codes_of(img) == Codes{"ntfs.record.bytes-allocated"});
    }
    SECTION("$Volume dirty is a warning") {
        io::MemoryImage img = formatted();
        edit_record(img, 3, [](std::span<std::byte> r) {
            const std::size_t v = value_at(r, AttrType::volume_information);
            core::store_le16(r, v + 10, core::load_le16(r, v + 10) | 1);
        });
        check::Findings f;
        check_volume(img, f);
        REQUIRE(f.size() == 1);
        CHECK(f.all()[0].code == "ntfs.volume.dirty");
        CHECK_FALSE(f.has_errors());
    }
    SECTION("$Bitmap: cluster 0 ($Boot) marked free") {
        io::MemoryImage img = formatted();
        const Volume v(img);
        const MftRecord r6 = v.read_record(6);
        const auto at = v.device_offset(*r6.find(AttrType::data), 0);
        REQUIRE(at);
        std::array<std::byte, 1> b{};
        img.read_at(*at, b);
        b[0] &= std::byte{0xFE};
        img.write_at(*at, b);
        check::Findings f;
        check_volume(img, f);
        REQUIRE(f.size() == 1);
        CHECK(f.all()[0].code == "ntfs.bitmap.free-in-use");
        CHECK(f.all()[0].count == 1);
    }
    SECTION("$MFTMirr differs") {
        io::MemoryImage img = formatted();
        const Volume v(img);
        const std::uint64_t mirr = v.boot().mftmirr_lcn * v.geometry().cluster_bytes + 8;  // record 0's LSN
        const std::array<std::byte, 1> x{std::byte{0x77}};
        img.write_at(mirr, x);
        CHECK(codes_of(img) == Codes{"ntfs.mftmirr.differs"});
    }
    SECTION("a torn record: fixup") {
        io::MemoryImage img = formatted();
        const Volume v(img);
        const auto at = *v.device_offset(v.mft_data(), 9 * v.geometry().mft_record_bytes);
        const std::array<std::byte, 1> x{std::byte{0x42}};
        img.write_at(at + 510, x);
        CHECK(codes_of(img).count("ntfs.record.fixup") == 1);
    }
}

TEST_CASE("ntfs check: a boot sector claiming a petabyte on a 16 MiB image stays bounded",
          "[ntfs_check][hostile]") {
    // Fuzz finding (session 4): the one-bit-per-cluster ownership map was
    // sized by the boot sector's cluster count (2^38 clusters: 32 GiB), not
    // by what the image holds. Now only the image's clusters are tracked.
    io::MemoryImage img = formatted();
    std::array<std::byte, 8> total{};
    core::store_le64(total, 0, std::uint64_t{1} << 41);  // sectors of 512 bytes: 1 PiB
    img.write_at(off::TotalSectors, total);
    CheckSummary sum;
    const std::set<std::string> codes = codes_of(img, &sum);
    CHECK(codes.count("ntfs.boot.image-truncated") == 1);
    CHECK(codes.count("ntfs.bitmap.size") == 1);  // $Bitmap holds 16 MiB's bits, not a petabyte's
    CHECK(sum.cluster_count == (std::uint64_t{1} << 38));
    CHECK(sum.complete);
}

TEST_CASE("ntfs check: random damage never crashes, hangs or throws", "[ntfs_check][hostile]") {
    const io::MemoryImage clean = formatted(4u << 20);
    std::vector<std::byte> bytes(clean.size());
    clean.read_at(0, bytes);
    const Volume v(clean);
    const std::uint64_t mft = *v.device_offset(v.mft_data(), 0);
    std::mt19937 rng(8);
    for (int round = 0; round < 150; ++round) {
        std::vector<std::byte> b = bytes;
        const int flips = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < flips; ++i) {
            // Mostly the MFT and the boot sector, sometimes anywhere.
            const std::uint64_t span = rng() % 4 ? 64 * 1024 : b.size();
            const std::uint64_t base = span == b.size() ? 0 : (rng() % 8 ? mft : 0);
            const std::uint64_t at = std::min<std::uint64_t>(base + rng() % span, b.size() - 1);
            b[at] = static_cast<std::byte>(rng());
        }
        io::MemoryImage img(std::move(b));
        check::Findings f;
        try {
            (void)check_volume(img, f);
        } catch (const Error& e) {
            INFO(e.what());
            CHECK(e.code() == ErrorCode::not_this_fs);
        }
    }
    SUCCEED("no crash");
}

TEST_CASE("ntfs check: $MFTMirr is judged on what Windows keeps in sync (issue 21)",
          "[ntfs_check][mftmirr]") {
    // 64 KiB clusters: the mirror holds 64 records (as mkntfs writes it).
    // Windows keeps records 0-3 in sync; ntfs-3g 2022.10.3 compares up to
    // record 15 (ntfsfix -n fails on record 9, passes on record 20); the
    // bytes after a record's bytes in use are not compared (ntfs-3g
    // memcmp()s ntfs_mft_record_get_data_size() bytes).
    io::MemoryImage img = formatted(64u << 20, 65536);
    const Volume v(img);
    const std::uint32_t rs = v.geometry().mft_record_bytes;
    const std::uint64_t mirr = v.boot().mftmirr_lcn * v.geometry().cluster_bytes;
    const auto bump = [&](std::uint64_t at) {
        std::array<std::byte, 1> b{};
        img.read_at(at, b);
        b[0] ^= std::byte{0x5A};
        img.write_at(at, b);
    };
    REQUIRE(codes_of(img).empty());
    SECTION("record 2 differs: an error") {
        bump(mirr + 2 * rs + 8);  // its LSN
        CHECK(codes_of(img) == std::set<std::string>{"ntfs.mftmirr.differs"});
    }
    SECTION("record 9 differs: ntfs-3g refuses to mount, Windows does not care") {
        bump(mirr + 9 * rs + 8);
        check::Findings f;
        check_volume(img, f);
        REQUIRE(f.size() == 1);
        CHECK(f.all()[0].code == "ntfs.mftmirr.stale");
        CHECK(f.all()[0].severity == check::Severity::warning);
    }
    SECTION("record 20 differs: compared by no one") {
        bump(mirr + 20 * rs + 8);
        CHECK(codes_of(img).empty());
    }
    SECTION("the bytes after record 2's bytes in use differ") {
        std::vector<std::byte> r(rs);
        img.read_at(mirr + 2 * rs, r);
        const std::uint32_t in_use = core::load_le32(r, 0x18);
        REQUIRE(in_use + 16 < 510);  // before the first fixup position
        bump(mirr + 2 * rs + in_use + 8);
        CHECK(codes_of(img).empty());
    }
    // $MFTMirr's $DATA (both copies of record 1): data size and
    // initialized size of `records` records.
    const auto mirror_holds = [&](std::uint64_t records) {
        edit_record(img, 1, [&](std::vector<std::byte>& r) {
            std::size_t pos = core::load_le16(r, 0x14);
            while (core::load_le32(r, pos) != static_cast<std::uint32_t>(AttrType::data))
                pos += core::load_le32(r, pos + 4);
            REQUIRE(r[pos + 8] == std::byte{1});  // non-resident
            core::store_le64(r, pos + 0x30, records * rs);
            core::store_le64(r, pos + 0x38, records * rs);
        });
    };
    SECTION("a mirror holding only records 0-3 with 64 KiB clusters") {
        mirror_holds(4);
        CHECK(codes_of(img).empty());
    }
    SECTION("a mirror holding 3 records") {
        mirror_holds(3);
        CHECK(codes_of(img) == std::set<std::string>{"ntfs.mftmirr.unreadable"});
    }
}
