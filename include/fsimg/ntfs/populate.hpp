// Populating a new NTFS volume from host directory trees (mkfs -t ntfs --from).
//
// The same three steps as FAT and exFAT (fat/populate.hpp,
// exfat/populate.hpp), on the same host scan (source/tree.hpp):
//  1. scan_tree() reads the host trees and lists every offender up front
//     (invalid UTF-8, names over 255 UTF-16 units, depth, path length,
//     unreadable files, symbolic links per the policy).
//  2. plan_population() (pure) gives every file and directory an MFT record
//     and clusters on a Layout, shapes every directory's index, or returns
//     every reason the tree does not fit ("needs X, the volume has Y").
//  3. write_population() rewrites $MFT (grown), its $BITMAP, the root
//     directory, $Bitmap and $MFTMirr, and writes the new records, index
//     blocks and file data onto a volume format_volume() has just written.
//
// What a populated record holds (formats.md §3.4-3.8; docs/ntfs-notes.md):
//  - $STANDARD_INFORMATION (72 bytes, security id kSecurityIdRoot, the root's
//    inheritable descriptor), one $FILE_NAME, and for a file $DATA: resident
//    while the record holds it (resident_limit()), else non-resident with a
//    runlist, contiguous whenever a free run holds the file (a source file
//    with holes: sparse, only the compression units holding data get
//    clusters, sparse_data_vcns); for a directory
//    $INDEX_ROOT "$I30", plus $INDEX_ALLOCATION and $BITMAP "$I30" when the
//    entries do not fit in the record, the tree grown as ntfs-3g grows it
//    (ntfs/index_plan.hpp, the model the slack analyzer predicts with).
//  - Names as Windows stores them with 8.3 names on (ntfs/names.hpp):
//    Win32&DOS when the name is itself a valid upper-case 8.3 name; else a
//    Win32 name plus a generated DOS name (both $FILE_NAMEs in the record,
//    both in the directory's index); POSIX for names Win32 cannot hold
//    (`"*/:<>?\|`, control characters, a trailing dot or space), names that
//    differ only in letter case from a sibling, and every name of a file
//    with several host links.
//  - Records: user files and directories from record kFirstUserRecord (64,
//    as ntfs-3g, formats.md §3.2), depth first in name order, sequence
//    number 1 (a record used for the first time), link count 1. $MFT grows
//    from where format put it, into the MFT zone, in steps of max(16
//    records, one cluster) (formats.md §5.3); records past the last one used
//    are formatted free records.
//  - Clusters: first fit from the end of the MFT zone (the zone only when
//    the rest is full), depth first in name order: a directory's index
//    blocks, then its children.
//  - Times: creation from the host birth time, data modified, MFT changed and
//    read from the host mtime (the atime moves when the tree is read), at
//    100 ns, clamped to SOURCE_DATE_EPOCH; created directories get the
//    creation time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/structs.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::ntfs {

/// First MFT record populate gives a user file or directory (ntfs-3g's
/// first user record [EXP], formats.md §3.2, §5.3).
inline constexpr std::uint64_t kFirstUserRecord = 64;

struct ScanOptions {
    std::vector<source::TreeSource> sources;
    source::SymlinkPolicy symlinks = source::SymlinkPolicy::skip;
    std::vector<std::filesystem::path> exclude;  ///< host paths left out (source::scan_host_trees)
};

/// Why a UTF-8 name cannot be an NTFS name: invalid UTF-8, or more than 255
/// UTF-16 units (formats.md §3.9). nullopt when it can.
std::optional<std::string> utf8_name_problem(std::string_view utf8);

/// True when Win32 can hold the name: no control character (below 0x20),
/// none of `" * / : < > ? \ |`, no trailing dot or space (formats.md §3.7).
bool is_win32_name(std::u16string_view name) noexcept;
/// True when the name is a valid upper-case 8.3 name (1-8 characters, an
/// optional dot and 1-3 characters, only upper-case letters, digits and
/// `! # $ % & ' ( ) - @ ^ _ ` { } ~`), which one $FILE_NAME in the
/// Win32&DOS namespace serves (formats.md §3.7).
bool is_dos_name(std::u16string_view name) noexcept;

/// NTFS's storage rules (utf8_name_problem, names compared exactly, no
/// file-size limit, Windows device names warned): what check_source_tree
/// applies, and what slack's analyzer charges a tree by.
const source::TreeRules& tree_rules();

/// Applies the NTFS rules to a tree (source::check_tree): utf8_name_problem, no
/// case-insensitive duplicate refusal (POSIX names keep them apart), no
/// file-size limit (the volume is the limit). Windows device names, names
/// Win32 cannot hold and names equal to a sibling but for case are warned
/// (Windows programs cannot open them, or only one of them).
void check_source_tree(source::SourceTree& tree);

/// Reads the source trees (source::scan_host_trees), applies
/// check_source_tree, and orders the problems by path. Throws as
/// source::scan_host_trees.
source::SourceTree scan_tree(const ScanOptions& options);

/// The largest $DATA that stays resident in a record of `record_bytes` for
/// a name of `name_units` UTF-16 units and a DOS name of `dos_units` beside
/// it (0: none): the record minus its header and update sequence array
/// (first_attribute_offset), $STANDARD_INFORMATION (24 + 72), $FILE_NAME (24
/// + r8(66 + 2L)), the DOS name's $FILE_NAME (24 + r8(66 + 2D)), the $DATA
/// header (24) and the end marker (8), rounded down to 8. For 1 KiB records
/// without a DOS name: 816 - r8(66 + 2L), i.e. formats.md §5.1's 840 -
/// r8(90 + 2L) (728 for L <= 11, 712 for L = 18).
std::uint64_t resident_limit(std::uint32_t record_bytes, std::size_t name_units,
                             std::size_t dos_units = 0) noexcept;

/// VCNs per INDX block: block / cluster, or block / 512 when the cluster is
/// larger than the block (then VCNs count 512-byte units) [NTFS-3G
/// index_vcn_size], formats.md §3.8.
std::uint32_t index_block_vcns(const Layout& layout) noexcept;

/// One entry of a directory's $I30 index: a node of the tree, or (root
/// only) one of the system files format_volume lists there.
struct DirEntryRef {
    bool system = false;      ///< a system file: `index` is its position in kRootSystemNames
    bool dos = false;         ///< the entry of the node's DOS name (NodePlan::dos_name)
    std::uint32_t index = 0;  ///< else the node's index in SourceTree::nodes
};

/// The names format_volume indexes in the root ($MFT ... $Extend and "."),
/// in collation order (formats.md §3.2).
extern const std::array<std::u16string_view, 12> kRootSystemNames;

/// NodePlan::link_of of a node that is not a second name of a file.
inline constexpr std::uint32_t kNoLink = UINT32_MAX;

/// `clusters` clusters from VCN `vcn` of an attribute.
struct VcnRange {
    std::uint64_t vcn = 0;
    std::uint64_t clusters = 0;
    friend bool operator==(const VcnRange&, const VcnRange&) = default;
};

/// Clusters per compression unit of a sparse $DATA: 2^4, what ntfs-3g (and,
/// its comment says, Windows) writes into the attribute header of a sparse
/// attribute [NTFS-3G attrib.c ntfs_attr_update_meta], formats.md §3.5.
inline constexpr std::uint64_t kSparseUnitClusters = 16;

/// The clusters a sparse $DATA of `size` bytes covers: ceil(size / cluster)
/// rounded up to a compression unit, its allocated size as Windows and the
/// Linux ntfs3 driver keep it (ntfs3 attr_set_size aligns a sparse
/// attribute's allocation to 2^c_unit clusters), formats.md §3.5.
std::uint64_t sparse_allocated_clusters(std::uint64_t size, std::uint32_t cluster_bytes) noexcept;

/// The VCN ranges of a file of `size` bytes that get clusters when it is
/// stored sparse, or nullopt when it is not (no hole of a whole
/// compression unit). A compression unit (kSparseUnitClusters clusters at a
/// multiple of 16, up to sparse_allocated_clusters) that any byte of `data`
/// (the scan's data segments, ascending) touches keeps all its 16 clusters,
/// written with the data and zeros, the last one too: a unit with fewer
/// clusters than 16 is a compressed unit to 7-Zip, which then fails to read
/// it; the other units become holes, so holes are whole aligned units as
/// Windows allocates sparse files. When
/// the runlist could need more than `runlist_room` bytes (every run counted
/// at its widest: lengths at the width the file's cluster count needs, LCN
/// offsets at 8 bytes, so that the rule does not depend on the volume and
/// the slack analyzer predicts it), only the longest holes are kept. Pure.
std::optional<std::vector<VcnRange>> sparse_data_vcns(std::span<const source::Segment> data,
                                                      std::uint64_t size, std::uint32_t cluster_bytes,
                                                      std::uint64_t runlist_room);

/// The runlist room of a sparse $DATA in a record of `record_bytes` for a
/// name of `name_units` and a DOS name of `dos_units`: the record without
/// its other attributes (as resident_limit) and the 72-byte sparse header,
/// rounded down to 8, i.e. resident_limit() - 48; 0 when that is negative.
std::uint64_t sparse_runlist_room(std::uint32_t record_bytes, std::size_t name_units,
                                  std::size_t dos_units = 0) noexcept;

/// The runlist of a sparse file: `data_vcns` (sparse_data_vcns) mapped in
/// order onto `extents` (their clusters back to back), the VCNs between and
/// after them up to `total_clusters` as holes. Throws Error(unsupported)
/// when the extents do not hold exactly the data VCNs' clusters.
std::vector<DataRun> sparse_runlist(std::span<const VcnRange> data_vcns, std::span<const Extent> extents,
                                    std::uint64_t total_clusters);

/// Where each node goes; parallel to SourceTree::nodes (the root: record 5).
/// Hard links (files of the same host st_dev and st_ino, TreeNode::host_ino):
/// the first name in depth-first order owns the record and the data; every
/// other name has link_of = that node, the same record, and is one more
/// $FILE_NAME in it (NodePlan::links) and one more index entry in its
/// directory. A name that would overflow the record (all $FILE_NAMEs must fit
/// in it: no attribute lists) is stored as a copy with its own record.
struct NodePlan {
    std::uint64_t record = 0;          ///< MFT record number
    std::uint32_t link_of = kNoLink;   ///< a hard link: the node owning the record
    std::vector<std::uint32_t> links;  ///< the owner: its other names
    Namespace name_space = Namespace::win32;
    std::u16string dos_name;  ///< the DOS name beside a Win32 name (plan_directory_names); may be empty
    /// files: $DATA inside the record; never for a file with more than one
    /// host link (TreeNode::host_links > 1) unless empty, so that the slack
    /// analyzer, which sees one name at a time, predicts it
    bool resident = false;
    /// file data (for a sparse file: the clusters of `data_vcns`, back to
    /// back), or the directory's $INDEX_ALLOCATION
    std::vector<Extent> extents;
    /// files stored sparse (sparse_data_vcns): the VCN ranges that have
    /// clusters, ascending; every other VCN below sparse_allocated_clusters
    /// is a hole (a runlist entry without an LCN). Empty for a file that is not
    /// sparse (one with no hole of a whole compression unit, resident, or
    /// with more than one host link: the slack analyzer sees one name at a
    /// time and could not count the record's room).
    bool sparse = false;
    std::vector<VcnRange> data_vcns;
    std::vector<Extent> index_bitmap;  ///< directories: a non-resident $BITMAP "$I30" (index.storage)
    std::vector<DirEntryRef> entries;  ///< directories: index entries in collation order
    IndexShape index;                  ///< directories: over `entries`
    /// IndexStorage::extension: the extension record (record + 1) holding the
    /// $FILE_NAMEs, $INDEX_ALLOCATION and $BITMAP; 0 otherwise
    std::uint64_t extension_record = 0;
};

/// $Extend/$Reparse's "$R" view index with --symlinks store: one entry per
/// record holding a reparse point, key (reparse tag, file reference), no data,
/// 32 bytes [NTFS-3G reparse.c set_reparse_index], collation
/// COLLATION_NTOFS_ULONGS (the key as little-endian 32-bit words: tag, then
/// the reference's low and high words), so entries go in ascending record
/// order. Windows keeps the index so that it can find every reparse point;
/// ntfs-3g looks an entry up when it removes a symbolic link. The tree grows
/// as a directory's does (directory_index; the $Reparse record has the same
/// attributes as a directory record with an 8-unit name).
struct ReparseIndexPlan {
    std::vector<std::uint32_t> nodes;  ///< the symbolic links' nodes, in $R order
    IndexShape index;                  ///< over `nodes`
    std::vector<Extent> extents;       ///< $INDEX_ALLOCATION "$R" (empty while the root holds every entry)
    std::vector<Extent> bitmap;        ///< a non-resident $BITMAP "$R" (index.storage)
};

/// The bytes of one "$R" entry: 16-byte header, 12-byte key, 4 bytes of padding.
inline constexpr std::uint32_t kReparseIndexEntryBytes = 32;
/// $Extend/$Reparse's MFT record (format_volume, as mkntfs) and its name's UTF-16 units.
inline constexpr std::uint64_t kReparseRecord = 26;
inline constexpr std::size_t kReparseFileNameUnits = 8;

struct PopulatePlan {
    std::vector<NodePlan> nodes;
    ReparseIndexPlan reparse;            ///< empty unless symbolic links are stored
    std::uint64_t mft_records = 0;       ///< records in $MFT's data (all formatted)
    std::vector<Extent> mft;             ///< $MFT $DATA
    std::vector<Extent> mft_bitmap;      ///< $MFT $BITMAP
    std::uint64_t mft_bitmap_bytes = 0;  ///< r8(ceil(mft_records / 8))
    std::uint64_t data_clusters = 0;     ///< non-resident file data
    std::uint64_t index_clusters =
        0;  ///< INDX blocks ($I30 and $R; the root's first, from format, not counted)
    std::uint64_t mft_clusters = 0;   ///< $MFT and $MFT $BITMAP growth
    std::uint64_t used_clusters = 0;  ///< in use after population, system files included
};

/// Plans the tree on `layout` (as format_volume writes it). Returns every
/// problem instead when the tree has problems, or the clusters needed (data,
/// index blocks, $MFT growth) exceed the free ones ("needs X, the volume has
/// Y free"). Pure; throws only std::bad_alloc.
std::variant<PopulatePlan, std::vector<source::TreeProblem>> plan_population(const source::SourceTree& tree,
                                                                             const Layout& layout);

/// Writes the planned tree onto `volume`, which format_volume() has just
/// formatted with `layout`: every MFT record (records 0 and 5 rebuilt with
/// the grown $MFT and the root's index, 1-4 and 6-26 as format wrote them),
/// $MFT's $BITMAP, $MFTMirr, index blocks (fixups applied), file data (large
/// sequential writes; all-zero blocks left as holes on a zeroed device) and
/// the new bits of $Bitmap. Throws Error(io) naming the host file when it
/// cannot be read or no longer has the size scanned, Error(unsupported) when
/// the volume does not hold what format writes or a record overflows.
void write_population(io::BlockDevice& volume, const Layout& layout, const source::SourceTree& tree,
                      const PopulatePlan& plan, const source::PopulateWriteOptions& options);

/// The smallest volume (a multiple of `granularity` bytes, growing by an
/// eighth per try) on which plan_layout(base with that volume_bytes) and
/// plan_population hold the tree with at least `free_bytes` of free clusters
/// left. A LayoutRefusal when none up to 256 TiB works (the tree's first
/// problem, or the layout's reason).
std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const source::SourceTree& tree,
                                                                 const LayoutRequest& base,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity = 1 << 20);

}  // namespace fsimg::ntfs
