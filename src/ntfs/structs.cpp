// NTFS records: see include/fsimg/ntfs/structs.hpp for the sources.
#include "fsimg/ntfs/structs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::ntfs {

namespace {

std::uint64_t align8(std::uint64_t v) { return (v + 7) & ~std::uint64_t(7); }

void put16(std::vector<std::byte>& v, std::size_t at, std::uint16_t x) { core::store_le16(v, at, x); }
void put32(std::vector<std::byte>& v, std::size_t at, std::uint32_t x) { core::store_le32(v, at, x); }
void put64(std::vector<std::byte>& v, std::size_t at, std::uint64_t x) { core::store_le64(v, at, x); }

void put_name(std::vector<std::byte>& v, std::size_t at, std::u16string_view name) {
    for (std::size_t i = 0; i < name.size(); ++i) put16(v, at + 2 * i, static_cast<std::uint16_t>(name[i]));
}

// Halt loop: cli; hlt; jmp $-1. The volume is not bootable; a BIOS that
// boots it stops instead of running zeros.
constexpr std::array<std::uint8_t, 4> kHaltLoop{0xFA, 0xF4, 0xEB, 0xFD};

}  // namespace

BootSector decode_boot_sector(std::span<const std::byte, kBootSectorSize> s) {
    BootSector b;
    b.bytes_per_sector = core::le16<off::BytesPerSector>(s);
    b.sectors_per_cluster_raw = core::le8<off::SectorsPerCluster>(s);
    b.media_descriptor = core::le8<off::MediaDescriptor>(s);
    b.sectors_per_track = core::le16<off::SectorsPerTrack>(s);
    b.number_of_heads = core::le16<off::NumberOfHeads>(s);
    b.hidden_sectors = core::le32<off::HiddenSectors>(s);
    b.total_sectors = core::le64<off::TotalSectors>(s);
    b.mft_lcn = core::le64<off::MftLcn>(s);
    b.mftmirr_lcn = core::le64<off::MftMirrLcn>(s);
    b.clusters_per_mft_record = static_cast<std::int8_t>(core::le8<off::ClustersPerMftRecord>(s));
    b.clusters_per_index_block = static_cast<std::int8_t>(core::le8<off::ClustersPerIndexBlock>(s));
    b.volume_serial_number = core::le64<off::VolumeSerialNumber>(s);
    return b;
}

void encode_boot_sector(const BootSector& b, std::span<std::byte, kBootSectorSize> s) {
    std::fill(s.begin(), s.end(), std::byte{0});
    s[0] = std::byte{0xEB};
    s[1] = std::byte{0x52};
    s[2] = std::byte{0x90};
    core::store_padded(s.subspan(off::OemId, 8), "NTFS");
    core::store16<off::BytesPerSector>(s, b.bytes_per_sector);
    core::store8<off::SectorsPerCluster>(s, b.sectors_per_cluster_raw);
    core::store8<off::MediaDescriptor>(s, b.media_descriptor);
    core::store16<off::SectorsPerTrack>(s, b.sectors_per_track);
    core::store16<off::NumberOfHeads>(s, b.number_of_heads);
    core::store32<off::HiddenSectors>(s, b.hidden_sectors);
    core::store32<off::DriveSignature>(s, 0x00800080);
    core::store64<off::TotalSectors>(s, b.total_sectors);
    core::store64<off::MftLcn>(s, b.mft_lcn);
    core::store64<off::MftMirrLcn>(s, b.mftmirr_lcn);
    core::store8<off::ClustersPerMftRecord>(s, static_cast<std::uint8_t>(b.clusters_per_mft_record));
    core::store8<off::ClustersPerIndexBlock>(s, static_cast<std::uint8_t>(b.clusters_per_index_block));
    core::store64<off::VolumeSerialNumber>(s, b.volume_serial_number);
    for (std::size_t i = 0; i < kHaltLoop.size(); ++i) s[off::BootCode + i] = std::byte{kHaltLoop[i]};
    s[off::Signature] = std::byte{0x55};
    s[off::Signature + 1] = std::byte{0xAA};
}

std::optional<std::uint8_t> encode_sectors_per_cluster(std::uint32_t cluster_bytes,
                                                       std::uint32_t bytes_per_sector) noexcept {
    if (bytes_per_sector == 0 || cluster_bytes < bytes_per_sector || cluster_bytes % bytes_per_sector)
        return {};
    const std::uint32_t count = cluster_bytes / bytes_per_sector;
    if (!core::is_power_of_two(count) || count > 4096) return {};
    if (count <= 128) return static_cast<std::uint8_t>(count);
    return static_cast<std::uint8_t>(256 - core::log2_floor(count));
}

std::optional<std::uint32_t> decode_cluster_bytes(std::uint8_t raw, std::uint32_t bytes_per_sector) noexcept {
    std::uint64_t count = 0;
    if (raw >= 1 && raw <= 128) {
        count = raw;
    } else if (raw >= 0xF4) {
        count = std::uint64_t(1) << (256 - raw);  // 2^1 .. 2^12
    } else {
        return {};
    }
    const std::uint64_t bytes = count * bytes_per_sector;
    if (bytes == 0 || bytes > 0xFFFFFFFFu) return {};
    return static_cast<std::uint32_t>(bytes);
}

std::int8_t encode_record_size(std::uint32_t record_bytes, std::uint32_t cluster_bytes) noexcept {
    if (record_bytes >= cluster_bytes) return static_cast<std::int8_t>(record_bytes / cluster_bytes);
    return static_cast<std::int8_t>(-static_cast<int>(core::log2_floor(record_bytes)));
}

std::optional<std::uint32_t> decode_record_size(std::int8_t raw, std::uint32_t cluster_bytes) noexcept {
    if (raw > 0) {
        const std::uint64_t v = std::uint64_t(raw) * cluster_bytes;
        if (v > 0xFFFFFFFFu) return {};
        return static_cast<std::uint32_t>(v);
    }
    if (raw == 0 || raw < -31) return {};
    return std::uint32_t(1) << (-raw);
}

// ---- fixups

void apply_fixups(std::span<std::byte> record, std::uint16_t usa_offset, std::uint16_t usn) {
    if (record.empty() || record.size() % kFixupStride)
        throw FormatError(0, "record size is not a multiple of 512");
    const std::size_t strides = record.size() / kFixupStride;
    if (std::size_t(usa_offset) + 2 + 2 * strides > kFixupStride - 2)
        throw FormatError(usa_offset, "update sequence array does not fit the first stride");
    core::store_le16(record, usa_offset, usn);
    for (std::size_t i = 0; i < strides; ++i) {
        const std::size_t tail = (i + 1) * kFixupStride - 2;
        core::store_le16(record, usa_offset + 2 + 2 * i, core::load_le16(record, tail));
        core::store_le16(record, tail, usn);
    }
}

std::optional<std::size_t> verify_and_remove_fixups(std::span<std::byte> record) {
    const std::uint16_t usa_offset = core::load_le16(record, 4);
    const std::uint16_t usa_count = core::load_le16(record, 6);
    if (record.empty() || record.size() % kFixupStride)
        throw FormatError(0, "record size " + std::to_string(record.size()) + " is not a multiple of 512");
    const std::size_t strides = record.size() / kFixupStride;
    if (usa_count != strides + 1)
        throw FormatError(6, "update sequence array count " + std::to_string(usa_count) + ", expected " +
                                 std::to_string(strides + 1));
    if (usa_offset < 8 || usa_offset % 2 ||
        std::size_t(usa_offset) + 2 * std::size_t(usa_count) > kFixupStride - 2)
        throw FormatError(4,
                          "update sequence array offset " + std::to_string(usa_offset) + " is out of range");
    const std::uint16_t usn = core::load_le16(record, usa_offset);
    for (std::size_t i = 0; i < strides; ++i) {
        if (core::load_le16(record, (i + 1) * kFixupStride - 2) != usn) return i;
    }
    for (std::size_t i = 0; i < strides; ++i)
        core::store_le16(record, (i + 1) * kFixupStride - 2, core::load_le16(record, usa_offset + 2 + 2 * i));
    return std::nullopt;
}

// ---- runlists

namespace {
unsigned signed_width(std::int64_t v) {
    for (unsigned n = 1; n < 8; ++n) {
        const std::int64_t lo = -(std::int64_t(1) << (8 * n - 1));
        const std::int64_t hi = (std::int64_t(1) << (8 * n - 1)) - 1;
        if (v >= lo && v <= hi) return n;
    }
    return 8;
}
}  // namespace

std::vector<std::byte> encode_runlist(std::span<const DataRun> runs) {
    std::vector<std::byte> out;
    std::int64_t previous = 0;
    for (const DataRun& r : runs) {
        if (r.length == 0 || r.length >> 63) throw Error(ErrorCode::usage, "data run length out of range");
        // Lengths are read as signed by ntfs-3g: keep the top bit clear.
        const unsigned lw = signed_width(static_cast<std::int64_t>(r.length));
        unsigned ow = 0;
        std::int64_t delta = 0;
        if (r.lcn) {
            if (*r.lcn >> 63) throw Error(ErrorCode::usage, "data run LCN out of range");
            delta = static_cast<std::int64_t>(*r.lcn) - previous;
            ow = signed_width(delta);
            previous = static_cast<std::int64_t>(*r.lcn);
        }
        out.push_back(static_cast<std::byte>(lw | (ow << 4)));
        for (unsigned i = 0; i < lw; ++i) out.push_back(static_cast<std::byte>((r.length >> (8 * i)) & 0xFF));
        const auto udelta = static_cast<std::uint64_t>(delta);
        for (unsigned i = 0; i < ow; ++i) out.push_back(static_cast<std::byte>((udelta >> (8 * i)) & 0xFF));
    }
    out.push_back(std::byte{0});
    return out;
}

std::vector<DataRun> decode_runlist(std::span<const std::byte> bytes, std::size_t max_runs) {
    std::vector<DataRun> runs;
    std::size_t pos = 0;
    std::int64_t lcn = 0;
    for (;;) {
        if (pos >= bytes.size()) throw FormatError(pos, "runlist has no terminator");
        const auto header = static_cast<std::uint8_t>(bytes[pos]);
        if (header == 0) break;
        if (runs.size() >= max_runs) throw FormatError(pos, "runlist has more runs than allowed");
        const unsigned lw = header & 0x0F, ow = header >> 4;
        if (lw == 0 || lw > 8 || ow > 8) throw FormatError(pos, "data run header has a bad field width");
        if (pos + 1 + lw + ow > bytes.size())
            throw FormatError(pos, "data run passes the end of the runlist");
        std::uint64_t length = 0;
        for (unsigned i = 0; i < lw; ++i)
            length |= std::uint64_t(static_cast<std::uint8_t>(bytes[pos + 1 + i])) << (8 * i);
        if (length == 0 || length >> 63) throw FormatError(pos, "data run length is zero or too large");
        DataRun r{length, std::nullopt};
        if (ow) {
            std::uint64_t raw = 0;
            for (unsigned i = 0; i < ow; ++i)
                raw |= std::uint64_t(static_cast<std::uint8_t>(bytes[pos + 1 + lw + i])) << (8 * i);
            if (ow < 8 && (raw >> (8 * ow - 1)) & 1) raw |= ~std::uint64_t(0) << (8 * ow);  // sign-extend
            const auto delta = static_cast<std::int64_t>(raw);
            if ((delta > 0 && lcn > INT64_MAX - delta) || (delta < 0 && lcn + delta < 0))
                throw FormatError(pos, "data run LCN is negative or overflows");
            lcn += delta;
            r.lcn = static_cast<std::uint64_t>(lcn);
        }
        runs.push_back(r);
        pos += 1 + lw + ow;
    }
    return runs;
}

// ---- attributes

std::vector<std::byte> build_resident_attribute(AttrType type, std::u16string_view name,
                                                std::span<const std::byte> value, bool indexed) {
    const std::size_t name_off = 0x18;
    const std::size_t value_off = align8(name_off + 2 * name.size());
    const std::size_t length = align8(value_off + value.size());
    std::vector<std::byte> a(length);
    put32(a, 0x00, static_cast<std::uint32_t>(type));
    put32(a, 0x04, static_cast<std::uint32_t>(length));
    a[0x08] = std::byte{0};
    a[0x09] = static_cast<std::byte>(name.size());
    put16(a, 0x0A, static_cast<std::uint16_t>(name_off));
    put32(a, 0x10, static_cast<std::uint32_t>(value.size()));
    put16(a, 0x14, static_cast<std::uint16_t>(value_off));
    a[0x16] = std::byte{indexed ? std::uint8_t(1) : std::uint8_t(0)};
    put_name(a, name_off, name);
    std::copy(value.begin(), value.end(), a.begin() + static_cast<std::ptrdiff_t>(value_off));
    return a;
}

std::vector<std::byte> build_nonresident_attribute(AttrType type, std::u16string_view name,
                                                   std::span<const DataRun> runs,
                                                   const NonResidentSizes& sizes, std::uint64_t last_vcn,
                                                   std::optional<std::uint64_t> sparse_compressed_size) {
    const bool sparse = sparse_compressed_size.has_value();
    const std::vector<std::byte> mp = encode_runlist(runs);
    const std::size_t name_off = sparse ? 0x48 : 0x40;  // + the compressed size (formats.md §3.5)
    const std::size_t runs_off = align8(name_off + 2 * name.size());
    const std::size_t length = align8(runs_off + mp.size());
    std::vector<std::byte> a(length);
    put32(a, 0x00, static_cast<std::uint32_t>(type));
    put32(a, 0x04, static_cast<std::uint32_t>(length));
    a[0x08] = std::byte{1};
    a[0x09] = static_cast<std::byte>(name.size());
    put16(a, 0x0A, static_cast<std::uint16_t>(name_off));
    if (sparse) put16(a, 0x0C, attr_flag::sparse);
    put64(a, 0x10, 0);         // starting VCN
    put64(a, 0x18, last_vcn);  // last VCN
    put16(a, 0x20, static_cast<std::uint16_t>(runs_off));
    put16(a, 0x22, sparse ? 4 : 0);  // compression unit: 2^4 clusters when sparse [NTFS-3G attrib.c]
    if (sparse) put64(a, 0x40, *sparse_compressed_size);
    put64(a, 0x28, sizes.allocated);
    put64(a, 0x30, sizes.data);
    put64(a, 0x38, sizes.initialized);
    put_name(a, name_off, name);
    std::copy(mp.begin(), mp.end(), a.begin() + static_cast<std::ptrdiff_t>(runs_off));
    return a;
}

namespace {
constexpr std::int64_t kEpochDelta = 11644473600;    // seconds 1601-01-01 .. 1970-01-01 [FLATCAP glossary]
constexpr std::uint64_t kTicksPerSecond = 10000000;  // 100 ns
}  // namespace

std::uint64_t filetime_from_unix(std::int64_t unix_seconds, std::uint32_t nanoseconds) noexcept {
    const std::int64_t s = std::max<std::int64_t>(unix_seconds, -kEpochDelta);
    return static_cast<std::uint64_t>(s + kEpochDelta) * kTicksPerSecond + nanoseconds / 100;
}

core::CivilTime civil_from_filetime(std::uint64_t filetime) noexcept {
    const auto secs = static_cast<std::int64_t>(filetime / kTicksPerSecond) - kEpochDelta;
    return core::civil_from_unix(secs, static_cast<std::uint32_t>(filetime % kTicksPerSecond) * 100);
}

std::string filetime_text(std::uint64_t filetime) {
    const core::CivilTime c = civil_from_filetime(filetime);
    return fmt::format("{}.{:07}", core::format_civil(c), c.nanosecond / 100);
}

std::array<std::byte, kStandardInformationSize> encode_standard_information(const StandardInformation& si) {
    std::array<std::byte, kStandardInformationSize> v{};
    std::span<std::byte, kStandardInformationSize> s(v);
    core::store64<0x00>(s, si.creation_time);
    core::store64<0x08>(s, si.modification_time);
    core::store64<0x10>(s, si.mft_change_time);
    core::store64<0x18>(s, si.access_time);
    core::store32<0x20>(s, si.file_attributes);
    // 0x24 maximum versions, 0x28 version, 0x2C class id: 0
    core::store32<0x30>(s, si.owner_id);
    core::store32<0x34>(s, si.security_id);
    core::store64<0x38>(s, si.quota_charged);
    core::store64<0x40>(s, si.usn);
    return v;
}

std::vector<std::byte> encode_file_name(const FileName& fn) {
    if (fn.name.empty() || fn.name.size() > 255)
        throw Error(ErrorCode::usage,
                    "NTFS names are 1..255 UTF-16 units, not " + std::to_string(fn.name.size()));
    std::vector<std::byte> v(0x42 + 2 * fn.name.size());
    put64(v, 0x00, fn.parent.packed());
    put64(v, 0x08, fn.creation_time);
    put64(v, 0x10, fn.modification_time);
    put64(v, 0x18, fn.mft_change_time);
    put64(v, 0x20, fn.access_time);
    put64(v, 0x28, fn.allocated_size);
    put64(v, 0x30, fn.data_size);
    put32(v, 0x38, fn.file_attributes);
    put32(v, 0x3C, fn.reparse_or_ea);
    v[0x40] = static_cast<std::byte>(fn.name.size());
    v[0x41] = static_cast<std::byte>(fn.name_space);
    put_name(v, 0x42, fn.name);
    return v;
}

// ---- MFT records

std::uint16_t first_attribute_offset(std::uint32_t record_bytes) noexcept {
    const std::uint32_t usa_count = 1 + record_bytes / kFixupStride;
    return static_cast<std::uint16_t>(align8(0x30 + 2 * usa_count));
}

MftRecordBuilder::MftRecordBuilder(std::uint32_t record_bytes, std::uint32_t record_number,
                                   std::uint16_t sequence, std::uint16_t flags)
    : record_bytes_(record_bytes), record_number_(record_number), sequence_(sequence), flags_(flags) {}

std::uint32_t MftRecordBuilder::bytes_in_use() const noexcept {
    return first_attribute_offset(record_bytes_) + static_cast<std::uint32_t>(attributes_.size()) + 8;
}

void MftRecordBuilder::add(std::vector<std::byte> attribute) {
    if (bytes_in_use() + attribute.size() > record_bytes_)
        throw Error(ErrorCode::unsupported, "MFT record " + std::to_string(record_number_) + " overflows");
    put16(attribute, 0x0E, next_instance_++);
    attributes_.insert(attributes_.end(), attribute.begin(), attribute.end());
}

std::vector<std::byte> MftRecordBuilder::finish() const {
    std::vector<std::byte> r(record_bytes_);
    const std::uint16_t first = first_attribute_offset(record_bytes_);
    r[0] = std::byte{'F'};
    r[1] = std::byte{'I'};
    r[2] = std::byte{'L'};
    r[3] = std::byte{'E'};
    put16(r, 0x04, 0x30);
    put16(r, 0x06, static_cast<std::uint16_t>(1 + record_bytes_ / kFixupStride));
    put64(r, 0x08, 0);  // $LogFile sequence number
    put16(r, 0x10, sequence_);
    put16(r, 0x12, link_count_);
    put16(r, 0x14, first);
    put16(r, 0x16, flags_);
    put32(r, 0x18, bytes_in_use());
    put32(r, 0x1C, record_bytes_);
    put64(r, 0x20, base_record_);  // 0, or the base of an extension record
    put16(r, 0x28, next_instance_);
    put32(r, 0x2C, record_number_);
    std::copy(attributes_.begin(), attributes_.end(), r.begin() + first);
    const std::size_t end = first + attributes_.size();
    put32(r, end, 0xFFFFFFFF);
    apply_fixups(r, 0x30, 1);
    return r;
}

MftRecordHeader decode_mft_record_header(std::span<const std::byte> record) {
    core::ByteReader rd(record);
    MftRecordHeader h;
    for (char& c : h.magic) c = static_cast<char>(rd.u8("record magic"));
    h.usa_offset = rd.u16("USA offset");
    h.usa_count = rd.u16("USA count");
    h.lsn = rd.u64("LSN");
    h.sequence = rd.u16("sequence number");
    h.link_count = rd.u16("link count");
    h.first_attribute = rd.u16("first attribute offset");
    h.flags = rd.u16("flags");
    h.bytes_in_use = rd.u32("bytes in use");
    h.bytes_allocated = rd.u32("bytes allocated");
    h.base_record = rd.u64("base record");
    h.next_instance = rd.u16("next attribute instance");
    rd.skip(2, "padding");
    h.record_number = rd.u32("record number");
    return h;
}

// ---- indexes

std::uint64_t upcase_info_crc64(std::span<const std::uint16_t> table) noexcept {
    constexpr std::uint64_t kPoly = 0x9A6C9329AC4BC9B5ull;
    static const auto kCrcTable = [] {
        std::array<std::uint64_t, 256> t{};
        for (std::uint64_t i = 0; i < 256; ++i) {
            std::uint64_t c = i;
            for (int j = 0; j < 8; ++j) c = (c & 1) ? kPoly ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint64_t crc = 0;
    for (std::uint16_t unit : table) {
        crc = ~crc;
        for (std::uint8_t byte :
             {static_cast<std::uint8_t>(unit & 0xFF), static_cast<std::uint8_t>(unit >> 8)})
            crc = kCrcTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
        crc = ~crc;
    }
    return crc;
}

int collate_file_names(std::u16string_view a, std::u16string_view b) noexcept {
    const auto up = upcase_table();
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t ca = up[static_cast<std::uint16_t>(a[i])];
        const std::uint16_t cb = up[static_cast<std::uint16_t>(b[i])];
        if (ca != cb) return ca < cb ? -1 : 1;
    }
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    return 0;
}

std::vector<std::byte> build_file_name_index_entry(FileReference ref, std::span<const std::byte> key) {
    const std::size_t length = align8(16 + key.size());
    std::vector<std::byte> e(length);
    put64(e, 0x00, ref.packed());
    put16(e, 0x08, static_cast<std::uint16_t>(length));
    put16(e, 0x0A, static_cast<std::uint16_t>(key.size()));
    std::copy(key.begin(), key.end(), e.begin() + 16);
    return e;
}

std::vector<std::byte> build_view_index_entry(std::span<const std::byte> key,
                                              std::span<const std::byte> data) {
    const std::size_t data_off = 16 + key.size();
    const std::size_t length = align8(data_off + data.size());
    std::vector<std::byte> e(length);
    put16(e, 0x00, static_cast<std::uint16_t>(data_off));
    put16(e, 0x02, static_cast<std::uint16_t>(data.size()));
    put16(e, 0x08, static_cast<std::uint16_t>(length));
    put16(e, 0x0A, static_cast<std::uint16_t>(key.size()));
    std::copy(key.begin(), key.end(), e.begin() + 16);
    std::copy(data.begin(), data.end(), e.begin() + static_cast<std::ptrdiff_t>(data_off));
    return e;
}

std::vector<std::byte> index_entry_with_sub_node(std::vector<std::byte> entry, std::uint64_t vcn) {
    entry.resize(entry.size() + 8);
    put16(entry, 0x08, static_cast<std::uint16_t>(entry.size()));
    put16(entry, 0x0C, static_cast<std::uint16_t>(core::load_le16(entry, 0x0C) | 0x01));
    put64(entry, entry.size() - 8, vcn);
    return entry;
}

std::vector<std::byte> build_end_index_entry(std::optional<std::uint64_t> child_vcn) {
    std::vector<std::byte> e(child_vcn ? 24 : 16);
    put16(e, 0x08, static_cast<std::uint16_t>(e.size()));
    put16(e, 0x0C, child_vcn ? 0x03 : 0x02);
    if (child_vcn) put64(e, 16, *child_vcn);
    return e;
}

std::vector<std::byte> build_index_root(std::uint32_t indexed_type, std::uint32_t collation_rule,
                                        std::uint32_t index_block_bytes, std::uint32_t cluster_bytes,
                                        std::span<const std::byte> entries, bool large) {
    std::vector<std::byte> v(32 + entries.size());
    put32(v, 0x00, indexed_type);
    put32(v, 0x04, collation_rule);
    put32(v, 0x08, index_block_bytes);
    // Clusters per index block; in 512-byte units when the block is smaller
    // than a cluster (formats.md §3.8).
    const std::uint32_t per =
        index_block_bytes >= cluster_bytes ? index_block_bytes / cluster_bytes : index_block_bytes / 512;
    v[0x0C] = static_cast<std::byte>(per);
    put32(v, 0x10, 0x10);                                               // entries offset (from node header)
    put32(v, 0x14, static_cast<std::uint32_t>(0x10 + entries.size()));  // index length
    put32(v, 0x18, static_cast<std::uint32_t>(0x10 + entries.size()));  // allocated
    v[0x1C] = std::byte{large ? std::uint8_t(1) : std::uint8_t(0)};
    std::copy(entries.begin(), entries.end(), v.begin() + 32);
    return v;
}

std::vector<std::byte> build_index_block(std::uint64_t vcn, std::uint32_t index_block_bytes,
                                         std::span<const std::byte> entries) {
    std::vector<std::byte> b(index_block_bytes);
    const std::uint32_t usa_count = 1 + index_block_bytes / kFixupStride;
    const std::uint32_t node = 0x18;
    const std::uint32_t first = static_cast<std::uint32_t>(align8(0x28 + 2 * usa_count));
    if (first + entries.size() > index_block_bytes)
        throw Error(ErrorCode::unsupported, "index entries do not fit one index block");
    b[0] = std::byte{'I'};
    b[1] = std::byte{'N'};
    b[2] = std::byte{'D'};
    b[3] = std::byte{'X'};
    put16(b, 0x04, 0x28);
    put16(b, 0x06, static_cast<std::uint16_t>(usa_count));
    put64(b, 0x10, vcn);
    put32(b, node + 0x00, first - node);
    put32(b, node + 0x04, static_cast<std::uint32_t>(first - node + entries.size()));
    put32(b, node + 0x08, index_block_bytes - node);
    put32(b, node + 0x0C, 0);  // leaf
    std::copy(entries.begin(), entries.end(), b.begin() + first);
    apply_fixups(b, 0x28, 1);
    return b;
}

std::vector<std::byte> encode_attribute_list(std::span<const AttributeListEntry> entries) {
    std::vector<std::byte> out;
    for (const AttributeListEntry& e : entries) {
        if (e.name.size() > 255)
            throw Error(ErrorCode::usage, "encode_attribute_list: a name above 255 units");
        const std::size_t at = out.size();
        const std::size_t length = (26 + 2 * e.name.size() + 7) & ~std::size_t{7};
        out.resize(at + length);
        const std::span<std::byte> v(out.data() + at, length);
        core::store_le32(v, 0x00, e.type);
        core::store_le16(v, 0x04, static_cast<std::uint16_t>(length));
        v[0x06] = static_cast<std::byte>(e.name.size());
        v[0x07] = std::byte{0x1A};
        core::store_le64(v, 0x08, e.starting_vcn);
        core::store_le64(v, 0x10, e.record.packed());
        core::store_le16(v, 0x18, e.instance);
        for (std::size_t k = 0; k < e.name.size(); ++k) core::store_le16(v, 0x1A + 2 * k, e.name[k]);
    }
    return out;
}

}  // namespace fsimg::ntfs
