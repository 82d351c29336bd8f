// A host tree built in memory for the populate tests (FAT and exFAT), in
// place of io::scan_host_trees: add(parent, name, is_dir, size) -> index.
#pragma once

#include <cstdint>
#include <string>

#include "fsimg/io/host_tree.hpp"

namespace fsimg::test {

struct TreeBuilder {
    io::SourceTree t;
    /// `check` applies the filesystem's rules (fat:: or exfat::check_source_tree).
    explicit TreeBuilder(void (*check)(io::SourceTree&)) : check_(check) {
        io::TreeNode root;
        root.is_dir = true;
        t.nodes.push_back(root);
    }
    std::uint32_t add(std::uint32_t parent, const std::string& name, bool is_dir, std::uint64_t size = 0) {
        io::TreeNode n;
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
    io::SourceTree done() {
        check_(t);
        return t;
    }

private:
    void (*check_)(io::SourceTree&);
};

}  // namespace fsimg::test
