// slack --verify for FAT32: build the real image with FAT populate (the code
// mkfs --from runs) in a sparse temporary file and count the clusters its
// FAT marks used, to compare with the prediction. Writes only temporary
// files (unlinked at once); prints nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fsimg::slack {

struct VerifyResult {
    std::uint32_t cluster_bytes = 0;
    std::uint64_t volume_bytes = 0;  ///< the image built (--volume-size, or the smallest that holds the tree)
    std::uint64_t predicted = 0;     ///< clusters the analyzer predicted (tree only)
    std::uint64_t planned = 0;       ///< clusters populate planned, the root's first excluded
    std::uint64_t actual = 0;        ///< non-free FAT entries of the written image, the root's first excluded
    std::uint64_t pruned = 0;        ///< files and directories left out because FAT cannot store them
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

}  // namespace fsimg::slack
