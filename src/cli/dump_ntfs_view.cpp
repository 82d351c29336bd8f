// fsimg dump --what index PATH / --what extents PATH on NTFS (dump_ntfs.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common.hpp"
#include "dump_ntfs.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fs/view.hpp"
#include "fsimg/ntfs/describe.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::cli {

namespace {

using json = nlohmann::json;

/// INDX blocks shown at most (a 20,000-entry directory has about 700).
constexpr std::uint64_t kMaxShownBlocks = 65536;

std::string attr_label(const ntfs::Attribute& a) { return a.display_name(); }

json runs_of(const ntfs::Volume& v, const ntfs::Attribute& a) {
    json out = json::array();
    const std::uint64_t C = v.geometry().cluster_bytes;
    for (const ntfs::MappedRun& r : a.runs) {
        json j{{"vcn", static_cast<std::uint64_t>(r.vcn)}, {"length", r.length}, {"sparse", !r.lcn}};
        if (r.lcn) {
            j["lcn"] = static_cast<std::uint64_t>(*r.lcn);
            j["byte_offset"] = static_cast<std::uint64_t>(*r.lcn) * C;
        } else {
            j["lcn"] = nullptr;
        }
        out.push_back(j);
    }
    return out;
}

void print_runs(const ntfs::Volume& v, const ntfs::Attribute& a, std::string_view indent) {
    const std::uint64_t C = v.geometry().cluster_bytes;
    for (const ntfs::MappedRun& r : a.runs) {
        const auto vcn = static_cast<std::uint64_t>(r.vcn);
        if (!r.lcn) {
            fmt::print("{}VCN {:>9}..{:<9} sparse    ({:>7} clusters)\n", indent, vcn, vcn + r.length - 1,
                       r.length);
            continue;
        }
        const auto lcn = static_cast<std::uint64_t>(*r.lcn);
        fmt::print("{}VCN {:>9}..{:<9} LCN {:>9}..{:<9} ({:>7} clusters)  bytes {}..{}\n", indent, vcn,
                   vcn + r.length - 1, lcn, lcn + r.length - 1, r.length, lcn * C, (lcn + r.length) * C - 1);
    }
}

struct Target {
    ntfs::PathTarget where;
    ntfs::MftRecord record;
};

Target resolve_or_throw(const ntfs::Volume& v, const std::string& image, const std::string& path) {
    const auto upcase = ntfs::load_upcase(v);
    if (upcase.note) warn(fmt::format("{}: {}", image, *upcase.note));
    const auto t = ntfs::resolve_path(v, path, upcase);
    if (!t) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", path, image));
    return {*t, v.read_record(t->record)};
}

int dump_index(const ntfs::Volume& v, const std::string& image, const std::string& path, bool json_out) {
    const Target t = resolve_or_throw(v, image, path);
    const ntfs::MftRecord& r = t.record;
    // A directory's $I30, or the view index $R of $Extend/$Reparse.
    const ntfs::IndexSpec* spec = nullptr;
    const ntfs::Attribute* ra = nullptr;
    for (const ntfs::IndexSpec* s : {&ntfs::kI30Index, &ntfs::kReparseIndex}) {
        ra = r.find(ntfs::AttrType::index_root, s->name);
        if (ra && !ra->non_resident) {
            spec = s;
            break;
        }
    }
    if (!spec)
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" (MFT record {}) has no resident $INDEX_ROOT named $I30 or $R: not a "
                                "directory, nor $Extend/$Reparse",
                                path, r.number));
    const ntfs::IndexKeys keys = ntfs::index_keys(spec->name, spec->indexed_type);
    const std::string_view label = spec->label;
    json j{{"schema_version", 1}, {"image", image},     {"what", "index"}, {"filesystem", "ntfs"},
           {"path", path},        {"record", r.number}, {"index", label}};
    std::vector<std::string> lines;
    int rc = kExitOk;
    // The walk first: which blocks it reaches, at which depth, and where it stops.
    std::map<std::uint64_t, std::uint32_t> depth_of;
    std::uint64_t walked = 0;
    std::uint32_t max_depth = 0;
    std::optional<std::string> walk_error;
    try {
        ntfs::for_each_index_entry(v, r, *spec,
                                   [&](const ntfs::IndexEntry&, const ntfs::IndexEntryLocation& loc) {
                                       ++walked;
                                       max_depth = std::max(max_depth, loc.depth);
                                       if (loc.block) depth_of.emplace(*loc.block, loc.depth);
                                       return true;
                                   });
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        walk_error = e.what();
        rc = kExitFailure;
    }
    std::uint32_t block_bytes = 0;
    try {
        const ntfs::IndexRoot root = ntfs::decode_index_root(ra->value);
        block_bytes = root.index_block_bytes;
        json jr{
            {"indexed_type", root.indexed_type},           {"collation_rule", root.collation_rule},
            {"index_block_bytes", root.index_block_bytes}, {"clusters_per_block", root.clusters_per_block},
            {"entries_offset", root.entries_offset},       {"index_length", root.index_length},
            {"allocated_length", root.allocated_length},   {"node_flags", root.node_flags}};
        lines.push_back(fmt::format(
            "$INDEX_ROOT:{}: type 0x{:X}, collation {}, blocks of {} bytes (clusters per block "
            "byte {}), entries at {}, {} used, {} allocated, flags 0x{:X}{}",
            label, root.indexed_type, root.collation_rule, root.index_block_bytes, root.clusters_per_block,
            root.entries_offset, root.index_length, root.allocated_length, root.node_flags,
            root.node_flags & 1 ? " (large: sub-nodes in INDX blocks)" : ""));
        jr["entries"] = index_entries(root.entries, keys, lines, "  ");
        j["index_root"] = jr;
    } catch (const FormatError& e) {
        j["index_root"] = {{"error", e.what()}};
        lines.push_back(fmt::format("$INDEX_ROOT:{}: CANNOT DECODE: {}", label, e.what()));
        rc = kExitFailure;
    }
    j["blocks"] = json::array();
    std::optional<ntfs::Attribute> alloc, bitmap;
    try {
        alloc = ntfs::load_attribute(v, r, ntfs::AttrType::index_allocation, spec->name);
        bitmap = ntfs::load_attribute(v, r, ntfs::AttrType::bitmap, spec->name);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        lines.push_back(fmt::format("attributes: {}", e.what()));
        rc = kExitFailure;
    }
    std::vector<std::string> tail;
    if (alloc) {
        const ntfs::IndexBlocks ib = ntfs::read_index_blocks(v, *alloc, bitmap ? &*bitmap : nullptr,
                                                             block_bytes, keys, kMaxShownBlocks);
        j["allocation"] = {{"data_size", alloc->size()},
                           {"allocated_size", alloc->non_resident ? alloc->allocated_size : alloc->size()},
                           {"blocks", ib.blocks},
                           {"runs", runs_of(v, *alloc)}};
        if (ib.bitmap_error)
            lines.push_back(fmt::format("$BITMAP:{}: {}; every block shown", label, *ib.bitmap_error));
        j["bitmap_in_use"] = ib.in_use;
        lines.push_back(
            fmt::format("$INDEX_ALLOCATION:{0}: {1} bytes, {2} blocks of {3}, {4} runs; $BITMAP:{0}: {5} "
                        "of them in use",
                        label, alloc->size(), ib.blocks, block_bytes, alloc->runs.size(),
                        ib.bitmap_error ? std::string("?") : std::to_string(ib.in_use.size())));
        for (const ntfs::IndexBlockSlot& slot : ib.slots) {
            json jb{{"block", slot.block}, {"vcn", slot.vcn}};
            const auto d = depth_of.find(slot.block);
            jb["depth"] = d == depth_of.end() ? json(nullptr) : json(d->second);
            if (!slot.decoded) {
                jb["error"] = slot.error;
                lines.push_back(fmt::format("INDX block {}: CANNOT DECODE: {}", slot.block, slot.error));
                rc = kExitFailure;
                j["blocks"].push_back(jb);
                continue;
            }
            const ntfs::IndexBlock& b = *slot.decoded;
            jb["stored_vcn"] = b.vcn;
            jb["lsn"] = b.lsn;
            jb["entries_offset"] = b.entries_offset;
            jb["index_length"] = b.index_length;
            jb["allocated_length"] = b.allocated_length;
            jb["node_flags"] = b.node_flags;
            lines.push_back(fmt::format(
                "INDX block {} (VCN {}{}, {}): entries at {}, {} used, {} allocated, flags 0x{:X}{}",
                slot.block, slot.vcn, b.vcn == slot.vcn ? "" : fmt::format(", says {}", b.vcn),
                d == depth_of.end() ? std::string("not reached by the walk")
                                    : fmt::format("depth {}", d->second),
                b.entries_offset, b.index_length, b.allocated_length, b.node_flags,
                b.node_flags & 1 ? " (inner node)" : " (leaf)"));
            jb["entries"] = index_entries(b.entries, keys, lines, "  ");
            j["blocks"].push_back(jb);
        }
        if (ib.in_use.size() == kMaxShownBlocks)
            lines.push_back(fmt::format("(blocks past {} not shown)", ib.in_use.back()));
    }
    j["walk"] = {{"entries", walked}, {"depth", max_depth}, {"blocks_reached", depth_of.size()}};
    if (walk_error) j["walk"]["error"] = *walk_error;
    if (json_out) {
        fmt::print("{}\n", j.dump(2));
        return rc;
    }
    fmt::print("{}: index {} of {} (MFT record {})\n", image, label, escape_name(path), r.number);
    for (const auto& l : lines) fmt::print("{}\n", l);
    if (walk_error) {
        fmt::print("walk: STOPPED after {} entries: {}\n", walked, *walk_error);
    } else {
        fmt::print("walk: {} entries in collation order, depth {}, {} blocks reached once each\n", walked,
                   max_depth, depth_of.size());
    }
    return rc;
}

int dump_extents(const ntfs::Volume& v, const std::string& image, const std::string& path, bool json_out) {
    const Target t = resolve_or_throw(v, image, path);
    const ntfs::MftRecord& r = t.record;
    json j{{"schema_version", 1},
           {"image", image},
           {"what", "extents"},
           {"filesystem", "ntfs"},
           {"path", path},
           {"record", r.number},
           {"cluster_bytes", v.geometry().cluster_bytes}};
    j["attributes"] = json::array();
    if (!json_out)
        fmt::print("{}: {} (MFT record {}), clusters of {} bytes\n", image, escape_name(path), r.number,
                   v.geometry().cluster_bytes);
    for (const ntfs::AttributeKey& k : ntfs::list_attributes(v, r)) {
        const auto a = ntfs::load_attribute(v, r, static_cast<ntfs::AttrType>(k.type), k.name);
        if (!a) continue;
        json ja{{"type", a->type},
                {"type_name", std::string(ntfs::attr_type_name(a->type))},
                {"name", core::utf16_to_utf8_lossy(a->name)},
                {"resident", !a->non_resident},
                {"flags", a->flags},
                {"size", a->size()}};
        if (!a->non_resident) {
            ja["record"] = a->record;
            if (!json_out)
                fmt::print("{}: {} bytes, resident in MFT record {} (attribute at record offset 0x{:X})\n",
                           attr_label(*a), a->size(), a->record, a->offset);
            ja["attribute_offset"] = a->offset;
        } else {
            std::uint64_t clusters = 0, sparse = 0;
            for (const auto& run : a->runs) (run.lcn ? clusters : sparse) += run.length;
            ja["allocated_size"] = a->allocated_size;
            ja["initialized_size"] = a->initialized_size;
            if (a->compressed_size) ja["compressed_size"] = *a->compressed_size;
            ja["clusters"] = clusters;
            ja["sparse_clusters"] = sparse;
            ja["runs"] = runs_of(v, *a);
            if (!json_out) {
                fmt::print("{}: {} bytes ({} allocated, {} initialized{}), {} runs, {} clusters{}\n",
                           attr_label(*a), a->data_size, a->allocated_size, a->initialized_size,
                           a->flags & 1        ? ", compressed"
                           : a->flags & 0x8000 ? ", sparse"
                                               : "",
                           a->runs.size(), clusters,
                           sparse ? fmt::format(" + {} sparse", sparse) : std::string());
                print_runs(v, *a, "  ");
            }
        }
        j["attributes"].push_back(ja);
    }
    if (json_out) fmt::print("{}\n", j.dump(2));
    return kExitOk;
}

}  // namespace

int dump_ntfs_view(const std::vector<std::string>& what, const std::string& image,
                   const io::BlockDevice& volume, bool json_out) {
    const std::string& kind = what.at(0);
    if (kind != "index" && kind != "extents")
        throw Error(
            ErrorCode::usage,
            fmt::format("--what {}: an NTFS volume shows boot, mft N, index PATH or extents PATH", kind));
    if (what.size() != 2)
        throw Error(ErrorCode::usage, fmt::format("--what {} needs a PATH inside the image", kind));
    const ntfs::Volume v(volume);
    const std::string path = fs::normalize_path(what[1]);
    return kind == "index" ? dump_index(v, image, path, json_out) : dump_extents(v, image, path, json_out);
}

}  // namespace fsimg::cli
