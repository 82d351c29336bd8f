// What a checker counted on a volume, the same type for FAT, exFAT and NTFS:
// fat::check_volume, exfat::check_volume and ntfs::check_volume all return
// it, and fs::check_volume (the filesystem-neutral face) hands it on.
#pragma once

#include <cstdint>
#include <string>

namespace fsimg::check {

/// How deep directories nest: with the root at depth 0, a directory lies at
/// most at depth kMaxDirectoryDepth - 1. The FAT and exFAT checkers walk that
/// far (a directory deeper is fat.dir.too-deep, exfat.dir.too-deep), ls -R and
/// extract descend that far, mkdir and cp make nothing deeper. One limit everywhere,
/// so that nothing fsimg makes is damage to its own fsck. Windows' paths of
/// 32,767 units allow at most about 16,000 levels; 256 is far past what real
/// volumes hold.
inline constexpr unsigned kMaxDirectoryDepth = 256;

/// The counts of one check. A field a filesystem does not have stays 0 (FAT
/// has no allocation bitmap and no MFT records). The counts cover what could
/// be counted before a fatal finding; `complete` says whether every pass ran.
struct Summary {
    /// The variant the boot sector describes: "FAT12", "FAT16", "FAT32",
    /// "exFAT" or "NTFS"; empty when the boot sector gave no geometry (then
    /// the cluster fields are 0 too).
    std::string type;
    std::uint64_t cluster_count =
        0;  ///< data clusters (FAT: clamped to the FAT; NTFS: total sectors / per cluster)
    std::uint32_t cluster_bytes = 0;  ///< bytes per cluster
    std::uint64_t files = 0;
    std::uint64_t directories = 0;      ///< including the root
    std::uint64_t used_clusters = 0;    ///< owned by a file, directory or system object
    std::uint64_t free_clusters = 0;    ///< FAT: entries 0; exFAT and NTFS: cluster_count - marked_clusters
    std::uint64_t bad_clusters = 0;     ///< FAT: entries "bad"; exFAT: marked, unowned, FAT entry "bad"
    std::uint64_t lost_clusters = 0;    ///< allocated (marked), owned by nothing, not bad
    std::uint64_t marked_clusters = 0;  ///< exFAT allocation bitmap / NTFS $Bitmap: bits set
    std::uint32_t record_bytes = 0;     ///< NTFS: bytes per MFT record
    std::uint64_t records = 0;          ///< NTFS: MFT records $MFT holds (as far as they can be read)
    std::uint64_t records_in_use = 0;   ///< NTFS
    bool complete = false;              ///< every pass ran
};

}  // namespace fsimg::check
