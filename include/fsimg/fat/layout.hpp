// FAT12/16/32 geometry: volume size + cluster size + options -> where every
// region goes. Pure: no I/O, no clock. Used by mkfs (format), fsck (what a
// boot sector should say), dump and slack.
//
// Facts: docs/formats.md §1.1-1.4 (layout, type determination and
// the driver traps), §1.12 (default cluster tables of Windows and mkfs.fat).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fsimg::fat {

enum class FatType : std::uint8_t { fat12, fat16, fat32 };

/// "FAT12", "FAT16", "FAT32".
std::string_view to_string(FatType type) noexcept;
/// Bits per FAT entry: 12, 16, 32.
constexpr unsigned fat_entry_bits(FatType type) noexcept {
    return type == FatType::fat12 ? 12 : type == FatType::fat16 ? 16 : 32;
}

/// Cluster-count limits. The spec type rule is count < 4085 -> FAT12,
/// < 65525 -> FAT16 [FATGEN]; Windows fastfat takes FAT12 below 4087 and
/// Windows format makes FAT32 only from 65527 clusters [FASTFAT, MS-FORMAT],
/// so we only create counts every driver agrees on.
inline constexpr std::uint32_t kFat12MaxClusters = 4084;  ///< spec: < 4085
inline constexpr std::uint32_t kFat16MinClusters =
    4087;  ///< Windows: FAT12 below 4087 (mkfs.fat MIN_CLUST_16)
inline constexpr std::uint32_t kFat16MaxClusters = 65524;  ///< spec: < 65525
inline constexpr std::uint32_t kFat32MinClusters = 65527;  ///< Windows format / W2K docs
inline constexpr std::uint32_t kFat32MaxClusters =
    0x0FFFFFF5;  ///< 0x0FFFFFF7 (bad) must stay unallocatable: max cluster number 0x0FFFFFF6

/// The cluster counts we create for a type: FAT12 1..4084, FAT16 4087..65524,
/// FAT32 65527..kFat32MaxClusters. 4085/4086 and 65525/65526 are never made.
constexpr std::uint32_t min_clusters(FatType type) noexcept {
    return type == FatType::fat12 ? 1 : type == FatType::fat16 ? kFat16MinClusters : kFat32MinClusters;
}
constexpr std::uint32_t max_clusters(FatType type) noexcept {
    return type == FatType::fat12   ? kFat12MaxClusters
           : type == FatType::fat16 ? kFat16MaxClusters
                                    : kFat32MaxClusters;
}

/// Largest cluster we make: 64 KiB. BPB_SecPerClus may reach 128 (512 KiB with
/// 4 KiB sectors) but fatgen103 caps clusters at 32 KiB and only NT-family
/// drivers accept 64 KiB [FATGEN §1.2 of formats.md]; larger is refused.
inline constexpr std::uint32_t kMaxClusterBytes = 65536;
/// Volumes of at most this many sectors are not aligned (mkfs.fat does the
/// same: "tiny filesystem", floppy sizes) [DOSFSTOOLS].
inline constexpr std::uint64_t kNoAlignMaxSectors = 8192;
/// BPB_TotSec32 is 32 bits: the largest volume is 2^32-1 sectors.
inline constexpr std::uint64_t kMaxTotalSectors = 0xFFFFFFFF;

/// What the user asked for. Every size is in bytes unless named otherwise.
struct LayoutRequest {
    std::uint64_t volume_bytes = 0;        ///< bytes available to the filesystem (partition or whole image)
    std::uint32_t bytes_per_sector = 512;  ///< 512, 1024, 2048 or 4096
    std::optional<std::uint32_t> cluster_bytes;  ///< -c; nullopt = default for the size
    std::optional<FatType> type;                 ///< -t fat12|16|32; nullopt = "fat": choose
    std::uint64_t hidden_sectors = 0;            ///< sectors before the volume (partition start), BPB_HiddSec
    std::uint8_t media = 0xF8;                   ///< BPB_Media
    std::uint32_t root_entry_count =
        512;  ///< FAT12/16 BPB_RootEntCnt requested (rounded up to fill whole sectors)
};

/// The complete geometry of one FAT volume. Sector counts are in logical
/// sectors of bytes_per_sector, relative to the volume's first sector.
struct Layout {
    FatType type = FatType::fat32;
    std::uint32_t bytes_per_sector = 512;   ///< BPB_BytsPerSec
    std::uint32_t sectors_per_cluster = 8;  ///< BPB_SecPerClus
    std::uint32_t reserved_sectors = 32;    ///< BPB_RsvdSecCnt (includes alignment padding)
    std::uint32_t num_fats = 2;             ///< BPB_NumFATs
    std::uint32_t root_entry_count = 0;     ///< BPB_RootEntCnt (0 on FAT32)
    std::uint32_t fat_size_sectors = 0;     ///< BPB_FATSz16 or BPB_FATSz32
    std::uint64_t total_sectors = 0;        ///< BPB_TotSec16/32: the sectors the filesystem claims
    std::uint64_t hidden_sectors = 0;       ///< BPB_HiddSec
    std::uint8_t media = 0xF8;              ///< BPB_Media
    std::uint16_t sectors_per_track = 63;   ///< BPB_SecPerTrk (informational)
    std::uint16_t num_heads = 255;          ///< BPB_NumHeads (informational)
    std::uint32_t root_cluster = 2;         ///< BPB_RootClus (FAT32; plan_layout sets 0 on FAT12/16)
    std::uint16_t fsinfo_sector = 1;        ///< BPB_FSInfo (FAT32; plan_layout sets 0 on FAT12/16)
    std::uint16_t backup_boot_sector = 6;   ///< BPB_BkBootSec (FAT32; plan_layout sets 0 on FAT12/16)

    // Derived, filled by plan_layout/derive_layout:
    std::uint32_t root_dir_sectors = 0;       ///< ceil(RootEntCnt*32 / BytsPerSec)
    std::uint64_t first_fat_sector = 0;       ///< = reserved_sectors
    std::uint64_t first_root_dir_sector = 0;  ///< FAT12/16: after the FATs
    std::uint64_t first_data_sector = 0;      ///< cluster 2 starts here
    std::uint32_t cluster_count = 0;          ///< CountofClusters: data clusters, numbered 2..cluster_count+1

    std::uint32_t cluster_bytes() const noexcept { return bytes_per_sector * sectors_per_cluster; }
    /// Byte offset (within the volume) of the first byte of cluster n (2 <= n <= cluster_count+1).
    std::uint64_t cluster_offset(std::uint32_t n) const noexcept {
        return (first_data_sector + std::uint64_t(n - 2) * sectors_per_cluster) * bytes_per_sector;
    }
    /// Bytes of one FAT copy.
    std::uint64_t fat_bytes() const noexcept { return std::uint64_t(fat_size_sectors) * bytes_per_sector; }
    /// Where FAT copy `copy` (0: FAT 1) holds entries [first, first + count)
    /// (count >= 1): its bytes from the entry of even number at or below
    /// `first` (whose FAT12 entries start on a byte), so that get_fat_entry
    /// and set_fat_entry (fat/structs.hpp) index the window with
    /// n - window_first; clipped to the FAT's bytes [FATGEN "FAT"].
    struct FatWindow {
        std::uint64_t offset = 0;  ///< volume byte offset of the window
        std::uint64_t bytes = 0;
        std::uint32_t window_first = 0;  ///< the entry at its first byte
    };
    FatWindow fat_window(unsigned copy, std::uint32_t first, std::uint32_t count) const noexcept {
        const auto byte_of = [this](std::uint64_t n) {
            return type == FatType::fat12 ? n + n / 2 : type == FatType::fat16 ? 2 * n : 4 * n;
        };
        const std::uint32_t even = first & ~1u;
        const std::uint64_t from = byte_of(even);
        const std::uint64_t to = std::min<std::uint64_t>(
            byte_of(std::uint64_t(first) + count - 1) + (type == FatType::fat32 ? 4 : 2), fat_bytes());
        return {(first_fat_sector + std::uint64_t(copy) * fat_size_sectors) * bytes_per_sector + from,
                to - from, even};
    }
    /// Bytes of the volume (total_sectors * bytes_per_sector).
    std::uint64_t volume_bytes() const noexcept { return total_sectors * bytes_per_sector; }
    friend bool operator==(const Layout&, const Layout&) = default;
};

/// Why no layout exists for a request, and what would work instead
/// ("-c 2K", "-t fat32", "a volume of at least 33 MiB").
struct LayoutRefusal {
    std::string reason;
    std::vector<std::string> suggestions;
};

/// Computes the geometry for a request. Rules:
///  - bytes_per_sector 512, 1024, 2048 or 4096; media 0xF0 or 0xF8..0xFF;
///    total_sectors = volume_bytes / bytes_per_sector (not rounded to a track
///    like mkfs.fat), at most kMaxTotalSectors; hidden_sectors fits 32 bits.
///  - cluster size: power of two, one sector .. 64 KiB (kMaxClusterBytes; with
///    4 KiB sectors BPB_SecPerClus could say up to 512 KiB, refused because
///    drivers do not accept it); default per default_cluster_bytes(), raised
///    to one sector, and moved to the nearest cluster size that gives a valid
///    count when the table's value does not (e.g. FAT16 on exactly 2 GiB).
///  - type nullopt: with cluster_bytes, the type that makes that cluster size
///    valid; without, default_cluster_bytes(nullopt, size), then other types.
///  - explicit type with a cluster count outside [min_clusters, max_clusters]
///    is refused naming the cluster sizes (or the type, or the nearest volume
///    sizes) that would work. Sizes where no type fits the given cluster size
///    (dead zones) are refused with the nearest valid volume sizes.
///  - reserved sectors 1 (FAT12/16) or 32 (FAT32) plus padding; two FATs;
///    FAT12/16 root entries rounded up to fill whole sectors.
///  - the cluster count is the largest the volume can hold; the FAT is the
///    smallest that covers cluster_count + 2 entries (exact, never short);
///    space a smaller FAT frees goes to reserved-sector padding so the BPB
///    derives exactly this count.
///  - first_data_sector is a multiple of sectors_per_cluster (volume-relative,
///    like mkfs.fat), padded in the reserved region, when the volume has more
///    than kNoAlignMaxSectors sectors and the aligned count is still valid for
///    the type; otherwise (tiny volume, or alignment would push the count
///    below the type's minimum) the data region is not aligned.
///  - BPB_SecPerTrk/NumHeads: 32/64 below 512 MiB, else 63/255 (mkfs.fat's
///    values for non-floppy media; informational only).
///  - FAT12/16: root_cluster, fsinfo_sector, backup_boot_sector are 0.
/// Never throws except std::bad_alloc.
std::variant<Layout, LayoutRefusal> plan_layout(const LayoutRequest& request);

/// The volume sizes, in bytes (multiples of bytes_per_sector), for which
/// plan_layout accepts `type` with `cluster_bytes` clusters (and the given
/// root entry count): every size in [min_bytes, max_bytes] is accepted, none
/// outside. nullopt when no size is (or the parameters are invalid).
/// Useful to build exactly-at-threshold test volumes.
struct VolumeSizeRange {
    std::uint64_t min_bytes = 0;
    std::uint64_t max_bytes = 0;
};
std::optional<VolumeSizeRange> valid_volume_sizes(FatType type, std::uint32_t cluster_bytes,
                                                  std::uint32_t bytes_per_sector = 512,
                                                  std::uint32_t root_entry_count = 512);

/// Fills the derived fields of a Layout from its BPB fields (the same
/// derivation the reader uses): root_dir_sectors, first_*_sector,
/// cluster_count. Does not judge the values; callers validate first.
void derive_layout(Layout& layout) noexcept;

/// The FAT type the spec assigns to a cluster count (4085/65525 rule).
FatType type_for_cluster_count(std::uint32_t clusters) noexcept;

/// Windows default cluster size for the type and volume size [KB140365],
/// or nullopt where Windows refuses (FAT16 > 4 GiB, FAT32 > 32 GiB, tiny volumes).
/// Rows are (lower, upper] in binary MB/GB: FAT16 8 MiB..32 MiB 512 B (8 MiB
/// included), ..64M 1K, ..128M 2K, ..256M 4K, ..512M 8K, ..1G 16K, ..2G 32K,
/// ..4G 64K; FAT32 >32M..64M 512 B, ..128M 1K, ..256M 2K, ..8G 4K, ..16G 8K,
/// ..32G 16K. FAT12 has no column: always nullopt.
std::optional<std::uint32_t> windows_default_cluster_bytes(FatType type, std::uint64_t volume_bytes) noexcept;
/// mkfs.fat 4.2's choice for the size: type and cluster bytes [DOSFSTOOLS, EXP],
/// for 512-byte sectors (its tables count sectors, so with larger sectors its
/// choices scale with the sector size). Floppy sizes 360K/720K/2880K -> FAT12
/// 1 KiB, 1200K/1440K -> FAT12 512 B; >= 512 MiB -> FAT32 with 512 B up to
/// 260 MiB, 4K up to 8 GiB, 8K to 16 GiB, 16K to 32 GiB, 32K beyond (MiB,
/// rounded down); otherwise from 2 KiB doubling until FAT16 or FAT12 has a
/// valid count (counted with our geometry, which can differ from mkfs.fat's
/// by a cluster at the edges).
struct TypeAndCluster {
    FatType type;
    std::uint32_t cluster_bytes;
    friend bool operator==(const TypeAndCluster&, const TypeAndCluster&) = default;
};
TypeAndCluster mkfs_fat_default(std::uint64_t volume_bytes) noexcept;
/// Our default: Windows' table where Windows formats, mkfs.fat's beyond it
/// (FAT32 over 32 GiB, FAT12, FAT16 below 8 MiB: 512 B). `type` nullopt =
/// choose the type too: FAT32 from 512 MiB, else FAT16 per Windows' table
/// from 8 MiB, else mkfs_fat_default(). Sizes are for 512-byte sectors;
/// plan_layout raises them to one sector.
TypeAndCluster default_cluster_bytes(std::optional<FatType> type, std::uint64_t volume_bytes) noexcept;

/// A human explanation of a layout for `mkfs --explain`: lines of text.
std::vector<std::string> explain_layout(const LayoutRequest& request, const Layout& layout);

}  // namespace fsimg::fat
