#include "fsimg/ntfs/cost.hpp"

#include <algorithm>

namespace fsimg::ntfs {

namespace {
constexpr std::uint64_t clusters_of(std::uint64_t bytes, std::uint32_t c) noexcept {
    return (bytes + c - 1) / c;
}
}  // namespace

IndexRoom ntfs3g_index_room(std::size_t name_units) noexcept {
    const std::int64_t used =
        std::int64_t(kDirectoryRecordFixed + round8(90 + 2 * std::uint64_t(name_units)));
    IndexRoom room;
    room.root_leaf = std::int64_t{kRecordBytes} - std::int64_t{kIndexRootReserve} - used;
    room.root_parent =
        std::max<std::int64_t>(room.root_leaf - 8 - std::int64_t{kIndexAllocationAttributes}, 0);
    room.block_leaf = kIndexBlockCapacity;
    room.block_node = kIndexNodeCapacity;
    return room;
}

IndexCost index_cost(std::span<const std::uint32_t> entry_bytes, std::size_t name_units,
                     std::size_t dos_units, bool root) {
    const auto shape = directory_index(entry_bytes, kRecordBytes, kIndexBlockBytes, root ? 1 : name_units,
                                       root, root ? 0 : dos_units);
    IndexCost c;
    c.blocks = shape.blocks.size();
    if (c.blocks > 0 && shape.storage != IndexStorage::in_record)
        c.bitmap_bytes = index_bitmap_bytes(c.blocks);
    c.extension_record = shape.storage == IndexStorage::extension;
    return c;
}

std::uint64_t mft_growth_clusters(std::uint64_t records, std::uint32_t cluster_bytes) noexcept {
    const auto g = mft_growth(kFirstUserRecord + records, kRecordBytes, cluster_bytes,
                              initial_mft_bytes(cluster_bytes) / cluster_bytes, 1);
    return g.mft_clusters + g.bitmap_clusters;
}

std::uint64_t fixed_overhead_clusters(std::uint64_t volume_bytes, std::uint32_t c) noexcept {
    std::uint64_t n = 0;
    n += clusters_of(kBootBytes, c);                                       // $Boot
    n += initial_mft_bytes(c) / c;                                         // $MFT
    n += 1;                                                                // $MFT $BITMAP
    n += clusters_of(4096, c);                                             // $MFTMirr
    n += clusters_of(logfile_bytes_for(volume_bytes - 512, c), c);         // $LogFile
    n += clusters_of((mkntfs_cluster_count(volume_bytes, c) + 7) / 8, c);  // $Bitmap
    n += clusters_of(kAttrDefBytes, c);                                    // $AttrDef
    n += clusters_of(262396, c);                                           // $Secure:$SDS
    n += clusters_of(kUpcaseBytes, c);                                     // $UpCase
    n += clusters_of(kIndexBlockBytes, c);                                 // root INDX block
    n += clusters_of(4140, c);                                             // root security descriptor
    return n;
}

std::uint32_t mkntfs_default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    std::uint32_t c = 4096;
    while (mkntfs_cluster_count(volume_bytes, c) > kMaxClusters && c < kMaxClusterBytes) c *= 2;
    return c;
}

}  // namespace fsimg::ntfs
