// mkfs --explain for exFAT: what plan_layout chose and why.
#include <fmt/format.h>

#include "fsimg/core/units.hpp"
#include "fsimg/exfat/layout.hpp"

namespace fsimg::exfat {

std::vector<std::string> explain_layout(const LayoutRequest& r, const Layout& l) {
    std::vector<std::string> out;
    const std::uint32_t bps = l.bytes_per_sector;
    auto sectors = [&](std::uint64_t s) {
        return fmt::format("sector {} ({})", core::format_count(s), core::format_size(s * bps));
    };
    out.push_back(
        fmt::format("exFAT volume: {} sectors of {} bytes ({}){}", core::format_count(l.volume_length), bps,
                    core::format_size(l.volume_bytes()),
                    l.partition_offset ? fmt::format(", partition at LBA {}", l.partition_offset) : ""));
    if (r.cluster_bytes) {
        out.push_back(fmt::format("cluster: {} (-c)", core::format_size(l.cluster_bytes())));
    } else {
        const std::uint32_t table = default_cluster_bytes(r.volume_bytes);
        out.push_back(fmt::format(
            "cluster: {} (default: Windows' table gives {} for {}; <= 256 MiB 4K, <= 32 GiB 32K, "
            "beyond 128K{})",
            core::format_size(l.cluster_bytes()), core::format_size(table), core::format_size(r.volume_bytes),
            l.cluster_bytes() != table ? "; raised to one sector or to keep the count <= 2^32-11" : ""));
    }
    out.push_back(fmt::format(
        "alignment: {}{}; cluster heap aligned to {} (media-relative)", core::format_size(l.align_bytes),
        r.align_bytes                        ? " (--align)"
        : r.volume_bytes < kSmallVolumeBytes ? " (default for volumes under 8 MiB: the cluster size)"
                                             : " (default, like mkfs.exfat)",
        core::format_size(std::max(l.align_bytes, l.cluster_bytes()))));
    out.push_back(fmt::format("boot regions: sectors 0-11 (main), 12-23 (backup)"));
    out.push_back(fmt::format("FAT: at {}, {} sectors ({} entries of 4 bytes, one FAT)",
                              sectors(l.fat_offset), core::format_count(l.fat_length),
                              core::format_count(std::uint64_t(l.cluster_count) + 2)));
    out.push_back(fmt::format("cluster heap: at {}, {} clusters (2..{})", sectors(l.cluster_heap_offset),
                              core::format_count(l.cluster_count),
                              core::format_count(std::uint64_t(l.cluster_count) + 1)));
    out.push_back(fmt::format("allocation bitmap: cluster {}, {} bytes ({} clusters)", l.bitmap_first_cluster,
                              core::format_count(l.bitmap_bytes), l.bitmap_clusters()));
    out.push_back(
        fmt::format("up-case table: cluster {}, {} bytes ({} clusters), the spec's recommended table",
                    l.upcase_first_cluster, l.upcase_bytes, l.upcase_clusters()));
    out.push_back(fmt::format("root directory: cluster {} (1 cluster)", l.root_first_cluster));
    const std::uint64_t heap_end =
        std::uint64_t(l.cluster_heap_offset) + std::uint64_t(l.cluster_count) * l.sectors_per_cluster;
    if (heap_end < l.volume_length) {
        out.push_back(fmt::format("excess space after the heap: {} sectors", l.volume_length - heap_end));
    }
    if (l.unused_tail_sectors) {
        out.push_back(fmt::format(
            "VolumeLength stops {} sectors before the end of the space given: one more FAT sector would have "
            "moved the heap to the next boundary",
            l.unused_tail_sectors));
    }
    if (l.cluster_count > kRecommendedMaxClusterCount) {
        out.push_back(
            fmt::format("note: {} clusters is above the spec's recommended 2^24-2; larger clusters "
                        "keep the FAT and bitmap smaller",
                        core::format_count(l.cluster_count)));
    }
    out.push_back(fmt::format("in use: {} clusters ({}%)", l.used_clusters(), l.percent_in_use()));
    return out;
}

}  // namespace fsimg::exfat
