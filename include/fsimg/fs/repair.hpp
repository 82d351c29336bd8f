// fsck -a/-p/-y's face: repair whatever filesystem a checked volume holds.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/exfat/repair.hpp"
#include "fsimg/fat/repair.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fs {

/// What a check collected for the repair of the volume it read
/// (CheckOptions::repair_hints): valid until the volume changes.
struct RepairHints {
    std::optional<exfat::CollectedFixes> exfat;
    std::optional<fat::CollectedFixes> fat;
    /// exFAT: the last check's walk of the tree, and whether the volume has
    /// changed since in nothing that walk read (set by repair_volume), so
    /// that the check after a repair of bitmap bits and flags alone takes it
    /// instead of walking again (exfat::CheckOptions::reuse_walk).
    std::shared_ptr<exfat::WalkSnapshot> exfat_walk;
    bool exfat_walk_current = false;
};

/// Repairs `volume` (writable) after check_volume() found `found` on it and
/// returned `checked`: the filesystem's repair_volume (fat/repair.hpp,
/// exfat/repair.hpp, ntfs/repair.hpp; a volume read through its backup boot
/// sector is left as it is: its main boot sector needs a repair of its own). `hints`: what that
/// check collected (CheckOptions::repair_hints), when the volume has not changed since.
/// Returns what was done, in order; empty when nothing was. Throws Error(io) on write failures.
std::vector<check::Repair> repair_volume(io::BlockDevice& volume, const Checked& checked,
                                         const check::Findings& found, const check::RepairOptions& options,
                                         RepairHints* hints = nullptr);

}  // namespace fsimg::fs
