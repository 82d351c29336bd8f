// scan_tree, tree_usage, plan_population, volume_bytes_for_tree: the pure
// part of exFAT mkfs --from (and its name rules on the host scan). Every
// count comes from exfat/cost.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/windows_names.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/populate.hpp"

namespace fsimg::exfat {

namespace {

/// 32-byte entries directory `d` holds: its children's entry sets, plus the
/// root's system entries (label, bitmap, up-case table).
std::uint64_t directory_entries(const source::SourceTree& tree, std::uint32_t d) {
    std::uint64_t sum = d == 0 ? kRootSystemEntries : 0;
    for (const std::uint32_t c : tree.nodes[d].children)
        sum += entry_set_entries(tree.nodes[c].name16.size());
    return sum;
}

std::string describe_clusters(std::uint64_t clusters, std::uint32_t cluster_bytes) {
    return fmt::format("{} ({} clusters of {})", core::format_size(clusters * cluster_bytes),
                       core::format_count(clusters), core::format_size(cluster_bytes));
}

}  // namespace

std::optional<std::string> utf8_name_problem(std::string_view utf8) {
    if (!core::is_valid_utf8(utf8)) return "the name is not valid UTF-8";
    return name_problem(core::utf8_to_utf16(utf8));
}

const source::TreeRules& tree_rules() {
    static const source::TreeRules rules = [] {
        source::TreeRules r;
        r.name_problem = &utf8_name_problem;
        r.case_key = &upcase_key;
        r.reserved_name = &core::is_windows_device_name;
        r.case_note = "exFAT names are case-insensitive";
        return r;
    }();
    return rules;
}

void check_source_tree(source::SourceTree& tree) {
    source::check_tree(tree, tree_rules());
    // exFAT holds a trailing period or space, but Windows strips both from
    // every name it is given, so it cannot open such a file, and the Linux
    // exfat driver strips trailing periods (exfat_striptail_len) unless
    // mounted with keep_last_dots; FAT refuses these names for the same
    // reason (fat::long_name_problem).
    for (std::uint32_t i = 1; i < tree.nodes.size(); ++i) {
        const source::TreeNode& n = tree.nodes[i];
        if (n.name16.empty()) continue;
        if (n.name16.back() == u'.') {
            tree.warnings.push_back(
                fmt::format("{}: \"{}\" ends with a period: Windows strips it and cannot "
                            "open the file, and the Linux exfat driver strips it too",
                            tree.image_path(i), n.name));
        } else if (n.name16.back() == u' ') {
            tree.warnings.push_back(
                fmt::format("{}: \"{}\" ends with a space: Windows strips it and cannot open the file",
                            tree.image_path(i), n.name));
        }
    }
}

source::SourceTree scan_tree(const ScanOptions& options) {
    if (options.symlinks == source::SymlinkPolicy::store)
        throw Error(ErrorCode::usage,
                    "--symlinks store is for NTFS; exFAT has no symbolic links (skip, follow or error)");
    source::SourceTree tree = source::scan_host_trees(options.sources, options.symlinks, options.exclude);
    check_source_tree(tree);
    source::sort_problems(tree);
    return tree;
}

TreeUsage tree_usage(const source::SourceTree& tree, std::uint32_t cluster_bytes) {
    TreeUsage u;
    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        const source::TreeNode& n = tree.nodes[i];
        if (!n.is_dir) {
            u.data_clusters += file_clusters(n.size, cluster_bytes);
            continue;
        }
        const std::uint64_t entries = directory_entries(tree, i);
        u.largest_directory_bytes = std::max(u.largest_directory_bytes, entries * kEntryBytes);
        u.directory_clusters += directory_clusters(entries, cluster_bytes);
    }
    return u;
}

std::variant<PopulatePlan, std::vector<source::TreeProblem>> plan_population(const source::SourceTree& tree,
                                                                             const Layout& layout) {
    if (!tree.problems.empty()) return tree.problems;
    const std::uint32_t cb = layout.cluster_bytes();
    std::vector<source::TreeProblem> problems;

    PopulatePlan plan;
    plan.usage = tree_usage(tree, cb);
    plan.nodes.resize(tree.nodes.size());
    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        if (!tree.nodes[i].is_dir) continue;
        plan.nodes[i].entries = directory_entries(tree, i);
        const std::uint64_t bytes = directory_clusters(plan.nodes[i].entries, cb) * cb;
        if (bytes > kMaxDirectoryBytes) {
            problems.push_back(
                {tree.image_path(i),
                 fmt::format("the directory needs {} of entries ({} entries); an exFAT directory holds at "
                             "most {}",
                             core::format_size(bytes), core::format_count(plan.nodes[i].entries),
                             core::format_size(kMaxDirectoryBytes))});
        }
    }
    const std::uint32_t system = layout.bitmap_clusters() + layout.upcase_clusters();
    if (layout.root_first_cluster != 2 + system) {
        problems.push_back({"/", fmt::format("the root directory starts at cluster {}; populating needs it "
                                             "right after the bitmap and up-case table (cluster {})",
                                             layout.root_first_cluster, 2 + system)});
    }
    const std::uint64_t free_clusters = std::uint64_t{layout.cluster_count} - layout.used_clusters();
    const std::uint64_t needed = plan.usage.new_clusters();
    if (needed > free_clusters) {
        problems.push_back(
            {"/", fmt::format("the tree needs {} ({} for data, {} for directories); the volume has "
                              "{} free",
                              describe_clusters(needed, cb), core::format_count(plan.usage.data_clusters),
                              core::format_count(plan.usage.directory_clusters - 1),
                              describe_clusters(free_clusters, cb))});
    }
    if (!problems.empty()) return problems;

    // One ascending run from the root's first cluster, depth first in name order.
    std::uint64_t next = layout.root_first_cluster;
    auto allocate = [&](std::uint32_t node, std::uint64_t clusters) {
        if (clusters == 0) return;
        plan.nodes[node].first_cluster = static_cast<std::uint32_t>(next);
        plan.nodes[node].clusters = static_cast<std::uint32_t>(clusters);
        plan.allocation_order.push_back(node);
        next += clusters;
    };
    allocate(0, directory_clusters(plan.nodes[0].entries, cb));
    source::visit_depth_first(tree, [&](std::uint32_t c) {
        const source::TreeNode& n = tree.nodes[c];
        allocate(c, n.is_dir ? directory_clusters(plan.nodes[c].entries, cb) : file_clusters(n.size, cb));
    });
    plan.used_clusters = next - 2;
    return plan;
}

std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const source::SourceTree& tree,
                                                                 const LayoutRequest& base,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity) {
    const std::uint64_t g = std::max<std::uint64_t>(granularity, base.bytes_per_sector);
    constexpr std::uint64_t kLimit = 256ull << 40;  // the largest volume Windows formats [KB140365]
    std::uint64_t s =
        core::round_up(std::max(tree.data_bytes + free_bytes + (tree.files + tree.directories) * 96 + 65536,
                                kMinVolumeBytes),
                       g);
    LayoutRefusal last{"no volume size was tried", {}};
    for (int iteration = 0; iteration < 400 && s <= kLimit; ++iteration) {
        LayoutRequest req = base;
        req.volume_bytes = s;
        const auto planned = plan_layout(req);
        if (const auto* refusal = std::get_if<LayoutRefusal>(&planned)) {
            last = *refusal;
            s = core::round_up(s + std::max(s / 8, g), g);
            continue;
        }
        const Layout& layout = std::get<Layout>(planned);
        const std::uint32_t cb = layout.cluster_bytes();
        const std::uint64_t need = tree_usage(tree, cb).new_clusters() + core::div_ceil(free_bytes, cb);
        const std::uint64_t have = std::uint64_t{layout.cluster_count} - layout.used_clusters();
        if (need <= have) return s;
        s = core::round_up(s + std::max<std::uint64_t>((need - have) * cb, g), g);
    }
    return LayoutRefusal{
        fmt::format("no volume size fits the tree ({} files, {}): {}", core::format_count(tree.files),
                    core::format_size(tree.data_bytes), last.reason),
        last.suggestions};
}

}  // namespace fsimg::exfat
