// Attributes gathered across MFT records: see include/fsimg/ntfs/file.hpp.
#include "fsimg/ntfs/file.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"

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
