// scan_tree, name rules, resident_limit and
// plan_population: the pure part of NTFS mkfs --from. See
// include/fsimg/ntfs/populate.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/windows_names.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/populate.hpp"

namespace fsimg::ntfs {

const std::array<std::u16string_view, 12> kRootSystemNames{u"$AttrDef", u"$BadClus", u"$Bitmap", u"$Boot",
                                                           u"$Extend",  u"$LogFile", u"$MFT",    u"$MFTMirr",
                                                           u"$Secure",  u"$UpCase",  u"$Volume", u"."};

namespace {

/// Attribute sizes of a populated record (formats.md §3.5, §3.7).
constexpr std::uint32_t kSiAttrBytes = 24 + kStandardInformationSize;
std::uint32_t file_name_attr_bytes(std::size_t units) { return file_name_attribute_bytes(units); }
constexpr std::uint32_t kEndMarkerBytes = 8;

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

/// Clusters of a non-resident index $BITMAP (IndexStorage other than in_record).
std::uint64_t bitmap_clusters_of(const Layout& L, const IndexShape& s) {
    return s.blocks.empty() || s.storage == IndexStorage::in_record
               ? 0
               : L.clusters_for(index_bitmap_bytes(s.blocks.size()));
}

/// Clusters an index takes beyond what format wrote: its INDX blocks (the
/// root's first block is format's) and a non-resident $BITMAP.
std::uint64_t index_clusters_of(const Layout& L, const IndexShape& s, bool root) {
    std::uint64_t c = L.clusters_for(s.blocks.size() * std::uint64_t{L.index_block_bytes});
    if (root) c -= std::min(c, clusters_of(L.root_index));
    return c + bitmap_clusters_of(L, s);
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
    return std::none_of(name.begin(), name.end(), [](char16_t c) { return core::is_windows_forbidden(c); });
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

const source::TreeRules& tree_rules() {
    static const source::TreeRules rules = [] {
        source::TreeRules r;
        r.name_problem = &utf8_name_problem;
        // NTFS keeps names that differ only in case apart (POSIX namespace):
        // only identical names would collide, and a host directory has none.
        r.case_key = [](std::u16string_view n) { return std::u16string(n); };
        r.reserved_name = &core::is_windows_device_name;
        r.case_note = "NTFS names are compared exactly";
        return r;
    }();
    return rules;
}

void check_source_tree(source::SourceTree& tree) {
    source::check_tree(tree, tree_rules());
    for (std::uint32_t d = 0; d < tree.nodes.size(); ++d) {  // names equal but for case
        std::vector<std::uint32_t> kids;
        for (const std::uint32_t c : tree.nodes[d].children)
            if (!tree.nodes[c].name16.empty()) kids.push_back(c);
        std::sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) {
            return name_collates_before(tree.nodes[a].name16, tree.nodes[b].name16);
        });
        for (std::size_t k = 1; k < kids.size(); ++k) {
            const source::TreeNode& a = tree.nodes[kids[k - 1]];
            const source::TreeNode& b = tree.nodes[kids[k]];
            if (collate_file_names(a.name16, b.name16) != 0) continue;
            tree.warnings.push_back(
                fmt::format("{}: \"{}\" differs only in letter case from \"{}\"; both are stored as POSIX "
                            "names and Windows "
                            "programs can open only one of them",
                            tree.image_path(kids[k]), b.name, a.name));
        }
    }
    for (std::uint32_t i = 1; i < tree.nodes.size(); ++i) {
        const source::TreeNode& n = tree.nodes[i];
        if (!n.name16.empty() && !is_win32_name(n.name16)) {
            tree.warnings.push_back(fmt::format(
                "{}: \"{}\" is stored as a POSIX name (it holds a character Win32 names cannot, or ends with "
                "a dot or space); Windows programs cannot open it",
                tree.image_path(i), n.name));
        }
    }
}

source::SourceTree scan_tree(const ScanOptions& options) {
    source::SourceTree tree = source::scan_host_trees(options.sources, options.symlinks, options.exclude);
    check_source_tree(tree);
    source::sort_problems(tree);
    return tree;
}

std::uint64_t resident_limit(std::uint32_t record_bytes, std::size_t name_units,
                             std::size_t dos_units) noexcept {
    const std::int64_t room = std::int64_t{record_bytes} - first_attribute_offset(record_bytes) -
                              kSiAttrBytes - file_name_attr_bytes(name_units) -
                              (dos_units ? std::int64_t{file_name_attr_bytes(dos_units)} : 0) - 24 -
                              kEndMarkerBytes;
    return room <= 0 ? 0 : static_cast<std::uint64_t>(room) & ~std::uint64_t{7};
}

namespace {
/// Bytes a runlist field needs for `v` as a signed value (formats.md §3.6):
/// the widest a length or an LCN offset below `v` can take.
std::uint64_t signed_width(std::uint64_t v) noexcept {
    std::uint64_t bytes = 1;
    while (bytes < 8 && v >= (std::uint64_t{1} << (8 * bytes - 1))) ++bytes;
    return bytes;
}
}  // namespace

std::uint64_t sparse_allocated_clusters(std::uint64_t size, std::uint32_t cluster_bytes) noexcept {
    if (cluster_bytes == 0) return 0;
    const std::uint64_t clusters = size / cluster_bytes + (size % cluster_bytes != 0);
    return (clusters + kSparseUnitClusters - 1) / kSparseUnitClusters * kSparseUnitClusters;
}

std::uint64_t sparse_runlist_room(std::uint32_t record_bytes, std::size_t name_units,
                                  std::size_t dos_units) noexcept {
    const std::uint64_t r = resident_limit(record_bytes, name_units, dos_units);
    return r < 48 ? 0 : r - 48;
}

std::optional<std::vector<VcnRange>> sparse_data_vcns(std::span<const source::Segment> data,
                                                      std::uint64_t size, std::uint32_t cluster_bytes,
                                                      std::uint64_t runlist_room) {
    if (size == 0 || cluster_bytes == 0) return std::nullopt;
    const std::uint64_t unit = kSparseUnitClusters;
    const std::uint64_t n = sparse_allocated_clusters(size, cluster_bytes);
    // Compression units any data byte touches, as VCN ranges.
    std::vector<VcnRange> units;
    for (const source::Segment& s : data) {
        if (s.length == 0 || s.offset >= size) continue;
        const std::uint64_t last_byte = s.offset + std::min(s.length, size - s.offset) - 1;
        const std::uint64_t first = s.offset / cluster_bytes / unit * unit;
        const std::uint64_t end = std::min(n, (last_byte / cluster_bytes / unit + 1) * unit);
        if (!units.empty() && first < units.back().vcn) return std::nullopt;  // not ascending: not trusted
        if (!units.empty() && first <= units.back().vcn + units.back().clusters) {
            units.back().clusters = std::max(units.back().clusters, end - units.back().vcn);
        } else {
            units.push_back({first, end - first});
        }
    }
    // The holes between them, longest first; keep as many as the runlist has room for.
    std::vector<VcnRange> holes;
    std::uint64_t at = 0;
    for (const VcnRange& u : units) {
        if (u.vcn > at) holes.push_back({at, u.vcn - at});
        at = u.vcn + u.clusters;
    }
    if (n > at) holes.push_back({at, n - at});
    // Every run at its widest: a data run 1 + length + LCN offset bytes, a hole 1 + length, the 0x00 end.
    const std::uint64_t wl = signed_width(n), wo = 8;
    const std::uint64_t data_run = 1 + wl + wo, hole_run = 1 + wl;
    const std::uint64_t fixed = 1 + data_run;  // the terminator and the data run after the last hole
    const std::uint64_t keep = runlist_room <= fixed ? 0 : (runlist_room - fixed) / (data_run + hole_run);
    if (holes.empty() || keep == 0) return std::nullopt;
    if (holes.size() > keep) {
        std::stable_sort(holes.begin(), holes.end(),
                         [](const VcnRange& a, const VcnRange& b) { return a.clusters > b.clusters; });
        holes.resize(static_cast<std::size_t>(keep));
        std::sort(holes.begin(), holes.end(),
                  [](const VcnRange& a, const VcnRange& b) { return a.vcn < b.vcn; });
    }
    std::vector<VcnRange> out;
    at = 0;
    for (const VcnRange& h : holes) {
        if (h.vcn > at) out.push_back({at, h.vcn - at});
        at = h.vcn + h.clusters;
    }
    if (n > at) out.push_back({at, n - at});
    return out;
}

std::vector<DataRun> sparse_runlist(std::span<const VcnRange> data_vcns, std::span<const Extent> extents,
                                    std::uint64_t total_clusters) {
    auto bad = [](const char* what) {
        return Error(ErrorCode::unsupported, fmt::format("internal error: a sparse NTFS runlist {}", what));
    };
    std::vector<DataRun> runs;
    auto add = [&](std::uint64_t length, std::optional<std::uint64_t> lcn) {
        if (length == 0) return;
        if (!runs.empty()) {
            DataRun& b = runs.back();
            if (!lcn && !b.lcn) {
                b.length += length;
                return;
            }
            if (lcn && b.lcn && *b.lcn + b.length == *lcn) {
                b.length += length;
                return;
            }
        }
        runs.push_back({length, lcn});
    };
    std::uint64_t vcn = 0;
    std::size_t e = 0;       // the extent being mapped
    std::uint64_t used = 0;  // clusters of extents[e] already mapped
    for (const VcnRange& r : data_vcns) {
        if (r.vcn < vcn || r.clusters > total_clusters || r.vcn > total_clusters - r.clusters)
            throw bad("has data ranges out of order or past the file's clusters");
        add(r.vcn - vcn, std::nullopt);
        for (std::uint64_t left = r.clusters; left > 0;) {
            if (e == extents.size()) throw bad("has fewer clusters than its data ranges");
            const std::uint64_t take = std::min(left, extents[e].clusters - used);
            add(take, extents[e].lcn + used);
            left -= take;
            used += take;
            if (used == extents[e].clusters) {
                ++e;
                used = 0;
            }
        }
        vcn = r.vcn + r.clusters;
    }
    while (e < extents.size() && extents[e].clusters == 0) ++e;
    if (e != extents.size()) throw bad("has more clusters than its data ranges");
    add(total_clusters - vcn, std::nullopt);
    return runs;
}

std::uint32_t index_block_vcns(const Layout& l) noexcept {
    return l.cluster_bytes <= l.index_block_bytes ? l.index_block_bytes / l.cluster_bytes
                                                  : l.index_block_bytes / 512;
}

std::variant<PopulatePlan, std::vector<source::TreeProblem>> plan_population(const source::SourceTree& tree,
                                                                             const Layout& layout) {
    if (!tree.problems.empty()) return tree.problems;
    const Layout& L = layout;
    const std::uint32_t cb = L.cluster_bytes;
    std::vector<source::TreeProblem> problems;
    PopulatePlan plan;
    plan.nodes.resize(tree.nodes.size());

    // Hard links: the first name (depth first) owns the record; the others
    // are more $FILE_NAMEs in it while they fit (no attribute lists).
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t> owners;
    std::vector<std::uint32_t> owner_bytes(tree.nodes.size(), 0);
    source::visit_depth_first(tree, [&](std::uint32_t c) {
        const source::TreeNode& n = tree.nodes[c];
        if (n.is_dir || n.host_links < 2) return;
        const auto [it, fresh] = owners.try_emplace({n.host_dev, n.host_ino}, c);
        const std::uint32_t fn = file_name_attr_bytes(n.name16.size());
        if (fresh) {  // header, $STANDARD_INFORMATION, this name, non-resident $DATA (runlist room 32), end
            owner_bytes[c] =
                first_attribute_offset(L.mft_record_bytes) + kSiAttrBytes + fn + 64 + 32 + kEndMarkerBytes;
            return;
        }
        const std::uint32_t o = it->second;
        if (owner_bytes[o] + fn > L.mft_record_bytes) return;  // stored as a copy
        owner_bytes[o] += fn;
        plan.nodes[c].link_of = o;
        plan.nodes[o].links.push_back(c);
    });

    // Names, namespaces, directory entries in collation order.
    for (std::uint32_t d = 0; d < tree.nodes.size(); ++d) {
        const source::TreeNode& dir = tree.nodes[d];
        if (!dir.is_dir) continue;
        std::vector<NameRequest> requests;
        requests.reserve(dir.children.size());
        for (const std::uint32_t c : dir.children) {
            const source::TreeNode& n = tree.nodes[c];
            requests.push_back({n.name16, !n.is_dir && n.host_links > 1});
        }
        const std::vector<NamePlan> names =
            d == 0 ? plan_directory_names(requests, kRootSystemNames) : plan_directory_names(requests);
        std::vector<DirEntryRef>& entries = plan.nodes[d].entries;
        if (d == 0) {
            for (std::uint32_t k = 0; k < kRootSystemNames.size(); ++k) entries.push_back({true, false, k});
        }
        for (std::size_t k = 0; k < dir.children.size(); ++k) {
            const std::uint32_t c = dir.children[k];
            NodePlan& p = plan.nodes[c];
            if (names[k].equals_reserved) {
                problems.push_back({tree.image_path(c),
                                    "the root holds an NTFS system file of this name (names compare "
                                    "case-insensitively against them)"});
            }
            p.name_space = names[k].name_space;
            p.dos_name = names[k].dos;
            entries.push_back({false, false, c});
            if (!p.dos_name.empty()) entries.push_back({false, true, c});
        }
        auto name_of = [&](const DirEntryRef& r) -> std::u16string_view {
            return r.system ? kRootSystemNames[r.index]
                   : r.dos  ? std::u16string_view(plan.nodes[r.index].dos_name)
                            : std::u16string_view(tree.nodes[r.index].name16);
        };
        std::sort(entries.begin(), entries.end(), [&](const DirEntryRef& a, const DirEntryRef& b) {
            return name_collates_before(name_of(a), name_of(b));
        });
    }

    // Index shapes, and what everything costs.
    std::uint64_t index_clusters = 0, data_clusters = 0;
    for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
        const source::TreeNode& n = tree.nodes[i];
        NodePlan& p = plan.nodes[i];
        const std::size_t units = i == 0 ? 1 : n.name16.size();
        const std::size_t dos_units = p.dos_name.size();
        if (!n.is_dir) {
            if (p.link_of != kNoLink) continue;  // the owner has the data
            if (!n.symlink_target.empty()) {     // a reparse point in the record, no $DATA
                p.resident = true;
                continue;
            }
            p.resident = n.host_links > 1 ? n.size == 0
                                          : n.size <= resident_limit(L.mft_record_bytes, units, dos_units);
            if (p.resident) continue;
            if (n.has_holes && n.host_links < 2) {  // sparse $DATA (not for hard links: NodePlan::sparse)
                auto vcns = sparse_data_vcns(n.data_segments, n.size, cb,
                                             sparse_runlist_room(L.mft_record_bytes, units, dos_units));
                if (vcns) {
                    p.sparse = true;
                    p.data_vcns = std::move(*vcns);
                    for (const VcnRange& r : p.data_vcns) data_clusters += r.clusters;
                    continue;
                }
            }
            data_clusters += L.clusters_for(n.size);
            continue;
        }
        std::vector<std::uint32_t> bytes;
        bytes.reserve(p.entries.size());
        for (const DirEntryRef& r : p.entries)
            bytes.push_back(index_entry_bytes(r.system ? kRootSystemNames[r.index].size()
                                              : r.dos  ? plan.nodes[r.index].dos_name.size()
                                                       : tree.nodes[r.index].name16.size()));
        try {
            p.index =
                directory_index(bytes, L.mft_record_bytes, L.index_block_bytes, units, i == 0, dos_units);
        } catch (const Error& e) {
            problems.push_back({tree.image_path(i), e.what()});
            continue;
        }
        index_clusters += index_clusters_of(L, p.index, i == 0);
    }

    // Records: depth first in name order from kFirstUserRecord; a directory
    // whose index needs an extension record takes the next number for it.
    plan.nodes[0].record = 5;
    std::uint64_t next_record = kFirstUserRecord;
    source::visit_depth_first(tree, [&](std::uint32_t c) {
        NodePlan& p = plan.nodes[c];
        if (p.link_of != kNoLink) return;
        p.record = next_record++;
        if (tree.nodes[c].is_dir && p.index.storage == IndexStorage::extension)
            p.extension_record = next_record++;
    });
    for (NodePlan& p : plan.nodes)
        if (p.link_of != kNoLink) p.record = plan.nodes[p.link_of].record;

    // $Extend/$Reparse:$R, one entry per stored symbolic link (records are
    // numbered in depth-first order, so this is ascending record order).
    source::visit_depth_first(tree, [&](std::uint32_t c) {
        const source::TreeNode& n = tree.nodes[c];
        if (!n.is_dir && !n.symlink_target.empty() && plan.nodes[c].link_of == kNoLink)
            plan.reparse.nodes.push_back(c);
    });
    std::stable_sort(
        plan.reparse.nodes.begin(), plan.reparse.nodes.end(),
        [&](std::uint32_t a, std::uint32_t b) { return plan.nodes[a].record < plan.nodes[b].record; });
    if (!plan.reparse.nodes.empty()) {
        const std::vector<std::uint32_t> bytes(plan.reparse.nodes.size(), kReparseIndexEntryBytes);
        plan.reparse.index =
            directory_index(bytes, L.mft_record_bytes, L.index_block_bytes, kReparseFileNameUnits, false);
        index_clusters += index_clusters_of(L, plan.reparse.index, false);
    }

    // $MFT growth: max(16 records, one cluster) at a time (formats.md §5.3).
    const MftGrowth mg =
        mft_growth(next_record, L.mft_record_bytes, cb, L.mft.clusters, L.mft_bitmap.clusters);
    plan.mft_records = std::max<std::uint64_t>(mg.records, L.mft_records);
    const std::uint64_t mft_extra = mg.mft_clusters;
    plan.mft_bitmap_bytes = core::round_up(core::div_ceil(plan.mft_records, 8), 8);
    const std::uint64_t bitmap_extra = mg.bitmap_clusters;

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
        const source::TreeNode& n = tree.nodes[i];
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
            p.index_bitmap = alloc.allocate(bitmap_clusters_of(L, p.index), hint);
        } else if (!p.resident && p.link_of == kNoLink) {
            std::uint64_t clusters = L.clusters_for(n.size);
            if (p.sparse) {
                clusters = 0;
                for (const VcnRange& r : p.data_vcns) clusters += r.clusters;
            }
            p.extents = alloc.allocate(clusters, hint);
        }
    };
    place(0);
    source::visit_depth_first(tree, place);
    if (!plan.reparse.index.blocks.empty()) {  // after the tree: a tree without links is laid out as before
        plan.reparse.extents = alloc.allocate(
            L.clusters_for(plan.reparse.index.blocks.size() * std::uint64_t{L.index_block_bytes}), hint);
        plan.reparse.bitmap = alloc.allocate(bitmap_clusters_of(L, plan.reparse.index), hint);
    }

    plan.data_clusters = data_clusters;
    plan.index_clusters = index_clusters;
    plan.mft_clusters = mft_extra + bitmap_extra;
    plan.used_clusters = L.used_clusters() + needed;
    return plan;
}

std::variant<std::uint64_t, LayoutRefusal> volume_bytes_for_tree(const source::SourceTree& tree,
                                                                 const LayoutRequest& base,
                                                                 std::uint64_t free_bytes,
                                                                 std::uint64_t granularity) {
    const std::uint64_t g = std::max<std::uint64_t>(granularity, base.bytes_per_sector);
    constexpr std::uint64_t kLimit = 256ull << 40;
    const std::uint64_t records = tree.nodes.size() + kFirstUserRecord;
    // The first guess counts what sparse files store (their data), not their size.
    std::uint64_t data_bytes = tree.data_bytes;
    for (const source::TreeNode& n : tree.nodes) {
        if (!n.has_holes) continue;
        std::uint64_t stored = 0;
        for (const source::Segment& sg : n.data_segments) stored += sg.length;
        data_bytes -= std::min(data_bytes, n.size - std::min(n.size, stored));
    }
    std::uint64_t s =
        core::round_up(std::max(data_bytes + free_bytes + records * 2048 + (4u << 20), kMinVolumeBytes), g);
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
                last = std::get<std::vector<source::TreeProblem>>(pop).front().reason;
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
