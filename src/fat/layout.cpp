// FAT12/16/32 geometry: the solver, plan_layout, derive_layout and the
// default cluster tables. Refusal wording and `--explain` are in
// layout_explain.cpp.
#include "fsimg/fat/layout.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "fsimg/core/units.hpp"
#include "layout_internal.hpp"

namespace fsimg::fat {

namespace {
constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
}  // namespace

std::string_view to_string(FatType type) noexcept {
    switch (type) {
        case FatType::fat12:
            return "FAT12";
        case FatType::fat16:
            return "FAT16";
        case FatType::fat32:
            return "FAT32";
    }
    return "FAT?";
}

FatType type_for_cluster_count(std::uint32_t clusters) noexcept {
    // [FATGEN]: "< 4085 is FAT12, < 65525 is FAT16, else FAT32"; nothing else decides.
    if (clusters < 4085) return FatType::fat12;
    if (clusters < 65525) return FatType::fat16;
    return FatType::fat32;
}

void derive_layout(Layout& l) noexcept {
    // [FATGEN] §1.1: RootDirSectors = ceil(RootEntCnt*32 / BytsPerSec);
    // FirstDataSector = RsvdSecCnt + NumFATs*FATSz + RootDirSectors;
    // CountofClusters = floor((TotSec - FirstDataSector) / SecPerClus).
    l.root_dir_sectors = l.bytes_per_sector == 0
                             ? 0
                             : static_cast<std::uint32_t>(core::div_ceil(
                                   std::uint64_t{l.root_entry_count} * 32, l.bytes_per_sector));
    l.first_fat_sector = l.reserved_sectors;
    l.first_root_dir_sector = l.first_fat_sector + std::uint64_t{l.num_fats} * l.fat_size_sectors;
    l.first_data_sector = l.first_root_dir_sector + l.root_dir_sectors;
    std::uint64_t count = 0;
    if (l.sectors_per_cluster != 0 && l.total_sectors > l.first_data_sector) {
        count = (l.total_sectors - l.first_data_sector) / l.sectors_per_cluster;
    }
    l.cluster_count = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, 0xFFFFFFFF));
}

namespace detail {

std::uint32_t rounded_root_entries(std::uint32_t requested, std::uint32_t bytes_per_sector) noexcept {
    const std::uint64_t per_sector = bytes_per_sector / 32;
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(core::round_up(requested, per_sector), 0xFFFFFFFF));
}

// The FAT size / cluster count fixed point, solved exactly.
//
// For a FAT of F sectors let
//   e(F) = floor(F * BytsPerSec * 8 / bits) - 2   clusters the FAT can describe
//          (entries 0 and 1 are reserved) [FATGEN §1.4: FATSz*BytsPerSec*8/bits >= count + 2]
//   s(F) = RsvdBase + NumFATs*F + RootDirSectors   first sector after the metadata,
//          rounded up to a cluster multiple when aligning
//   g(F) = floor((TotSec - s(F)) / SecPerClus)     clusters the remaining space holds.
// e grows strictly with F, g never grows, and the count of a layout with FAT F
// is at most min(e(F), g(F)). The best count is therefore max over F of
// min(e, g): with F* the smallest F where e(F) >= g(F), it is g(F*) or e(F*-1),
// whichever is larger. Any space between the FAT the count needs and the data
// region becomes reserved-sector padding, so the BPB derives exactly this
// count. fatgen103's closed formula may over-allocate the FAT by a few
// sectors; mkfs.fat first estimates the count and then recounts; both land
// within a cluster of this.
Solved solve(FatType type, std::uint32_t bps, std::uint32_t spc, std::uint64_t total,
             std::uint32_t root_entries, bool align) noexcept {
    Solved out;
    out.type = type;
    out.bytes_per_sector = bps;
    out.sectors_per_cluster = spc;
    out.total_sectors = total;
    out.aligned = align;
    const bool fat32 = type == FatType::fat32;
    out.root_entry_count = fat32 ? 0 : root_entries;
    out.root_dir_sectors = fat32 ? 0 : core::div_ceil(std::uint64_t{root_entries} * 32, bps);
    const std::uint64_t base = fat32 ? kReservedFat32 : kReservedFat12_16;
    const std::uint64_t bits = fat_entry_bits(type);

    auto start = [&](std::uint64_t fat) {
        const std::uint64_t m = base + std::uint64_t{kNumFats} * fat + out.root_dir_sectors;
        return align ? core::round_up(m, spc) : m;
    };
    auto g = [&](std::uint64_t fat) -> std::int64_t {
        const std::uint64_t s = start(fat);
        return s > total ? -1 : static_cast<std::int64_t>((total - s) / spc);
    };
    auto e = [&](std::uint64_t fat) -> std::int64_t {
        return static_cast<std::int64_t>(fat * bps * 8 / bits) - 2;
    };
    out.min_metadata_sectors = start(1);
    if (total == 0) return out;

    // Smallest F with e(F) >= g(F); at F = total, s(F) > total so g = -1.
    std::uint64_t lo = 1;
    std::uint64_t hi = total;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (e(mid) >= g(mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    std::uint64_t fat = lo;
    std::int64_t count = g(fat);
    if (fat > 1 && e(fat - 1) >= count) {
        --fat;
        count = e(fat);  // < g(fat): the space left over becomes padding
    }
    out.clusters = count;
    out.fat_sectors = fat;
    if (count < 1) return out;

    const auto t = static_cast<std::int64_t>(total);
    const auto c = static_cast<std::int64_t>(spc);
    const auto meta = static_cast<std::int64_t>(base + std::uint64_t{kNumFats} * fat + out.root_dir_sectors);
    std::int64_t first_data = 0;
    if (align) {
        // The one cluster multiple in (T - (count+1)*spc, T - count*spc].
        first_data = (t - count * c) / c * c;
    } else {
        // The smallest start that still derives `count`.
        first_data = std::max(meta, t - (count + 1) * c + 1);
    }
    out.first_data_sector = static_cast<std::uint64_t>(first_data);
    out.reserved_sectors =
        static_cast<std::uint64_t>(first_data) - std::uint64_t{kNumFats} * fat - out.root_dir_sectors;
    return out;
}

Solved solve_planned(FatType type, std::uint32_t bps, std::uint32_t cluster_bytes, std::uint64_t total,
                     std::uint32_t root_entries) noexcept {
    const std::uint32_t spc = cluster_bytes / bps;
    if (total > kNoAlignMaxSectors && spc > 1) {
        Solved a = solve(type, bps, spc, total, root_entries, true);
        if (a.valid()) return a;
        Solved u = solve(type, bps, spc, total, root_entries, false);
        if (u.valid()) {
            u.alignment_dropped = true;
            return u;
        }
        return a.clusters > std::int64_t{max_clusters(type)} ? a : u;
    }
    return solve(type, bps, spc, total, root_entries, false);
}

std::optional<SectorRange> valid_sector_range(FatType type, std::uint32_t bps, std::uint32_t cluster_bytes,
                                              std::uint32_t root_entries) {
    const std::uint32_t spc = cluster_bytes / bps;
    auto count = [&](std::uint64_t total, bool align) {
        return solve(type, bps, spc, total, root_entries, align).clusters;
    };
    // Both counts grow monotonically with the volume (max-min of functions that
    // grow with it), so the bounds are found by bisection.
    auto first_where = [&](auto pred) -> std::optional<std::uint64_t> {  // smallest T with pred(T)
        std::uint64_t lo = 1;
        std::uint64_t hi = kMaxTotalSectors;
        if (!pred(hi)) return std::nullopt;
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (pred(mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    };
    const auto lo_count = std::int64_t{min_clusters(type)};
    const auto hi_count = std::int64_t{max_clusters(type)};
    // Unaligned reaches the minimum first (alignment only costs clusters), and
    // plan_layout falls back to it, so it gives the smallest size.
    const auto first = first_where([&](std::uint64_t t) { return count(t, false) >= lo_count; });
    if (!first || count(*first, false) > hi_count) return std::nullopt;
    // Aligned stays within the maximum longest where alignment applies.
    std::uint64_t last = kMaxTotalSectors;
    const auto over_u = first_where([&](std::uint64_t t) { return count(t, false) > hi_count; });
    const std::uint64_t last_u = over_u ? *over_u - 1 : kMaxTotalSectors;
    last = last_u;
    if (spc > 1) {
        const auto over_a = first_where([&](std::uint64_t t) { return count(t, true) > hi_count; });
        const std::uint64_t last_a = over_a ? *over_a - 1 : kMaxTotalSectors;
        // Alignment starts above kNoAlignMaxSectors; below it the unaligned
        // bound holds (and an unaligned maximum under that line with an
        // aligned one above it cannot occur: 4,084 clusters of 2+ sectors
        // already need more than 8,192 sectors).
        if (last_a > kNoAlignMaxSectors && last_u > kNoAlignMaxSectors) last = std::max(last_u, last_a);
    }
    if (last < *first) return std::nullopt;
    return SectorRange{*first, last};
}

Layout to_layout(const Solved& s, const LayoutRequest& request) noexcept {
    Layout l;
    const bool fat32 = s.type == FatType::fat32;
    l.type = s.type;
    l.bytes_per_sector = s.bytes_per_sector;
    l.sectors_per_cluster = s.sectors_per_cluster;
    l.reserved_sectors = static_cast<std::uint32_t>(s.reserved_sectors);
    l.num_fats = kNumFats;
    l.root_entry_count = s.root_entry_count;
    l.fat_size_sectors = static_cast<std::uint32_t>(s.fat_sectors);
    l.total_sectors = s.total_sectors;
    l.hidden_sectors = request.hidden_sectors;
    l.media = request.media;
    // mkfs.fat's values for non-floppy media: "more or less meaningless" below
    // 512 MiB, 63/255 (LBA-only) above [DOSFSTOOLS establish_params].
    const bool small = s.total_sectors * s.bytes_per_sector < 512 * kMiB;
    l.sectors_per_track = small ? 32 : 63;
    l.num_heads = small ? 64 : 255;
    l.root_cluster = fat32 ? 2 : 0;
    l.fsinfo_sector = fat32 ? 1 : 0;
    l.backup_boot_sector = fat32 ? 6 : 0;
    derive_layout(l);
    return l;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Default cluster sizes (formats.md §1.12).

std::optional<std::uint32_t> windows_default_cluster_bytes(FatType type, std::uint64_t v) noexcept {
    // [KB140365], Windows 2000 and later. Upper bounds inclusive.
    struct Row {
        std::uint64_t up_to;
        std::uint32_t cluster;
    };
    static constexpr std::array<Row, 8> kFat16 = {{{32 * kMiB, 512},
                                                   {64 * kMiB, 1024},
                                                   {128 * kMiB, 2048},
                                                   {256 * kMiB, 4096},
                                                   {512 * kMiB, 8192},
                                                   {1 * kGiB, 16384},
                                                   {2 * kGiB, 32768},
                                                   {4 * kGiB, 65536}}};  // 64 KiB: NT only
    static constexpr std::array<Row, 6> kFat32 = {{{64 * kMiB, 512},
                                                   {128 * kMiB, 1024},
                                                   {256 * kMiB, 2048},
                                                   {8 * kGiB, 4096},
                                                   {16 * kGiB, 8192},
                                                   {32 * kGiB, 16384}}};
    switch (type) {
        case FatType::fat12:
            return std::nullopt;  // the table has no FAT12 column
        case FatType::fat16:
            if (v < 8 * kMiB) return std::nullopt;
            for (const Row& r : kFat16) {
                if (v <= r.up_to) return r.cluster;
            }
            return std::nullopt;
        case FatType::fat32:
            if (v <= 32 * kMiB) return std::nullopt;
            for (const Row& r : kFat32) {
                if (v <= r.up_to) return r.cluster;
            }
            return std::nullopt;  // Windows' format refuses FAT32 over 32 GB
    }
    return std::nullopt;
}

namespace {

// mkfs.fat 4.2 establish_params(): "try to do the same as M$'s format
// command" with sz_mb = size in MiB rounded down [DOSFSTOOLS].
std::uint32_t mkfs_fat32_cluster(std::uint64_t v) noexcept {
    const std::uint64_t mb = v / kMiB;
    if (mb > 32 * 1024) return 32768;
    if (mb > 16 * 1024) return 16384;
    if (mb > 8 * 1024) return 8192;
    if (mb > 260) return 4096;
    return 512;
}

// mkfs.fat's FAT12 loop: from 4 sectors (2 KiB) doubling until FAT12 fits.
std::uint32_t mkfs_fat12_cluster(std::uint64_t v) noexcept {
    const std::uint64_t total = std::min(v / 512, kMaxTotalSectors);
    for (std::uint32_t c = 2048; c <= kMaxClusterBytes; c *= 2) {
        if (detail::solve_planned(FatType::fat12, 512, c, total, 512).valid()) return c;
    }
    return 2048;
}

}  // namespace

TypeAndCluster mkfs_fat_default(std::uint64_t v) noexcept {
    // Floppy sizes get floppy BPBs (size / 1024 exactly) [DOSFSTOOLS, EXP].
    switch (v / kKiB) {
        case 360:
        case 720:
        case 2880:
            return {FatType::fat12, 1024};
        case 1200:
        case 1440:
            return {FatType::fat12, 512};
        default:
            break;
    }
    if (v >= 512 * kMiB) return {FatType::fat32, mkfs_fat32_cluster(v)};
    // From 4 sectors per cluster, doubling; FAT16 when its count is valid,
    // else FAT12 when its count is, else the next cluster size.
    const std::uint64_t total = v / 512;
    for (std::uint32_t c = 2048; c <= kMaxClusterBytes; c *= 2) {
        if (detail::solve_planned(FatType::fat16, 512, c, total, 512).valid()) return {FatType::fat16, c};
        if (detail::solve_planned(FatType::fat12, 512, c, total, 512).valid()) return {FatType::fat12, c};
    }
    return {FatType::fat12, 2048};
}

TypeAndCluster default_cluster_bytes(std::optional<FatType> type, std::uint64_t v) noexcept {
    if (!type) {
        if (v >= 512 * kMiB)
            return default_cluster_bytes(FatType::fat32, v);  // mkfs.fat and Windows' cut-over
        if (auto w = windows_default_cluster_bytes(FatType::fat16, v)) return {FatType::fat16, *w};
        return mkfs_fat_default(v);
    }
    switch (*type) {
        case FatType::fat12:
            return {FatType::fat12, mkfs_fat12_cluster(v)};
        case FatType::fat16:
            if (auto w = windows_default_cluster_bytes(FatType::fat16, v)) return {FatType::fat16, *w};
            return {FatType::fat16, v < 8 * kMiB ? 512u : 65536u};
        case FatType::fat32:
            if (auto w = windows_default_cluster_bytes(FatType::fat32, v)) return {FatType::fat32, *w};
            return {FatType::fat32, mkfs_fat32_cluster(v)};
    }
    return {FatType::fat32, 4096};
}

// ---------------------------------------------------------------------------
// plan_layout

namespace {

using detail::Solved;

constexpr std::array<FatType, 3> kAllTypes = {FatType::fat12, FatType::fat16, FatType::fat32};

// The cluster size nearest to `c0` that gives `type` a valid count: larger
// when c0 gives too many clusters, smaller when too few.
std::optional<Solved> adjust_cluster(FatType type, std::uint32_t c0, const LayoutRequest& r,
                                     std::uint64_t total, std::uint32_t root) {
    const std::uint32_t bps = r.bytes_per_sector;
    c0 = std::clamp(c0, bps, kMaxClusterBytes);
    Solved s = detail::solve_planned(type, bps, c0, total, root);
    if (s.valid()) return s;
    const bool too_many = s.clusters > std::int64_t{max_clusters(type)};
    for (std::uint32_t c = c0;;) {
        if (too_many) {
            if (c >= kMaxClusterBytes) break;
            c *= 2;
        } else {
            if (c <= bps) break;
            c /= 2;
        }
        Solved t = detail::solve_planned(type, bps, c, total, root);
        if (t.valid()) return t;
    }
    return std::nullopt;
}

}  // namespace

std::variant<Layout, LayoutRefusal> plan_layout(const LayoutRequest& r) {
    using detail::solve_planned;
    const std::uint32_t bps = r.bytes_per_sector;
    if (bps != 512 && bps != 1024 && bps != 2048 && bps != 4096) {
        return LayoutRefusal{
            fmt::format("a sector size of {} bytes is not one of 512, 1024, 2048, 4096 (BPB_BytsPerSec)",
                        bps),
            {"--sector-size 512", "--sector-size 4096"}};
    }
    if (r.media != 0xF0 && r.media < 0xF8) {
        return LayoutRefusal{
            fmt::format("media byte 0x{:02X} is not 0xF0 or 0xF8..0xFF (BPB_Media)", r.media), {}};
    }
    if (r.hidden_sectors > 0xFFFFFFFF) {
        return LayoutRefusal{
            fmt::format("the volume starts at sector {}, beyond what BPB_HiddSec (32 bits) can hold",
                        core::format_count(r.hidden_sectors)),
            {"place the partition below 2^32 sectors"}};
    }
    const std::uint64_t total = r.volume_bytes / bps;
    if (total > kMaxTotalSectors) {
        std::vector<std::string> sugg;
        const bool fits_4k = bps < 4096 && r.volume_bytes / 4096 <= kMaxTotalSectors;
        if (r.type && *r.type != FatType::fat32) {
            // FAT12/16 end far below the sector limit (65,524 clusters of at most 64 KiB):
            // a smaller volume of this type is no answer for a volume this large.
            if (fits_4k) sugg.push_back("-t fat32 --sector-size 4096");
            sugg.push_back("-t exfat");
            return LayoutRefusal{
                fmt::format(
                    "the {} volume ({} bytes) has {} sectors of {} bytes; BPB_TotSec32 holds at most {} "
                    "sectors, and {} holds at most {} clusters",
                    core::format_size(r.volume_bytes), core::format_count(r.volume_bytes),
                    core::format_count(total), bps, core::format_count(kMaxTotalSectors), to_string(*r.type),
                    core::format_count(max_clusters(*r.type))),
                std::move(sugg)};
        }
        if (fits_4k) sugg.push_back("--sector-size 4096");
        const std::uint64_t max_bytes = kMaxTotalSectors * bps;
        sugg.push_back(fmt::format(
            "a volume of at most {} bytes, one sector short of {} (-s {})", core::format_count(max_bytes),
            core::format_size(max_bytes + bps),
            max_bytes % 1024 == 0 ? fmt::format("{}K", max_bytes / 1024) : fmt::format("{}", max_bytes)));
        return LayoutRefusal{
            fmt::format(
                "the {} volume ({} bytes) has {} sectors of {} bytes; BPB_TotSec32 holds at most {} sectors",
                core::format_size(r.volume_bytes), core::format_count(r.volume_bytes),
                core::format_count(total), bps, core::format_count(kMaxTotalSectors)),
            std::move(sugg)};
    }
    const std::uint32_t root = detail::rounded_root_entries(r.root_entry_count, bps);
    if (r.type != FatType::fat32 && (r.root_entry_count == 0 || root > 0xFFFF)) {
        return LayoutRefusal{
            fmt::format(
                "{} root directory entries: BPB_RootEntCnt must be 1..{} (whole sectors of {} entries)",
                r.root_entry_count, 0xFFFF / (bps / 32) * (bps / 32), bps / 32),
            {"the default of 512 entries"}};
    }

    if (r.cluster_bytes) {
        const std::uint32_t c = *r.cluster_bytes;
        if (!core::is_power_of_two(c)) {
            return LayoutRefusal{fmt::format("cluster size {} bytes is not a power of two", c),
                                 {"-c 4K", "no -c: the default for the volume size"}};
        }
        if (c < bps) {
            return LayoutRefusal{
                fmt::format("cluster size {} bytes is smaller than one {}-byte sector", c, bps),
                {fmt::format("-c {}", detail::cluster_arg(bps))}};
        }
        if (c > kMaxClusterBytes) {
            return LayoutRefusal{
                fmt::format(
                    "cluster size {} is larger than 64 KiB: BPB_SecPerClus could say {} sectors, but Windows "
                    "and Linux FAT drivers do not accept clusters over 64 KiB",
                    core::format_size(c), c / bps),
                {"-c 64K", "-t exfat (clusters up to 32 MiB)"}};
        }
        if (r.type) {
            Solved s = solve_planned(*r.type, bps, c, total, root);
            if (s.valid()) return detail::to_layout(s, r);
            return detail::refuse_type_cluster(r, s, true);
        }
        // The type that makes this cluster size valid (at most one does: a
        // bigger FAT entry means a bigger FAT and so fewer clusters).
        for (FatType t : {FatType::fat16, FatType::fat32, FatType::fat12}) {
            Solved s = solve_planned(t, bps, c, total, root);
            if (s.valid()) return detail::to_layout(s, r);
        }
        return detail::refuse_dead_zone(r, c);
    }

    if (r.type) {
        const TypeAndCluster d = default_cluster_bytes(*r.type, r.volume_bytes);
        if (auto s = adjust_cluster(*r.type, d.cluster_bytes, r, total, root))
            return detail::to_layout(*s, r);
        const std::uint32_t c0 = std::clamp(d.cluster_bytes, bps, kMaxClusterBytes);
        return detail::refuse_type_cluster(r, solve_planned(*r.type, bps, c0, total, root), false);
    }
    const TypeAndCluster d = default_cluster_bytes(std::nullopt, r.volume_bytes);
    if (auto s = adjust_cluster(d.type, d.cluster_bytes, r, total, root)) return detail::to_layout(*s, r);
    for (FatType t : kAllTypes) {
        if (t == d.type) continue;
        if (auto s =
                adjust_cluster(t, default_cluster_bytes(t, r.volume_bytes).cluster_bytes, r, total, root)) {
            return detail::to_layout(*s, r);
        }
    }
    return detail::refuse_no_type(r);
}

std::optional<VolumeSizeRange> valid_volume_sizes(FatType type, std::uint32_t cluster_bytes,
                                                  std::uint32_t bytes_per_sector,
                                                  std::uint32_t root_entry_count) {
    const std::uint32_t bps = bytes_per_sector;
    if (bps != 512 && bps != 1024 && bps != 2048 && bps != 4096) return std::nullopt;
    if (!core::is_power_of_two(cluster_bytes) || cluster_bytes < bps || cluster_bytes > kMaxClusterBytes) {
        return std::nullopt;
    }
    const std::uint32_t root = detail::rounded_root_entries(root_entry_count, bps);
    if (type != FatType::fat32 && (root_entry_count == 0 || root > 0xFFFF)) return std::nullopt;
    auto range = detail::valid_sector_range(type, bps, cluster_bytes, root);
    if (!range) return std::nullopt;
    return VolumeSizeRange{range->first * bps, range->last * bps};
}

}  // namespace fsimg::fat
