#include "fsimg/io/partition.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"

namespace fsimg::io {

namespace {

namespace mbr {  // formats.md §4.1
inline constexpr std::size_t kSize = 512;
inline constexpr std::size_t DiskSignature = 440;  // u32
inline constexpr std::size_t Entries = 446;        // 4 x 16 bytes
inline constexpr std::size_t Signature = 510;      // 55 AA
inline constexpr std::size_t kEntrySize = 16;
namespace entry {
inline constexpr std::size_t Status = 0;    // u8, 0x80 active
inline constexpr std::size_t ChsFirst = 1;  // 3 bytes
inline constexpr std::size_t Type = 4;      // u8
inline constexpr std::size_t ChsLast = 5;   // 3 bytes
inline constexpr std::size_t LbaFirst = 8;  // u32
inline constexpr std::size_t Sectors = 12;  // u32
}  // namespace entry
static_assert(Entries + 4 * kEntrySize == Signature);
static_assert(Signature + 2 == kSize);
static_assert(entry::Sectors + 4 == kEntrySize);
}  // namespace mbr

namespace gpt {  // UEFI 2.x §5.3, formats.md §4.2
inline constexpr std::size_t kHeaderSize = 92;
inline constexpr std::size_t Signature = 0;         // "EFI PART"
inline constexpr std::size_t Revision = 8;          // u32 0x00010000
inline constexpr std::size_t HeaderSize = 12;       // u32
inline constexpr std::size_t HeaderCrc32 = 16;      // u32
inline constexpr std::size_t Reserved = 20;         // u32
inline constexpr std::size_t MyLba = 24;            // u64
inline constexpr std::size_t AlternateLba = 32;     // u64
inline constexpr std::size_t FirstUsableLba = 40;   // u64
inline constexpr std::size_t LastUsableLba = 48;    // u64
inline constexpr std::size_t DiskGuid = 56;         // 16 bytes
inline constexpr std::size_t EntryLba = 72;         // u64
inline constexpr std::size_t EntryCount = 80;       // u32
inline constexpr std::size_t EntrySize = 84;        // u32
inline constexpr std::size_t EntryArrayCrc32 = 88;  // u32
static_assert(EntryArrayCrc32 + 4 == kHeaderSize);

inline constexpr std::size_t kEntrySize = 128;
inline constexpr std::uint32_t kEntryCount = 128;
inline constexpr std::uint64_t kArrayBytes = kEntrySize * kEntryCount;  // 16 KiB, the UEFI minimum
namespace entry {
inline constexpr std::size_t TypeGuid = 0;     // 16 bytes
inline constexpr std::size_t UniqueGuid = 16;  // 16 bytes
inline constexpr std::size_t FirstLba = 32;    // u64
inline constexpr std::size_t LastLba = 40;     // u64, inclusive
inline constexpr std::size_t Attributes = 48;  // u64
inline constexpr std::size_t Name = 56;        // 36 UTF-16LE code units
inline constexpr std::size_t kNameUnits = 36;
static_assert(Name + 2 * kNameUnits == kEntrySize);
}  // namespace entry
/// Hostile-input bound on count * size of an entry array we are willing to read.
inline constexpr std::uint64_t kMaxArrayBytes = 1 << 20;
}  // namespace gpt

constexpr std::uint64_t kAlignment = 1 << 20;  // first partition at 1 MiB

std::uint32_t crc32_of(std::span<const std::byte> data) {
    uLong crc = crc32(0L, Z_NULL, 0);
    // zlib takes uInt lengths; feed in chunks.
    while (!data.empty()) {
        const auto n = static_cast<uInt>(std::min<std::size_t>(data.size(), 1u << 30));
        crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), n);
        data = data.subspan(n);
    }
    return static_cast<std::uint32_t>(crc);
}

void check_sector_size(std::uint32_t sector_size) {
    if (sector_size < 512 || sector_size > 4096 || !core::is_power_of_two(sector_size)) {
        throw Error(ErrorCode::usage,
                    fmt::format("sector size {} is not supported; use 512 or 4096", sector_size));
    }
}

std::uint64_t gpt_array_sectors(std::uint32_t sector_size) {
    return core::div_ceil(gpt::kArrayBytes, sector_size);
}

/// CHS address of `lba` as the three MBR bytes, with the 255-head, 63-sector
/// geometry sfdisk and sgdisk use; beyond cylinder 1023 it is 1023/254/63 (FE FF FF).
std::array<std::uint8_t, 3> chs_bytes(std::uint64_t lba) {
    constexpr std::uint64_t kHeads = 255;
    constexpr std::uint64_t kSectors = 63;
    const std::uint64_t cylinder = lba / (kHeads * kSectors);
    if (cylinder > 1023) return {0xFE, 0xFF, 0xFF};
    const auto head = static_cast<std::uint8_t>((lba / kSectors) % kHeads);
    const auto sector = static_cast<std::uint8_t>(lba % kSectors + 1);
    return {head, static_cast<std::uint8_t>(sector | ((cylinder >> 2) & 0xC0)),
            static_cast<std::uint8_t>(cylinder & 0xFF)};
}

void put_mbr_entry(std::span<std::byte, mbr::kSize> sector, unsigned slot, std::uint8_t status,
                   std::uint8_t type, std::uint64_t first_lba, std::uint64_t count) {
    auto e = sector.subspan(mbr::Entries + slot * mbr::kEntrySize, mbr::kEntrySize);
    const auto first = chs_bytes(first_lba);
    const auto last = chs_bytes(first_lba + count - 1);
    e[mbr::entry::Status] = std::byte{status};
    for (std::size_t i = 0; i < 3; ++i) {
        e[mbr::entry::ChsFirst + i] = std::byte{first[i]};
        e[mbr::entry::ChsLast + i] = std::byte{last[i]};
    }
    e[mbr::entry::Type] = std::byte{type};
    core::store_le32(e, mbr::entry::LbaFirst, static_cast<std::uint32_t>(first_lba));
    core::store_le32(e, mbr::entry::Sectors, static_cast<std::uint32_t>(count));
}

void finish_mbr(std::span<std::byte, mbr::kSize> sector) {
    sector[mbr::Signature] = std::byte{0x55};
    sector[mbr::Signature + 1] = std::byte{0xAA};
}

Guid load_guid(std::span<const std::byte> s, std::size_t offset) {
    Guid g{};
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<std::uint8_t>(s[offset + i]);
    return g;
}

void store_guid(std::span<std::byte> s, std::size_t offset, const Guid& g) {
    for (std::size_t i = 0; i < g.size(); ++i) s[offset + i] = std::byte{g[i]};
}

bool is_zero(const Guid& g) {
    return std::all_of(g.begin(), g.end(), [](std::uint8_t b) { return b == 0; });
}

std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Builds a GPT header sector (CRC filled in).
std::vector<std::byte> make_gpt_header(std::uint32_t sector_size, std::uint64_t my_lba,
                                       std::uint64_t alternate_lba, std::uint64_t first_usable,
                                       std::uint64_t last_usable, const Guid& disk_guid,
                                       std::uint64_t entry_lba, std::uint32_t array_crc) {
    std::vector<std::byte> sector(sector_size);
    auto h = std::span(sector).first<gpt::kHeaderSize>();
    core::store_padded(h.subspan(gpt::Signature, 8), "EFI PART");
    core::store32<gpt::Revision>(h, 0x00010000);
    core::store32<gpt::HeaderSize>(h, gpt::kHeaderSize);
    core::store32<gpt::Reserved>(h, 0);
    core::store64<gpt::MyLba>(h, my_lba);
    core::store64<gpt::AlternateLba>(h, alternate_lba);
    core::store64<gpt::FirstUsableLba>(h, first_usable);
    core::store64<gpt::LastUsableLba>(h, last_usable);
    store_guid(h, gpt::DiskGuid, disk_guid);
    core::store64<gpt::EntryLba>(h, entry_lba);
    core::store32<gpt::EntryCount>(h, gpt::kEntryCount);
    core::store32<gpt::EntrySize>(h, gpt::kEntrySize);
    core::store32<gpt::EntryArrayCrc32>(h, array_crc);
    core::store32<gpt::HeaderCrc32>(h, crc32_of(h));
    return sector;
}

// ---------------------------------------------------------------------------
// Reading

struct GptAttempt {
    std::optional<PartitionTable> table;
    std::string problem;  ///< why the header at this LBA was rejected
};

/// Reads and validates one GPT header + array at `lba`. Returns the problem
/// as text instead of throwing so that the caller can try the backup.
GptAttempt read_gpt_at(const BlockDevice& disk, std::uint32_t sector_size, std::uint64_t lba) {
    const std::uint64_t sectors = disk.size() / sector_size;
    GptAttempt out;
    if (lba >= sectors) {
        out.problem = fmt::format("LBA {} is outside the disk", lba);
        return out;
    }
    std::vector<std::byte> sector(sector_size);
    disk.read_at(lba * sector_size, sector);
    const auto h = std::span<const std::byte>(sector).first<gpt::kHeaderSize>();
    if (core::load_string(h.subspan(gpt::Signature, 8)) != "EFI PART") {
        out.problem = fmt::format("no \"EFI PART\" signature at LBA {}", lba);
        return out;
    }
    const std::uint32_t header_size = core::le32<gpt::HeaderSize>(h);
    if (header_size < gpt::kHeaderSize || header_size > sector_size) {
        out.problem = fmt::format("header size {} at LBA {} is outside {}..{}", header_size, lba,
                                  gpt::kHeaderSize, sector_size);
        return out;
    }
    std::vector<std::byte> header(sector.begin(), sector.begin() + header_size);
    const std::uint32_t stored_crc = core::le32<gpt::HeaderCrc32>(h);
    core::store_le32(header, gpt::HeaderCrc32, 0);
    const std::uint32_t computed_crc = crc32_of(header);
    if (stored_crc != computed_crc) {
        out.problem =
            fmt::format("header CRC32 at LBA {} is {:08X}, computed {:08X}", lba, stored_crc, computed_crc);
        return out;
    }
    const std::uint64_t my_lba = core::le64<gpt::MyLba>(h);
    const std::uint64_t first_usable = core::le64<gpt::FirstUsableLba>(h);
    const std::uint64_t last_usable = core::le64<gpt::LastUsableLba>(h);
    const std::uint64_t entry_lba = core::le64<gpt::EntryLba>(h);
    const std::uint32_t count = core::le32<gpt::EntryCount>(h);
    const std::uint32_t entry_size = core::le32<gpt::EntrySize>(h);
    const std::uint64_t alternate_lba = core::le64<gpt::AlternateLba>(h);
    if (my_lba != lba) {
        out.problem = fmt::format("header at LBA {} says it is at LBA {}", lba, my_lba);
        return out;
    }
    if (first_usable > last_usable || (lba != 1 && last_usable >= sectors)) {
        out.problem = fmt::format("usable LBAs {}..{} do not fit a disk of {} sectors", first_usable,
                                  last_usable, sectors);
        return out;
    }
    // A header written for a larger disk than the image: the image is cut
    // short (a dd that stopped, a truncate to save space). Its primary header
    // and array are still valid; what the image lacks is the backup at the
    // end and whatever partitions reached there (part.gpt.past-image).
    const bool past_image = last_usable >= sectors || (lba == 1 && alternate_lba >= sectors);
    // Entry size: 128 * 2^n per UEFI; bounding it keeps count * size small.
    if (entry_size < gpt::kEntrySize || entry_size > gpt::kMaxArrayBytes || entry_size % 8 != 0) {
        out.problem =
            fmt::format("entry size {} is not a multiple of 8 in 128..{}", entry_size, gpt::kMaxArrayBytes);
        return out;
    }
    const std::uint64_t array_bytes = std::uint64_t{count} * entry_size;  // < 2^52: no overflow
    if (array_bytes > gpt::kMaxArrayBytes) {
        out.problem = fmt::format("{} entries of {} bytes exceed the {}-byte limit", count, entry_size,
                                  gpt::kMaxArrayBytes);
        return out;
    }
    const std::uint64_t array_sectors = core::div_ceil(array_bytes, sector_size);
    if (entry_lba >= sectors || array_sectors > sectors - entry_lba) {
        out.problem =
            fmt::format("entry array at LBA {} ({} sectors) passes the end of the disk ({} sectors)",
                        entry_lba, array_sectors, sectors);
        return out;
    }
    std::vector<std::byte> array(static_cast<std::size_t>(array_bytes));
    disk.read_at(entry_lba * sector_size, array);
    const std::uint32_t array_crc = crc32_of(array);
    if (array_crc != core::le32<gpt::EntryArrayCrc32>(h)) {
        out.problem = fmt::format("entry array CRC32 is {:08X}, computed {:08X}",
                                  core::le32<gpt::EntryArrayCrc32>(h), array_crc);
        return out;
    }

    PartitionTable table;
    table.kind = PartitionTableKind::gpt;
    table.sector_size = sector_size;
    table.gpt_disk_guid = load_guid(h, gpt::DiskGuid);
    std::vector<unsigned> cut;  // partitions the end of the image cuts
    for (std::uint32_t i = 0; i < count; ++i) {
        const auto e =
            std::span<const std::byte>(array).subspan(std::size_t{i} * entry_size, gpt::kEntrySize);
        Partition p;
        p.gpt_type = load_guid(e, gpt::entry::TypeGuid);
        if (is_zero(p.gpt_type)) continue;
        p.index = i + 1;
        p.entry_offset = entry_lba * sector_size + std::uint64_t{i} * entry_size;
        p.gpt_unique = load_guid(e, gpt::entry::UniqueGuid);
        const std::uint64_t first = core::load_le64(e, gpt::entry::FirstLba);
        const std::uint64_t last = core::load_le64(e, gpt::entry::LastLba);
        if (first > last || first < first_usable || last > last_usable) {
            throw Error(
                ErrorCode::corrupt,
                fmt::format("GPT entry {} spans LBA {}..{}, outside the usable LBAs {}..{}; the partition "
                            "table is damaged",
                            i + 1, first, last, first_usable, last_usable),
                entry_lba * sector_size + std::uint64_t{i} * entry_size);
        }
        p.first_lba = first;
        p.sector_count = last - first + 1;
        p.image_sectors = first >= sectors ? 0 : std::min(p.sector_count, sectors - first);
        if (p.image_sectors < p.sector_count) cut.push_back(p.index);
        std::u16string name;
        for (std::size_t k = 0; k < gpt::entry::kNameUnits; ++k) {
            const auto unit = static_cast<char16_t>(core::load_le16(e, gpt::entry::Name + 2 * k));
            if (unit == 0) break;
            name.push_back(unit);
        }
        p.name = core::utf16_to_utf8_lossy(name);
        table.partitions.push_back(std::move(p));
    }
    if (past_image) {
        std::string which;
        for (unsigned n : cut) which += fmt::format("{}{}", which.empty() ? "" : ", ", n);
        table.problems.push_back(
            {"part.gpt.past-image",
             fmt::format(
                 "the GPT header describes a disk of {} sectors (last usable LBA {}, backup header at "
                 "LBA {}), the image holds {}: the image is cut short; {}",
                 std::max(last_usable, alternate_lba) + 1, last_usable, alternate_lba, sectors,
                 cut.empty() ? std::string("every partition lies inside it")
                             : fmt::format("partition{} {} run{} past its end", cut.size() == 1 ? "" : "s",
                                           which, cut.size() == 1 ? "s" : "")),
             lba * sector_size});
    } else if (!cut.empty()) {
        // Unreachable: entries lie inside the usable LBAs, inside the image.
        throw Error(ErrorCode::corrupt, "GPT entry past the usable LBAs", entry_lba * sector_size);
    }
    out.table = std::move(table);
    return out;
}

/// Finds the 0xEE-referenced GPT at sector size 512, then 4096.
PartitionTable read_gpt(const BlockDevice& disk, std::uint32_t mbr_signature) {
    std::string problems;
    for (std::uint32_t sector_size : {512u, 4096u}) {
        const std::uint64_t sectors = disk.size() / sector_size;
        if (sectors < 3) continue;
        GptAttempt primary = read_gpt_at(disk, sector_size, 1);
        if (primary.table) {
            primary.table->mbr_disk_signature = mbr_signature;
            return std::move(*primary.table);
        }
        const bool signature_seen = primary.problem.find("no \"EFI PART\"") == std::string::npos;
        GptAttempt backup = read_gpt_at(disk, sector_size, sectors - 1);
        if (backup.table) {
            backup.table->mbr_disk_signature = mbr_signature;
            return std::move(*backup.table);
        }
        if (signature_seen || backup.problem.find("no \"EFI PART\"") == std::string::npos) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("GPT with {}-byte sectors is damaged: primary: {}; backup: {}",
                                    sector_size, primary.problem, backup.problem),
                        sector_size);
        }
    }
    throw Error(
        ErrorCode::corrupt,
        "the MBR has a GPT protective entry (type 0xEE) but no GPT header was found at LBA 1 with 512- or "
        "4096-byte sectors, nor at the last LBA",
        0);
}

}  // namespace

PartitionTableKind parse_partition_table_kind(std::string_view text) {
    if (text == "none") return PartitionTableKind::none;
    if (text == "mbr") return PartitionTableKind::mbr;
    if (text == "gpt") return PartitionTableKind::gpt;
    throw Error(ErrorCode::usage, fmt::format("unknown partition table \"{}\"; use none, mbr or gpt", text));
}

std::string_view to_string(PartitionTableKind kind) noexcept {
    switch (kind) {
        case PartitionTableKind::none:
            return "none";
        case PartitionTableKind::mbr:
            return "mbr";
        case PartitionTableKind::gpt:
            return "gpt";
    }
    return "none";
}

std::string format_guid(const Guid& g) {
    return fmt::format(
        "{:02X}{:02X}{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:"
        "02X}",
        g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

const Guid kGptBasicDataType = {0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44,
                                0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26, 0x99, 0xC7};

std::uint64_t table_tail_sectors(PartitionTableKind kind, std::uint32_t sector_size) noexcept {
    return kind == PartitionTableKind::gpt ? gpt_array_sectors(sector_size) + 1 : 0;
}

namespace {

/// GUID text to bytes, or nullopt (parse_guid).
constexpr std::optional<Guid> guid_of(std::string_view t) noexcept {
    if (t.size() == 38 && t.front() == '{' && t.back() == '}') t = t.substr(1, 36);
    if (t.size() != 36 || t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-') return std::nullopt;
    std::array<std::uint8_t, 16> text_order{};  // the bytes as written
    std::size_t n = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) continue;
        const char c = t[i];
        const int v = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (v < 0) return std::nullopt;
        text_order[n / 2] = static_cast<std::uint8_t>(text_order[n / 2] << 4 | v);
        ++n;
    }
    // The first three fields are stored little-endian (UEFI Appendix A).
    Guid g{};
    constexpr std::array<std::size_t, 16> order{3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    for (std::size_t i = 0; i < 16; ++i) g[i] = text_order[order[i]];
    return g;
}

struct NamedType {
    std::string_view name;
    std::uint8_t mbr;
    std::string_view gpt;  ///< "" when GPT has none
};
// MBR bytes: the Windows and Linux partitioners' (fdisk's type list); GPT
// GUIDs: UEFI 2.x §5.3.3 (ESP), Microsoft (basic data), the Discoverable
// Partitions Specification (Linux data, swap), GRUB (BIOS boot).
constexpr std::array<NamedType, 12> kNamedTypes{{
    {"esp", 0xEF, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"},
    {"linux", 0x83, "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
    {"linux-swap", 0x82, "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"},
    {"basic-data", 0x07, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"fat12", 0x01, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"fat16", 0x06, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"fat16-lba", 0x0E, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"fat32", 0x0B, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"fat32-lba", 0x0C, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"exfat", 0x07, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"ntfs", 0x07, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"},
    {"bios-boot", 0x00, "21686148-6449-6E6F-744E-656564454649"},
}};

}  // namespace

std::optional<Guid> parse_guid(std::string_view text) noexcept { return guid_of(text); }

std::optional<PartitionType> named_partition_type(std::string_view name) noexcept {
    for (const NamedType& t : kNamedTypes) {
        if (t.name != name) continue;
        PartitionType out;
        out.mbr = t.mbr;
        if (!t.gpt.empty()) out.gpt = *guid_of(t.gpt);
        return out;
    }
    return std::nullopt;
}

std::optional<std::string_view> gpt_type_name(const Guid& guid) noexcept {
    for (const NamedType& t : kNamedTypes) {
        if (!t.gpt.empty() && *guid_of(t.gpt) == guid) return t.name;
    }
    return std::nullopt;
}

std::string_view partition_type_names() noexcept {
    return "esp, linux, linux-swap, basic-data, fat12, fat16, fat16-lba, fat32, fat32-lba, exfat, ntfs, "
           "bios-boot";
}

Guid guid_from_seed(std::uint64_t seed, std::uint32_t salt) noexcept {
    std::uint64_t state = seed ^ (std::uint64_t{salt} * 0xD6E8FEB86659FD93ULL);
    Guid g{};
    const std::uint64_t a = splitmix64(state);
    const std::uint64_t b = splitmix64(state);
    for (std::size_t i = 0; i < 8; ++i) {
        g[i] = static_cast<std::uint8_t>(a >> (8 * i));
        g[8 + i] = static_cast<std::uint8_t>(b >> (8 * i));
    }
    g[7] = static_cast<std::uint8_t>((g[7] & 0x0F) | 0x40);  // version 4 (high nibble of time_hi, stored LE)
    g[8] = static_cast<std::uint8_t>((g[8] & 0x3F) | 0x80);  // RFC 4122 variant
    return g;
}

PartitionPlacement place_single_partition(PartitionTableKind kind, std::uint64_t disk_bytes,
                                          std::uint32_t sector_size, std::uint64_t first_lba) {
    check_sector_size(sector_size);
    const std::uint64_t sectors = disk_bytes / sector_size;
    if (kind == PartitionTableKind::none) return {0, sectors};
    const std::uint64_t mib = kAlignment / sector_size;
    const std::uint64_t first = first_lba == 0 ? mib : first_lba;
    const std::uint64_t table = kind == PartitionTableKind::gpt ? 2 + gpt_array_sectors(sector_size) : 1;
    if (first < table) {
        throw Error(ErrorCode::usage,
                    fmt::format("a {} partition cannot start at sector {}: the table takes sectors 0..{} (of "
                                "{} bytes)",
                                to_string(kind), first, table - 1, sector_size));
    }
    // Sectors after the partition: backup array + backup header for GPT.
    const std::uint64_t tail = table_tail_sectors(kind, sector_size);
    const std::uint64_t minimum_sectors = first + 1 + tail;
    if (sectors < minimum_sectors) {
        throw Error(
            ErrorCode::usage,
            fmt::format("a disk of {} bytes is too small for a {} partition table: it needs at least {} "
                        "bytes ({} sectors of {} bytes) so that the partition starts at sector {}",
                        disk_bytes, to_string(kind), minimum_sectors * sector_size, minimum_sectors,
                        sector_size, first));
    }
    std::uint64_t count = sectors - first - tail;
    // End on a 1 MiB boundary too, as partitioning tools do (sgdisk cautions
    // otherwise), unless that would leave less than 1 MiB.
    const std::uint64_t aligned_end = (first + count) / mib * mib;
    if (aligned_end >= first + mib) count = aligned_end - first;
    if (kind == PartitionTableKind::mbr && count > std::numeric_limits<std::uint32_t>::max()) {
        throw Error(ErrorCode::usage,
                    fmt::format("a partition of {} sectors of {} bytes does not fit an MBR (at most 2^32 - 1 "
                                "sectors, {} bytes); use --partition-table gpt",
                                count, sector_size,
                                std::uint64_t{std::numeric_limits<std::uint32_t>::max()} * sector_size));
    }
    return {first, count};
}

void write_mbr(BlockDevice& disk, std::uint32_t sector_size, const Partition& partition,
               std::uint32_t disk_signature) {
    Partition p = partition;
    p.index = 1;
    p.ebr_lba = 0;
    write_mbr(disk, sector_size, std::span<const Partition>(&p, 1), disk_signature);
}

void write_mbr(BlockDevice& disk, std::uint32_t sector_size, std::span<const Partition> partitions,
               std::uint32_t disk_signature) {
    check_sector_size(sector_size);
    const std::uint64_t sectors = disk.size() / sector_size;
    const auto refuse = [&](const Partition& p, std::string_view why) {
        throw Error(ErrorCode::usage,
                    fmt::format("an MBR cannot hold partition {} at LBA {} of {} sectors on a disk of {} "
                                "sectors: {}",
                                p.index, p.first_lba, p.sector_count, sectors, why));
    };
    const Partition* extended = nullptr;
    std::vector<const Partition*> logical;
    std::array<bool, 4> slot_used{};
    for (const Partition& p : partitions) {
        if (p.first_lba == 0 || p.sector_count == 0 || p.first_lba > sectors ||
            p.sector_count > sectors - p.first_lba)
            refuse(p, "it is empty, on sector 0 or past the disk's end");
        if (p.first_lba > std::numeric_limits<std::uint32_t>::max() ||
            p.sector_count > std::numeric_limits<std::uint32_t>::max())
            refuse(p, "an MBR entry holds at most 2^32 - 1 sectors");
        if (p.index >= 1 && p.index <= 4) {
            if (slot_used[p.index - 1]) refuse(p, "its number is given twice");
            slot_used[p.index - 1] = true;
            if (is_extended_type(p.mbr_type)) {
                if (extended != nullptr) refuse(p, "an MBR holds one extended partition");
                extended = &p;
            }
        } else if (p.index >= 5) {
            logical.push_back(&p);
        } else {
            refuse(p, "partitions are numbered from 1");
        }
    }
    std::sort(logical.begin(), logical.end(),
              [](const Partition* a, const Partition* b) { return a->index < b->index; });
    for (std::size_t i = 0; i < logical.size(); ++i) {
        const Partition& p = *logical[i];
        if (extended == nullptr) refuse(p, "a logical partition needs an extended partition");
        if (p.index != 5 + i) refuse(p, "logical partitions are numbered 5, 6, ... without a gap");
        const std::uint64_t ext_end = extended->first_lba + extended->sector_count;
        if (p.ebr_lba < extended->first_lba || p.ebr_lba >= p.first_lba ||
            p.first_lba + p.sector_count > ext_end)
            refuse(p, "a logical partition and its EBR lie inside the extended partition, the EBR first");
        if (i > 0) {
            const Partition& before = *logical[i - 1];
            if (p.ebr_lba < before.first_lba + before.sector_count)
                refuse(p, "logical partitions follow one another in the extended partition");
        }
    }

    // The EBRs first, the MBR last: until sector 0 names the extended
    // partition, nothing reads them.
    std::vector<std::byte> sector(sector_size);
    for (std::size_t i = 0; i < logical.size(); ++i) {
        const Partition& p = *logical[i];
        std::fill(sector.begin(), sector.end(), std::byte{0});
        auto m = std::span(sector).first<mbr::kSize>();
        // Entry 0: the logical partition, relative to its EBR; entry 1: the
        // next EBR and what it describes, relative to the extended
        // partition's start (docs/formats.md §4).
        put_mbr_entry(m, 0, p.bootable ? 0x80 : 0x00, p.mbr_type, p.first_lba - p.ebr_lba, p.sector_count);
        if (i + 1 < logical.size()) {
            const Partition& next = *logical[i + 1];
            put_mbr_entry(m, 1, 0x00, 0x05, next.ebr_lba - extended->first_lba,
                          next.first_lba + next.sector_count - next.ebr_lba);
            // CHS of a relative entry is meaningless; sfdisk writes it from the absolute LBA.
            const auto f = chs_bytes(next.ebr_lba);
            const auto l = chs_bytes(next.first_lba + next.sector_count - 1);
            auto e = m.subspan(mbr::Entries + mbr::kEntrySize, mbr::kEntrySize);
            for (std::size_t k = 0; k < 3; ++k) {
                e[mbr::entry::ChsFirst + k] = std::byte{f[k]};
                e[mbr::entry::ChsLast + k] = std::byte{l[k]};
            }
        }
        {
            const auto f = chs_bytes(p.first_lba);
            const auto l = chs_bytes(p.first_lba + p.sector_count - 1);
            auto e = m.subspan(mbr::Entries, mbr::kEntrySize);
            for (std::size_t k = 0; k < 3; ++k) {
                e[mbr::entry::ChsFirst + k] = std::byte{f[k]};
                e[mbr::entry::ChsLast + k] = std::byte{l[k]};
            }
        }
        finish_mbr(m);
        disk.write_at(p.ebr_lba * sector_size, sector);
    }
    std::fill(sector.begin(), sector.end(), std::byte{0});
    auto m = std::span(sector).first<mbr::kSize>();
    core::store32<mbr::DiskSignature>(m, disk_signature);
    for (const Partition& p : partitions) {
        if (p.index < 1 || p.index > 4) continue;
        put_mbr_entry(m, p.index - 1, p.bootable ? 0x80 : 0x00, p.mbr_type, p.first_lba, p.sector_count);
    }
    finish_mbr(m);
    disk.write_at(0, sector);
}

void write_gpt(BlockDevice& disk, std::uint32_t sector_size, const Partition& partition,
               const Guid& disk_guid) {
    Partition p = partition;
    p.index = 1;
    if (p.name.empty()) p.name = "fsimg";
    if (is_zero(p.gpt_unique)) {
        std::uint64_t seed = 0;
        for (std::uint8_t b : disk_guid) seed = seed * 131 + b;
        p.gpt_unique = guid_from_seed(seed, 1);
    }
    write_gpt(disk, sector_size, std::span<const Partition>(&p, 1), disk_guid);
}

void write_gpt(BlockDevice& disk, std::uint32_t sector_size, std::span<const Partition> partitions,
               const Guid& disk_guid) {
    check_sector_size(sector_size);
    const std::uint64_t sectors = disk.size() / sector_size;
    const std::uint64_t array_sectors = gpt_array_sectors(sector_size);
    if (sectors < 2 * (array_sectors + 1) + 2) {
        throw Error(ErrorCode::usage, fmt::format("a disk of {} sectors is too small for a GPT", sectors));
    }
    const std::uint64_t first_usable = 2 + array_sectors;
    const std::uint64_t last_usable = sectors - 2 - array_sectors;
    const std::size_t entries = gpt::kArrayBytes / gpt::kEntrySize;

    // Entry array (same bytes for primary and backup).
    std::vector<std::byte> array(array_sectors * sector_size);
    std::vector<bool> slot_used(entries);
    for (const Partition& partition : partitions) {
        if (partition.index < 1 || partition.index > entries || slot_used[partition.index - 1])
            throw Error(ErrorCode::usage, fmt::format("a GPT holds partitions 1..{}, each once; not {}",
                                                      entries, partition.index));
        slot_used[partition.index - 1] = true;
        const std::uint64_t last_lba = partition.first_lba + partition.sector_count - 1;
        if (partition.sector_count == 0 || partition.first_lba < first_usable ||
            partition.first_lba > last_usable ||
            partition.sector_count > last_usable - partition.first_lba + 1) {
            throw Error(
                ErrorCode::usage,
                fmt::format("GPT partition {} at LBA {} of {} sectors does not fit the usable LBAs {}..{}",
                            partition.index, partition.first_lba, partition.sector_count, first_usable,
                            last_usable));
        }
        for (const Partition& other : partitions) {
            if (&other != &partition && other.first_lba < partition.first_lba + partition.sector_count &&
                partition.first_lba < other.first_lba + other.sector_count)
                throw Error(ErrorCode::usage,
                            fmt::format("GPT partitions {} and {} overlap", partition.index, other.index));
        }
        const std::u16string name = core::utf8_to_utf16(partition.name);
        if (name.size() > gpt::entry::kNameUnits) {
            throw Error(ErrorCode::usage,
                        fmt::format("GPT partition name \"{}\" is longer than {} UTF-16 units",
                                    partition.name, gpt::entry::kNameUnits));
        }
        auto e = std::span(array).subspan((partition.index - 1) * gpt::kEntrySize, gpt::kEntrySize);
        store_guid(e, gpt::entry::TypeGuid,
                   is_zero(partition.gpt_type) ? kGptBasicDataType : partition.gpt_type);
        store_guid(e, gpt::entry::UniqueGuid, partition.gpt_unique);
        core::store_le64(e, gpt::entry::FirstLba, partition.first_lba);
        core::store_le64(e, gpt::entry::LastLba, last_lba);
        core::store_le64(e, gpt::entry::Attributes, 0);
        for (std::size_t k = 0; k < name.size(); ++k) core::store_le16(e, gpt::entry::Name + 2 * k, name[k]);
    }
    const std::uint32_t array_crc = crc32_of(std::span(array).first(gpt::kArrayBytes));

    // Protective MBR: one 0xEE entry from LBA 1 to the end (capped at 2^32 - 1 sectors).
    std::vector<std::byte> pmbr(sector_size);
    auto m = std::span(pmbr).first<mbr::kSize>();
    put_mbr_entry(m, 0, 0x00, 0xEE, 1, std::min<std::uint64_t>(sectors - 1, 0xFFFFFFFF));
    finish_mbr(m);

    const std::uint64_t backup_lba = sectors - 1;
    const std::uint64_t backup_array_lba = backup_lba - array_sectors;
    const auto primary =
        make_gpt_header(sector_size, 1, backup_lba, first_usable, last_usable, disk_guid, 2, array_crc);
    const auto backup = make_gpt_header(sector_size, backup_lba, 1, first_usable, last_usable, disk_guid,
                                        backup_array_lba, array_crc);

    disk.write_at(0, pmbr);
    disk.write_at(sector_size, primary);
    disk.write_at(2 * std::uint64_t{sector_size}, array);
    disk.write_at(backup_array_lba * sector_size, array);
    disk.write_at(backup_lba * sector_size, backup);
}

bool looks_like_boot_sector(std::span<const std::byte> sector0) noexcept {
    if (sector0.size() < 512) return false;
    const auto s = sector0.first<512>();
    const auto jump = core::le8<0>(s);
    if (jump != 0xEB && jump != 0xE9) return false;
    const std::string oem = core::load_string(s.subspan(3, 8));
    if (oem == "EXFAT   " || oem == "NTFS    ") return true;
    const std::uint16_t bytes_per_sector = core::le16<0x0B>(s);
    const std::uint8_t sectors_per_cluster = core::le8<0x0D>(s);
    const std::uint16_t reserved = core::le16<0x0E>(s);
    const std::uint8_t fats = core::le8<0x10>(s);
    const std::uint8_t media = core::le8<0x15>(s);
    return bytes_per_sector >= 512 && bytes_per_sector <= 4096 && core::is_power_of_two(bytes_per_sector) &&
           core::is_power_of_two(sectors_per_cluster) && reserved != 0 && fats >= 1 && fats <= 4 &&
           (media == 0xF0 || media >= 0xF8);
}

namespace {

/// One GPT header that validates (signature, size, CRC32, its own LBA) with
/// its entry array, for rewriting an entry in place.
struct GptCopy {
    std::uint64_t lba = 0;
    std::vector<std::byte> header;  ///< the whole header sector
    std::uint64_t entry_lba = 0;
    std::uint32_t entry_size = 0;
    std::vector<std::byte> array;  ///< count * entry_size bytes
};
std::optional<GptCopy> read_gpt_copy(const BlockDevice& disk, std::uint32_t ss, std::uint64_t lba) {
    const std::uint64_t sectors = disk.size() / ss;
    if (lba == 0 || lba >= sectors) return std::nullopt;
    GptCopy c;
    c.lba = lba;
    c.header.resize(ss);
    disk.read_at(lba * ss, c.header);
    const auto h = std::span<const std::byte>(c.header).first<gpt::kHeaderSize>();
    if (core::load_string(h.subspan(gpt::Signature, 8)) != "EFI PART") return std::nullopt;
    const std::uint32_t size = core::le32<gpt::HeaderSize>(h);
    if (size < gpt::kHeaderSize || size > ss || core::le64<gpt::MyLba>(h) != lba) return std::nullopt;
    std::vector<std::byte> plain(c.header.begin(), c.header.begin() + size);
    core::store_le32(plain, gpt::HeaderCrc32, 0);
    if (crc32_of(plain) != core::le32<gpt::HeaderCrc32>(h)) return std::nullopt;
    c.entry_lba = core::le64<gpt::EntryLba>(h);
    c.entry_size = core::le32<gpt::EntrySize>(h);
    const std::uint64_t bytes = std::uint64_t{core::le32<gpt::EntryCount>(h)} * c.entry_size;
    if (c.entry_size < gpt::kEntrySize || bytes > gpt::kMaxArrayBytes || c.entry_lba >= sectors ||
        core::div_ceil(bytes, ss) > sectors - c.entry_lba)
        return std::nullopt;
    c.array.resize(static_cast<std::size_t>(bytes));
    disk.read_at(c.entry_lba * ss, c.array);
    if (crc32_of(c.array) != core::le32<gpt::EntryArrayCrc32>(h)) return std::nullopt;
    return c;
}

}  // namespace

bool set_partition_type(BlockDevice& disk, const PartitionTable& table, const Partition& partition,
                        std::uint8_t mbr_type, const Guid& gpt_type) {
    if (table.kind == PartitionTableKind::mbr) {
        std::array<std::byte, 1> type{};
        disk.read_at(partition.entry_offset + mbr::entry::Type, type);
        if (static_cast<std::uint8_t>(type[0]) == mbr_type) return false;
        if (type[0] != std::byte{partition.mbr_type})
            throw Error(ErrorCode::corrupt,
                        fmt::format("the MBR entry of partition {} changed while it was being formatted",
                                    partition.index),
                        partition.entry_offset);
        type[0] = std::byte{mbr_type};
        disk.write_at(partition.entry_offset + mbr::entry::Type, type);
        return true;
    }
    if (table.kind != PartitionTableKind::gpt)
        throw Error(ErrorCode::usage, "the image has no partition table: there is no partition type to set");
    if (partition.gpt_type == gpt_type) return false;
    const std::uint32_t ss = table.sector_size;
    std::optional<GptCopy> primary = read_gpt_copy(disk, ss, 1);
    std::optional<GptCopy> backup;
    if (primary) backup = read_gpt_copy(disk, ss, core::load_le64(primary->header, gpt::AlternateLba));
    if (!backup && disk.size() / ss > 1) backup = read_gpt_copy(disk, ss, disk.size() / ss - 1);
    if (!primary && !backup)
        throw Error(ErrorCode::corrupt, "neither GPT header validates: the partition type cannot be set", ss);
    const std::uint64_t slot = partition.index - 1;
    for (std::optional<GptCopy>* copy : {&backup, &primary}) {
        if (!*copy) continue;
        GptCopy& c = **copy;
        if ((slot + 1) * c.entry_size > c.array.size() ||
            load_guid(std::span<const std::byte>(c.array).subspan(slot * c.entry_size),
                      gpt::entry::TypeGuid) != partition.gpt_type)
            throw Error(ErrorCode::corrupt,
                        fmt::format("GPT entry {} at LBA {} is not the partition read before",
                                    partition.index, c.entry_lba),
                        c.entry_lba * ss);
        store_guid(std::span(c.array).subspan(slot * c.entry_size), gpt::entry::TypeGuid, gpt_type);
        auto h = std::span(c.header).first<gpt::kHeaderSize>();
        core::store32<gpt::EntryArrayCrc32>(h, crc32_of(c.array));
        core::store32<gpt::HeaderCrc32>(h, 0);
        const std::uint32_t size = core::load_le32(c.header, gpt::HeaderSize);
        core::store32<gpt::HeaderCrc32>(h, crc32_of(std::span(c.header).first(size)));
        // Only the sector holding the entry changes in the array.
        const std::uint64_t sector = slot * c.entry_size / ss;
        disk.write_at((c.entry_lba + sector) * ss,
                      std::span(c.array).subspan(static_cast<std::size_t>(sector * ss),
                                                 std::min<std::size_t>(ss, c.array.size() - sector * ss)));
        disk.write_at(c.lba * ss, c.header);
    }
    return true;
}

bool is_extended_type(std::uint8_t type) noexcept { return type == 0x05 || type == 0x0F || type == 0x85; }

std::vector<std::string> partition_overlaps(const PartitionTable& table, const Partition& p) {
    std::vector<std::string> out;
    if (p.sector_count == 0) return out;
    // MBR fields are 32-bit; a GPT entry's count is LastLba - FirstLba + 1: no overflow.
    const std::uint64_t first = p.first_lba;
    const std::uint64_t last = p.first_lba + (p.sector_count - 1);
    const bool logical = p.ebr_lba != 0;
    // An extended partition holds the logical partitions and their EBRs by design.
    const bool extended = table.kind == PartitionTableKind::mbr && !logical && is_extended_type(p.mbr_type);
    for (const Partition& q : table.partitions) {
        const bool self = q.index == p.index && q.entry_offset == p.entry_offset;
        if (extended && q.ebr_lba != 0) continue;
        if (!self && q.sector_count != 0) {
            const std::uint64_t q_last = q.first_lba + (q.sector_count - 1);
            const bool container = logical && table.kind == PartitionTableKind::mbr &&
                                   is_extended_type(q.mbr_type) && q.first_lba <= first && last <= q_last;
            if (!container && q.first_lba <= last && first <= q_last)
                out.push_back(fmt::format("partition {} (LBA {}..{})", q.index, q.first_lba, q_last));
        }
        if (q.ebr_lba != 0 && q.ebr_lba >= first && q.ebr_lba <= last)
            out.push_back(fmt::format("the EBR of partition {} (LBA {})", q.index, q.ebr_lba));
    }
    return out;
}

namespace {

/// Sets p.image_sectors from the image's `sectors` and records where an MBR
/// entry (`what`: "MBR entry 2 (type 0x07)") disagrees with the image: one
/// starting at LBA 0 or past the end (part.entry.outside), one ending past
/// the end (part.entry.past-image). `entry_offset`: the entry's byte offset.
void place_in_image(PartitionTable& table, Partition& p, std::uint64_t sectors, const std::string& what,
                    std::uint64_t entry_offset) {
    const std::uint64_t ss = table.sector_size;
    p.entry_offset = entry_offset;
    if (p.first_lba == 0) {
        p.image_sectors = 0;
        table.problems.push_back(
            {"part.entry.outside",
             fmt::format("{} starts at LBA 0, on the partition table itself; it cannot be read", what),
             entry_offset});
        return;
    }
    if (p.first_lba >= sectors) {
        p.image_sectors = 0;
        table.problems.push_back(
            {"part.entry.outside",
             fmt::format("{} starts at LBA {}, past the end of the image ({} sectors of {} bytes); it cannot "
                         "be read: the image is cut short or the entry is wrong",
                         what, p.first_lba, sectors, ss),
             entry_offset});
        return;
    }
    p.image_sectors = std::min(p.sector_count, sectors - p.first_lba);
    if (p.image_sectors < p.sector_count) {
        table.problems.push_back(
            {"part.entry.past-image",
             fmt::format(
                 "{} spans LBA {} + {} sectors, {} sectors past the end of the image ({} sectors of {} "
                 "bytes): the image is cut short or the entry is too long; the {} sectors inside are read",
                 what, p.first_lba, p.sector_count, p.sector_count - p.image_sectors, sectors, ss,
                 p.image_sectors),
             entry_offset});
    }
}

/// Walks the chain of extended boot records (EBRs) of the extended partition
/// at `ext_first` (`ext_count` sectors; formats.md §4.1): each EBR's first
/// entry is a logical partition, relative to that EBR; its second entry links
/// the next EBR, relative to the extended partition's start. Logical
/// partitions are numbered 5, 6, ... in chain order, as Linux numbers them
/// (block/partitions/msdos.c); an EBR without a data entry takes no number.
/// The walk is bounded: it stops at a link to an EBR already visited (a loop),
/// a link outside the disk or the extended partition, an EBR without the
/// 55 AA signature, or after kMaxLogical EBRs; each stop is recorded in
/// table.problems, and the logical partitions found before it stay listed.
/// A logical partition outside the image is listed with its problem
/// (place_in_image), as a primary entry is.
void read_logical_partitions(const BlockDevice& disk, PartitionTable& table, std::uint64_t ext_first,
                             std::uint64_t ext_count, std::uint64_t sectors) {
    constexpr unsigned kMaxLogical = 1024;
    const std::uint64_t ss = table.sector_size;
    std::vector<std::uint64_t> visited;
    auto problem = [&](const char* code, std::uint64_t ebr_lba, std::string message) {
        table.problems.push_back({code, std::move(message), ebr_lba * ss});
    };
    std::uint64_t ebr = ext_first;
    unsigned next_index = 5;
    while (true) {
        if (visited.size() == kMaxLogical) {
            problem("part.ebr.chain", ebr,
                    fmt::format(
                        "the extended partition's EBR chain is longer than {} records; the rest is not read",
                        kMaxLogical));
            return;
        }
        if (std::find(visited.begin(), visited.end(), ebr) != visited.end()) {
            problem("part.ebr.chain", visited.back(),
                    fmt::format(
                        "the EBR at LBA {} links back to the EBR at LBA {} (a loop); the chain ends there",
                        visited.back(), ebr));
            return;
        }
        if (ebr >= sectors || ebr < ext_first || ebr - ext_first >= ext_count) {
            problem("part.ebr.chain", visited.empty() ? ext_first : visited.back(),
                    fmt::format("an EBR link points to LBA {}, outside the extended partition (LBA {} + {} "
                                "sectors) or the disk of {} sectors; the chain ends there",
                                ebr, ext_first, ext_count, sectors));
            return;
        }
        visited.push_back(ebr);
        std::array<std::byte, mbr::kSize> sector{};
        disk.read_at(ebr * ss, sector);
        const std::span<const std::byte, mbr::kSize> m(sector);
        if (core::le16<mbr::Signature>(m) != 0xAA55) {
            problem("part.ebr.chain", ebr,
                    fmt::format("the EBR at LBA {} does not end in 55 AA; the chain ends there", ebr));
            return;
        }
        std::optional<std::uint64_t> link;
        for (unsigned i = 0; i < 4; ++i) {
            const auto e = m.subspan(mbr::Entries + i * mbr::kEntrySize, mbr::kEntrySize);
            const auto type = static_cast<std::uint8_t>(e[mbr::entry::Type]);
            const std::uint64_t rel = core::load_le32(e, mbr::entry::LbaFirst);
            const std::uint64_t count = core::load_le32(e, mbr::entry::Sectors);
            if (type == 0 || count == 0) continue;
            if (is_extended_type(type)) {
                if (!link) link = ext_first + rel;
                continue;
            }
            // Slots 3 and 4 of an EBR are ignored: no partitioner writes them, and
            // Linux reads them only when they fit the EBR's span (often garbage).
            if (i >= 2) continue;
            // rel 0 would put the logical partition on its own EBR.
            const std::uint64_t first = rel == 0 ? 0 : ebr + rel;
            Partition p;
            p.index = next_index++;
            p.first_lba = first;
            p.sector_count = count;
            p.mbr_type = type;
            p.bootable = static_cast<std::uint8_t>(e[mbr::entry::Status]) == 0x80;
            p.ebr_lba = ebr;
            place_in_image(
                table, p, sectors,
                fmt::format("logical partition {} (type 0x{:02X}, EBR at LBA {})", p.index, type, ebr),
                ebr * ss + mbr::Entries + i * mbr::kEntrySize);
            if (first != 0 && first + count > ext_first + ext_count) {
                problem("part.ebr.logical-outside", ebr,
                        fmt::format("logical partition {} (LBA {} + {} sectors) runs past the end of its "
                                    "extended partition (LBA {} + {} sectors)",
                                    p.index, first, count, ext_first, ext_count));
            }
            table.partitions.push_back(std::move(p));
        }
        if (!link) return;
        ebr = *link;
    }
}

}  // namespace

PartitionTable read_partition_table(const BlockDevice& disk) {
    PartitionTable none;
    if (disk.size() < mbr::kSize) return none;
    std::array<std::byte, mbr::kSize> sector{};
    disk.read_at(0, sector);
    const std::span<const std::byte, mbr::kSize> m(sector);
    if (core::le16<mbr::Signature>(m) != 0xAA55) return none;
    if (looks_like_boot_sector(m)) return none;

    struct RawEntry {
        unsigned index;
        std::uint8_t status, type;
        std::uint32_t first, count;
    };
    std::vector<RawEntry> entries;
    bool protective = false;
    for (unsigned i = 0; i < 4; ++i) {
        const auto e = m.subspan(mbr::Entries + i * mbr::kEntrySize, mbr::kEntrySize);
        const RawEntry r{i + 1, static_cast<std::uint8_t>(e[mbr::entry::Status]),
                         static_cast<std::uint8_t>(e[mbr::entry::Type]),
                         core::load_le32(e, mbr::entry::LbaFirst), core::load_le32(e, mbr::entry::Sectors)};
        // A status other than 0x00/0x80 means this is not a partition table
        // (e.g. an unrecognised boot sector that happens to end in 55 AA).
        if (r.status != 0x00 && r.status != 0x80) return none;
        if (r.type == 0) continue;
        if (r.type == 0xEE) protective = true;
        // An entry of 0 sectors is unused, as Linux reads it (msdos.c skips it).
        if (r.count == 0) continue;
        entries.push_back(r);
    }
    // No partitions behind a jump instruction: a damaged FAT/exFAT/NTFS boot
    // sector (fsck must see it), not an empty partition table.
    const auto jump = core::le8<0>(m);
    if (entries.empty() && (jump == 0xEB || jump == 0xE9)) return none;
    const std::uint32_t disk_signature = core::le32<mbr::DiskSignature>(m);
    if (protective) return read_gpt(disk, disk_signature);

    // MBR LBAs are in the disk's logical sectors, which the MBR does not record.
    // Use 512 unless the first partition holds a boot sector only at 4096.
    std::uint32_t sector_size = 512;
    if (!entries.empty()) {
        auto boot_sector_at = [&](std::uint64_t offset) {
            if (offset > disk.size() || disk.size() - offset < mbr::kSize) return false;
            std::array<std::byte, mbr::kSize> bs{};
            disk.read_at(offset, bs);
            return looks_like_boot_sector(bs);
        };
        const std::uint64_t first = entries.front().first;
        if (!boot_sector_at(first * 512) && boot_sector_at(first * 4096)) sector_size = 4096;
    }
    const std::uint64_t sectors = disk.size() / sector_size;

    PartitionTable table;
    table.kind = PartitionTableKind::mbr;
    table.sector_size = sector_size;
    table.mbr_disk_signature = disk_signature;
    const RawEntry* extended = nullptr;
    for (const RawEntry& r : entries) {
        if (is_extended_type(r.type) && extended == nullptr) extended = &r;
        Partition p;
        p.index = r.index;
        p.first_lba = r.first;
        p.sector_count = r.count;
        p.mbr_type = r.type;
        p.bootable = r.status == 0x80;
        place_in_image(table, p, sectors, fmt::format("MBR entry {} (type 0x{:02X})", r.index, r.type),
                       mbr::Entries + (r.index - 1) * mbr::kEntrySize);
        table.partitions.push_back(std::move(p));
    }
    // The chain is walked inside what the image holds of the extended partition.
    if (extended != nullptr && extended->first != 0 && extended->first < sectors)
        read_logical_partitions(disk, table, extended->first, extended->count, sectors);
    return table;
}

}  // namespace fsimg::io
