#include "fsimg/slack/cost_ntfs.hpp"

namespace fsimg::slack::ntfs {

namespace {
constexpr std::uint64_t clusters_of(std::uint64_t bytes, std::uint32_t c) noexcept {
    return (bytes + c - 1) / c;
}
}  // namespace

IndexGrowth::IndexGrowth(std::size_t name_units, bool in_block)
    : root_leaf_capacity_(index_root_capacity(name_units)),
      root_parent_capacity_(root_leaf_capacity_ > 8 + kIndexAllocationAttributes
                                ? root_leaf_capacity_ - 8 - kIndexAllocationAttributes
                                : 0) {
    if (in_block) {
        right_.emplace_back();
        right_bytes_.push_back(0);
        blocks_ = 1;
    }
}

void IndexGrowth::add(std::uint64_t entry_bytes) {
    if (right_.empty()) {
        insert_root(entry_bytes);
    } else {
        insert(0, entry_bytes);
    }
}

void IndexGrowth::insert_root(std::uint64_t bytes) {
    const std::uint64_t cap = right_.empty() ? root_leaf_capacity_ : root_parent_capacity_;
    if (root_bytes_ + bytes <= cap) {
        root_.push_back(bytes);
        root_bytes_ += bytes;
        return;
    }
    // ntfs_ir_reparent: the root's entries move to a new block one level up.
    right_.push_back(std::move(root_));
    right_bytes_.push_back(root_bytes_);
    root_.clear();
    root_bytes_ = 0;
    ++blocks_;
    insert(right_.size() - 1, bytes);
}

void IndexGrowth::insert(std::size_t level, std::uint64_t bytes) {
    const std::uint64_t cap = level == 0 ? kIndexBlockCapacity : kIndexNodeCapacity;
    if (right_bytes_[level] + bytes > cap && !right_[level].empty()) {
        // ntfs_ib_split: the median goes up, the entries after it to a new block.
        std::vector<std::uint64_t>& node = right_[level];
        const std::size_t median = node.size() / 2;
        const std::uint64_t up = node[median] + (level == 0 ? 8 : 0);
        std::vector<std::uint64_t> tail(node.begin() + std::ptrdiff_t(median) + 1, node.end());
        std::uint64_t tail_bytes = 0;
        for (const auto b : tail) tail_bytes += b;
        node = std::move(tail);
        right_bytes_[level] = tail_bytes;
        ++blocks_;
        if (level + 1 < right_.size()) {
            insert(level + 1, up);
        } else {
            insert_root(up);
        }
    }
    right_[level].push_back(bytes);
    right_bytes_[level] += bytes;
}

std::uint64_t fixed_overhead_clusters(std::uint64_t volume_bytes, std::uint32_t c) noexcept {
    std::uint64_t n = 0;
    n += clusters_of(::fsimg::ntfs::kBootBytes, c);                                // $Boot
    n += initial_mft_bytes(c) / c;                                                 // $MFT
    n += 1;                                                                        // $MFT $BITMAP
    n += clusters_of(4096, c);                                                     // $MFTMirr
    n += clusters_of(::fsimg::ntfs::logfile_bytes_for(volume_bytes - 512, c), c);  // $LogFile
    n += clusters_of((cluster_count(volume_bytes, c) + 7) / 8, c);                 // $Bitmap
    n += clusters_of(::fsimg::ntfs::kAttrDefBytes, c);                             // $AttrDef
    n += clusters_of(262396, c);                                                   // $Secure:$SDS
    n += clusters_of(::fsimg::ntfs::kUpcaseBytes, c);                              // $UpCase
    n += clusters_of(kIndexBlockBytes, c);                                         // root INDX block
    n += clusters_of(4140, c);                                                     // root security descriptor
    return n;
}

std::uint32_t mkntfs_default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    std::uint32_t c = 4096;
    while (cluster_count(volume_bytes, c) > kMaxClusters && c < kMaxClusterBytes) c *= 2;
    return c;
}

}  // namespace fsimg::slack::ntfs
