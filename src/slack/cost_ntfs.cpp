#include "fsimg/slack/cost_ntfs.hpp"

namespace fsimg::slack::ntfs {

namespace {
constexpr std::uint64_t clusters_of(std::uint64_t bytes, std::uint32_t c) noexcept {
    return (bytes + c - 1) / c;
}
constexpr std::uint64_t kMiB = 1ull << 20;
}  // namespace

std::uint64_t log_file_bytes(std::uint64_t volume_bytes, std::uint32_t cluster_bytes) noexcept {
    if (volume_bytes < 2 * kMiB) return 256 * 1024;
    if (volume_bytes < 4000000) return 512 * 1024;
    if (volume_bytes <= 200 * kMiB) return 2 * kMiB;
    if (volume_bytes < (12ull << 30)) return volume_bytes / 200 / cluster_bytes * cluster_bytes;
    return 64 * kMiB;
}

std::uint64_t fixed_overhead_clusters(std::uint64_t volume_bytes, std::uint32_t c) noexcept {
    std::uint64_t n = 0;
    n += clusters_of(8192, c);                                      // $Boot
    n += initial_mft_bytes(c) / c;                                  // $MFT
    n += 1;                                                         // $MFT $BITMAP
    n += clusters_of(4096, c);                                      // $MFTMirr
    n += clusters_of(log_file_bytes(volume_bytes, c), c);           // $LogFile
    n += clusters_of((cluster_count(volume_bytes, c) + 7) / 8, c);  // $Bitmap
    n += clusters_of(2560, c);                                      // $AttrDef
    n += clusters_of(262396, c);                                    // $Secure:$SDS
    n += clusters_of(128 * 1024, c);                                // $UpCase
    n += clusters_of(kIndexBlockBytes, c);                          // root INDX block
    n += clusters_of(4140, c);                                      // root security descriptor
    return n;
}

std::uint32_t mkntfs_default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    std::uint32_t c = 4096;
    while (cluster_count(volume_bytes, c) > kMaxClusters && c < kMaxClusterBytes) c *= 2;
    return c;
}

}  // namespace fsimg::slack::ntfs
