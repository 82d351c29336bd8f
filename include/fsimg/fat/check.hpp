// fsck for FAT12/16/32: walks a volume in passes and reports Findings.
//
// Passes (each in its own src/fat/check_*.cpp, e2fsck style):
//  1. boot region: BPB fields, geometry, image size, FSInfo, backup boot sector;
//  2. FATs: copies identical, FAT[0] media byte, FAT[1] dirty bits, link targets;
//  3. tree: every directory from the root, its entries, names, long names,
//     "." and "..", labels; every chain claimed for its owner (cross-links,
//     loops, links into free clusters or out of range, size vs chain);
//  4. ownership: clusters allocated in the FAT that no file owns (lost);
//  5. summaries: free count vs FSInfo.
// Codes are registered in check/codes.hpp and documented in docs/fsck-codes.md.
// Memory: three bits per cluster (owned, on the current walk, linked to) plus
// a bounded working set; the FAT is streamed, never held whole.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/placement.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/core/progress.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fat {

/// A file whose chain is longer than its size needs (fat.chain.too-long).
struct ChainTrim {
    std::uint32_t first = 0;         ///< its first cluster
    std::uint64_t keep = 0;          ///< the clusters its size needs (0: an empty file)
    std::uint64_t entry_offset = 0;  ///< volume byte offset of its short entry
};
/// A file whose chain is shorter than its size (fat.chain.too-short).
struct SizeTrim {
    std::uint64_t entry_offset = 0;  ///< volume byte offset of its short entry
    std::uint32_t size = 0;          ///< the bytes its chain holds (0 without one)
};

/// Where a chain that breaks ends after fsck -y (fat.chain.free-link,
/// out-of-range, bad-cluster, loop; fat.file.start-free, start-out-of-range).
struct ChainCut {
    std::uint32_t last = 0;          ///< its entry becomes end-of-chain; 0: the file loses its start
    std::uint64_t entry_offset = 0;  ///< when last is 0: volume byte offset of the file's short entry
    std::string_view code;           ///< the finding's code (fat.chain.free-link, ...)
};

/// An invalid short name, or one another entry of the directory already has,
/// and the one fsck -y writes instead (fat.name.invalid-short,
/// fat.name.duplicate): an alias made from the long name as Windows
/// makes one (basis name, numeric tail [FATGEN "Basis-Name Generation"]),
/// or, without a usable long name, FSCKnnnn.nnn as fsck.fat names it; unique
/// in the directory. The LFN entries' LDIR_Chksum follow the new name.
struct NameFix {
    std::string path;                     ///< the entry's path, as findings name it
    std::string old_name;                 ///< the short name as stored ("N>ME4.BIN")
    std::array<std::uint8_t, 11> name{};  ///< the new DIR_Name
    bool from_long_name = false;          ///< made from the long name (else FSCKnnnn.nnn)
    bool duplicate = false;               ///< fat.name.duplicate (else fat.name.invalid-short)
    std::vector<std::uint64_t> entries;   ///< volume byte offsets: each LFN entry, then the short entry
};

/// Long-name entries that name nothing (fat.lfn.orphan, fat.lfn.checksum,
/// fat.lfn.sequence): the Linux vfat driver and Windows skip them and show
/// the short entry's name; fsck marks them deleted (0xE5, the rest of the
/// entry zeroed as fsck.fat does), which changes no name those readers
/// show [FATGEN "Long File Name Implementation"].
struct LfnFix {
    std::string path;                    ///< the directory, as findings name it
    std::string_view code;               ///< the finding code
    std::vector<std::uint64_t> entries;  ///< volume byte offsets of the LFN entries
};

/// Volume labels fsck -y removes, as fsck.fat -a does: a root label entry
/// that is invalid (fat.label.invalid; BS_VolLab then "NO NAME" too), every
/// label entry after the root's first (fat.label.duplicate: the first is the
/// one Windows and Linux show), label entries outside the root
/// (fat.label.outside-root), an invalid BS_VolLab with no root label
/// ("NO NAME": no label), and a BS_VolLab that differs from the root's label
/// (fat.label.mismatch: the root's copied, which Windows and Linux show; a
/// boot-sector label without a root one "NO NAME", as fsck.fat -a does)
/// [FATGEN "FAT Directory Structure", ATTR_VOLUME_ID].
struct LabelFix {
    std::string_view code;               ///< the finding code
    std::vector<std::uint64_t> entries;  ///< volume byte offsets of the label entries to mark deleted
    /// BS_VolLab set to these 11 bytes (and the FAT32 backup's) when not
    /// empty: "NO NAME    " (no label), or the root's label.
    std::string boot_label;
};

/// A directory's "." and ".." entries as fsck -y leaves them
/// (fat.dir.dot, fat.dir.dotdot): entries 0 and 1, "." naming the
/// directory's own first cluster, ".." its parent's (0 for the root)
/// [FATGEN "FAT Directory Structure", the dot entries]. Entries 0 ..
/// `slots`-1 are rewritten in one write: the two dot entries first, then
/// every other entry of that range in its order (long-name entries stay
/// before their short entry).
struct DotFix {
    std::string path;          ///< the directory's path ("/DIR/")
    std::uint64_t offset = 0;  ///< volume byte offset of its entry 0
    std::uint32_t slots = 2;   ///< entries rewritten: up to the later dot entry
    std::uint32_t dot = 0;     ///< entry index of "." as found
    std::uint32_t dotdot = 1;  ///< entry index of ".." as found
    std::uint32_t dot_cluster = 0;
    std::uint32_t dotdot_cluster = 0;
    bool moved = false;         ///< a dot entry is not where it belongs
    bool dot_wrong = false;     ///< "." misplaced or naming another cluster (fat.dir.dot)
    bool dotdot_wrong = false;  ///< ".." misplaced or naming another cluster (fat.dir.dotdot)
};

struct CheckOptions {
    /// Called with each path the walk visits ("/DCIM/", "/DCIM/A.JPG"), for -v.
    std::function<void(std::string_view path)> on_walk;
    /// Advanced over the FAT entries while the FATs are read and compared
    /// (phase "checking the FATs", total: the entry count); nullable.
    core::Progress* progress = nullptr;
    /// Set when the volume is a partition of a disk image (IMAGE@N): size
    /// and start findings then name the partition (check/placement.hpp).
    std::optional<check::Placement> placement;
    /// When set, receives the lost clusters (fat.chain.lost: allocated in
    /// the FAT, owned by no file or directory the walk reached) as runs in
    /// ascending order; left empty when the walk did not reach the whole
    /// tree (then nothing is called lost). For fsck -y (fat/repair.hpp).
    std::vector<ClusterRun>* lost = nullptr;
    /// When set, receive the files whose chain is longer (trims) or shorter
    /// (sizes) than their size, whose chain is otherwise whole. For fsck -y.
    std::vector<ChainTrim>* trims = nullptr;
    std::vector<SizeTrim>* sizes = nullptr;
    /// When set, receives where each chain that breaks is ended (files, and
    /// directories whose start is sound). For fsck -y.
    std::vector<ChainCut>* cuts = nullptr;
    /// When set, receives every invalid short name of a file or directory,
    /// and every short name an earlier entry of the directory has (when the
    /// entry's long name, if any, is its own), with the name that replaces
    /// it, in walk order. For fsck -y.
    std::vector<NameFix>* names = nullptr;
    /// When set, receives every directory whose "." or ".." is misplaced or
    /// names the wrong cluster, when each is there once and the entries up
    /// to the later one lie in one run of clusters. For fsck -y.
    std::vector<DotFix>* dots = nullptr;
    /// When set, receives the long-name entries no reader takes as a name
    /// (fat.lfn.orphan, fat.lfn.checksum, fat.lfn.sequence: each set as
    /// parse_directory reports it). For fsck -p/-y.
    std::vector<LfnFix>* lfn_fixes = nullptr;
    /// When set, receives the volume labels to remove or copy (fat.label.invalid,
    /// fat.label.duplicate, fat.label.outside-root, fat.label.mismatch). For fsck -y.
    std::vector<LabelFix>* label_fixes = nullptr;
};

/// What the check counted (check/summary.hpp; type "FAT12", "FAT16" or "FAT32").
using CheckSummary = check::Summary;

/// Checks the FAT volume on `device` (a whole image or a partition window),
/// appending every problem to `out`. Read-only. Throws Error(not_this_fs)
/// when sector 0 is not a FAT boot sector, Error(io) when the device cannot
/// be read; damage inside the image never throws.
CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out,
                          const CheckOptions& options = {});

}  // namespace fsimg::fat
