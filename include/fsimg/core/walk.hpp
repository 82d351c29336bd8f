// Helpers shared by the filesystem readers' walks: exact loop detection over
// cluster numbers, each directory visited once, and splitting a path inside
// an image into components.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fsimg::core {

/// The clusters a chain walk has visited, for exact loop detection: a hash
/// set while the walk is short, one bit per possible cluster once it passes
/// 65,536 clusters. `universe` bounds the bitmap (callers pass the FAT
/// entries that lie inside the image, so memory is bounded by the image, not
/// by a boot-sector field); numbers at or past it are never reported as seen
/// (their FAT entries cannot be read, so the walk stops there anyway).
class VisitedClusters {
public:
    explicit VisitedClusters(std::uint64_t universe) noexcept : universe_(universe) {}
    /// Marks n visited; true when it already was.
    bool visit(std::uint32_t n) {
        if (bits_.empty()) {
            if (set_.size() < kSetLimit) return !set_.insert(n).second;
            bits_.assign(static_cast<std::size_t>(universe_), false);
            for (const std::uint32_t k : set_) {
                if (k < bits_.size()) bits_[k] = true;
            }
            set_.clear();
        }
        if (n >= bits_.size()) return false;
        const bool was = bits_[n];
        bits_[n] = true;
        return was;
    }

private:
    static constexpr std::size_t kSetLimit = 65536;
    std::uint64_t universe_;
    std::unordered_set<std::uint32_t> set_;
    std::vector<bool> bits_;
};

/// The directories a tree walk has entered, by identity (FAT and exFAT: the
/// first cluster; NTFS: the MFT record number), so that every walk (ls -R,
/// extract, slack, dump, fsck) enters each directory once. An ancestor set
/// alone stops loops but not a DAG: a directory reachable through two
/// entries at each of 40 levels has 2^40 paths. Memory: one entry per
/// directory the image really holds, with the path it was first reached by.
class VisitedDirectories {
public:
    /// Marks directory `id` entered at `path`; false when it already was (the
    /// walk then skips this second path and says so, naming first_path()).
    bool enter(std::uint64_t id, std::string_view path) {
        return first_.emplace(id, std::string(path)).second;
    }
    /// The path `id` was first entered at ("" when it was not).
    const std::string& first_path(std::uint64_t id) const {
        static const std::string kNone;
        const auto it = first_.find(id);
        return it == first_.end() ? kNone : it->second;
    }
    std::size_t size() const noexcept { return first_.size(); }

private:
    std::unordered_map<std::uint64_t, std::string> first_;
};

/// The non-empty components of a path inside an image ("/a//b/" -> a, b).
/// Throws Error(usage) naming the path when a component is "." or "..".
std::vector<std::string_view> path_components(std::string_view path);

}  // namespace fsimg::core
