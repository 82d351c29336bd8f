// fsck -a/-p/-y's face: repair whatever filesystem a checked volume holds.
#pragma once

#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fs {

/// Repairs `volume` (writable) after check_volume() found `found` on it and
/// returned `checked`: the filesystem's repair_volume (fat/repair.hpp,
/// exfat/repair.hpp, ntfs/repair.hpp; a volume read through its backup boot
/// sector is left as it is: its main boot sector needs a repair of its own). Returns what was done, in order;
/// empty when nothing was. Throws Error(io) on write failures.
std::vector<check::Repair> repair_volume(io::BlockDevice& volume, const Checked& checked,
                                         const check::Findings& found, const check::RepairOptions& options);

}  // namespace fsimg::fs
