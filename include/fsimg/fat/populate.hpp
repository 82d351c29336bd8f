// Populating a new FAT volume from host directory trees (mkfs --from).
//
// Three steps, so that nothing is written before everything is known:
//  1. scan_tree() reads the host trees (names, sizes, times, permissions;
//     checks that every file is readable, faccessat) and lists every
//     offender it finds in SourceTree::problems.
//  2. plan_population() (pure) assigns short names, directory sizes and
//     clusters for a Layout, or returns every reason the tree does not fit.
//  3. write_population() writes FAT chains (every FAT copy), directories,
//     file data and FSInfo onto a volume format_volume() has just written.
//
// Allocation: clusters are handed out in one ascending run from the first
// data cluster (the FAT32 root first, at BPB_RootClus = 2), depth first in
// name order: a directory's clusters, then its children (a file's data, or a
// subdirectory and everything below it). Every file and directory is
// therefore contiguous, and the used clusters are exactly what fat/cost.hpp
// predicts (tree_usage()).
//
// Facts: docs/formats.md §1.5-1.11 (FAT entries, FSInfo, root and
// directory entries, LFN, short names), §5.1-5.2 (cost model).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::fat {

// The host tree types are shared with exFAT (source/tree.hpp).
using source::kMaxPathBytes;
using source::kMaxTreeDepth;
using source::SourceTree;
using source::SymlinkPolicy;
using source::TreeNode;
using source::TreeProblem;
using source::TreeSource;

struct ScanOptions {
    std::vector<TreeSource> sources;
    SymlinkPolicy symlinks = SymlinkPolicy::skip;
    bool rename = false;  ///< store names FAT refuses under rename_for_fat()'s names instead
    std::vector<std::filesystem::path> exclude;  ///< host paths left out (source::scan_host_trees)
};

/// Reads the source trees (source::scan_host_trees) and applies the FAT rules
/// (check_source_tree; rename_for_fat first with options.rename). Problems (every one, in path order): names
/// FAT cannot hold (long_name_problem), files of 4 GiB or more, names that differ only in case in one
/// directory (case_fold_key; also across sources merged into one directory), a file and a directory of the
/// same name from two sources, paths past kMaxTreeDepth / kMaxPathBytes, unreadable files and directories,
/// symbolic links per `symlinks`. Devices, FIFOs and sockets are skipped with a warning. Throws Error(usage)
/// when a source is not a directory or an image_dir is malformed.
SourceTree scan_tree(const ScanOptions& options);

/// Renames, in every directory, the children whose names FAT refuses or that
/// differ only in case from an earlier (UTF-8 byte order) sibling:
/// fat_safe_name(), then "~2", "~3"... before the extension until the name is
/// unique ignoring case. Names FAT accepts are kept, so the mapping depends
/// only on the directory's names. Appends each change to tree.renamed and
/// re-sorts the children.
void rename_for_fat(SourceTree& tree);

/// FAT's storage rules (long_name_problem, case_fold_key, files up to
/// 4 GiB - 1, Windows device names warned): what check_source_tree applies,
/// and what slack's analyzer charges a tree by.
const source::TreeRules& tree_rules();

/// Checks the names of a tree built in memory the way scan_tree does
/// (source::check_tree with FAT's rules: long_name_problem, case_fold_key, files
/// up to 4 GiB - 1, Windows device names warned) and appends the problems.
/// scan_tree calls it; tests call it on synthetic trees.
void check_source_tree(SourceTree& tree);

/// What a tree costs on a volume of a type and cluster size (fat/cost.hpp
/// rules summed; the FAT32 root directory's clusters included).
struct TreeUsage {
    std::uint64_t data_clusters = 0;       ///< file data
    std::uint64_t directory_clusters = 0;  ///< subdirectories, and the FAT32 root
    std::uint64_t root_entries = 0;        ///< entries of the root (the label entry included)
    std::uint64_t largest_directory_entries = 0;
    std::uint64_t clusters() const noexcept { return data_clusters + directory_clusters; }
};
TreeUsage tree_usage(const SourceTree& tree, FatType type, std::uint32_t cluster_bytes, bool has_label);

/// Where each node goes; parallel to SourceTree::nodes.
struct NodePlan {
    ShortName short_name{};
    std::uint8_t nt_case = 0;         ///< DIR_NTRes case bits
    bool lfn = false;                 ///< LFN entries precede the short entry
    std::uint32_t first_cluster = 0;  ///< 0 for empty files (and the FAT12/16 root)
    std::uint32_t clusters = 0;
    std::uint32_t entries = 0;  ///< directories: entries written, "." ".." and the label included
};

struct PopulatePlan {
    std::vector<NodePlan> nodes;
    std::vector<std::uint32_t> allocation_order;  ///< nodes owning clusters, by ascending first cluster
    std::uint32_t used_clusters = 0;              ///< after population (the FAT32 root included)
    std::uint32_t next_free = 0;                  ///< first free cluster, or 0xFFFFFFFF when none is left
    TreeUsage usage;
};

/// Plans the tree on `layout` (which format_volume writes with a volume
/// label entry when `has_label`). Returns every problem instead when the tree
/// has problems, a directory needs more than kMaxDirectoryEntries entries,
/// the FAT12/16 root more than BPB_RootEntCnt (LFN and label entries count),
/// or the clusters needed exceed the volume ("needs X, the volume has Y").
/// Pure; throws only std::bad_alloc.
std::variant<PopulatePlan, std::vector<TreeProblem>> plan_population(const SourceTree& tree,
                                                                     const Layout& layout, bool has_label);

using WriteOptions = source::PopulateWriteOptions;

/// Writes the planned tree onto `volume`, which format_volume() has just
/// formatted with `layout` (and the label entry when the plan was made with
/// has_label). Writes FAT entries 0..next_free-1 into every FAT copy,
/// directory clusters (zero-filled to the cluster end), file data in large
/// sequential writes, and (FAT32) FSInfo free count and next free, primary
/// and backup. Timestamps: DIR_WrtDate/Time from mtime, DIR_CrtDate/Time/
/// TimeTenth from btime, DIR_LstAccDate from mtime (the host atime moves
/// when populate reads the file, which would make builds differ), each clamped to
/// options.clamp, in UTC (or local time), rounded down to 2 seconds.
/// Attributes: ARCHIVE on files, DIRECTORY on directories, READ_ONLY on
/// read-only files, HIDDEN per dot_hidden. Throws Error(io) naming the host
/// file when it cannot be read or no longer has the size scanned.
void write_population(io::BlockDevice& volume, const Layout& layout, const SourceTree& tree,
                      const PopulatePlan& plan, const WriteOptions& options);

/// BPB_RootEntCnt for `-t fat` (type chosen) with this tree: 512, or the
/// root's entry count (the label entry included) when it needs more and a
/// FAT12/16 root can hold it (at most 65,535 entries, whole sectors). When it
/// cannot, 512: the plan then refuses the tree naming what the root needs.
std::uint32_t root_entry_count_for_tree(const SourceTree& tree, bool has_label,
                                        std::uint32_t bytes_per_sector);

/// The smallest volume, a multiple of `granularity` bytes, on which
/// plan_layout(base with that volume_bytes) gives a layout where the tree
/// fits with at least `free_bytes` of free clusters left (the cluster size is
/// base.cluster_bytes or the default for each candidate size; the type
/// base.type or chosen). A LayoutRefusal when no size up to the FAT32 limit
/// works (e.g. -t fat12 for a large tree).
std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const SourceTree& tree,
                                                                 const LayoutRequest& base, bool has_label,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity = 1 << 20);

}  // namespace fsimg::fat
