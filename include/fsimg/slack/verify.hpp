// slack --verify for FAT32, exFAT and NTFS: build the real image with populate
// (the code mkfs --from runs) in a sparse temporary file and count the
// clusters its FAT (FAT32), allocation bitmap (exFAT) or $Bitmap (NTFS) marks used, to
// compare with the prediction. Writes only temporary
// files (unlinked at once); prints nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fsimg::slack {

struct VerifyResult {
    const char* filesystem = "fat32";  ///< "fat32", "exfat" or "ntfs"
    std::uint32_t cluster_bytes = 0;
    std::uint64_t volume_bytes = 0;  ///< the image built (--volume-size, or the smallest that holds the tree)
    std::uint64_t predicted = 0;     ///< clusters the analyzer predicted (tree only)
    std::uint64_t planned = 0;       ///< clusters populate planned, the root's first excluded
    /// FAT32: non-free FAT entries of the written image; exFAT: set bitmap
    /// bits less the empty volume's (bitmap, up-case table); the root's first
    /// cluster excluded either way.
    std::uint64_t actual = 0;
    std::uint64_t pruned = 0;  ///< files and directories left out because FAT cannot store them
    bool equal() const noexcept { return predicted == actual && planned == actual; }
};

/// Builds, for each cluster size, a FAT32 image of `dir` (like mkfs -t fat32
/// -c SIZE --from DIR, without a label) in a sparse temporary file in
/// `temp_dir`, and reads its FAT back with fat::Volume. Entries FAT cannot
/// store (what scan_tree reports: refused names, case duplicates, files over
/// 4 GiB - 1, paths too deep or long, unreadable files) are left out with
/// everything below them, as the analyzer leaves them out. `predicted[i]` is
/// the analyzer's cluster count for cluster_sizes[i]. Throws Error(usage) when
/// a size cannot hold the tree, Error(io) on temporary-file failures.
std::vector<VerifyResult> verify_fat(const std::filesystem::path& dir,
                                     const std::vector<std::uint32_t>& cluster_sizes,
                                     const std::vector<std::uint64_t>& predicted,
                                     std::optional<std::uint64_t> volume_bytes,
                                     const std::filesystem::path& temp_dir);

/// The same for exFAT: an image like mkfs -t exfat -c SIZE --from DIR
/// (exfat::scan_tree, plan_population, format_volume, write_population),
/// sized by exfat::volume_bytes_for_tree unless volume_bytes is given; used
/// clusters counted in its allocation bitmap. Names exFAT refuses (forbidden
/// characters, case duplicates under the up-case table, over 255 units,
/// invalid UTF-8) and unreadable files are left out with what lies below
/// them, as the analyzer leaves them out. Throws as verify_fat.
std::vector<VerifyResult> verify_exfat(const std::filesystem::path& dir,
                                       const std::vector<std::uint32_t>& cluster_sizes,
                                       const std::vector<std::uint64_t>& predicted,
                                       std::optional<std::uint64_t> volume_bytes,
                                       const std::filesystem::path& temp_dir);

/// The same for NTFS: an image like mkfs -t ntfs -c SIZE --from DIR
/// (ntfs::scan_tree, plan_population, format_volume, write_population),
/// sized by ntfs::volume_bytes_for_tree unless volume_bytes is given; used
/// clusters counted in its $Bitmap, less what the empty volume uses (system
/// files, the root's first INDX block). Names NTFS refuses (invalid UTF-8,
/// over 255 units) and unreadable files are left out with what lies below
/// them. Throws as verify_fat.
std::vector<VerifyResult> verify_ntfs(const std::filesystem::path& dir,
                                      const std::vector<std::uint32_t>& cluster_sizes,
                                      const std::vector<std::uint64_t>& predicted,
                                      std::optional<std::uint64_t> volume_bytes,
                                      const std::filesystem::path& temp_dir);

}  // namespace fsimg::slack
