// scan_tree, name rules, resident_limit, index_tree_shape and
// plan_population: the pure part of NTFS mkfs --from. See
// include/fsimg/ntfs/populate.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/populate.hpp"

namespace fsimg::ntfs {

const std::array<std::u16string_view, 12> kRootSystemNames{u"$AttrDef", u"$BadClus", u"$Bitmap", u"$Boot",
                                                           u"$Extend",  u"$LogFile", u"$MFT",    u"$MFTMirr",
                                                           u"$Secure",  u"$UpCase",  u"$Volume", u"."};

namespace {

constexpr std::uint64_t r8(std::uint64_t v) noexcept { return (v + 7) & ~std::uint64_t{7}; }

/// Attribute sizes of a populated record (formats.md §3.5, §3.7).
constexpr std::uint32_t kSiAttrBytes = 24 + kStandardInformationSize;
std::uint32_t file_name_attr_bytes(std::size_t units) {
    return 24 + static_cast<std::uint32_t>(r8(66 + 2 * units));
}
/// An $I30 entry without a sub-node VCN: r8(16 + 66 + 2L) (formats.md §3.8).
std::uint32_t index_entry_bytes(std::size_t units) { return static_cast<std::uint32_t>(r8(82 + 2 * units)); }
/// $INDEX_ROOT "$I30": 24-byte header, 8-byte name, 16-byte root header and
/// 16-byte node header before the entries.
constexpr std::uint32_t kIndexRootOverhead = 24 + 8 + 32;
/// Room kept for $INDEX_ALLOCATION "$I30": 64-byte header, 8-byte name, a
/// runlist of up to 24 bytes (two runs of a contiguous-when-possible index).
constexpr std::uint32_t kIndexAllocationBytes = 64 + 8 + 24;
constexpr std::uint32_t kEndMarkerBytes = 8;

/// Names collated as NTFS orders a directory: up-cased units, then (names
/// equal but for case) the raw units (formats.md §3.8 [NTFS-3G unistr.c]).
bool collates_before(std::u16string_view a, std::u16string_view b) {
    const int c = collate_file_names(a, b);
    return c != 0 ? c < 0 : a < b;
}

/// First fit over the free clusters of a layout, in the order the hint
/// gives: from the hint to the end, then from 0 to the hint (the MFT zone
/// last for data). A file takes the first free run that holds it whole;
/// only when none does is it split over several.
class ClusterAllocator {
public:
    explicit ClusterAllocator(const Layout& layout) {
        std::uint64_t at = 0;
        for (const Extent& e : layout.allocated()) {
            if (e.clusters == 0) continue;
            if (e.lcn > at) free_.push_back({at, e.lcn - at});
            at = std::max(at, e.lcn + e.clusters);
        }
        if (layout.cluster_count > at) free_.push_back({at, layout.cluster_count - at});
    }

    std::uint64_t free_clusters() const {
        return std::accumulate(free_.begin(), free_.end(), std::uint64_t{0},
                               [](std::uint64_t s, const Extent& e) { return s + e.clusters; });
    }

    /// `clusters` clusters (callers checked they are free); empty for 0.
    std::vector<Extent> allocate(std::uint64_t clusters, std::uint64_t hint) {
        std::vector<Extent> got;
        if (clusters == 0) return got;
        const std::vector<Extent> order = candidates(hint);
        for (const Extent& c : order) {
            if (c.clusters >= clusters) {
                take({c.lcn, clusters});
                got.push_back({c.lcn, clusters});
                return got;
            }
        }
        std::uint64_t need = clusters;
        for (const Extent& c : order) {
            const std::uint64_t n = std::min(need, c.clusters);
            take({c.lcn, n});
            got.push_back({c.lcn, n});
            need -= n;
            if (need == 0) break;
        }
        if (need)
            throw Error(ErrorCode::unsupported, "internal error: the NTFS populate plan ran out of clusters");
        std::sort(got.begin(), got.end(), [](const Extent& a, const Extent& b) { return a.lcn < b.lcn; });
        return got;
    }

private:
    std::vector<Extent> candidates(std::uint64_t hint) const {
        std::vector<Extent> after, before;
        for (const Extent& f : free_) {
            const std::uint64_t end = f.lcn + f.clusters;
            if (end <= hint) {
                before.push_back(f);
            } else if (f.lcn >= hint) {
                after.push_back(f);
            } else {
                after.push_back({hint, end - hint});
                before.push_back({f.lcn, hint - f.lcn});
            }
        }
        after.insert(after.end(), before.begin(), before.end());
        return after;
    }
    void take(const Extent& t) {
        for (std::size_t i = 0; i < free_.size(); ++i) {
            const Extent f = free_[i];  // a copy: inserting below moves the vector
            if (t.lcn < f.lcn || t.lcn + t.clusters > f.lcn + f.clusters) continue;
            const std::uint64_t head = t.lcn - f.lcn;
            const Extent tail{t.lcn + t.clusters, f.lcn + f.clusters - (t.lcn + t.clusters)};
            const auto at = free_.begin() + static_cast<std::ptrdiff_t>(i);
            if (head == 0 && tail.clusters == 0) {
                free_.erase(at);
            } else if (head == 0) {
                *at = tail;
            } else {
                at->clusters = head;
                if (tail.clusters) free_.insert(at + 1, tail);
            }
            return;
        }
    }

    std::vector<Extent> free_;  ///< ascending, disjoint
};

void append_merged(std::vector<Extent>& into, const std::vector<Extent>& more) {
    for (const Extent& e : more) {
        if (!into.empty() && into.back().lcn + into.back().clusters == e.lcn) {
            into.back().clusters += e.clusters;
        } else {
            into.push_back(e);
        }
    }
}

/// Room for index entries in a directory's $INDEX_ROOT: the record minus
/// its other attributes (with $INDEX_ALLOCATION and a $BITMAP of
/// `bitmap_bytes` when `large`).
std::int64_t root_room(const Layout& l, std::size_t name_units, bool large, std::uint64_t bitmap_bytes) {
    std::int64_t room = std::int64_t{l.mft_record_bytes} - first_attribute_offset(l.mft_record_bytes) -
                        kSiAttrBytes - file_name_attr_bytes(name_units) - kIndexRootOverhead -
                        kEndMarkerBytes;
    if (large) room -= kIndexAllocationBytes + 24 + 8 + static_cast<std::int64_t>(bitmap_bytes);
    return room;
}

std::string describe_clusters(std::uint64_t clusters, std::uint32_t cluster_bytes) {
    return fmt::format("{} ({} clusters of {})", core::format_size(clusters * cluster_bytes),
                       core::format_count(clusters), core::format_size(cluster_bytes));
}

}  // namespace

std::optional<std::string> utf8_name_problem(std::string_view utf8) {
    if (!core::is_valid_utf8(utf8)) return "the name is not valid UTF-8";
    const std::size_t units = core::utf8_to_utf16(utf8).size();
    if (units > 255) return fmt::format("the name has {} UTF-16 units; NTFS names hold at most 255", units);
    return std::nullopt;
}

bool is_win32_name(std::u16string_view name) noexcept {
    if (name.empty() || name.back() == u'.' || name.back() == u' ') return false;
    return std::none_of(name.begin(), name.end(), [](char16_t c) {
        return c < 0x20 || std::u16string_view(u"\"*/:<>?\\|").find(c) != std::u16string_view::npos;
    });
}

bool is_dos_name(std::u16string_view name) noexcept {
    auto ok = [](char16_t c) {
        return (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9') ||
               std::u16string_view(u"!#$%&'()-@^_`{}~").find(c) != std::u16string_view::npos;
    };
    const std::size_t dot = name.find(u'.');
    const std::u16string_view base = name.substr(0, dot);
    const std::u16string_view ext = dot == std::u16string_view::npos ? u"" : name.substr(dot + 1);
    if (base.empty() || base.size() > 8 || ext.size() > 3) return false;
    if (dot != std::u16string_view::npos && ext.empty()) return false;
    return std::all_of(base.begin(), base.end(), ok) && std::all_of(ext.begin(), ext.end(), ok);
}

void check_source_tree(io::SourceTree& tree) {
    io::TreeRules rules;
    rules.name_problem = &utf8_name_problem;
    // NTFS keeps names that differ only in case apart (POSIX namespace):
    // only identical names would collide, and a host directory has none.
    rules.case_key = [](std::u16string_view n) { return std::u16string(n); };
    rules.reserved_name = &fat::is_windows_device_name;
    rules.case_note = "NTFS names are compared exactly";
    io::check_tree(tree, rules);
    for (std::uint32_t d = 0; d < tree.nodes.size(); ++d) {  // names equal but for case
        std::vector<std::uint32_t> kids;
        for (const std::uint32_t c : tree.nodes[d].children)
            if (!tree.nodes[c].name16.empty()) kids.push_back(c);
        std::sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) {
            return collates_before(tree.nodes[a].name16, tree.nodes[b].name16);
        });
        for (std::size_t k = 1; k < kids.size(); ++k) {
            const io::TreeNode& a = tree.nodes[kids[k - 1]];
            const io::TreeNode& b = tree.nodes[kids[k]];
            if (collate_file_names(a.name16, b.name16) != 0) continue;
            tree.warnings.push_back(
                fmt::format("{}: \"{}\" differs only in letter case from \"{}\"; both are stored as POSIX "
                            "names and Windows "
                            "programs can open only one of them",
                            tree.image_path(kids[k]), b.name, a.name));
        }
    }
    for (std::uint32_t i = 1; i < tree.nodes.size(); ++i) {
        const io::TreeNode& n = tree.nodes[i];
        if (!n.name16.empty() && !is_win32_name(n.name16)) {
            tree.warnings.push_back(fmt::format(
                "{}: \"{}\" is stored as a POSIX name (it holds a character Win32 names cannot, or ends with "
                "a dot or space); Windows programs cannot open it",
                tree.image_path(i), n.name));
        }
    }
}

io::SourceTree scan_tree(const ScanOptions& options) {
    io::SourceTree tree = io::scan_host_trees(options.sources, options.symlinks);
    check_source_tree(tree);
    io::sort_problems(tree);
    return tree;
}

std::uint64_t resident_limit(std::uint32_t record_bytes, std::size_t name_units) noexcept {
    const std::int64_t room = std::int64_t{record_bytes} - first_attribute_offset(record_bytes) -
                              kSiAttrBytes - file_name_attr_bytes(name_units) - 24 - kEndMarkerBytes;
    return room <= 0 ? 0 : static_cast<std::uint64_t>(room) & ~std::uint64_t{7};
}

std::uint32_t index_block_vcns(const Layout& l) noexcept {
    return l.cluster_bytes <= l.index_block_bytes ? l.index_block_bytes / l.cluster_bytes
                                                  : l.index_block_bytes / 512;
}

IndexShape index_tree_shape(std::span<const std::uint32_t> entry_bytes, std::uint32_t root_bytes,
                            std::uint32_t block_bytes) {
    IndexShape shape;
    const std::uint64_t all = std::accumulate(entry_bytes.begin(), entry_bytes.end(), std::uint64_t{16});
    if (all <= root_bytes) {
        shape.root.entries.resize(entry_bytes.size());
        std::iota(shape.root.entries.begin(), shape.root.entries.end(), 0u);
        return shape;
    }
    if (root_bytes < 24) throw Error(ErrorCode::unsupported, "an index root without room for its end entry");
    // Room for entries in a block: the block minus its header and update
    // sequence array (0x40 for 4 KiB), as build_index_block lays it out.
    const std::uint32_t usa = 1 + block_bytes / kFixupStride;
    const std::uint64_t cap = block_bytes - r8(0x28 + 2 * usa);

    // One level: items (entry, sub-node of the keys before it) and the
    // sub-node after the last item.
    struct Item {
        std::uint32_t entry;
        std::optional<std::uint32_t> child;
    };
    std::vector<Item> level(entry_bytes.size());
    for (std::uint32_t i = 0; i < level.size(); ++i) level[i] = {i, std::nullopt};
    std::optional<std::uint32_t> last_child;
    bool leaf = true;
    for (;;) {
        const std::uint64_t extra = leaf ? 0 : 8, end = leaf ? 16 : 24;
        auto size = [&](const Item& it) { return entry_bytes[it.entry] + extra; };
        if (!leaf) {
            std::uint64_t total = end;
            for (const Item& it : level) total += size(it);
            if (total <= root_bytes) {
                for (const Item& it : level) {
                    shape.root.entries.push_back(it.entry);
                    shape.root.children.push_back(*it.child);
                }
                shape.root.children.push_back(*last_child);
                return shape;
            }
        }
        // Separators: greedy full nodes; the item that does not fit goes up.
        std::vector<std::size_t> seps;
        std::size_t pos = 0;
        while (pos < level.size()) {
            std::uint64_t used = end;
            std::size_t i = pos;
            while (i < level.size() && used + size(level[i]) <= cap) used += size(level[i++]);
            if (i == pos) throw Error(ErrorCode::unsupported, "an index entry larger than an index block");
            if (i == level.size()) break;
            seps.push_back(i);
            pos = i + 1;
        }
        if (!seps.empty() && seps.back() + 1 == level.size()) --seps.back();  // no empty last node
        // Nodes between separators; the separators form the next level.
        std::vector<Item> up;
        std::size_t from = 0;
        for (std::size_t s = 0; s <= seps.size(); ++s) {
            const std::size_t to = s < seps.size() ? seps[s] : level.size();
            IndexNode node;
            for (std::size_t i = from; i < to; ++i) {
                node.entries.push_back(level[i].entry);
                if (!leaf) node.children.push_back(*level[i].child);
            }
            if (!leaf) node.children.push_back(s < seps.size() ? *level[to].child : *last_child);
            const auto block = static_cast<std::uint32_t>(shape.blocks.size());
            shape.blocks.push_back(std::move(node));
            if (s < seps.size())
                up.push_back({level[to].entry, block});
            else
                last_child = block;
            from = to + 1;
        }
        level = std::move(up);
        leaf = false;
        if (level.empty()) {  // one block holds everything: the root only points to it
            shape.root.children.push_back(*last_child);
            return shape;
        }
    }
}

std::variant<PopulatePlan, std::vector<io::TreeProblem>> plan_population(const io::SourceTree& tree,
                                                                         const Layout& layout) {
    if (!tree.problems.empty()) return tree.problems;
    const Layout& L = layout;
    const std::uint32_t cb = L.cluster_bytes;
    std::vector<io::TreeProblem> problems;
    PopulatePlan plan;
    plan.nodes.resize(tree.nodes.size());

    // Records: depth first in name order from kFirstUserRecord.
    plan.nodes[0].record = 5;
    std::uint64_t next_record = kFirstUserRecord;
    io::visit_depth_first(tree, [&](std::uint32_t c) { plan.nodes[c].record = next_record++; });

    // Names, namespaces, directory entries in collation order.
    std::vector<std::u16string_view> system_sorted(kRootSystemNames.begin(), kRootSystemNames.end());
    for (std::uint32_t d = 0; d < tree.nodes.size(); ++d) {
        const io::TreeNode& dir = tree.nodes[d];
        if (!dir.is_dir) continue;
        auto name_of = [&](const DirEntryRef& r) -> std::u16string_view {
            return r.system ? kRootSystemNames[r.index] : std::u16string_view(tree.nodes[r.index].name16);
        };
        std::vector<DirEntryRef>& entries = plan.nodes[d].entries;
        if (d == 0) {
            for (std::uint32_t k = 0; k < kRootSystemNames.size(); ++k) entries.push_back({true, k});
        }
        for (const std::uint32_t c : dir.children) entries.push_back({false, c});
        std::sort(entries.begin(), entries.end(), [&](const DirEntryRef& a, const DirEntryRef& b) {
            return collates_before(name_of(a), name_of(b));
        });
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (entries[i].system) continue;
            const std::u16string_view name = name_of(entries[i]);
            const bool dup =
                (i > 0 && collate_file_names(name_of(entries[i - 1]), name) == 0) ||
                (i + 1 < entries.size() && collate_file_names(name_of(entries[i + 1]), name) == 0);
            NodePlan& p = plan.nodes[entries[i].index];
            if (dup && d == 0 &&
                std::any_of(kRootSystemNames.begin(), kRootSystemNames.end(),
                            [&](std::u16string_view s) { return collate_file_names(s, name) == 0; })) {
                problems.push_back({tree.image_path(entries[i].index),
                                    "the root holds an NTFS system file of this name (names compare "
                                    "case-insensitively against them)"});
            }
            p.name_space = (dup || !is_win32_name(name)) ? Namespace::posix
                           : is_dos_name(name)           ? Namespace::win32_and_dos
                                                         : Namespace::win32;
        }
    }

    // Index shapes, and what everything costs.
    std::uint64_t index_clusters = 0, data_clusters = 0;
    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        const io::TreeNode& n = tree.nodes[i];
        NodePlan& p = plan.nodes[i];
        const std::size_t units = i == 0 ? 1 : n.name16.size();
        if (!n.is_dir) {
            p.resident = n.size <= resident_limit(L.mft_record_bytes, units);
            if (!p.resident) data_clusters += L.clusters_for(n.size);
            continue;
        }
        std::vector<std::uint32_t> bytes;
        for (const DirEntryRef& r : p.entries)
            bytes.push_back(index_entry_bytes(r.system ? kRootSystemNames[r.index].size()
                                                       : tree.nodes[r.index].name16.size()));
        const std::int64_t small = root_room(L, units, false, 0);
        const std::uint64_t all = std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{16});
        if (i != 0 && small > 0 && all <= static_cast<std::uint64_t>(small)) {
            p.index = index_tree_shape(bytes, static_cast<std::uint32_t>(small), L.index_block_bytes);
            continue;
        }
        std::uint64_t bitmap = 8;
        for (;;) {
            const std::int64_t room = root_room(L, units, true, bitmap);
            p.index = index_tree_shape(bytes, static_cast<std::uint32_t>(std::max<std::int64_t>(room, 0)),
                                       L.index_block_bytes);
            const std::uint64_t need = r8(core::div_ceil(p.index.blocks.size(), 8));
            if (need <= bitmap) break;
            bitmap = need;
        }
        if (p.index.blocks.empty()) {  // the root keeps its one block (format's): an end entry pointing to it
            p.index.blocks.push_back(std::move(p.index.root));
            p.index.root = {{}, {0}};
        }
        std::uint64_t clusters = L.clusters_for(p.index.blocks.size() * std::uint64_t{L.index_block_bytes});
        if (i == 0) clusters -= std::min(clusters, clusters_of(L.root_index));
        index_clusters += clusters;
    }

    // $MFT growth: max(16 records, one cluster) at a time (formats.md §5.3).
    const std::uint64_t rs = L.mft_record_bytes;
    const std::uint64_t have = L.mft.clusters * cb;
    const std::uint64_t need_bytes = next_record * rs;
    std::uint64_t mft_bytes = L.mft_bytes();
    if (need_bytes > L.mft_bytes()) {
        const std::uint64_t step = std::max<std::uint64_t>(16 * rs, cb);
        mft_bytes = have + core::round_up(need_bytes - have, step);
    }
    plan.mft_records = mft_bytes / rs;
    const std::uint64_t mft_extra = L.clusters_for(mft_bytes) - L.mft.clusters;
    plan.mft_bitmap_bytes = core::round_up(core::div_ceil(plan.mft_records, 8), 8);
    const std::uint64_t bitmap_clusters = L.clusters_for(plan.mft_bitmap_bytes);
    const std::uint64_t bitmap_extra = bitmap_clusters - std::min(bitmap_clusters, L.mft_bitmap.clusters);

    ClusterAllocator alloc(L);
    const std::uint64_t free_clusters = alloc.free_clusters();
    const std::uint64_t needed = data_clusters + index_clusters + mft_extra + bitmap_extra;
    if (needed > free_clusters) {
        problems.push_back(
            {"/",
             fmt::format("the tree needs {} ({} for data, {} for index blocks, {} for MFT records); the "
                         "volume has {} free",
                         describe_clusters(needed, cb), core::format_count(data_clusters),
                         core::format_count(index_clusters), core::format_count(mft_extra + bitmap_extra),
                         describe_clusters(free_clusters, cb))});
    }
    if (!problems.empty()) return problems;

    // $MFT and its bitmap grow in place where they can.
    plan.mft = {L.mft};
    append_merged(plan.mft, alloc.allocate(mft_extra, L.mft.lcn + L.mft.clusters));
    plan.mft_bitmap = {L.mft_bitmap};
    append_merged(plan.mft_bitmap, alloc.allocate(bitmap_extra, L.mft_bitmap.lcn + L.mft_bitmap.clusters));

    // Index blocks and data: depth first, from the end of the MFT zone.
    const std::uint64_t hint = std::min(L.mft_zone_end, L.cluster_count);
    auto place = [&](std::uint32_t i) {
        const io::TreeNode& n = tree.nodes[i];
        NodePlan& p = plan.nodes[i];
        if (n.is_dir) {
            if (p.index.blocks.empty()) return;
            const std::uint64_t clusters =
                L.clusters_for(p.index.blocks.size() * std::uint64_t{L.index_block_bytes});
            if (i == 0) {
                p.extents = L.root_index;
                append_merged(p.extents,
                              alloc.allocate(clusters - std::min(clusters, clusters_of(L.root_index)), hint));
            } else {
                p.extents = alloc.allocate(clusters, hint);
            }
        } else if (!p.resident) {
            p.extents = alloc.allocate(L.clusters_for(n.size), hint);
        }
    };
    place(0);
    io::visit_depth_first(tree, place);

    plan.data_clusters = data_clusters;
    plan.index_clusters = index_clusters;
    plan.mft_clusters = mft_extra + bitmap_extra;
    plan.used_clusters = L.used_clusters() + needed;
    return plan;
}

std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const io::SourceTree& tree,
                                                                 const LayoutRequest& base,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity) {
    const std::uint64_t g = std::max<std::uint64_t>(granularity, base.bytes_per_sector);
    constexpr std::uint64_t kLimit = 256ull << 40;
    const std::uint64_t records = tree.nodes.size() + kFirstUserRecord;
    std::uint64_t s = core::round_up(
        std::max(tree.data_bytes + free_bytes + records * 2048 + (4u << 20), kMinVolumeBytes), g);
    std::string last = "no volume size was tried";
    for (int iteration = 0; iteration < 400 && s <= kLimit; ++iteration) {
        LayoutRequest req = base;
        req.volume_bytes = s;
        const auto planned = plan_layout(req, secure_sds_bytes());
        if (const auto* refusal = std::get_if<LayoutRefusal>(&planned)) {
            last = refusal->reason;
        } else {
            const Layout& layout = std::get<Layout>(planned);
            const auto pop = plan_population(tree, layout);
            if (const auto* plan = std::get_if<PopulatePlan>(&pop)) {
                if ((layout.cluster_count - plan->used_clusters) * layout.cluster_bytes >= free_bytes)
                    return s;
                last = "too little free space left";
            } else {
                last = std::get<std::vector<io::TreeProblem>>(pop).front().reason;
            }
        }
        s = core::round_up(s + std::max(s / 8, g), g);
    }
    return LayoutRefusal{
        fmt::format("no volume size fits the tree ({} files, {}): {}", core::format_count(tree.files),
                    core::format_size(tree.data_bytes), last),
        {}};
}

}  // namespace fsimg::ntfs
