// fsck's face: check whatever filesystem a volume holds.
#pragma once

#include <functional>
#include <string_view>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/placement.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/core/progress.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::fs {

struct RepairHints;  // fs/repair.hpp

struct CheckOptions {
    /// Called with each path the walk visits ("/", "/DCIM/", "/DCIM/A.JPG"), for -v.
    std::function<void(std::string_view path)> on_walk;
    /// Advanced over long passes (FAT: the FAT copies compared); nullable.
    core::Progress* progress = nullptr;
    /// Set when the volume is a partition of a disk image (IMAGE@N): size
    /// and start findings then name the partition (check/placement.hpp).
    std::optional<check::Placement> placement;
    /// When set (fsck -a/-p/-y), emptied, then given what the check collects
    /// for repair_volume on the volume it reads (exFAT: the fixes the walk
    /// finds), so that the repair need not walk the volume again.
    RepairHints* repair_hints = nullptr;
};

/// The result of one check: what was detected and what the checker counted.
struct Checked {
    Detection detection;
    check::Summary summary;
};

/// Detects the filesystem on `volume` (detect()) and runs its checker
/// (fat::check_volume, exfat::check_volume, ntfs::check_volume), appending
/// every finding to `out`. Read-only. A volume read through its backup boot
/// sector is checked through it, the damaged main sector reported first.
/// Throws as detect() (Error(not_this_fs) naming what the volume holds),
/// Error(io) when the device cannot be read; damage inside never throws.
Checked check_volume(const io::BlockDevice& volume, check::Findings& out, const CheckOptions& options = {});

/// Where the partition `v` selected lies in its disk image, for
/// CheckOptions::placement (sizes in bytes: the table's LBAs times its sector
/// size); nullopt for a bare filesystem image.
std::optional<check::Placement> placement_of(const io::OpenedVolume& v);

/// Appends what is wrong with a disk's partition table (PartitionTable::
/// problems: part.* codes, docs/fsck-codes.md) to `out`, located at the table
/// sector or entry concerned (image byte offsets).
void add_table_findings(const io::PartitionTable& table, check::Findings& out);

}  // namespace fsimg::fs
