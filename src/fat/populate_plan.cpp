// tree_usage, plan_population, volume_bytes_for_tree: the pure part of
// mkfs --from. Every count comes from fat/cost.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/units.hpp"
#include "fsimg/fat/cost.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/fat/structs.hpp"

namespace fsimg::fat {

namespace {

std::uint64_t child_entries(const SourceTree& tree, const TreeNode& dir) {
    std::uint64_t sum = 0;
    for (const std::uint32_t c : dir.children) sum += name_entry_count(tree.nodes[c].name16);
    return sum;
}

/// Entries directory `d` holds: its children's, plus "." and ".." (or, in
/// the root, the volume-label entry).
std::uint64_t directory_entries(const SourceTree& tree, std::uint32_t d, bool has_label) {
    const std::uint64_t children = child_entries(tree, tree.nodes[d]);
    return d == 0 ? children + (has_label ? 1 : 0) : subdirectory_entries(children);
}

std::string describe_clusters(std::uint64_t clusters, std::uint32_t cluster_bytes) {
    return fmt::format("{} ({} clusters of {})", core::format_size(clusters * cluster_bytes),
                       core::format_count(clusters), core::format_size(cluster_bytes));
}

/// Assigns the short names of one directory's children: names that are
/// short names already first (they must keep them), then generated ones.
void assign_short_names(const SourceTree& tree, const TreeNode& dir, std::vector<NodePlan>& plan) {
    ShortNameAllocator alloc;
    std::vector<std::uint32_t> need_generation;
    for (const std::uint32_t c : dir.children) {
        if (auto plain = plain_short_name(tree.nodes[c].name16); plain && alloc.reserve(plain->name)) {
            plan[c].short_name = plain->name;
            plan[c].nt_case = plain->nt_case;
            plan[c].lfn = false;
        } else {
            need_generation.push_back(c);
        }
    }
    for (const std::uint32_t c : need_generation) {
        plan[c].short_name = alloc.generate(tree.nodes[c].name16);
        plan[c].lfn = true;
    }
}

}  // namespace

TreeUsage tree_usage(const SourceTree& tree, FatType type, std::uint32_t cluster_bytes, bool has_label) {
    TreeUsage u;
    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        const TreeNode& n = tree.nodes[i];
        if (!n.is_dir) {
            u.data_clusters += file_clusters(n.size, cluster_bytes);
            continue;
        }
        const std::uint64_t entries = directory_entries(tree, i, has_label);
        u.largest_directory_entries = std::max(u.largest_directory_entries, entries);
        if (i == 0) {
            u.root_entries = entries;
            if (type != FatType::fat32) continue;  // the fixed root area costs no clusters
        }
        u.directory_clusters += directory_clusters(entries, cluster_bytes);
    }
    return u;
}

std::variant<PopulatePlan, std::vector<TreeProblem>> plan_population(const SourceTree& tree,
                                                                     const Layout& layout, bool has_label) {
    if (!tree.problems.empty()) return tree.problems;
    const std::uint32_t cb = layout.cluster_bytes();
    const bool fat32 = layout.type == FatType::fat32;
    std::vector<TreeProblem> problems;

    PopulatePlan plan;
    plan.usage = tree_usage(tree, layout.type, cb, has_label);
    plan.nodes.resize(tree.nodes.size());
    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        if (!tree.nodes[i].is_dir) continue;
        const std::uint64_t entries = directory_entries(tree, i, has_label);
        plan.nodes[i].entries = static_cast<std::uint32_t>(std::min<std::uint64_t>(entries, 0xFFFFFFFF));
        if (entries > kMaxDirectoryEntries) {
            problems.push_back(
                {tree.image_path(i),
                 fmt::format("the directory needs {} entries (LFN entries count); a FAT directory "
                             "holds at most {}",
                             core::format_count(entries), core::format_count(kMaxDirectoryEntries))});
        }
    }
    if (!fat32 && plan.usage.root_entries > layout.root_entry_count) {
        problems.push_back(
            {"/", fmt::format(
                      "the root directory needs {} entries (LFN{} entries count); the {} root holds {}: use "
                      "-t fat32, or put the files in a subdirectory",
                      core::format_count(plan.usage.root_entries), has_label ? " and volume-label" : "",
                      to_string(layout.type), core::format_count(layout.root_entry_count))});
    }
    const std::uint64_t needed = plan.usage.clusters();
    if (needed > layout.cluster_count) {
        problems.push_back(
            {"/", fmt::format("the tree needs {} ({} for data, {} for directories); the volume has "
                              "{} for files",
                              describe_clusters(needed, cb), core::format_count(plan.usage.data_clusters),
                              core::format_count(plan.usage.directory_clusters),
                              describe_clusters(layout.cluster_count, cb))});
    }
    if (fat32 && layout.root_cluster != 2) {
        problems.push_back({"/", fmt::format("BPB_RootClus is {}; populating needs the root at cluster 2",
                                             layout.root_cluster)});
    }
    if (!problems.empty()) return problems;

    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        if (tree.nodes[i].is_dir) assign_short_names(tree, tree.nodes[i], plan.nodes);
    }

    // One ascending run of clusters, depth first in name order.
    std::uint32_t next = 2;
    auto allocate = [&](std::uint32_t node, std::uint64_t clusters) {
        if (clusters == 0) return;
        plan.nodes[node].first_cluster = next;
        plan.nodes[node].clusters = static_cast<std::uint32_t>(clusters);
        plan.allocation_order.push_back(node);
        next += static_cast<std::uint32_t>(clusters);
    };
    if (fat32) allocate(0, directory_clusters(plan.nodes[0].entries, cb));
    source::visit_depth_first(tree, [&](std::uint32_t c) {
        const TreeNode& n = tree.nodes[c];
        allocate(c, n.is_dir ? directory_clusters(plan.nodes[c].entries, cb) : file_clusters(n.size, cb));
    });
    plan.used_clusters = next - 2;
    plan.next_free = std::uint64_t{next} <= std::uint64_t{layout.cluster_count} + 1 ? next : 0xFFFFFFFFu;
    return plan;
}

std::uint32_t root_entry_count_for_tree(const SourceTree& tree, bool has_label,
                                        std::uint32_t bytes_per_sector) {
    // The FAT12/16 root's entry count does not depend on the cluster size.
    const std::uint64_t need = tree_usage(tree, FatType::fat16, bytes_per_sector, has_label).root_entries;
    const std::uint64_t per_sector = bytes_per_sector / kDirEntrySize;
    const std::uint64_t most = 0xFFFF / per_sector * per_sector;
    return need <= 512 || need > most ? 512 : static_cast<std::uint32_t>(need);
}

std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const SourceTree& tree,
                                                                 const LayoutRequest& base, bool has_label,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity) {
    const std::uint64_t g = std::max<std::uint64_t>(granularity, base.bytes_per_sector);
    const std::uint64_t limit = kMaxTotalSectors * base.bytes_per_sector;
    std::uint64_t s =
        core::round_up(tree.data_bytes + free_bytes + (tree.files + tree.directories) * 96 + 65536, g);
    LayoutRefusal last{"no volume size was tried", {}};
    for (int iteration = 0; iteration < 400 && s <= limit; ++iteration) {
        LayoutRequest req = base;
        req.volume_bytes = s;
        auto planned = plan_layout(req);
        if (auto* refusal = std::get_if<LayoutRefusal>(&planned)) {
            last = *refusal;
            if (base.type) {
                const std::uint32_t cluster =
                    std::max(base.cluster_bytes.value_or(default_cluster_bytes(base.type, s).cluster_bytes),
                             base.bytes_per_sector);
                const auto range =
                    valid_volume_sizes(*base.type, cluster, base.bytes_per_sector, base.root_entry_count);
                if (range && range->min_bytes > s) {
                    // 16 clusters past the type's minimum, as fatgen103 advises
                    // (mtools' minfo aborts on FAT16 volumes of exactly 4,087).
                    s = core::round_up(range->min_bytes + 16ull * cluster, g);
                    continue;
                }
            }
            s = core::round_up(s + std::max(s / 8, g), g);
            continue;
        }
        const Layout& layout = std::get<Layout>(planned);
        const std::uint32_t cb = layout.cluster_bytes();
        const TreeUsage u = tree_usage(tree, layout.type, cb, has_label);
        if (layout.type != FatType::fat32 && u.root_entries > layout.root_entry_count) {
            return LayoutRefusal{fmt::format("the root directory needs {} entries; a {} root holds {}",
                                             u.root_entries, to_string(layout.type), layout.root_entry_count),
                                 {"-t fat32", "put the files in a subdirectory (--from DIR:/NAME)"}};
        }
        const std::uint64_t need = u.clusters() + core::div_ceil(free_bytes, cb);
        if (need <= layout.cluster_count) return s;
        s = core::round_up(s + std::max<std::uint64_t>((need - layout.cluster_count) * cb, g), g);
    }
    return LayoutRefusal{
        fmt::format("no volume size fits the tree ({} files, {}): {}", core::format_count(tree.files),
                    core::format_size(tree.data_bytes), last.reason),
        last.suggestions};
}

}  // namespace fsimg::fat
