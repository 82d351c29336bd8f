// Where a checked volume lies in its disk image, for the checks that compare
// a filesystem with the partition holding it (docs/fsck-codes.md, "Notes on
// the partition table codes").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fsimg::check {

/// A volume checked through a partition of a disk image (IMAGE@N). The
/// checker's device is the part of the partition the image holds.
struct Placement {
    unsigned partition = 0;               ///< N of IMAGE@N, as the table numbers it
    std::uint64_t start_bytes = 0;        ///< where the partition starts, in bytes from the image's start
    std::uint64_t entry_bytes = 0;        ///< the partition's size as its table entry gives it
    std::uint64_t image_bytes_after = 0;  ///< bytes of the image after the entry's end
    /// MBR logical partitions: the start relative to the EBR holding the
    /// entry, which DOS recorded as the hidden sectors of a logical drive
    /// (TestDisk accepts both); 0 otherwise.
    std::uint64_t ebr_relative_start_bytes = 0;
};

/// What the volume's device is called in messages: "the image" without a
/// placement, "partition 2", or "the image's part of partition 2" when the
/// image ends inside the partition (device_bytes < entry_bytes).
std::string device_name(const std::optional<Placement>& placement, std::uint64_t device_bytes);

/// The end of a sentence saying `missing_bytes` of the filesystem lie past
/// its device's end, which names the partition as what is short when the
/// table entry ends inside the image ("; partition 2 is 2048 sectors of 512
/// bytes shorter than its filesystem (the image holds the missing bytes after
/// the partition's end: its table entry is too short)"); empty without a
/// placement or when the image ends first (the image is what is short).
std::string partition_shortfall(const std::optional<Placement>& placement, std::uint64_t device_bytes,
                                std::uint64_t missing_bytes, std::uint32_t bytes_per_sector);

/// Whether a boot sector's record of where its volume starts (FAT
/// BPB_HiddSec, exFAT PartitionOffset, NTFS hidden sectors: `recorded`
/// sectors of `bytes_per_sector`) disagrees with the partition holding it.
/// 0 means "not recorded" (exFAT spec §3.1.6: implementations shall ignore
/// it; FATGEN: zero on unpartitioned media) and never disagrees; nor does any
/// value without a placement (a bare image may be a copy of a partition); a
/// logical partition's start relative to its EBR is accepted too.
bool start_disagrees(const std::optional<Placement>& placement, std::uint64_t recorded,
                     std::uint32_t bytes_per_sector) noexcept;

}  // namespace fsimg::check
