// exFAT geometry: volume size + sector size + cluster size + alignment ->
// where every region goes. Pure: no I/O, no clock. Used by mkfs (format),
// and meant for fsck (what a boot sector should say), dump and slack.
//
// Facts: docs/formats.md §2.1-2.2 (regions and field ranges,
// [EXFAT §2, §3.1.5-3.1.10]), §2.10 (limits), §2.11 (default cluster sizes
// of Windows and mkfs.exfat, alignment). Our defaults: docs/exfat-defaults.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fsimg::exfat {

/// 2^32 - 11: the most clusters a FAT can describe [EXFAT §3.1.9].
inline constexpr std::uint32_t kMaxClusterCount = 0xFFFFFFF5;
/// 2^24 - 2: the spec's recommended maximum [EXFAT §3.1.9] (informational).
inline constexpr std::uint32_t kRecommendedMaxClusterCount = 0x00FFFFFE;
/// Largest cluster: 32 MiB (SectorsPerClusterShift <= 25 - BytesPerSectorShift) [EXFAT §3.1.15].
inline constexpr std::uint32_t kMaxClusterBytes = 32u << 20;
/// Smallest volume: 2^20 bytes [EXFAT §3.1.5].
inline constexpr std::uint64_t kMinVolumeBytes = 1u << 20;
/// Sectors of the main and backup boot regions; the FAT starts at or after this [EXFAT §3.1.6].
inline constexpr std::uint32_t kMinFatOffset = 24;
/// Default alignment of the FAT and the cluster heap: 1 MiB, like mkfs.exfat
/// and Windows (formats.md §2.11, §4.2).
inline constexpr std::uint32_t kDefaultAlignBytes = 1u << 20;
/// Volumes smaller than this get, by default, the cluster size as alignment
/// instead of 1 MiB (which would cost a quarter or more of them; mkfs.exfat
/// even fails at 2 MiB and below). Windows' table starts at 7 MB.
inline constexpr std::uint64_t kSmallVolumeBytes = 8u << 20;
/// Largest --align accepted: 256 MiB (the SD Association's largest boundary
/// unit is 64 MiB; more is surely a typo).
inline constexpr std::uint32_t kMaxAlignBytes = 256u << 20;
/// Bytes of the recommended up-case table in compressed form [EXFAT §7.2.5].
inline constexpr std::uint32_t kUpcaseTableBytes = 5836;
/// Largest up-case table a reader accepts: every one of the 65,536 UTF-16
/// code units uncompressed, 2 bytes each [EXFAT §7.2].
inline constexpr std::uint32_t kMaxUpcaseBytes = 128u << 10;

/// What the user asked for. Sizes are in bytes unless named otherwise.
struct LayoutRequest {
    std::uint64_t volume_bytes =
        0;  ///< bytes available (partition or whole image); the tail that is not a whole sector is dropped
    std::uint32_t bytes_per_sector = 512;        ///< 512, 1024, 2048 or 4096 [EXFAT §3.1.14]
    std::optional<std::uint32_t> cluster_bytes;  ///< -c; nullopt = default_cluster_bytes() for the size
    std::optional<std::uint32_t>
        align_bytes;  ///< --align; nullopt = 1 MiB (cluster size below kSmallVolumeBytes)
    std::uint64_t partition_offset =
        0;  ///< sectors before the volume on the media (PartitionOffset); alignment is media-relative
};

/// The complete geometry of one exFAT volume. Sector numbers are in sectors
/// of bytes_per_sector relative to the volume's first sector, except
/// partition_offset (media-relative).
struct Layout {
    std::uint32_t bytes_per_sector = 512;   ///< 2^BytesPerSectorShift
    std::uint32_t sectors_per_cluster = 8;  ///< 2^SectorsPerClusterShift
    std::uint64_t partition_offset = 0;     ///< PartitionOffset
    std::uint64_t volume_length = 0;        ///< VolumeLength (sectors)
    std::uint32_t fat_offset = 0;           ///< FatOffset (sectors)
    std::uint32_t fat_length = 0;  ///< FatLength (sectors): exactly ceil((ClusterCount+2)*4 / sector)
    std::uint32_t cluster_heap_offset = 0;  ///< ClusterHeapOffset (sectors)
    std::uint32_t cluster_count = 0;        ///< ClusterCount: clusters 2 .. cluster_count+1
    std::uint32_t number_of_fats = 1;       ///< NumberOfFats (2 is TexFAT only; we write 1)
    std::uint32_t align_bytes =
        kDefaultAlignBytes;  ///< FatOffset alignment; the heap is aligned to max(align, cluster)
    /// Sectors of the given volume left outside VolumeLength: an extra
    /// cluster's worth the FAT could not describe without moving the heap
    /// to the next boundary (rare; see plan_layout).
    std::uint64_t unused_tail_sectors = 0;

    // The system objects format writes, contiguous from cluster 2 in this
    // order (like mkfs.exfat and the spec's recommendation that the root
    // follow the bitmap and up-case table [EXFAT §3.1.10]). Each is FAT-chained.
    std::uint32_t bitmap_first_cluster = 2;  ///< First Allocation Bitmap
    std::uint64_t bitmap_bytes = 0;          ///< ceil(ClusterCount / 8) [EXFAT §7.1.5]
    std::uint32_t upcase_first_cluster = 3;
    std::uint32_t upcase_bytes = kUpcaseTableBytes;
    std::uint32_t root_first_cluster = 4;  ///< FirstClusterOfRootDirectory; the root gets one cluster

    std::uint32_t cluster_bytes() const noexcept { return bytes_per_sector * sectors_per_cluster; }
    std::uint8_t bytes_per_sector_shift() const noexcept;
    std::uint8_t sectors_per_cluster_shift() const noexcept;
    /// Byte offset (within the volume) of cluster n (2 <= n <= cluster_count + 1).
    std::uint64_t cluster_offset(std::uint32_t n) const noexcept {
        return (std::uint64_t(cluster_heap_offset) + std::uint64_t(n - 2) * sectors_per_cluster) *
               bytes_per_sector;
    }
    /// Clusters needed to hold `bytes` (0 -> 0).
    std::uint32_t clusters_for(std::uint64_t bytes) const noexcept {
        return static_cast<std::uint32_t>((bytes + cluster_bytes() - 1) / cluster_bytes());
    }
    std::uint32_t bitmap_clusters() const noexcept { return clusters_for(bitmap_bytes); }
    std::uint32_t upcase_clusters() const noexcept { return clusters_for(upcase_bytes); }
    /// Clusters a fresh volume has in use: bitmap + up-case table + root.
    std::uint32_t used_clusters() const noexcept { return bitmap_clusters() + upcase_clusters() + 1; }
    /// PercentInUse of a fresh volume: floor(used * 100 / count) [EXFAT §3.1.18].
    std::uint8_t percent_in_use() const noexcept {
        return cluster_count == 0
                   ? 0
                   : static_cast<std::uint8_t>(std::uint64_t(used_clusters()) * 100 / cluster_count);
    }
    /// Bytes of the volume as VolumeLength says.
    std::uint64_t volume_bytes() const noexcept { return volume_length * bytes_per_sector; }
    friend bool operator==(const Layout&, const Layout&) = default;
};

/// Why no layout exists for a request, and what would work instead
/// ("-c 8K", "--align 4K", "a volume of at least 1 MiB").
struct LayoutRefusal {
    std::string reason;
    std::vector<std::string> suggestions;
};

/// Computes the geometry for a request. Rules:
///  - bytes_per_sector 512, 1024, 2048 or 4096; VolumeLength = volume_bytes /
///    bytes_per_sector sectors, at least 1 MiB [EXFAT §3.1.5].
///  - cluster: a power of two from one sector to 32 MiB; default per
///    default_cluster_bytes(), raised to one sector, and doubled while the
///    count would pass kMaxClusterCount.
///  - align: a power of two, at least one sector, at most kMaxAlignBytes.
///    FatOffset is the first aligned sector at or after sector 24; the heap
///    starts at the first sector after the FAT aligned to max(align, cluster
///    size), so clusters never straddle a cluster-size boundary. Alignment is
///    media-relative (partition_offset counts), as the device sees it.
///  - ClusterCount is the largest the volume holds [EXFAT §3.1.9]; FatLength
///    the smallest covering it. When the last partial stretch of the volume
///    would hold another cluster that a one-sector-longer FAT cannot describe
///    without moving the heap, VolumeLength stops at the end of the heap
///    (unused_tail_sectors), so ClusterCount equals floor((VolumeLength -
///    ClusterHeapOffset) / SectorsPerCluster) as the spec requires.
///  - refused: ClusterCount would have to be capped at kMaxClusterCount with
///    more than one cluster of the volume left over (suggests larger
///    clusters); fewer clusters than the bitmap, up-case table and root
///    need; offsets beyond 2^32-1 sectors.
/// Never throws except std::bad_alloc.
std::variant<Layout, LayoutRefusal> plan_layout(const LayoutRequest& request);

/// Windows' default cluster size for the volume size [KB140365, formats.md
/// §2.11]: up to 256 MiB 4 KiB, up to 32 GiB 32 KiB, beyond 128 KiB
/// (Windows formats 7 MB .. 256 TB; we use 4 KiB below and 128 KiB above,
/// plan_layout doubles it where the count would exceed kMaxClusterCount).
std::uint32_t default_cluster_bytes(std::uint64_t volume_bytes) noexcept;
/// mkfs.exfat's choice (exfatprogs 1.2.0 [EXP]): up to 256 MiB 4 KiB, up to
/// 32 GiB 32 KiB, beyond 128 KiB. (1.3.3 and later also use 512 B below
/// 7 MiB.) For documentation and tests.
std::uint32_t mkfs_exfat_default_cluster_bytes(std::uint64_t volume_bytes) noexcept;

/// A human explanation of a layout for `mkfs --explain`: lines of text.
std::vector<std::string> explain_layout(const LayoutRequest& request, const Layout& layout);

}  // namespace fsimg::exfat
