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
#include "fsimg/fat/check.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fat {

/// What a check collects for repair_volume (CheckOptions' collectors, every
/// one on), so that the repair of the volume that check read needs no walk
/// of its own: fsck -y walked a 100,000-file volume up to five times (the
/// check, up to three walks of the repair's, the check after), now twice.
struct CollectedFixes {
    std::vector<ClusterRun> lost;
    std::vector<ChainTrim> trims;
    std::vector<SizeTrim> sizes;
    std::vector<ChainCut> cuts;
    std::vector<NameFix> names;
    std::vector<DotFix> dots;
    std::vector<LfnFix> lfns;
    std::vector<LabelFix> labels;
    /// Points every collector of `o` at these lists (emptied first).
    void collect_with(CheckOptions& o) {
        *this = {};
        o.lost = &lost;
        o.trims = &trims;
        o.sizes = &sizes;
        o.cuts = &cuts;
        o.names = &names;
        o.dots = &dots;
        o.lfn_fixes = &lfns;
        o.label_fixes = &labels;
    }
};

/// Repairs on `device` what `found` (fat::check_volume's findings for this
/// very volume, unchanged since) reports and check::repairs() admits at
/// options.level:
/// - fat.fsinfo.free-count: FSI_Free_Count set to the FAT's free entries
///   (`summary.free_clusters`), as fsck.fat -a does;
/// - fat.fsinfo.next-free: FSI_Nxt_Free set to 0xFFFFFFFF, "no hint"
///   [FATGEN "FSInfo"];
/// - the boot sector, from the copy that validates (boot_copy_problem:
///   jump, 55 AA, geometry, agreement with the volume), decided before the
///   first write: fat.boot.signature, fat.boot.main-damaged or
///   fat.boot.backup-differs with a sector 0 that does not validate and a
///   FAT32 backup boot sector that does: sector 0 rewritten from the backup;
///   fat.boot.backup-differs with a sector 0 that validates: the backup
///   rewritten from sector 0, which every driver reads; at level `all`,
///   fat.boot.signature when 55 AA is all sector 0 lacks and no backup
///   validates: the signature written. When neither copy validates, both are
///   left and the error stays (so does the dirty flag);
/// - fat.chain.lost (-y, only when no chain or directory damage leaves an
///   owner in doubt): the lost clusters freed in every FAT; with
///   options.salvage each lost chain (followed by its FAT 1 links, cut at
///   joins, loops and 4 GiB - 1 bytes) saved instead as a file
///   /FOUND.nnn/FILEnnnn.CHK through the editor (chkdsk's convention), names
///   and room found before the first write (Error, nothing written, when
///   there are none);
/// - fat.boot.dirty / fat.fat.dirty: BS_Reserved1's dirty bit cleared and
///   FAT[1]'s clean-shutdown bit set in every FAT copy, last, and only when
///   no error is left unrepaired (a volume with errors stays marked dirty).
/// Returns what was done, in order. Throws Error(io) on write failures and
/// Error(corrupt) when the boot sector gives no geometry.
/// `collected`, when given, is what the check that found `found` collected
/// on this very volume (unchanged since, read through sector 0): the repair
/// then walks nothing itself.
std::vector<check::Repair> repair_volume(io::BlockDevice& device, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options,
                                         const CollectedFixes* collected = nullptr);

}  // namespace fsimg::fat
