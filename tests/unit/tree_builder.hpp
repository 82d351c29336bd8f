// A host tree built in memory for the populate tests (FAT and exFAT), in
// place of source::scan_host_trees: add(parent, name, is_dir, size) -> index.
#pragma once

#include <cstdint>
#include <string>

#include "fsimg/source/tree.hpp"

namespace fsimg::test {

struct TreeBuilder {
    source::SourceTree t;
    /// `check` applies the filesystem's rules (fat:: or exfat::check_source_tree).
    explicit TreeBuilder(void (*check)(source::SourceTree&)) : check_(check) {
        source::TreeNode root;
        root.is_dir = true;
        t.nodes.push_back(root);
    }
    std::uint32_t add(std::uint32_t parent, const std::string& name, bool is_dir, std::uint64_t size = 0) {
        source::TreeNode n;
        n.name = name;
        n.is_dir = is_dir;
        n.size = size;
        n.parent = parent;
        const auto i = static_cast<std::uint32_t>(t.nodes.size());
        t.nodes.push_back(n);
        t.nodes[parent].children.push_back(i);
        (is_dir ? t.directories : t.files) += 1;
        t.data_bytes += size;
        return i;
    }
    /// The tree with the rules applied (children in the order added).
    source::SourceTree done() {
        check_(t);
        return t;
    }

private:
    void (*check_)(source::SourceTree&);
};

}  // namespace fsimg::test
