// Adding to an NTFS volume: new directories (Editor::make_directory), the
// MFT record allocation and index insertion they take. See
// include/fsimg/ntfs/edit.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

/// The first record a new file may take: 0..15 are the system files and
/// 16..23 are kept for $MFT's own extension records [FLATCAP files/mft;
/// NTFS-3G mft.c keeps them too].
constexpr std::uint64_t kFirstFreeRecord = 24;
constexpr std::size_t kSiSecurityId = 0x34;  // in a 72-byte $STANDARD_INFORMATION value
constexpr std::size_t kSiAttributes = 0x20;  // file attributes in $STANDARD_INFORMATION
/// What replaced data no longer is: read-only (set again from the source),
/// sparse (0x200) and compressed (0x800) [FLATCAP attributes/standard_information].
constexpr std::uint32_t kReplacedAttributes = file_attr::read_only | 0x0200 | 0x0800;

}  // namespace

std::pair<std::uint64_t, std::uint16_t> Editor::take_record() {
    for (int round = 0; round < 2; ++round) {
        const MftRecord r0 = vol_.read_record(0);
        const Attribute* bm = r0.find(AttrType::bitmap);
        if (bm == nullptr) throw Error(ErrorCode::corrupt, "$MFT has no $BITMAP");
        const std::uint64_t records = vol_.record_count();
        std::vector<std::byte> bits(
            static_cast<std::size_t>(std::min<std::uint64_t>(bm->size(), (records + 7) / 8)));
        vol_.read_stream(*bm, 0, bits);
        const std::uint32_t rs = vol_.geometry().mft_record_bytes;
        std::vector<std::byte> raw(rs);
        for (std::uint64_t n = std::max(next_record_, kFirstFreeRecord); n < records && n / 8 < bits.size();
             ++n) {
            if ((std::to_integer<unsigned>(bits[n / 8]) >> (n % 8)) & 1u) continue;
            vol_.read_stream(vol_.mft_data(), n * rs, raw);
            std::uint16_t sequence = 1;
            try {
                const MftRecord r = parse_mft_record(raw, n);
                if (r.in_use())
                    continue;  // in use though its bit is clear: fsck's to settle, not ours to take
                if (r.header.sequence != 0) sequence = r.header.sequence;
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;  // never formatted, or damaged: written whole anew
            }
            next_record_ = n + 1;
            return {n, sequence};
        }
        if (round == 0) grow_mft();
    }
    throw Error(ErrorCode::corrupt, "$MFT has no free record after it grew");
}

void Editor::grow_mft() {
    const auto unsupported = [](std::string_view why) {
        return Error(ErrorCode::unsupported,
                     fmt::format("$MFT is full and {}: fsimg does not grow it yet", why));
    };
    Record r0 = read_record(0);
    if (r0.parsed.find(AttrType::attribute_list)) throw unsupported("has an $ATTRIBUTE_LIST");
    const Attribute* data = r0.parsed.find(AttrType::data);
    const Attribute* bm = r0.parsed.find(AttrType::bitmap);
    if (data == nullptr || !data->non_resident || bm == nullptr)
        throw Error(ErrorCode::corrupt, "$MFT has no non-resident $DATA or no $BITMAP");
    const std::uint32_t rs = vol_.geometry().mft_record_bytes, cb = vol_.geometry().cluster_bytes;
    const std::uint64_t old_records = data->data_size / rs;
    const std::uint64_t new_records = old_records + std::max<std::uint64_t>(16, cb / rs);
    const std::uint64_t size = new_records * rs;
    // A non-resident attribute grown to `bytes`: its runs, the last extended
    // where `more` starts right after it.
    const auto grown = [&](const Attribute& a, std::uint64_t bytes, const std::vector<Extent>& more) {
        Attribute g = a;
        for (const Extent& e : more) {
            MappedRun& last = g.runs.back();
            if (last.lcn && static_cast<std::uint64_t>(*last.lcn) + last.length == e.lcn) {
                last.length += e.clusters;
            } else {
                g.runs.push_back(
                    {Vcn{static_cast<std::uint64_t>(last.vcn) + last.length}, e.clusters, Lcn{e.lcn}});
            }
        }
        g.allocated_size = a.allocated_size + clusters_of(more) * cb;
        g.data_size = g.initialized_size = bytes;
        g.last_vcn = Vcn{g.allocated_size / cb - 1};
        return g;
    };
    const auto encoded = [&](const Attribute& g, std::uint16_t instance) {
        std::vector<DataRun> runs;
        for (const MappedRun& m : g.runs) {
            if (!m.lcn) throw unsupported("its runlist has a hole");
            runs.push_back({m.length, static_cast<std::uint64_t>(*m.lcn)});
        }
        auto a = build_nonresident_attribute(g.kind(), g.name, runs,
                                             {g.allocated_size, g.data_size, g.initialized_size},
                                             static_cast<std::uint64_t>(g.last_vcn));
        core::store_le16(a, 0x0E, instance);
        return a;
    };
    const auto more_for = [&](const Attribute& a, std::uint64_t bytes, const std::vector<Extent>& taken) {
        return bytes > a.allocated_size ? free_extents((bytes - a.allocated_size + cb - 1) / cb, taken)
                                        : std::vector<Extent>{};
    };
    const std::vector<Extent> data_more = more_for(*data, size, {});
    const Attribute new_data = grown(*data, size, data_more);
    const std::uint64_t bitmap_bytes = (new_records + 63) / 64 * 8;
    std::vector<Extent> bitmap_more;
    std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh{
        {static_cast<std::uint32_t>(AttrType::data), encoded(new_data, data->instance)}};
    std::optional<Attribute> new_bitmap;
    if (bm->non_resident) {
        bitmap_more = more_for(*bm, bitmap_bytes, data_more);
        new_bitmap = grown(*bm, std::max(bitmap_bytes, bm->data_size), bitmap_more);
        fresh.emplace_back(static_cast<std::uint32_t>(AttrType::bitmap), encoded(*new_bitmap, bm->instance));
    } else {
        std::vector<std::byte> value = bm->value;
        value.resize(std::max<std::size_t>(value.size(), bitmap_bytes));
        auto a = build_resident_attribute(AttrType::bitmap, u"", value);
        core::store_le16(a, 0x0E, bm->instance);
        fresh.emplace_back(static_cast<std::uint32_t>(AttrType::bitmap), std::move(a));
    }
    auto record = rebuilt_record(
        r0, [&](const Attribute& a) { return &a == data || &a == bm; }, fresh,
        r0.parsed.header.next_instance);
    if (!record) throw unsupported("record 0 has no room for its longer runlist");
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (const std::vector<Extent>* more :
         {&data_more, static_cast<const std::vector<Extent>*>(&bitmap_more)})
        for (const Extent& e : *more) runs.emplace_back(e.lcn, e.clusters);
    const std::vector<check::BitmapFix> allocate = cluster_bits(runs, true);
    // Written: the new records, the bitmap's new bytes, the clusters' bits, record 0.
    begin();
    for (std::uint64_t n = old_records; n < new_records; ++n) {
        MftRecordBuilder b(rs, static_cast<std::uint32_t>(n), 1, 0);
        write_stream(new_data, n * rs, b.finish());
    }
    if (new_bitmap && bitmap_bytes > bm->data_size)
        write_stream(*new_bitmap, bm->data_size,
                     std::vector<std::byte>(static_cast<std::size_t>(bitmap_bytes - bm->data_size)));
    (void)check::apply_bitmap_fixes(dev_, allocate);
    write_record(0, std::move(*record));
    vol_.reload_mft();
}

const DirectoryNames& Editor::names_in(std::uint64_t dir, const std::vector<IndexKey>& siblings) const {
    auto it = namers_.find(dir);
    if (it == namers_.end() || it->second.size() != siblings.size()) {
        std::vector<std::u16string_view> reserved;
        reserved.reserve(siblings.size());
        for (const IndexKey& k : siblings) reserved.push_back(k.name);
        it = namers_.insert_or_assign(dir, DirectoryNames(reserved)).first;
    }
    return it->second;
}

void Editor::DirectoryKeys::add(const UpcaseTable& upcase, IndexKey k) {
    folded.emplace(upcase.hash(k.name), keys.size());
    keys.push_back(std::move(k));
}

const std::vector<Editor::IndexKey>& Editor::index_keys(std::uint64_t dir) const {
    if (const auto it = keys_.find(dir); it != keys_.end()) return it->second.keys;
    DirectoryKeys keys;
    for_each_index_entry(vol_, read_record(dir).parsed, [&](const IndexEntry& e, const IndexEntryLocation&) {
        if (e.file_name) keys.add(upcase_, {FileReference::unpack(e.reference), e.key, e.file_name->name});
        return true;
    });
    return (keys_[dir] = std::move(keys)).keys;
}

std::vector<const Editor::IndexKey*> Editor::keys_named(std::uint64_t dir, std::u16string_view name) const {
    (void)index_keys(dir);
    const DirectoryKeys& d = keys_.at(dir);
    std::vector<const IndexKey*> out;
    const auto [first, last] = d.folded.equal_range(upcase_.hash(name));
    for (auto it = first; it != last; ++it)
        if (upcase_.equal(d.keys[it->second].name, name)) out.push_back(&d.keys[it->second]);
    // In the directory's order, the exact name first.
    std::sort(out.begin(), out.end());
    std::stable_partition(out.begin(), out.end(), [&](const IndexKey* k) { return k->name == name; });
    return out;
}

void Editor::mark_record(std::uint64_t record, bool in_use) {
    const MftRecord r0 = vol_.read_record(0);
    const Attribute* bm = r0.find(AttrType::bitmap);
    if (bm == nullptr) throw Error(ErrorCode::corrupt, "$MFT has no $BITMAP");
    const auto bit = static_cast<std::uint8_t>(1u << (record % 8));
    if (bm->non_resident) {
        const auto off = vol_.device_offset(*bm, record / 8);
        if (!off)
            throw Error(ErrorCode::corrupt, fmt::format("$MFT's $BITMAP does not map record {}", record));
        (void)check::apply_bitmap_fixes(
            dev_, {check::BitmapFix{*off, in_use ? bit : std::uint8_t{0}, in_use ? std::uint8_t{0} : bit}});
        return;
    }
    Record z = read_record(0);
    const Attribute* b = z.parsed.find(AttrType::bitmap);
    if (record / 8 >= b->value.size())
        throw Error(ErrorCode::corrupt, fmt::format("$MFT's $BITMAP does not hold record {}", record));
    std::byte& at = z.bytes[b->offset + b->value_offset + record / 8];
    at = in_use ? (at | std::byte{bit}) : (at & ~std::byte{bit});
    write_record(0, std::move(z.bytes));
}

void Editor::stamp_directory(std::uint64_t dir) {
    Record p = read_record(dir);
    const Attribute* si = p.parsed.find(AttrType::standard_information);
    if (si == nullptr || si->non_resident || si->value.size() < 0x18) return;
    const std::int64_t t = options_.clamp ? std::min(options_.now, *options_.clamp) : options_.now;
    const std::uint64_t ft = filetime_from_unix(t);
    core::store_le64(p.bytes, si->offset + si->value_offset + 0x08, ft);  // modification
    core::store_le64(p.bytes, si->offset + si->value_offset + 0x10, ft);  // MFT change
    write_record(dir, std::move(p.bytes));
}

Editor::NewRecord Editor::plan_record(
    std::uint64_t dir, std::string_view name, const std::vector<IndexKey>& siblings, FileName fn,
    StandardInformation si, std::uint16_t flags,
    const std::function<std::vector<std::vector<std::byte>>(std::uint32_t)>& tail) {
    if (auto why = utf8_name_problem(name))
        throw Error(ErrorCode::usage, fmt::format("\"{}\": {}", name, *why));
    if (name == "." || name == "..") throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a name", name));
    const std::u16string name16 = core::utf8_to_utf16(name);
    if (!keys_named(dir, name16).empty()) throw Error(ErrorCode::usage, fmt::format("\"{}\" exists", name));
    const Record parent = read_record(dir);
    if (!parent.parsed.is_directory())
        throw Error(ErrorCode::corrupt, fmt::format("MFT record {} is not a directory", dir));
    // The names Windows gives with 8.3 names on, against those the directory holds.
    const NamePlan names = names_in(dir, siblings).plan({name16, false});
    const auto [number, sequence] = take_record();
    keys_.erase(number);
    namers_.erase(number);  // a directory that record held before
    NewRecord out;
    out.number = number;
    const FileReference self{number, sequence};
    fn.parent = FileReference{dir, parent.parsed.header.sequence};
    std::vector<std::vector<std::byte>> values;
    const auto add_name = [&](std::u16string_view n, Namespace ns) {
        fn.name = std::u16string(n);
        fn.name_space = ns;
        values.push_back(encode_file_name(fn));
        out.keys.push_back({self, values.back(), fn.name});
    };
    add_name(name16, names.name_space);
    if (!names.dos.empty()) add_name(names.dos, Namespace::dos);
    std::sort(values.begin(), values.end());  // resident $FILE_NAMEs in value order [NTFS-3G ntfs_attr_find]
    // Security: the parent's id in $Secure, else a copy of its own descriptor.
    std::optional<std::vector<std::byte>> descriptor;
    if (const Attribute* psi = parent.parsed.find(AttrType::standard_information);
        psi != nullptr && !psi->non_resident && psi->value.size() >= kSiSecurityId + 4 &&
        core::load_le32(psi->value, kSiSecurityId) != 0) {
        si.security_id = core::load_le32(psi->value, kSiSecurityId);
    } else if (const Attribute* sd = parent.parsed.find(AttrType::security_descriptor);
               sd != nullptr && !sd->non_resident) {
        descriptor = build_resident_attribute(AttrType::security_descriptor, u"", sd->value);
    }
    MftRecordBuilder b(vol_.geometry().mft_record_bytes, static_cast<std::uint32_t>(number), sequence, flags);
    b.set_link_count(static_cast<std::uint16_t>(values.size()));
    b.add(build_resident_attribute(AttrType::standard_information, u"", encode_standard_information(si)));
    for (const auto& v : values) b.add(build_resident_attribute(AttrType::file_name, u"", v, true));
    if (descriptor) b.add(std::move(*descriptor));
    for (auto& a : tail(vol_.geometry().mft_record_bytes - b.bytes_in_use())) b.add(std::move(a));
    out.bytes = b.finish();
    if (verify_and_remove_fixups(out.bytes))
        throw Error(ErrorCode::corrupt, "a new MFT record fails its fixups");
    return out;
}

FileEntry Editor::make_directory(std::uint64_t dir, std::string_view name, std::int64_t mtime) {
    // 1. Planned: the record, the parent's new index.
    const std::vector<IndexKey>& keys = index_keys(dir);
    const std::uint64_t ft = filetime_from_unix(options_.clamp ? std::min(mtime, *options_.clamp) : mtime);
    FileName fn;
    fn.creation_time = fn.modification_time = fn.mft_change_time = fn.access_time = ft;
    fn.file_attributes = file_attr::directory;
    StandardInformation si;
    si.creation_time = si.modification_time = si.mft_change_time = si.access_time = ft;
    const std::uint32_t block_bytes = vol_.geometry().index_block_bytes;
    NewRecord rec =
        plan_record(dir, name, keys, fn, si, record_flag::in_use | record_flag::directory,
                    [&](std::uint32_t) -> std::vector<std::vector<std::byte>> {
                        return {build_resident_attribute(
                            AttrType::index_root, u"$I30",
                            build_index_root(0x30, collation::file_name, block_bytes,
                                             vol_.geometry().cluster_bytes, build_end_index_entry(), false))};
                    });
    const NameChange names = plan_names(dir, rec.keys, {});
    // 2. Written: the record, its bit, the parent's index, the parent's times.
    begin();
    return link_record(dir, name, std::move(rec), names);
}

Editor::NameChange Editor::plan_names(std::uint64_t dir, const std::vector<IndexKey>& added,
                                      const std::vector<Extent>& taken) {
    // The new names go into their leaves where those have room, else the index is rewritten.
    NameChange c;
    c.in_place = plan_insert(dir, added);
    if (!c.in_place) c.split = plan_split(dir, added, taken);
    if (!c.in_place && !c.split) {
        std::vector<IndexKey> all = index_keys(dir);
        all.insert(all.end(), added.begin(), added.end());
        c.rewrite = plan_index(dir, std::move(all), taken);
    }
    return c;
}

FileEntry Editor::link_record(std::uint64_t dir, std::string_view name, NewRecord rec,
                              const NameChange& names) {
    write_record(rec.number, std::move(rec.bytes));
    mark_record(rec.number);
    if (names.in_place || names.split) {
        if (names.in_place) apply_insert(dir, *names.in_place);
        if (names.split) apply_split(dir, *names.split);
        for (const IndexKey& k : rec.keys) keys_[dir].add(upcase_, k);
        if (const auto it = namers_.find(dir); it != namers_.end())
            for (const IndexKey& k : rec.keys) it->second.add(k.name);
    } else {
        apply_index(*names.rewrite);
    }
    stamp_directory(dir);
    return entry_of(rec.number, std::string(name));
}

Editor::NewData Editor::plan_data(const source::SourceFile& data, std::uint32_t room) const {
    NewData d;
    d.size = data.size();
    // A resident $DATA: 24-byte header and the value, 8-aligned [FLATCAP concepts/attribute_header].
    if (d.size + 24 + 7 < room && r8(24 + d.size) <= room) {
        d.resident = data.read_all();
        return d;
    }
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    d.extents = free_extents((d.size + cb - 1) / cb);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (const Extent& e : d.extents) runs.emplace_back(e.lcn, e.clusters);
    d.allocate = cluster_bits(runs, true);
    return d;
}

std::vector<std::byte> Editor::data_attribute(const NewData& d) const {
    if (d.resident) return build_resident_attribute(AttrType::data, u"", *d.resident);
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    const std::uint64_t clusters = clusters_of(d.extents);
    return build_nonresident_attribute(AttrType::data, u"", runs_of(d.extents),
                                       {clusters * cb, d.size, d.size}, clusters - 1);
}

void Editor::write_data(const NewData& d, const source::SourceFile& data) {
    if (d.resident) {
        data.finish();
        return;
    }
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    constexpr std::uint64_t kChunk = 1 << 20;
    std::vector<std::byte> buf;
    std::uint64_t at = 0;  // bytes of the data written
    for (const Extent& e : d.extents) {
        for (std::uint64_t done = 0; done < e.clusters * cb;) {
            const std::uint64_t n = std::min<std::uint64_t>(kChunk, e.clusters * cb - done);
            buf.assign(static_cast<std::size_t>(n), std::byte{0});
            if (at < d.size)
                data.read_at(at, std::span(buf).first(static_cast<std::size_t>(std::min(n, d.size - at))));
            dev_.write_at(e.lcn * cb + done, buf);
            done += n;
            at += n;
        }
    }
    data.finish();
    (void)check::apply_bitmap_fixes(dev_, d.allocate);
}

FileEntry Editor::add_file(std::uint64_t dir, std::string_view name, const source::SourceFile& data,
                           const NewFile& info) {
    // 1. Planned: the data's clusters, the record, the parent's new index (in other clusters).
    const std::vector<IndexKey>& keys = index_keys(dir);
    const auto clamp = [&](std::int64_t t) { return options_.clamp ? std::min(t, *options_.clamp) : t; };
    const std::uint64_t mtime = filetime_from_unix(clamp(info.mtime), info.mtime_ns);
    const std::uint64_t btime = info.btime ? filetime_from_unix(clamp(*info.btime), info.btime_ns) : mtime;
    const std::uint32_t attributes = file_attr::archive | (info.read_only ? file_attr::read_only : 0);
    StandardInformation si;
    si.creation_time = btime;
    si.modification_time = si.mft_change_time = si.access_time = mtime;
    si.file_attributes = attributes;
    NewData d;
    FileName fn;
    fn.creation_time = btime;
    fn.modification_time = fn.mft_change_time = fn.access_time = mtime;
    fn.file_attributes = attributes;
    fn.data_size = data.size();
    // The record is planned twice when the data does not stay resident: the
    // $FILE_NAMEs' allocated size is the clusters'.
    const auto plan = [&] {
        return plan_record(dir, name, keys, fn, si, record_flag::in_use,
                           [&](std::uint32_t room) -> std::vector<std::vector<std::byte>> {
                               if (!d.resident && d.extents.empty()) d = plan_data(data, room);
                               return {data_attribute(d)};
                           });
    };
    fn.allocated_size = r8(data.size());
    NewRecord rec = plan();
    if (!d.resident) {
        fn.allocated_size = clusters_of(d.extents) * vol_.geometry().cluster_bytes;
        rec = plan();
    }
    const NameChange names = plan_names(dir, rec.keys, d.extents);
    // 2. Written: the data, its bits, the record, its bit, the parent's index, its times.
    begin();
    write_data(d, data);
    return link_record(dir, name, std::move(rec), names);
}

void Editor::replace_file(const FileEntry& file, const source::SourceFile& data, const NewFile& info) {
    Record r = read_record(file.record);
    const auto unsupported = [&](std::string_view why) {
        return Error(
            ErrorCode::unsupported,
            fmt::format("MFT record {} {}: fsimg does not replace such files on NTFS yet", file.record, why));
    };
    if (r.parsed.is_directory()) throw Error(ErrorCode::usage, "a directory's data cannot be replaced");
    if (r.parsed.header.base_record != 0) throw unsupported("is an extension record");
    if (r.parsed.find(AttrType::attribute_list)) throw unsupported("has an $ATTRIBUTE_LIST");
    if (r.parsed.find(AttrType::reparse_point)) throw unsupported("is a reparse point");
    if (file.record < kFirstNonSystemRecord) throw unsupported("is a system file");
    const Attribute* old = r.parsed.find(AttrType::data);
    const Attribute* si = r.parsed.find(AttrType::standard_information);
    if (si == nullptr || si->non_resident || si->value.size() < 0x24)
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record {} has no resident $STANDARD_INFORMATION", file.record));
    std::vector<std::pair<std::uint64_t, std::uint64_t>> old_runs;
    if (old != nullptr && old->non_resident) {
        vol_.check_runs(*old);
        for (const MappedRun& m : old->runs)
            if (m.lcn && m.length != 0) old_runs.emplace_back(static_cast<std::uint64_t>(*m.lcn), m.length);
    }
    // 1. Planned: the data (resident while the record, without the old $DATA, holds it).
    const std::uint32_t in_use = r.parsed.header.bytes_in_use - (old ? old->length : 0);
    const NewData d = plan_data(
        data, r.parsed.header.bytes_allocated > in_use ? r.parsed.header.bytes_allocated - in_use : 0);
    const auto clamp = [&](std::int64_t t) { return options_.clamp ? std::min(t, *options_.clamp) : t; };
    const std::uint64_t mtime = filetime_from_unix(clamp(info.mtime), info.mtime_ns);
    const std::uint64_t allocated =
        d.resident ? r8(d.size) : clusters_of(d.extents) * vol_.geometry().cluster_bytes;
    // The record: times, read-only bit and $FILE_NAME sizes patched in place, $DATA replaced.
    for (const Attribute& a : r.parsed.attributes) {
        const std::size_t v = a.offset + a.value_offset;
        if (a.kind() == AttrType::file_name && !a.non_resident && a.value.size() >= 0x38) {
            core::store_le64(r.bytes, v + 0x10, mtime);  // modification
            core::store_le64(r.bytes, v + 0x18, mtime);  // MFT change
            core::store_le64(r.bytes, v + 0x28, allocated);
            core::store_le64(r.bytes, v + 0x30, d.size);
        } else if (&a == si) {
            core::store_le64(r.bytes, v + 0x08, mtime);  // modification
            core::store_le64(r.bytes, v + 0x10, mtime);  // MFT change
            const std::uint32_t attrs = core::load_le32(r.bytes, v + kSiAttributes);
            core::store_le32(r.bytes, v + kSiAttributes,
                             (attrs & ~kReplacedAttributes) | (info.read_only ? file_attr::read_only : 0) |
                                 file_attr::archive);
        }
    }
    std::vector<std::byte> attr = data_attribute(d);
    const std::uint16_t instance = old ? old->instance : r.parsed.header.next_instance;
    core::store_le16(attr, 0x0E, instance);
    auto rebuilt = rebuilt_record(
        r, [&](const Attribute& a) { return &a == old; },
        {{static_cast<std::uint32_t>(AttrType::data), attr}},
        old ? r.parsed.header.next_instance : static_cast<std::uint16_t>(instance + 1));
    if (!rebuilt) throw unsupported("has no room for its new $DATA");
    std::vector<std::byte> out = std::move(*rebuilt);
    const std::vector<check::BitmapFix> release = cluster_bits(old_runs, false);
    // 2. Written: the data, its bits, the record, the index entries, the old clusters' bits.
    begin();
    write_data(d, data);
    const MftRecord parsed = r.parsed;
    write_record(file.record, std::move(out));
    patch_entries(file.record, parsed, [&](std::span<std::byte> key) {
        core::store_le64(key, 0x10, mtime);
        core::store_le64(key, 0x18, mtime);
        core::store_le64(key, 0x28, allocated);
        core::store_le64(key, 0x30, d.size);
        const std::uint32_t a = core::load_le32(key, 0x38);
        core::store_le32(
            key, 0x38,
            (a & ~kReplacedAttributes) | (info.read_only ? file_attr::read_only : 0) | file_attr::archive);
    });
    (void)check::apply_bitmap_fixes(dev_, release);
}

void Editor::rename(std::uint64_t from, const FileEntry& file, std::uint64_t to, std::string_view name,
                    bool replace) {
    const auto unsupported = [&](std::string_view why) {
        return Error(
            ErrorCode::unsupported,
            fmt::format("MFT record {} {}: fsimg does not move such files on NTFS yet", file.record, why));
    };
    if (file.is_root) throw Error(ErrorCode::usage, "the root directory cannot be moved");
    if (file.record < kFirstNonSystemRecord) throw unsupported("is a system file");
    if (auto why = utf8_name_problem(name))
        throw Error(ErrorCode::usage, fmt::format("\"{}\": {}", name, *why));
    if (name == "." || name == "..") throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a name", name));
    Record r = read_record(file.record);
    if (r.parsed.header.base_record != 0) throw unsupported("is an extension record");
    if (r.parsed.find(AttrType::attribute_list)) throw unsupported("has an $ATTRIBUTE_LIST");
    std::vector<FileName> names;  // the record's $FILE_NAMEs
    for (const Attribute& a : r.parsed.attributes) {
        if (a.kind() != AttrType::file_name || a.non_resident) continue;
        try {
            names.push_back(decode_file_name(a.value));
        } catch (const FormatError&) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("MFT record {}: a $FILE_NAME does not decode", file.record));
        }
    }
    const auto long_name = std::find_if(names.begin(), names.end(),
                                        [](const FileName& f) { return f.name_space != Namespace::dos; });
    if (long_name == names.end() || names.size() > 2 ||
        (names.size() == 2 && long_name->name_space != Namespace::win32))
        throw unsupported("has several names (hard links)");
    if (long_name->parent.record != from)
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record {} is not named in directory record {}", file.record, from));
    // A directory moved below itself would leave the tree.
    if (file.is_directory)
        for (std::uint64_t up = to, steps = 0; up != kRootRecord; ++steps) {
            if (up == file.record || steps > vol_.record_count())
                throw Error(ErrorCode::usage, "a directory cannot be moved into itself or below itself");
            const Record u = read_record(up);
            const Attribute* fn = u.parsed.find(AttrType::file_name);
            if (fn == nullptr || fn->non_resident) break;
            up = decode_file_name(fn->value).parent.record;
        }
    // What `to` holds of that name: the file itself (a case-only rename), another file (-f), or a refusal.
    if (const auto there = find(to, name); there && there->record != file.record) {
        if (there->is_directory)
            throw Error(ErrorCode::usage, fmt::format("\"{}\" exists and is a directory", name));
        if (!replace) throw Error(ErrorCode::usage, fmt::format("\"{}\" exists (mv -f replaces it)", name));
        remove(to, *there);
    }
    // 1. Planned: the new names against `to`'s others, both indexes, the record.
    const auto mine = [&](const IndexKey& k) { return k.file.record == file.record; };
    std::vector<IndexKey> to_keys = index_keys(to);  // a copy: changed below
    std::erase_if(to_keys, mine);
    std::vector<std::u16string_view> reserved;
    for (const IndexKey& k : to_keys) reserved.push_back(k.name);
    const std::u16string name16 = core::utf8_to_utf16(name);
    const NameRequest request[] = {{name16, false}};
    const NamePlan plan = plan_directory_names(request, reserved).front();
    const FileReference self{file.record, r.parsed.header.sequence};
    FileName fn = *long_name;
    fn.parent = FileReference{to, read_record(to).parsed.header.sequence};
    // The sizes the entries repeat: the file's $DATA (ntfs-3g leaves the record's $FILE_NAME at 0).
    if (!file.is_directory)
        if (const auto data = load_attribute(vol_, r.parsed, AttrType::data))
            std::tie(fn.allocated_size, fn.data_size) = entry_sizes(*data);
    std::vector<std::vector<std::byte>> values;
    std::vector<IndexKey> new_keys;
    const auto add_name = [&](std::u16string_view n, Namespace ns) {
        fn.name = std::u16string(n);
        fn.name_space = ns;
        values.push_back(encode_file_name(fn));
        new_keys.push_back({self, values.back(), fn.name});
    };
    add_name(name16, plan.name_space);
    if (!plan.dos.empty()) add_name(plan.dos, Namespace::dos);
    std::sort(values.begin(), values.end());
    to_keys.insert(to_keys.end(), new_keys.begin(), new_keys.end());
    const IndexRewrite into = plan_index(to, std::move(to_keys));
    std::optional<IndexRewrite> out_of;
    if (from != to) {
        std::vector<IndexKey> from_keys = index_keys(from);
        std::erase_if(from_keys, mine);
        out_of = plan_index(from, std::move(from_keys), into.extents);
    }
    auto record = renamed_record(r, values);
    if (!record) throw unsupported("has no room for its new names");
    // 2. Written: the new names' entries, the record, the old names' entries gone, the times.
    begin();
    apply_index(into);
    write_record(file.record, std::move(*record));
    if (out_of) apply_index(*out_of);
    stamp_directory(to);
    if (from != to) stamp_directory(from);
}

std::optional<std::vector<std::byte>> Editor::renamed_record(
    const Record& r, const std::vector<std::vector<std::byte>>& values) {
    std::uint16_t next = r.parsed.header.next_instance;
    std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
    std::vector<std::uint16_t> instances;
    for (const Attribute& a : r.parsed.attributes)
        if (a.kind() == AttrType::file_name) instances.push_back(a.instance);
    for (std::size_t k = 0; k < values.size(); ++k) {
        auto a = build_resident_attribute(AttrType::file_name, u"", values[k], true);
        core::store_le16(a, 0x0E, k < instances.size() ? instances[k] : next++);
        fresh.emplace_back(static_cast<std::uint32_t>(AttrType::file_name), std::move(a));
    }
    auto record = rebuilt_record(
        r, [](const Attribute& a) { return a.kind() == AttrType::file_name; }, fresh, next);
    if (record)
        core::store_le16(*record, 0x12,
                         static_cast<std::uint16_t>(values.size()));  // link count: every $FILE_NAME
    return record;
}

}  // namespace fsimg::ntfs
