// exFAT on-disk records: boot sector, extended boot sectors, boot checksum,
// FAT entry values, the root directory's system entries (allocation bitmap,
// up-case table, volume label) and the up-case table.
//
// Offsets and names follow Microsoft's "exFAT file system specification"
// (2019) [EXFAT], section numbers given per record; see also
// docs/formats.md §2. Decoding never judges values: validation is
// validate_boot_sector(), a separate step.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/exfat/layout.hpp"

namespace fsimg::exfat {

inline constexpr std::size_t kBootSectorSize =
    512;  ///< the defined part; a sector may be larger (ExcessSpace)
inline constexpr std::uint32_t kBootRegionSectors =
    12;  ///< [EXFAT §2] boot sector, 8 extended, OEM, reserved, checksum
inline constexpr std::uint32_t kBackupBootRegionSector =
    12;                                                   ///< [EXFAT §2] first sector of the backup region
inline constexpr std::uint32_t kExtendedBootSectors = 8;  ///< sectors 1..8 of a region [EXFAT §3.2]
inline constexpr std::uint32_t kOemParametersSector = 9;  ///< [EXFAT §3.3]
inline constexpr std::uint32_t kReservedSector = 10;      ///< [EXFAT §2]
inline constexpr std::uint32_t kChecksumSector = 11;      ///< [EXFAT §3.4]
inline constexpr std::size_t kDirEntrySize = 32;          ///< [EXFAT §6]

namespace off {                                       // [EXFAT §3.1, Table 4] Main and Backup Boot Sector
inline constexpr std::size_t JumpBoot = 0;            // 3 bytes: EB 76 90
inline constexpr std::size_t FileSystemName = 3;      // 8 bytes: "EXFAT   "
inline constexpr std::size_t MustBeZero = 11;         // 53 bytes (the FAT BPB range)
inline constexpr std::size_t PartitionOffset = 64;    // u64, sectors, media-relative
inline constexpr std::size_t VolumeLength = 72;       // u64, sectors
inline constexpr std::size_t FatOffset = 80;          // u32, sectors, volume-relative
inline constexpr std::size_t FatLength = 84;          // u32, sectors
inline constexpr std::size_t ClusterHeapOffset = 88;  // u32, sectors, volume-relative
inline constexpr std::size_t ClusterCount = 92;       // u32
inline constexpr std::size_t FirstClusterOfRootDirectory = 96;  // u32
inline constexpr std::size_t VolumeSerialNumber = 100;          // u32
inline constexpr std::size_t FileSystemRevision = 104;          // u16: major.minor in high.low byte
inline constexpr std::size_t VolumeFlags = 106;                 // u16, excluded from the boot checksum
inline constexpr std::size_t BytesPerSectorShift = 108;         // u8: 9..12
inline constexpr std::size_t SectorsPerClusterShift = 109;      // u8: 0..25-BytesPerSectorShift
inline constexpr std::size_t NumberOfFats = 110;                // u8: 1, or 2 (TexFAT)
inline constexpr std::size_t DriveSelect = 111;                 // u8: INT 13h drive, 0x80
inline constexpr std::size_t PercentInUse = 112;   // u8: 0..100 or 0xFF, excluded from the checksum
inline constexpr std::size_t Reserved = 113;       // 7 bytes
inline constexpr std::size_t BootCode = 120;       // 390 bytes: 0xF4 (HLT) without boot code
inline constexpr std::size_t BootSignature = 510;  // u16: 0xAA55
}  // namespace off
static_assert(off::BootSignature + 2 == kBootSectorSize);
static_assert(off::MustBeZero + 53 == off::PartitionOffset);
static_assert(off::Reserved + 7 == off::BootCode);
static_assert(off::BootCode + 390 == off::BootSignature);

inline constexpr std::array<std::uint8_t, 3> kJumpBoot{0xEB, 0x76, 0x90};  ///< [EXFAT §3.1.1]
inline constexpr std::string_view kFileSystemName = "EXFAT   ";            ///< [EXFAT §3.1.2]
inline constexpr std::uint16_t kFileSystemRevision = 0x0100;               ///< 1.00 [EXFAT §3.1.12]
inline constexpr std::uint16_t kBootSignature = 0xAA55;                    ///< [EXFAT §3.1.20]
inline constexpr std::uint8_t kBootCodeFill = 0xF4;  ///< HLT, when there is no boot code [EXFAT §3.1.19]
inline constexpr std::uint8_t kDriveSelect = 0x80;   ///< [EXFAT §3.1.17]
inline constexpr std::uint8_t kPercentInUseUnknown = 0xFF;  ///< [EXFAT §3.1.18]

// VolumeFlags bits [EXFAT §3.1.13, Table 5]
inline constexpr std::uint16_t kVolumeFlagActiveFat = 0x0001;
inline constexpr std::uint16_t kVolumeFlagVolumeDirty = 0x0002;
inline constexpr std::uint16_t kVolumeFlagMediaFailure = 0x0004;
inline constexpr std::uint16_t kVolumeFlagClearToZero = 0x0008;

/// The decoded boot sector: every field of Table 4 as native integers.
struct BootSector {
    std::array<std::uint8_t, 3> jump_boot{};            // JumpBoot
    std::string file_system_name;                       // FileSystemName (8 bytes, as stored)
    bool must_be_zero_is_zero = true;                   // MustBeZero: all 53 bytes zero
    std::uint64_t partition_offset = 0;                 // PartitionOffset
    std::uint64_t volume_length = 0;                    // VolumeLength
    std::uint32_t fat_offset = 0;                       // FatOffset
    std::uint32_t fat_length = 0;                       // FatLength
    std::uint32_t cluster_heap_offset = 0;              // ClusterHeapOffset
    std::uint32_t cluster_count = 0;                    // ClusterCount
    std::uint32_t first_cluster_of_root_directory = 0;  // FirstClusterOfRootDirectory
    std::uint32_t volume_serial_number = 0;             // VolumeSerialNumber
    std::uint16_t file_system_revision = 0;             // FileSystemRevision
    std::uint16_t volume_flags = 0;                     // VolumeFlags
    std::uint8_t bytes_per_sector_shift = 0;            // BytesPerSectorShift
    std::uint8_t sectors_per_cluster_shift = 0;         // SectorsPerClusterShift
    std::uint8_t number_of_fats = 0;                    // NumberOfFats
    std::uint8_t drive_select = 0;                      // DriveSelect
    std::uint8_t percent_in_use = 0;                    // PercentInUse
    std::uint16_t boot_signature = 0;                   // BootSignature (0xAA55 when valid)
    friend bool operator==(const BootSector&, const BootSector&) = default;
};

using BootSpan = std::span<const std::byte, kBootSectorSize>;
using MutableBootSpan = std::span<std::byte, kBootSectorSize>;

BootSector decode_boot_sector(BootSpan sector) noexcept;
/// Encodes every field of the first 512 bytes except BootCode (left as is):
/// JumpBoot and FileSystemName as given (sized 3 and 8; a shorter name is
/// space-padded), MustBeZero and Reserved zeroed, BootSignature.
void encode_boot_sector(const BootSector& bs, MutableBootSpan sector) noexcept;
/// Fills BootCode with 0xF4 (HLT), the spec's content without boot code [EXFAT §3.1.19].
void write_halt_boot_code(MutableBootSpan sector) noexcept;

/// A boot-sector rule that does not hold. `code` is stable
/// ("exfat.boot.<field>"), `message` names the field, its value and the rule.
struct BootProblem {
    std::string_view code;
    std::string message;
};
/// Checks every field rule of [EXFAT §3.1.1-3.1.20] against the boot sector
/// alone (sizes against each other and against 2^32 / 2^64 limits; nothing
/// about the device). Returns all broken rules; empty = valid. Never throws
/// except std::bad_alloc; safe on any decoded value (shifts are range-checked
/// before use).
std::vector<BootProblem> validate_boot_sector(const BootSector& bs);

// Extended Boot Sectors [EXFAT §3.2, Table 6]: ExtendedBootCode (zeros
// without boot code) then ExtendedBootSignature in the sector's last 4 bytes.
inline constexpr std::uint32_t kExtendedBootSignature = 0xAA550000;
/// Zeroes the sector and stores the signature at size()-4. The span is one
/// sector (512..4096 bytes); throws FormatError when it is shorter than 4 bytes.
void encode_extended_boot_sector(std::span<std::byte> sector);
/// The ExtendedBootSignature of a sector (its last 4 bytes, LE); throws
/// FormatError when shorter than 4 bytes.
std::uint32_t extended_boot_signature(std::span<const std::byte> sector);

// OEM Parameters [EXFAT §3.3]: ten 48-byte parameter structures; an unused one
// is a Null Parameters structure (all-zero GUID). A fresh format writes ten
// null structures, i.e. a zero sector. (exfatprogs before 1.2.8 wrote 0xFF.)
inline constexpr std::size_t kOemParameterCount = 10;
inline constexpr std::size_t kOemParameterSize = 48;

/// Boot checksum [EXFAT §3.4]: over sectors 0..10 of a boot region (pass
/// exactly 11 * BytesPerSector bytes), for each byte except 106, 107
/// (VolumeFlags) and 112 (PercentInUse) of sector 0:
/// sum = ((sum & 1) ? 0x80000000 : 0) + (sum >> 1) + byte, in 32 bits.
std::uint32_t boot_checksum(std::span<const std::byte> first_eleven_sectors) noexcept;
/// Fills a checksum sector: the checksum repeated (LE) over the whole sector.
/// Throws FormatError when the size is not a multiple of 4.
void encode_checksum_sector(std::uint32_t checksum, std::span<std::byte> sector);
/// True when `region` (12 sectors of `bytes_per_sector`) holds a checksum
/// sector whose every 32-bit word equals boot_checksum of sectors 0..10.
/// False (not a throw) when region is shorter than 12 sectors.
bool boot_region_checksum_ok(std::span<const std::byte> region, std::uint32_t bytes_per_sector) noexcept;

// FAT entries [EXFAT §4.1]
inline constexpr std::uint32_t kFatEntryMediaDescriptor = 0xFFFFFFF8;  ///< FatEntry[0]: media F8 + FF FF FF
inline constexpr std::uint32_t kFatEntry1 = 0xFFFFFFFF;                ///< FatEntry[1]: undefined, all ones
inline constexpr std::uint32_t kFatEndOfChain = 0xFFFFFFFF;            ///< the only end-of-chain value
inline constexpr std::uint32_t kFatBadCluster = 0xFFFFFFF7;
inline constexpr std::uint32_t kFatEntrySize = 4;

// Directory entries [EXFAT §6.2 EntryType, §7]
inline constexpr std::uint8_t kEntryEndOfDirectory = 0x00;
inline constexpr std::uint8_t kEntryAllocationBitmap = 0x81;  ///< critical primary [EXFAT §7.1]
inline constexpr std::uint8_t kEntryUpcaseTable = 0x82;       ///< critical primary [EXFAT §7.2]
inline constexpr std::uint8_t kEntryVolumeLabel = 0x83;       ///< critical primary [EXFAT §7.3]
inline constexpr std::uint8_t kEntryFile = 0x85;              ///< critical primary [EXFAT §7.4]
inline constexpr std::uint8_t kEntryVolumeGuid = 0xA0;        ///< benign primary [EXFAT §7.5]
inline constexpr std::uint8_t kEntryStreamExtension = 0xC0;   ///< critical secondary [EXFAT §7.6]
inline constexpr std::uint8_t kEntryFileName = 0xC1;          ///< critical secondary [EXFAT §7.7]

namespace dir_off {                               // [EXFAT §7.1-7.3, Tables 19, 23, 26]
inline constexpr std::size_t EntryType = 0;       // u8
inline constexpr std::size_t BitmapFlags = 1;     // u8, Allocation Bitmap: bit 0 = second bitmap
inline constexpr std::size_t CharacterCount = 1;  // u8, Volume Label: 0..11
inline constexpr std::size_t VolumeLabel = 2;     // 22 bytes, Volume Label: UTF-16LE
inline constexpr std::size_t TableChecksum = 4;   // u32, Up-case Table
inline constexpr std::size_t FirstCluster = 20;   // u32
inline constexpr std::size_t DataLength = 24;     // u64, bytes
}  // namespace dir_off
static_assert(dir_off::DataLength + 8 == kDirEntrySize);
static_assert(dir_off::VolumeLabel + 22 == 24);

using EntrySpan = std::span<const std::byte, kDirEntrySize>;
using MutableEntrySpan = std::span<std::byte, kDirEntrySize>;

/// Allocation Bitmap directory entry [EXFAT §7.1.1-7.1.5].
struct AllocationBitmapEntry {
    std::uint8_t bitmap_flags = 0;    // BitmapFlags: 0 = First Allocation Bitmap
    std::uint32_t first_cluster = 0;  // FirstCluster
    std::uint64_t data_length = 0;    // DataLength: ceil(ClusterCount / 8) bytes
    friend bool operator==(const AllocationBitmapEntry&, const AllocationBitmapEntry&) = default;
};
/// Up-case Table directory entry [EXFAT §7.2.1-7.2.4].
struct UpcaseTableEntry {
    std::uint32_t table_checksum = 0;  // TableChecksum
    std::uint32_t first_cluster = 0;   // FirstCluster
    std::uint64_t data_length = 0;     // DataLength, bytes
    friend bool operator==(const UpcaseTableEntry&, const UpcaseTableEntry&) = default;
};
/// Volume Label directory entry [EXFAT §7.3]: up to 11 UTF-16 units.
struct VolumeLabelEntry {
    std::uint8_t character_count = 0;         // CharacterCount
    std::array<char16_t, 11> volume_label{};  // VolumeLabel (unused units zero)
    friend bool operator==(const VolumeLabelEntry&, const VolumeLabelEntry&) = default;
};

/// Encoders write the whole 32 bytes (EntryType included, reserved bytes 0);
/// decoders read the fields (the EntryType byte is the caller's to check).
void encode_allocation_bitmap_entry(const AllocationBitmapEntry& e, MutableEntrySpan out) noexcept;
AllocationBitmapEntry decode_allocation_bitmap_entry(EntrySpan in) noexcept;
void encode_upcase_table_entry(const UpcaseTableEntry& e, MutableEntrySpan out) noexcept;
UpcaseTableEntry decode_upcase_table_entry(EntrySpan in) noexcept;
void encode_volume_label_entry(const VolumeLabelEntry& e, MutableEntrySpan out) noexcept;
VolumeLabelEntry decode_volume_label_entry(EntrySpan in) noexcept;

/// A volume label given by the user (UTF-8) as the entry stores it. Throws
/// Error(usage) naming the problem when it is not valid UTF-8, longer than 11
/// UTF-16 units, or holds a character the spec forbids in names (U+0000..
/// U+001F, " * / : < > ? \ |) [EXFAT §7.3.2, §7.7.3].
VolumeLabelEntry volume_label_entry_from_utf8(std::string_view label);

// Up-case table [EXFAT §7.2]
/// The spec's recommended up-case table in its compressed form (Table 25):
/// 2,918 UTF-16 values; 0xFFFF followed by N means "the next N characters map
/// to themselves". Its bytes (LE) are kRecommendedUpcaseBytes long with
/// TableChecksum kRecommendedUpcaseChecksum.
std::span<const std::uint16_t> recommended_upcase_table() noexcept;
/// The same table expanded (expand_upcase_table of its bytes), computed at
/// compile time: a volume whose table is this one needs no expansion.
std::span<const char16_t, 0x10000> recommended_upcase_map() noexcept;
inline constexpr std::size_t kRecommendedUpcaseBytes = 5836;
inline constexpr std::uint32_t kRecommendedUpcaseChecksum = 0xE619D30D;
/// The table as stored: each value little-endian.
std::vector<std::byte> upcase_table_bytes(std::span<const std::uint16_t> table);
/// TableChecksum [EXFAT §7.2.2]: the 32-bit rotate-right-and-add of the boot
/// checksum over every byte of the table as stored (none skipped).
std::uint32_t table_checksum(std::span<const std::byte> table) noexcept;
/// Expands a stored table (compressed or not) into the 65,536 mappings.
/// A value equal to the index it describes is an identity mapping (this is
/// how the recommended table's final 0xFFFF is read, as the Linux driver
/// does); otherwise 0xFFFF starts a run of identity mappings of the length
/// that follows. Returns nullopt when the byte count is odd, a run passes
/// U+FFFF, or the table ends before covering all 65,536 characters. Memory
/// is bounded: 128 KiB, whatever the input.
std::optional<std::vector<char16_t>> expand_upcase_table(std::span<const std::byte> table);

/// The boot sector a Layout describes (BootCode not included).
BootSector boot_sector_from_layout(const Layout& layout, std::uint32_t volume_serial_number,
                                   std::uint8_t percent_in_use) noexcept;

}  // namespace fsimg::exfat
