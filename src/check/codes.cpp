#include "fsimg/check/codes.hpp"

#include <algorithm>
#include <array>

namespace fsimg::check {

namespace {

using S = Severity;

// Sorted by code (a unit test checks the order and uniqueness).
constexpr std::array kCodes = {
    CodeInfo{"compat.cluster.size", S::warning, false,
             "cluster size above 32 KiB: 64 KiB only Windows NT-family drivers mount, above that none"},
    CodeInfo{"compat.fat.ambiguous-count", S::warning, false,
             "cluster count 4085/4086 or 65525/65526: drivers disagree on the FAT type"},
    CodeInfo{"compat.fat32.few-clusters", S::warning, false,
             "FAT32 volume with fewer than 65,525 clusters (a FAT16 count by the specification)"},
    CodeInfo{"compat.label.chars", S::warning, false,
             "volume label with characters Windows does not accept in labels (lower case)"},
    CodeInfo{"compat.name.case-only", S::warning, false,
             "two names in a directory differ only in the case of non-ASCII letters"},
    CodeInfo{"compat.name.reserved", S::warning, false,
             "a name Windows cannot open: device name (CON, NUL, COM1...) or trailing dot or space"},
    CodeInfo{"fat.boot.backup-differs", S::error, true, "FAT32 backup boot sector differs from sector 0"},
    CodeInfo{"fat.boot.backup-dirty-only", S::info, false,
             "FAT32 backup boot sector differs from sector 0 only in the dirty flag (BS_Reserved1)"},
    CodeInfo{"fat.boot.backup-missing", S::warning, false,
             "FAT32 BPB_BkBootSec is 0 or outside the reserved region: no backup boot sector"},
    CodeInfo{"fat.boot.dirty", S::error, true,
             "the dirty flag in BS_Reserved1 is set: the volume was not unmounted cleanly"},
    CodeInfo{"fat.boot.fat-too-small", S::error, false,
             "the FAT cannot describe every data cluster (FATSz too small for the cluster count)"},
    CodeInfo{"fat.boot.fs-version", S::error, false, "FAT32 BPB_FSVer is not 0:0"},
    CodeInfo{"fat.boot.geometry", S::fatal, false,
             "a BPB field makes the geometry underivable (bytes per sector, sectors per cluster, "
             "reserved sectors, FAT count or size, total sectors)"},
    CodeInfo{"fat.boot.image-truncated", S::error, false,
             "the image is shorter than the filesystem it holds"},
    CodeInfo{"fat.boot.media", S::error, false, "BPB_Media is not F0 or F8..FF"},
    CodeInfo{"fat.boot.root-cluster", S::error, false, "FAT32 BPB_RootClus is not a cluster of the volume"},
    CodeInfo{"fat.boot.root-entries", S::error, false,
             "BPB_RootEntCnt does not suit the type (FAT32: must be 0; FAT12/16: not 0)"},
    CodeInfo{"fat.boot.signature", S::error, true, "bytes 510-511 of sector 0 are not 55 AA"},
    CodeInfo{"fat.boot.total-sectors", S::error, false,
             "BPB_TotSec16 and BPB_TotSec32 are inconsistent (both set, or TotSec16 set on FAT32)"},
    CodeInfo{"fat.boot.type-mismatch", S::error, false,
             "a FAT12/16-shaped BPB with a FAT32 cluster count (65,525 or more)"},
    CodeInfo{"fat.chain.bad-cluster", S::error, false, "a file's chain includes a cluster marked bad"},
    CodeInfo{"fat.chain.cross-link", S::error, true, "a cluster belongs to two files or directories"},
    CodeInfo{"fat.chain.free-link", S::error, true, "a chain continues into a free cluster"},
    CodeInfo{"fat.chain.loop", S::error, true, "a chain loops back into itself"},
    CodeInfo{"fat.chain.lost", S::error, true,
             "clusters are allocated in the FAT but belong to no file or directory"},
    CodeInfo{"fat.chain.out-of-range", S::error, true,
             "a FAT entry links to a cluster number outside the volume (or a reserved value)"},
    CodeInfo{"fat.chain.too-long", S::error, true, "a file's chain has more clusters than its size needs"},
    CodeInfo{"fat.chain.too-short", S::error, true, "a file's size needs more clusters than its chain has"},
    CodeInfo{"fat.dir.bad-attr", S::error, true,
             "a directory entry has an invalid attribute combination (directory and volume label)"},
    CodeInfo{"fat.dir.dot", S::error, true, "a directory's \".\" entry is missing or wrong"},
    CodeInfo{"fat.dir.dot-in-root", S::error, true, "the root directory holds a \".\" or \"..\" entry"},
    CodeInfo{"fat.dir.dotdot", S::error, true, "a directory's \"..\" entry is missing or wrong"},
    CodeInfo{"fat.dir.loop", S::error, true, "a directory entry points at one of its own ancestors"},
    CodeInfo{"fat.dir.no-cluster", S::error, true, "a subdirectory entry has first cluster 0"},
    CodeInfo{"fat.dir.nonzero-size", S::error, true, "a directory entry has a DIR_FileSize other than 0"},
    CodeInfo{"fat.dir.too-deep", S::error, false, "directories nest deeper than the walk limit"},
    CodeInfo{"fat.dir.too-large", S::error, false, "a directory has more than 65,536 entries"},
    CodeInfo{"fat.dir.unreadable", S::error, false, "a directory's clusters cannot be read"},
    CodeInfo{"fat.fat.copies-differ", S::error, true, "the FAT copies are not identical"},
    CodeInfo{"fat.fat.dirty", S::error, true,
             "the clean-shutdown bit in FAT[1] is cleared: the volume was not unmounted cleanly"},
    CodeInfo{"fat.fat.hard-error", S::warning, true,
             "the no-hard-error bit in FAT[1] is cleared: a driver met a disk error"},
    CodeInfo{"fat.fat.media", S::error, true, "FAT[0] does not hold the media byte (BPB_Media)"},
    CodeInfo{"fat.file.start-free", S::error, true, "a file's first cluster is free in the FAT"},
    CodeInfo{"fat.file.start-out-of-range", S::error, true,
             "a file's first cluster is not a cluster of the volume"},
    CodeInfo{"fat.fsinfo.free-count", S::warning, true, "FSInfo's free-cluster count differs from the FAT"},
    CodeInfo{"fat.fsinfo.location", S::error, false, "FAT32 BPB_FSInfo is 0 or outside the reserved region"},
    CodeInfo{"fat.fsinfo.next-free", S::warning, true,
             "FSInfo's next-free hint is not a cluster of the volume"},
    CodeInfo{"fat.fsinfo.signature", S::error, true, "an FSInfo signature is wrong"},
    CodeInfo{"fat.label.duplicate", S::error, true, "the root directory holds more than one volume label"},
    CodeInfo{"fat.label.invalid", S::error, true,
             "a volume label is empty, starts with a space, or has characters labels may not have"},
    CodeInfo{"fat.label.mismatch", S::error, true,
             "the boot-sector label and the root-directory label disagree"},
    CodeInfo{"fat.label.outside-root", S::error, true, "a volume-label entry outside the root directory"},
    CodeInfo{"fat.lfn.checksum", S::error, true,
             "a long-name entry's checksum does not match its short entry"},
    CodeInfo{"fat.lfn.orphan", S::error, true, "long-name entries with no short entry after them"},
    CodeInfo{"fat.lfn.sequence", S::error, true,
             "long-name entries out of order, or missing their first/last marker"},
    CodeInfo{"fat.name.duplicate", S::error, true,
             "two entries of a directory have the same name (case-insensitively, long or short)"},
    CodeInfo{"fat.name.invalid-long", S::error, true,
             "a long name holds a character long names may not have"},
    CodeInfo{"fat.name.invalid-short", S::error, true,
             "a short name holds a character short names may not have"},
};

}  // namespace

std::span<const CodeInfo> all_codes() noexcept { return kCodes; }

const CodeInfo* find_code(std::string_view code) noexcept {
    const auto it = std::lower_bound(kCodes.begin(), kCodes.end(), code,
                                     [](const CodeInfo& c, std::string_view v) { return c.code < v; });
    return it != kCodes.end() && it->code == code ? &*it : nullptr;
}

}  // namespace fsimg::check
