// The shape of a directory's $I30 B+ tree and the $MFT growth of a populated
// volume: one model that NTFS populate lays out and the slack analyzer
// predicts from (design.md: the prediction equals what populate allocates,
// cluster for cluster). Pure.
//
// The tree grows as ntfs-3g grows it when names are added in collation
// order (index.c [NTFS-3G 2022.10.3], verified with tests/oracle/
// slack_fuse.sh): the entries stay in $INDEX_ROOT while it has room; then
// they move to a new INDX block one level down (ntfs_ir_reparent); a full
// block splits at entry n/2 of its n entries: the first n/2 stay, entry n/2
// goes up to the parent (with an 8-byte sub-node VCN), the rest move to a new
// block, the rightmost of its level, which receives the new entry
// (ntfs_ib_split). Blocks are numbered in the order they are made (the
// first free bit of the index's $BITMAP). Blocks end up about half full
// (formats.md §3.8: 52 blocks for 1,000 104-byte entries).
//
// The room in $INDEX_ROOT follows populate's directory record (formats.md
// §3.5-3.8): header and update sequence array (first_attribute_offset),
// $STANDARD_INFORMATION 24 + 72, $FILE_NAME 24 + r8(66 + 2L), $INDEX_ROOT
// "$I30" 24 + 8 (name) + 16 (root header) + 16 (node header), the end
// marker 8; with blocks also $INDEX_ALLOCATION "$I30" 64 + 8 + 24 (runlist
// room) and $BITMAP "$I30" 24 + 8 + r8(ceil(blocks / 8)). As ntfs-3g
// (ntfs_attr_record_resize), the root grows only while the record keeps 120
// bytes free. ntfs-3g's own records are 80 bytes larger (a 48-byte
// $STANDARD_INFORMATION and a 104-byte in-record $SECURITY_DESCRIPTOR), so
// its roots and resident files hold 80 bytes less (docs/slack.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace fsimg::ntfs {

/// Bytes ntfs-3g keeps free in a record when it grows $INDEX_ROOT [NTFS-3G
/// ntfs_attr_record_resize: bytes_in_use + 120 > allocated is refused].
inline constexpr std::uint32_t kIndexRootReserve = 120;

/// One node of a directory's $I30 B-tree (formats.md §3.8): `entries` index
/// the directory's sorted entries; `children` is empty for a leaf, else
/// entries.size() + 1 block numbers: children[k] holds the keys before
/// entries[k], children.back() (the end entry's sub-node) the keys after the
/// last entry.
struct IndexNode {
    std::vector<std::uint32_t> entries;
    std::vector<std::uint32_t> children;
};
/// Where a directory's index attributes are kept (formats.md §3.5, §3.8).
/// A record of 1 KiB cannot hold a long name, its DOS name, $INDEX_ALLOCATION
/// and a large resident $BITMAP at once, so the index moves out step by step
/// (directory_index), as Windows and ntfs-3g move attributes out of a full
/// record: the $BITMAP becomes non-resident, then an extension record takes
/// the names and the allocation [FLATCAP attributes/attribute_list].
enum class IndexStorage : std::uint8_t {
    in_record,       ///< $INDEX_ROOT, with blocks $INDEX_ALLOCATION and a resident $BITMAP, in the record
    bitmap_outside,  ///< the same with the $BITMAP non-resident (its value in clusters of its own)
    extension,       ///< the base record: $STANDARD_INFORMATION, $ATTRIBUTE_LIST, $INDEX_ROOT; one
                     ///< extension record: the $FILE_NAMEs, $INDEX_ALLOCATION and the non-resident $BITMAP
};
struct IndexShape {
    IndexNode root;                 ///< in $INDEX_ROOT
    std::vector<IndexNode> blocks;  ///< block b at VCN b * index_block_vcns()
    IndexStorage storage = IndexStorage::in_record;
};

/// Bytes of the $ATTRIBUTE_LIST value of an IndexStorage::extension
/// directory: one entry per attribute, r8(26 + 2 * name units) each
/// [FLATCAP attributes/attribute_list]: $STANDARD_INFORMATION 32, each
/// $FILE_NAME 32, $INDEX_ROOT, $INDEX_ALLOCATION and $BITMAP "$I30" 40.
constexpr std::uint32_t extension_attribute_list_bytes(bool dos_name) noexcept {
    return 32 + 32 + (dos_name ? 32 : 0) + 3 * 40;
}

/// Bytes of the $I30 entry of a name of `name_units` UTF-16 units, without a
/// sub-node VCN: r8(16 + 66 + 2L) (formats.md §3.8).
constexpr std::uint32_t index_entry_bytes(std::size_t name_units) noexcept {
    return static_cast<std::uint32_t>((82 + 2 * name_units + 7) & ~std::size_t{7});
}

/// The order of a directory's entries: up-cased units (collate_file_names),
/// then, for names equal but for case, the raw units (formats.md §3.8
/// [NTFS-3G unistr.c]). Populate sorts with it and the slack analyzer too.
bool name_collates_before(std::u16string_view a, std::u16string_view b) noexcept;

/// Entry bytes (end entries excluded) each kind of node holds.
struct IndexRoom {
    std::int64_t root_leaf = 0;    ///< $INDEX_ROOT before the index moves to blocks (may be <= 0)
    std::int64_t root_parent = 0;  ///< $INDEX_ROOT above blocks, each entry 8 bytes more
    std::uint32_t block_leaf = 0;  ///< a leaf block: block - header and fixups - 16-byte end entry
    std::uint32_t block_node = 0;  ///< a block above leaves: its end entry is 24 bytes
};

/// Grows the tree with `entry_bytes` (index_entry_bytes of each name, in
/// collation order), one after the other, as described above. `in_block`:
/// the tree starts as an empty leaf block below an empty root (the root
/// directory, whose block format_volume writes). Memory: the tree. Throws
/// Error(unsupported) when an entry is larger than a block can hold.
IndexShape grow_index(std::span<const std::uint32_t> entry_bytes, const IndexRoom& room, bool in_block);

/// The room in one of populate's directory records of `record_bytes`
/// (e.g. 1024) for a directory name of `name_units` units (the root: 1, "."),
/// INDX blocks of `block_bytes` (e.g. 4096), an index $BITMAP value of
/// `bitmap_bytes` (a multiple of 8; used for IndexStorage::in_record), a DOS
/// name of `dos_units` units beside the name (0: none; its $FILE_NAME is in
/// the record too), and the index kept as `storage`. Leaf root for L = 7
/// without a DOS name: 560 bytes. `fits` (below) says whether the record
/// (and an extension record) holds the attributes with kIndexRootReserve to
/// spare when the index has blocks.
IndexRoom directory_index_room(std::uint32_t record_bytes, std::uint32_t block_bytes, std::size_t name_units,
                               std::uint64_t bitmap_bytes, std::size_t dos_units = 0,
                               IndexStorage storage = IndexStorage::in_record) noexcept;

/// True when a directory whose index has blocks fits `storage`: the base
/// record keeps kIndexRootReserve bytes beyond its fixed attributes, a
/// 24-byte end entry and what the storage keeps in it ($INDEX_ALLOCATION with
/// 24 bytes of runlist, the $BITMAP: resident r8(bitmap_bytes), or
/// non-resident with 8 bytes of runlist); for IndexStorage::extension the
/// extension record holds the $FILE_NAMEs, $INDEX_ALLOCATION and $BITMAP.
bool index_storage_fits(std::uint32_t record_bytes, std::size_t name_units, std::uint64_t bitmap_bytes,
                        std::size_t dos_units, IndexStorage storage) noexcept;

/// A directory's tree in populate's record: for each storage in turn
/// (in_record, bitmap_outside, extension), grow_index with
/// directory_index_room, the $BITMAP room grown (8 bytes at a time) until it
/// holds a bit per block; the first storage that fits (index_storage_fits),
/// or in_record when the entries stay in the root. `root`: the root
/// directory (in_block, name "."). Throws as grow_index, and
/// Error(unsupported) when no storage holds the index (a record smaller than
/// 1 KiB).
IndexShape directory_index(std::span<const std::uint32_t> entry_bytes, std::uint32_t record_bytes,
                           std::uint32_t block_bytes, std::size_t name_units, bool root,
                           std::size_t dos_units = 0);

/// Bytes of the index's $BITMAP value for `blocks` blocks: r8(ceil(blocks / 8)).
constexpr std::uint64_t index_bitmap_bytes(std::uint64_t blocks) noexcept { return (blocks + 63) / 64 * 8; }
/// An index's $BITMAP value with blocks 0 .. blocks - 1 in use
/// (index_bitmap_bytes long) [FLATCAP attributes/bitmap].
std::vector<std::byte> index_block_bitmap(std::size_t blocks);
/// The entries of one node of `shape` (the root's or a block's), end entry
/// included: entries[node.entries[k]] (each without a sub-node VCN), and
/// in a node with children each entry and the end entry given the VCN of
/// its child block (block * vcns_per_block; flag 0x01, 8 more bytes)
/// (formats.md §3.8).
std::vector<std::byte> index_node_bytes(const std::vector<std::vector<std::byte>>& entries,
                                        const IndexNode& node, std::uint32_t vcns_per_block);

/// The $MFT of a populated volume, from format's `initial_clusters` of $MFT
/// data (kInitialMftRecords records rounded up to whole clusters) and
/// `bitmap_clusters` of $MFT $BITMAP, when records up to `last_record`
/// (exclusive; user records start at 64) are in use: $MFT grows in steps of
/// max(16 records, one cluster) (formats.md §5.3), its $BITMAP holds
/// r8(ceil(records / 8)) bytes.
struct MftGrowth {
    std::uint64_t records = 0;          ///< records in $MFT's data (all formatted)
    std::uint64_t mft_clusters = 0;     ///< added to $MFT's data
    std::uint64_t bitmap_bytes = 0;     ///< $MFT $BITMAP value
    std::uint64_t bitmap_clusters = 0;  ///< added to $MFT $BITMAP
};
MftGrowth mft_growth(std::uint64_t last_record, std::uint32_t record_bytes, std::uint32_t cluster_bytes,
                     std::uint64_t initial_clusters, std::uint64_t bitmap_clusters) noexcept;

}  // namespace fsimg::ntfs
