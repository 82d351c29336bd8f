// fsck's face: check whatever filesystem a volume holds.
#pragma once

#include <functional>
#include <string_view>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/core/progress.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fs {

struct CheckOptions {
    /// Called with each path the walk visits ("/", "/DCIM/", "/DCIM/A.JPG"), for -v.
    std::function<void(std::string_view path)> on_walk;
    /// Advanced over long passes (FAT: the FAT copies compared); nullable.
    core::Progress* progress = nullptr;
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

}  // namespace fsimg::fs
