// Rewriting a directory's $I30 index as a new B+ tree, copy on write, and
// fsck -y's rebuild of indexes from the children's $FILE_NAMEs. See
// include/fsimg/ntfs/edit.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "edit_internal.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

using detail::is_i30;
using detail::kAllocationFixed;
using detail::kAttrInstance;
using detail::kBitmapFixed;
using detail::kBytesInUse;
using detail::kEndEntry;
using detail::kEndEntryWithChild;
using detail::kNodeFlags;
using detail::kRootFixed;
// MFT record header fields [FLATCAP concepts/file_record].
constexpr std::size_t kLinkCount = 0x12, kFirstAttribute = 0x14, kNextInstance = 0x28;
constexpr std::uint64_t kScanBytes = 1 << 20;  // $Bitmap read at a time

}  // namespace

void detail::for_each_in_use(
    const Volume& v,
    const std::function<void(std::uint64_t n, std::uint64_t owner, const MftRecord&)>& each) {
    (void)scan_records(v, 0, [&](std::uint64_t n, std::span<std::byte> raw) {
        std::vector<std::byte> copy(raw.begin(), raw.end());
        MftRecord r;
        try {
            r = parse_mft_record(copy, n);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return;
        }
        if (!r.in_use()) return;
        each(n, r.header.base_record == 0 ? n : FileReference::unpack(r.header.base_record).record, r);
    });
}

std::vector<Extent> Editor::free_extents(std::uint64_t need, const std::vector<Extent>& taken) const {
    const auto bitmap = load_attribute(vol_, vol_.read_record(kBitmapRecord), AttrType::data);
    if (!bitmap || !bitmap->non_resident)
        throw Error(ErrorCode::corrupt, "$Bitmap has no non-resident $DATA");
    const auto is_taken = [&](std::uint64_t c) {
        return std::any_of(taken.begin(), taken.end(),
                           [c](const Extent& e) { return c >= e.lcn && c - e.lcn < e.clusters; });
    };
    const std::uint64_t clusters = vol_.geometry().cluster_count;
    std::vector<Extent> first;  // the first free runs, until they hold `need`
    std::uint64_t gathered = 0, run_start = 0, run = 0;
    std::vector<std::byte> chunk;
    for (std::uint64_t byte = 0; need != 0 && byte * 8 < clusters && byte < bitmap->size();
         byte += chunk.size()) {
        chunk.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kScanBytes, bitmap->size() - byte)));
        vol_.read_stream(*bitmap, byte, chunk);
        for (std::size_t i = 0; i < chunk.size(); ++i) {
            const auto bits = std::to_integer<unsigned>(chunk[i]);
            if (bits == 0xFF) {
                run = 0;
                continue;
            }
            for (unsigned k = 0; k < 8; ++k) {
                const std::uint64_t c = (byte + i) * 8 + k;
                if (c >= clusters) break;
                if ((bits & (1u << k)) || is_taken(c)) {
                    run = 0;
                    continue;
                }
                if (run == 0) run_start = c;
                if (++run == need) return {Extent{run_start, need}};
                if (gathered < need) {
                    if (!first.empty() && first.back().lcn + first.back().clusters == c) {
                        ++first.back().clusters;
                    } else {
                        first.push_back(Extent{c, 1});
                    }
                    ++gathered;
                }
            }
        }
    }
    if (gathered < need)
        throw Error(ErrorCode::io,
                    fmt::format("no space: {} free clusters are needed, the volume has {}", need, gathered));
    return first;
}

std::uint64_t Editor::free_clusters() const {
    const auto bitmap = load_attribute(vol_, vol_.read_record(kBitmapRecord), AttrType::data);
    if (!bitmap || !bitmap->non_resident)
        throw Error(ErrorCode::corrupt, "$Bitmap has no non-resident $DATA");
    const std::uint64_t clusters = vol_.geometry().cluster_count;
    std::uint64_t used = 0;
    std::vector<std::byte> chunk;
    for (std::uint64_t byte = 0; byte * 8 < clusters && byte < bitmap->size(); byte += chunk.size()) {
        chunk.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kScanBytes, bitmap->size() - byte)));
        vol_.read_stream(*bitmap, byte, chunk);
        for (std::size_t i = 0; i < chunk.size(); ++i) {
            const std::uint64_t first = (byte + i) * 8;
            auto bits = std::to_integer<unsigned>(chunk[i]);
            if (first + 8 > clusters) bits &= (1u << (clusters > first ? clusters - first : 0)) - 1;
            used += static_cast<std::uint64_t>(std::popcount(bits));
        }
    }
    return clusters - std::min(clusters, used);
}

std::vector<check::BitmapFix> Editor::cluster_bits(
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs, bool set) const {
    const auto bitmap = load_attribute(vol_, vol_.read_record(kBitmapRecord), AttrType::data);
    if (!bitmap || !bitmap->non_resident)
        throw Error(ErrorCode::corrupt, "$Bitmap has no non-resident $DATA");
    std::map<std::uint64_t, std::uint8_t> by_byte;
    for (const auto& [lcn, length] : runs)
        for (std::uint64_t c = lcn; c < lcn + length; ++c)
            by_byte[c / 8] |= static_cast<std::uint8_t>(1u << (c % 8));
    std::vector<check::BitmapFix> fixes;
    for (const auto& [byte, bits] : by_byte) {
        const auto off = vol_.device_offset(*bitmap, byte);
        if (!off || byte >= bitmap->size())
            throw Error(ErrorCode::corrupt, fmt::format("$Bitmap does not map cluster {}", byte * 8));
        fixes.push_back({*off, set ? bits : std::uint8_t{0}, set ? std::uint8_t{0} : bits});
    }
    std::sort(fixes.begin(), fixes.end(),
              [](const check::BitmapFix& x, const check::BitmapFix& y) { return x.offset < y.offset; });
    return fixes;
}

Editor::IndexRewrite Editor::plan_index(std::uint64_t dir, std::vector<IndexKey> entries,
                                        const std::vector<Extent>& taken) const {
    const Record d = read_record(dir);
    const MftRecord& r = d.parsed;
    const auto unsupported = [dir](std::string_view why) {
        return Error(
            ErrorCode::unsupported,
            fmt::format("directory record {} {}: fsimg does not rewrite such an index yet", dir, why));
    };
    if (!r.is_directory() || r.header.base_record != 0)
        throw Error(ErrorCode::corrupt, fmt::format("MFT record {} is not a directory", dir));
    if (r.find(AttrType::attribute_list) != nullptr) throw unsupported("has an $ATTRIBUTE_LIST");
    const Attribute* ir = r.find(AttrType::index_root, u"$I30");
    const Attribute* ia = r.find(AttrType::index_allocation, u"$I30");
    const Attribute* bm = r.find(AttrType::bitmap, u"$I30");
    if (ir == nullptr || ir->non_resident)
        throw Error(ErrorCode::corrupt,
                    fmt::format("directory record {} has no resident $INDEX_ROOT:$I30", dir));
    if (bm != nullptr && bm->non_resident) throw unsupported("keeps its $BITMAP:$I30 outside the record");
    if (ia != nullptr && !ia->non_resident)
        throw Error(ErrorCode::corrupt,
                    fmt::format("directory record {}: $INDEX_ALLOCATION is resident", dir));
    std::uint32_t block_bytes = 0;
    try {
        block_bytes = decode_index_root(ir->value).index_block_bytes;
    } catch (const FormatError&) {
        throw Error(ErrorCode::corrupt, fmt::format("directory record {}: $INDEX_ROOT does not decode", dir));
    }
    if (block_bytes < 512 || block_bytes > 65536 || (block_bytes & (block_bytes - 1)) != 0)
        throw Error(
            ErrorCode::corrupt,
            fmt::format("directory record {}: index block size {} is not a power of two in 512..65536", dir,
                        block_bytes));
    if (ia != nullptr) vol_.check_runs(*ia);
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    const std::uint32_t per = index_vcns_per_block(vol_, block_bytes);

    // The entries in collation order ($UpCase, then the raw units for names
    // equal but for case: formats.md §3.8).
    std::sort(entries.begin(), entries.end(), [&](const IndexKey& a, const IndexKey& b) {
        const int c = upcase_.collate(a.name, b.name);
        return c != 0 ? c < 0 : a.name < b.name;
    });
    std::vector<std::vector<std::byte>> bytes;
    std::vector<std::uint32_t> sizes;
    for (const IndexKey& e : entries) {
        bytes.push_back(build_file_name_index_entry(e.file, e.key));
        sizes.push_back(static_cast<std::uint32_t>(bytes.back().size()));
    }

    // The room: the record without the index's attributes. The root grows
    // while the record keeps kIndexRootReserve bytes free (ntfs-3g's rule);
    // a record that has not got them already is given what it has.
    const std::int64_t other =
        std::int64_t{r.header.bytes_in_use} - ir->length - (ia ? ia->length : 0) - (bm ? bm->length : 0);
    std::int64_t spare = std::int64_t{r.header.bytes_allocated} - other - kRootFixed;
    if (spare - kIndexRootReserve >= kEndEntryWithChild + kAllocationFixed + 24 + kBitmapFixed + 8)
        spare -= kIndexRootReserve;
    IndexRoom room = directory_index_room(vol_.geometry().mft_record_bytes, block_bytes, 1, 8);
    room.root_leaf = spare - kEndEntry;
    IndexShape shape;
    std::vector<Extent> extents;
    std::uint64_t bitmap_bytes = 8, runlist_bytes = 8;
    for (int round = 0;; ++round) {
        room.root_parent = spare - kEndEntryWithChild - kAllocationFixed - std::int64_t(r8(runlist_bytes)) -
                           kBitmapFixed - std::int64_t(r8(bitmap_bytes));
        shape = grow_index(sizes, room, false);
        if (shape.blocks.empty()) break;
        if (room.root_parent < 0) throw unsupported("has no room in its record for an index in blocks");
        if (index_bitmap_bytes(shape.blocks.size()) > bitmap_bytes) {
            bitmap_bytes = index_bitmap_bytes(shape.blocks.size());
            continue;
        }
        const std::uint64_t need = (shape.blocks.size() * std::uint64_t{block_bytes} + cb - 1) / cb;
        extents = free_extents(need, taken);
        const std::uint64_t runlist = encode_runlist(runs_of(extents)).size();
        if (r8(runlist) > r8(runlist_bytes) && round < 8) {
            runlist_bytes = runlist;
            continue;
        }
        if (r8(runlist) > r8(runlist_bytes)) throw unsupported("has no room in its record for the runlist");
        break;
    }

    // The new attributes, in type order, each keeping the instance id of
    // the one it replaces.
    const bool large = !shape.blocks.empty();
    std::uint16_t next = r.header.next_instance;
    const auto stamped = [&](std::vector<std::byte> a, const Attribute* old) {
        core::store_le16(a, kAttrInstance, old ? old->instance : next++);
        return a;
    };
    std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
    fresh.emplace_back(0x90, stamped(build_resident_attribute(
                                         AttrType::index_root, u"$I30",
                                         build_index_root(0x30, collation::file_name, block_bytes, cb,
                                                          index_node_bytes(bytes, shape.root, per), large)),
                                     ir));
    IndexRewrite plan;
    plan.dir = dir;
    plan.block_bytes = block_bytes;
    if (large) {
        const std::uint64_t clusters = clusters_of(extents);
        const std::uint64_t size = shape.blocks.size() * std::uint64_t{block_bytes};
        fresh.emplace_back(
            0xA0, stamped(build_nonresident_attribute(AttrType::index_allocation, u"$I30", runs_of(extents),
                                                      {clusters * cb, size, size}, clusters - 1),
                          ia));
        fresh.emplace_back(0xB0, stamped(build_resident_attribute(AttrType::bitmap, u"$I30",
                                                                  index_block_bitmap(shape.blocks.size())),
                                         bm));
        Attribute& a = plan.allocation;
        a.record = dir;
        a.type = 0xA0;
        a.name = u"$I30";
        a.non_resident = true;
        a.allocated_size = clusters * cb;
        a.data_size = a.initialized_size = size;
        a.last_vcn = Vcn{clusters - 1};
        std::uint64_t vcn = 0;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
        for (const Extent& e : extents) {
            a.runs.push_back(MappedRun{Vcn{vcn}, e.clusters, Lcn{e.lcn}});
            runs.emplace_back(e.lcn, e.clusters);
            vcn += e.clusters;
        }
        plan.allocate = cluster_bits(runs, true);
        for (std::size_t b = 0; b < shape.blocks.size(); ++b) {
            const IndexNode& node = shape.blocks[b];
            std::vector<std::byte> block =
                build_index_block(b * per, block_bytes, index_node_bytes(bytes, node, per));
            if (!node.children.empty()) block[kNodeFlags] |= std::byte{1};
            plan.blocks.push_back(std::move(block));
        }
    }
    if (ia != nullptr) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> old;
        for (const MappedRun& m : ia->runs)
            if (m.lcn && m.length != 0) old.emplace_back(static_cast<std::uint64_t>(*m.lcn), m.length);
        plan.release = cluster_bits(old, false);
    }

    // The record: every other attribute as it is, the new ones in type order.
    auto record = rebuilt_record(d, is_i30, fresh, next);
    if (!record) throw unsupported("has no room in its record for the new index");
    plan.record = std::move(*record);
    plan.extents = extents;
    return plan;
}

namespace {

/// $FILE_NAME's flag for a directory's name [FLATCAP attributes/file_name].
constexpr std::uint32_t kFileNameIsDirectory = 0x10000000;

/// What an index entry or a child's name contributes to its directory's
/// fingerprint: the file it names, the parent, namespace and directory flag
/// of its key, and the name (FNV-1a; summed over a directory, so the order
/// does not count).
std::uint64_t name_hash(FileReference file, const FileName& fn) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xFF;
            h *= 0x100000001b3ull;
        }
    };
    mix(file.packed());
    mix(fn.parent.record);
    mix(static_cast<std::uint64_t>(fn.name_space));
    mix(fn.file_attributes & kFileNameIsDirectory);
    for (const char16_t u : fn.name) mix(u);
    return h;
}

}  // namespace

std::pair<std::uint64_t, std::uint64_t> Editor::entry_sizes(const Attribute& data) noexcept {
    const std::uint64_t allocated = !data.non_resident     ? r8(data.value.size())
                                    : data.compressed_size ? *data.compressed_size
                                                           : data.allocated_size;
    return {allocated, data.size()};
}

std::uint64_t Editor::rebuild_indexes(std::vector<std::string>* left) {
    // 1. Every name of every in-use record, as a fingerprint per parent: how
    // many, and the sum of their hashes.
    struct Name {
        std::uint64_t owner = 0;
        FileName fn;
    };
    struct Children {
        std::uint64_t count = 0, hash = 0;
    };
    std::map<std::uint64_t, std::uint16_t> sequence;  // in-use base records
    std::vector<std::uint64_t> dirs;
    std::vector<Name> names;
    const auto scan = [&](const std::function<void(const Name&)>& each) {
        names.clear();
        detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
            if (r.header.base_record == 0) {
                sequence[n] = r.header.sequence;
                if (r.is_directory()) dirs.push_back(n);
            }
            for (const Attribute& a : r.attributes) {
                if (a.kind() != AttrType::file_name || a.non_resident) continue;
                try {
                    names.push_back({owner, decode_file_name(a.value)});
                } catch (const FormatError&) {
                }
            }
        });
        for (const Name& x : names) each(x);
    };
    // A name is a child of the directory its parent reference names, record
    // and sequence number, when its owner is an in-use base record.
    const auto child_of = [&](const Name& x) -> std::optional<FileReference> {
        const auto owner = sequence.find(x.owner);
        const auto parent = sequence.find(x.fn.parent.record);
        if (owner == sequence.end() || parent == sequence.end() || parent->second != x.fn.parent.sequence)
            return std::nullopt;
        return FileReference{x.owner, owner->second};
    };
    std::map<std::uint64_t, Children> expected;
    scan([&](const Name& x) {
        if (const auto ref = child_of(x)) {
            Children& c = expected[x.fn.parent.record];
            ++c.count;
            c.hash += name_hash(*ref, x.fn);
        }
    });
    names.clear();
    names.shrink_to_fit();
    // 2. The directories whose index differs from their children, is out of
    // order, cannot be walked (a block that does not decode, a sub-node VCN
    // past the allocation or free in the index $BITMAP, a loop: what
    // for_each_index_entry throws as Error(corrupt)), or whose $BITMAP:$I30
    // marks other blocks than the walk reached.
    std::set<std::uint64_t> rebuild;
    // The blocks $BITMAP:$I30 marks in use are those the walk reached, as
    // check_index judges them (a walk that did not throw: $INDEX_ROOT decodes).
    const auto bitmap_matches = [&](const Record& rec, const std::vector<std::uint64_t>& reached) {
        const auto ia = load_attribute(vol_, rec.parsed, AttrType::index_allocation, u"$I30");
        if (!ia) return true;
        const auto bm = load_attribute(vol_, rec.parsed, AttrType::bitmap, u"$I30");
        const auto ir = load_attribute(vol_, rec.parsed, AttrType::index_root, u"$I30");
        if (!bm || !ir) return false;
        const std::uint32_t block_bytes = decode_index_root(ir->value).index_block_bytes;
        const std::vector<std::byte> bits = vol_.read_stream(*bm, kMaxIndexBitmapBytes);
        const std::uint64_t blocks = ia->size() / block_bytes;
        const std::set<std::uint64_t> in_tree(reached.begin(), reached.end());
        const auto bit = [&](std::uint64_t b) {
            return b / 8 < bits.size() && ((std::to_integer<unsigned>(bits[b / 8]) >> (b % 8)) & 1) != 0;
        };
        for (const std::uint64_t b : in_tree)
            if (!bit(b)) return false;
        for (std::uint64_t b = 0; b < blocks && b / 8 < bits.size(); ++b)
            if (bit(b) && !in_tree.count(b)) return false;
        return true;
    };
    for (const std::uint64_t d : dirs) {
        Children have;
        bool disordered = false;
        std::u16string prev;
        std::vector<std::uint64_t> reached;
        Record rec;
        try {
            rec = read_record(d);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            if (left) left->push_back(fmt::format("directory record {}: {}", d, e.what()));
            continue;
        }
        // A directory without $INDEX_ROOT:$I30 (and no $ATTRIBUTE_LIST, whose
        // entries name its attributes) gets an empty one, as make_directory
        // makes it, first: the rebuild below then fills it.
        if (!rec.parsed.find(AttrType::attribute_list) &&
            std::none_of(rec.parsed.attributes.begin(), rec.parsed.attributes.end(), [](const Attribute& a) {
                return a.kind() == AttrType::index_root && a.name == u"$I30";
            })) {
            std::uint16_t next = rec.parsed.header.next_instance;
            auto root = build_resident_attribute(
                AttrType::index_root, u"$I30",
                build_index_root(0x30, collation::file_name, vol_.geometry().index_block_bytes,
                                 vol_.geometry().cluster_bytes, build_end_index_entry(), false));
            core::store_le16(root, kAttrInstance, next++);
            auto fixed = rebuilt_record(
                rec, [](const Attribute&) { return false; },
                {{static_cast<std::uint32_t>(AttrType::index_root), std::move(root)}}, next);
            if (!fixed) {
                if (left) left->push_back(fmt::format("directory record {}: no room for an $INDEX_ROOT", d));
                continue;
            }
            begin();
            write_record(d, std::move(*fixed));
            rec = read_record(d);
            rebuild.insert(d);
            continue;
        }
        try {
            for_each_index_entry(
                vol_, rec.parsed, kI30Index,
                [&](const IndexEntry& e, const IndexEntryLocation&) {
                    if (!e.file_name) return true;
                    // $UpCase collation, then the raw units (as plan_index sorts)
                    if (have.count != 0) {
                        const int c = upcase_.collate(prev, e.file_name->name);
                        if (c > 0 || (c == 0 && prev >= e.file_name->name)) disordered = true;
                    }
                    prev = e.file_name->name;
                    ++have.count;
                    have.hash += name_hash(FileReference::unpack(e.reference), *e.file_name);
                    return true;
                },
                &reached);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            if (e.code() == ErrorCode::corrupt) {
                rebuild.insert(d);  // its entries are its children's names, whatever the index held
            } else if (left) {
                left->push_back(fmt::format("directory record {}: {}", d, e.what()));
            }
            continue;
        }
        const Children want = expected.count(d) ? expected[d] : Children{};
        bool marked = true;
        try {
            marked = bitmap_matches(rec, reached);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            marked = false;
        }
        if (disordered || have.count != want.count || have.hash != want.hash || !marked) rebuild.insert(d);
    }
    if (rebuild.empty()) return 0;
    // 3. Their children's keys (a second scan: memory for these only), the
    // sizes of each file's unnamed $DATA in them.
    std::map<std::uint64_t, std::vector<IndexKey>> keys;
    scan([&](const Name& x) {
        if (!rebuild.count(x.fn.parent.record)) return;
        const auto ref = child_of(x);
        if (!ref) return;
        FileName fn = x.fn;
        if (ref->record >= kFirstNonSystemRecord) {
            try {
                const Record f = read_record(ref->record);
                if (!f.parsed.is_directory())
                    if (const auto data = load_attribute(vol_, f.parsed, AttrType::data))
                        std::tie(fn.allocated_size, fn.data_size) = entry_sizes(*data);
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
            }
        }
        keys[x.fn.parent.record].push_back({*ref, encode_file_name(fn), fn.name});
    });
    std::uint64_t done = 0;
    for (const std::uint64_t d : rebuild) {
        IndexRewrite plan;
        try {
            plan = plan_index(d, std::move(keys[d]));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            if (left) left->push_back(e.what());
            continue;
        }
        apply_index(plan);
        ++done;
    }
    return done;
}

FileEntry Editor::found_directory(std::int64_t mtime, std::string& name) {
    for (unsigned k = 0; k < 1000; ++k) {
        name = fmt::format("found.{:03}", k);
        if (const auto e = find(kRootRecord, name)) {
            if (e->is_directory) return *e;
        } else {
            return make_directory(kRootRecord, name, mtime);
        }
    }
    throw Error(ErrorCode::refused, "found.000 to found.999 are all files in the root directory");
}

Editor::Relinked Editor::relink_orphans(bool to_found, std::int64_t mtime, std::vector<std::string>* left) {
    // 1. The in-use directories (base records) and every base record's own
    // names; records with an $ATTRIBUTE_LIST (names may live in extension
    // records) apart.
    std::map<std::uint64_t, std::uint16_t> dirs;
    std::map<std::uint64_t, std::pair<std::uint16_t, std::vector<FileName>>> named;
    std::set<std::uint64_t> listed;
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
        if (r.header.base_record == 0 && r.is_directory()) dirs[n] = r.header.sequence;
        if (owner < kFirstNonSystemRecord) return;
        if (r.header.base_record != 0 || r.find(AttrType::attribute_list)) listed.insert(owner);
        if (r.header.base_record != 0) return;
        auto& [sequence, names] = named[n];
        sequence = r.header.sequence;
        for (const Attribute& a : r.attributes) {
            if (a.kind() != AttrType::file_name || a.non_resident) continue;
            try {
                names.push_back(decode_file_name(a.value));
            } catch (const FormatError&) {
            }
        }
    });
    const auto parent_of = [&](const FileName& fn) -> std::optional<std::uint64_t> {
        const auto d = dirs.find(fn.parent.record);
        if (d == dirs.end() || d->second != fn.parent.sequence) return std::nullopt;
        return d->first;
    };
    // 2. The orphans: no name gives an in-use directory of that sequence number.
    struct Orphan {
        std::uint64_t record = 0;
        std::uint16_t sequence = 0;
        FileName name;         // its first name outside the DOS namespace
        std::uint64_t to = 0;  // the directory it goes into
    };
    std::vector<Orphan> orphans;
    std::map<std::uint64_t, std::size_t> orphan_at;
    // Directories whose names lead back into themselves (a cycle of parent
    // references, so that none reaches the root): the lowest record of each
    // cycle is taken as an orphan too, which opens the cycle; the others
    // then reach the root through it.
    std::set<std::uint64_t> breakers;
    {
        enum : std::uint8_t { walking = 1, reaches = 2, lost = 3 };
        std::map<std::uint64_t, std::uint8_t> state;
        const auto up = [&](std::uint64_t d) -> std::optional<std::uint64_t> {
            const auto it = named.find(d);
            if (it == named.end()) return std::nullopt;
            for (const FileName& fn : it->second.second)
                if (const auto p = parent_of(fn)) return *p;
            return std::nullopt;
        };
        for (const auto& [d, sequence] : dirs) {
            std::vector<std::uint64_t> path;
            std::optional<std::uint64_t> at = d;
            std::uint8_t verdict = lost;
            while (at) {
                if (*at < kFirstNonSystemRecord) {  // the root, $Extend
                    verdict = reaches;
                    break;
                }
                const std::uint8_t s = state[*at];
                if (s == walking) {  // a cycle: from *at to the end of the path
                    const auto from = std::find(path.begin(), path.end(), *at);
                    breakers.insert(*std::min_element(from, path.end()));
                    break;
                }
                if (s != 0) {
                    verdict = s;
                    break;
                }
                state[*at] = walking;
                path.push_back(*at);
                at = up(*at);
            }
            for (const std::uint64_t x : path) state[x] = verdict;
        }
    }
    for (const auto& [n, entry] : named) {
        const auto& [sequence, names] = entry;
        if (names.empty() ||
            (!breakers.count(n) && std::any_of(names.begin(), names.end(), [&](const FileName& fn) {
                return parent_of(fn).has_value();
            })))
            continue;
        if (listed.count(n)) {
            if (left)
                left->push_back(fmt::format("MFT record {}: an orphan with an $ATTRIBUTE_LIST is left", n));
            continue;
        }
        const auto long_name = std::find_if(
            names.begin(), names.end(), [](const FileName& fn) { return fn.name_space != Namespace::dos; });
        orphan_at[n] = orphans.size();
        orphans.push_back({n, sequence, long_name != names.end() ? *long_name : names.front(), 0});
    }
    Relinked done;
    if (orphans.empty()) return done;
    // 3. An orphan an in-use directory's index names (record and sequence
    // number) goes back there, when that directory reaches the root through
    // its names without passing an orphan: its $FILE_NAME's parent reference
    // was what broke, the index says where the file was.
    const auto reaches_root = [&](std::uint64_t d) {
        for (std::uint64_t steps = 0; steps <= vol_.record_count(); ++steps) {
            if (d < kFirstNonSystemRecord) return dirs.count(d) != 0;  // the root, $Extend
            if (orphan_at.count(d)) return false;
            const auto it = named.find(d);
            if (it == named.end()) return false;
            const auto& names = it->second.second;
            const auto up = std::find_if(names.begin(), names.end(),
                                         [&](const FileName& fn) { return parent_of(fn).has_value(); });
            if (up == names.end()) return false;
            d = up->parent.record;
        }
        return false;
    };
    for (const auto& [d, sequence] : dirs) {
        Record rec;
        try {
            rec = read_record(d);
            for_each_index_entry(
                vol_, rec.parsed, kI30Index, [&](const IndexEntry& e, const IndexEntryLocation&) {
                    const FileReference ref = FileReference::unpack(e.reference);
                    const auto o = orphan_at.find(ref.record);
                    if (o != orphan_at.end() && orphans[o->second].sequence == ref.sequence &&
                        orphans[o->second].to == 0 && ref.record != d)
                        orphans[o->second].to = d;
                    return true;
                });
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    for (Orphan& o : orphans)
        if (o.to != 0 && !reaches_root(o.to)) o.to = 0;
    named.clear();
    std::uint64_t found_record = 0;
    // 4. The others into found.000 (or the first of found.001 .. found.999 that is no file) in the root.
    if (to_found && std::any_of(orphans.begin(), orphans.end(), [](const Orphan& o) { return o.to == 0; })) {
        const FileEntry found = found_directory(mtime, done.found_dir);
        found_record = found.record;
        for (Orphan& o : orphans)
            if (o.to == 0) o.to = found.record;
    }
    // 5. Per directory: names unique in any letter case (" (record N)" before
    // the extension otherwise), DOS names as Windows makes them.
    std::map<std::uint64_t, std::vector<std::size_t>> into_dir;
    for (std::size_t i = 0; i < orphans.size(); ++i)
        if (orphans[i].to != 0) into_dir[orphans[i].to].push_back(i);
    std::vector<std::u16string> wanted(orphans.size());
    std::vector<NamePlan> plans(orphans.size());
    for (const auto& [d, members] : into_dir) {
        std::vector<std::u16string> held;
        for (const IndexKey& k : index_keys(d)) {
            const auto o = orphan_at.find(k.file.record);
            if (o == orphan_at.end() || orphans[o->second].sequence != k.file.sequence)
                held.push_back(k.name);
        }
        const auto less = [this](const std::u16string& a, const std::u16string& b) {
            return upcase_.collate(a, b) < 0;
        };
        std::set<std::u16string, decltype(less)> taken(held.begin(), held.end(), less);
        std::vector<NameRequest> requests;
        std::vector<std::size_t> asked;
        for (const std::size_t i : members) {
            std::u16string name = orphans[i].name.name;
            if (taken.count(name)) {
                const std::size_t dot = name.rfind(u'.');
                const std::size_t at = dot == std::u16string::npos || dot == 0 ? name.size() : dot;
                const std::u16string tag =
                    core::utf8_to_utf16(fmt::format(" (record {})", orphans[i].record));
                const std::size_t keep =
                    tag.size() + (name.size() - at) >= 255 ? 0 : 255 - tag.size() - (name.size() - at);
                name = name.substr(0, std::min(at, keep)) + tag + name.substr(at);
            }
            if (name.size() > 255 || !taken.insert(name).second) {
                if (left)
                    left->push_back(
                        fmt::format("MFT record {}: no free name in its directory", orphans[i].record));
                continue;
            }
            wanted[i] = std::move(name);
        }
        for (const std::size_t i : members)
            if (!wanted[i].empty()) {
                requests.push_back({wanted[i], false});
                asked.push_back(i);
            }
        const std::vector<std::u16string_view> reserved(held.begin(), held.end());
        const std::vector<NamePlan> got = plan_directory_names(requests, reserved);
        for (std::size_t k = 0; k < asked.size(); ++k) plans[asked[k]] = got[k];
    }
    // 6. Each record written with its new names (after the dirty flag).
    begin();
    for (std::size_t i = 0; i < orphans.size(); ++i) {
        if (wanted[i].empty()) continue;
        const Orphan& o = orphans[i];
        const Record r = read_record(o.record);
        FileName fn = o.name;
        fn.parent = FileReference{o.to, read_record(o.to).parsed.header.sequence};
        const auto values_for = [&](const MftRecord& rec, bool dos) {
            FileName x = fn;
            if (!rec.is_directory())
                if (const auto data = load_attribute(vol_, rec, AttrType::data))
                    std::tie(x.allocated_size, x.data_size) = entry_sizes(*data);
            std::vector<std::vector<std::byte>> values;
            x.name = wanted[i];
            x.name_space = plans[i].name_space;
            values.push_back(encode_file_name(x));
            if (dos && !plans[i].dos.empty()) {
                x.name = plans[i].dos;
                x.name_space = Namespace::dos;
                values.push_back(encode_file_name(x));
            }
            std::sort(values.begin(), values.end());
            return values;
        };
        // A record with no room for the names: its longest resident stream
        // out to clusters first (as when a name is restored), else the
        // name alone, without the DOS alias (as Windows names files with
        // short names turned off).
        auto record = renamed_record(r, values_for(r.parsed, true));
        std::optional<DataOut> out;
        if (!record && (out = plan_data_out(r)))
            record = renamed_record(out->record, values_for(out->record.parsed, true));
        if (!record) {
            out.reset();
            record = renamed_record(r, values_for(r.parsed, false));
        }
        if (!record) {
            if (left)
                left->push_back(fmt::format("MFT record {}: its new names do not fit the record", o.record));
            continue;
        }
        if (out) write_data_out(*out);
        write_record(o.record, std::move(*record));
        if (breakers.count(o.record))
            ++(o.to == found_record ? done.cycle_found : done.cycle_back);
        else
            ++(o.to == found_record ? done.found : done.back);
    }
    keys_.clear();
    namers_.clear();
    return done;
}

Editor::NamesRestored Editor::restore_file_names(bool to_found, std::int64_t mtime,
                                                 std::vector<std::string>* left) {
    // 1. The in-use base records but the reserved 12..15 (mkntfs and Windows
    // keep those without names), their sequence numbers, whether any record
    // (the base or an extension naming it) holds a $FILE_NAME, and their
    // extension records; the in-use directories.
    constexpr std::uint64_t kFirstReserved = 12;
    std::map<std::uint64_t, std::uint16_t> bases, dirs;
    std::set<std::uint64_t> named, parents;  // records with a name; directories a name gives as parent
    std::map<std::uint64_t, std::vector<std::uint64_t>> extensions;  // packed base reference -> records
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
        if (r.header.base_record == 0 && r.is_directory()) dirs[n] = r.header.sequence;
        if (owner >= kFirstReserved && owner < kFirstNonSystemRecord) return;
        if (r.header.base_record == 0)
            bases[n] = r.header.sequence;
        else
            extensions[r.header.base_record].push_back(n);
        for (const Attribute& a : r.attributes) {
            if (a.kind() != AttrType::file_name || a.non_resident) continue;
            named.insert(owner);
            try {
                parents.insert(decode_file_name(a.value).parent.record);
            } catch (const FormatError&) {
            }
        }
    });
    std::map<std::uint64_t, std::uint16_t> nameless;
    for (const auto& [n, sequence] : bases)
        if (!named.count(n)) nameless[n] = sequence;
    NamesRestored done;
    if (nameless.empty()) return done;
    // 2. The index entries naming them (record and sequence number): each
    // holds the $FILE_NAME value the record had [FLATCAP concepts/index_record,
    // attributes/index_root: an $I30 entry's key is the file's $FILE_NAME].
    std::map<std::uint64_t, std::vector<FileName>> found;
    for (const auto& [d, sequence] : dirs) {
        try {
            const Record rec = read_record(d);
            for_each_index_entry(vol_, rec.parsed, kI30Index,
                                 [&](const IndexEntry& e, const IndexEntryLocation&) {
                                     const FileReference ref = FileReference::unpack(e.reference);
                                     const auto it = nameless.find(ref.record);
                                     if (it == nameless.end() || it->second != ref.sequence || !e.file_name)
                                         return true;
                                     FileName fn = *e.file_name;
                                     fn.parent = FileReference{d, sequence};
                                     auto& names = found[ref.record];
                                     if (std::none_of(names.begin(), names.end(), [&](const FileName& x) {
                                             return x.parent == fn.parent && x.name == fn.name &&
                                                    x.name_space == fn.name_space;
                                         }))
                                         names.push_back(std::move(fn));
                                     return true;
                                 });
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    // 3. With `to_found`, those no entry names get a name in found.000
    // (chkdsk's file0000.chk and dir0000.chk for a file and a directory
    // whose names are lost); its times and flags from $STANDARD_INFORMATION.
    std::vector<std::uint64_t> unnamed;
    std::set<std::uint64_t> into_found;
    for (const auto& [n, sequence] : nameless)
        if (found.count(n) == 0 && n >= kFirstNonSystemRecord)
            unnamed.push_back(n);
        else if (found.count(n) == 0 && left)  // a system file's name is its index entry's
            left->push_back(fmt::format("MFT record {}: a system file no index entry names", n));
    // A record that holds nothing (no clusters, no $ATTRIBUTE_LIST, no data
    // byte; a directory no index entry and no name points into) is marked
    // not in use instead: a name would only give the user an empty file.
    if (to_found) {
        const auto holds_nothing = [&](const MftRecord& r) {
            if (r.find(AttrType::attribute_list) || parents.count(r.number)) return false;
            for (const Attribute& a : r.attributes) {
                if (a.non_resident && !a.runs.empty()) return false;
                if (a.kind() == AttrType::data && a.size() != 0) return false;
                if (a.kind() == AttrType::index_allocation) return false;
            }
            if (!r.is_directory()) return true;
            bool entries = false;
            for_each_index_entry(vol_, r, kI30Index, [&](const IndexEntry& e, const IndexEntryLocation&) {
                entries = entries || e.file_name.has_value();
                return !entries;
            });
            return !entries;
        };
        std::erase_if(unnamed, [&](std::uint64_t n) {
            Record r = read_record(n);
            bool empty = false;
            try {
                empty = holds_nothing(r.parsed);
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
            }
            if (!empty) return false;
            core::store_le16(r.bytes, 0x16,
                             static_cast<std::uint16_t>(r.parsed.header.flags & ~record_flag::in_use));
            begin();
            write_record(n, std::move(r.bytes));
            mark_record(n, false);
            ++done.freed;
            return true;
        });
    }
    if (!unnamed.empty() && !to_found) {
        done.unnamed = unnamed.size();
        if (left)
            for (const std::uint64_t n : unnamed)
                left->push_back(fmt::format("MFT record {}: no index entry names it", n));
    } else if (!unnamed.empty()) {
        const FileEntry dir = found_directory(mtime, done.found_dir);
        const FileReference parent{dir.record, read_record(dir.record).parsed.header.sequence};
        std::vector<std::u16string> held;
        for (const IndexKey& k : index_keys(dir.record)) held.push_back(k.name);
        const auto taken = [&](const std::u16string& name) {
            return std::any_of(held.begin(), held.end(),
                               [&](const std::u16string& h) { return upcase_.collate(h, name) == 0; });
        };
        const std::vector<std::u16string> existing = held;
        std::vector<std::pair<std::uint64_t, FileName>> made;
        unsigned counter = 0;
        for (const std::uint64_t n : unnamed) {
            const Record r = read_record(n);
            const bool is_dir = r.parsed.is_directory();
            std::u16string name;
            for (; counter < 10000 && name.empty(); ++counter) {
                const std::u16string c =
                    core::utf8_to_utf16(fmt::format("{}{:04}.chk", is_dir ? "dir" : "file", counter));
                if (!taken(c)) name = c;
            }
            if (name.empty()) {
                if (left)
                    left->push_back(fmt::format("MFT record {}: no free name in /{}", n, done.found_dir));
                continue;
            }
            held.push_back(name);
            FileName fn;
            fn.parent = parent;
            fn.name = std::move(name);
            if (const Attribute* si = r.parsed.find(AttrType::standard_information)) {
                try {
                    const StandardInformation info = decode_standard_information(si->value);
                    fn.creation_time = info.creation_time;
                    fn.modification_time = info.modification_time;
                    fn.mft_change_time = info.mft_change_time;
                    fn.access_time = info.access_time;
                    fn.file_attributes = info.file_attributes;
                } catch (const FormatError&) {
                }
            }
            made.emplace_back(n, std::move(fn));
        }
        // DOS names planned together, beside those the directory holds.
        std::vector<NameRequest> requests;
        for (const auto& [n, fn] : made) requests.push_back({fn.name, false});
        const std::vector<std::u16string_view> reserved(existing.begin(), existing.end());
        const std::vector<NamePlan> plans = plan_directory_names(requests, reserved);
        for (std::size_t i = 0; i < made.size(); ++i) {
            FileName fn = made[i].second;
            fn.name_space = plans[i].name_space;
            auto& names = found[made[i].first];
            names.push_back(fn);
            if (!plans[i].dos.empty()) {
                fn.name = plans[i].dos;
                fn.name_space = Namespace::dos;
                names.push_back(fn);
            }
            into_found.insert(made[i].first);
        }
    }
    // 4. Each record given those names: its sizes and directory bit as the
    // record has them; into the base when it has no $ATTRIBUTE_LIST
    // (one write), else into the first of its extension records with room,
    // the lists rebuilt after (rebuild_attribute_lists): a cut between the
    // two leaves a name the list does not index, which that rebuild enters.
    bool into_extension = false;
    for (auto& [n, names] : found) {
        const Record r = read_record(n);
        const bool dir = r.parsed.is_directory();
        const auto values_for = [&](const MftRecord& rec) {
            std::uint64_t allocated = 0, data = 0;
            if (!dir)
                if (const auto d = load_attribute(vol_, rec, AttrType::data))
                    std::tie(allocated, data) = entry_sizes(*d);
            std::vector<std::vector<std::byte>> values;
            for (FileName& fn : names) {
                fn.allocated_size = allocated;
                fn.data_size = data;
                fn.file_attributes = dir ? fn.file_attributes | file_attr::directory
                                         : fn.file_attributes & ~file_attr::directory;
                values.push_back(encode_file_name(fn));
            }
            std::sort(values.begin(), values.end());
            return values;
        };
        std::vector<std::vector<std::byte>> values = values_for(r.parsed);
        if (!r.parsed.find(AttrType::attribute_list)) {
            // No room for the names: the record's longest resident stream
            // goes out to clusters first (what filled it in the damaged
            // volumes seen), and the index entries naming the file get
            // its new sizes.
            auto record = renamed_record(r, values);
            std::optional<DataOut> out;
            if (!record && (out = plan_data_out(r))) {
                values = values_for(out->record.parsed);
                record = renamed_record(out->record, values);
            }
            if (!record) {
                if (left) left->push_back(fmt::format("MFT record {}: its names do not fit the record", n));
                continue;
            }
            begin();
            if (out) write_data_out(*out);
            write_record(n, std::move(*record));
            ++(into_found.count(n) ? done.found : done.restored);
            if (out && !dir && !into_found.count(n)) {
                const Record now = read_record(n);
                if (const auto d = load_attribute(vol_, now.parsed, AttrType::data)) {
                    const auto [allocated, size] = entry_sizes(*d);
                    patch_entries(n, now.parsed, [&](std::span<std::byte> key) {
                        core::store_le64(key, 0x28, allocated);  // $FILE_NAME's allocated size
                        core::store_le64(key, 0x30, size);       // and data size
                    });
                }
            }
            continue;
        }
        const auto exts = extensions.find(FileReference{n, r.parsed.header.sequence}.packed());
        bool stored = false;
        for (std::size_t k = 0; !stored && exts != extensions.end() && k < exts->second.size(); ++k) {
            const std::uint64_t x = exts->second[k];
            const Record ext = read_record(x);
            std::uint16_t next = ext.parsed.header.next_instance;
            std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
            for (const auto& v : values) {
                auto a = build_resident_attribute(AttrType::file_name, u"", v, true);
                core::store_le16(a, kAttrInstance, next++);
                fresh.emplace_back(static_cast<std::uint32_t>(AttrType::file_name), std::move(a));
            }
            auto record = rebuilt_record(
                ext, [](const Attribute&) { return false; }, fresh, next);
            if (!record) continue;
            begin();
            write_record(x, std::move(*record));
            stored = into_extension = true;
            ++(into_found.count(n) ? done.found : done.restored);
            // The base's link count: its names, as renamed_record counts them.
            Record base = read_record(n);
            core::store_le16(base.bytes, 0x12, static_cast<std::uint16_t>(values.size()));
            write_record(n, std::move(base.bytes));
        }
        if (!stored && left)
            left->push_back(fmt::format("MFT record {}: no record of the file has room for its names", n));
    }
    if (into_extension) (void)rebuild_attribute_lists(left);
    keys_.clear();
    namers_.clear();
    return done;
}

Editor::ListRepairs Editor::rebuild_attribute_lists(std::vector<std::string>* left) {
    // 1. The bases to look at: those with a list, and those extension records name.
    std::set<std::uint64_t> bases;                              // with a list, or named by extensions
    std::map<std::uint64_t, std::vector<std::uint64_t>> named;  // packed base reference -> extensions
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
        if (owner < kFirstNonSystemRecord) return;
        if (r.header.base_record != 0)
            named[r.header.base_record].push_back(n);
        else if (r.find(AttrType::attribute_list))
            bases.insert(n);
    });
    for (const auto& [ref, exts] : named) bases.insert(FileReference::unpack(ref).record);
    ListRepairs done;
    for (const std::uint64_t b : bases) {
        Record base;
        try {
            base = read_record(b);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            continue;
        }
        if (!base.parsed.in_use() || base.parsed.header.base_record != 0) continue;
        const FileReference self{b, base.parsed.header.sequence};
        const auto exts = named.find(self.packed());
        // 2. What the records hold.
        struct Held {
            AttributeListEntry entry;
            bool non_resident = false;
            std::uint64_t last_vcn = 0;
        };
        std::vector<Held> held;
        const auto take = [&](const MftRecord& r, FileReference at) {
            for (const Attribute& a : r.attributes) {
                if (a.kind() == AttrType::attribute_list) continue;
                AttributeListEntry e;
                e.type = a.type;
                e.name = a.name;
                e.starting_vcn = a.non_resident ? static_cast<std::uint64_t>(a.first_vcn) : 0;
                e.record = at;
                e.instance = a.instance;
                held.push_back({std::move(e), a.non_resident, static_cast<std::uint64_t>(a.last_vcn)});
            }
        };
        // A base with no list that holds every attribute of its extension
        // records already (a cut of the merge below): they are freed.
        if (!base.parsed.find(AttrType::attribute_list) && exts != named.end() &&
            merge_extensions(base, exts->second, true)) {
            ++done.merged;
            continue;
        }
        take(base.parsed, self);
        bool readable = true;
        if (exts != named.end())
            for (const std::uint64_t x : exts->second) {
                try {
                    Record r = read_record(x);
                    if (r.parsed.attributes.empty()) {
                        // It holds nothing: freed, the record first, then its $MFT bit.
                        core::store_le16(
                            r.bytes, 0x16,
                            static_cast<std::uint16_t>(r.parsed.header.flags & ~record_flag::in_use));
                        begin();
                        write_record(x, std::move(r.bytes));
                        mark_record(x, false);
                        ++done.freed;
                        continue;
                    }
                    take(r.parsed, FileReference{x, r.parsed.header.sequence});
                } catch (const Error& e) {
                    if (e.code() == ErrorCode::io) throw;
                    readable = false;
                }
            }
        std::sort(held.begin(), held.end(), [&](const Held& x, const Held& y) {
            if (x.entry.type != y.entry.type) return x.entry.type < y.entry.type;
            if (const int c = upcase_.collate(x.entry.name, y.entry.name); c != 0) return c < 0;
            if (x.entry.name != y.entry.name) return x.entry.name < y.entry.name;
            if (x.entry.starting_vcn != y.entry.starting_vcn)
                return x.entry.starting_vcn < y.entry.starting_vcn;
            if (x.entry.record.record != y.entry.record.record)
                return x.entry.record.record < y.entry.record.record;
            return x.entry.instance < y.entry.instance;
        });
        // 3. They agree: one attribute of each type and name ($FILE_NAME
        // apart), or non-resident pieces from VCN 0 without a gap or overlap.
        bool agree = readable;
        for (std::size_t i = 0; agree && i < held.size();) {
            std::size_t j = i + 1;
            while (j < held.size() && held[j].entry.type == held[i].entry.type &&
                   held[j].entry.name == held[i].entry.name)
                ++j;
            if (held[i].entry.type != static_cast<std::uint32_t>(AttrType::file_name)) {
                if (!held[i].non_resident) {
                    agree = j == i + 1;
                } else {
                    std::uint64_t next = 0;
                    for (std::size_t k = i; agree && k < j; ++k) {
                        agree = held[k].non_resident && held[k].entry.starting_vcn == next &&
                                held[k].last_vcn + 1 >= next;
                        next = held[k].last_vcn + 1;
                    }
                }
            }
            i = j;
        }
        if (!agree) {
            if (left)
                left->push_back(fmt::format("MFT record {}: its records hold attributes that disagree", b));
            continue;
        }
        std::vector<AttributeListEntry> entries;
        for (const Held& h : held) entries.push_back(h.entry);
        const std::vector<std::byte> value = encode_attribute_list(entries);
        const Attribute* list = base.parsed.find(AttrType::attribute_list);
        if (list != nullptr) {
            try {
                if (vol_.read_stream(*list, value.size() + 1) == value) continue;  // already right
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
            }
        } else if (std::none_of(held.begin(), held.end(),
                                [&](const Held& h) { return h.entry.record.record != b; })) {
            continue;  // no list, and no extension record holds anything: nothing to index
        }
        // 4. Written: into the clusters of a non-resident list that hold it
        // (its sizes set in the base after the bytes), else resident in the base.
        const auto is_list = [](const Attribute& a) { return a.kind() == AttrType::attribute_list; };
        constexpr auto kList = static_cast<std::uint32_t>(AttrType::attribute_list);
        if (list != nullptr && list->non_resident && value.size() <= list->allocated_size &&
            list->flags == 0) {
            std::vector<std::byte> header(base.bytes.begin() + list->offset,
                                          base.bytes.begin() + list->offset + list->length);
            core::store_le64(header, 0x30, value.size());  // data size
            core::store_le64(header, 0x38, value.size());  // initialized size
            if (auto record =
                    rebuilt_record(base, is_list, {{kList, header}}, base.parsed.header.next_instance)) {
                begin();
                write_stream(*list, 0, value);
                write_record(b, std::move(*record));
                ++done.lists;
                continue;
            }
        }
        if (list == nullptr || !list->non_resident) {
            std::uint16_t next = base.parsed.header.next_instance;
            auto fresh = build_resident_attribute(AttrType::attribute_list, u"", value);
            core::store_le16(fresh, kAttrInstance, list != nullptr ? list->instance : next++);
            if (auto record = rebuilt_record(base, is_list, {{kList, fresh}}, next)) {
                begin();
                write_record(b, std::move(*record));
                ++done.lists;
                continue;
            }
        }
        // No room for a list in a base that had none: the base takes its
        // extension records' attributes when they fit, and needs no list.
        if (list == nullptr && exts != named.end() && merge_extensions(base, exts->second, false)) {
            ++done.merged;
            continue;
        }
        if (left) left->push_back(fmt::format("MFT record {}: its rebuilt $ATTRIBUTE_LIST has no room", b));
    }
    return done;
}

bool Editor::merge_extensions(const Record& base, const std::vector<std::uint64_t>& extensions,
                              bool held_only) {
    const auto same = [](const Record& x, const Attribute& a, const Record& y, const Attribute& b) {
        // The same attribute bytes, the instance (0x0E..0x0F) aside.
        if (a.length != b.length || a.type != b.type) return false;
        const auto p = x.bytes.begin() + a.offset, q = y.bytes.begin() + b.offset;
        return std::equal(p, p + 0x0E, q) && std::equal(p + 0x10, p + a.length, q + 0x10);
    };
    std::vector<Record> records;
    std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
    std::uint32_t next = base.parsed.header.next_instance;
    std::uint16_t names = 0;
    for (const Attribute& a : base.parsed.attributes)
        if (a.kind() == AttrType::file_name) ++names;
    for (const std::uint64_t x : extensions) {
        try {
            records.push_back(read_record(x));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return false;
        }
    }
    std::size_t held = 0;
    for (const Record& r : records)
        for (const Attribute& a : r.parsed.attributes) {
            ++held;
            if (std::any_of(base.parsed.attributes.begin(), base.parsed.attributes.end(),
                            [&](const Attribute& b) { return same(base, b, r, a); }))
                continue;  // a cut left it in both: the base's copy stays
            if (held_only) return false;
            // Only what the base can hold alone: no second piece or copy of
            // an attribute it has (a $FILE_NAME aside), not before one of
            // its attributes of the same type in name order.
            if (a.kind() == AttrType::attribute_list || (a.non_resident && a.first_vcn != Vcn{0}))
                return false;
            for (const Attribute& b : base.parsed.attributes)
                if (b.type == a.type && a.kind() != AttrType::file_name &&
                    (b.name == a.name || upcase_.collate(b.name, a.name) > 0))
                    return false;
            std::vector<std::byte> bytes(r.bytes.begin() + a.offset, r.bytes.begin() + a.offset + a.length);
            if (next > 0xFFFF) return false;
            core::store_le16(bytes, kAttrInstance, static_cast<std::uint16_t>(next++));
            if (a.kind() == AttrType::file_name) ++names;
            fresh.emplace_back(a.type, std::move(bytes));
        }
    if (held == 0) return false;  // empty extension records: freed by the caller
    std::stable_sort(fresh.begin(), fresh.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    auto bytes = rebuilt_record(
        base, [](const Attribute&) { return false; }, fresh, static_cast<std::uint16_t>(next));
    if (!bytes) return false;
    core::store_le16(*bytes, kLinkCount, names);
    // The base with them first, then each extension record freed (the
    // record, then its $MFT bit): a cut leaves them in both, which the
    // next pass sees as the base's already.
    begin();
    write_record(base.parsed.number, std::move(*bytes));
    for (Record& r : records) {
        core::store_le16(r.bytes, 0x16,
                         static_cast<std::uint16_t>(r.parsed.header.flags & ~record_flag::in_use));
        write_record(r.parsed.number, std::move(r.bytes));
        mark_record(r.parsed.number, false);
    }
    return true;
}

Editor::HeaderRepairs Editor::repair_record_headers() {
    // 1. Per record: in use, base, its link count, its names (counted as
    // check_file_names counts them, on the base record), and whether its
    // attribute instances need a repair.
    struct Names {
        std::uint16_t link = 0, outside_dos = 0, all = 0;
        bool base = false;
    };
    std::vector<Names> per;
    std::vector<std::uint64_t> instances;
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
        if (per.size() <= std::max(n, owner)) per.resize(static_cast<std::size_t>(std::max(n, owner) + 1));
        if (r.header.base_record == 0) {
            per[n].base = true;
            per[n].link = r.header.link_count;
        }
        std::vector<std::uint16_t> seen;
        bool bad = false;
        for (const Attribute& a : r.attributes) {
            bad = bad || a.instance >= r.header.next_instance ||
                  std::find(seen.begin(), seen.end(), a.instance) != seen.end();
            seen.push_back(a.instance);
            if (a.kind() != AttrType::file_name || a.non_resident) continue;
            try {
                const FileName fn = decode_file_name(a.value);
                if (fn.name.empty()) continue;
                ++per[owner].all;
                if (fn.name_space != Namespace::dos) ++per[owner].outside_dos;
            } catch (const FormatError&) {
            }
        }
        if (bad) instances.push_back(n);
    });
    HeaderRepairs done;
    // 2. Link counts: the names outside the DOS namespace (mkntfs and
    // ntfs-3g; chkdsk counts every name, which the checker also accepts).
    for (std::uint64_t n = 0; n < per.size(); ++n) {
        const Names& x = per[n];
        if (!x.base || x.all == 0 || x.link == x.outside_dos || x.link == x.all) continue;
        Record r = read_record(n);
        if (r.parsed.header.link_count != x.link) continue;
        begin();
        core::store_le16(r.bytes, kLinkCount, x.outside_dos);
        write_record(n, std::move(r.bytes));
        ++done.link_counts;
    }
    // 3. Attribute instances: a repeated one renumbered (not in a file with
    // an $ATTRIBUTE_LIST, whose entries name attributes by instance), and
    // the next instance raised past every one in use.
    for (const std::uint64_t n : instances) {
        Record r = read_record(n);
        const bool listed = r.parsed.header.base_record != 0 || r.parsed.find(AttrType::attribute_list);
        std::uint32_t next = r.parsed.header.next_instance;
        for (const Attribute& a : r.parsed.attributes) next = std::max<std::uint32_t>(next, a.instance + 1u);
        std::vector<std::uint16_t> seen;
        bool renumbered = false;
        for (const Attribute& a : r.parsed.attributes) {
            if (std::find(seen.begin(), seen.end(), a.instance) == seen.end()) {
                seen.push_back(a.instance);
                continue;
            }
            if (listed || next > 0xFFFF) continue;  // left: the check still reports it
            core::store_le16(r.bytes, a.offset + kAttrInstance, static_cast<std::uint16_t>(next));
            seen.push_back(static_cast<std::uint16_t>(next++));
            renumbered = true;
        }
        if (next > 0xFFFF || (!renumbered && next == r.parsed.header.next_instance)) continue;
        begin();
        core::store_le16(r.bytes, kNextInstance, static_cast<std::uint16_t>(next));
        write_record(n, std::move(r.bytes));
        ++done.instances;
    }
    return done;
}

std::optional<std::uint64_t> Editor::rebuild_reparse_index(std::vector<std::string>* left) {
    const auto leave = [&](std::string why) -> std::optional<std::uint64_t> {
        if (left) left->push_back(std::move(why));
        return std::nullopt;
    };
    const std::optional<std::uint64_t> file = extend_file(u"$Reparse");  // by name in $Extend's $I30
    if (!file) return leave("$Extend has no $Reparse");
    const Record r = read_record(*file);
    const Attribute* root = r.parsed.find(AttrType::index_root, kReparseIndex.name);
    if (root == nullptr || root->non_resident)
        return leave("$Extend/$Reparse has no resident $INDEX_ROOT:$R");
    if (r.parsed.find(AttrType::attribute_list) ||
        r.parsed.find(AttrType::index_allocation, kReparseIndex.name))
        return leave(
            "$Extend/$Reparse:$R has INDX blocks or an $ATTRIBUTE_LIST: fsimg rebuilds it only in its "
            "$INDEX_ROOT");
    std::uint32_t block_bytes = 0;
    try {
        block_bytes = decode_index_root(root->value).index_block_bytes;
    } catch (const FormatError&) {
        block_bytes = 4096;  // the root's header is rewritten whole; its block size matters only for blocks
    }
    // Every base record whose records hold a $REPARSE_POINT: (tag, reference).
    std::set<std::uint64_t> holders;
    detail::for_each_in_use(vol_, [&](std::uint64_t, std::uint64_t owner, const MftRecord& rec) {
        if (rec.find(AttrType::reparse_point)) holders.insert(owner);
    });
    struct Key {
        std::uint32_t tag;
        std::uint64_t reference;
    };
    std::vector<Key> keys;
    for (const std::uint64_t n : holders) {
        const Record h = read_record(n);
        std::optional<std::uint32_t> tag;
        try {
            const auto a = load_attribute(vol_, h.parsed, AttrType::reparse_point);
            if (a && a->size() >= 4) {
                std::array<std::byte, 4> head{};
                if (a->non_resident)
                    vol_.read_stream(*a, 0, head);
                else
                    std::copy_n(a->value.begin(), 4, head.begin());
                tag = core::load_le32(head, 0);
            }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
        if (!tag) return leave(fmt::format("MFT record {}: its reparse tag cannot be read", n));
        keys.push_back({*tag, FileReference{n, h.parsed.header.sequence}.packed()});
    }
    // COLLATION_NTOFS_ULONGS: the key as three little-endian 32-bit words.
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
        const auto words = [](const Key& k) {
            return std::tuple(k.tag, static_cast<std::uint32_t>(k.reference),
                              static_cast<std::uint32_t>(k.reference >> 32));
        };
        return words(a) < words(b);
    });
    std::vector<std::byte> entries;
    for (const Key& k : keys) {
        std::array<std::byte, 12> key{};
        core::store_le32(key, 0, k.tag);
        core::store_le64(key, 4, k.reference);
        const auto e = build_view_index_entry(key, {});
        entries.insert(entries.end(), e.begin(), e.end());
    }
    const auto end = build_end_index_entry();
    entries.insert(entries.end(), end.begin(), end.end());
    auto attr = build_resident_attribute(
        AttrType::index_root, kReparseIndex.name,
        build_index_root(0, collation::ulongs, block_bytes, vol_.geometry().cluster_bytes, entries, false));
    core::store_le16(attr, kAttrInstance, root->instance);
    auto bytes = rebuilt_record(
        r,
        [](const Attribute& a) { return a.kind() == AttrType::index_root && a.name == kReparseIndex.name; },
        {{static_cast<std::uint32_t>(AttrType::index_root), std::move(attr)}}, r.parsed.header.next_instance);
    if (!bytes)
        return leave(fmt::format("$Extend/$Reparse:$R: {} entries do not fit its record", keys.size()));
    begin();
    write_record(*file, std::move(*bytes));
    return keys.size();
}

Editor::OrderRepairs Editor::repair_attribute_order() {
    const auto ordered = [](const MftRecord& r) {
        return std::is_sorted(r.attributes.begin(), r.attributes.end(),
                              [](const Attribute& x, const Attribute& y) { return x.type < y.type; });
    };
    std::vector<std::uint64_t> todo;
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t, const MftRecord& r) {
        if (!ordered(r)) todo.push_back(n);
    });
    OrderRepairs done;
    for (const std::uint64_t n : todo) {
        const Record r = read_record(n);
        std::vector<const Attribute*> kept;
        for (const Attribute& a : r.parsed.attributes)
            if (defined_attribute_type(a.type)) kept.push_back(&a);
        std::stable_sort(kept.begin(), kept.end(),
                         [](const Attribute* x, const Attribute* y) { return x->type < y->type; });
        std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
        for (const Attribute* a : kept)
            fresh.emplace_back(a->type, std::vector<std::byte>(r.bytes.begin() + a->offset,
                                                               r.bytes.begin() + a->offset + a->length));
        auto bytes = rebuilt_record(
            r, [](const Attribute&) { return true; }, fresh, r.parsed.header.next_instance);
        if (!bytes) continue;  // never longer than the record was
        begin();
        write_record(n, std::move(*bytes));
        ++done.records;
        done.dropped += r.parsed.attributes.size() - kept.size();
    }
    return done;
}

std::uint64_t Editor::repair_attribute_sizes() {
    // Non-resident attribute header fields [FLATCAP concepts/attribute_header].
    constexpr std::size_t kAllocated = 0x28, kDataSize = 0x30, kInitialized = 0x38;
    const std::uint64_t cb = vol_.geometry().cluster_bytes;
    std::vector<std::uint64_t> todo;
    const auto fixed = [cb](const Attribute& a) -> std::optional<std::array<std::uint64_t, 3>> {
        const auto first = static_cast<std::uint64_t>(a.first_vcn),
                   last = static_cast<std::uint64_t>(a.last_vcn);
        if (!a.non_resident || first != 0 || last == ~std::uint64_t(0) || last >= ~std::uint64_t(0) / cb)
            return std::nullopt;
        std::uint64_t mapped = 0;
        for (const MappedRun& m : a.runs) mapped += m.length;
        if (mapped != last + 1) return std::nullopt;  // ntfs.attr.vcn: the runlist itself is in doubt
        const std::uint64_t allocated = (last + 1) * cb;
        const std::uint64_t data = std::min(a.data_size, allocated);
        const std::uint64_t initialized = std::min(a.initialized_size, data);
        if (allocated == a.allocated_size && data == a.data_size && initialized == a.initialized_size)
            return std::nullopt;
        return std::array<std::uint64_t, 3>{allocated, data, initialized};
    };
    // Only where the record holds the whole runlist: not an extension record,
    // not a file with an $ATTRIBUTE_LIST.
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t, const MftRecord& r) {
        if (r.header.base_record != 0 || r.find(AttrType::attribute_list) != nullptr) return;
        for (const Attribute& a : r.attributes)
            if (fixed(a)) {
                todo.push_back(n);
                return;
            }
    });
    std::uint64_t done = 0;
    for (const std::uint64_t n : todo) {
        Record r = read_record(n);
        for (const Attribute& a : r.parsed.attributes)
            if (const auto v = fixed(a)) {
                core::store_le64(r.bytes, a.offset + kAllocated, (*v)[0]);
                core::store_le64(r.bytes, a.offset + kDataSize, (*v)[1]);
                core::store_le64(r.bytes, a.offset + kInitialized, (*v)[2]);
                ++done;
            }
        begin();
        write_record(n, std::move(r.bytes));
    }
    if (done != 0) {
        keys_.clear();
        namers_.clear();
    }
    return done;
}

std::optional<std::vector<std::byte>> Editor::rebuilt_record(
    const Record& r, const std::function<bool(const Attribute&)>& drop,
    const std::vector<std::pair<std::uint32_t, std::vector<std::byte>>>& fresh, std::uint16_t next_instance) {
    std::vector<std::byte> out(r.bytes.begin(), r.bytes.begin() + core::load_le16(r.bytes, kFirstAttribute));
    std::size_t k = 0;
    for (const Attribute& a : r.parsed.attributes) {
        if (drop(a)) continue;
        for (; k < fresh.size() && fresh[k].first < a.type; ++k)
            out.insert(out.end(), fresh[k].second.begin(), fresh[k].second.end());
        out.insert(out.end(), r.bytes.begin() + a.offset, r.bytes.begin() + a.offset + a.length);
    }
    for (; k < fresh.size(); ++k) out.insert(out.end(), fresh[k].second.begin(), fresh[k].second.end());
    for (const std::uint8_t b : {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}) out.push_back(std::byte{b});
    if (out.size() > r.parsed.header.bytes_allocated || out.size() > r.bytes.size()) return std::nullopt;
    core::store_le32(out, kBytesInUse, static_cast<std::uint32_t>(out.size()));
    core::store_le16(out, kNextInstance, next_instance);
    out.resize(r.bytes.size());
    return out;
}

void Editor::apply_index(const IndexRewrite& plan) {
    keys_.erase(plan.dir);
    namers_.erase(plan.dir);
    begin();
    for (std::size_t b = 0; b < plan.blocks.size(); ++b)
        write_stream(plan.allocation, b * std::uint64_t{plan.block_bytes}, plan.blocks[b]);
    (void)check::apply_bitmap_fixes(dev_, plan.allocate);
    write_record(plan.dir, plan.record);
    (void)check::apply_bitmap_fixes(dev_, plan.release);
}

}  // namespace fsimg::ntfs

namespace fsimg::ntfs {

Editor::Scrambled Editor::scramble_names(const core::NameScrambler& scramble) {
    constexpr std::uint64_t kExtend = 11;   // $Extend: its entries are looked up by name
    constexpr std::size_t kNameUnits = 66;  // a $FILE_NAME value's name, after its 66 fixed bytes
    // 1. Every $FILE_NAME of the in-use records, where its units lie in the
    // record, and which directory it is in.
    struct Name {
        std::uint64_t record = 0, parent = 0;
        std::size_t at = 0;  // byte offset of the first unit in the record
        Namespace name_space = Namespace::posix;
        std::u16string name, made;
    };
    std::vector<Name> names;
    std::vector<std::uint64_t> dirs;
    struct Link {
        std::uint64_t record = 0;
        std::size_t at = 0;  // byte offset of the path buffer in the record
        std::vector<std::pair<std::size_t, std::size_t>> spans;  // (byte offset in the buffer, units)
    };
    std::vector<Link> links;
    std::uint64_t nonresident_links = 0;
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
        if (r.header.base_record == 0 && r.is_directory()) dirs.push_back(n);
        if (owner < kFirstNonSystemRecord) return;
        for (const Attribute& a : r.attributes) {
            if (a.kind() == AttrType::reparse_point) {
                if (a.non_resident) {
                    ++nonresident_links;
                    continue;
                }
                const std::span<const std::byte> v = a.value;
                if (v.size() < 16) continue;
                const std::uint32_t tag = core::load_le32(v, 0);
                if (tag != kReparseTagSymlink && tag != kReparseTagMountPoint) continue;
                const std::size_t buffer = tag == kReparseTagSymlink ? 20 : 16;
                Link l{n, a.offset + a.value_offset + buffer, {}};
                for (const std::size_t field : {8u, 12u}) {  // substitute name, print name: offset, length
                    const std::size_t off = core::load_le16(v, field), len = core::load_le16(v, field + 2);
                    if (buffer + off + len <= v.size() && len % 2 == 0) l.spans.emplace_back(off, len / 2);
                }
                links.push_back(std::move(l));
                continue;
            }
            if (a.kind() != AttrType::file_name || a.non_resident) continue;
            FileName fn;
            try {
                fn = decode_file_name(a.value);
            } catch (const FormatError&) {
                continue;
            }
            if (fn.parent.record == kExtend) continue;
            names.push_back({n,
                             fn.parent.record,
                             a.offset + a.value_offset + kNameUnits,
                             fn.name_space,
                             std::move(fn.name),
                             {}});
        }
    });
    if (nonresident_links != 0)
        throw Error(ErrorCode::unsupported,
                    fmt::format("{} reparse point{} kept outside the record: the names {} not scrambled",
                                nonresident_links, nonresident_links == 1 ? " is" : "s are",
                                nonresident_links == 1 ? "it holds would be" : "they hold would be"));
    // 2. Made-up names, unique per directory in any letter case, upper case
    // where a DOS name must be.
    const auto less = [this](const std::u16string& a, const std::u16string& b) {
        return upcase_.collate(a, b) < 0;
    };
    std::map<std::uint64_t, std::set<std::u16string, decltype(less)>> taken;
    const auto in = [&](std::uint64_t dir) -> std::set<std::u16string, decltype(less)>& {
        return taken.try_emplace(dir, less).first->second;
    };
    Scrambled done;
    for (std::size_t i = 0; i < names.size(); ++i) {
        Name& x = names[i];
        const bool dos = x.name_space == Namespace::dos || x.name_space == Namespace::win32_and_dos;
        auto& here = in(x.parent);
        for (unsigned attempt = 0; attempt < 1000 && x.made.empty(); ++attempt) {
            std::u16string c = scramble.scramble(x.name, x.record * 64 + i % 64, attempt, dos);
            if (here.insert(c).second) x.made = std::move(c);
        }
        if (x.made.empty())
            throw Error(ErrorCode::unsupported,
                        fmt::format("MFT record {}: no made-up name is free in its directory", x.record));
    }
    // 3. Each record written once with its new names (and link targets) in place.
    std::map<std::uint64_t, std::vector<std::pair<std::size_t, std::u16string>>> edits;
    for (const Name& x : names) edits[x.record].emplace_back(x.at, x.made);
    for (const Link& l : links) {
        for (const auto& [off, units] : l.spans) {
            std::u16string old(units, u'\0');
            edits[l.record].emplace_back(l.at + off, std::u16string());
            auto& made = edits[l.record].back().second;
            const Record r = read_record(l.record);
            for (std::size_t k = 0; k < units; ++k)
                old[k] = static_cast<char16_t>(core::load_le16(r.bytes, l.at + off + 2 * k));
            made = scramble.scramble(old, l.record * 64 + off, 0);
        }
        ++done.reparse_points;
    }
    // The INDX clusters every directory had before its index is rebuilt.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> old_blocks;
    for (const std::uint64_t d : dirs) {
        try {
            const Record rec = read_record(d);
            if (const auto ia = load_attribute(vol_, rec.parsed, AttrType::index_allocation, u"$I30"))
                for (const MappedRun& m : ia->runs)
                    if (m.lcn && m.length != 0)
                        old_blocks.emplace_back(static_cast<std::uint64_t>(*m.lcn), m.length);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    begin();
    for (auto& [n, list] : edits) {
        Record r = read_record(n);
        for (const auto& [at, units] : list)
            for (std::size_t k = 0; k < units.size(); ++k)
                if (at + 2 * k + 2 <= r.bytes.size()) core::store_le16(r.bytes, at + 2 * k, units[k]);
        write_record(n, std::move(r.bytes));
        ++done.records;
    }
    done.names = names.size();
    // 4. The indexes rebuilt from the new names; none may be left with the old ones.
    std::vector<std::string> left;
    done.indexes = rebuild_indexes(&left);
    if (!left.empty())
        throw Error(ErrorCode::unsupported,
                    fmt::format("{}: its index cannot be rebuilt, so the real names would stay in the copy",
                                left.front()));
    // 5. The old INDX clusters that are now free zeroed: they held the real names.
    // One $Bitmap read per run (the bytes covering its clusters).
    const auto bitmap = load_attribute(vol_, vol_.read_record(6), AttrType::data);
    const std::uint64_t cb = vol_.geometry().cluster_bytes;
    for (const auto& [lcn, length] : old_blocks) {
        if (!bitmap || lcn / 8 >= bitmap->size()) continue;
        const std::uint64_t end = std::min(lcn + length, bitmap->size() * 8);
        std::vector<std::byte> bits(static_cast<std::size_t>((end + 7) / 8 - lcn / 8));
        vol_.read_stream(*bitmap, lcn / 8, bits);
        for (std::uint64_t c = lcn; c < end; ++c) {
            if ((std::to_integer<unsigned>(bits[c / 8 - lcn / 8]) >> (c % 8)) & 1) continue;
            if ((c + 1) * cb <= dev_.size()) dev_.zero_range(c * cb, cb);
        }
    }
    keys_.clear();
    namers_.clear();
    return done;
}

}  // namespace fsimg::ntfs
