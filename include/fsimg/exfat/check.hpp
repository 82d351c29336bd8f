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
#include <string_view>

#include "fsimg/check/finding.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat {

struct CheckOptions {
    /// Called with each path the walk visits ("/DCIM/", "/DCIM/A.JPG"), for -v.
    std::function<void(std::string_view path)> on_walk;
};

/// What the walk counted (the parts that could be counted before a fatal finding).
struct CheckSummary {
    std::uint32_t cluster_count = 0;  ///< ClusterCount
    std::uint32_t cluster_bytes = 0;  ///< bytes per cluster
    std::uint64_t files = 0;
    std::uint64_t directories = 0;      ///< including the root
    std::uint64_t used_clusters = 0;    ///< owned by a file, directory or system object
    std::uint64_t marked_clusters = 0;  ///< bits set in the allocation bitmap
    std::uint64_t free_clusters = 0;    ///< ClusterCount - marked_clusters
    std::uint64_t bad_clusters = 0;     ///< marked in use, owned by nothing, FAT entry "bad"
    std::uint64_t lost_clusters = 0;    ///< marked in use, owned by nothing, not bad
    bool complete = false;              ///< every pass ran
};

/// Checks the exFAT volume on `device` (a whole image or a partition
/// window), appending every problem to `out`. Read-only. Throws
/// Error(not_this_fs) when sector 0 does not say "EXFAT   " at byte 3,
/// Error(io) when the device cannot be read; damage inside the image never
/// throws (a device shorter than the main boot region is the finding
/// exfat.boot.image-truncated).
CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out,
                          const CheckOptions& options = {});

}  // namespace fsimg::exfat
