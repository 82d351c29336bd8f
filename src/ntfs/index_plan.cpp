// grow_index, directory_index_room, directory_index, mft_growth. See
// include/fsimg/ntfs/index_plan.hpp.
#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/names.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

/// The tree being grown: the root, the blocks, and the rightmost block of
/// each level (leaves first), where every new entry goes.
class Growth {
public:
    Growth(std::span<const std::uint32_t> bytes, const IndexRoom& room) : bytes_(bytes), room_(room) {}

    void start_in_block() {
        shape_.blocks.emplace_back();
        block_bytes_.push_back(0);
        shape_.root.children.push_back(0);
        right_.push_back(0);
    }

    void add(std::uint32_t e) {
        if (right_.empty()) {
            insert_root(e, 0);
        } else {
            insert(0, e, 0);
        }
    }

    IndexShape take() { return std::move(shape_); }

private:
    /// Bytes of entry e in a node of `level` (0: leaves; above, with a VCN).
    std::uint64_t size(std::uint32_t e, bool leaf) const { return bytes_[e] + (leaf ? 0 : 8); }

    std::uint32_t new_block(IndexNode node, std::uint64_t bytes) {
        const auto b = static_cast<std::uint32_t>(shape_.blocks.size());
        shape_.blocks.push_back(std::move(node));
        block_bytes_.push_back(bytes);
        return b;
    }

    /// Appends e (its sub-node the current end child, the end child becoming
    /// `right` when not a leaf) to the root; moves the root's entries to a new
    /// block one level down when they no longer fit (ntfs_ir_reparent).
    void insert_root(std::uint32_t e, std::uint32_t right) {
        const bool leaf = right_.empty();
        const std::int64_t cap = leaf ? room_.root_leaf : room_.root_parent;
        if (std::int64_t(root_bytes_ + size(e, leaf)) <= cap) {
            append(shape_.root, e, right, leaf);
            root_bytes_ += size(e, leaf);
            return;
        }
        const std::uint32_t b = new_block(std::move(shape_.root), root_bytes_);
        shape_.root = IndexNode{{}, {b}};
        root_bytes_ = 0;
        right_.push_back(b);
        insert(right_.size() - 1, e, right);
    }

    /// Appends e to the rightmost block of `level`, splitting it first when
    /// e does not fit (ntfs_ib_split): entries [0, n/2) stay, entry n/2 goes
    /// up with this block as its sub-node, the rest move to a new block.
    void insert(std::size_t level, std::uint32_t e, std::uint32_t right) {
        const bool leaf = level == 0;
        const std::uint64_t cap = leaf ? room_.block_leaf : room_.block_node;
        const std::uint64_t need = size(e, leaf);
        if (need > cap) {
            throw Error(ErrorCode::unsupported,
                        fmt::format("an index entry of {} bytes does not fit an index block", need));
        }
        std::uint32_t b = right_[level];
        if (block_bytes_[b] + need > cap && !shape_.blocks[b].entries.empty()) {
            IndexNode& node = shape_.blocks[b];
            const std::size_t median = node.entries.size() / 2;
            const std::uint32_t up = node.entries[median];
            IndexNode tail;
            tail.entries.assign(node.entries.begin() + std::ptrdiff_t(median) + 1, node.entries.end());
            if (!leaf)
                tail.children.assign(node.children.begin() + std::ptrdiff_t(median) + 1, node.children.end());
            node.entries.resize(median);
            if (!leaf) node.children.resize(median + 1);
            std::uint64_t kept = 0, moved = 0;
            for (const std::uint32_t k : node.entries) kept += size(k, leaf);
            for (const std::uint32_t k : tail.entries) moved += size(k, leaf);
            block_bytes_[b] = kept;
            const std::uint32_t nb = new_block(std::move(tail), moved);
            right_[level] = nb;
            if (level + 1 < right_.size()) {
                insert(level + 1, up, nb);
            } else {
                insert_root(up, nb);
            }
            b = nb;
        }
        append(shape_.blocks[b], e, right, leaf);
        block_bytes_[b] += need;
    }

    static void append(IndexNode& node, std::uint32_t e, std::uint32_t right, bool leaf) {
        node.entries.push_back(e);
        if (!leaf) node.children.push_back(right);
    }

    std::span<const std::uint32_t> bytes_;
    IndexRoom room_;
    IndexShape shape_;
    std::uint64_t root_bytes_ = 0;
    std::vector<std::uint64_t> block_bytes_;
    std::vector<std::uint32_t> right_;
};

}  // namespace

bool name_collates_before(std::u16string_view a, std::u16string_view b) noexcept {
    const int c = collate_file_names(a, b);
    return c != 0 ? c < 0 : a < b;
}

IndexShape grow_index(std::span<const std::uint32_t> entry_bytes, const IndexRoom& room, bool in_block) {
    Growth g(entry_bytes, room);
    if (in_block) g.start_in_block();
    for (std::uint32_t e = 0; e < entry_bytes.size(); ++e) g.add(e);
    return g.take();
}

namespace {

/// Bytes of the base record before the index root's entries: header and
/// fixups, $STANDARD_INFORMATION, the $FILE_NAMEs (or, with an extension
/// record, the $ATTRIBUTE_LIST), $INDEX_ROOT "$I30" without entries or end
/// entry (24 + 8 + 16 + 16), the end marker.
std::int64_t base_fixed(std::uint32_t record_bytes, std::size_t name_units, std::size_t dos_units,
                        IndexStorage storage) noexcept {
    const std::int64_t names = storage == IndexStorage::extension
                                   ? 24 + std::int64_t{extension_attribute_list_bytes(dos_units != 0)}
                                   : std::int64_t{file_name_attribute_bytes(name_units)} +
                                         (dos_units ? std::int64_t{file_name_attribute_bytes(dos_units)} : 0);
    return std::int64_t{first_attribute_offset(record_bytes)} + 24 + std::int64_t{kStandardInformationSize} +
           names + 24 + 8 + 32 + 8;
}

/// Bytes the base record spends on $INDEX_ALLOCATION (64 + 8 + 24 of
/// runlist) and $BITMAP "$I30" once the index has blocks.
std::int64_t allocation_bytes(std::uint64_t bitmap_bytes, IndexStorage storage) noexcept {
    switch (storage) {
        case IndexStorage::in_record:
            return 64 + 8 + 24 + 24 + 8 + std::int64_t(r8(bitmap_bytes));
        case IndexStorage::bitmap_outside:
            return 64 + 8 + 24 + 64 + 8 + 8;
        case IndexStorage::extension:
            return 0;
    }
    return 0;
}

}  // namespace

IndexRoom directory_index_room(std::uint32_t record_bytes, std::uint32_t block_bytes, std::size_t name_units,
                               std::uint64_t bitmap_bytes, std::size_t dos_units,
                               IndexStorage storage) noexcept {
    const std::int64_t free = std::int64_t{record_bytes} - kIndexRootReserve -
                              base_fixed(record_bytes, name_units, dos_units, storage);
    IndexRoom room;
    room.root_leaf = free - 16;
    room.root_parent = std::max<std::int64_t>(free - 24 - allocation_bytes(bitmap_bytes, storage), 0);
    // A block: its header and update sequence array (0x28 + 2 * (1 +
    // block / 512), to 8), as populate_write lays it out.
    const std::uint32_t header = static_cast<std::uint32_t>(r8(0x28 + 2 * (1 + block_bytes / 512)));
    room.block_leaf = block_bytes - header - 16;
    room.block_node = block_bytes - header - 24;
    return room;
}

bool index_storage_fits(std::uint32_t record_bytes, std::size_t name_units, std::uint64_t bitmap_bytes,
                        std::size_t dos_units, IndexStorage storage) noexcept {
    const std::int64_t free = std::int64_t{record_bytes} - kIndexRootReserve -
                              base_fixed(record_bytes, name_units, dos_units, storage);
    if (free - 24 - allocation_bytes(bitmap_bytes, storage) < 0) return false;
    if (storage != IndexStorage::extension) return true;
    const std::int64_t extension = std::int64_t{first_attribute_offset(record_bytes)} +
                                   file_name_attribute_bytes(name_units) +
                                   (dos_units ? std::int64_t{file_name_attribute_bytes(dos_units)} : 0) +
                                   allocation_bytes(0, IndexStorage::bitmap_outside) + 8;
    return extension <= std::int64_t{record_bytes};
}

IndexShape directory_index(std::span<const std::uint32_t> entry_bytes, std::uint32_t record_bytes,
                           std::uint32_t block_bytes, std::size_t name_units, bool root,
                           std::size_t dos_units) {
    for (const IndexStorage storage :
         {IndexStorage::in_record, IndexStorage::bitmap_outside, IndexStorage::extension}) {
        std::uint64_t bitmap = 8;
        for (int tries = 0;; ++tries) {
            IndexShape s = grow_index(
                entry_bytes,
                directory_index_room(record_bytes, block_bytes, name_units, bitmap, dos_units, storage),
                root);
            const std::uint64_t need = index_bitmap_bytes(s.blocks.size());
            if (need > bitmap && tries < 64 && storage == IndexStorage::in_record) {
                bitmap = need;
                continue;
            }
            if (s.blocks.empty() || index_storage_fits(record_bytes, name_units, need, dos_units, storage)) {
                s.storage = s.blocks.empty() ? IndexStorage::in_record : storage;
                return s;
            }
            break;
        }
    }
    throw Error(ErrorCode::unsupported,
                fmt::format("a directory index does not fit a {}-byte MFT record with an extension record "
                            "({} entries, a name of {} units)",
                            record_bytes, entry_bytes.size(), name_units));
}

MftGrowth mft_growth(std::uint64_t last_record, std::uint32_t record_bytes, std::uint32_t cluster_bytes,
                     std::uint64_t initial_clusters, std::uint64_t bitmap_clusters) noexcept {
    MftGrowth g;
    const std::uint64_t have = initial_clusters * cluster_bytes;
    const std::uint64_t need = last_record * record_bytes;
    std::uint64_t bytes = have;
    if (need > have) {
        const std::uint64_t step = std::max<std::uint64_t>(16 * std::uint64_t{record_bytes}, cluster_bytes);
        bytes = have + (need - have + step - 1) / step * step;
    }
    g.records = bytes / record_bytes;
    g.mft_clusters = (bytes + cluster_bytes - 1) / cluster_bytes - initial_clusters;
    g.bitmap_bytes = (g.records + 63) / 64 * 8;
    const std::uint64_t bc = (g.bitmap_bytes + cluster_bytes - 1) / cluster_bytes;
    g.bitmap_clusters = bc > bitmap_clusters ? bc - bitmap_clusters : 0;
    return g;
}

std::vector<std::byte> index_block_bitmap(std::size_t blocks) {
    std::vector<std::byte> bitmap(index_bitmap_bytes(blocks));
    for (std::size_t b = 0; b < blocks; ++b) bitmap[b / 8] |= std::byte(1u << (b % 8));
    return bitmap;
}

std::vector<std::byte> index_node_bytes(const std::vector<std::vector<std::byte>>& entries,
                                        const IndexNode& node, std::uint32_t vcns_per_block) {
    std::vector<std::byte> out;
    for (std::size_t k = 0; k < node.entries.size(); ++k) {
        const auto& e = entries[node.entries[k]];
        const auto bytes = node.children.empty() ? e
                                                 : index_entry_with_sub_node(
                                                       e, std::uint64_t{node.children[k]} * vcns_per_block);
        out.insert(out.end(), bytes.begin(), bytes.end());
    }
    const auto end = node.children.empty()
                         ? build_end_index_entry()
                         : build_end_index_entry(std::uint64_t{node.children.back()} * vcns_per_block);
    out.insert(out.end(), end.begin(), end.end());
    return out;
}

}  // namespace fsimg::ntfs
