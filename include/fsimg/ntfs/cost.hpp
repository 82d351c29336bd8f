// NTFS cost model (the slack analyzer's, as fat/cost.hpp and exfat/cost.hpp). It predicts what fsimg's NTFS
// populate allocates (design.md: cluster for cluster, checked by `slack
// --verify`): resident files, directory B-trees and $MFT growth come from the
// ntfs library (ntfs/populate.hpp resident_limit, ntfs/index_plan.hpp), the
// fixed overhead from ntfs::plan_layout. Pure.
//
// The index tree grows as ntfs-3g grows it (ntfs/index_plan.hpp); ntfs-3g's
// records are 80 bytes fuller than populate's (a 48-byte
// $STANDARD_INFORMATION and a 104-byte in-record $SECURITY_DESCRIPTOR), so a
// copy through ntfs-3g (tests/oracle/slack_fuse.sh) keeps files of the last
// 80 resident bytes out of the record and moves small indexes to blocks a
// little earlier; docs/slack.md gives the difference.
//
// Facts: docs/formats.md §5.1-5.4 ([EXP] ntfs-3g), §3.3 (what
// mkntfs creates, $LogFile sizes, used space after mkntfs), §3.8 (index
// entries, B-tree fill), §3.10 (default cluster sizes). Checks: the §5.5
// worked examples (67 clusters at 4 KiB, 13 at 64 KiB) and the six "used
// after mkntfs" rows of §3.3 are reproduced exactly (tests/unit/slack_cost_test.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/populate.hpp"

namespace fsimg::ntfs {

/// Bytes of one MFT record (FILE record) for 512-byte sectors [NTFS-3G].
inline constexpr std::uint32_t kRecordBytes = 1024;
/// ntfs-3g extends $MFT's data by 16 records at a time (at least one
/// cluster): 27 -> 176 records grew 28,672 -> 192,512 bytes at 4 KiB [EXP §5.3].
inline constexpr std::uint64_t kMftExtendRecords = 16;
/// Bytes of an ntfs-3g directory record besides its $FILE_NAME and its index
/// entries: header 56, $STANDARD_INFORMATION 72, $SECURITY_DESCRIPTOR 104,
/// $INDEX_ROOT "$I30" (header 32, root 16, node header 16, end entry 16)
/// 80, end marker 8 [EXP ntfsinfo -F: 424 + entries with a 7-char name].
inline constexpr std::uint64_t kDirectoryRecordFixed = 56 + 72 + 104 + 80 + 8;
/// Usable bytes of one INDX block: 4096 - 64 header - 16 end entry [§5.2]; a
/// node above the leaves ends with a 24-byte end entry (its child's VCN).
inline constexpr std::uint64_t kIndexBlockCapacity = 4016;
inline constexpr std::uint64_t kIndexNodeCapacity = 4008;
/// Bytes a directory record gains when its index moves out of the record:
/// $INDEX_ALLOCATION "$I30" (non-resident header 64, name 8, runlist 8) and
/// $BITMAP "$I30" (resident header 24, name 8, value 8).
inline constexpr std::uint64_t kIndexAllocationAttributes = 80 + 40;
/// Smallest cluster: 512 B [NTFS-3G; MS-NTFS] (the largest: layout.hpp kMaxClusterBytes).
inline constexpr std::uint32_t kMinClusterBytes = 512;

constexpr std::uint64_t round8(std::uint64_t v) noexcept { return (v + 7) & ~std::uint64_t{7}; }

/// Bytes of the index entry a name of `name_units` UTF-16 units adds to its

/// Largest file whose $DATA stays resident in its 1 KiB record, for a name of
/// `name_units` units and a DOS name of `dos_units` beside it (0: none):
/// populate's record (ntfs::resident_limit, 816 - r8(66 + 2L) without a DOS
/// name, e.g. 728 for 9 units; a DOS name of D units takes 24 + r8(66 + 2D)
/// more). ntfs-3g's records hold 80 bytes less and no DOS name (760 -
/// r8(90 + 2L) = 648 for 9 units [§5.1; EXP]; docs/slack.md).
inline std::uint64_t resident_limit_1k(std::size_t name_units, std::size_t dos_units = 0) noexcept {
    return resident_limit(kRecordBytes, name_units, dos_units);
}

/// Data clusters of a file: 0 when resident (size <= resident_limit), else
/// ceil(bytes / cluster_bytes).
inline std::uint64_t file_clusters(std::uint64_t bytes, std::size_t name_units, std::uint32_t cluster_bytes,
                                   std::size_t dos_units = 0) noexcept {
    return bytes <= resident_limit_1k(name_units, dos_units) ? 0
                                                             : (bytes + cluster_bytes - 1) / cluster_bytes;
}

/// The room ntfs-3g's own directory records leave its $I30 B-tree, for a
/// directory name of `name_units` units: the root holds 1024 - 120 - 424 -
/// r8(90 + 2L) bytes of entries before the index moves to blocks (480 for 7
/// units [EXP]), 128 bytes less above blocks ($INDEX_ALLOCATION and $BITMAP
/// 120, the end entry's VCN 8); blocks as populate's. With
/// grow_index this reproduces ntfs-3g's block counts
/// (tests/unit/slack_cost_test.cpp), the check that populate's tree grows as
/// ntfs-3g's does.
IndexRoom ntfs3g_index_room(std::size_t name_units) noexcept;

/// One directory's $I30 index as populate lays it out
/// (directory_index), for `entry_bytes` in collation order
/// (for the root, the system files' entries included) and a directory name
/// of `name_units` units with a DOS name of `dos_units` (0: none).
struct IndexCost {
    std::uint64_t blocks = 0;        ///< INDX blocks
    std::uint64_t bitmap_bytes = 0;  ///< a non-resident $BITMAP's value (0 when resident)
    bool extension_record = false;   ///< one more MFT record (IndexStorage::extension)
};
IndexCost index_cost(std::span<const std::uint32_t> entry_bytes, std::size_t name_units,
                     std::size_t dos_units, bool root);

/// Clusters `blocks` INDX blocks of one directory take: 4096/C each with
/// clusters under 4 KiB; blocks share clusters above (ceil(blocks*4096/C)).
constexpr std::uint64_t index_clusters(std::uint64_t blocks, std::uint32_t cluster_bytes) noexcept {
    return (blocks * kIndexBlockBytes + cluster_bytes - 1) / cluster_bytes;
}

/// Bytes of $MFT's data after mkntfs: max(27 records, one cluster).
constexpr std::uint64_t initial_mft_bytes(std::uint32_t cluster_bytes) noexcept {
    const std::uint64_t b = kInitialMftRecords * kRecordBytes;
    return (b + cluster_bytes - 1) / cluster_bytes * cluster_bytes;
}

/// Clusters $MFT and its $BITMAP grow by when `records` new files,
/// directories and links (hard-linked files once) are created: user records
/// start at 64, the allocation grows in steps of max(16 records, one
/// cluster) [§5.3], the $BITMAP (one cluster after mkntfs) holds a bit per
/// record (mft_growth, what populate allocates).
std::uint64_t mft_growth_clusters(std::uint64_t records, std::uint32_t cluster_bytes) noexcept;

/// What mkntfs allocates on an empty volume, in clusters of `cluster_bytes`
/// (the report takes the fixed overhead from ntfs::plan_layout, and from
/// this only for clusters above 64 KiB, which NTFS's layout does not write)
/// [§3.3, §5.4]: $Boot max(8 KiB, C); $MFT initial_mft_bytes; $MFT $BITMAP 1
/// cluster; $MFTMirr max(4 KiB, C); $LogFile (ntfs::logfile_bytes_for); $Bitmap
/// ceil(clusters/8) bytes; $AttrDef 2,560 B; $Secure $SDS 262,396 B; $UpCase
/// 128 KiB; the root's INDX block 4 KiB and its 4,140-byte security
/// descriptor; each rounded up to whole clusters. Reproduces every "used after
/// mkntfs" figure of §3.3 (100 MiB .. 13 GiB, 4 KiB .. 1 MiB clusters).
std::uint64_t fixed_overhead_clusters(std::uint64_t volume_bytes, std::uint32_t cluster_bytes) noexcept;

/// Clusters of a volume: (volume_bytes - 512) / C (mkntfs keeps the last
/// sector for the backup boot sector).
constexpr std::uint64_t mkntfs_cluster_count(std::uint64_t volume_bytes,
                                             std::uint32_t cluster_bytes) noexcept {
    return volume_bytes < 512 ? 0 : (volume_bytes - 512) / cluster_bytes;
}

/// mkntfs's default: 4096, doubled while the cluster count would exceed 2^32 - 1.
std::uint32_t mkntfs_default_cluster_bytes(std::uint64_t volume_bytes) noexcept;

}  // namespace fsimg::ntfs
