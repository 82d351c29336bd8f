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
// Facts: ../shared/docs/formats.md §1.5-1.11 (FAT entries, FSInfo, root and
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

namespace fsimg::fat {

/// What to do with a symbolic link in the source tree.
enum class SymlinkPolicy : std::uint8_t {
    skip,    ///< leave it out, with a warning naming it (default)
    follow,  ///< store what it points to; dangling links and loops are problems
    error,   ///< every symbolic link is a problem
};

/// Limits of the tree (not of FAT itself, which has none for depth): a path
/// deeper than kMaxTreeDepth directories, or longer than kMaxPathBytes UTF-8
/// bytes ('/'-separated, from the image root), is refused so that the path
/// plus a mount point stays under Linux's PATH_MAX (4,096) and readers such as
/// mtools and 7-Zip can extract it.
inline constexpr std::uint32_t kMaxTreeDepth = 128;
inline constexpr std::size_t kMaxPathBytes = 3840;

/// One --from: a host directory whose content goes to `image_dir`.
struct TreeSource {
    std::filesystem::path host_dir;
    std::string image_dir = "/";  ///< "/" or "/a/b" (UTF-8); missing directories are created
};

struct ScanOptions {
    std::vector<TreeSource> sources;
    SymlinkPolicy symlinks = SymlinkPolicy::skip;
    bool rename = false;  ///< store names FAT refuses under rename_for_fat()'s names instead
};

/// Why part of a tree cannot be stored: the image path ("/a/b.txt") and the
/// reason ("the name holds ':' ..."). Every offender gets its own entry.
struct TreeProblem {
    std::string path;
    std::string reason;
};

/// One file or directory of the tree to store.
struct TreeNode {
    std::string name;       ///< UTF-8 (empty for the root)
    std::u16string name16;  ///< the same in UTF-16 (empty when the name is invalid)
    bool is_dir = false;
    std::uint64_t size = 0;      ///< bytes (files)
    std::string host_path;       ///< where the content is read from; empty for created directories
    std::int64_t mtime = 0;      ///< Unix seconds (UTC): modification
    std::int64_t atime = 0;      ///< Unix seconds: last access
    std::int64_t btime = 0;      ///< Unix seconds: creation (birth time, or mtime when the host has none)
    std::uint32_t btime_ns = 0;  ///< nanoseconds of btime (DIR_CrtTimeTenth)
    bool has_times = false;      ///< false for created directories: they get the creation time
    bool read_only = false;      ///< the source file has no write permission
    std::uint32_t parent = 0;    ///< index in SourceTree::nodes
    std::vector<std::uint32_t> children;  ///< indices, sorted by the UTF-8 bytes of the names
};

struct SourceTree {
    std::vector<TreeNode> nodes;  ///< nodes[0] is the image root
    std::vector<TreeProblem> problems;
    std::vector<std::string> warnings;  ///< skipped symlinks and special files, device names
    /// With ScanOptions::rename: (image path as the host names it, image path stored), in tree order.
    std::vector<std::pair<std::string, std::string>> renamed;
    std::uint64_t files = 0;
    std::uint64_t directories = 0;  ///< not counting the root
    std::uint64_t data_bytes = 0;

    /// "/a/b" path of node i in the image.
    std::string image_path(std::uint32_t i) const;
};

/// Reads the source trees. Directory listings are sorted by the UTF-8 bytes
/// of the names (never readdir order), so the result depends only on the
/// trees' content. Problems (every one, in path order): names FAT cannot hold
/// (long_name_problem), files of 4 GiB or more, names that differ only in case
/// in one directory (case_fold_key; also across sources merged into one
/// directory), a file and a directory of the same name from two sources,
/// paths past kMaxTreeDepth / kMaxPathBytes, unreadable files and
/// directories, symbolic links per `symlinks`. Devices, FIFOs and sockets are
/// skipped with a warning. Throws Error(usage) when a source is not a
/// directory or an image_dir is malformed.
SourceTree scan_tree(const ScanOptions& options);

/// Renames, in every directory, the children whose names FAT refuses or that
/// differ only in case from an earlier (UTF-8 byte order) sibling:
/// fat_safe_name(), then "~2", "~3"... before the extension until the name is
/// unique ignoring case. Names FAT accepts are kept, so the mapping depends
/// only on the directory's names. Appends each change to tree.renamed and
/// re-sorts the children.
void rename_for_fat(SourceTree& tree);

/// Checks the names of a tree built in memory the way scan_tree does (name
/// rules, case-only duplicates, depth, path length, file size) and appends
/// the problems. scan_tree calls it; tests call it on synthetic trees.
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

struct WriteOptions {
    std::int64_t creation_time = 0;     ///< Unix seconds for created directories (SOURCE_DATE_EPOCH or now)
    std::optional<std::int64_t> clamp;  ///< SOURCE_DATE_EPOCH: no timestamp is later than this
    bool local_time = false;            ///< FAT times in the host's local time zone instead of UTC
    bool dot_hidden = false;            ///< names starting with '.' get ATTR_HIDDEN
    /// The volume reads as zeros outside what format_volume wrote (a fresh
    /// sparse image): all-zero blocks of file data are left as holes.
    bool device_is_zeroed = true;
};

/// Writes the planned tree onto `volume`, which format_volume() has just
/// formatted with `layout` (and the label entry when the plan was made with
/// has_label). Writes FAT entries 0..next_free-1 into every FAT copy,
/// directory clusters (zero-filled to the cluster end), file data in large
/// sequential writes, and (FAT32) FSInfo free count and next free, primary
/// and backup. Timestamps: DIR_WrtDate/Time from mtime, DIR_CrtDate/Time/
/// TimeTenth from btime, DIR_LstAccDate from atime, each clamped to
/// options.clamp, in UTC (or local time), rounded down to 2 seconds.
/// Attributes: ARCHIVE on files, DIRECTORY on directories, READ_ONLY on
/// read-only files, HIDDEN per dot_hidden. Throws Error(io) naming the host
/// file when it cannot be read or no longer has the size scanned.
void write_population(io::BlockDevice& volume, const Layout& layout, const SourceTree& tree,
                      const PopulatePlan& plan, const WriteOptions& options);

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
