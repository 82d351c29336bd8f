#include "fsimg/exfat/format.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::size_t kChunkBytes = 1u << 20;  ///< largest buffer format_volume holds

/// Refuses to write a boot sector that the reader's path would not read back
/// as `layout` (a bug here must not become a broken image).
void check_boot_sector(const Layout& layout, BootSpan sector) {
    const BootSector bs = decode_boot_sector(sector);
    const auto problems = validate_boot_sector(bs);
    if (!problems.empty()) {
        throw Error(
            ErrorCode::unsupported,
            fmt::format("internal error: the exFAT boot sector built for this layout is invalid ({}); "
                        "nothing written",
                        problems.front().message));
    }
    const bool same = bs.volume_length == layout.volume_length && bs.fat_offset == layout.fat_offset &&
                      bs.fat_length == layout.fat_length &&
                      bs.cluster_heap_offset == layout.cluster_heap_offset &&
                      bs.cluster_count == layout.cluster_count &&
                      bs.first_cluster_of_root_directory == layout.root_first_cluster &&
                      (1u << bs.bytes_per_sector_shift) == layout.bytes_per_sector &&
                      (1u << bs.sectors_per_cluster_shift) == layout.sectors_per_cluster;
    if (!same) {
        throw Error(
            ErrorCode::unsupported,
            "internal error: the exFAT boot sector reads back as a different geometry; nothing written");
    }
}

/// FAT entries 0 .. root_first_cluster: media, entry 1, and one chain per
/// system object, written in chunks.
void write_fat(io::BlockDevice& dev, const Layout& l) {
    struct Run {
        std::uint32_t first;
        std::uint32_t count;
    };
    const Run runs[] = {{l.bitmap_first_cluster, l.bitmap_clusters()},
                        {l.upcase_first_cluster, l.upcase_clusters()},
                        {l.root_first_cluster, 1}};
    auto entry = [&](std::uint32_t n) -> std::uint32_t {
        if (n == 0) return kFatEntryMediaDescriptor;
        if (n == 1) return kFatEntry1;
        for (const Run& r : runs) {
            if (n >= r.first && n < r.first + r.count)
                return n + 1 == r.first + r.count ? kFatEndOfChain : n + 1;
        }
        return 0;
    };
    const std::uint64_t entries = std::uint64_t(l.root_first_cluster) + 1;
    const std::uint64_t fat_start = std::uint64_t(l.fat_offset) * l.bytes_per_sector;
    std::vector<std::byte> buf;
    for (std::uint64_t first = 0; first < entries;) {
        const std::uint64_t n = std::min<std::uint64_t>(entries - first, kChunkBytes / kFatEntrySize);
        buf.assign(n * kFatEntrySize, std::byte{0});
        for (std::uint64_t i = 0; i < n; ++i) {
            core::store_le32(buf, i * kFatEntrySize, entry(static_cast<std::uint32_t>(first + i)));
        }
        dev.write_at(fat_start + first * kFatEntrySize, buf);
        first += n;
    }
}

}  // namespace

std::vector<std::byte> build_boot_region(const Layout& layout, std::uint32_t serial) {
    const std::size_t bps = layout.bytes_per_sector;
    std::vector<std::byte> region(bps * kBootRegionSectors);
    std::span<std::byte> r(region);
    const MutableBootSpan boot = r.first<kBootSectorSize>();
    write_halt_boot_code(boot);
    encode_boot_sector(boot_sector_from_layout(layout, serial, layout.percent_in_use()), boot);
    for (std::uint32_t i = 1; i <= kExtendedBootSectors; ++i)
        encode_extended_boot_sector(r.subspan(i * bps, bps));
    // Sectors 9 (OEM parameters: ten null parameter structures) and 10 (reserved) stay zero.
    encode_checksum_sector(boot_checksum(r.first(11 * bps)), r.subspan(kChecksumSector * bps, bps));
    return region;
}

std::vector<std::byte> build_root_entries(const Layout& l, const std::string& label) {
    std::vector<std::byte> out;
    auto append = [&](auto encode) {
        out.resize(out.size() + kDirEntrySize);
        encode(std::span<std::byte>(out).last<kDirEntrySize>());
    };
    const VolumeLabelEntry e = volume_label_entry_from_utf8(label);
    append([&](MutableEntrySpan s) { encode_volume_label_entry(e, s); });
    append([&](MutableEntrySpan s) {
        encode_allocation_bitmap_entry({0, l.bitmap_first_cluster, l.bitmap_bytes}, s);
    });
    const std::vector<std::byte> table = upcase_table_bytes(recommended_upcase_table());
    append([&](MutableEntrySpan s) {
        encode_upcase_table_entry({table_checksum(table), l.upcase_first_cluster, table.size()}, s);
    });
    return out;
}

void write_allocation_bitmap(io::BlockDevice& dev, const Layout& l, std::uint64_t used) {
    // clusters 2 .. 2+used-1: bits 0 .. used-1
    const std::uint64_t start = l.cluster_offset(l.bitmap_first_cluster);
    std::vector<std::byte> buf;
    const std::uint64_t total_bytes = (used + 7) / 8;
    for (std::uint64_t first = 0; first < total_bytes;) {
        const std::uint64_t n = std::min<std::uint64_t>(total_bytes - first, kChunkBytes);
        buf.assign(n, std::byte{0xFF});
        const std::uint64_t end_bit = used - first * 8;  // bits left from this chunk on
        if (end_bit < n * 8) buf[n - 1] = static_cast<std::byte>((1u << (end_bit % 8)) - 1);
        dev.write_at(start + first, buf);
        first += n;
    }
}

void format_volume(io::BlockDevice& dev, const Layout& l, const FormatOptions& opt) {
    if (dev.size() < l.volume_bytes()) {
        throw Error(ErrorCode::usage, fmt::format("the device holds {} bytes, the exFAT volume needs {}",
                                                  dev.size(), l.volume_bytes()));
    }
    const std::vector<std::byte> root = build_root_entries(l, opt.label);  // refuses a bad label first
    const std::vector<std::byte> region = build_boot_region(l, opt.volume_serial_number);
    check_boot_sector(l, std::span<const std::byte>(region).first<kBootSectorSize>());
    if (!boot_region_checksum_ok(region, l.bytes_per_sector)) {
        throw Error(ErrorCode::unsupported,
                    "internal error: exFAT boot checksum does not verify; nothing written");
    }
    const std::vector<std::byte> table = upcase_table_bytes(recommended_upcase_table());
    if (table.size() != l.upcase_bytes) {
        throw Error(ErrorCode::unsupported, "internal error: up-case table size differs from the layout's");
    }

    if (!opt.device_is_zeroed) {
        dev.zero_range(0, std::uint64_t(l.cluster_heap_offset) * l.bytes_per_sector);
        const std::uint64_t sys_start = l.cluster_offset(l.bitmap_first_cluster);
        dev.zero_range(sys_start, l.cluster_offset(l.root_first_cluster) + l.cluster_bytes() - sys_start);
    }
    // Recommended write order [EXFAT §8.1]: FAT, bitmap, directory entries;
    // the boot regions last, so an interrupted run leaves no valid-looking volume.
    write_fat(dev, l);
    write_allocation_bitmap(dev, l, l.used_clusters());
    dev.write_at(l.cluster_offset(l.upcase_first_cluster), table);
    dev.write_at(l.cluster_offset(l.root_first_cluster), root);
    dev.write_at(std::uint64_t(kBackupBootRegionSector) * l.bytes_per_sector, region);
    dev.write_at(0, region);
}

}  // namespace fsimg::exfat
