// Populating a new exFAT volume from host directory trees (mkfs --from).
//
// The same three steps as FAT (fat/populate.hpp), on the same host scan
// (source/tree.hpp):
//  1. scan_tree() reads the host trees and lists every offender up front
//     (exFAT name rules, case-only duplicates under the up-case table, depth,
//     path length, unreadable files, symbolic links per the policy).
//  2. plan_population() (pure) sizes every directory and assigns clusters
//     for a Layout, or returns every reason the tree does not fit.
//  3. write_population() writes the root's FAT chain, the allocation bitmap,
//     directory entry sets, file data and PercentInUse onto a volume
//     format_volume() has just written.
//
// Allocation: one ascending run of clusters right after the system objects
// (allocation bitmap, up-case table, root): the root's further clusters
// first (the root has no Stream Extension to say NoFatChain, so it is always
// FAT-chained [EXFAT §3.1.10, formats.md §2.4]; its run continues
// the one format gave it), then depth first in name order a directory's
// clusters followed by its children. Every file and subdirectory is
// contiguous and marked NoFatChain (GeneralSecondaryFlags 0x03), its FAT
// entries left 0; empty files have FirstCluster 0 and flags 0x01. Directories
// get ceil(entry bytes / cluster) clusters (at least one) and DataLength =
// ValidDataLength = those clusters' bytes (Stream Extension DataLength and
// ValidDataLength [EXFAT §7.6]; formats.md §2.5). The clusters
// used are exactly what exfat/cost.hpp predicts (tree_usage) and what
// `slack` reports for exFAT.
//
// Facts: docs/formats.md §2.4-2.8 (FAT, entry sets, bitmap,
// up-case table, timestamps), §5.1-5.2 (cost model).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fsimg/exfat/layout.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::exfat {

struct ScanOptions {
    std::vector<source::TreeSource> sources;
    source::SymlinkPolicy symlinks = source::SymlinkPolicy::skip;
    std::vector<std::filesystem::path> exclude;  ///< host paths left out (source::scan_host_trees)
};

/// Why a UTF-8 name cannot be an exFAT file name (invalid UTF-8, or
/// name_problem() of its UTF-16 form), or nullopt.
std::optional<std::string> utf8_name_problem(std::string_view utf8);

/// exFAT's storage rules (utf8_name_problem, upcase_key, no file-size limit,
/// Windows device names warned): what check_source_tree applies, and what
/// slack's analyzer charges a tree by.
const source::TreeRules& tree_rules();

/// Applies the exFAT rules to a tree (source::check_tree): utf8_name_problem,
/// names equal under upcase_key in one directory, no file-size limit (the
/// volume is the limit), Windows device names and names ending in a period
/// or a space warned (Windows cannot open them; the Linux exfat driver
/// strips a trailing period). Appends problems and warnings.
void check_source_tree(source::SourceTree& tree);

/// Reads the source trees (source::scan_host_trees), applies check_source_tree,
/// and orders the problems by path. Throws as source::scan_host_trees.
source::SourceTree scan_tree(const ScanOptions& options);

/// What a tree costs on an exFAT volume with clusters of `cluster_bytes`
/// (exfat/cost.hpp rules summed; the root's system entries counted).
struct TreeUsage {
    std::uint64_t data_clusters = 0;       ///< file data
    std::uint64_t directory_clusters = 0;  ///< every directory, the root's first cluster included
    std::uint64_t largest_directory_bytes = 0;
    std::uint64_t clusters() const noexcept { return data_clusters + directory_clusters; }
    /// Clusters populate allocates: all but the root's first, which format
    /// already did (what `slack` predicts for exFAT).
    std::uint64_t new_clusters() const noexcept { return clusters() - 1; }
};
TreeUsage tree_usage(const source::SourceTree& tree, std::uint32_t cluster_bytes);

/// Where each node goes; parallel to SourceTree::nodes.
struct NodePlan {
    std::uint32_t first_cluster = 0;  ///< 0 for empty files
    std::uint32_t clusters = 0;
    std::uint64_t entries = 0;  ///< directories: 32-byte entries written (the root's system entries included)
};

struct PopulatePlan {
    std::vector<NodePlan> nodes;
    /// Nodes owning clusters, by ascending first cluster (the root first).
    std::vector<std::uint32_t> allocation_order;
    std::uint64_t used_clusters = 0;  ///< clusters in use after population, system objects included
    TreeUsage usage;
};

/// Plans the tree on `layout` (as format_volume writes it: bitmap, up-case
/// table, then the root's first cluster). Returns every problem instead
/// when the tree has problems, a directory would pass 256 MiB (formats.md §2.5, §2.10),
/// the layout's root does not directly follow the up-case table, or the
/// clusters needed exceed the free ones ("needs X, the volume has Y").
/// Pure; throws only std::bad_alloc.
std::variant<PopulatePlan, std::vector<source::TreeProblem>> plan_population(const source::SourceTree& tree,
                                                                             const Layout& layout);

/// Writes the planned tree onto `volume`, which format_volume() has just
/// formatted with `layout`. Writes the root's FAT chain (the only chain
/// besides the system objects'), the allocation bitmap's leading bits (one
/// per used cluster), every directory (the root keeping the label, bitmap
/// and up-case entries format wrote, first), file data in large sequential
/// writes, and PercentInUse in the main and backup boot sectors (a field the
/// boot checksum skips). Entry sets: attributes DIRECTORY or ARCHIVE, plus
/// READ_ONLY for read-only files and HIDDEN per dot_hidden; Create from the
/// birth time, LastModified from mtime (both with 10 ms increments),
/// LastAccessed from mtime too (the host atime moves when populate reads
/// the file, which would make builds differ); each clamped to options.clamp, in UTC (UtcOffset
/// 0x80) or local time with its offset. Throws Error(io) naming the host file
/// when it cannot be read or no longer has the size scanned, and
/// Error(unsupported) when the root does not hold format's system entries.
void write_population(io::BlockDevice& volume, const Layout& layout, const source::SourceTree& tree,
                      const PopulatePlan& plan, const source::PopulateWriteOptions& options);

/// The smallest volume, a multiple of `granularity` bytes, on which
/// plan_layout(base with that volume_bytes) holds the tree with at least
/// `free_bytes` of free clusters left (cluster size base.cluster_bytes or
/// the default for each candidate). A LayoutRefusal when none up to 256 TiB
/// works.
std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const source::SourceTree& tree,
                                                                 const LayoutRequest& base,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity = 1 << 20);

}  // namespace fsimg::exfat
