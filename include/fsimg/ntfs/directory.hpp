// NTFS directories: walking a directory's $I30 index (the $INDEX_ROOT node
// and the INDX blocks of $INDEX_ALLOCATION, as a B+ tree), listing names,
// and resolving absolute paths case-insensitively through the volume's
// $UpCase. The base of ls/cat/extract and of fsck's index checks (issue 8).
//
// Facts: docs/formats.md §3.8 (index root, node header, index
// entries, INDX blocks, sub-node VCN in an entry's last 8 bytes when flag
// 0x01 is set, last entry flag 0x02, VCN units of index_block_vcns), §3.7
// ($FILE_NAME, namespaces), §3.2 (record 5 the root, record 10 $UpCase),
// [FLATCAP attributes/index_root, index_allocation, bitmap; NTFS-3G index.c:
// a block's own VCN at 0x10 must equal the VCN it was reached by].
//
// Hostile input: every INDX block is visited at most once (a sub-node VCN
// seen twice, whether a loop or a block shared by two parents, is
// Error(corrupt)); depth is bounded by kMaxIndexDepth; blocks must lie
// inside $INDEX_ALLOCATION, be marked in use in $BITMAP:$I30, and carry
// their own VCN; memory is bounded by one decoded node per level plus one
// bit of bookkeeping per block visited.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/ntfs/structs.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

/// MFT record numbers of $LogFile, $Volume, the root directory, $Bitmap and $UpCase
/// (formats.md §3.2).
inline constexpr std::uint64_t kLogFileRecord = 2;
inline constexpr std::uint64_t kVolumeRecord = 3;
inline constexpr std::uint64_t kRootRecord = 5;
inline constexpr std::uint64_t kBitmapRecord = 6;
inline constexpr std::uint64_t kUpcaseRecord = 10;
/// Deepest index node accepted (the root is depth 0). A 4 KiB-block
/// directory of 2^32 entries is 8 levels deep even with 255-unit names.
inline constexpr std::uint32_t kMaxIndexDepth = 32;
/// Largest $BITMAP:$I30 read (one bit per INDX block: 32 GiB of 4 KiB blocks).
inline constexpr std::uint64_t kMaxIndexBitmapBytes = 1u << 20;

/// Where an index entry was found: in $INDEX_ROOT (block = nullopt) or INDX
/// block number `block` (VCN-based, as read_index_block numbers them:
/// block = sub-node VCN / index_vcns_per_block()), at byte `offset` inside
/// the index node: for the root, from the start of the $INDEX_ROOT value
/// (IndexEntry::offset + 0x10); for a block, from the start of the INDX
/// block (IndexEntry::offset + 0x18). `depth`: 0 for the root, +1 per
/// sub-node level.
struct IndexEntryLocation {
    std::optional<std::uint64_t> block;
    std::uint32_t offset = 0;
    std::uint32_t depth = 0;
};

/// VCNs per INDX block of `block_bytes`: block / cluster, or block / 512
/// when the cluster is larger than the block (formats.md §3.8 [NTFS-3G
/// index_vcn_size]); populate's index_block_vcns() for a Layout.
std::uint32_t index_vcns_per_block(const Volume& volume, std::uint32_t block_bytes) noexcept;

/// Visits every $I30 entry of directory record `dir` (non-last entries:
/// those with a key) in B+ tree order (each subnode before its parent
/// entry), root first; blocks read through volume.read_index_block; $BITMAP
/// of the index consulted; every block visited at most once (a loop or a
/// block referenced twice is Error(corrupt) naming record, block), depth
/// bounded, memory bounded. Throws Error(corrupt) naming record/attribute/
/// block/offset on damage. The callback may return false to stop.
///
/// Damage reported (Error(corrupt), message "MFT record N ..."): no
/// $INDEX_ROOT:$I30, or one that does not decode, does not index $FILE_NAME
/// (type 0x30) with collation 1, or gives a block size that is not a power
/// of two in 512..65536; a sub-node without $INDEX_ALLOCATION:$I30 or
/// $BITMAP:$I30; a sub-node VCN that is not a multiple of the VCNs per
/// block, lies past the allocation, is clear in the bitmap, was visited
/// before, or lies deeper than kMaxIndexDepth; a block whose own VCN differs
/// from the one that reached it, or that does not decode (signature, fixups,
/// entries: Volume::read_index_block). $INDEX_ALLOCATION and $BITMAP extents
/// in other records are followed (load_attribute).
void for_each_index_entry(const Volume& volume, const MftRecord& dir,
                          const std::function<bool(const IndexEntry&, const IndexEntryLocation&)>& visit);

/// Which index of a record a walk follows: its attribute name, the name in
/// messages, and the indexed type and collation its $INDEX_ROOT must give.
struct IndexSpec {
    std::u16string_view name;
    std::string_view label;
    std::uint32_t indexed_type = 0;
    std::uint32_t collation_rule = 0;
};
/// A directory's index of $FILE_NAMEs (formats.md §3.8).
inline constexpr IndexSpec kI30Index{u"$I30", "$I30", 0x30, collation::file_name};
/// $Extend/$Reparse's view index: key (reparse tag, file reference), no data,
/// collation COLLATION_NTOFS_ULONGS [NTFS-3G reparse.c].
inline constexpr IndexSpec kReparseIndex{u"$R", "$R", 0, collation::ulongs};

/// for_each_index_entry over any index of a record (a view index such as
/// $Reparse:$R too: its keys are not decoded as $FILE_NAMEs); the same walk,
/// bounds and errors, with `spec.label` in the messages. `reached`, when
/// given, receives the number (0-based, in units of the index block size)
/// of each INDX block the walk descends into, in walk order: with a walk
/// that returns normally, the blocks of the tree, which the index $BITMAP
/// must mark in use and no other [FLATCAP concepts/index_record].
void for_each_index_entry(const Volume& volume, const MftRecord& record, const IndexSpec& spec,
                          const std::function<bool(const IndexEntry&, const IndexEntryLocation&)>& visit,
                          std::vector<std::uint64_t>* reached = nullptr);

/// A directory's names (all namespaces as stored; callers filter DOS-only
/// names, namespace 2) in collation order. Throws as for_each_index_entry.
std::vector<IndexEntry> list_directory(const Volume& volume, const MftRecord& dir);

/// The up-case table names are compared through: $UpCase's 65,536 units, or
/// the built-in table (upcase_table()) when record 10's $DATA cannot be read
/// or is not 128 KiB, with `note` saying why.
struct UpcaseTable {
    std::vector<std::uint16_t> units;  ///< 65,536 entries
    std::optional<std::string> note;   ///< set when the built-in table stands in
    /// FILENAME collation through this table: up-case each unit and compare
    /// as unsigned numbers, the shorter name first when one is a prefix
    /// (collate_file_names with this table). Returns <0, 0, >0.
    int collate(std::u16string_view a, std::u16string_view b) const noexcept;
    bool equal(std::u16string_view a, std::u16string_view b) const noexcept { return collate(a, b) == 0; }
    /// A hash of `name` up-cased through this table (FNV-1a over the
    /// units): names that are equal() have the same hash.
    std::uint64_t hash(std::u16string_view name) const noexcept;
};
/// Reads $UpCase (record 10, unnamed $DATA, 131,072 bytes as little-endian
/// units). Never throws for damage: falls back with a note instead.
UpcaseTable load_upcase(const Volume& volume);

/// Where a path leads: the MFT record, the reference as the index entry
/// stores it (record + sequence), and the $FILE_NAME it was found under
/// (for "/" the root's own $FILE_NAME ".").
struct PathTarget {
    std::uint64_t record = 0;
    FileReference reference;
    FileName name;
};

/// Resolves an absolute path ("/a/b", case-insensitively through the
/// volume's $UpCase read from record 10, falling back to the built-in table
/// with a note if $UpCase is unreadable) to an MFT record number + the
/// $FILE_NAME it was found under; nullopt when absent. Checks the record's
/// sequence number against the index entry's file reference.
///
/// Components are split at '/', empty ones skipped; each is matched among
/// the directory's entries of every namespace, an exact (case-sensitive)
/// match preferred over a case-insensitive one (two POSIX names differing in
/// case stay apart). nullopt when a component is missing or a non-last
/// component is not a directory. Throws Error(usage) for a path that is not
/// valid UTF-8, Error(corrupt) when a matched entry's record is past $MFT,
/// not in use, or has another sequence number than the entry says (a stale
/// entry), and as for_each_index_entry. `notes` (optional) receives the
/// up-case fallback note.
std::optional<PathTarget> resolve_path(const Volume& volume, std::string_view path,
                                       std::vector<std::string>* notes = nullptr);
/// The same with a table already loaded (ls -R and extract resolve many paths).
std::optional<PathTarget> resolve_path(const Volume& volume, std::string_view path,
                                       const UpcaseTable& upcase);

/// The directory entry named `name` (one component) in directory record
/// `dir`, matched as resolve_path does; nullopt when absent. Throws as
/// for_each_index_entry; the entry's record is not read.
std::optional<IndexEntry> find_in_directory(const Volume& volume, const MftRecord& dir,
                                            std::u16string_view name, const UpcaseTable& upcase);

}  // namespace fsimg::ntfs
