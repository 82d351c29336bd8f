// Internals shared by layout.cpp and layout_explain.cpp: the geometry solver
// and the helpers that word refusals and explanations. Not a public header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fsimg/fat/layout.hpp"

namespace fsimg::fat::detail {

/// One solved geometry for a type, sector size, cluster size and volume.
struct Solved {
    FatType type = FatType::fat32;
    std::uint32_t bytes_per_sector = 512;
    std::uint32_t sectors_per_cluster = 1;
    std::uint64_t total_sectors = 0;
    std::uint32_t root_entry_count = 0;  ///< rounded to whole sectors; 0 on FAT32
    std::uint64_t root_dir_sectors = 0;
    std::int64_t clusters = -1;          ///< the largest count the volume holds; < 1: nothing fits
    std::uint64_t fat_sectors = 0;       ///< the smallest FAT covering clusters + 2 entries
    std::uint64_t reserved_sectors = 0;  ///< base (1 or 32) plus padding
    std::uint64_t first_data_sector = 0;
    bool aligned = false;            ///< alignment was applied (first_data_sector % spc == 0)
    bool alignment_dropped = false;  ///< aligned count fell out of range, unaligned used
    /// Sectors before the first cluster with the smallest FAT: when clusters < 1.
    std::uint64_t min_metadata_sectors = 0;

    bool valid() const noexcept {
        return clusters >= std::int64_t{min_clusters(type)} && clusters <= std::int64_t{max_clusters(type)};
    }
};

inline constexpr std::uint64_t kReservedFat12_16 = 1;  ///< [FATGEN]: much code hard-wires 1
inline constexpr std::uint64_t kReservedFat32 = 32;    ///< [FATGEN], mkfs.fat, Windows
inline constexpr std::uint32_t kNumFats = 2;

/// The raw solver: largest count, smallest FAT, with or without alignment.
Solved solve(FatType type, std::uint32_t bytes_per_sector, std::uint32_t sectors_per_cluster,
             std::uint64_t total_sectors, std::uint32_t root_entry_count, bool align) noexcept;

/// What plan_layout uses: aligned when the volume is big enough and the
/// aligned count is valid, else unaligned.
Solved solve_planned(FatType type, std::uint32_t bytes_per_sector, std::uint32_t cluster_bytes,
                     std::uint64_t total_sectors, std::uint32_t root_entry_count) noexcept;

/// Root entries rounded up so the root directory fills whole sectors.
std::uint32_t rounded_root_entries(std::uint32_t requested, std::uint32_t bytes_per_sector) noexcept;

/// The sector range [first, last] in which solve_planned is valid.
struct SectorRange {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
};
std::optional<SectorRange> valid_sector_range(FatType type, std::uint32_t bytes_per_sector,
                                              std::uint32_t cluster_bytes, std::uint32_t root_entry_count);

/// Layout from a valid Solved (derived fields filled).
Layout to_layout(const Solved& s, const LayoutRequest& request) noexcept;

/// Refusals (layout_explain.cpp). `s` is the invalid solve for the requested
/// type; cluster_given says whether -c chose its cluster size.
LayoutRefusal refuse_type_cluster(const LayoutRequest& request, const Solved& s, bool cluster_given);
/// No type is valid for the given cluster size at this size.
LayoutRefusal refuse_dead_zone(const LayoutRequest& request, std::uint32_t cluster_bytes);
/// No type and cluster size fits the volume (too small or too large).
LayoutRefusal refuse_no_type(const LayoutRequest& request);

/// "512 B", "4 KiB" (clusters), via core::format_size.
std::string cluster_text(std::uint32_t cluster_bytes);
/// The -c argument for a cluster size: "512", "4K".
std::string cluster_arg(std::uint32_t cluster_bytes);
/// The -t argument: "fat12", "fat16", "fat32".
std::string type_arg(FatType type);
/// "2,096,128 clusters" / "no clusters" for counts < 1.
std::string count_text(std::int64_t clusters);
/// "FAT16 needs 4,087..65,524 clusters".
std::string range_text(FatType type);
/// Why a Solved is not valid, e.g. "131,070 clusters > 65,524" (empty when valid).
std::string invalid_reason(const Solved& s);

}  // namespace fsimg::fat::detail
