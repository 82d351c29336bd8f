// NTFS geometry: volume size + sector size + cluster size + MFT record size
// -> where every system file goes. Pure: no I/O, no clock.
//
// Facts: docs/formats.md §3.1 (field encodings, cluster limits),
// §3.3 (what mkntfs creates and where: $MFT at max(after its bitmap, 16 KiB),
// $MFTMirr in the middle, $LogFile after it and sized by volume size, the
// 12.5 % MFT zone), §3.9 ($Bitmap), §3.10 (default cluster sizes), §3.9 limits
// (at most 2^32 - 1 clusters). Our choices: docs/ntfs-notes.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

/// Smallest volume: 1 MiB (mkntfs refuses less; the fixed system files need
/// about 700 KiB).
inline constexpr std::uint64_t kMinVolumeBytes = 1u << 20;
/// Windows addresses at most 2^32 - 1 clusters [MS-NTFS] (formats.md §3.9).
inline constexpr std::uint64_t kMaxClusters = 0xFFFFFFFFu;
/// Largest cluster: 2 MiB (Windows 10 1709+, ntfs-3g's cap) (formats.md §3.1).
inline constexpr std::uint32_t kMaxClusterBytes = 2u << 20;
/// Clusters above 64 KiB need Windows 10 1709 / Server 2019 (formats.md §3.1).
inline constexpr std::uint32_t kClassicMaxClusterBytes = 64u << 10;
/// Index block (INDX) size: 4 KiB, as mkntfs and Windows use (formats.md §3.3).
inline constexpr std::uint32_t kIndexBlockBytes = 4096;
/// $Boot: 8 KiB (boot sector + boot code), rounded up to a cluster (formats.md §3.1).
inline constexpr std::uint32_t kBootBytes = 8192;
/// $UpCase: 65,536 UTF-16 units (formats.md §3.2).
inline constexpr std::uint32_t kUpcaseBytes = 131072;
/// $AttrDef size for NTFS 3.x: 16 entries of 160 bytes (formats.md §3.2).
inline constexpr std::uint32_t kAttrDefBytes = 2560;
/// $Secure:$SDS is written in 256 KiB blocks, each mirrored at +256 KiB (formats.md §3.9).
inline constexpr std::uint32_t kSdsBlockBytes = 0x40000;
/// MFT records a fresh volume uses: 0..15 system/reserved, 16..23 free,
/// 24..26 $Extend children (formats.md §3.2 [EXP]).
inline constexpr std::uint32_t kInitialMftRecords = 27;

/// What the user asked for. Sizes in bytes.
struct LayoutRequest {
    std::uint64_t volume_bytes = 0;        ///< the partition or whole image; a partial last sector is dropped
    std::uint32_t bytes_per_sector = 512;  ///< 512, 1024, 2048 or 4096
    std::optional<std::uint32_t> cluster_bytes;  ///< -c; nullopt = default_cluster_bytes()
    std::optional<std::uint32_t>
        mft_record_bytes;              ///< 1024 or 4096; nullopt = 1024, or 4096 for sectors above 1 KiB
    std::uint64_t hidden_sectors = 0;  ///< sectors before the volume on the media (partition start)
};

/// A contiguous run of clusters.
struct Extent {
    std::uint64_t lcn = 0;
    std::uint64_t clusters = 0;
    friend bool operator==(const Extent&, const Extent&) = default;
};

/// Clusters in a list of extents.
std::uint64_t clusters_of(const std::vector<Extent>& extents) noexcept;
/// The extents as data runs of a runlist (formats.md §3.6), in order.
std::vector<DataRun> runs_of(const std::vector<Extent>& extents);

/// The geometry of one NTFS volume. LCNs are in clusters from the volume's
/// first byte; the backup boot sector is the last sector of the volume bytes.
struct Layout {
    std::uint32_t bytes_per_sector = 512;
    std::uint32_t cluster_bytes = 4096;
    std::uint32_t mft_record_bytes = 1024;
    std::uint32_t index_block_bytes = kIndexBlockBytes;
    std::uint64_t device_sectors = 0;  ///< sectors of the volume window (backup boot sector in the last)
    std::uint64_t total_sectors = 0;   ///< boot sector field: device_sectors - 1
    std::uint64_t cluster_count = 0;   ///< total_sectors / sectors per cluster
    std::uint64_t hidden_sectors = 0;

    Extent boot;                     ///< $Boot $DATA at LCN 0
    Extent mft_bitmap;               ///< $MFT $BITMAP, right after $Boot
    Extent mft;                      ///< $MFT $DATA
    Extent mftmirr;                  ///< $MFTMirr $DATA, in the middle of the volume
    Extent logfile;                  ///< $LogFile $DATA, right after $MFTMirr
    std::uint64_t mft_zone_end = 0;  ///< first LCN after the reserved 12.5 % MFT zone

    // Allocated after the MFT zone (first fit, may be fragmented on tiny volumes).
    std::vector<Extent> bitmap;      ///< $Bitmap $DATA
    std::vector<Extent> attrdef;     ///< $AttrDef $DATA
    std::vector<Extent> root_index;  ///< root $INDEX_ALLOCATION $I30 (one INDX block)
    std::vector<Extent> upcase;      ///< $UpCase $DATA
    std::vector<Extent> sds;         ///< $Secure $SDS

    std::uint32_t mft_records = kInitialMftRecords;  ///< records in $MFT $DATA
    std::uint32_t mftmirr_records = 4;               ///< records mirrored in $MFTMirr
    std::uint64_t logfile_bytes = 0;
    std::uint64_t bitmap_bytes = 0;      ///< $Bitmap data size: ceil(clusters / 8) rounded up to 8
    std::uint64_t mft_bitmap_bytes = 8;  ///< $MFT $BITMAP data size: ceil(records / 8) rounded up to 8
    std::uint64_t sds_bytes = 0;  ///< $SDS data size (set by the caller's descriptors; see plan_layout)

    std::uint64_t mft_bytes() const noexcept { return std::uint64_t(mft_records) * mft_record_bytes; }
    std::uint64_t mftmirr_bytes() const noexcept { return std::uint64_t(mftmirr_records) * mft_record_bytes; }
    std::uint64_t volume_bytes() const noexcept { return device_sectors * bytes_per_sector; }
    std::uint32_t sectors_per_cluster() const noexcept { return cluster_bytes / bytes_per_sector; }
    std::uint64_t clusters_for(std::uint64_t bytes) const noexcept {
        return (bytes + cluster_bytes - 1) / cluster_bytes;
    }
    /// Every allocated extent, for $Bitmap.
    std::vector<Extent> allocated() const;
    /// Clusters in use on the fresh volume.
    std::uint64_t used_clusters() const;
};

/// Why no layout exists, and what would work instead.
struct LayoutRefusal {
    std::string reason;
    std::vector<std::string> suggestions;
};

/// Computes the geometry. Rules (formats.md §3.1, §3.3):
///  - sector 512..4096, a power of two; device sectors = volume_bytes / sector;
///    at least kMinVolumeBytes;
///  - cluster a power of two, sector <= cluster <= 2 MiB (and <= 4096 sectors);
///    default per default_cluster_bytes(), at least the sector; with an
///    explicit -c, more than kMaxClusters clusters is refused with the smallest
///    cluster that works;
///  - MFT record 1024 or 4096 and at least the sector size;
///  - $Boot at LCN 0 (8 KiB rounded up to clusters), $MFT $BITMAP after it,
///    $MFT at max(next LCN, 16 KiB / cluster) with max(27 records, one
///    cluster); $MFTMirr at (total_sectors * sector / 2) / cluster (mkntfs [EXP]) with max(4 records,
///    one cluster); $LogFile right after it, logfile_bytes_for();
///  - the other system files first fit from the end of the 12.5 % MFT zone;
///  - refused when they do not fit (with the size that would).
/// `sds_bytes` is the $SDS data size the caller will write. Never throws
/// except std::bad_alloc.
std::variant<Layout, LayoutRefusal> plan_layout(const LayoutRequest& request, std::uint64_t sds_bytes);

/// Windows' default cluster size [MS-AFS] (formats.md §3.10): 4 KiB up to
/// 16 TiB, then doubling per doubling of the volume up to 2 MiB for 8 PiB.
std::uint32_t default_cluster_bytes(std::uint64_t volume_bytes) noexcept;

/// mkntfs' $LogFile size (formats.md §3.3) for `volume_bytes` = total
/// sectors x sector size, the volume without its backup boot sector (what
/// mkntfs compares: a 2 MiB device gets 256 KiB, a 12 GiB device
/// 64,421,888 bytes [EXP]): < 2 MiB -> 256 KiB;
/// < 4,000,000 B -> 512 KiB; <= 200 MiB -> 2 MiB; < 12 GiB -> volume / 200
/// rounded down to a cluster; else 64 MiB. (Halving to fit is done by plan_layout.)
std::uint64_t logfile_bytes_for(std::uint64_t volume_bytes, std::uint32_t cluster_bytes) noexcept;

}  // namespace fsimg::ntfs
