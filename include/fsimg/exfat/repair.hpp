// Repairing an exFAT volume in place: the repairs fsimg fsck -a/-p/-y makes
// (docs/fsck-codes.md "Repair"). VolumeDirty is set first and cleared last
// [EXFAT §3.1.13.2], in the main boot sector only: VolumeFlags and
// PercentInUse are left out of the boot checksum so that they can be
// changed alone [EXFAT §3.4], and the backup boot region is not updated.
#pragma once

#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat {

/// What a check collects for repair_volume (CheckOptions' collectors, every
/// one on), so that the repair of the volume that check read needs no walk
/// of its own: fsck -y walked a 100,000-file volume three times (the check,
/// the repair's walk, the check after), now twice.
struct CollectedFixes {
    std::vector<BitmapFix> bitmap;
    std::vector<SetFix> sets;
    std::vector<ChainFix> chains;
    std::vector<RenameFix> renames;
    std::vector<EntryFix> entries;
    /// Points every collector of `o` at these lists (emptied first).
    void collect_with(CheckOptions& o) {
        *this = {};
        o.bitmap_fixes = &bitmap;
        o.set_fixes = &sets;
        o.chain_fixes = &chains;
        o.renames = &renames;
        o.entry_fixes = &entries;
    }
};

/// Repairs on `device` what `found` (exfat::check_volume's findings for this
/// very volume) reports and check::repairs() admits at options.level:
/// - the main boot region from a whole backup region, or the backup from a
///   whole main one (exfat.boot.checksum, main-zeroed, signature, jump_boot;
///   backup-checksum, backup-differs) [EXFAT §3.1];
/// - exfat.bitmap.free-in-use (preen) and exfat.bitmap.lost (-y, only when no
///   chain, directory or stream damage leaves an owner in doubt): the
///   allocation bitmap bits made what the walk owns [EXFAT §7.1]; with
///   options.salvage the lost clusters are kept instead, each run of
///   consecutive ones saved as a NoFatChain file /LOST+FOUND/FILEnnnnnnn.CHK
///   through the editor (fsck.exfat -s's convention), names and room found
///   before the first write (Error, nothing written, when /LOST+FOUND is a
///   file or the volume has no room);
/// - exfat.set.name-hash (preen when the SetChecksum was right, which is then
///   recomputed with it) and exfat.set.checksum (-y): NameHash from the name
///   up-cased through the volume's table [EXFAT §7.6.4], then SetChecksum over
///   the set [EXFAT §6.3.3], also when another error names the file (the
///   next pass walks the set and repairs that); where the bitmap calls free
///   a tail of a NoFatChain extent after marked clusters, the DataLength is
///   first cut to the marked ones (SetFix::data_length); a set whose extent
///   the bitmap marks not at all is left, and every NameHash when the
///   up-case table is damaged;
/// - entry fixes (-y, exfat::EntryFix): broken sets, orphan and misplaced
///   entries, FirstCluster without data, and end-of-directory entries that
///   in-use entries follow (made type 0x7F, an unused entry that does not
///   end the directory [EXFAT §6.2.1]);
/// - exfat.boot.percent_in_use, exfat.bitmap.percent-in-use: PercentInUse set
///   to the bitmap's share, rounded down (`summary.marked_clusters` of
///   `summary.cluster_count`) [EXFAT §3.1, PercentInUse];
/// - exfat.boot.dirty: VolumeDirty cleared, last, and only when no error is
///   left unrepaired.
/// Nothing is repaired when sector 0 does not say "EXFAT   " (the volume is
/// read through its backup region: the main one needs a repair of its own).
/// `collected`, when given, is what the check that found `found` collected
/// on this very volume (unchanged since): the repair then walks nothing
/// itself, except after rewriting a boot region in this pass.
/// `walk_kept`, when given, is set to whether the repair wrote nothing a
/// walk of the tree reads (only allocation bitmap bytes, VolumeFlags and
/// PercentInUse): a check after it may then take the walk of the check
/// before (CheckOptions::reuse_walk).
/// Returns what was done, in order. Throws Error(io) on write failures.
std::vector<check::Repair> repair_volume(io::BlockDevice& device, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options,
                                         const CollectedFixes* collected = nullptr,
                                         bool* walk_kept = nullptr);

}  // namespace fsimg::exfat
