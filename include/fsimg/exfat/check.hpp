// fsck for exFAT: walks a volume in passes and reports Findings, with the
// same Finding type, codes registry and exit codes as the FAT checker
// (fat/check.hpp).
//
// Passes (each in its own src/exfat/check_*.cpp):
//  1. boot region: every boot-sector field rule (validate_boot_sector,
//     [EXFAT §3.1]), boot checksum of the main and backup regions [§3.4],
//     main vs backup, extended boot signatures [§3.2], geometry against the
//     image size (a truncated image says how many bytes are missing),
//     VolumeFlags VolumeDirty / MediaFailure [§3.1.13];
//  2. allocation: FatEntry[0] [§4.1], the Allocation Bitmap entry [§7.1],
//     the Up-case Table entry and its TableChecksum [§7.2];
//  3. tree: from the root, every directory's entry sets (SetChecksum
//     [§6.3.3], SecondaryCount, Stream Extension, NameHash [§7.6.4], names
//     [§7.7.3], duplicates after up-casing), stream extensions
//     (ValidDataLength <= DataLength <= allocated bytes, NoFatChain runs
//     inside the heap [§7.6]), directory loops; every allocation claimed for
//     its owner (FAT chain loops, out-of-range links, bad clusters,
//     cross-links naming both owners);
//  4. ownership: allocation bitmap vs the clusters owned (lost = marked used,
//     owned by nothing; marked free but owned);
//  5. summaries: PercentInUse against the bitmap.
// Codes are registered in check/codes.hpp and documented in docs/fsck-codes.md.
// Memory: one bit per cluster (owned), allocated only when the on-disk
// allocation bitmap (which is as large) lies inside the image; the FAT and
// the bitmap are streamed; a directory is read whole (at most 256 MiB,
// [EXFAT §6.2]).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/placement.hpp"
#include "fsimg/check/repair.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat {

/// One byte of the allocation bitmap that disagrees with what the walk owns
/// (`set`: exfat.bitmap.free-in-use; `clear`: exfat.bitmap.lost, clusters
/// marked used, owned by nothing, not bad).
using BitmapFix = check::BitmapFix;

/// A File entry set whose SetChecksum or NameHash is wrong, as the walk
/// found it: where its first two entries lie and the values that make it
/// consistent. The NameHash is that of the name up-cased through the volume's
/// up-case table [EXFAT §7.6.4]; the SetChecksum is computed over the set
/// with that NameHash [EXFAT §6.3.3]. Only sets the parser recognizes whole
/// (File, Stream Extension, every File Name entry) are listed.
struct SetFix {
    std::string path;                        ///< the file's path, as findings name it
    std::uint64_t file_entry = 0;            ///< volume byte offset of the File entry
    std::uint64_t stream_entry = 0;          ///< volume byte offset of the Stream Extension entry
    std::optional<std::uint16_t> name_hash;  ///< the NameHash to store; nullopt when the stored one is right
    std::uint16_t set_checksum = 0;          ///< the SetChecksum to store (after name_hash)
    bool checksum_was_right =
        false;  ///< the stored SetChecksum matched the set as found (only NameHash wrong)
    /// When the SetChecksum fails and the allocation bitmap marks only the
    /// first clusters of a NoFatChain extent: the DataLength found and the
    /// one to store (those clusters' bytes), with the ValidDataLength no
    /// larger; the SetChecksum is computed with them.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> data_length;
    std::optional<std::uint64_t> valid_data_length;
};

/// What fsck -y writes for a file or directory (the root too) whose FAT chain breaks or
/// does not fit its DataLength (exfat.chain.out-of-range, bad-cluster, loop:
/// the chain ended at its last cluster; too-long: ended after the clusters
/// DataLength needs; too-short: DataLength cut to what the chain holds).
/// Clusters the cut leaves behind are lost clusters, cleared in the
/// allocation bitmap by the next pass (exfat.bitmap.lost).
struct ChainFix {
    std::string path;                     ///< the file's path, as findings name it
    std::string_view code;                ///< the finding it answers
    std::uint32_t end_at = 0;             ///< cluster whose FAT entry becomes 0xFFFFFFFF (0: none)
    std::optional<std::uint64_t> length;  ///< the DataLength to store (ValidDataLength no larger)
    std::vector<std::uint64_t> entries;   ///< volume byte offsets of every entry of the set
};

/// A name fsck -y gives a file whose name is invalid ("." or "..", or a unit
/// names may not hold [EXFAT §7.7.3]: each such unit becomes '_') or that an
/// earlier entry of its directory has after up-casing ("~N" before the
/// extension): unique in the directory, in as many File Name entries as the
/// old one. `set` is the whole entry set as it is to be written: the File
/// Name entries, NameLength, NameHash (through the volume's up-case table)
/// and SetChecksum.
struct RenameFix {
    std::string path;                    ///< the file's path, as findings name it
    std::string new_name;                ///< UTF-8
    bool duplicate = false;              ///< exfat.name.duplicate (else exfat.name.invalid)
    std::vector<std::uint64_t> entries;  ///< volume byte offset of each entry of the set
    std::vector<std::byte> set;          ///< 32 bytes per entry
};

/// Entries fsck -y writes whole, for a structural problem that has one safe
/// answer (exfat/repair.hpp):
/// - exfat.set.secondary-count, no-stream, name-length, unknown-critical: a
///   set the parser does not recognize gets back the SecondaryCount that
///   makes its stored SetChecksum right (the count is in the checksummed
///   bytes, so a match says which count the writer wrote); else a count
///   reaching over entries that are no secondaries, while the stored
///   SetChecksum covers them as they are, made the secondaries that follow;
///   else, when the stored SetChecksum is right as the set stands, its
///   NameLength is made
///   the name its File Name entries hold (up to the first U+0000), or its
///   unknown critical secondaries are left out (SecondaryCount lowered, the
///   benign ones moved up); else its entries are marked not in use (the
///   InUse bit cleared, every other byte kept) [EXFAT §6.2.1.4, §6.3.3,
///   §8.2]. A set cut by the end of the root's clusters while the root's
///   chain breaks is left to the chain's repair;
/// - exfat.set.orphan-secondary, an unknown critical primary (with its
///   secondaries), exfat.dir.system-entry (a root-only entry outside the
///   root, or one more than the root may hold): marked not in use;
/// - exfat.stream.first-cluster: FirstCluster 0 when DataLength is 0; a
///   file whose FirstCluster is not a cluster of the heap made empty
///   (DataLength, ValidDataLength and FirstCluster 0: where its data lay is
///   not known), as fsck.exfat -y does [EXFAT §7.6.5]; the NameHash and
///   SetChecksum recomputed with it.
struct EntryFix {
    std::string path;                    ///< the file, or the directory holding the entries
    std::string_view code;               ///< the finding it answers
    std::string action;                  ///< what the write does, for the repair's report
    std::vector<std::uint64_t> entries;  ///< volume byte offset of each entry written
    std::vector<std::byte> bytes;        ///< 32 bytes per entry, as they are to be written
};

/// What one check's walk of the directory tree found (its findings, the
/// clusters each owner claims, the counts and the fixes its collectors
/// received): CheckOptions::save_walk, reuse_walk. Defined with the checker.
struct WalkSnapshot;

struct CheckOptions {
    /// Called with each path the walk visits ("/DCIM/", "/DCIM/A.JPG"), for -v.
    std::function<void(std::string_view path)> on_walk;
    /// Set when the volume is a partition of a disk image (IMAGE@N): size
    /// and start findings then name the partition (check/placement.hpp).
    std::optional<check::Placement> placement;
    /// When set, receives every bitmap byte that disagrees with the walk, in
    /// ascending order (`clear` left 0 when the walk did not reach the whole
    /// tree: then nothing is called lost). For fsck -p/-y (exfat/repair.hpp).
    std::vector<BitmapFix>* bitmap_fixes = nullptr;
    /// When set, receives the lost clusters (exfat.bitmap.lost: marked in use
    /// in the allocation bitmap, owned by nothing the walk reached, not
    /// marked bad in the FAT) as runs in ascending order; left empty when the
    /// walk did not reach the whole tree. For cat/extract --salvage
    /// (exfat/salvage.hpp).
    std::vector<ClusterRun>* lost = nullptr;
    /// When set, receives every entry set whose SetChecksum or NameHash is
    /// wrong, in walk order. For fsck -p/-y (exfat/repair.hpp).
    std::vector<SetFix>* set_fixes = nullptr;
    /// When set, receives every chain that breaks or does not fit its
    /// DataLength, of a set whose SetChecksum is right. For fsck -y.
    std::vector<ChainFix>* chain_fixes = nullptr;
    /// When set, receives a new name for every file whose name is invalid or
    /// repeats an earlier one of its directory, of a set whose SetChecksum
    /// is right, when one fits its File Name entries. For fsck -y.
    std::vector<RenameFix>* renames = nullptr;
    /// When set, receives what fsck -y writes for each broken or misplaced
    /// entry set or entry and each FirstCluster that cannot be (EntryFix), in
    /// walk order.
    std::vector<EntryFix>* entry_fixes = nullptr;
    /// When set, the walk of the tree is saved here (a new snapshot) when the
    /// check walks it.
    std::shared_ptr<WalkSnapshot>* save_walk = nullptr;
    /// When set, the check takes the tree walk from this snapshot instead of
    /// walking, when the snapshot can stand for it (same cluster count, every
    /// collector of these options was on when it was saved, no entry set with
    /// a wrong SetChecksum, whose fix reads the bitmap). Only for a volume
    /// that, since the snapshot, changed in nothing the walk reads: the
    /// allocation bitmap's bytes and VolumeFlags/PercentInUse may differ
    /// (repair_volume's `walk_kept`). The boot region, the system objects'
    /// allocations and the bitmap against the walk are checked again.
    const WalkSnapshot* reuse_walk = nullptr;
};

/// What the check counted (check/summary.hpp; type "exFAT").
using CheckSummary = check::Summary;

/// Checks the exFAT volume on `device` (a whole image or a partition
/// window), appending every problem to `out`. Read-only. Throws
/// Error(not_this_fs) when sector 0 does not say "EXFAT   " at byte 3,
/// Error(io) when the device cannot be read; damage inside the image never
/// throws (a device shorter than the main boot region is the finding
/// exfat.boot.image-truncated).
CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out,
                          const CheckOptions& options = {});

}  // namespace fsimg::exfat
