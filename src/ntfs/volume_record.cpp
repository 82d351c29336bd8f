// MFT record parsing: see include/fsimg/ntfs/volume.hpp.
#include <fmt/format.h>

#include <string>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

namespace {

constexpr std::uint32_t kEndMarker = 0xFFFFFFFF;
constexpr std::size_t kResidentHeader = 0x18, kNonResidentHeader = 0x40, kCompressedHeader = 0x48;

/// Decodes the attribute in `a` (exactly its `length` bytes). Throws
/// FormatError with offsets relative to the attribute.
Attribute decode_attribute(std::span<const std::byte> a) {
    Attribute at;
    at.type = core::load_le32(a, 0x00);
    at.length = static_cast<std::uint32_t>(a.size());
    at.non_resident = a[0x08] != std::byte{0};
    const std::size_t name_units = static_cast<std::uint8_t>(a[0x09]);
    const std::size_t name_off = core::load_le16(a, 0x0A);
    at.flags = core::load_le16(a, 0x0C);
    at.instance = core::load_le16(a, 0x0E);
    if (name_units) {
        if (name_off + 2 * name_units > a.size())
            throw FormatError(
                0x0A, fmt::format("name of {} units at offset {} passes the attribute's {} bytes", name_units,
                                  name_off, a.size()));
        at.name = decode_utf16(a.subspan(name_off, 2 * name_units));
    }
    if (!at.non_resident) {
        const std::uint32_t value_len = core::load_le32(a, 0x10);
        at.value_offset = core::load_le16(a, 0x14);
        at.indexed = a[0x16] != std::byte{0};
        if (std::uint64_t(at.value_offset) + value_len > a.size())
            throw FormatError(0x10,
                              fmt::format("resident value of {} bytes at offset {} passes the attribute's {} "
                                          "bytes",
                                          value_len, at.value_offset, a.size()));
        const auto v = a.subspan(at.value_offset, value_len);
        at.value.assign(v.begin(), v.end());
        return at;
    }
    // Compressed and sparse attributes carry the compressed size at 0x40
    // (a 72-byte header) [NTFS-3G attrib.c ntfs_attr_update_meta], formats.md §3.5.
    const bool compressed = at.flags & (0x0001 | 0x8000);
    const std::size_t header = compressed ? kCompressedHeader : kNonResidentHeader;
    if (a.size() < header)
        throw FormatError(0x04,
                          fmt::format("non-resident attribute of {} bytes is shorter than its {}-byte header",
                                      a.size(), header));
    at.first_vcn = Vcn{core::load_le64(a, 0x10)};
    at.last_vcn = Vcn{core::load_le64(a, 0x18)};
    at.runlist_offset = core::load_le16(a, 0x20);
    at.compression_unit = core::load_le16(a, 0x22);
    at.allocated_size = core::load_le64(a, 0x28);
    at.data_size = core::load_le64(a, 0x30);
    at.initialized_size = core::load_le64(a, 0x38);
    if (compressed) at.compressed_size = core::load_le64(a, 0x40);
    if (at.runlist_offset >= a.size())
        throw FormatError(0x20, fmt::format("runlist offset {} is outside the attribute's {} bytes",
                                            at.runlist_offset, a.size()));
    std::vector<DataRun> runs;
    try {
        // Every run takes at least 2 bytes: the attribute bounds the count.
        runs = decode_runlist(a.subspan(at.runlist_offset), a.size() / 2);
    } catch (const FormatError& e) {
        throw FormatError(at.runlist_offset + e.byte_offset().value_or(0),
                          std::string("runlist: ") + e.what());
    }
    std::uint64_t vcn = static_cast<std::uint64_t>(at.first_vcn);
    for (const DataRun& r : runs) {
        MappedRun m{Vcn{vcn}, r.length, std::nullopt};
        if (r.lcn) m.lcn = Lcn{*r.lcn};
        if (r.length > ~std::uint64_t(0) - vcn)
            throw FormatError(at.runlist_offset, fmt::format("runlist VCNs overflow after VCN {}", vcn));
        vcn += r.length;
        at.runs.push_back(m);
    }
    return at;
}

}  // namespace

std::string Attribute::display_name() const {
    std::string t(attr_type_name(type));
    if (t.empty()) t = fmt::format("0x{:X}", type);
    if (!name.empty()) t += ":" + core::utf16_to_utf8_lossy(name);
    return t;
}

const Attribute* MftRecord::find(AttrType type, std::u16string_view name) const noexcept {
    for (const Attribute& a : attributes)
        if (a.type == static_cast<std::uint32_t>(type) && a.name == name) return &a;
    return nullptr;
}

MftRecord parse_mft_record(std::span<std::byte> raw, std::uint64_t number, std::uint64_t byte_offset) {
    auto fail = [&](std::size_t rel, const std::string& what) -> Error {
        return Error(ErrorCode::corrupt,
                     fmt::format("MFT record {} (volume byte {}): {} at record offset 0x{:X}", number,
                                 byte_offset + rel, what, rel),
                     byte_offset + rel);
    };
    if (raw.size() < 0x30 || raw.size() % kFixupStride)
        throw fail(0, fmt::format("record size {} is not a positive multiple of 512", raw.size()));
    const std::string magic = core::load_string(raw.first(4));
    if (magic != "FILE") {
        std::string shown;
        for (char c : magic)
            shown += (c >= 0x20 && c < 0x7F) ? fmt::format("{}", c) : fmt::format("\\x{:02X}", c);
        throw fail(0, magic == "BAAD" ? std::string("signature \"BAAD\" (a multi-sector transfer failed)")
                                      : fmt::format("signature \"{}\" is not \"FILE\"", shown));
    }
    MftRecord rec;
    rec.number = number;
    rec.byte_offset = byte_offset;
    try {
        const auto bad = verify_and_remove_fixups(raw);
        if (bad) {
            const std::uint16_t usa = core::load_le16(raw, 4);
            const std::size_t tail = (*bad + 1) * kFixupStride - 2;
            throw fail(tail, fmt::format("fixup mismatch: stride {} ends with 0x{:04X}, the update sequence "
                                         "number is 0x{:04X}",
                                         *bad, core::load_le16(raw, tail), core::load_le16(raw, usa)));
        }
    } catch (const FormatError& e) {
        throw fail(e.byte_offset().value_or(0), e.what());
    }
    rec.fixup_strides = raw.size() / kFixupStride;
    rec.header = decode_mft_record_header(raw);
    rec.update_sequence_number = core::load_le16(raw, rec.header.usa_offset);
    const auto& h = rec.header;
    if (h.bytes_in_use > raw.size() || h.bytes_in_use < 0x30)
        throw fail(0x18, fmt::format("bytes in use {} is outside 48..{}", h.bytes_in_use, raw.size()));
    const std::size_t usa_end = std::size_t(h.usa_offset) + 2 * std::size_t(h.usa_count);
    if (h.first_attribute < usa_end || h.first_attribute % 8 || h.first_attribute >= h.bytes_in_use)
        throw fail(0x14, fmt::format("first attribute offset {} is outside {}..{} or not 8-aligned",
                                     h.first_attribute, usa_end, h.bytes_in_use));
    const std::span<const std::byte> used = std::span<const std::byte>(raw).first(h.bytes_in_use);
    std::size_t pos = h.first_attribute;
    // Every attribute is at least 24 bytes, so the walk ends after at most
    // bytes_in_use / 24 attributes.
    for (;;) {
        if (pos + 4 > used.size()) throw fail(pos, "no end marker within bytes in use");
        const std::uint32_t type = core::load_le32(used, pos);
        if (type == kEndMarker) break;
        if (pos + kResidentHeader > used.size())
            throw fail(
                pos, fmt::format("attribute header (type 0x{:X}) passes bytes in use {}", type, used.size()));
        const std::uint32_t length = core::load_le32(used, pos + 4);
        if (length < kResidentHeader || length % 8 || length > used.size() - pos)
            throw fail(pos + 4, fmt::format("attribute type 0x{:X}: length {} is below 24, not 8-aligned or "
                                            "passes bytes in use {}",
                                            type, length, used.size()));
        try {
            Attribute a = decode_attribute(used.subspan(pos, length));
            a.record = number;
            a.offset = static_cast<std::uint32_t>(pos);
            rec.attributes.push_back(std::move(a));
        } catch (const FormatError& e) {
            throw fail(pos + e.byte_offset().value_or(0),
                       fmt::format("attribute type 0x{:X} at 0x{:X}: {}", type, pos, e.what()));
        }
        pos += length;
    }
    return rec;
}

std::optional<SalvagedRecord> salvage_mft_record(std::span<const std::byte> plain, std::uint64_t number) {
    const std::size_t rs = plain.size();
    if (rs < 0x30 || rs % kFixupStride || core::load_string(plain.first(4)) != "FILE") return std::nullopt;
    const MftRecordHeader h = decode_mft_record_header(plain);
    const std::size_t usa_end = std::size_t(h.usa_offset) + 2 * std::size_t(h.usa_count);
    if (h.usa_offset < 0x28 || h.usa_offset % 2 || h.usa_count != rs / kFixupStride + 1 ||
        usa_end > kFixupStride - 2 || h.first_attribute < usa_end || h.first_attribute % 8 ||
        std::size_t(h.first_attribute) + 8 > rs)
        return std::nullopt;
    SalvagedRecord out;
    out.bytes.assign(plain.begin(), plain.begin() + h.first_attribute);
    // Attributes end 8 bytes before the record's end at the latest: the end
    // marker (4 bytes, then 4 unused) follows the last one.
    const std::size_t limit = rs - 8;
    std::size_t pos = h.first_attribute;
    while (pos < limit) {
        const std::uint32_t type = core::load_le32(plain, pos);
        if (type == kEndMarker) break;
        const std::uint32_t length = pos + kResidentHeader <= limit ? core::load_le32(plain, pos + 4) : 0;
        if (length < kResidentHeader || length % 8 || length > limit - pos) {
            out.truncated = true;
            ++out.dropped;
            break;
        }
        try {
            (void)decode_attribute(plain.subspan(pos, length));
            out.bytes.insert(out.bytes.end(), plain.begin() + static_cast<std::ptrdiff_t>(pos),
                             plain.begin() + static_cast<std::ptrdiff_t>(pos + length));
        } catch (const FormatError&) {
            ++out.dropped;
        }
        pos += length;
    }
    const std::size_t end = out.bytes.size();
    if (end + 8 > rs) return std::nullopt;
    out.bytes.resize(rs);
    core::store_le32(out.bytes, end, kEndMarker);
    core::store_le32(out.bytes, 0x18, static_cast<std::uint32_t>(end + 8));
    // The result must parse as the record it now is (fixups applied to a copy).
    std::vector<std::byte> check = out.bytes;
    try {
        apply_fixups(check, h.usa_offset, core::load_le16(check, h.usa_offset));
        (void)parse_mft_record(check, number);
    } catch (const FormatError&) {
        return std::nullopt;
    } catch (const Error& e) {
        if (e.code() != ErrorCode::corrupt) throw;
        return std::nullopt;
    }
    return out;
}

}  // namespace fsimg::ntfs
