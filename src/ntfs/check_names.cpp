// Pass 3: per in-use record, with every record's state known from pass 2:
// the base reference of extension records, $STANDARD_INFORMATION present,
// each $FILE_NAME (decodes, parent an in-use directory with the same
// sequence number, directory bit as the record has an $I30 index), and the
// $ATTRIBUTE_LIST: each entry names an in-use record of this file that holds
// the attribute, every attribute of the base is listed, and every extension
// record is named by its base's list (formats.md §3.5, §3.7
// [FLATCAP attributes/attribute_list, attributes/file_name]).
#include <fmt/format.h>

#include <algorithm>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"

namespace fsimg::ntfs::detail {

namespace {

std::string name_text(const FileName& fn) { return core::utf16_to_utf8_lossy(fn.name); }

void check_file_names(Context& c, std::uint64_t n, const MftRecord& r, std::uint64_t owner) {
    RecordState& os = c.rec[owner];
    for (const Attribute& a : r.attributes) {
        if (a.kind() != AttrType::file_name) continue;
        if (a.non_resident) {
            report(c, "ntfs.filename.bad", at_record(c, n, "$FILE_NAME"), "$FILE_NAME is non-resident");
            continue;
        }
        FileName fn;
        try {
            fn = decode_file_name(a.value);
        } catch (const FormatError& e) {
            report(c, "ntfs.filename.bad", at_record(c, n, "$FILE_NAME"),
                   fmt::format("$FILE_NAME does not decode: {}", e.what()));
            continue;
        }
        if (fn.name.empty()) {
            report(c, "ntfs.filename.bad", at_record(c, n, "$FILE_NAME"), "$FILE_NAME has an empty name");
            continue;
        }
        if (static_cast<unsigned>(fn.name_space) > 3) {
            report(c, "ntfs.filename.bad", at_record(c, n, "$FILE_NAME"),
                   fmt::format("\"{}\": namespace {} is not 0..3", name_text(fn),
                               static_cast<unsigned>(fn.name_space)));
        }
        ++os.all_names;
        if (fn.name_space != Namespace::dos) ++os.names;
        os.name_hash ^= name_key_hash(fn);
        const std::uint64_t p = fn.parent.record;
        if (p >= c.records || !c.used(p) || (c.rec[p].flags & rs::extension) ||
            !(c.rec[p].flags & rs::has_i30)) {
            report(c, "ntfs.filename.parent", at_record(c, n, "$FILE_NAME"),
                   fmt::format("\"{}\": parent record {} is {}", name_text(fn), p,
                               p >= c.records                     ? "past the end of $MFT"
                               : !c.used(p)                       ? "not in use"
                               : (c.rec[p].flags & rs::extension) ? "an extension record"
                                                                  : "not a directory"));
        } else if (c.rec[p].sequence != fn.parent.sequence && fn.parent.sequence != 0) {
            report(c, "ntfs.filename.parent-sequence", at_record(c, n, "$FILE_NAME"),
                   fmt::format("\"{}\": parent reference names record {} with sequence {}, the record has "
                               "sequence {}",
                               name_text(fn), p, fn.parent.sequence, c.rec[p].sequence));
        }
        const bool fn_dir = fn.file_attributes & file_attr::directory;
        const bool rec_dir = c.rec[owner].flags & rs::dir;
        if (fn_dir != rec_dir)
            report(c, "ntfs.filename.flags", at_record(c, n, "$FILE_NAME"),
                   fmt::format("\"{}\": the $FILE_NAME {} the directory flag, the record header {}",
                               name_text(fn), fn_dir ? "has" : "lacks", rec_dir ? "has it" : "does not"));
    }
}

void check_attribute_list(Context& c, std::uint64_t n, const MftRecord& r) {
    const Attribute* list = r.find(AttrType::attribute_list);
    std::vector<AttributeListEntry> entries;
    try {
        entries = decode_attribute_list(c.vol->read_stream(*list, kMaxListBytes));
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        report(c, "ntfs.attrlist.decode", at_record(c, n, "$ATTRIBUTE_LIST"),
               fmt::format("$ATTRIBUTE_LIST does not decode: {}", e.what()));
        c.rec[n].flags |= rs::list_bad;
        return;
    }
    std::optional<MftRecord> ext;
    for (const AttributeListEntry& e : entries) {
        const std::uint64_t rr = e.record.record;
        const std::string what =
            fmt::format("entry for attribute type 0x{:X} at VCN {} in record {}", e.type, e.starting_vcn, rr);
        const MftRecord* holder = &r;
        if (rr != n) {
            if (rr >= c.records || !c.used(rr) || !(c.rec[rr].flags & rs::extension) || c.rec[rr].base != n ||
                c.rec[rr].sequence != e.record.sequence) {
                report(c, "ntfs.attrlist.entry", at_record(c, n, "$ATTRIBUTE_LIST"),
                       fmt::format("{}: record {} is {}", what, rr,
                                   rr >= c.records                      ? "past the end of $MFT"
                                   : !c.used(rr)                        ? "not in use"
                                   : !(c.rec[rr].flags & rs::extension) ? "not an extension record"
                                   : c.rec[rr].base != n                ? "an extension of another record"
                                                                        : "of another sequence number"));
                continue;
            }
            c.rec[rr].flags |= rs::listed;
            if (!ext || ext->number != rr) ext = load_record(c, rr);
            if (!ext) continue;
            holder = &*ext;
        } else if (e.record.sequence != c.rec[n].sequence) {
            report(c, "ntfs.attrlist.entry", at_record(c, n, "$ATTRIBUTE_LIST"),
                   fmt::format("{}: sequence {} is not the record's {}", what, e.record.sequence,
                               c.rec[n].sequence));
            continue;
        }
        const bool held =
            std::any_of(holder->attributes.begin(), holder->attributes.end(), [&](const Attribute& a) {
                return a.type == e.type && a.name == e.name &&
                       (a.non_resident ? static_cast<std::uint64_t>(a.first_vcn) == e.starting_vcn
                                       : e.starting_vcn == 0);
            });
        if (!held)
            report(c, "ntfs.attrlist.entry", at_record(c, n, "$ATTRIBUTE_LIST"),
                   fmt::format("{}: the record holds no such attribute", what));
    }
    for (const Attribute& a : r.attributes) {
        if (a.kind() == AttrType::attribute_list) continue;
        const bool listed = std::any_of(entries.begin(), entries.end(), [&](const AttributeListEntry& e) {
            return e.record.record == n && e.type == a.type && e.name == a.name;
        });
        if (!listed)
            report(c, "ntfs.attrlist.entry", at_record(c, n, a.display_name()),
                   "the base record holds an attribute its $ATTRIBUTE_LIST does not list");
    }
}

}  // namespace

void check_names(Context& c) {
    for (std::uint64_t n = 0; n < c.records; ++n) {
        if (!c.used(n)) continue;
        const auto r = load_record(c, n);
        if (!r) continue;
        RecordState& st = c.rec[n];
        std::uint64_t owner = n;
        if (st.flags & rs::extension) {
            const auto base = FileReference::unpack(r->header.base_record);
            if (base.record >= c.records || base.record == n) continue;  // ntfs.record.base
            if (!c.used(base.record) || (c.rec[base.record].flags & rs::extension) ||
                c.rec[base.record].sequence != base.sequence) {
                report(
                    c, "ntfs.record.base", at_record(c, n),
                    fmt::format("base record {} (sequence {}) is {}", base.record, base.sequence,
                                !c.used(base.record)                         ? "not in use"
                                : (c.rec[base.record].flags & rs::extension) ? "itself an extension record"
                                                                             : "of another sequence number"));
                continue;
            }
            owner = base.record;
            st.flags |= rs::base_ok;
        } else {
            if (!r->find(AttrType::standard_information))
                report(c, "ntfs.attr.missing-std-info", at_record(c, n),
                       "the base record has no $STANDARD_INFORMATION");
            // Every file has an unnamed $DATA, empty or not [FLATCAP
            // attributes/data]; one in an extension record counts (has_data).
            // An attribute of a type no NTFS version defines may be that
            // $DATA with its type overwritten: ntfs.attr.order says so first.
            if (n >= kFirstUnreservedRecord && !(st.flags & (rs::dir | rs::has_list | rs::has_reparse)) &&
                !(st.flags & rs::has_data) &&
                std::none_of(r->attributes.begin(), r->attributes.end(), [](const Attribute& a) {
                    return a.kind() == AttrType::index_root ||
                           (a.kind() == AttrType::data && a.name.empty()) || !defined_attribute_type(a.type);
                }))
                report(c, "ntfs.attr.missing-data", at_record(c, n),
                       "the file has no unnamed $DATA attribute: ntfs-3g and The Sleuth Kit cannot open it");
            if (st.flags & rs::has_list) check_attribute_list(c, n, *r);
        }
        check_file_names(c, n, *r, owner);
    }
    for (std::uint64_t n = 0; n < c.records; ++n) {
        const RecordState& st = c.rec[n];
        if (!(st.flags & rs::used)) continue;
        if ((st.flags & rs::extension) && (st.flags & rs::base_ok) && !(st.flags & rs::listed))
            report(c, "ntfs.attrlist.missing", at_record(c, n),
                   fmt::format("extension record of {} is not named by an $ATTRIBUTE_LIST of its base{}",
                               record_name(st.base),
                               !(c.rec[st.base].flags & rs::has_list) ? " (the base has no $ATTRIBUTE_LIST)"
                               : (c.rec[st.base].flags & rs::list_bad)
                                   ? " (the base's $ATTRIBUTE_LIST does not decode, so names none)"
                                   : ""));
        // Records 12..15 are reserved: mkntfs and Windows keep them in use without names.
        if (!(st.flags & rs::extension) && st.all_names == 0) {
            if (n >= 12 && n < kFirstUnreservedRecord)
                --c.summary.files;
            else
                report(c, "ntfs.filename.missing", at_record(c, n), "the file has no $FILE_NAME attribute");
        }
    }
}

}  // namespace fsimg::ntfs::detail
