// fsck for NTFS: walks a volume in passes and reports Findings, with the
// same Finding type, codes registry and exit codes as the FAT and exFAT
// checkers (fat/check.hpp, exfat/check.hpp).
//
// Passes (each in its own src/ntfs/check_*.cpp):
//  1. boot (check_boot.cpp): every boot-sector rule (validate_boot_sector,
//     formats.md §3.1); when sector 0 is broken the backup boot sector (the
//     volume's last sector) stands in; main vs backup; the geometry against
//     the image size (a truncated image says how many bytes are missing);
//     $MFT opened through record 0 (a record 0 that cannot be read is fatal);
//     $MFTMirr against the first records of $MFT (§3.4);
//  2. records (check_records.cpp): every MFT record the $MFT bitmap or its
//     own header calls in use: signature FILE/BAAD, update sequence array
//     and fixups, sequence number, bytes in use/allocated, first attribute
//     offset, flags, base reference, attribute headers and lengths
//     (formats.md §3.4, §3.5), attribute instances; non-resident attributes:
//     runlists (decoding, VCN coverage, inside the volume, sparse runs only
//     in sparse or compressed attributes, §3.6), sizes (initialized <= data
//     <= allocated); every cluster claimed for its owner (cross-links name
//     both records); the $MFT bitmap against the records in use;
//  3. names (check_names.cpp): $STANDARD_INFORMATION and $FILE_NAME present,
//     $FILE_NAME parent references (an in-use directory with the same
//     sequence number) and directory flags, $ATTRIBUTE_LIST entries (each
//     names an in-use record of this file holding that attribute; every
//     extension record listed by its base);
//  4. index (check_index.cpp): every directory's $I30 index (root, INDX
//     blocks with fixups, VCNs, B+ tree order by the volume's $UpCase
//     collation, §3.8), $INDEX_ALLOCATION blocks vs the index $BITMAP, each
//     entry pointing to an in-use record with the same sequence number and
//     matching one of its $FILE_NAMEs; every in-use file reachable from the
//     root (record 5); link counts ($FILE_NAMEs outside the DOS namespace vs
//     the header's link count);
//  5. system files (check_system.cpp): $Bitmap vs the clusters owned (lost,
//     marked free but owned), $Volume's dirty flag (a warning), $UpCase size
//     and ASCII sanity.
// Codes are registered in check/codes.hpp and documented in docs/fsck-codes.md.
// Memory: one bit per cluster (owned) and per record ($MFT bitmap), plus 16
// bytes of state per MFT record (flags, sequence, link and name counts); the
// record count is bounded by the clusters $MFT's runs map inside the image;
// records, $Bitmap and the $MFT bitmap are streamed; one index block and one
// record at a time (index walks keep one decoded node per tree level, at
// most 32 levels).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/placement.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::ntfs {

struct CheckOptions {
    /// Called with each directory the walk visits ("/", "/dir/"), for -v.
    std::function<void(std::string_view path)> on_walk;
    /// Set when the volume is a partition of a disk image (IMAGE@N): size
    /// and start findings then name the partition (check/placement.hpp).
    std::optional<check::Placement> placement;
    /// When set, receives every byte of $Bitmap that disagrees with the
    /// clusters the in-use records' attributes own (ntfs.bitmap.free-in-use:
    /// `set`; ntfs.bitmap.lost: `clear`, left 0 when a record did not parse),
    /// at its volume offset; bytes in a sparse run are left out. For fsck
    /// -p/-y (ntfs/repair.hpp).
    std::vector<check::BitmapFix>* bitmap_fixes = nullptr;
    /// The same for $MFT's $BITMAP against the records' in-use flags
    /// (ntfs.mft-bitmap.unmarked: `set`; ntfs.mft-bitmap.marked-free:
    /// `clear`), when the attribute is non-resident.
    std::vector<check::BitmapFix>* mft_bitmap_fixes = nullptr;
    /// When set, receives the number of every record marked in use (by
    /// $MFT's $BITMAP, or by its header, or a system record 0..15) whose
    /// header or attributes do not decode (ntfs.record.baad, signature, usa,
    /// fixup, first-attribute, bytes-in-use, ntfs.attr.header,
    /// ntfs.run.decode), in ascending order. For fsck -y
    /// (Editor::repair_corrupt_records).
    std::vector<std::uint64_t>* corrupt_records = nullptr;
};

/// What the check counted (check/summary.hpp; type "NTFS").
using CheckSummary = check::Summary;

/// True when sector 0 says "NTFS    " at byte 3, or when it does not but the
/// image's last sector (or the sector of a 1, 2 or 4 KiB-sector volume) is a
/// valid NTFS boot sector placed where its own total sectors put the backup:
/// an NTFS volume with a damaged main boot sector. Reads at most 5 sectors.
bool looks_like_ntfs(const io::BlockDevice& device);

/// Checks the NTFS volume on `device` (a whole image or a partition
/// window), appending every problem to `out`. Read-only. Throws
/// Error(not_this_fs) when neither sector 0 nor the backup boot sector says
/// "NTFS    " at byte 3, Error(io) when the device cannot be read; damage
/// inside the image never throws.
CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out,
                          const CheckOptions& options = {});

}  // namespace fsimg::ntfs
