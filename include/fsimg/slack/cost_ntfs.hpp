// NTFS cost model for the slack analyzer until NTFS populate lands: then the
// NTFS work moves these functions beside ntfs/layout (as fat/cost.hpp and
// exfat/cost.hpp) and populate allocates with them. Pure. What NTFS's layout
// already decides comes from it (ntfs/layout.hpp: record, INDX block and
// cluster limits, $LogFile sizes); the report takes the fixed overhead from
// ntfs::plan_layout.
//
// The model is of what mkntfs + ntfs-3g write (the writer formats.md
// measured, and tests/oracle/slack_fuse.sh copies through), not of Windows:
// POSIX-namespace names without 8.3 aliases, a 72-byte
// $STANDARD_INFORMATION and a 104-byte in-record $SECURITY_DESCRIPTOR per
// file and directory.
//
// Facts: ../shared/docs/formats.md §5.1-5.4 ([EXP] ntfs-3g), §3.3 (what
// mkntfs creates, $LogFile sizes, used space after mkntfs), §3.8 (index
// entries, B-tree fill), §3.10 (default cluster sizes). Checks: the §5.5
// worked examples (67 clusters at 4 KiB, 13 at 64 KiB) and the six "used
// after mkntfs" rows of §3.3 are reproduced exactly (tests/unit/slack_cost_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "fsimg/ntfs/layout.hpp"

namespace fsimg::slack::ntfs {

/// Bytes of one MFT record (FILE record) for 512-byte sectors [NTFS-3G].
inline constexpr std::uint32_t kRecordBytes = 1024;
/// Bytes of one INDX block (NTFS's layout; mkntfs uses 4096 too).
inline constexpr std::uint32_t kIndexBlockBytes = ::fsimg::ntfs::kIndexBlockBytes;
/// First MFT record ntfs-3g gives a user file [EXP formats.md §3.2].
inline constexpr std::uint64_t kFirstUserRecord = 64;
/// Records of a fresh $MFT (mkntfs): 27 [EXP formats.md §3.3].
inline constexpr std::uint64_t kInitialMftRecords = ::fsimg::ntfs::kInitialMftRecords;
/// ntfs-3g extends $MFT's data by 16 records at a time (at least one
/// cluster): 27 -> 176 records grew 28,672 -> 192,512 bytes at 4 KiB [EXP §5.3].
inline constexpr std::uint64_t kMftExtendRecords = 16;
/// Bytes of an ntfs-3g directory record besides its $FILE_NAME and its index
/// entries: header 56, $STANDARD_INFORMATION 72, $SECURITY_DESCRIPTOR 104,
/// $INDEX_ROOT "$I30" (header 32, root 16, node header 16, end entry 16)
/// 80, end marker 8 [EXP ntfsinfo -F: 424 + entries with a 7-char name].
inline constexpr std::uint64_t kDirectoryRecordFixed = 56 + 72 + 104 + 80 + 8;
/// ntfs-3g lets $INDEX_ROOT grow only while the record keeps 120 bytes free
/// (room to add $INDEX_ALLOCATION and $BITMAP when the index moves out):
/// ntfs_attr_record_resize refuses growth to bytes_in_use + 120 > record.
inline constexpr std::uint64_t kIndexRootReserve = 120;
/// Usable bytes of one INDX block: 4096 - 64 header - 16 end entry [§5.2]; a
/// node above the leaves ends with a 24-byte end entry (its child's VCN).
inline constexpr std::uint64_t kIndexBlockCapacity = 4016;
inline constexpr std::uint64_t kIndexNodeCapacity = 4008;
/// Bytes a directory record gains when its index moves out of the record:
/// $INDEX_ALLOCATION "$I30" (non-resident header 64, name 8, runlist 8) and
/// $BITMAP "$I30" (resident header 24, name 8, value 8).
inline constexpr std::uint64_t kIndexAllocationAttributes = 80 + 40;
/// Smallest and largest cluster: 512 B .. 2 MiB [NTFS-3G; MS-NTFS].
inline constexpr std::uint32_t kMinClusterBytes = 512;
inline constexpr std::uint32_t kMaxClusterBytes = ::fsimg::ntfs::kMaxClusterBytes;
/// At most 2^32 - 1 clusters per volume (Windows) [MS-NTFS].
inline constexpr std::uint64_t kMaxClusters = ::fsimg::ntfs::kMaxClusters;

constexpr std::uint64_t round8(std::uint64_t v) noexcept { return (v + 7) & ~std::uint64_t{7}; }

/// Bytes of the index entry a name of `name_units` UTF-16 units adds to its
/// directory's $I30 index: r8(82 + 2L) [§3.8].
constexpr std::uint64_t index_entry_bytes(std::size_t name_units) noexcept {
    return round8(82 + 2 * std::uint64_t(name_units));
}

/// Largest file whose $DATA stays resident in its 1 KiB record, for a name of
/// `name_units` units (ntfs-3g record): 760 - r8(90 + 2L) [§5.1; EXP 9-char
/// name: 648]. 0 when the name leaves no room.
constexpr std::uint64_t resident_limit(std::size_t name_units) noexcept {
    const std::uint64_t fn = round8(90 + 2 * std::uint64_t(name_units));
    return fn >= 760 ? 0 : 760 - fn;
}

/// Data clusters of a file: 0 when resident (size <= resident_limit), else
/// ceil(bytes / cluster_bytes).
constexpr std::uint64_t file_clusters(std::uint64_t bytes, std::size_t name_units,
                                      std::uint32_t cluster_bytes) noexcept {
    return bytes <= resident_limit(name_units) ? 0 : (bytes + cluster_bytes - 1) / cluster_bytes;
}

/// Index entry bytes that stay in the $INDEX_ROOT of a directory whose own
/// name has `name_units` UTF-16 units: 1024 - 120 - 424 - r8(90 + 2L) =
/// 584 - r8(90 + 2L), e.g. 480 for a 7-char name (four 112-byte entries
/// stay, a fifth moves the index to an INDX block [EXP]; formats.md §3.8's
/// four 104-byte entries, record 832 bytes in use, fit too).
constexpr std::uint64_t index_root_capacity(std::size_t name_units) noexcept {
    const std::uint64_t used = kDirectoryRecordFixed + round8(90 + 2 * std::uint64_t(name_units));
    return used + kIndexRootReserve >= kRecordBytes ? 0 : kRecordBytes - kIndexRootReserve - used;
}

/// The INDX blocks ntfs-3g's $I30 B-tree takes in one directory, the names
/// added in collation order (each after the ones before, as a sorted copy
/// inserts them). Simulates ntfs-3g (index.c): entries stay in $INDEX_ROOT
/// while index_root_capacity() holds them; then the root's entries move to a
/// block (ntfs_ir_reparent); a full block splits at entry n/2 of its n
/// entries: the first n/2 stay, entry n/2 goes up to the parent (with an
/// 8-byte child VCN when it leaves a leaf), the rest move to a new block
/// (ntfs_ib_split). Only the rightmost node of each level is kept: memory is
/// the tree's depth times a block's entries. [EXP ntfs-3g 2022.10.3: 25
/// directories of 4..5,000 7-char names and 7 of 30..1,000 23-char names,
/// every block count equal; formats.md §3.8's 52 blocks for 1,000 104-byte
/// entries and §5.5's 7 for 14,024 bytes.]
class IndexGrowth {
public:
    /// `name_units`: UTF-16 units of the directory's own name (its record's
    /// room); `in_block`: the index starts in one empty block (mkntfs's root).
    explicit IndexGrowth(std::size_t name_units = 0, bool in_block = false);
    /// One more index entry of `entry_bytes` (index_entry_bytes()).
    void add(std::uint64_t entry_bytes);
    /// INDX blocks allocated so far.
    std::uint64_t blocks() const noexcept { return blocks_; }

private:
    void insert_root(std::uint64_t bytes);
    void insert(std::size_t level, std::uint64_t bytes);

    std::uint64_t root_leaf_capacity_;    ///< entry bytes the root holds before the index moves out
    std::uint64_t root_parent_capacity_;  ///< entry bytes it holds above blocks
    std::vector<std::uint64_t> root_;     ///< entry sizes in $INDEX_ROOT
    std::vector<std::vector<std::uint64_t>> right_;  ///< rightmost node per level, leaves first
    std::vector<std::uint64_t> right_bytes_;
    std::uint64_t root_bytes_ = 0;
    std::uint64_t blocks_ = 0;
};

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

/// Clusters $MFT grows by when `records` new files, directories and links
/// (hard-linked files once) are created: user records start at 64, and the
/// allocation grows in steps of max(16 records, one cluster) [§5.3].
constexpr std::uint64_t mft_growth_clusters(std::uint64_t records, std::uint32_t cluster_bytes) noexcept {
    if (records == 0) return 0;
    const std::uint64_t need = (kFirstUserRecord + records) * kRecordBytes;
    const std::uint64_t have = initial_mft_bytes(cluster_bytes);
    if (need <= have) return 0;
    const std::uint64_t step =
        kMftExtendRecords * kRecordBytes > cluster_bytes ? kMftExtendRecords * kRecordBytes : cluster_bytes;
    return (need - have + step - 1) / step * step / cluster_bytes;
}

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
constexpr std::uint64_t cluster_count(std::uint64_t volume_bytes, std::uint32_t cluster_bytes) noexcept {
    return volume_bytes < 512 ? 0 : (volume_bytes - 512) / cluster_bytes;
}

/// mkntfs's default: 4096, doubled while the cluster count would exceed 2^32 - 1.
std::uint32_t mkntfs_default_cluster_bytes(std::uint64_t volume_bytes) noexcept;

}  // namespace fsimg::slack::ntfs
