// fsck's repairs of MFT record headers and of records that cannot be read:
// see include/fsimg/ntfs/edit.hpp (repair_corrupt_records,
// repair_record_fields).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "edit_internal.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

// MFT record header fields [FLATCAP concepts/file_record].
constexpr std::size_t kFieldSequence = 0x10, kFieldFlags = 0x16, kFieldBytesAllocated = 0x1C,
                      kFieldBaseRecord = 0x20, kFieldRecordNumber = 0x2C;
constexpr std::uint16_t kUsaWithRecordNumber = 0x30;  // NTFS 3.1 headers hold the record number
constexpr std::size_t kFieldAttrInstance = 0x0E;      // in an attribute header
constexpr std::uint64_t kFieldExtendRecord = 11;

/// The sequence number a freed record gets: the next one, 0 skipped (a
/// reference of sequence 0 means "any").
std::uint16_t freed_sequence(std::uint16_t s) {
    const auto n = static_cast<std::uint16_t>(s + 1);
    return n == 0 ? 1 : n;
}

/// True for a file's base record that needs an unnamed $DATA it lacks
/// (check_names' ntfs.attr.missing-data): not a directory, a view index
/// or a reparse point, no $ATTRIBUTE_LIST (a list may name one elsewhere).
bool lacks_unnamed_data(const MftRecord& r) {
    if (r.header.base_record != 0 || (r.header.flags & record_flag::directory)) return false;
    return std::none_of(r.attributes.begin(), r.attributes.end(), [](const Attribute& a) {
        return a.kind() == AttrType::attribute_list || a.kind() == AttrType::index_root ||
               a.kind() == AttrType::reparse_point || (a.kind() == AttrType::data && a.name.empty());
    });
}

}  // namespace

void Editor::with_unnamed_data(std::uint64_t n, std::vector<std::byte>& plain) const {
    Record r;
    r.bytes = plain;
    std::vector<std::byte> raw = plain;
    const std::uint16_t usa = core::load_le16(raw, 4);
    apply_fixups(raw, usa, core::load_le16(raw, usa));
    r.parsed = parse_mft_record(raw, n);
    const MftRecordHeader& h = r.parsed.header;
    if (n < kFirstNonSystemRecord || !lacks_unnamed_data(r.parsed)) return;
    std::uint32_t next = h.next_instance;
    for (const Attribute& a : r.parsed.attributes) next = std::max<std::uint32_t>(next, a.instance + 1u);
    if (next >= 0xFFFF) return;
    auto data = build_resident_attribute(AttrType::data, u"", {});
    core::store_le16(data, kFieldAttrInstance, static_cast<std::uint16_t>(next));
    if (auto fixed = rebuilt_record(
            r, [](const Attribute&) { return false; },
            {{static_cast<std::uint32_t>(AttrType::data), std::move(data)}},
            static_cast<std::uint16_t>(next + 1)))
        plain = std::move(*fixed);
}

Editor::CorruptRepairs Editor::repair_corrupt_records(std::span<const std::uint64_t> records,
                                                      std::vector<std::string>* left) {
    CorruptRepairs done;
    const std::uint32_t rs = vol_.geometry().mft_record_bytes;
    std::vector<std::byte> raw(rs);
    for (const std::uint64_t n : records) {
        if (n < kFirstNonSystemRecord || n >= vol_.record_count()) {
            if (left) left->push_back(fmt::format("MFT record {}: a system file's record is not deleted", n));
            continue;
        }
        vol_.read_stream(vol_.mft_data(), n * rs, raw);
        // A record that now parses (an earlier repair of this run) is left.
        std::vector<std::byte> plain = raw;
        try {
            if (parse_mft_record(plain, n).in_use() && decode_mft_record_header(plain).bytes_in_use % 8 == 0)
                continue;
        } catch (const Error& e) {
            if (e.code() != ErrorCode::corrupt) throw;
        }
        plain = raw;
        std::optional<SalvagedRecord> kept;
        try {
            if (!verify_and_remove_fixups(plain)) kept = salvage_mft_record(plain, n);
        } catch (const FormatError&) {
        }
        begin();
        if (kept) {
            const std::uint32_t dropped = kept->dropped;
            with_unnamed_data(n, kept->bytes);
            write_record(n, std::move(kept->bytes));
            ++(dropped == 0 ? done.resized : done.rewritten);
            done.dropped += dropped;
            continue;
        }
        MftRecordBuilder b(rs, static_cast<std::uint32_t>(n),
                           freed_sequence(core::load_le16(raw, kFieldSequence)), 0);
        write_stream(vol_.mft_data(), n * rs, b.finish());
        mark_record(n, false);
        ++done.freed;
    }
    return done;
}

Editor::FieldRepairs Editor::repair_record_fields(bool all) {
    const std::uint32_t rs = vol_.geometry().mft_record_bytes;
    // 1. The records with a field to set (read whole again below).
    std::vector<std::uint64_t> todo;
    std::set<std::uint64_t> extended;  // bases extension records name: their $DATA may lie there
    detail::for_each_in_use(vol_, [&](std::uint64_t n, std::uint64_t owner, const MftRecord& r) {
        const MftRecordHeader& h = r.header;
        if (owner != n) extended.insert(owner);
        const bool no_std_info = h.base_record == 0 && n >= kFirstNonSystemRecord &&
                                 r.find(AttrType::standard_information) == nullptr &&
                                 r.find(AttrType::attribute_list) == nullptr;
        if (h.bytes_allocated != rs || (h.usa_offset >= kUsaWithRecordNumber && h.record_number != n) ||
            (all &&
             ((h.sequence == 0 && n >= kFirstNonSystemRecord) || (h.flags & ~std::uint16_t{0x000F}) ||
              h.base_record != 0 || no_std_info || (n >= kFirstNonSystemRecord && lacks_unnamed_data(r)))))
            todo.push_back(n);
    });
    // A base reference is valid when it names another in-use base record of
    // that sequence number.
    const auto base_valid = [&](std::uint64_t n, std::uint64_t packed) {
        const FileReference b = FileReference::unpack(packed);
        if (b.record == n || b.record >= vol_.record_count()) return false;
        try {
            const MftRecord base = vol_.read_record(b.record);
            return base.in_use() && base.header.base_record == 0 && base.header.sequence == b.sequence;
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return false;
        }
    };
    FieldRepairs done;
    for (const std::uint64_t n : todo) {
        Record r = read_record(n);
        const MftRecordHeader& h = r.parsed.header;
        const bool std_info = r.parsed.find(AttrType::standard_information) != nullptr;
        // An extension record whose base is gone: nothing can reach what it
        // holds (chkdsk deletes such an orphan file record segment).
        if (all && h.base_record != 0 && n >= kFirstNonSystemRecord && !std_info &&
            !base_valid(n, h.base_record)) {
            begin();
            MftRecordBuilder b(rs, static_cast<std::uint32_t>(n), freed_sequence(h.sequence), 0);
            write_stream(vol_.mft_data(), n * rs, b.finish());
            mark_record(n, false);
            ++done.orphans;
            continue;
        }
        bool changed = false;
        const auto set16 = [&](std::size_t at, std::uint16_t v, std::uint64_t& count) {
            core::store_le16(r.bytes, at, v);
            ++count;
            changed = true;
        };
        if (h.bytes_allocated != rs) {
            core::store_le32(r.bytes, kFieldBytesAllocated, rs);
            ++done.bytes_allocated;
            changed = true;
        }
        if (h.usa_offset >= kUsaWithRecordNumber && h.record_number != n) {
            core::store_le32(r.bytes, kFieldRecordNumber, static_cast<std::uint32_t>(n));
            ++done.numbers;
            changed = true;
        }
        bool base = h.base_record == 0;
        if (all && h.base_record != 0 &&
            (n < kFirstNonSystemRecord || (std_info && !base_valid(n, h.base_record)))) {
            core::store_le64(r.bytes, kFieldBaseRecord, 0);
            ++done.bases;
            changed = base = true;
        }
        if (all && h.sequence == 0 && n >= kFirstNonSystemRecord) set16(kFieldSequence, 1, done.sequences);
        if (all && (h.flags & ~std::uint16_t{0x000F})) {
            std::uint16_t flags = h.flags & 0x000F;
            if (base && r.parsed.find(AttrType::attribute_list) == nullptr) {
                flags = record_flag::in_use;
                bool i30 = false, view = false, in_extend = false;
                for (const Attribute& a : r.parsed.attributes) {
                    if (a.kind() == AttrType::index_root) (a.name == u"$I30" ? i30 : view) = true;
                    if (a.kind() == AttrType::file_name && !a.non_resident) {
                        try {
                            in_extend =
                                in_extend || decode_file_name(a.value).parent.record == kFieldExtendRecord;
                        } catch (const FormatError&) {
                        }
                    }
                }
                if (i30) flags |= record_flag::directory;
                if (in_extend) flags |= h.flags & 0x0004;
                if (view) flags |= 0x0008;
            }
            set16(kFieldFlags, flags, done.flags);
        }
        // A base record without $STANDARD_INFORMATION gets one: the times and
        // file attributes of its first name outside the DOS namespace, the
        // security id of that name's directory.
        if (all && base && n >= kFirstNonSystemRecord && !std_info &&
            r.parsed.find(AttrType::attribute_list) == nullptr) {
            std::optional<FileName> name;
            for (const Attribute& a : r.parsed.attributes) {
                if (a.kind() != AttrType::file_name || a.non_resident) continue;
                try {
                    FileName fn = decode_file_name(a.value);
                    if (!name || (name->name_space == Namespace::dos && fn.name_space != Namespace::dos))
                        name = std::move(fn);
                } catch (const FormatError&) {
                }
            }
            if (name) {
                StandardInformation si;
                si.creation_time = name->creation_time;
                si.modification_time = name->modification_time;
                si.mft_change_time = name->mft_change_time;
                si.access_time = name->access_time;
                si.file_attributes = name->file_attributes & ~(file_attr::directory | file_attr::view_index);
                try {
                    const MftRecord parent = vol_.read_record(name->parent.record);
                    if (const Attribute* psi = parent.find(AttrType::standard_information);
                        psi != nullptr && !psi->non_resident && psi->value.size() >= kStandardInformationSize)
                        si.security_id = decode_standard_information(psi->value).security_id;
                } catch (const Error& e) {
                    if (e.code() == ErrorCode::io) throw;
                }
                auto attr = build_resident_attribute(AttrType::standard_information, u"",
                                                     encode_standard_information(si));
                std::uint32_t next = h.next_instance;
                for (const Attribute& a : r.parsed.attributes)
                    next = std::max<std::uint32_t>(next, a.instance + 1u);
                if (next < 0xFFFF) {
                    core::store_le16(attr, kFieldAttrInstance, static_cast<std::uint16_t>(next));
                    auto fixed = rebuilt_record(
                        r, [](const Attribute&) { return false; },
                        {{static_cast<std::uint32_t>(AttrType::standard_information), std::move(attr)}},
                        static_cast<std::uint16_t>(next + 1));
                    if (fixed) {
                        r.bytes = std::move(*fixed);
                        ++done.std_info;
                        changed = true;
                    }
                }
            }
        }
        // A file without an unnamed $DATA gets an empty one (no extension
        // record names it as its base: one might hold it).
        if (all && base && n >= kFirstNonSystemRecord && !extended.count(n) && lacks_unnamed_data(r.parsed)) {
            const std::size_t before = r.bytes.size();
            std::vector<std::byte> plain = r.bytes;
            with_unnamed_data(n, plain);
            if (plain != r.bytes && plain.size() == before) {
                r.bytes = std::move(plain);
                ++done.data;
                changed = true;
            }
        }
        if (!changed) continue;
        begin();
        write_record(n, std::move(r.bytes));
    }
    return done;
}

}  // namespace fsimg::ntfs
