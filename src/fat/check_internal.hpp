// Shared state of the FAT checker passes (private to src/fat/check_*.cpp).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fsimg/check/cluster_bitmap.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat::detail {

/// One bit per cluster number (shared with the exFAT checker).
using Bitmap = check::ClusterBitmap;

inline constexpr std::size_t kMaxCrossLinks = 20;  ///< cross-links reported one by one
inline constexpr std::size_t kFirstLocations = 5;  ///< locations listed in an aggregated finding
inline constexpr unsigned kMaxDepth = check::kMaxDirectoryDepth;  ///< directory nesting walked
inline constexpr std::uint32_t kFatChunkEntries = 65536;

struct CrossLink {
    std::uint32_t cluster = 0;
    std::string second;  ///< the path that found the cluster already owned
    std::string first;   ///< the owner, resolved by a second walk
    bool second_is_dir = false;
};

struct Context {
    const io::BlockDevice& device;
    check::Findings& out;
    const CheckOptions& options;
    CheckSummary summary;
    BootRegion boot;
    std::unique_ptr<Volume> vol;
    bool truncated = false;
    bool root_ok = true;        ///< FAT32 BPB_RootClus is a cluster
    bool walk_complete = true;  ///< no directory was unreadable or beyond the depth limit

    Bitmap owned;      ///< claimed by a file or directory in the tree pass
    Bitmap walking;    ///< on the chain being claimed now
    Bitmap linked;     ///< some FAT entry links to it
    Bitmap allocated;  ///< its FAT entry is neither free nor bad (pass 2), for the lost-cluster pass

    std::vector<CrossLink> cross_links;
    std::uint64_t cross_link_count = 0;
    // Second walk that names the first owners of cross-linked clusters.
    bool resolving = false;
    std::unordered_map<std::uint32_t, std::string>* first_owner = nullptr;

    Context(const io::BlockDevice& d, check::Findings& f, const CheckOptions& o)
        : device(d), out(f), options(o) {}
    const Layout& layout() const { return *boot.layout; }
};

/// Location helpers.
check::Location at_sector(std::uint64_t sector, std::uint32_t bytes_per_sector, std::string object);
check::Location at_cluster(const Context& c, std::uint32_t cluster, std::string object);

/// "1,234 clusters (4 MiB)".
std::string clusters_text(const Context& c, std::uint64_t n);

/// Pass 1. Returns false when nothing more can be checked.
bool check_boot(Context& c);
/// Pass 2. Returns false when the FAT cannot be read.
bool check_fats(Context& c);
/// Pass 3 (and the second walk that names cross-link owners).
void check_tree(Context& c);
/// Part of pass 3: names of one directory (validity, duplicates, Windows
/// compatibility) and, for the root, the volume label against the boot sector.
void check_names(Context& c, const std::string& dir_path, const ParsedDirectory& d);
void check_labels(Context& c, const ParsedDirectory& root);
/// What fsck -y removes of the volume labels of directory `d` (LabelFix,
/// with entry indices of `d` for offsets): see fat/check.hpp.
struct LabelRepair {
    std::string_view code;
    std::vector<std::uint32_t> indices;
    std::string boot_label;  ///< BS_VolLab to write (11 bytes), empty: left
};
std::vector<LabelRepair> label_repairs(const Context& c, const ParsedDirectory& d, bool is_root);
/// The records of `d` whose short name is invalid (fat.name.invalid-short),
/// each with the short name that replaces it (CheckOptions::names): unique
/// against every short name of `d` and each other.
std::vector<std::pair<const DirRecord*, NameFix>> short_name_fixes(const std::string& dir_path,
                                                                   const ParsedDirectory& d);
/// "/DIR/" + name.
std::string child_path(const std::string& dir_path, const std::string& name);
/// Passes 4 and 5.
void check_summary(Context& c);

}  // namespace fsimg::fat::detail
