// Attributes gathered across MFT records: see include/fsimg/ntfs/file.hpp.
#include "fsimg/ntfs/file.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/compression.hpp"

namespace fsimg::ntfs {

namespace {

std::string attr_label(std::uint32_t type, std::u16string_view name) {
    std::string t(attr_type_name(type));
    if (t.empty()) t = fmt::format("0x{:X}", type);
    if (!name.empty()) t += ":" + core::utf16_to_utf8_lossy(name);
    return t;
}

std::vector<AttributeListEntry> read_list(const Volume& v, const MftRecord& base, const Attribute& list) {
    if (list.size() > kMaxAttributeListBytes)
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record {}: $ATTRIBUTE_LIST has {} bytes, more than the {} read",
                                base.number, list.size(), kMaxAttributeListBytes),
                    base.byte_offset + list.offset);
    const auto bytes = v.read_stream(list, kMaxAttributeListBytes);
    try {
        return decode_attribute_list(bytes);
    } catch (const FormatError& e) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record {}: $ATTRIBUTE_LIST: {} at list offset {}", base.number, e.what(),
                                e.byte_offset().value_or(0)),
                    base.byte_offset + list.offset);
    }
}

}  // namespace

std::optional<Attribute> load_attribute(const Volume& v, const MftRecord& base, AttrType type,
                                        std::u16string_view name) {
    const Attribute* list = base.find(AttrType::attribute_list);
    if (!list) {
        const Attribute* a = base.find(type, name);
        if (!a) return std::nullopt;
        return *a;
    }
    const auto t = static_cast<std::uint32_t>(type);
    std::vector<AttributeListEntry> mine;
    for (AttributeListEntry& e : read_list(v, base, *list))
        if (e.type == t && e.name == name) mine.push_back(std::move(e));
    if (mine.empty()) {
        // Windows lists every attribute; a list that forgets one still
        // leaves it readable in the base record.
        const Attribute* a = base.find(type, name);
        if (!a) return std::nullopt;
        return *a;
    }
    std::stable_sort(mine.begin(), mine.end(), [](const AttributeListEntry& a, const AttributeListEntry& b) {
        return a.starting_vcn < b.starting_vcn;
    });
    const std::string label = attr_label(t, name);
    auto fail = [&](const std::string& what) {
        return Error(ErrorCode::corrupt, fmt::format("MFT record {}: {}: {}", base.number, label, what),
                     base.byte_offset);
    };
    // Extension records are read once each even when several extents live
    // there (entries are sorted by VCN, records repeat in any order).
    std::optional<MftRecord> held;
    auto record_of = [&](const FileReference& ref) -> const MftRecord& {
        if (ref.record == base.number) return base;
        if (held && held->number == ref.record) return *held;
        if (ref.record >= v.record_count())
            throw fail(fmt::format("$ATTRIBUTE_LIST names record {}, past $MFT's {} records", ref.record,
                                   v.record_count()));
        held = v.read_record(ref.record);
        if (!held->in_use())
            throw fail(fmt::format("$ATTRIBUTE_LIST names record {}, which is not in use", ref.record));
        if (FileReference::unpack(held->header.base_record).record != base.number)
            throw fail(fmt::format("$ATTRIBUTE_LIST names record {}, whose base record is {}", ref.record,
                                   FileReference::unpack(held->header.base_record).record));
        return *held;
    };
    auto extent_in = [&](const MftRecord& r, std::uint64_t vcn) -> const Attribute* {
        for (const Attribute& a : r.attributes)
            if (a.type == t && a.name == name &&
                (!a.non_resident || static_cast<std::uint64_t>(a.first_vcn) == vcn))
                return &a;
        return nullptr;
    };
    const MftRecord& first_rec = record_of(mine.front().record);
    const Attribute* first = extent_in(first_rec, mine.front().starting_vcn);
    if (!first)
        throw fail(fmt::format("record {} holds no extent starting at VCN {}", mine.front().record.record,
                               mine.front().starting_vcn));
    Attribute out = *first;
    if (!out.non_resident) return out;
    if (out.first_vcn != Vcn{0})
        throw fail(fmt::format("the first extent starts at VCN {}, not 0",
                               static_cast<std::uint64_t>(out.first_vcn)));
    v.check_runs(out);
    auto end_vcn = [&] {
        return out.runs.empty() ? std::uint64_t{0}
                                : static_cast<std::uint64_t>(out.runs.back().vcn) + out.runs.back().length;
    };
    for (std::size_t i = 1; i < mine.size(); ++i) {
        const AttributeListEntry& e = mine[i];
        if (e.starting_vcn != end_vcn())
            throw fail(
                fmt::format("$ATTRIBUTE_LIST names an extent at VCN {} in record {}, but the runs so far "
                            "end at VCN {}",
                            e.starting_vcn, e.record.record, end_vcn()));
        const MftRecord& r = record_of(e.record);
        const Attribute* more = extent_in(r, e.starting_vcn);
        if (!more || !more->non_resident || more->runs.empty())
            throw fail(fmt::format("record {} holds no non-resident extent starting at VCN {}",
                                   e.record.record, e.starting_vcn));
        v.check_runs(*more);
        out.runs.insert(out.runs.end(), more->runs.begin(), more->runs.end());
        out.last_vcn = more->last_vcn;
    }
    return out;
}

std::vector<AttributeKey> list_attributes(const Volume& v, const MftRecord& base) {
    std::vector<AttributeKey> out;
    auto add = [&](std::uint32_t type, const std::u16string& name) {
        AttributeKey k{type, name};
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(std::move(k));
    };
    if (const Attribute* list = base.find(AttrType::attribute_list)) {
        for (const AttributeListEntry& e : read_list(v, base, *list)) add(e.type, e.name);
    }
    for (const Attribute& a : base.attributes) add(a.type, a.name);
    return out;
}

}  // namespace fsimg::ntfs

namespace fsimg::ntfs {

std::vector<StreamInfo> data_streams(const Volume& v, const MftRecord& base) {
    std::vector<StreamInfo> out;
    for (const AttributeKey& k : list_attributes(v, base)) {
        if (k.type != static_cast<std::uint32_t>(AttrType::data)) continue;
        const auto a = load_attribute(v, base, AttrType::data, k.name);
        if (!a) continue;
        StreamInfo s;
        s.name = k.name;
        s.size = a->size();
        s.allocated_size = a->non_resident ? a->allocated_size : a->value.size();
        s.resident = !a->non_resident;
        s.flags = a->flags;
        out.push_back(std::move(s));
    }
    std::stable_partition(out.begin(), out.end(), [](const StreamInfo& s) { return s.name.empty(); });
    return out;
}

std::optional<std::string> unreadable_reason(const Volume& v, const MftRecord& base, const Attribute& data) {
    if (auto why = compression_unsupported(v, data)) return why;
    if (data.flags & 0x4000) return std::string("the stream is encrypted (EFS)");
    if (const Attribute* si = base.find(AttrType::standard_information)) {
        try {
            if (decode_standard_information(si->value).file_attributes & 0x4000)
                return std::string("the file is encrypted (EFS)");
        } catch (const FormatError&) {
        }
    }
    if (const auto rp = load_attribute(v, base, AttrType::reparse_point)) {
        std::vector<std::byte> value;
        try {
            value = v.read_stream(*rp, 16 * 1024);
        } catch (const Error&) {
        }
        const auto tag = reparse_tag(value);
        if (tag && *tag != kReparseTagSymlink && *tag != kReparseTagMountPoint)
            return fmt::format(
                "the file is a reparse point with tag 0x{:08X}{}; its data is not stored in "
                "$DATA",
                *tag,
                *tag == 0x80000017   ? " (WOF-compressed)"
                : *tag == 0x80000013 ? " (deduplicated)"
                                     : "");
    }
    return std::nullopt;
}

void read_data(const Volume& v, const MftRecord& base, std::u16string_view name,
               const std::function<void(std::span<const std::byte>)>& sink) {
    const auto a = load_attribute(v, base, AttrType::data, name);
    if (!a)
        throw Error(ErrorCode::usage,
                    fmt::format("MFT record {} has no {}", base.number, attr_label(0x80, name)));
    if (const auto why = unreadable_reason(v, base, *a))
        throw Error(ErrorCode::unsupported, fmt::format("MFT record {}: {}", base.number, *why));
    if (a->non_resident && (a->flags & 0x0001)) {
        read_compressed(v, *a, sink);
        return;
    }
    constexpr std::uint64_t kChunk = 1u << 20;
    const std::uint64_t size = a->size();
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min(size, kChunk)));
    for (std::uint64_t at = 0; at < size;) {
        const std::size_t n = static_cast<std::size_t>(std::min(kChunk, size - at));
        v.read_stream(*a, at, std::span<std::byte>(buf).first(n));
        sink(std::span<const std::byte>(buf).first(n));
        at += n;
    }
}

void read_data_sparse(const Volume& v, const MftRecord& base, std::u16string_view name,
                      const std::function<void(std::span<const std::byte>)>& sink,
                      const std::function<void(std::uint64_t)>& hole) {
    const auto a = load_attribute(v, base, AttrType::data, name);
    if (!a || !a->non_resident || (a->flags & 0x0001)) return read_data(v, base, name, sink);
    if (const auto why = unreadable_reason(v, base, *a))
        throw Error(ErrorCode::unsupported, fmt::format("MFT record {}: {}", base.number, *why));
    constexpr std::uint64_t kChunk = 1u << 20;
    const std::uint64_t C = v.geometry().cluster_bytes;
    const std::uint64_t size = a->size();
    const std::uint64_t initialized = std::min(a->initialized_size, size);
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min(size, kChunk)));
    // Each step covers at least one byte: data up to a chunk, or a whole hole.
    for (std::uint64_t at = 0; at < size;) {
        if (at >= initialized) {
            hole(size - at);
            return;
        }
        const std::uint64_t vcn = at / C;
        const auto it = std::upper_bound(
            a->runs.begin(), a->runs.end(), vcn,
            [](std::uint64_t x, const MappedRun& r) { return x < static_cast<std::uint64_t>(r.vcn); });
        std::uint64_t run_end = initialized;  // an unmapped VCN: read_stream names it
        bool sparse = false;
        if (it != a->runs.begin()) {
            const MappedRun& r = *std::prev(it);
            const std::uint64_t first = static_cast<std::uint64_t>(r.vcn);
            if (vcn - first < r.length) {
                run_end = std::min(initialized, core::checked_mul(first + r.length, C, "run end"));
                sparse = !r.lcn;
            }
        }
        if (sparse) {
            hole(run_end - at);
            at = run_end;
            continue;
        }
        const std::size_t n = static_cast<std::size_t>(std::min({kChunk, run_end - at, size - at}));
        v.read_stream(*a, at, std::span<std::byte>(buf).first(n));
        sink(std::span<const std::byte>(buf).first(n));
        at += n;
    }
}

std::optional<std::uint32_t> reparse_tag(std::span<const std::byte> value) {
    if (value.size() < 8) return std::nullopt;
    return core::load_le32(value, 0);
}

std::optional<ReparseLink> decode_reparse_link(std::span<const std::byte> value) {
    const auto tag = reparse_tag(value);
    if (!tag || (*tag != kReparseTagSymlink && *tag != kReparseTagMountPoint)) return std::nullopt;
    const std::size_t header = *tag == kReparseTagSymlink ? 20 : 16;
    if (value.size() < header)
        throw FormatError(0, fmt::format("reparse data of {} bytes is shorter than its {}-byte header",
                                         value.size(), header));
    ReparseLink l;
    l.tag = *tag;
    const std::span<const std::byte> buf = value.subspan(header);
    auto name = [&](std::size_t field) {
        const std::size_t off = core::load_le16(value, field), len = core::load_le16(value, field + 2);
        if (off + len > buf.size())
            throw FormatError(field, fmt::format("reparse name at {} of {} bytes passes the path buffer's {}",
                                                 off, len, buf.size()));
        return decode_utf16(buf.subspan(off, len));
    };
    l.substitute_name = name(8);
    l.print_name = name(12);
    if (*tag == kReparseTagSymlink) l.relative = core::load_le32(value, 16) & 1;
    return l;
}

std::string ReparseLink::posix_target() const {
    std::u16string t = substitute_name.empty() ? print_name : substitute_name;
    if (!relative && t.starts_with(u"\\??\\")) {
        t = t.substr(4);
        // Only "C:\..." is a drive; a UNC or volume GUID path must stay absolute.
        if (t.starts_with(u"UNC\\") || t.starts_with(u"unc\\")) {
            t = u"\\\\" + t.substr(4);
        } else if (!(t.size() >= 2 && t[1] == u':')) {
            t = u"\\??\\" + t;
        }
    }
    std::string out = core::utf16_to_utf8_lossy(t);
    std::replace(out.begin(), out.end(), '\\', '/');
    return out;
}

}  // namespace fsimg::ntfs

namespace fsimg::ntfs {

std::optional<std::string> interix_link_target(const Volume& v, const MftRecord& base) {
    const Attribute* si = base.find(AttrType::standard_information);
    try {
        if (!si || !(decode_standard_information(si->value).file_attributes & file_attr::system))
            return std::nullopt;
        const auto data = load_attribute(v, base, AttrType::data);
        if (!data || data->size() <= 8 || data->size() > 8 + 2 * 4095 || data->size() % 2)
            return std::nullopt;
        if (data->flags & 0x4000) return std::nullopt;  // encrypted
        std::vector<std::byte> bytes;
        if (data->non_resident && (data->flags & 0x0001))
            read_compressed(v, *data, [&](std::span<const std::byte> s) {
                bytes.insert(bytes.end(), s.begin(), s.end());
            });
        else
            bytes = v.read_stream(*data, 8 + 2 * 4095);
        static constexpr char kMagic[8] = {'I', 'n', 't', 'x', 'L', 'N', 'K', '\x01'};
        for (std::size_t i = 0; i < 8; ++i)
            if (bytes[i] != std::byte(kMagic[i])) return std::nullopt;
        return core::utf16_to_utf8_lossy(decode_utf16(std::span<const std::byte>(bytes).subspan(8)));
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace fsimg::ntfs
