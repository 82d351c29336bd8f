// Repairing a FAT12/16/32 volume in place: the repairs fsimg fsck -a/-p/-y
// makes (docs/fsck-codes.md "Repair"), each ordered as the editor orders its
// writes (fat/edit.hpp): the volume is marked dirty first (FAT[1]'s
// clean-shutdown bit cleared, FAT 1 first), repaired, and marked clean last,
// so that a repair cut at any write leaves a volume no worse than before
// plus the dirty flag.
#pragma once

#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fat {

/// Repairs on `device` what `found` (fat::check_volume's findings for this
/// very volume, unchanged since) reports and check::repairs() admits at
/// options.level:
/// - fat.fsinfo.free-count: FSI_Free_Count set to the FAT's free entries
///   (`summary.free_clusters`), as fsck.fat -a does;
/// - fat.fsinfo.next-free: FSI_Nxt_Free set to 0xFFFFFFFF, "no hint"
///   [FATGEN "FSInfo"];
/// - fat.boot.backup-differs: the FAT32 backup boot sector rewritten from
///   sector 0, which every driver reads (a copy from the valid twin);
/// - fat.boot.dirty / fat.fat.dirty: BS_Reserved1's dirty bit cleared and
///   FAT[1]'s clean-shutdown bit set in every FAT copy, last, and only when
///   no error is left unrepaired (a volume with errors stays marked dirty).
/// Returns what was done, in order. Throws Error(io) on write failures and
/// Error(corrupt) when the boot sector gives no geometry.
std::vector<check::Repair> repair_volume(io::BlockDevice& device, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options);

}  // namespace fsimg::fat
