// exFAT File directory entry sets: the File entry, its Stream Extension and
// File Name entries, the SetChecksum and NameHash, and the timestamp fields.
// Pure: values in, bytes out.
//
// Facts: [EXFAT §6.3 (generic primary, SetChecksum), §7.4 (File entry,
// FileAttributes, timestamps, 10msIncrement, UtcOffset), §7.6 (Stream
// Extension, NameHash), §7.7 (File Name)]; docs/formats.md §2.5,
// §2.8.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace fsimg::exfat {

namespace file_off {                                          // File directory entry [EXFAT §7.4, Table 15]
inline constexpr std::size_t EntryType = 0;                   // u8: 0x85
inline constexpr std::size_t SecondaryCount = 1;              // u8: 1 + File Name entries
inline constexpr std::size_t SetChecksum = 2;                 // u16
inline constexpr std::size_t FileAttributes = 4;              // u16
inline constexpr std::size_t Reserved1 = 6;                   // u16
inline constexpr std::size_t CreateTimestamp = 8;             // u32
inline constexpr std::size_t LastModifiedTimestamp = 12;      // u32
inline constexpr std::size_t LastAccessedTimestamp = 16;      // u32
inline constexpr std::size_t Create10msIncrement = 20;        // u8: 0..199
inline constexpr std::size_t LastModified10msIncrement = 21;  // u8: 0..199
inline constexpr std::size_t CreateUtcOffset = 22;            // u8
inline constexpr std::size_t LastModifiedUtcOffset = 23;      // u8
inline constexpr std::size_t LastAccessedUtcOffset = 24;      // u8
inline constexpr std::size_t Reserved2 = 25;                  // 7 bytes
}  // namespace file_off
static_assert(file_off::Reserved2 + 7 == 32);

namespace stream_off {                                   // Stream Extension entry [EXFAT §7.6, Table 29]
inline constexpr std::size_t EntryType = 0;              // u8: 0xC0
inline constexpr std::size_t GeneralSecondaryFlags = 1;  // u8
inline constexpr std::size_t Reserved1 = 2;              // u8
inline constexpr std::size_t NameLength = 3;             // u8: 1..255 UTF-16 units
inline constexpr std::size_t NameHash = 4;               // u16
inline constexpr std::size_t Reserved2 = 6;              // u16
inline constexpr std::size_t ValidDataLength = 8;        // u64, bytes
inline constexpr std::size_t Reserved3 = 16;             // u32
inline constexpr std::size_t FirstCluster = 20;          // u32
inline constexpr std::size_t DataLength = 24;            // u64, bytes
}  // namespace stream_off
static_assert(stream_off::DataLength + 8 == 32);

namespace name_off {                                     // File Name entry [EXFAT §7.7, Table 32]
inline constexpr std::size_t EntryType = 0;              // u8: 0xC1
inline constexpr std::size_t GeneralSecondaryFlags = 1;  // u8: 0
inline constexpr std::size_t FileName = 2;               // 15 UTF-16LE units
}  // namespace name_off
static_assert(name_off::FileName + 15 * 2 == 32);

// FileAttributes bits [EXFAT §7.4.4, Table 16]
inline constexpr std::uint16_t kFileAttrReadOnly = 0x0001;
inline constexpr std::uint16_t kFileAttrHidden = 0x0002;
inline constexpr std::uint16_t kFileAttrSystem = 0x0004;
inline constexpr std::uint16_t kFileAttrDirectory = 0x0010;
inline constexpr std::uint16_t kFileAttrArchive = 0x0020;

// GeneralSecondaryFlags bits [EXFAT §6.4.2, Table 14]
inline constexpr std::uint8_t kSecondaryAllocationPossible = 0x01;
inline constexpr std::uint8_t kSecondaryNoFatChain = 0x02;

/// One timestamp of a File entry: the 32-bit Timestamp field (bits 0-4
/// DoubleSeconds, 5-10 Minute, 11-15 Hour, 16-20 Day, 21-24 Month, 25-31
/// Year - 1980), its 10msIncrement (0..199; 0 for LastAccessed, which has
/// none) and its UtcOffset byte (bit 7 OffsetValid, bits 0-6 a signed count
/// of 15-minute intervals) [EXFAT §7.4.8-7.4.10].
struct EntryTimestamp {
    std::uint32_t timestamp = 0;
    std::uint8_t increment_10ms = 0;
    std::uint8_t utc_offset = 0;
    friend bool operator==(const EntryTimestamp&, const EntryTimestamp&) = default;
};

/// Unix seconds + nanoseconds, as local time `utc_offset_seconds` east of
/// UTC, into an EntryTimestamp with OffsetValid set. The time is clamped to
/// 1980-01-01 00:00:00 .. 2107-12-31 23:59:58 (local); the offset is rounded
/// toward zero to 15 minutes and clamped to -16:00..+15:45. Nanoseconds
/// below 10 ms are dropped.
EntryTimestamp entry_timestamp(std::int64_t unix_seconds, std::uint32_t nanoseconds,
                               std::int32_t utc_offset_seconds = 0) noexcept;

/// Everything a File directory entry set says about one file or directory.
struct FileEntrySetInfo {
    std::u16string_view name;          ///< 1..255 UTF-16 units (stored as given)
    std::uint16_t attributes = 0;      ///< FileAttributes
    EntryTimestamp created;            ///< Create*
    EntryTimestamp modified;           ///< LastModified*
    EntryTimestamp accessed;           ///< LastAccessed* (its increment is not stored)
    std::uint8_t secondary_flags = 0;  ///< Stream Extension GeneralSecondaryFlags
    std::uint32_t first_cluster = 0;   ///< FirstCluster (0 when nothing is allocated)
    std::uint64_t valid_data_length = 0;
    std::uint64_t data_length = 0;
    /// The volume's expanded up-case table (65,536 mappings) NameHash is
    /// computed with [EXFAT §7.6.4]; empty: the recommended table (what
    /// format writes).
    std::span<const char16_t> upcase;
};

/// 16-bit SetChecksum [EXFAT §6.3.3]: over the whole set (File entry and
/// every secondary, (SecondaryCount + 1) * 32 bytes), skipping bytes 2 and 3
/// of the first entry: sum = ((sum & 1) ? 0x8000 : 0) + (sum >> 1) + byte.
std::uint16_t entry_set_checksum(std::span<const std::byte> set) noexcept;

/// entry_set_checksum of two sets at once: {checksum of a, checksum of b}.
/// Each checksum is one chain of dependent rotate-and-adds, so a CPU runs
/// two side by side in about the time of one (a checker's directory walk
/// spends a tenth of its time here).
std::pair<std::uint16_t, std::uint16_t> entry_set_checksums(std::span<const std::byte> a,
                                                            std::span<const std::byte> b) noexcept;

/// NameHash [EXFAT §7.6.4]: the same 16-bit rotate-and-add over the
/// UTF-16LE bytes of the name after up-casing each unit through the volume's
/// up-case table (here: the recommended table format writes, upcase_key).
std::uint16_t name_hash(std::u16string_view name);

/// The entry set's bytes: File entry (SecondaryCount = 1 + ceil(L/15),
/// SetChecksum), Stream Extension (NameLength, NameHash), and ceil(L/15)
/// File Name entries, unused name units 0, NameHash through info.upcase.
/// Reserved bytes are 0. Returns
/// entry_set_entries(L) * 32 bytes. Throws Error(usage) when the name is
/// empty or longer than 255 units.
std::vector<std::byte> encode_file_entry_set(const FileEntrySetInfo& info);

}  // namespace fsimg::exfat
