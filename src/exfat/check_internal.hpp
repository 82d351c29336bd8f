// Shared state of the exFAT checker passes (private to src/exfat/check_*.cpp).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fsimg/check/cluster_bitmap.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/exfat/volume.hpp"

namespace fsimg::exfat::detail {

using check::at_sector;

inline constexpr std::size_t kMaxCrossLinks = 20;  ///< cross-links reported one by one
inline constexpr std::size_t kFirstLocations = 5;  ///< locations listed in an aggregated finding

struct CrossLink {
    std::uint32_t cluster = 0;
    std::string second;  ///< the owner that found the cluster already claimed
    std::string first;   ///< the first owner, named by a second, silent walk
};

struct Context {
    const io::BlockDevice& device;
    check::Findings& out;
    const CheckOptions& options;
    CheckSummary summary;
    BootRegion boot;
    std::unique_ptr<Volume> vol;

    /// One bit per cluster number, claimed by an owner; empty (size 0) when
    /// the allocation bitmap does not lie inside the image.
    check::ClusterBitmap owned;
    bool ownership = false;  ///< `owned` is in use
    /// With CheckOptions::bitmap_fixes: the clusters claimed through entry
    /// sets whose SetChecksum fails (their FirstCluster or DataLength may be
    /// the damage), which no fix marks in use on that claim alone.
    check::ClusterBitmap doubtful;
    bool walk_complete = true;  ///< every directory read, every entry set recognized
    /// The allocation bitmap's clusters as claimed in pass 2 (empty: unusable).
    std::vector<ClusterRun> bitmap_runs;

    std::vector<CrossLink> cross_links;
    std::uint64_t cross_link_count = 0;
    bool resolving = false;  ///< the second walk: silent, names first owners
    std::unordered_map<std::uint32_t, std::string>* first_owner = nullptr;

    Context(const io::BlockDevice& d, check::Findings& f, const CheckOptions& o)
        : device(d), out(f), options(o) {}
    std::uint32_t bps() const { return boot.bytes_per_sector; }
};

/// Location helpers.
check::Location at_cluster(const Context& c, std::uint32_t cluster, std::string object);
/// "1,234 clusters (4 MiB)".
std::string clusters_text(const Context& c, std::uint64_t n);
/// "2, 3, 7, ..." (the first kFirstLocations of `v`, "..." when `total` is more).
std::string first_list(const std::vector<std::uint32_t>& v, std::uint64_t total);

}  // namespace fsimg::exfat::detail

namespace fsimg::exfat {

/// What check_tree found (CheckOptions::save_walk, reuse_walk).
struct WalkSnapshot {
    std::uint64_t files = 0, directories = 0;
    check::ClusterBitmap owned, doubtful;
    bool walk_complete = true;
    std::vector<detail::CrossLink> cross_links;
    std::uint64_t cross_link_count = 0;
    std::vector<check::Finding> findings;  ///< the walk's, in order
    /// Whether each collector was on during the walk, and what it received.
    bool collected_sets = false, collected_chains = false, collected_renames = false,
         collected_entries = false;
    std::vector<SetFix> sets;
    std::vector<ChainFix> chains;
    std::vector<RenameFix> renames;
    std::vector<EntryFix> entries;
};

}  // namespace fsimg::exfat

namespace fsimg::exfat::detail {

/// An allocation claimed for one owner (file, directory, system object).
struct Claim {
    std::vector<ClusterRun> runs;  ///< clusters the owner holds, in order
    std::uint64_t clusters = 0;
    bool broken = false;    ///< a problem was reported; size checks are skipped
    std::string_view code;  ///< the code of that problem (exfat.chain.loop ...), empty without one
    /// With a cross-link: how many of the owner's clusters come before the
    /// first one another owner claimed first.
    std::uint64_t shared_at = 0;
};
/// Claims `length` bytes from `first` (a NoFatChain run, or the FAT chain
/// followed to its end) for `owner`: reports loops, out-of-range links, bad
/// clusters, runs leaving the heap and cross-links, and chains too short or
/// too long for `length` when `check_size`. `what` names the owner in
/// messages ("the file", "the allocation bitmap").
Claim claim(Context& c, const std::string& owner, std::uint32_t first, std::uint64_t length,
            bool no_fat_chain, bool check_size = true);

/// Pass 1. Returns false when nothing more can be checked (c.vol not set).
bool check_boot(Context& c);
/// Pass 2: FatEntry[0], system entries of the root, the bitmap's and up-case
/// table's allocations; sizes c.owned.
void check_allocation(Context& c);
/// Pass 3 (and the second walk that names cross-link owners).
void check_tree(Context& c);
/// Passes 4 and 5.
void check_summary(Context& c);

}  // namespace fsimg::exfat::detail
