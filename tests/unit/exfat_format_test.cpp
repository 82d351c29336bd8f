// exFAT format (include/fsimg/exfat/format.hpp) on in-memory devices: every
// structure read back, 512 and 4096-byte sectors, multi-cluster bitmaps,
// terabyte volumes (only metadata written), reused devices, determinism; the
// reader of the boot region (volume.hpp) on the same devices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <variant>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"

using namespace fsimg;
using namespace fsimg::exfat;

namespace {

constexpr std::uint64_t MiB = 1u << 20;
constexpr std::uint64_t TiB = MiB << 20;

/// A sparse device of any size: keeps written bytes in 4 KiB pages, reads
/// zeros elsewhere, counts what was written.
class SparseDevice final : public io::BlockDevice {
public:
    explicit SparseDevice(std::uint64_t size, std::byte fill = std::byte{0}) : size_(size), fill_(fill) {}
    std::uint64_t size() const override { return size_; }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
        REQUIRE(offset + out.size() <= size_);
        for (std::size_t i = 0; i < out.size(); ++i) {
            const auto it = pages_.find((offset + i) / kPage);
            out[i] = it == pages_.end() ? fill_ : it->second[(offset + i) % kPage];
        }
    }
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override {
        REQUIRE(offset + in.size() <= size_);
        written_ += in.size();
        for (std::size_t i = 0; i < in.size(); ++i) page((offset + i) / kPage)[(offset + i) % kPage] = in[i];
    }
    void zero_range(std::uint64_t offset, std::uint64_t length) override {
        // Like a hole punch: whole pages dropped (they read as `fill_` == garbage
        // unless fill is zero, so here they become explicit zero pages).
        for (std::uint64_t p = offset / kPage; p * kPage < offset + length; ++p) {
            const std::uint64_t from = std::max(offset, p * kPage),
                                to = std::min(offset + length, (p + 1) * kPage);
            auto& pg = page(p);
            std::fill(pg.begin() + (from - p * kPage), pg.begin() + (to - p * kPage), std::byte{0});
        }
    }
    std::uint64_t written() const noexcept { return written_; }
    std::size_t pages() const noexcept { return pages_.size(); }
    std::vector<std::byte> read(std::uint64_t offset, std::size_t n) const {
        std::vector<std::byte> v(n);
        read_at(offset, v);
        return v;
    }

private:
    static constexpr std::uint64_t kPage = 4096;
    std::vector<std::byte>& page(std::uint64_t p) {
        auto [it, fresh] = pages_.try_emplace(p);
        if (fresh) it->second.assign(kPage, fill_);
        return it->second;
    }
    std::uint64_t size_;
    std::byte fill_;
    std::map<std::uint64_t, std::vector<std::byte>> pages_;
    std::uint64_t written_ = 0;
};

Layout plan(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {}, std::uint32_t bps = 512) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.cluster_bytes = cluster;
    r.bytes_per_sector = bps;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

std::uint32_t fat_entry(const SparseDevice& d, const Layout& l, std::uint32_t n) {
    const auto b = d.read(std::uint64_t(l.fat_offset) * l.bytes_per_sector + 4ull * n, 4);
    return core::load_le32(b, 0);
}

bool bitmap_bit(const SparseDevice& d, const Layout& l, std::uint32_t cluster) {
    const std::uint32_t bit = cluster - 2;
    const auto b = d.read(l.cluster_offset(l.bitmap_first_cluster) + bit / 8, 1);
    return (static_cast<unsigned>(b[0]) >> (bit % 8)) & 1u;
}

/// Reads the volume back the way a reader would and checks every structure.
void check_volume(const SparseDevice& d, const Layout& l, const std::string& label, std::uint32_t serial) {
    const std::uint32_t bps = l.bytes_per_sector;
    INFO("cluster " << l.cluster_bytes() << " bps " << bps << " count " << l.cluster_count);
    // Boot regions: identical, checksums verify, fields as planned.
    const auto main = d.read(0, 12 * bps);
    const auto backup = d.read(12ull * bps, 12 * bps);
    CHECK(main == backup);
    CHECK(boot_region_checksum_ok(main, bps));
    const BootSector bs = decode_boot_sector(std::span<const std::byte>(main).first<kBootSectorSize>());
    CHECK(validate_boot_sector(bs).empty());
    CHECK(bs == boot_sector_from_layout(l, serial, l.percent_in_use()));
    CHECK(main[off::BootCode] == std::byte{0xF4});
    CHECK(main[off::BootSignature - 1] == std::byte{0xF4});
    for (std::uint32_t s = 1; s <= 8; ++s) {
        CHECK(extended_boot_signature(std::span<const std::byte>(main).subspan(s * bps, bps)) ==
              kExtendedBootSignature);
    }
    CHECK(std::all_of(main.begin() + 9 * bps, main.begin() + 11 * bps,
                      [](std::byte b) { return b == std::byte{0}; }));
    if (bps > 512)
        CHECK(std::all_of(main.begin() + 512, main.begin() + bps - 4,
                          [](std::byte b) { return b == std::byte{0}; }));

    // FAT: media entries, one chain per system object, nothing after.
    CHECK(fat_entry(d, l, 0) == 0xFFFFFFF8);
    CHECK(fat_entry(d, l, 1) == 0xFFFFFFFF);
    auto chain_ok = [&](std::uint32_t first, std::uint32_t count) {
        for (std::uint32_t c = first; c + 1 < first + count; ++c) REQUIRE(fat_entry(d, l, c) == c + 1);
        CHECK(fat_entry(d, l, first + count - 1) == kFatEndOfChain);
    };
    chain_ok(l.bitmap_first_cluster, l.bitmap_clusters());
    chain_ok(l.upcase_first_cluster, l.upcase_clusters());
    chain_ok(l.root_first_cluster, 1);
    CHECK(fat_entry(d, l, l.root_first_cluster + 1) == 0);

    // Bitmap: exactly the system clusters in use.
    for (std::uint32_t c = 2; c <= l.root_first_cluster; ++c) REQUIRE(bitmap_bit(d, l, c));
    if (l.root_first_cluster < l.cluster_count + 1) {  // not full
        CHECK_FALSE(bitmap_bit(d, l, l.root_first_cluster + 1));
        CHECK_FALSE(bitmap_bit(d, l, l.cluster_count + 1));
    }

    // Up-case table and root entries.
    const auto table = d.read(l.cluster_offset(l.upcase_first_cluster), kRecommendedUpcaseBytes);
    CHECK(table_checksum(table) == kRecommendedUpcaseChecksum);
    const auto root = d.read(l.cluster_offset(l.root_first_cluster), l.cluster_bytes());
    auto entry = [&](std::size_t i) {
        return std::span<const std::byte>(root).subspan(32 * i).first<kDirEntrySize>();
    };
    CHECK(root[0] == std::byte{kEntryVolumeLabel});
    CHECK(decode_volume_label_entry(entry(0)) == volume_label_entry_from_utf8(label));
    CHECK(root[32] == std::byte{kEntryAllocationBitmap});
    CHECK(decode_allocation_bitmap_entry(entry(1)) == AllocationBitmapEntry{0, 2, l.bitmap_bytes});
    CHECK(root[64] == std::byte{kEntryUpcaseTable});
    CHECK(decode_upcase_table_entry(entry(2)) ==
          UpcaseTableEntry{kRecommendedUpcaseChecksum, l.upcase_first_cluster, kRecommendedUpcaseBytes});
    CHECK(std::all_of(root.begin() + 96, root.end(), [](std::byte b) { return b == std::byte{0}; }));
}

}  // namespace

TEST_CASE("exFAT format: every structure reads back", "[exfat_format]") {
    struct Case {
        std::uint64_t bytes;
        std::optional<std::uint32_t> cluster;
        std::uint32_t bps;
    };
    for (const Case& c :
         {Case{MiB, {}, 512}, Case{64 * MiB, {}, 512}, Case{64 * MiB, {}, 4096}, Case{300 * MiB, 512, 512},
          Case{1024 * MiB, 512, 512},  // bitmap of 512 clusters
          Case{128 * MiB, 32 * MiB, 4096}, Case{3 * MiB, 1024, 1024}, Case{4 * MiB, 2048, 2048}}) {
        const Layout l = plan(c.bytes, c.cluster, c.bps);
        SparseDevice d(c.bytes);
        FormatOptions o;
        o.volume_serial_number = 0xCAFE1234;
        o.label = "Données";
        format_volume(d, l, o);
        check_volume(d, l, o.label, o.volume_serial_number);
    }
}

TEST_CASE("exFAT format: an empty label is an entry with no characters", "[exfat_format]") {
    const Layout l = plan(64 * MiB);
    SparseDevice d(64 * MiB);
    format_volume(d, l, FormatOptions{});
    check_volume(d, l, "", 0);
    const auto root = d.read(l.cluster_offset(l.root_first_cluster), 32);
    CHECK(root[0] == std::byte{0x83});
    CHECK(root[1] == std::byte{0});
}

TEST_CASE("exFAT format: terabyte volumes write only metadata", "[exfat_format]") {
    for (std::uint64_t bytes : {2 * TiB, 8 * TiB}) {
        const Layout l = plan(bytes, 4096);
        SparseDevice d(bytes);
        FormatOptions o;
        o.volume_serial_number = 1;
        format_volume(d, l, o);
        // Boot regions, the FAT prefix of the system chains (one entry per
        // cluster of a 64/256 MiB bitmap), the bitmap's first bytes, up-case, root.
        const std::uint64_t expected = 2 * 12 * 512 + 4ull * (l.root_first_cluster + 1) +
                                       (l.used_clusters() + 7) / 8 + kRecommendedUpcaseBytes + 96;
        CHECK(d.written() == expected);
        CHECK(d.written() < 2 * MiB);
        check_volume(d, l, "", 1);
    }
}

TEST_CASE("exFAT format: a reused device is cleaned where it matters", "[exfat_format]") {
    const Layout l = plan(64 * MiB);
    SparseDevice dirty(64 * MiB, std::byte{0xA5});
    FormatOptions o;
    o.volume_serial_number = 7;
    o.label = "REUSED";
    o.device_is_zeroed = false;
    format_volume(dirty, l, o);
    check_volume(dirty, l, "REUSED", 7);
    // The FAT past the system chains and the rest of the bitmap read as zero.
    CHECK(fat_entry(dirty, l, l.cluster_count + 1) == 0);
    CHECK_FALSE(bitmap_bit(dirty, l, 1000));
}

TEST_CASE("exFAT format: same inputs, same bytes", "[exfat_format]") {
    const Layout l = plan(32 * MiB, 512);
    FormatOptions o;
    o.volume_serial_number = 0x12345678;
    o.label = "REPRO";
    io::MemoryImage a(32 * MiB), b(32 * MiB);
    format_volume(a, l, o);
    format_volume(b, l, o);
    CHECK(a.bytes() == b.bytes());
}

TEST_CASE("exFAT format: refusals before writing", "[exfat_format]") {
    const Layout l = plan(64 * MiB);
    SparseDevice small(32 * MiB);
    CHECK_THROWS_AS(format_volume(small, l, FormatOptions{}), Error);
    SparseDevice d(64 * MiB);
    FormatOptions o;
    o.label = "MUCH TOO LONG A LABEL";
    CHECK_THROWS_AS(format_volume(d, l, o), Error);
    CHECK(d.written() == 0);
    // A layout the boot sector cannot express is refused, nothing written.
    Layout broken = l;
    broken.cluster_count += 1000000;
    CHECK_THROWS_AS(format_volume(d, broken, FormatOptions{}), Error);
    CHECK(d.written() == 0);
}

TEST_CASE("exFAT format: boot region builder is pure and checksummed", "[exfat_format]") {
    for (std::uint32_t bps : {512u, 4096u}) {
        const Layout l = plan(64 * MiB, {}, bps);
        const auto r = build_boot_region(l, 0xABCDEF01);
        REQUIRE(r.size() == 12 * bps);
        CHECK(boot_region_checksum_ok(r, bps));
        CHECK(r == build_boot_region(l, 0xABCDEF01));
        CHECK(r != build_boot_region(l, 0xABCDEF02));
    }
}

TEST_CASE("exFAT volume: the boot region and root entries read back", "[exfat_volume]") {
    for (std::uint32_t bps : {512u, 4096u}) {
        const Layout l = plan(64 * MiB, {}, bps);
        SparseDevice d(64 * MiB);
        FormatOptions o;
        o.volume_serial_number = 0x0BADF00D;
        o.label = "Données";
        format_volume(d, l, o);
        const BootRegion r = read_boot_region(d);
        CHECK(r.bytes_per_sector == bps);
        CHECK(r.problems.empty());
        CHECK(r.main.checksum_ok);
        CHECK(r.main.extended_signatures_ok == 8);
        CHECK(r.main.oem_parameters == "null");
        REQUIRE(r.backup);
        CHECK(r.backup->checksum_ok);
        CHECK(r.backup_identical);
        CHECK(r.missing_bytes == 0);
        CHECK_FALSE(r.root_problem);
        REQUIRE(r.label);
        CHECK(label_text(*r.label) == "Données");
        REQUIRE(r.bitmap);
        CHECK(r.bitmap->data_length == l.bitmap_bytes);
        REQUIRE(r.upcase);
        REQUIRE(r.upcase_checksum_computed);
        CHECK(*r.upcase_checksum_computed == r.upcase->table_checksum);
        const auto fields = boot_fields(r.main.boot);
        CHECK(fields.size() == 19);
        CHECK(fields[4].name == "VolumeLength");
        CHECK(fields[4].offset == 72);
        CHECK(fields[4].number == l.volume_length);

        // VolumeFlags may change without the checksum; anything else breaks it.
        d.write_at(off::VolumeFlags, std::vector<std::byte>{std::byte{2}});
        CHECK(read_boot_region(d).main.checksum_ok);
        CHECK(read_boot_region(d).backup_identical);
        d.write_at(off::VolumeSerialNumber, std::vector<std::byte>{std::byte{0}});
        const BootRegion bad = read_boot_region(d);
        CHECK_FALSE(bad.main.checksum_ok);
        CHECK(bad.backup->checksum_ok);
        CHECK_FALSE(bad.backup_identical);
    }
}

TEST_CASE("exFAT volume: hostile boot sectors do not crash the reader", "[exfat_volume]") {
    const Layout l = plan(8 * MiB);
    SparseDevice d(8 * MiB);
    format_volume(d, l, FormatOptions{});
    // A root cluster past the heap, an up-case chain looping into itself, a
    // huge up-case length: read_boot_region reports instead of following.
    auto set32 = [&](std::uint64_t at, std::uint32_t v) {
        std::vector<std::byte> b(4);
        core::store_le32(b, 0, v);
        d.write_at(at, b);
    };
    set32(l.cluster_offset(l.root_first_cluster) + 64 + dir_off::DataLength, 100000);  // up-case: 25 clusters
    set32(std::uint64_t(l.fat_offset) * 512 + 4ull * l.upcase_first_cluster, l.upcase_first_cluster);  // loop
    BootRegion r = read_boot_region(d);
    REQUIRE(r.upcase);
    CHECK(r.upcase_checksum_computed);  // bounded by the length, whatever the loop
    set32(l.cluster_offset(l.root_first_cluster) + 64 + dir_off::DataLength, 0x7FFFFFFF);
    CHECK_FALSE(read_boot_region(d).upcase_checksum_computed);
    // Sector 0 claiming 4 KiB sectors on an image of 40 KiB: too short for the region.
    SparseDevice tiny(40 * 1024);
    std::vector<std::byte> s0(512);
    s0[3] = std::byte{'E'};
    const std::string name = "EXFAT   ";
    for (std::size_t i = 0; i < 8; ++i) s0[3 + i] = static_cast<std::byte>(name[i]);
    s0[off::BytesPerSectorShift] = std::byte{12};
    tiny.write_at(0, s0);
    CHECK_THROWS_AS(read_boot_region(tiny), Error);
    s0[off::BytesPerSectorShift] = std::byte{200};  // out of range: read as 512-byte sectors, reported
    tiny.write_at(0, s0);
    const BootRegion odd = read_boot_region(tiny);
    CHECK_FALSE(odd.problems.empty());
    CHECK(odd.root_problem);
    SparseDevice notfs(1 * MiB);
    CHECK_THROWS_AS(read_boot_region(notfs), Error);
}
