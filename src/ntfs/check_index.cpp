// Pass 4: the $I30 index of every directory, walked in B+ tree order from
// $INDEX_ROOT through the INDX blocks of $INDEX_ALLOCATION (each block
// visited once, at most kMaxDepth levels): root header, block VCNs, entry
// order by the volume's $UpCase collation, $INDEX_ALLOCATION blocks vs the
// index $BITMAP, each entry naming an in-use base record with the same
// sequence number whose $FILE_NAMEs it matches (formats.md §3.8
// [FLATCAP concepts/index_record]). The walk from the root (record 5)
// marks what is reachable; then every in-use file is checked: reachable,
// its names indexed, its link count.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"

namespace fsimg::ntfs::detail {

namespace {

constexpr std::size_t kMaxDepth = 32;

/// The attribute (type, name) of a file, from the base record or, through
/// its $ATTRIBUTE_LIST, from extension records; extents are joined in VCN
/// order. nullopt when the file does not have it.
std::optional<Attribute> find_in_file(const Context& c, const MftRecord& r, AttrType type,
                                      std::u16string_view name) {
    if (const Attribute* a = r.find(type, name)) return *a;
    const Attribute* list = r.find(AttrType::attribute_list);
    if (!list) return std::nullopt;
    std::vector<Attribute> parts;
    try {
        for (const auto& e : decode_attribute_list(c.vol->read_stream(*list, kMaxListBytes))) {
            if (e.type != static_cast<std::uint32_t>(type) || e.name != name || e.record.record == r.number)
                continue;
            const auto ext = load_record(c, e.record.record);
            if (!ext) continue;
            for (const Attribute& a : ext->attributes)
                if (a.type == e.type && a.name == name &&
                    (!a.non_resident || static_cast<std::uint64_t>(a.first_vcn) == e.starting_vcn))
                    parts.push_back(a);
        }
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;  // ntfs.attrlist.decode
    }
    if (parts.empty()) return std::nullopt;
    std::sort(parts.begin(), parts.end(), [](const Attribute& a, const Attribute& b) {
        return static_cast<std::uint64_t>(a.first_vcn) < static_cast<std::uint64_t>(b.first_vcn);
    });
    Attribute whole = parts.front();
    for (std::size_t i = 1; i < parts.size(); ++i) {
        whole.runs.insert(whole.runs.end(), parts[i].runs.begin(), parts[i].runs.end());
        whole.last_vcn = parts[i].last_vcn;
    }
    return whole;
}

/// A directory waiting for its walk: record, path, inside $Extend (system metadata).
struct Pending {
    std::uint64_t record = 0;
    std::string path;
    bool system = false;
};

struct Frame {
    std::vector<IndexEntry> entries;
    std::size_t i = 0;
    bool descended = false;
};

class IndexWalk {
public:
    IndexWalk(Context& c, const Pending& p, bool mark, std::deque<Pending>& queue)
        : c_(c),
          n_(p.record),
          path_(p.path),
          system_(p.system || p.record == 11),
          mark_(mark),
          queue_(queue) {}

    void run(const MftRecord& r) {
        // In the base record, or (ntfs-3g, Windows) in an extension record.
        const std::optional<Attribute> root = find_in_file(c_, r, AttrType::index_root, u"$I30");
        if (!root) {
            report(c_, "ntfs.index.root-missing", at_record(c_, n_),
                   "the record is flagged as a directory but has no $INDEX_ROOT named $I30");
            return;
        }
        if (root->non_resident) return corrupt("$INDEX_ROOT is non-resident");
        IndexRoot ir;
        try {
            ir = decode_index_root(root->value);
        } catch (const FormatError& e) {
            return corrupt(fmt::format("$INDEX_ROOT does not decode: {} at value offset {}", e.what(),
                                       e.byte_offset().value_or(0)));
        }
        if (ir.indexed_type != static_cast<std::uint32_t>(AttrType::file_name) ||
            ir.collation_rule != collation::file_name)
            return corrupt(
                fmt::format("$INDEX_ROOT indexes attribute type 0x{:X} with collation rule 0x{:X}, not "
                            "$FILE_NAME (0x30) by file name (0x01)",
                            ir.indexed_type, ir.collation_rule));
        block_bytes_ = ir.index_block_bytes;
        alloc_ = find_in_file(c_, r, AttrType::index_allocation, u"$I30");
        const bool large = ir.node_flags & 0x01;
        if (alloc_) {
            if (!core::is_power_of_two(block_bytes_) || block_bytes_ < 512 || block_bytes_ > 65536)
                return corrupt(
                    fmt::format("index block size {} is not a power of two in 512..65536", block_bytes_));
            if (!alloc_->non_resident) return corrupt("$INDEX_ALLOCATION is resident");
            std::uint64_t mapped = 0;
            for (const MappedRun& m : alloc_->runs) mapped += m.length;
            const std::uint64_t by_runs = mapped > ~std::uint64_t(0) / c_.g.cluster_bytes
                                              ? 0
                                              : mapped * c_.g.cluster_bytes / block_bytes_;
            // Nor more blocks than the image holds (a sparse run of 2^40
            // clusters must not size the visited set).
            blocks_ = std::min({alloc_->size() / block_bytes_, by_runs, c_.dev().size() / block_bytes_});
            visited_.assign(static_cast<std::size_t>(blocks_), false);
        } else if (large) {
            return corrupt(
                "$INDEX_ROOT says the index has sub-nodes, the directory has no $INDEX_ALLOCATION");
        }
        walk(std::move(ir.entries));
        if (alloc_) check_bitmap(r);
    }

private:
    void corrupt(std::string msg) {
        ++problems_;
        report(c_, "ntfs.index.corrupt", at_record(c_, n_, "$I30"), std::move(msg));
    }

    void walk(std::vector<IndexEntry> root_entries) {
        std::vector<Frame> stack;
        stack.push_back(Frame{std::move(root_entries), 0, false});
        // Every step either descends into a block not visited before
        // (bounded by the block count) or moves past an entry: the walk ends.
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.i >= f.entries.size()) {
                stack.pop_back();
                continue;
            }
            const IndexEntry& e = f.entries[f.i];
            if ((e.flags & 0x01) && !f.descended) {
                f.descended = true;
                if (auto child = read_child(e, stack.size())) {
                    stack.push_back(Frame{std::move(*child), 0, false});
                    continue;
                }
            }
            if (!e.last()) visit(e);
            // `f` may not be used after push_back; it is still the top here.
            ++stack.back().i;
            stack.back().descended = false;
        }
    }

    std::optional<std::vector<IndexEntry>> read_child(const IndexEntry& e, std::size_t depth) {
        if (!e.child_vcn) return std::nullopt;
        const std::uint64_t vcn = *e.child_vcn;
        if (!alloc_) {
            corrupt(fmt::format(
                "an entry points to index block VCN {}, the directory has no $INDEX_ALLOCATION", vcn));
            return std::nullopt;
        }
        const std::uint64_t unit = block_bytes_ >= c_.g.cluster_bytes ? c_.g.cluster_bytes : 512;
        const std::uint64_t block = vcn > ~std::uint64_t(0) / unit ? blocks_ : vcn * unit / block_bytes_;
        if (block >= blocks_ || (vcn * unit) % block_bytes_) {
            corrupt(fmt::format(
                "an entry points to index block VCN {}, outside the {} blocks of $INDEX_ALLOCATION", vcn,
                blocks_));
            return std::nullopt;
        }
        if (visited_[block]) {
            corrupt(fmt::format("index block VCN {} is reached twice (a loop or a shared sub-node)", vcn));
            return std::nullopt;
        }
        visited_[block] = true;
        if (depth >= kMaxDepth) {
            corrupt(fmt::format("the index is deeper than {} levels at block VCN {}", kMaxDepth, vcn));
            return std::nullopt;
        }
        IndexBlock b;
        try {
            b = c_.vol->read_index_block(*alloc_, block, block_bytes_, true);
        } catch (const Error& err) {
            if (err.code() == ErrorCode::io) throw;
            corrupt(err.what());
            return std::nullopt;
        }
        if (b.vcn != vcn) {
            corrupt(fmt::format("index block {} says VCN {}, the entry pointing to it says {}", block, b.vcn,
                                vcn));
            return std::nullopt;
        }
        return std::move(b.entries);
    }

    void visit(const IndexEntry& e) {
        if (!e.file_name) return corrupt("an index entry has no $FILE_NAME key");
        const FileName& fn = *e.file_name;
        const std::string name = core::utf16_to_utf8_lossy(fn.name);
        if (have_prev_ && collate(c_, prev_, fn.name) >= 0 && !order_reported_) {
            order_reported_ = true;
            report(
                c_, "ntfs.index.order", at_record(c_, n_, "$I30"),
                fmt::format("\"{}\" follows \"{}\": entries are not in $UpCase collation order (or repeat)",
                            name, core::utf16_to_utf8_lossy(prev_)));
        }
        prev_ = fn.name;
        have_prev_ = true;
        const auto ref = FileReference::unpack(e.reference);
        const std::uint64_t t = ref.record;
        if (t >= c_.records || !c_.used(t) || (c_.rec[t].flags & rs::extension) ||
            c_.rec[t].sequence != ref.sequence) {
            report(c_, "ntfs.index.stale-entry", at_record(c_, n_, "$I30"),
                   fmt::format("entry \"{}\" points to record {} sequence {}, which is {}", name, t,
                               ref.sequence,
                               t >= c_.records ? "past the end of $MFT"
                               : !c_.used(t)   ? "not in use"
                               : (c_.rec[t].flags & rs::extension)
                                   ? "an extension record"
                                   : fmt::format("at sequence {}", c_.rec[t].sequence)));
            return;
        }
        if (fn.parent.record != n_)
            report(c_, "ntfs.index.entry-mismatch", at_record(c_, n_, "$I30"),
                   fmt::format("entry \"{}\" (record {}) says its parent is record {}", name, t,
                               fn.parent.record));
        RecordState& ts = c_.rec[t];
        // Only the data size: the allocated size of sparse and compressed
        // files' entries differs between Windows and ntfs-3g (clean volumes
        // of both disagree with any one rule). Windows leaves the sizes of system files' entries (records
        // 0..15, files under $Extend) at their creation values: not judged there.
        if (!system_ && t >= kFirstUnreservedRecord && (ts.flags & rs::has_data) && !(ts.flags & rs::dir) &&
            fn.data_size != ts.data_size)
            report(c_, "ntfs.index.sizes", at_record(c_, n_, "$I30"),
                   fmt::format(
                       "entry \"{}\" (record {}) says data size {} allocated {}, the file's $DATA has {} "
                       "and {}",
                       name, t, fn.data_size, fn.allocated_size, ts.data_size, ts.alloc_size));
        ++ts.entries;
        ts.entry_hash ^= name_key_hash(fn);
        if (!mark_ || (ts.flags & rs::reached) || t == n_) return;
        ts.flags |= rs::reached;
        if (ts.flags & rs::dir) queue_.push_back(Pending{t, path_ + name + "/", system_});
    }

    void check_bitmap(const MftRecord& r) {
        const auto bm = find_in_file(c_, r, AttrType::bitmap, u"$I30");
        if (!bm) {
            report(c_, "ntfs.index.bitmap", at_record(c_, n_, "$I30"),
                   "the directory has an $INDEX_ALLOCATION but no $BITMAP named $I30");
            return;
        }
        const std::uint64_t need = core::div_ceil(blocks_, std::uint64_t{8});
        std::vector<std::byte> bits(static_cast<std::size_t>(std::min<std::uint64_t>(need, bm->size())));
        try {
            c_.vol->read_stream(*bm, 0, bits);
        } catch (const Error& err) {
            if (err.code() == ErrorCode::io) throw;
            report(c_, "ntfs.index.bitmap", at_record(c_, n_, "$BITMAP:$I30"), err.what());
            return;
        }
        std::vector<std::uint64_t> unset, stray;
        std::uint64_t n_unset = 0, n_stray = 0;
        for (std::uint64_t b = 0; b < blocks_; ++b) {
            const bool bit = b / 8 < bits.size() && ((std::to_integer<unsigned>(bits[b / 8]) >> (b % 8)) & 1);
            if (visited_[b] && !bit && n_unset++ < kFirstLocations) unset.push_back(b);
            if (!visited_[b] && bit && problems_ == 0 && n_stray++ < kFirstLocations) stray.push_back(b);
        }
        if (n_unset)
            report(c_, "ntfs.index.bitmap", at_record(c_, n_, "$BITMAP:$I30"),
                   fmt::format("{} index block{} of the tree ({}) {} marked free in the index $BITMAP",
                               n_unset, n_unset == 1 ? "" : "s", first_list(unset, n_unset),
                               n_unset == 1 ? "is" : "are"));
        if (n_stray)
            report(c_, "ntfs.index.bitmap", at_record(c_, n_, "$BITMAP:$I30"),
                   fmt::format(
                       "{} index block{} ({}) marked in use in the index $BITMAP {} not part of the tree",
                       n_stray, n_stray == 1 ? "" : "s", first_list(stray, n_stray),
                       n_stray == 1 ? "is" : "are"));
    }

    Context& c_;
    std::uint64_t n_;
    std::string path_;
    bool system_;
    bool mark_;
    std::deque<Pending>& queue_;
    std::optional<Attribute> alloc_;
    std::uint32_t block_bytes_ = 0;
    std::uint64_t blocks_ = 0;
    std::vector<bool> visited_;
    std::u16string prev_;
    bool have_prev_ = false, order_reported_ = false;
    std::size_t problems_ = 0;
};

void walk_dir(Context& c, const Pending& p, bool mark, std::deque<Pending>& queue) {
    const auto r = load_record(c, p.record);
    if (!r) return;
    if (mark && c.options.on_walk) c.options.on_walk(p.path);
    IndexWalk(c, p, mark, queue).run(*r);
}

}  // namespace

void check_index(Context& c) {
    std::deque<Pending> queue;
    if (c.used(kRootRecord) && (c.rec[kRootRecord].flags & rs::dir)) {
        c.rec[kRootRecord].flags |= rs::reached;
        queue.push_back(Pending{kRootRecord, "/", false});
    } else {
        report(c, "ntfs.tree.root", at_record(c, kRootRecord),
               "the root directory (record 5) is not an in-use directory");
    }
    // Breadth first from the root; a directory enters the queue once (when first reached).
    while (!queue.empty()) {
        const Pending p = std::move(queue.front());
        queue.pop_front();
        walk_dir(c, p, true, queue);
    }
    // Directories not reached: their entries still count for the files they name.
    for (std::uint64_t n = 0; n < c.records; ++n) {
        const RecordState& st = c.rec[n];
        if ((st.flags & rs::used) && !(st.flags & rs::extension) && (st.flags & rs::dir) &&
            !(st.flags & rs::reached))
            walk_dir(c, Pending{n, {}, true}, false, queue);
    }
    for (std::uint64_t n = 0; n < c.records; ++n) {
        const RecordState& st = c.rec[n];
        if (!(st.flags & rs::used) || (st.flags & rs::extension)) continue;
        if (st.all_names == 0) continue;  // ntfs.filename.missing
        if (!(st.flags & rs::reached)) {
            report(c, "ntfs.tree.orphan", at_record(c, n),
                   fmt::format(
                       "the {} is in use but not reachable from the root directory{}",
                       (st.flags & rs::dir) ? "directory" : "file",
                       st.entries ? " (only from directories that are not)" : " (no index entry names it)"));
        }
        if (st.entries && (st.entries != st.all_names || st.entry_hash != st.name_hash)) {
            report(c,
                   st.entries < st.all_names   ? "ntfs.index.missing-entry"
                   : st.entries > st.all_names ? "ntfs.index.extra-entry"
                                               : "ntfs.index.entry-mismatch",
                   at_record(c, n),
                   fmt::format("the record has {} $FILE_NAME{}, {} index entr{} name it{}", st.all_names,
                               st.all_names == 1 ? "" : "s", st.entries, st.entries == 1 ? "y" : "ies",
                               st.entries == st.all_names
                                   ? " with keys (parent, name, namespace or directory bit) "
                                     "that differ from them"
                                   : ""));
        }
        // chkdsk counts every $FILE_NAME (a Win32 name and its DOS name: 2);
        // mkntfs and ntfs-3g count the names outside the DOS namespace.
        if (st.names != st.link_count && st.all_names != st.link_count)
            report(
                c, "ntfs.record.link-count", at_record(c, n),
                fmt::format("the header's link count is {}, the file has {} name{} outside the DOS namespace "
                            "({} with DOS names)",
                            st.link_count, st.names, st.names == 1 ? "" : "s", st.all_names));
    }
}

}  // namespace fsimg::ntfs::detail
