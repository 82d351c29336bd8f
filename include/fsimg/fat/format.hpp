// Writes an empty FAT12/16/32 filesystem from a Layout.
#pragma once

#include <cstdint>
#include <string>

#include "fsimg/fat/layout.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fat {

struct FormatOptions {
    std::uint32_t volume_id = 0;  ///< BS_VolID
    std::string label;  ///< as given by the user; "" = no label ("NO NAME" in the BPB, no root entry)
    std::int64_t timestamp_unix = 0;  ///< for the volume-label directory entry (UTC)
    /// True when the device already reads as zeros (a fresh sparse file): only
    /// non-zero metadata is written. False (a reused device): the FATs, the
    /// root directory and the reserved region are zeroed first.
    bool device_is_zeroed = true;
};

/// Writes boot sector (with a "not a bootable disk" stub), FSInfo and backup
/// boot record (FAT32), both FATs (entries 0, 1 and the FAT32 root cluster;
/// the rest left as holes on a zeroed device), the root directory (fixed area
/// or cluster `root_cluster`) with the volume-label entry when a label is set.
///
/// Before writing anything it re-derives the geometry from the encoded boot
/// sector (the reader's code path) and throws Error(unsupported) if it differs
/// from `layout`, or Error(usage) when the label is invalid (see
/// normalize_volume_label). Throws Error(io) on write failures and
/// Error(usage) when the device is smaller than layout.volume_bytes().
void format_volume(io::BlockDevice& device, const Layout& layout, const FormatOptions& options);

/// The volume ID other mkfs tools would derive from a time: the FAT
/// convention of adding date and time words [FATGEN "volume serial number"
/// is free-form; DOS and mkfs.fat mix seconds and microseconds].
std::uint32_t volume_id_from_time(std::int64_t unix_seconds, std::uint32_t nanoseconds) noexcept;

}  // namespace fsimg::fat
