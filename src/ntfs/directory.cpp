// NTFS directories: see include/fsimg/ntfs/directory.hpp.
#include "fsimg/ntfs/directory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/file.hpp"

namespace fsimg::ntfs {

namespace {

constexpr std::u16string_view kI30 = u"$I30";
constexpr std::uint32_t kRootNodeOffset = 0x10, kBlockNodeOffset = 0x18;

/// One index node on the walk's stack.
struct Frame {
    std::vector<IndexEntry> entries;
    std::optional<std::uint64_t> block;
    std::uint32_t depth = 0;
    std::size_t next = 0;    ///< entry to handle next
    bool descended = false;  ///< the sub-node of entries[next] was visited
};

}  // namespace

std::uint32_t index_vcns_per_block(const Volume& v, std::uint32_t block_bytes) noexcept {
    const std::uint32_t c = v.geometry().cluster_bytes;
    return c <= block_bytes ? block_bytes / c : std::max<std::uint32_t>(1, block_bytes / 512);
}

void for_each_index_entry(const Volume& v, const MftRecord& dir,
                          const std::function<bool(const IndexEntry&, const IndexEntryLocation&)>& visit) {
    for_each_index_entry(v, dir, kI30Index, visit);
}

void for_each_index_entry(const Volume& v, const MftRecord& dir, const IndexSpec& spec,
                          const std::function<bool(const IndexEntry&, const IndexEntryLocation&)>& visit,
                          std::vector<std::uint64_t>* reached) {
    const std::string_view n = spec.label;
    auto fail = [&](const std::string& what, std::optional<std::uint64_t> at = std::nullopt) {
        return Error(ErrorCode::corrupt, fmt::format("MFT record {}: {}", dir.number, what),
                     at ? at : std::optional<std::uint64_t>(dir.byte_offset));
    };
    // In the base record, or (ntfs-3g and Windows move it out of a full
    // record) in an extension record its $ATTRIBUTE_LIST names.
    const Attribute* root_attr = dir.find(AttrType::index_root, spec.name);
    std::optional<Attribute> listed_root;
    if (!root_attr && dir.find(AttrType::attribute_list)) {
        listed_root = load_attribute(v, dir, AttrType::index_root, spec.name);
        if (listed_root) root_attr = &*listed_root;
    }
    if (!root_attr)
        throw fail(
            fmt::format("no $INDEX_ROOT:{}{}", n, spec.indexed_type == 0x30 ? " (not a directory)" : ""));
    if (root_attr->non_resident) throw fail(fmt::format("$INDEX_ROOT:{} is non-resident", n));
    IndexRoot root;
    try {
        root = decode_index_root(root_attr->value);
    } catch (const FormatError& e) {
        throw fail(
            fmt::format("$INDEX_ROOT:{}: {} at value offset 0x{:X}", n, e.what(),
                        e.byte_offset().value_or(0)),
            dir.byte_offset + root_attr->offset + root_attr->value_offset + e.byte_offset().value_or(0));
    }
    if (root.indexed_type != spec.indexed_type || root.collation_rule != spec.collation_rule)
        throw fail(
            fmt::format("$INDEX_ROOT:{} indexes type 0x{:X} with collation {}, not type 0x{:X} with "
                        "collation {}",
                        n, root.indexed_type, root.collation_rule, spec.indexed_type, spec.collation_rule));
    const std::uint32_t block_bytes = root.index_block_bytes;
    if (!core::is_power_of_two(block_bytes) || block_bytes < 512 || block_bytes > 65536)
        throw fail(
            fmt::format("$INDEX_ROOT:{} gives an index block size of {}, not a power of two in "
                        "512..65536",
                        n, block_bytes));
    const std::uint32_t vcns = index_vcns_per_block(v, block_bytes);

    // Loaded on the first sub-node only: a small directory needs neither.
    std::optional<Attribute> alloc;
    std::vector<std::byte> bitmap;
    std::uint64_t block_count = 0;
    bool loaded = false;
    auto load_allocation = [&] {
        if (loaded) return;
        loaded = true;
        alloc = load_attribute(v, dir, AttrType::index_allocation, spec.name);
        if (!alloc)
            throw fail(fmt::format("an index entry has a sub-node, but there is no $INDEX_ALLOCATION:{}", n));
        const auto bm = load_attribute(v, dir, AttrType::bitmap, spec.name);
        if (!bm) throw fail(fmt::format("$INDEX_ALLOCATION:{0} has no $BITMAP:{0}", n));
        if (bm->size() > kMaxIndexBitmapBytes)
            throw fail(fmt::format("$BITMAP:{} has {} bytes, more than the {} read", n, bm->size(),
                                   kMaxIndexBitmapBytes));
        bitmap = v.read_stream(*bm, kMaxIndexBitmapBytes);
        block_count = alloc->size() / block_bytes;
    };

    std::unordered_set<std::uint64_t> seen;
    std::vector<Frame> stack;
    stack.push_back(Frame{std::move(root.entries), std::nullopt, 0, 0, false});
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next >= f.entries.size()) {
            stack.pop_back();
            continue;
        }
        const IndexEntry& e = f.entries[f.next];
        const std::uint32_t node_off = f.block ? kBlockNodeOffset : kRootNodeOffset;
        if (e.child_vcn && !f.descended) {
            f.descended = true;
            const std::uint64_t vcn = *e.child_vcn;
            const std::string from =
                f.block ? fmt::format("the entry at offset 0x{:X} of index block {}", e.offset + node_off,
                                      *f.block)
                        : fmt::format("the entry at offset 0x{:X} of $INDEX_ROOT:{}", e.offset + node_off, n);
            const std::uint32_t depth = f.depth + 1;
            if (depth > kMaxIndexDepth)
                throw fail(fmt::format("{} leads deeper than {} index levels", from, kMaxIndexDepth));
            load_allocation();
            if (vcn % vcns)
                throw fail(fmt::format("{} has sub-node VCN {}, not a multiple of {} VCNs per block", from,
                                       vcn, vcns));
            const std::uint64_t block = vcn / vcns;
            if (block >= block_count)
                throw fail(
                    fmt::format("{} has sub-node VCN {} (index block {}), past $INDEX_ALLOCATION:{}'s "
                                "{} blocks",
                                from, vcn, block, n, block_count));
            if (block / 8 >= bitmap.size() ||
                !(std::to_integer<unsigned>(bitmap[block / 8]) >> (block % 8) & 1))
                throw fail(fmt::format("{} has sub-node VCN {} (index block {}), free in $BITMAP:{}", from,
                                       vcn, block, n));
            if (!seen.insert(block).second)
                throw fail(
                    fmt::format("{} has sub-node VCN {} (index block {}), which the walk already visited "
                                "(a loop or a block with two parents)",
                                from, vcn, block));
            if (reached) reached->push_back(block);
            IndexBlock b = v.read_index_block(*alloc, block, block_bytes, spec.indexed_type == 0x30);
            if (b.vcn != vcn)
                throw fail(fmt::format("index block {} says VCN {}, but {} reached it as VCN {}", block,
                                       b.vcn, from, vcn),
                           v.device_offset(*alloc, block * block_bytes + 0x10));
            // `f` and `e` die with the push.
            stack.push_back(Frame{std::move(b.entries), block, depth, 0, false});
            continue;
        }
        f.descended = false;
        ++f.next;
        if (e.last()) continue;
        if (!visit(e, IndexEntryLocation{f.block, e.offset + node_off, f.depth})) return;
    }
}

std::vector<IndexEntry> list_directory(const Volume& v, const MftRecord& dir) {
    std::vector<IndexEntry> out;
    for_each_index_entry(v, dir, [&](const IndexEntry& e, const IndexEntryLocation&) {
        out.push_back(e);
        return true;
    });
    return out;
}

int UpcaseTable::collate(std::u16string_view a, std::u16string_view b) const noexcept {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t x = units.size() == 65536 ? units[a[i]] : a[i];
        const std::uint16_t y = units.size() == 65536 ? units[b[i]] : b[i];
        if (x != y) return x < y ? -1 : 1;
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

std::uint64_t UpcaseTable::hash(std::u16string_view name) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64-bit
    for (const char16_t c : name) {
        const std::uint16_t u = units.size() == 65536 ? units[c] : c;
        h = (h ^ (u & 0xFFu)) * 0x100000001b3ULL;
        h = (h ^ (u >> 8)) * 0x100000001b3ULL;
    }
    return h;
}

UpcaseTable load_upcase(const Volume& v) {
    UpcaseTable t;
    auto fallback = [&](const std::string& why) {
        const auto builtin = upcase_table();
        t.units.assign(builtin.begin(), builtin.end());
        t.note =
            fmt::format("$UpCase (MFT record 10) {}; names are compared through the built-in table", why);
        return t;
    };
    try {
        if (v.record_count() <= kUpcaseRecord) return fallback("does not exist");
        const MftRecord r = v.read_record(kUpcaseRecord);
        const auto data = load_attribute(v, r, AttrType::data);
        if (!r.in_use() || !data) return fallback("has no $DATA");
        if (data->size() != 131072) return fallback(fmt::format("has {} bytes, not 131072", data->size()));
        const auto bytes = v.read_stream(*data, 131072);
        t.units.resize(65536);
        for (std::size_t i = 0; i < 65536; ++i) t.units[i] = core::load_le16(bytes, 2 * i);
        return t;
    } catch (const Error& e) {
        return fallback(fmt::format("cannot be read ({})", e.what()));
    }
}

std::optional<IndexEntry> find_in_directory(const Volume& v, const MftRecord& dir, std::u16string_view name,
                                            const UpcaseTable& upcase) {
    std::optional<IndexEntry> loose;
    std::optional<IndexEntry> exact;
    for_each_index_entry(v, dir, [&](const IndexEntry& e, const IndexEntryLocation&) {
        if (!e.file_name) return true;
        const std::u16string& n = e.file_name->name;
        if (n == name) {
            exact = e;
            return false;
        }
        if (!loose && upcase.equal(n, name)) loose = e;
        return true;
    });
    return exact ? exact : loose;
}

std::optional<PathTarget> resolve_path(const Volume& v, std::string_view path, const UpcaseTable& upcase) {
    if (!core::is_valid_utf8(path)) throw Error(ErrorCode::usage, "the path is not valid UTF-8");
    MftRecord cur = v.read_record(kRootRecord);
    PathTarget at;
    at.record = kRootRecord;
    at.reference = {kRootRecord, cur.header.sequence};
    if (const Attribute* fn = cur.find(AttrType::file_name)) {
        try {
            at.name = decode_file_name(fn->value);
        } catch (const FormatError&) {
            at.name.name = u".";
        }
    } else {
        at.name.name = u".";
    }
    std::size_t pos = 0;
    while (pos < path.size()) {
        const std::size_t slash = path.find('/', pos);
        const std::string_view comp =
            path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
        pos = slash == std::string_view::npos ? path.size() : slash + 1;
        if (comp.empty()) continue;
        if (!cur.is_directory() ||
            (!cur.find(AttrType::index_root, kI30) && !cur.find(AttrType::attribute_list)))
            return std::nullopt;
        const auto e = find_in_directory(v, cur, core::utf8_to_utf16(comp), upcase);
        if (!e) return std::nullopt;
        const FileReference ref = FileReference::unpack(e->reference);
        if (ref.record >= v.record_count())
            throw Error(
                ErrorCode::corrupt,
                fmt::format("MFT record {}: the index entry \"{}\" refers to record {}, past $MFT's {} "
                            "records",
                            cur.number, comp, ref.record, v.record_count()),
                cur.byte_offset);
        MftRecord next = v.read_record(ref.record);
        if (!next.in_use() || next.header.sequence != ref.sequence)
            throw Error(
                ErrorCode::corrupt,
                fmt::format("MFT record {}: the index entry \"{}\" refers to record {} sequence {}, but the "
                            "record is {} with sequence {} (a stale entry)",
                            cur.number, comp, ref.record, ref.sequence, next.in_use() ? "in use" : "free",
                            next.header.sequence),
                next.byte_offset);
        at.record = ref.record;
        at.reference = ref;
        at.name = *e->file_name;
        cur = std::move(next);
    }
    return at;
}

std::optional<PathTarget> resolve_path(const Volume& v, std::string_view path,
                                       std::vector<std::string>* notes) {
    const UpcaseTable t = load_upcase(v);
    if (notes && t.note) notes->push_back(*t.note);
    return resolve_path(v, path, t);
}

}  // namespace fsimg::ntfs
