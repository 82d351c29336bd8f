#include "fsimg/slack/cost_ntfs.hpp"

namespace fsimg::slack::ntfs {

namespace {
constexpr std::uint64_t clusters_of(std::uint64_t bytes, std::uint32_t c) noexcept {
    return (bytes + c - 1) / c;
}
}  // namespace

std::uint64_t fixed_overhead_clusters(std::uint64_t volume_bytes, std::uint32_t c) noexcept {
    std::uint64_t n = 0;
    n += clusters_of(::fsimg::ntfs::kBootBytes, c);                                // $Boot
    n += initial_mft_bytes(c) / c;                                                 // $MFT
    n += 1;                                                                        // $MFT $BITMAP
    n += clusters_of(4096, c);                                                     // $MFTMirr
    n += clusters_of(::fsimg::ntfs::logfile_bytes_for(volume_bytes - 512, c), c);  // $LogFile
    n += clusters_of((cluster_count(volume_bytes, c) + 7) / 8, c);                 // $Bitmap
    n += clusters_of(::fsimg::ntfs::kAttrDefBytes, c);                             // $AttrDef
    n += clusters_of(262396, c);                                                   // $Secure:$SDS
    n += clusters_of(::fsimg::ntfs::kUpcaseBytes, c);                              // $UpCase
    n += clusters_of(kIndexBlockBytes, c);                                         // root INDX block
    n += clusters_of(4140, c);                                                     // root security descriptor
    return n;
}

std::uint32_t mkntfs_default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    std::uint32_t c = 4096;
    while (cluster_count(volume_bytes, c) > kMaxClusters && c < kMaxClusterBytes) c *= 2;
    return c;
}

}  // namespace fsimg::slack::ntfs
