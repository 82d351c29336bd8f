// Pass 2: every MFT record in use (by the $MFT bitmap or by its own
// header): signature, update sequence array and fixups, header fields,
// attribute headers (parse_mft_record), attribute instances, non-resident
// attributes (VCN coverage, sizes, runs inside the volume, sparse runs), the
// clusters each record owns (cross-links name both owners), and the $MFT
// bitmap against the records in use (formats.md §3.4-§3.6).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "check_internal.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::ntfs::detail {

namespace {

/// Record 0's unnamed $BITMAP, or the one its $ATTRIBUTE_LIST places in an extension record.
std::optional<Attribute> find_mft_bitmap(const Context& c, const MftRecord& r0) {
    if (const Attribute* b = r0.find(AttrType::bitmap)) return *b;
    const Attribute* list = r0.find(AttrType::attribute_list);
    if (!list) return std::nullopt;
    try {
        for (const auto& e : decode_attribute_list(c.vol->read_stream(*list, kMaxListBytes))) {
            if (e.type != static_cast<std::uint32_t>(AttrType::bitmap) || !e.name.empty() ||
                e.record.record == 0)
                continue;
            if (auto ext = load_record(c, e.record.record))
                if (const Attribute* b = ext->find(AttrType::bitmap)) return *b;
        }
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
    }
    return std::nullopt;
}

void load_mft_bitmap(Context& c) {
    const auto r0 = load_record(c, 0);
    if (!r0) return;
    const auto bm = find_mft_bitmap(c, *r0);
    if (!bm) {
        c.out.add("ntfs.mft.bitmap-missing", at_record(c, 0),
                  "$MFT has no $BITMAP attribute: which records are in use is unknown");
        return;
    }
    const std::uint64_t need = core::div_ceil(c.records, std::uint64_t{8});
    if (bm->size() < need) {
        c.out.add(
            "ntfs.mft.bitmap-size", at_record(c, 0, "$BITMAP"),
            fmt::format("$MFT's $BITMAP holds {} bytes, {} records need {}", bm->size(), c.records, need));
        return;
    }
    c.mft_bitmap = check::ClusterBitmap(c.records);
    try {
        for_each_chunk(c, *bm, need, [&](std::uint64_t at, std::span<const std::byte> buf) {
            for (std::size_t i = 0; i < buf.size(); ++i) {
                const auto byte = std::to_integer<unsigned>(buf[i]);
                for (unsigned k = 0; k < 8 && byte; ++k) {
                    const std::uint64_t bit = (at + i) * 8 + k;
                    if (bit < c.records && ((byte >> k) & 1)) c.mft_bitmap.set(bit);
                }
            }
        });
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        c.out.add("ntfs.mft.bitmap-size", at_record(c, 0, "$BITMAP"),
                  fmt::format("$MFT's $BITMAP cannot be read: {}", e.what()));
        return;
    }
    c.have_mft_bitmap = true;
    c.mft_bitmap_attr = *bm;
}

/// CheckOptions::mft_bitmap_fixes: record n's bit of $MFT's $BITMAP to be
/// set (in use, marked free) or cleared (marked, not in use).
void note_mft_bit(Context& c, std::uint64_t n, bool set) {
    if (!c.options.mft_bitmap_fixes || !c.mft_bitmap_attr || !c.mft_bitmap_attr->non_resident) return;
    const auto at = c.vol->device_offset(*c.mft_bitmap_attr, n / 8);
    if (!at) return;
    auto& v = *c.options.mft_bitmap_fixes;
    if (v.empty() || v.back().offset != *at) v.push_back(check::BitmapFix{*at, 0, 0});
    (set ? v.back().set : v.back().clear) |= static_cast<std::uint8_t>(1u << (n % 8));
}

/// Header rules parse_mft_record does not judge, or judges with one message
/// for several codes. Returns false when the record cannot be parsed.
bool check_header(Context& c, std::uint64_t n, std::span<std::byte> raw, const MftRecordHeader& h) {
    const std::uint64_t rs = raw.size();
    auto say = [&](std::string_view code, std::string msg) {
        report(c, code, at_record(c, n), std::move(msg));
    };
    bool ok = true;
    const std::uint64_t strides = rs / kFixupStride;
    if (h.usa_offset < 0x28 || h.usa_offset % 2 || h.usa_count != strides + 1 ||
        std::uint64_t(h.usa_offset) + 2 * std::uint64_t(h.usa_count) >
            std::min<std::uint64_t>(rs, kFixupStride) - 2) {
        say("ntfs.record.usa",
            fmt::format(
                "update sequence array at offset {} with {} entries; a {}-byte record needs {} entries "
                "inside its first sector",
                h.usa_offset, h.usa_count, rs, strides + 1));
        return false;
    }
    std::vector<std::byte> copy(raw.begin(), raw.end());
    std::optional<std::size_t> bad;
    try {
        bad = verify_and_remove_fixups(copy);
    } catch (const FormatError& e) {
        say("ntfs.record.usa", fmt::format("update sequence array: {}", e.what()));
        return false;
    }
    if (bad) {
        const std::size_t tail = (*bad + 1) * kFixupStride - 2;
        say("ntfs.record.fixup",
            fmt::format(
                "fixup mismatch: sector {} of the record ends with 0x{:04X}, the update sequence number "
                "is 0x{:04X} (a torn multi-sector write)",
                *bad, core::load_le16(raw, tail), core::load_le16(raw, h.usa_offset)));
        return false;
    }
    if (h.bytes_allocated != rs) {
        say("ntfs.record.bytes-allocated",
            fmt::format("bytes allocated is {}, the boot sector's record size is {}", h.bytes_allocated, rs));
    }
    const std::uint64_t usa_end = std::uint64_t(h.usa_offset) + 2 * std::uint64_t(h.usa_count);
    if (h.first_attribute < usa_end || h.first_attribute % 8 || h.first_attribute + 8u > rs) {
        say("ntfs.record.first-attribute",
            fmt::format("first attribute offset {} is not 8-aligned inside {}..{}", h.first_attribute,
                        usa_end, rs - 8));
        ok = false;
    }
    if (h.bytes_in_use > rs || h.bytes_in_use % 8 || h.bytes_in_use < std::uint32_t(h.first_attribute) + 8u) {
        say("ntfs.record.bytes-in-use",
            fmt::format(
                "bytes in use {} is not 8-aligned inside {}..{} (first attribute {} plus the end marker)",
                h.bytes_in_use, h.first_attribute + 8u, rs, h.first_attribute));
        ok = false;
    }
    if (h.flags & ~std::uint16_t{0x000F})
        say("ntfs.record.flags", fmt::format("flags 0x{:04X} has bits outside 0x000F", h.flags));
    if (h.sequence == 0 && n >= kFirstUnreservedRecord)
        say("ntfs.record.sequence", "sequence number 0 on a record in use (sequence numbers start at 1)");
    if (h.usa_offset >= 0x30 && h.record_number != n)
        say("ntfs.record.number", fmt::format("the header says record number {}", h.record_number));
    const auto base = FileReference::unpack(h.base_record);
    if (h.base_record != 0 &&
        (n < kFirstUnreservedRecord && n != 0 ? true
                                              : (base.record >= c.records || base.record == n || n == 0)))
        say("ntfs.record.base",
            fmt::format("base record reference {} (sequence {}): {}", base.record, base.sequence,
                        n < kFirstUnreservedRecord ? "a system file's record is its own base"
                                                   : "not another record of $MFT"));
    return ok;
}

void claim_runs(Context& c, std::uint64_t n, const Attribute& a, std::uint64_t owner) {
    for (const MappedRun& r : a.runs) {
        if (!r.lcn) continue;
        const auto lcn = static_cast<std::uint64_t>(*r.lcn);
        if (lcn >= c.g.cluster_count || r.length > c.g.cluster_count - lcn) {
            report(c, "ntfs.run.outside", at_record(c, n, a.display_name()),
                   fmt::format("the run at VCN {} (LCN {}, {} clusters) passes the volume's last cluster {}",
                               static_cast<std::uint64_t>(r.vcn), lcn, r.length, c.g.cluster_count - 1));
            continue;
        }
        c.summary.used_clusters += r.length;
        if (lcn >= c.tracked_clusters) continue;  // past the image: nothing to own
        const std::uint64_t length = std::min(r.length, c.tracked_clusters - lcn);
        if (!c.owned.any(lcn, length)) {
            c.owned.set(lcn, length);
            continue;
        }
        bool crossed = false;
        for (std::uint64_t i = 0; i < length; ++i) {
            if (!c.owned.test(lcn + i)) {
                c.owned.set(lcn + i);
                continue;
            }
            if (crossed) continue;
            crossed = true;
            ++c.cross_link_count;
            if (c.cross_links.size() < kMaxCrossLinks)
                c.cross_links.push_back({lcn + i, owner, a.display_name()});
        }
        c.summary.used_clusters -= 0;
    }
}

/// The flags of the first piece (starting VCN 0) of attribute `a`'s type
/// and name in base record `owner`: in the base itself, else in the record
/// the base's $ATTRIBUTE_LIST names for VCN 0; nullopt when neither reads.
/// A reader takes an attribute's flags from that piece alone, and ntfs-3g
/// sets ATTR_IS_SPARSE there only, so the pieces it keeps in extension
/// records say 0x0000 for a sparse file [NTFS-3G attrib.c `ntfs_attr_open`
/// looks the attribute up at lowest VCN 0; `ntfs_attr_update_meta` leaves
/// every piece with a lowest VCN alone].
std::optional<std::uint16_t> first_piece_flags(Context& c, std::uint64_t owner, const Attribute& a) {
    FirstPieceFlags& k = c.first_piece;
    if (k.owner == owner && k.type == a.type && k.name == a.name) return k.flags;
    std::optional<std::uint16_t> found;
    const auto first_of = [&](const MftRecord& r) -> std::optional<std::uint16_t> {
        for (const Attribute& x : r.attributes)
            if (x.type == a.type && x.name == a.name && (!x.non_resident || x.first_vcn == Vcn{0}))
                return x.flags;
        return std::nullopt;
    };
    if (const auto base = load_record(c, owner)) {
        found = first_of(*base);
        const Attribute* list = base->find(AttrType::attribute_list);
        if (!found && list) {
            try {
                for (const auto& e : decode_attribute_list(c.vol->read_stream(*list, kMaxListBytes))) {
                    if (e.type != a.type || e.name != a.name || e.starting_vcn != 0 ||
                        e.record.record == owner)
                        continue;
                    if (const auto holder = load_record(c, e.record.record)) found = first_of(*holder);
                    break;
                }
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
            }
        }
    }
    k = FirstPieceFlags{owner, a.type, a.name, found};
    return found;
}

void check_attributes(Context& c, std::uint64_t n, const MftRecord& r) {
    const bool has_list = r.find(AttrType::attribute_list) != nullptr;
    const bool extension = r.header.base_record != 0;
    std::vector<std::uint16_t> instances;
    // Attributes follow in ascending type order [FLATCAP concepts/file_record]
    // (ntfs-3g: "Bad end of MFT record" for one out of order); a type code
    // no NTFS version defines (formats.md §3.5) counts only where it breaks
    // that order: ntfs-3g reads past one that keeps it.
    for (std::size_t k = 1; k < r.attributes.size(); ++k) {
        const Attribute& a = r.attributes[k];
        if (a.type >= r.attributes[k - 1].type) continue;
        const Attribute& odd = defined_attribute_type(a.type) ? r.attributes[k - 1] : a;
        report(
            c, "ntfs.attr.order", at_record(c, n, odd.display_name()),
            fmt::format("attribute type 0x{:X} follows type 0x{:X}: a record's attributes are in ascending "
                        "type order{}",
                        a.type, r.attributes[k - 1].type,
                        defined_attribute_type(odd.type)
                            ? ""
                            : fmt::format(", and no NTFS version defines type 0x{:X}", odd.type)));
        break;
    }
    for (const Attribute& a : r.attributes) {
        const std::string an = a.display_name();
        if (a.instance >= r.header.next_instance ||
            std::find(instances.begin(), instances.end(), a.instance) != instances.end())
            report(
                c, "ntfs.attr.instance", at_record(c, n, an),
                fmt::format("attribute instance {} is used twice or not below the header's next instance {}",
                            a.instance, r.header.next_instance));
        instances.push_back(a.instance);
        if (a.kind() == AttrType::data && a.name.empty() && (!a.non_resident || a.first_vcn == Vcn{0})) {
            const std::uint64_t owner = extension ? FileReference::unpack(r.header.base_record).record : n;
            if (owner < c.rec.size()) {
                RecordState& os = c.rec[owner];
                os.flags |= rs::has_data;
                os.data_size = a.size();
                os.alloc_size = !a.non_resident     ? (a.value.size() + 7) / 8 * 8
                                : a.compressed_size ? *a.compressed_size
                                                    : a.allocated_size;
            }
        }
        if (!a.non_resident) continue;
        const auto first = static_cast<std::uint64_t>(a.first_vcn),
                   last = static_cast<std::uint64_t>(a.last_vcn);
        std::uint64_t mapped = 0;
        for (const MappedRun& m : a.runs) mapped += m.length;
        const bool empty = first == 0 && last == ~std::uint64_t(0) && a.runs.empty();
        if (!empty && (last == ~std::uint64_t(0) || first > last || mapped != last - first + 1))
            report(c, "ntfs.attr.vcn", at_record(c, n, an),
                   fmt::format("the attribute covers VCNs {}..{} ({} clusters), its runlist maps {}", first,
                               static_cast<std::int64_t>(last), empty ? 0 : last - first + 1, mapped));
        if (first == 0) {
            const std::uint64_t C = c.g.cluster_bytes;
            std::string why;
            if (a.data_size > a.allocated_size)
                why = fmt::format("data size {} is above allocated size {}", a.data_size, a.allocated_size);
            else if (a.initialized_size > a.data_size)
                why =
                    fmt::format("initialized size {} is above data size {}", a.initialized_size, a.data_size);
            else if (a.allocated_size % C)
                why = fmt::format("allocated size {} is not a multiple of the cluster size {}",
                                  a.allocated_size, C);
            else if (!has_list && !extension && !empty && last < ~std::uint64_t(0) / C &&
                     a.allocated_size != (last + 1) * C)
                why = fmt::format("allocated size {} is not the {} clusters of VCNs 0..{} ({} bytes)",
                                  a.allocated_size, last + 1, last, (last + 1) * C);
            if (!why.empty()) report(c, "ntfs.attr.sizes", at_record(c, n, an), why);
        }
        const bool sparse_ok = (a.flags & 0x8001) || (n == 8 && a.name == u"$Bad");
        if (!sparse_ok) {
            for (const MappedRun& m : a.runs) {
                if (m.lcn) continue;
                if (first != 0) {
                    // A later piece: the attribute is what its first piece says.
                    const std::uint64_t owner =
                        extension ? FileReference::unpack(r.header.base_record).record : n;
                    const auto flags = first_piece_flags(c, owner, a);
                    if (flags && (*flags & 0x8001)) break;
                }
                report(
                    c, "ntfs.run.sparse", at_record(c, n, an),
                    fmt::format("a sparse run at VCN {} ({} clusters) in an attribute flagged neither sparse "
                                "nor compressed (flags 0x{:04X})",
                                static_cast<std::uint64_t>(m.vcn), m.length, a.flags));
                break;
            }
        }
        claim_runs(c, n, a, extension ? FileReference::unpack(r.header.base_record).record : n);
    }
}

/// Names the first owner of each cross-linked cluster: a second walk over the records.
void resolve_cross_links(Context& c) {
    std::vector<std::string> first(c.cross_links.size());
    std::vector<bool> found(c.cross_links.size());
    for (std::uint64_t n = 0; n < c.records; ++n) {
        if (!c.used(n)) continue;
        const auto r = load_record(c, n);
        if (!r) continue;
        for (const Attribute& a : r->attributes)
            for (const MappedRun& m : a.runs) {
                if (!m.lcn) continue;
                const auto lcn = static_cast<std::uint64_t>(*m.lcn);
                for (std::size_t i = 0; i < c.cross_links.size(); ++i) {
                    const auto& x = c.cross_links[i];
                    if (found[i] || x.cluster < lcn || x.cluster - lcn >= m.length) continue;
                    const std::uint64_t owner =
                        r->header.base_record ? FileReference::unpack(r->header.base_record).record : n;
                    found[i] = true;
                    first[i] = fmt::format("{} {}", record_name(owner), a.display_name());
                }
            }
        if (std::all_of(found.begin(), found.end(), [](bool b) { return b; })) break;
    }
    for (std::size_t i = 0; i < c.cross_links.size(); ++i) {
        const auto& x = c.cross_links[i];
        check::Location l = at_record(c, x.second, x.second_attr);
        l.byte_offset = x.cluster * c.g.cluster_bytes;
        l.sector = *l.byte_offset / c.g.bytes_per_sector;
        if (found[i]) l.other_owner = first[i];
        c.out.add("ntfs.run.cross-link", l,
                  fmt::format("cluster {} belongs to {} and to {} {}", x.cluster,
                              found[i] ? first[i] : std::string("an earlier attribute"),
                              record_name(x.second), x.second_attr));
    }
    if (c.cross_link_count > c.cross_links.size())
        c.out.add("ntfs.run.cross-link", check::Location{},
                  fmt::format("{} more attributes share clusters with another owner",
                              c.cross_link_count - c.cross_links.size()),
                  c.cross_link_count - c.cross_links.size());
}

/// One finding for every record in `t`: "N record(s) (first numbers) `what`".
void report_records(Context& c, std::string_view code, const Tally& t, std::string_view what) {
    if (!t.n) return;
    c.out.add(code, at_record(c, t.first.front()),
              fmt::format("{} record{} ({}): {}", t.n, t.n == 1 ? "" : "s", first_list(t.first, t.n), what),
              t.n);
}

}  // namespace

void check_records(Context& c) {
    const std::uint64_t rs = c.g.mft_record_bytes;
    c.rec.assign(static_cast<std::size_t>(c.records), RecordState{});
    c.owned = check::ClusterBitmap(c.tracked_clusters);
    load_mft_bitmap(c);
    std::vector<std::byte> raw(rs);
    Tally unreadable, marked_free, unmarked;
    const auto corrupt = [&](std::uint64_t n) {
        if (c.options.corrupt_records) c.options.corrupt_records->push_back(n);
    };
    for (std::uint64_t n = 0; n < c.records; ++n) {
        const bool marked = c.have_mft_bitmap && c.mft_bitmap.test(n);
        RecordState& st = c.rec[n];
        if (!read_raw_record(c, n, raw)) {
            if (marked || n < kFirstUnreservedRecord) unreadable.add(n);
            continue;
        }
        const bool care = marked || n < kFirstUnreservedRecord;
        if (std::memcmp(raw.data(), "BAAD", 4) == 0) {
            if (care)
                report(c, "ntfs.record.baad", at_record(c, n),
                       "signature \"BAAD\": a multi-sector transfer failed and the record was marked bad");
            if (care) c.walk_complete = false;
            if (care) corrupt(n);
            st.flags |= rs::broken;
            continue;
        }
        if (std::memcmp(raw.data(), "FILE", 4) != 0) {
            if (care) {
                std::string shown;
                for (std::size_t i = 0; i < 4; ++i) {
                    const auto ch = std::to_integer<unsigned char>(raw[i]);
                    shown += (ch >= 0x20 && ch < 0x7F) ? fmt::format("{}", char(ch))
                                                       : fmt::format("\\x{:02X}", ch);
                }
                report(c, "ntfs.record.signature", at_record(c, n),
                       fmt::format("signature \"{}\" is not \"FILE\"{}", shown,
                                   marked ? " and the $MFT bitmap marks the record in use" : ""));
                c.walk_complete = false;
                st.flags |= rs::broken;
                corrupt(n);
            }
            continue;
        }
        const MftRecordHeader h = decode_mft_record_header(raw);
        if (!(h.flags & record_flag::in_use)) {
            if (marked) {
                marked_free.add(n);
                note_mft_bit(c, n, false);
            }
            continue;
        }
        if (c.have_mft_bitmap && !marked) {
            unmarked.add(n);
            note_mft_bit(c, n, true);
        }
        st.sequence = h.sequence;
        if (!check_header(c, n, raw, h)) {
            st.flags |= rs::broken;
            corrupt(n);
            c.walk_complete = false;
            continue;
        }
        MftRecord r;
        try {
            r = parse_mft_record(raw, n, c.vol->device_offset(c.vol->mft_data(), n * rs).value_or(0));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            const std::string what = e.what();
            report(c, what.find("runlist") != std::string::npos ? "ntfs.run.decode" : "ntfs.attr.header",
                   at_record(c, n), what);
            st.flags |= rs::broken;
            corrupt(n);
            c.walk_complete = false;
            continue;
        }
        st.flags |= rs::used;
        ++c.summary.records_in_use;
        st.link_count = h.link_count;
        if (h.flags & record_flag::directory) st.flags |= rs::dir;
        if (h.base_record != 0) {
            st.flags |= rs::extension;
            st.base = FileReference::unpack(h.base_record).record;
        } else if (st.flags & rs::dir) {
            ++c.summary.directories;
        } else {
            ++c.summary.files;
        }
        if (r.find(AttrType::attribute_list)) st.flags |= rs::has_list;
        if (r.find(AttrType::reparse_point)) st.flags |= rs::has_reparse;
        if (r.find(AttrType::index_root, u"$I30")) {
            st.flags |= rs::has_i30;
            // ntfs-3g moves a full record's $INDEX_ROOT to an extension
            // record (named by the base's $ATTRIBUTE_LIST): the base is the
            // directory.
            if ((st.flags & rs::extension) && st.base < c.records && st.base != n)
                c.rec[st.base].flags |= rs::has_i30;
        }
        check_attributes(c, n, r);
    }
    report_records(c, "ntfs.record.unreadable", unreadable, "cannot be read through $MFT's runlist");
    report_records(c, "ntfs.mft-bitmap.unmarked", unmarked, "in use, not marked in $MFT's $BITMAP");
    report_records(c, "ntfs.mft-bitmap.marked-free", marked_free,
                   "marked in use in $MFT's $BITMAP, not in use");
    if (!c.cross_links.empty()) resolve_cross_links(c);
}

}  // namespace fsimg::ntfs::detail
