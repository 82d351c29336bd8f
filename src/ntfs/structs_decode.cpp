// Decoders of NTFS attribute values: see include/fsimg/ntfs/structs.hpp.
#include <string>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

std::string_view attr_type_name(std::uint32_t type) noexcept {
    switch (type) {
        case 0x10:
            return "$STANDARD_INFORMATION";
        case 0x20:
            return "$ATTRIBUTE_LIST";
        case 0x30:
            return "$FILE_NAME";
        case 0x40:
            return "$OBJECT_ID";
        case 0x50:
            return "$SECURITY_DESCRIPTOR";
        case 0x60:
            return "$VOLUME_NAME";
        case 0x70:
            return "$VOLUME_INFORMATION";
        case 0x80:
            return "$DATA";
        case 0x90:
            return "$INDEX_ROOT";
        case 0xA0:
            return "$INDEX_ALLOCATION";
        case 0xB0:
            return "$BITMAP";
        case 0xC0:
            return "$REPARSE_POINT";
        case 0xD0:
            return "$EA_INFORMATION";
        case 0xE0:
            return "$EA";
        case 0x100:
            return "$LOGGED_UTILITY_STREAM";
        default:
            return "";
    }
}

StandardInformation decode_standard_information(std::span<const std::byte> v) {
    if (v.size() < 48)
        throw FormatError(
            0, "$STANDARD_INFORMATION has " + std::to_string(v.size()) + " bytes, at least 48 needed");
    StandardInformation si;
    si.creation_time = core::load_le64(v, 0x00);
    si.modification_time = core::load_le64(v, 0x08);
    si.mft_change_time = core::load_le64(v, 0x10);
    si.access_time = core::load_le64(v, 0x18);
    si.file_attributes = core::load_le32(v, 0x20);
    if (v.size() >= kStandardInformationSize) {
        si.owner_id = core::load_le32(v, 0x30);
        si.security_id = core::load_le32(v, 0x34);
        si.quota_charged = core::load_le64(v, 0x38);
        si.usn = core::load_le64(v, 0x40);
    }
    return si;
}

std::u16string decode_utf16(std::span<const std::byte> bytes) {
    std::u16string s(bytes.size() / 2, u'\0');
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char16_t>(core::load_le16(bytes, 2 * i));
    return s;
}

FileName decode_file_name(std::span<const std::byte> v) {
    if (v.size() < 0x42)
        throw FormatError(0, "$FILE_NAME has " + std::to_string(v.size()) + " bytes, at least 66 needed");
    FileName fn;
    fn.parent = FileReference::unpack(core::load_le64(v, 0x00));
    fn.creation_time = core::load_le64(v, 0x08);
    fn.modification_time = core::load_le64(v, 0x10);
    fn.mft_change_time = core::load_le64(v, 0x18);
    fn.access_time = core::load_le64(v, 0x20);
    fn.allocated_size = core::load_le64(v, 0x28);
    fn.data_size = core::load_le64(v, 0x30);
    fn.file_attributes = core::load_le32(v, 0x38);
    fn.reparse_or_ea = core::load_le32(v, 0x3C);
    const std::size_t units = static_cast<std::uint8_t>(v[0x40]);
    fn.name_space = static_cast<Namespace>(static_cast<std::uint8_t>(v[0x41]));
    if (0x42 + 2 * units > v.size())
        throw FormatError(0x40, "$FILE_NAME name of " + std::to_string(units) + " units passes the value's " +
                                    std::to_string(v.size()) + " bytes");
    fn.name = decode_utf16(v.subspan(0x42, 2 * units));
    return fn;
}

VolumeInformation decode_volume_information(std::span<const std::byte> v) {
    if (v.size() < 12)
        throw FormatError(0, "$VOLUME_INFORMATION has " + std::to_string(v.size()) + " bytes, 12 needed");
    return {static_cast<std::uint8_t>(v[8]), static_cast<std::uint8_t>(v[9]), core::load_le16(v, 10)};
}

std::vector<IndexEntry> decode_index_entries(std::span<const std::byte> node, bool file_names) {
    const std::uint32_t first = core::load_le32(node, 0x00);
    const std::uint32_t used = core::load_le32(node, 0x04);
    if (used > node.size())
        throw FormatError(4, "index length " + std::to_string(used) + " passes the node's " +
                                 std::to_string(node.size()) + " bytes");
    if (first < 16 || first % 8 || first > used)
        throw FormatError(
            0, "first index entry at " + std::to_string(first) + " is outside 16.." + std::to_string(used));
    std::vector<IndexEntry> out;
    std::size_t pos = first;
    // Each entry is at least 16 bytes and the offset only grows: the loop
    // ends within node.size() / 16 steps.
    for (;;) {
        if (pos + 16 > used) throw FormatError(pos, "index node ends without a last entry");
        IndexEntry e;
        e.offset = static_cast<std::uint32_t>(pos);
        e.reference = core::load_le64(node, pos);
        e.length = core::load_le16(node, pos + 8);
        e.key_length = core::load_le16(node, pos + 10);
        e.flags = core::load_le16(node, pos + 12);
        if (e.length < 16 || e.length % 8 || pos + e.length > used)
            throw FormatError(pos, "index entry length " + std::to_string(e.length) + " at offset " +
                                       std::to_string(pos) + " is below 16, not 8-aligned or passes " +
                                       std::to_string(used));
        const std::size_t tail = (e.flags & 0x01) ? 8 : 0;
        if (e.length < 16 + tail || std::size_t(e.key_length) > e.length - 16 - tail)
            throw FormatError(pos + 10, "index entry key of " + std::to_string(e.key_length) +
                                            " bytes passes its entry of " + std::to_string(e.length));
        const auto key = node.subspan(pos + 16, e.key_length);
        e.key.assign(key.begin(), key.end());
        if (tail) e.child_vcn = core::load_le64(node, pos + e.length - 8);
        if (file_names && !e.last()) e.file_name = decode_file_name(key);
        out.push_back(std::move(e));
        if (out.back().last()) break;
        pos += out.back().length;
    }
    return out;
}

IndexRoot decode_index_root(std::span<const std::byte> v) {
    if (v.size() < 32)
        throw FormatError(0, "$INDEX_ROOT has " + std::to_string(v.size()) + " bytes, at least 32 needed");
    IndexRoot r;
    r.indexed_type = core::load_le32(v, 0x00);
    r.collation_rule = core::load_le32(v, 0x04);
    r.index_block_bytes = core::load_le32(v, 0x08);
    r.clusters_per_block = static_cast<std::uint8_t>(v[0x0C]);
    r.entries_offset = core::load_le32(v, 0x10);
    r.index_length = core::load_le32(v, 0x14);
    r.allocated_length = core::load_le32(v, 0x18);
    r.node_flags = static_cast<std::uint8_t>(v[0x1C]);
    try {
        r.entries = decode_index_entries(v.subspan(0x10), r.indexed_type == 0x30);
    } catch (const FormatError& e) {
        throw FormatError(0x10 + e.byte_offset().value_or(0), e.what());
    }
    return r;
}

IndexBlock decode_index_block(std::span<std::byte> raw, bool file_names) {
    if (raw.size() < 0x28 || core::load_string(raw.first(4)) != "INDX")
        throw FormatError(0, "index block signature is not \"INDX\"");
    const auto bad = verify_and_remove_fixups(raw);
    if (bad) {
        const std::size_t tail = (*bad + 1) * kFixupStride - 2;
        throw FormatError(tail, "index block fixup mismatch: stride " + std::to_string(*bad) +
                                    " does not end with the update sequence number");
    }
    IndexBlock b;
    b.lsn = core::load_le64(raw, 0x08);
    b.vcn = core::load_le64(raw, 0x10);
    const auto node = std::span<const std::byte>(raw).subspan(0x18);
    b.entries_offset = core::load_le32(node, 0x00);
    b.index_length = core::load_le32(node, 0x04);
    b.allocated_length = core::load_le32(node, 0x08);
    b.node_flags = static_cast<std::uint8_t>(node[0x0C]);
    try {
        b.entries = decode_index_entries(node, file_names);
    } catch (const FormatError& e) {
        throw FormatError(0x18 + e.byte_offset().value_or(0), e.what());
    }
    return b;
}

std::vector<AttributeListEntry> decode_attribute_list(std::span<const std::byte> v) {
    std::vector<AttributeListEntry> out;
    std::size_t pos = 0;
    while (pos < v.size()) {
        if (v.size() - pos < 26) throw FormatError(pos, "attribute list entry shorter than 26 bytes");
        AttributeListEntry e;
        e.type = core::load_le32(v, pos);
        e.length = core::load_le16(v, pos + 4);
        const std::size_t name_units = static_cast<std::uint8_t>(v[pos + 6]);
        const std::size_t name_off = static_cast<std::uint8_t>(v[pos + 7]);
        if (e.length < 26 || e.length % 8 || pos + e.length > v.size())
            throw FormatError(pos + 4, "attribute list entry length " + std::to_string(e.length) +
                                           " is below 26, not 8-aligned or passes the list");
        if (name_units && (name_off < 26 || name_off + 2 * name_units > e.length))
            throw FormatError(pos + 7, "attribute list entry name passes its entry");
        e.starting_vcn = core::load_le64(v, pos + 8);
        e.record = FileReference::unpack(core::load_le64(v, pos + 16));
        e.instance = core::load_le16(v, pos + 24);
        e.name = decode_utf16(v.subspan(pos + name_off, 2 * name_units));
        out.push_back(std::move(e));
        pos += out.back().length;  // >= 26: the loop ends
    }
    return out;
}

}  // namespace fsimg::ntfs
