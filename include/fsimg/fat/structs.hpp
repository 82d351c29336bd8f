// FAT12/16/32 on-disk records: boot sector (BPB), FSInfo, directory entries.
//
// Offsets and names follow Microsoft's "FAT: General Overview of On-Disk
// Format" v1.03 [FATGEN]; see docs/formats.md §1.2, §1.5-1.9.
// Decoding never judges values: validation is a separate step.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fsimg/fat/layout.hpp"

namespace fsimg::fat {

inline constexpr std::size_t kBootSectorSize = 512;  ///< the BPB part; a sector may be larger
inline constexpr std::size_t kDirEntrySize = 32;

namespace off {                                  // [FATGEN] "Boot Sector and BPB"
inline constexpr std::size_t jmpBoot = 0x00;     // 3 bytes
inline constexpr std::size_t OEMName = 0x03;     // 8 bytes
inline constexpr std::size_t BytsPerSec = 0x0B;  // u16
inline constexpr std::size_t SecPerClus = 0x0D;  // u8
inline constexpr std::size_t RsvdSecCnt = 0x0E;  // u16
inline constexpr std::size_t NumFATs = 0x10;     // u8
inline constexpr std::size_t RootEntCnt = 0x11;  // u16
inline constexpr std::size_t TotSec16 = 0x13;    // u16
inline constexpr std::size_t Media = 0x15;       // u8
inline constexpr std::size_t FATSz16 = 0x16;     // u16
inline constexpr std::size_t SecPerTrk = 0x18;   // u16
inline constexpr std::size_t NumHeads = 0x1A;    // u16
inline constexpr std::size_t HiddSec = 0x1C;     // u32
inline constexpr std::size_t TotSec32 = 0x20;    // u32
// FAT12/16 extended BPB
inline constexpr std::size_t DrvNum16 = 0x24;      // u8
inline constexpr std::size_t Reserved1_16 = 0x25;  // u8 (Windows NT dirty flags)
inline constexpr std::size_t BootSig16 = 0x26;     // u8, 0x29
inline constexpr std::size_t VolID16 = 0x27;       // u32
inline constexpr std::size_t VolLab16 = 0x2B;      // 11 bytes
inline constexpr std::size_t FilSysType16 = 0x36;  // 8 bytes
inline constexpr std::size_t BootCode16 = 0x3E;    // to 0x1FE
// FAT32 extended BPB
inline constexpr std::size_t FATSz32 = 0x24;       // u32
inline constexpr std::size_t ExtFlags = 0x28;      // u16
inline constexpr std::size_t FSVer = 0x2A;         // u16
inline constexpr std::size_t RootClus = 0x2C;      // u32
inline constexpr std::size_t FSInfo = 0x30;        // u16
inline constexpr std::size_t BkBootSec = 0x32;     // u16
inline constexpr std::size_t Reserved32 = 0x34;    // 12 bytes
inline constexpr std::size_t DrvNum32 = 0x40;      // u8
inline constexpr std::size_t Reserved1_32 = 0x41;  // u8
inline constexpr std::size_t BootSig32 = 0x42;     // u8, 0x29
inline constexpr std::size_t VolID32 = 0x43;       // u32
inline constexpr std::size_t VolLab32 = 0x47;      // 11 bytes
inline constexpr std::size_t FilSysType32 = 0x52;  // 8 bytes
inline constexpr std::size_t BootCode32 = 0x5A;    // to 0x1FE
inline constexpr std::size_t Signature = 0x1FE;    // 0x55 0xAA
}  // namespace off
static_assert(off::Signature + 2 == kBootSectorSize);

/// The decoded boot sector: every BPB/EBPB field, native integers.
/// `is_fat32_shape` tells which extended BPB was decoded: Windows and Linux
/// both take FAT32 iff BPB_FATSz16 == 0 (formats.md §1.3).
struct BootSector {
    std::array<std::uint8_t, 3> jmp_boot{};  // BS_jmpBoot
    std::string oem_name;                    // BS_OEMName (8 bytes, as stored)
    std::uint16_t bytes_per_sector = 0;      // BPB_BytsPerSec
    std::uint8_t sectors_per_cluster = 0;    // BPB_SecPerClus
    std::uint16_t reserved_sectors = 0;      // BPB_RsvdSecCnt
    std::uint8_t num_fats = 0;               // BPB_NumFATs
    std::uint16_t root_entry_count = 0;      // BPB_RootEntCnt
    std::uint16_t total_sectors_16 = 0;      // BPB_TotSec16
    std::uint8_t media = 0;                  // BPB_Media
    std::uint16_t fat_size_16 = 0;           // BPB_FATSz16
    std::uint16_t sectors_per_track = 0;     // BPB_SecPerTrk
    std::uint16_t num_heads = 0;             // BPB_NumHeads
    std::uint32_t hidden_sectors = 0;        // BPB_HiddSec
    std::uint32_t total_sectors_32 = 0;      // BPB_TotSec32
    bool is_fat32_shape = false;             // fat_size_16 == 0
    // FAT32 only
    std::uint32_t fat_size_32 = 0;         // BPB_FATSz32
    std::uint16_t ext_flags = 0;           // BPB_ExtFlags
    std::uint16_t fs_version = 0;          // BPB_FSVer
    std::uint32_t root_cluster = 0;        // BPB_RootClus
    std::uint16_t fsinfo_sector = 0;       // BPB_FSInfo
    std::uint16_t backup_boot_sector = 0;  // BPB_BkBootSec
    // Both shapes (at different offsets)
    std::uint8_t drive_number = 0;    // BS_DrvNum
    std::uint8_t reserved1 = 0;       // BS_Reserved1 (NT dirty flags)
    std::uint8_t boot_signature = 0;  // BS_BootSig (0x29: next three valid)
    std::uint32_t volume_id = 0;      // BS_VolID
    std::string volume_label;         // BS_VolLab (11 bytes, as stored)
    std::string fs_type;              // BS_FilSysType (8 bytes, as stored)
    std::uint16_t signature = 0;      // bytes 510..511 as a LE u16 (0xAA55 when valid)

    std::uint32_t fat_size() const noexcept { return fat_size_16 != 0 ? fat_size_16 : fat_size_32; }
    std::uint32_t total_sectors() const noexcept {
        return total_sectors_16 != 0 ? total_sectors_16 : total_sectors_32;
    }
};

using BootSpan = std::span<const std::byte, kBootSectorSize>;
using MutableBootSpan = std::span<std::byte, kBootSectorSize>;

BootSector decode_boot_sector(BootSpan sector) noexcept;
/// Encodes every field (the FAT32 EBPB when is_fat32_shape, else the
/// FAT12/16 one), the signature 0x55AA, and leaves the boot code area as is.
void encode_boot_sector(const BootSector& bs, MutableBootSpan sector) noexcept;

/// A Layout's BPB fields as a BootSector (the inverse of layout_from_boot_sector).
BootSector boot_sector_from_layout(const Layout& layout, std::uint32_t volume_id, std::string_view label11);
/// The Layout a boot sector describes (type from the BPB shape and the cluster
/// count, derived fields filled). Does not validate: divisions by zero are
/// avoided by returning cluster_count 0 for impossible values.
Layout layout_from_boot_sector(const BootSector& bs) noexcept;

/// Writes the jump instruction and a boot program that prints
/// "This is not a bootable disk." and waits for a key, like format tools do,
/// into the boot code area of the shape (0x3E FAT12/16, 0x5A FAT32).
void write_boot_stub(MutableBootSpan sector, bool fat32_shape) noexcept;

// FSInfo [FATGEN "FAT32 FSInfo Sector Structure"]
namespace fsinfo_off {
inline constexpr std::size_t LeadSig = 0;     // 0x41615252
inline constexpr std::size_t StrucSig = 484;  // 0x61417272
inline constexpr std::size_t Free_Count = 488;
inline constexpr std::size_t Nxt_Free = 492;
inline constexpr std::size_t TrailSig = 508;  // 0xAA550000
}  // namespace fsinfo_off
inline constexpr std::uint32_t kFsInfoLeadSig = 0x41615252;
inline constexpr std::uint32_t kFsInfoStrucSig = 0x61417272;
inline constexpr std::uint32_t kFsInfoTrailSig = 0xAA550000;
inline constexpr std::uint32_t kFsInfoUnknown = 0xFFFFFFFF;

struct FsInfo {
    std::uint32_t lead_signature = kFsInfoLeadSig;
    std::uint32_t struct_signature = kFsInfoStrucSig;
    std::uint32_t free_count = kFsInfoUnknown;  ///< FSI_Free_Count (clusters)
    std::uint32_t next_free = kFsInfoUnknown;   ///< FSI_Nxt_Free (cluster hint)
    std::uint32_t trail_signature = kFsInfoTrailSig;
};
FsInfo decode_fsinfo(BootSpan sector) noexcept;
void encode_fsinfo(const FsInfo& info, MutableBootSpan sector) noexcept;

// FAT entries [FATGEN "FAT Data Structure"]
inline constexpr std::uint32_t kFat32Mask = 0x0FFFFFFF;
/// End-of-chain value written for the type (FFF, FFFF, 0FFFFFFF).
constexpr std::uint32_t end_of_chain(FatType t) noexcept {
    return t == FatType::fat12 ? 0xFFF : t == FatType::fat16 ? 0xFFFF : 0x0FFFFFFF;
}
/// Bad-cluster value (FF7, FFF7, 0FFFFFF7).
constexpr std::uint32_t bad_cluster(FatType t) noexcept {
    return t == FatType::fat12 ? 0xFF7 : t == FatType::fat16 ? 0xFFF7 : 0x0FFFFFF7;
}
/// FAT[0]: media byte in the low 8 bits, all other (used) bits set.
constexpr std::uint32_t fat0_value(FatType t, std::uint8_t media) noexcept {
    return (end_of_chain(t) & ~0xFFu) | media;
}
/// FAT[1] as a fresh clean volume has it: end of chain; on FAT16/32 the
/// clean-shutdown and no-hard-error bits are part of it (all ones).
constexpr std::uint32_t fat1_value(FatType t) noexcept { return end_of_chain(t); }

/// Reads/writes entry n of a FAT held in `fat` (bytes of one FAT copy).
/// FAT12 entries straddle bytes: entry n is at byte n + n/2 [FATGEN].
/// FAT32 reads return the low 28 bits; writes preserve the top 4 bits.
/// Throw FormatError when the entry lies outside the span.
std::uint32_t get_fat_entry(std::span<const std::byte> fat, FatType type, std::uint32_t n);
void set_fat_entry(std::span<std::byte> fat, FatType type, std::uint32_t n, std::uint32_t value);

// Directory entries [FATGEN "FAT Directory Structure"]
namespace dir_off {
inline constexpr std::size_t Name = 0;  // 11 bytes
inline constexpr std::size_t Attr = 11;
inline constexpr std::size_t NTRes = 12;
inline constexpr std::size_t CrtTimeTenth = 13;
inline constexpr std::size_t CrtTime = 14;
inline constexpr std::size_t CrtDate = 16;
inline constexpr std::size_t LstAccDate = 18;
inline constexpr std::size_t FstClusHI = 20;
inline constexpr std::size_t WrtTime = 22;
inline constexpr std::size_t WrtDate = 24;
inline constexpr std::size_t FstClusLO = 26;
inline constexpr std::size_t FileSize = 28;
}  // namespace dir_off
static_assert(dir_off::FileSize + 4 == kDirEntrySize);

// Long-name entries [FATGEN "FAT Long Directory Entries"]
namespace lfn_off {
inline constexpr std::size_t Ord = 0;         // sequence number, 0x40 on the last (first stored) entry
inline constexpr std::size_t Name1 = 1;       // 5 UTF-16 units
inline constexpr std::size_t Attr = 11;       // 0x0F
inline constexpr std::size_t Type = 12;       // 0
inline constexpr std::size_t Chksum = 13;     // lfn_checksum of the short entry's DIR_Name
inline constexpr std::size_t Name2 = 14;      // 6 UTF-16 units
inline constexpr std::size_t FstClusLO = 26;  // 0
inline constexpr std::size_t Name3 = 28;      // 2 UTF-16 units
}  // namespace lfn_off
static_assert(lfn_off::Name3 + 4 == kDirEntrySize);

inline constexpr std::uint8_t kAttrReadOnly = 0x01;
inline constexpr std::uint8_t kAttrHidden = 0x02;
inline constexpr std::uint8_t kAttrSystem = 0x04;
inline constexpr std::uint8_t kAttrVolumeId = 0x08;
inline constexpr std::uint8_t kAttrDirectory = 0x10;
inline constexpr std::uint8_t kAttrArchive = 0x20;
inline constexpr std::uint8_t kAttrLongName = 0x0F;
/// DIR_Name[0] of a deleted (free) entry [FATGEN "FAT Directory Structure"].
inline constexpr std::uint8_t kDirEntryDeleted = 0xE5;

struct DirEntry {
    std::array<std::uint8_t, 11> name{};  // DIR_Name, space padded
    std::uint8_t attr = 0;                // DIR_Attr
    std::uint8_t nt_res = 0;              // DIR_NTRes (0x08 base lower, 0x10 ext lower)
    std::uint8_t crt_time_tenth = 0;      // DIR_CrtTimeTenth (10 ms units, 0..199)
    std::uint16_t crt_time = 0;           // DIR_CrtTime
    std::uint16_t crt_date = 0;           // DIR_CrtDate
    std::uint16_t lst_acc_date = 0;       // DIR_LstAccDate
    std::uint16_t wrt_time = 0;           // DIR_WrtTime
    std::uint16_t wrt_date = 0;           // DIR_WrtDate
    std::uint32_t first_cluster = 0;      // DIR_FstClusHI << 16 | DIR_FstClusLO
    std::uint32_t file_size = 0;          // DIR_FileSize
};
using DirEntrySpan = std::span<const std::byte, kDirEntrySize>;
DirEntry decode_dir_entry(DirEntrySpan e) noexcept;
void encode_dir_entry(const DirEntry& d, std::span<std::byte, kDirEntrySize> e) noexcept;

/// The LFN checksum of an 11-byte short name: rotate right, add [FATGEN §7].
std::uint8_t lfn_checksum(const std::array<std::uint8_t, 11>& short_name) noexcept;

/// FAT date/time fields [FATGEN "Date and Time Formats"]: date bits 0-4 day,
/// 5-8 month, 9-15 years since 1980; time bits 0-4 seconds/2, 5-10 minutes,
/// 11-15 hours. Unix seconds are clamped to 1980-01-01..2107-12-31 23:59:58
/// and rounded down to 2 seconds; `tenth` gets the 10 ms remainder (0..199).
struct FatTimestamp {
    std::uint16_t date = 0;
    std::uint16_t time = 0;
    std::uint8_t tenth = 0;
};
FatTimestamp fat_timestamp_from_unix(std::int64_t unix_seconds) noexcept;
/// Inverse (interpreting the fields as UTC); nullopt-like -1 on an invalid date.
std::int64_t unix_from_fat_timestamp(std::uint16_t date, std::uint16_t time) noexcept;

/// Validates a volume label for BS_VolLab and the root label entry: at most
/// 11 bytes, printable ASCII, none of the characters FAT short names forbid
/// ("*+,./:;<=>?[\]| and control characters). Returns it upper-cased and
/// space-padded to 11. Throws Error(usage) naming the label and the
/// offending character otherwise. An empty label gives "NO NAME    ".
std::string normalize_volume_label(std::string_view label);

}  // namespace fsimg::fat
