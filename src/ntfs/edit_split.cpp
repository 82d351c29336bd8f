// New $I30 entries into a directory whose leaves are full: the nodes on
// their way split, copy on write, and the record switches to the new tree in
// one write. See include/fsimg/ntfs/edit.hpp (plan_split).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "edit_internal.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

// Node headers [FLATCAP attributes/index_root, concepts/index_record], formats.md §3.8.
constexpr std::size_t kSplitRootNode = 0x10;                    // the node header in an $INDEX_ROOT value
constexpr std::size_t kSplitBlockNode = 0x18;                   // the node header in an INDX block
constexpr std::size_t kEntryLength = 0x08, kEntryFlags = 0x0C;  // in an index entry
constexpr std::uint16_t kSplitHasSubnode = 0x01;

/// One node of the tree being changed. Entries index the pool (each without
/// a sub-node VCN); children are node ids, entries.size() + 1 of them, or
/// none for a leaf.
struct SplitNode {
    std::optional<std::uint64_t> block;  ///< where it lies now; nullopt: the root, or made here
    bool loaded = false;
    bool changed = false;
    std::vector<std::uint32_t> entries;
    std::vector<std::uint32_t> children;
};

/// Thrown inside plan_split for "this tree is not for an in-place split";
/// the caller rewrites the index instead.
struct NoSplit {};

}  // namespace

std::optional<Editor::IndexSplit> Editor::plan_split(std::uint64_t dir, std::vector<IndexKey> keys,
                                                     const std::vector<Extent>& taken) const {
    const auto before = [&](std::u16string_view a, std::u16string_view b) {
        const int c = upcase_.collate(a, b);
        return c != 0 ? c < 0 : a < b;
    };
    const Record d = read_record(dir);
    const MftRecord& r = d.parsed;
    if (!r.is_directory() || r.header.base_record != 0 || r.find(AttrType::attribute_list) != nullptr)
        return std::nullopt;
    const Attribute* ir = r.find(AttrType::index_root, u"$I30");
    const Attribute* ia = r.find(AttrType::index_allocation, u"$I30");
    const Attribute* bm = r.find(AttrType::bitmap, u"$I30");
    if (ir == nullptr || ir->non_resident || ia == nullptr || !ia->non_resident || bm == nullptr ||
        bm->non_resident || ia->initialized_size != ia->data_size || ia->first_vcn != Vcn{0})
        return std::nullopt;
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    try {
        const IndexRoot root_header = decode_index_root(ir->value);
        const std::uint32_t block_bytes = root_header.index_block_bytes;
        if (block_bytes < 512 || block_bytes > 65536 || (block_bytes & (block_bytes - 1)) != 0)
            return std::nullopt;
        const std::uint32_t per = index_vcns_per_block(vol_, block_bytes);
        vol_.check_runs(*ia);
        for (const MappedRun& m : ia->runs)
            if (!m.lcn) return std::nullopt;
        const std::uint64_t slots_now = ia->data_size / block_bytes;
        const std::vector<std::byte>& in_use = bm->value;
        const auto used = [&](std::uint64_t b) {
            return b / 8 < in_use.size() && (std::to_integer<unsigned>(in_use[b / 8]) >> (b % 8)) & 1u;
        };

        // The tree, read as far as the keys' paths go.
        std::vector<std::vector<std::byte>> pool;
        std::vector<std::u16string> names;
        std::vector<SplitNode> nodes(1);
        nodes[0].loaded = true;
        std::set<std::uint64_t> reached;
        const auto take = [&](SplitNode& node, std::span<const std::byte> span, bool has_children) {
            const std::vector<IndexEntry> entries = decode_index_entries(span, true);
            const bool parent = !entries.empty() && (entries.back().flags & kSplitHasSubnode);
            if (has_children != parent) throw NoSplit{};
            for (const IndexEntry& e : entries) {
                if (((e.flags & kSplitHasSubnode) != 0) != parent) throw NoSplit{};
                if (parent) {
                    if (!e.child_vcn || *e.child_vcn % per != 0) throw NoSplit{};
                    const std::uint64_t b = *e.child_vcn / per;
                    if (b >= slots_now || !used(b) || !reached.insert(b).second) throw NoSplit{};
                    node.children.push_back(static_cast<std::uint32_t>(nodes.size()));
                    SplitNode child;
                    child.block = b;
                    nodes.push_back(std::move(child));  // `node` may move: no use of it below
                }
                if (e.last()) break;
                if (!e.file_name) throw NoSplit{};
                // Without the sub-node VCN (the last 8 bytes of a parent's entry).
                const std::size_t vcn_bytes = parent ? 8 : 0;
                if (e.length < 16 + vcn_bytes) throw NoSplit{};
                std::vector<std::byte> raw(span.begin() + e.offset,
                                           span.begin() + e.offset + (e.length - vcn_bytes));
                if (parent) {
                    core::store_le16(raw, kEntryLength, static_cast<std::uint16_t>(raw.size()));
                    core::store_le16(raw, kEntryFlags, e.flags & ~kSplitHasSubnode);
                }
                pool.push_back(std::move(raw));
                names.push_back(e.file_name->name);
            }
        };
        // A node's entries and children from its bytes (take may grow `nodes`).
        const auto fill = [&](std::uint32_t id, std::span<const std::byte> node, bool has_children) {
            SplitNode scratch;
            const std::size_t first = pool.size();
            take(scratch, node, has_children);
            for (std::size_t k = first; k < pool.size(); ++k)
                scratch.entries.push_back(static_cast<std::uint32_t>(k));
            nodes[id].entries = std::move(scratch.entries);
            nodes[id].children = std::move(scratch.children);
            nodes[id].loaded = true;
        };
        fill(0, std::span(ir->value).subspan(kSplitRootNode), (root_header.node_flags & 1u) != 0);
        if (nodes[0].children.empty()) return std::nullopt;  // the first block is plan_index's
        const auto load = [&](std::uint32_t id) {
            if (nodes[id].loaded) return;
            std::vector<std::byte> block(block_bytes);
            vol_.read_stream(*ia, *nodes[id].block * block_bytes, block);
            if (verify_and_remove_fixups(block)) throw NoSplit{};
            fill(id, std::span(block).subspan(kSplitBlockNode),
                 (std::to_integer<unsigned>(block[detail::kNodeFlags]) & 1u) != 0);
        };

        // The room: a block's entries, end entry included; the root's while
        // the record keeps kIndexRootReserve bytes free beside a runlist and
        // $BITMAP a little larger than now (the record is checked at the end).
        const std::int64_t block_room =
            directory_index_room(vol_.geometry().mft_record_bytes, block_bytes, 1, 8).block_leaf +
            detail::kEndEntry;
        const std::int64_t other = std::int64_t{r.header.bytes_in_use} - ir->length - ia->length - bm->length;
        const std::int64_t root_room =
            std::int64_t{r.header.bytes_allocated} - other - detail::kRootFixed - kIndexRootReserve -
            (detail::kAllocationFixed + static_cast<std::int64_t>(r8(ia->length - ia->runlist_offset + 16))) -
            (detail::kBitmapFixed + static_cast<std::int64_t>(r8(in_use.size() + 8)));
        const auto node_bytes = [&](const SplitNode& n) {
            const bool parent = !n.children.empty();
            std::int64_t sum = parent ? 24 : 16;
            for (const std::uint32_t e : n.entries)
                sum += static_cast<std::int64_t>(pool[e].size()) + (parent ? 8 : 0);
            return sum;
        };

        for (const IndexKey& k : keys) {
            pool.push_back(build_file_name_index_entry(k.file, k.key));
            names.push_back(k.name);
            const auto entry = static_cast<std::uint32_t>(pool.size() - 1);
            // Down to the leaf, the path kept: (node, child position).
            std::vector<std::pair<std::uint32_t, std::size_t>> path;
            std::uint32_t at = 0;
            for (;;) {
                if (path.size() > kMaxIndexDepth) throw NoSplit{};
                load(at);
                const SplitNode& n = nodes[at];
                const auto pos = static_cast<std::size_t>(
                    std::find_if(n.entries.begin(), n.entries.end(),
                                 [&](std::uint32_t e) { return before(k.name, names[e]); }) -
                    n.entries.begin());
                if (n.children.empty()) {
                    nodes[at].entries.insert(nodes[at].entries.begin() + static_cast<std::ptrdiff_t>(pos),
                                             entry);
                    nodes[at].changed = true;
                    break;
                }
                path.emplace_back(at, pos);
                at = n.children[pos];
            }
            // Up from the leaf while a node is past its room.
            for (;;) {
                SplitNode& n = nodes[at];
                const std::int64_t bytes = node_bytes(n);
                if (at == 0) {
                    if (bytes <= root_room) break;
                    if (n.entries.empty()) throw NoSplit{};  // not even an end entry fits
                    // The root's entries to a new block below it.
                    SplitNode down;
                    down.loaded = down.changed = true;
                    down.entries = std::move(n.entries);
                    down.children = std::move(n.children);
                    nodes.push_back(std::move(down));
                    const auto id = static_cast<std::uint32_t>(nodes.size() - 1);
                    nodes[0].entries.clear();
                    nodes[0].children = {id};
                    nodes[0].changed = true;
                    path = {{0, 0}};
                    at = id;
                    continue;
                }
                if (bytes <= block_room) break;
                // Split where half the bytes lie: entries before `m` to a new
                // node (the left), entry m up, the rest stay.
                const bool parent = !n.children.empty();
                std::int64_t sum = 0;
                std::size_t m = 0;
                for (; m + 1 < n.entries.size(); ++m) {
                    sum += static_cast<std::int64_t>(pool[n.entries[m]].size()) + (parent ? 8 : 0);
                    if (2 * sum >= bytes) break;
                }
                if (n.entries.size() > 2) m = std::clamp<std::size_t>(m, 1, n.entries.size() - 2);
                SplitNode left;
                left.loaded = left.changed = true;
                left.entries.assign(n.entries.begin(), n.entries.begin() + static_cast<std::ptrdiff_t>(m));
                if (parent)
                    left.children.assign(n.children.begin(),
                                         n.children.begin() + static_cast<std::ptrdiff_t>(m + 1));
                const std::uint32_t up = n.entries[m];
                n.entries.erase(n.entries.begin(), n.entries.begin() + static_cast<std::ptrdiff_t>(m + 1));
                if (parent)
                    n.children.erase(n.children.begin(),
                                     n.children.begin() + static_cast<std::ptrdiff_t>(m + 1));
                n.changed = true;
                if (node_bytes(left) > block_room || node_bytes(nodes[at]) > block_room) throw NoSplit{};
                nodes.push_back(std::move(left));
                const auto left_id = static_cast<std::uint32_t>(nodes.size() - 1);
                if (path.empty()) throw NoSplit{};
                const auto [p, pos] = path.back();
                path.pop_back();
                SplitNode& q = nodes[p];
                q.entries.insert(q.entries.begin() + static_cast<std::ptrdiff_t>(pos), up);
                q.children.insert(q.children.begin() + static_cast<std::ptrdiff_t>(pos), left_id);
                q.changed = true;
                at = p;
            }
        }

        // A node whose child moved is rewritten too: mark up from the leaves.
        const std::function<bool(std::uint32_t)> mark = [&](std::uint32_t id) -> bool {
            SplitNode& n = nodes[id];
            if (!n.loaded) return false;
            bool any = n.changed;
            for (const std::uint32_t c : n.children) any = mark(c) || any;
            nodes[id].changed = any;
            return any;
        };
        (void)mark(0);

        // Blocks for the nodes written: free ones now, then past the end.
        std::vector<std::uint32_t> placed;
        for (std::uint32_t id = 1; id < nodes.size(); ++id)
            if (nodes[id].changed) placed.push_back(id);
        std::map<std::uint32_t, std::uint64_t> block_of;
        std::vector<std::byte> bitmap = in_use;
        const auto set_bit = [&](std::uint64_t b, bool on) {
            if (b / 8 >= bitmap.size()) bitmap.resize(index_bitmap_bytes(b + 1));
            const auto bit = static_cast<unsigned>(1u << (b % 8));
            const unsigned v = std::to_integer<unsigned>(bitmap[b / 8]);
            bitmap[b / 8] = std::byte(static_cast<std::uint8_t>(on ? (v | bit) : (v & ~bit)));
        };
        std::uint64_t slot = 0;
        for (const std::uint32_t id : placed) {
            while (slot < slots_now && used(slot)) ++slot;
            block_of[id] = slot++;
        }
        for (std::uint32_t id = 1; id < nodes.size(); ++id)
            if (nodes[id].changed && nodes[id].block) set_bit(*nodes[id].block, false);
        for (const auto& [id, b] : block_of) set_bit(b, true);
        // An index that grows grows by an eighth more blocks than it needs
        // (zeroed, free in its $BITMAP): the next splits take those, so
        // $INDEX_ALLOCATION keeps few runs while a directory fills.
        std::uint64_t slots = std::max(slots_now, slot);
        if (slots > slots_now) slots = std::max(slots, slots_now + slots_now / 8);
        bitmap.resize(std::max<std::size_t>(bitmap.size(), index_bitmap_bytes(slots)));

        IndexSplit plan;
        plan.block_bytes = block_bytes;
        plan.allocation = *ia;
        Attribute& a = plan.allocation;
        const std::uint64_t size = slots * block_bytes;
        plan.zero_from = slot;
        plan.zero_blocks = slots - std::max(slots_now, slot);
        std::vector<DataRun> runs;
        for (const MappedRun& m : ia->runs)
            runs.push_back(DataRun{m.length, static_cast<std::uint64_t>(*m.lcn)});
        std::uint64_t clusters = ia->allocated_size / cb;
        if (size > ia->allocated_size) {
            const std::uint64_t need = (size - ia->allocated_size + cb - 1) / cb;
            // Right after the last run when those clusters are free (as ntfs-3g
            // allocates from the attribute's last LCN), else the first free.
            const MappedRun& last = ia->runs.back();
            const std::uint64_t next = static_cast<std::uint64_t>(*last.lcn) + last.length;
            std::vector<Extent> more;
            std::vector<Extent> head = taken;  // the free run of `need` first from `next`
            head.push_back(Extent{0, next});
            try {
                more = free_extents(need, head);
            } catch (const Error& e) {
                if (e.code() != ErrorCode::io) throw;
            }
            if (more.size() != 1 || more.front().lcn != next) more = free_extents(need, taken);
            for (const Extent& e : more) {
                if (!runs.empty() && runs.back().lcn && *runs.back().lcn + runs.back().length == e.lcn)
                    runs.back().length += e.clusters;
                else
                    runs.push_back(DataRun{e.clusters, e.lcn});
                a.runs.push_back(MappedRun{Vcn{clusters}, e.clusters, Lcn{e.lcn}});
                clusters += e.clusters;
            }
            std::vector<std::pair<std::uint64_t, std::uint64_t>> bits;
            for (const Extent& e : more) bits.emplace_back(e.lcn, e.clusters);
            plan.allocate = cluster_bits(bits, true);
            plan.extents = std::move(more);
        }
        a.allocated_size = clusters * cb;
        a.data_size = a.initialized_size = size;
        a.last_vcn = Vcn{clusters - 1};

        // The nodes' bytes.
        const auto node_of = [&](const SplitNode& n) {
            IndexNode out;
            out.entries = n.entries;
            for (const std::uint32_t c : n.children)
                out.children.push_back(
                    static_cast<std::uint32_t>(nodes[c].changed ? block_of.at(c) : *nodes[c].block));
            return out;
        };
        for (const auto& [id, b] : block_of) {
            const SplitNode& n = nodes[id];
            std::vector<std::byte> block =
                build_index_block(b * per, block_bytes, index_node_bytes(pool, node_of(n), per));
            if (!n.children.empty()) block[detail::kNodeFlags] |= std::byte{1};
            plan.blocks.emplace_back(b, std::move(block));
        }
        const auto stamped = [](std::vector<std::byte> bytes, const Attribute& old) {
            core::store_le16(bytes, detail::kAttrInstance, old.instance);
            return bytes;
        };
        std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
        fresh.emplace_back(
            0x90, stamped(build_resident_attribute(
                              AttrType::index_root, u"$I30",
                              build_index_root(0x30, root_header.collation_rule, block_bytes, cb,
                                               index_node_bytes(pool, node_of(nodes[0]), per), true)),
                          *ir));
        fresh.emplace_back(0xA0,
                           stamped(build_nonresident_attribute(AttrType::index_allocation, u"$I30", runs,
                                                               {a.allocated_size, size, size}, clusters - 1),
                                   *ia));
        fresh.emplace_back(0xB0, stamped(build_resident_attribute(AttrType::bitmap, u"$I30", bitmap), *bm));
        auto record = rebuilt_record(d, detail::is_i30, fresh, r.header.next_instance);
        if (!record) return std::nullopt;
        // The root keeps ntfs-3g's reserve in the record as it is written.
        const std::uint32_t bytes_in_use = core::load_le32(*record, detail::kBytesInUse);
        if (bytes_in_use > r.header.bytes_in_use &&
            bytes_in_use + kIndexRootReserve > r.header.bytes_allocated)
            return std::nullopt;
        plan.record = std::move(*record);
        return plan;
    } catch (const NoSplit&) {
        return std::nullopt;
    } catch (const FormatError&) {
        return std::nullopt;
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
}

void Editor::apply_split(std::uint64_t dir, const IndexSplit& plan) {
    begin();
    if (plan.zero_blocks != 0) {
        const std::vector<std::byte> zeros(static_cast<std::size_t>(plan.zero_blocks * plan.block_bytes));
        write_stream(plan.allocation, plan.zero_from * std::uint64_t{plan.block_bytes}, zeros);
    }
    for (const auto& [b, block] : plan.blocks)
        write_stream(plan.allocation, b * std::uint64_t{plan.block_bytes}, block);
    (void)check::apply_bitmap_fixes(dev_, plan.allocate);
    write_record(dir, plan.record);
}

}  // namespace fsimg::ntfs
