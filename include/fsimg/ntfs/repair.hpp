// Repairing an NTFS volume in place: the repairs fsimg fsck -a/-p/-y makes
// (docs/fsck-codes.md "Repair"). Each is a copy from a valid twin (into a
// backup structure that no driver reads while the original is sound, or one
// sector, sector 0 from its backup, which reaches the disk whole) or a
// bitmap byte made what the records say, so a repair cut at any write
// leaves the volume as readable as before; no dirty flag is set (setting
// $Volume's would make Windows run chkdsk at its next mount). A dirty flag
// found set is cleared last, when the volume then checks clean.
#pragma once

#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::ntfs {

/// Repairs on `device` what `found` (ntfs::check_volume's findings for this
/// very volume) reports and check::repairs() admits at options.level:
/// - ntfs.mftmirr.differs, ntfs.mftmirr.stale: every record $MFTMirr holds
///   (its data size over the record size, at most the records $MFT holds)
///   rewritten from $MFT's, bytes as stored (fixups included), as ntfsfix
///   rewrites the mirror [FLATCAP files/mftmirr];
/// - ntfs.boot.backup-differs: the backup boot sector (the sector after the
///   volume's total sectors) rewritten from sector 0, when sector 0 is valid;
/// - ntfs.boot.* (signature, OEM ID, a field breaking validate_boot_sector's
///   rules, or $MFT record 0 not where sector 0 says): sector 0 rewritten
///   from the backup boot sector (find_backup_boot_sector) when the backup
///   is valid and $MFT opens through it, as ntfsfix restores it.
/// - ntfs.bitmap.free-in-use (preen), ntfs.bitmap.lost (-y): $Bitmap's bits
///   made what the in-use records' attributes own [FLATCAP files/bitmap];
///   ntfs.mft-bitmap.unmarked (preen), ntfs.mft-bitmap.marked-free (-y):
///   the bits of a non-resident $MFT $BITMAP made the records' in-use flags
///   [FLATCAP attributes/bitmap]. Bits are cleared only when no record,
///   attribute, runlist or attribute-list finding leaves an owner in doubt;
///   each byte is written alone, so a cut leaves every bit old or new.
/// - ntfs.volume.dirty (preen): $VOLUME_INFORMATION's dirty flag cleared
///   (record 3, $MFT then $MFTMirr: ntfs/edit.hpp), last, after the barrier,
///   when a check after the other repairs finds no error or fatal finding
///   and $LogFile is empty or clean (logfile_state), as fsck.fat -a clears
///   its dirty bit and ntfsfix -d clears this one.
/// - ntfs.logfile.unclean, ntfs.logfile.unknown (-y): $LogFile emptied
///   (Editor::empty_logfile) after $Volume's dirty flag is set, which this
///   run leaves set (fsck's next pass clears it when the volume then checks
///   without an error; ntfsfix leaves it for chkdsk).
/// - ntfs.index.stale-entry, missing-entry, extra-entry, entry-mismatch,
///   order, ntfs.tree.orphan (-y): each directory index whose entries are
///   not its children's names rebuilt from them (Editor::rebuild_indexes:
///   copy on write, after $Volume's dirty flag, which the editor clears
///   again when it was clear), when no record, attribute, runlist,
///   attribute-list or $MFT finding leaves an owner in doubt, as chkdsk
///   rebuilds an index and puts an orphan back into its directory.
/// - ntfs.attr.header, ntfs.run.decode, ntfs.record.baad, signature, usa,
///   fixup, first-attribute, bytes-in-use (-y), while no ntfs.mft.* finding
///   puts $MFT itself in doubt: records that cannot be read
///   (CheckOptions::corrupt_records) rewritten with the attributes that
///   decode, or freed when their header cannot be read
///   (Editor::repair_corrupt_records), first: the repairs below read records.
/// - ntfs.record.bytes-allocated, ntfs.record.number (preen),
///   ntfs.record.sequence, flags, base, ntfs.attr.missing-std-info (-y):
///   header fields with one right value set, orphan extension records freed,
///   a $STANDARD_INFORMATION made (Editor::repair_record_fields).
/// A copy is a source only when it keeps every rule of validate_boot_sector
/// and the volume opens through it; when neither copy does, both are left.
/// Nothing else is repaired when $MFT cannot be read. Returns what was done.
/// Throws Error(io) on I/O failures.
std::vector<check::Repair> repair_volume(io::BlockDevice& device, const check::Findings& found,
                                         const check::RepairOptions& options);

}  // namespace fsimg::ntfs
