// scan_tree, check_source_tree, rename_for_fat: the FAT rules on the host
// trees source/tree.hpp reads for mkfs --from.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/cost.hpp"
#include "fsimg/fat/populate.hpp"

namespace fsimg::fat {

const source::TreeRules& tree_rules() {
    static const std::string file_limit =
        fmt::format("a FAT file holds at most {} bytes (4 GiB - 1)", core::format_count(kMaxFileBytes));
    static const source::TreeRules rules = [] {
        source::TreeRules r;
        r.name_problem = &long_name_problem;
        r.case_key = &case_fold_key;
        r.reserved_name = &is_windows_device_name;
        r.max_file_bytes = kMaxFileBytes;
        r.file_limit = file_limit;
        r.case_note = "FAT names are case-insensitive";
        return r;
    }();
    return rules;
}

void check_source_tree(SourceTree& tree) { source::check_tree(tree, tree_rules()); }

void rename_for_fat(SourceTree& tree) {
    auto by_name = [&](std::uint32_t a, std::uint32_t b) { return tree.nodes[a].name < tree.nodes[b].name; };
    for (std::uint32_t d = 0; d < tree.nodes.size(); ++d) {  // parents come before their children
        if (!tree.nodes[d].is_dir) continue;
        std::set<std::u16string> used;
        std::vector<std::uint32_t> to_rename;
        for (const std::uint32_t c : tree.nodes[d].children) {
            const std::string& name = tree.nodes[c].name;
            if (!long_name_problem(name) && used.insert(case_fold_key(core::utf8_to_utf16(name))).second)
                continue;
            to_rename.push_back(c);
        }
        for (const std::uint32_t c : to_rename) {
            TreeNode& node = tree.nodes[c];
            const std::string base = fat_safe_name(node.name);
            std::string name = base;
            for (unsigned n = 2; !used.insert(case_fold_key(core::utf8_to_utf16(name))).second; ++n) {
                name = with_name_suffix(base, n);
            }
            const std::string parent = tree.image_path(d);
            const std::string prefix = parent == "/" ? "/" : parent + "/";
            tree.renamed.emplace_back(prefix + node.name, prefix + name);
            node.name = name;
            node.name16.clear();
        }
        std::sort(tree.nodes[d].children.begin(), tree.nodes[d].children.end(), by_name);
    }
}

SourceTree scan_tree(const ScanOptions& options) {
    if (options.symlinks == source::SymlinkPolicy::store)
        throw Error(ErrorCode::usage,
                    "--symlinks store is for NTFS; FAT has no symbolic links (skip, follow or error)");
    SourceTree tree = source::scan_host_trees(options.sources, options.symlinks, options.exclude);
    if (options.rename) rename_for_fat(tree);
    check_source_tree(tree);
    source::sort_problems(tree);
    return tree;
}

}  // namespace fsimg::fat
