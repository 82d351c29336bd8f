// Read-only view of an existing FAT volume (boot region level).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fat {

/// The first basic rule a boot sector breaks that makes its geometry
/// underivable (bytes per sector, sectors per cluster, reserved sectors,
/// FAT count, FAT size, total sectors, regions within the total), as a message
/// naming the field and its value; nullopt when the geometry can be derived.
std::optional<std::string> geometry_problem(const BootSector& bs);

/// What the boot region of a FAT volume says.
struct BootRegion {
    BootSector boot;                        ///< sector 0
    std::optional<Layout> layout;           ///< when geometry_problem() is nullopt
    std::optional<std::string> problem;     ///< why layout is missing
    std::optional<FsInfo> fsinfo;           ///< FAT32, when BPB_FSInfo is inside the reserved region
    std::optional<BootSector> backup;       ///< FAT32, when BPB_BkBootSec is inside the reserved region
    bool backup_identical = false;          ///< the backup's 512 bytes equal sector 0's
    std::optional<std::string> root_label;  ///< the root directory's volume-label entry (11 chars, as stored)
    std::uint64_t device_bytes = 0;         ///< size of the device the volume was read from
};

/// Reads sector 0 (and FSInfo, backup boot sector, the first root directory
/// sector or cluster) with every offset checked against the device.
/// Throws Error(not_this_fs) when sector 0 is not a FAT boot sector (no jump
/// instruction, or "EXFAT   "/"NTFS    " OEM names), Error(corrupt) when the
/// device is shorter than one sector.
BootRegion read_boot_region(const io::BlockDevice& device);

/// One BPB field for dump: its spec name, byte offset, width and value.
struct BootField {
    std::string name;          ///< "BPB_BytsPerSec"
    std::size_t offset = 0;    ///< byte offset in the boot sector
    std::size_t width = 0;     ///< bytes
    std::uint64_t number = 0;  ///< value, for numeric fields
    std::string text;          ///< value, for string fields (as stored)
    bool is_text = false;
};
/// Every field of the boot sector in on-disk order, for the shape it has.
std::vector<BootField> boot_fields(const BootSector& bs);

}  // namespace fsimg::fat
