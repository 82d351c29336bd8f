// Read-only view of an exFAT image: so far, the boot region and the root
// directory's system entries (what `dump` shows). Every offset is checked
// against the device before reading; nothing is trusted from the image.
//
// Facts: ../shared/docs/formats.md §2.1-2.3, §2.5-2.7 [EXFAT §2-3, §7.1-7.3].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fsimg/exfat/structs.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat {

/// One boot region (main at sector 0, backup at sector 12) as read.
struct BootRegionCopy {
    BootSector boot;
    std::uint32_t checksum_computed = 0;  ///< boot_checksum of sectors 0..10
    std::uint32_t checksum_stored = 0;    ///< first word of sector 11
    bool checksum_ok = false;             ///< every word of sector 11 equals checksum_computed
    unsigned extended_signatures_ok = 0;  ///< of the 8 extended boot sectors
    /// Sector 9: "null" (all zero: ten null parameter structures), "0xFF" (what
    /// exfatprogs before 1.2.8 wrote), or "parameters" (anything else).
    std::string oem_parameters;
};

struct BootRegion {
    std::uint32_t bytes_per_sector = 512;  ///< 2^BytesPerSectorShift, or 512 when the shift is out of 9..12
    BootRegionCopy main;
    std::optional<BootRegionCopy> backup;  ///< when the device holds 24 sectors
    /// The backup's 12 sectors equal the main's, VolumeFlags and PercentInUse aside.
    bool backup_identical = false;
    std::vector<BootProblem> problems;  ///< validate_boot_sector(main.boot)
    std::uint64_t device_bytes = 0;
    /// Volume bytes beyond the device (a truncated image); 0 when it fits.
    std::uint64_t missing_bytes = 0;

    // The root directory's system entries, from its first cluster (read only
    // when the boot sector is valid and the cluster lies inside the device).
    std::optional<VolumeLabelEntry> label;
    std::optional<AllocationBitmapEntry> bitmap;
    std::optional<UpcaseTableEntry> upcase;
    /// TableChecksum recomputed over the up-case table's bytes, following its
    /// FAT chain (bounded: at most 128 KiB + one cluster, every link checked).
    std::optional<std::uint32_t> upcase_checksum_computed;
    std::optional<std::string> root_problem;  ///< why the root entries could not be read
};

/// Reads both boot regions and the root's system entries. Throws
/// Error(not_this_fs) when sector 0 does not say "EXFAT   " at byte 3,
/// Error(corrupt) when the device is shorter than one boot region.
/// Memory is bounded (a few boot regions, at most 64 KiB of root, 128 KiB of
/// up-case table) whatever the fields say.
BootRegion read_boot_region(const io::BlockDevice& device);

/// One boot-sector field for dump: its spec name, byte offset, width, value.
struct BootField {
    std::string name;          ///< "BytesPerSectorShift"
    std::size_t offset = 0;    ///< byte offset in the boot sector
    std::size_t width = 0;     ///< bytes
    std::uint64_t number = 0;  ///< value, for numeric fields
    std::string text;          ///< value, for JumpBoot/FileSystemName/MustBeZero
    bool is_text = false;
};
/// Every field of Table 4 in on-disk order (BootCode and ExcessSpace left out).
std::vector<BootField> boot_fields(const BootSector& bs);

/// A volume label entry as UTF-8 (CharacterCount clamped to 11; unpaired
/// surrogates become U+FFFD).
std::string label_text(const VolumeLabelEntry& entry);

}  // namespace fsimg::exfat
