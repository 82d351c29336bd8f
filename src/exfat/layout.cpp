#include "fsimg/exfat/layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/units.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::uint64_t kMaxU32 = 0xFFFFFFFF;

std::string size_text(std::uint64_t bytes) {
    // "-c 4K" style for suggestions: the units parse_size accepts.
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}M", bytes >> 20);
    if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{}K", bytes >> 10);
    return fmt::format("{}", bytes);
}

/// Everything plan_layout derives for one cluster size and alignment.
struct Solution {
    bool ok = false;
    std::string why;  ///< when !ok
    Layout layout;
    bool capped = false;                      ///< ClusterCount hit kMaxClusterCount
    std::uint64_t capped_excess_sectors = 0;  ///< sectors after the capped heap
};

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return core::round_up(v, a); }

/// FatLength for a cluster count: ceil((count + 2) * 4 / bytes_per_sector) [EXFAT §3.1.7].
std::uint64_t fat_sectors_for(std::uint64_t count, std::uint32_t bps) {
    return core::div_ceil((count + 2) * 4, bps);
}

Solution solve(std::uint64_t volume_length, std::uint32_t bps, std::uint32_t cluster_bytes,
               std::uint32_t align_bytes, std::uint64_t partition_offset) {
    Solution s;
    const std::uint32_t spc = cluster_bytes / bps;
    const std::uint64_t fat_align = align_bytes / bps;
    const std::uint64_t heap_align = std::max(align_bytes, cluster_bytes) / bps;
    const std::uint64_t p = partition_offset;

    // FatOffset: first sector >= 24 whose media-relative number is aligned.
    const std::uint64_t fat_offset = align_up(p + kMinFatOffset, fat_align) - p;
    // Heap start for a cluster count (media-relative alignment).
    auto heap_for = [&](std::uint64_t count) {
        return align_up(p + fat_offset + fat_sectors_for(count, bps), heap_align) - p;
    };
    // f(count) = heap_for(count) + count * spc is non-decreasing in count:
    // the largest count with f(count) <= volume_length is found by bisection.
    auto fits = [&](std::uint64_t count) { return heap_for(count) + count * spc <= volume_length; };
    if (!fits(0)) {
        s.why = fmt::format(
            "the boot regions, the FAT and the {} alignment need {} before the first cluster, "
            "more than the {} volume",
            core::format_size(std::max(align_bytes, cluster_bytes)),
            core::format_size(heap_for(1) * bps + cluster_bytes), core::format_size(volume_length * bps));
        return s;
    }
    std::uint64_t lo = 0;  // fits
    std::uint64_t hi =
        std::min<std::uint64_t>(volume_length / spc, kMaxClusterCount) + 1;  // upper bound, exclusive
    while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (fits(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    const std::uint64_t count = lo;
    const std::uint64_t heap = heap_for(count);
    Layout& l = s.layout;
    l.bytes_per_sector = bps;
    l.sectors_per_cluster = spc;
    l.partition_offset = partition_offset;
    l.volume_length = volume_length;
    l.align_bytes = align_bytes;

    // [EXFAT §3.1.9]: ClusterCount must equal floor((VolumeLength - heap) / spc)
    // unless capped at 2^32-11. When the rest of the volume holds more clusters
    // than the FAT before `heap` can describe, the volume ends at the heap's end.
    const std::uint64_t room = (volume_length - heap) / spc;
    if (count == kMaxClusterCount) {
        s.capped = true;
        s.capped_excess_sectors = volume_length - heap - count * spc;
    } else if (room > count) {
        l.volume_length = heap + count * spc;
        l.unused_tail_sectors = volume_length - l.volume_length;
    }
    if (fat_offset > kMaxU32 || heap > kMaxU32) {
        s.why = fmt::format("the cluster heap would start at sector {}, beyond the 32-bit ClusterHeapOffset",
                            heap);
        return s;
    }
    l.fat_offset = static_cast<std::uint32_t>(fat_offset);
    l.fat_length = static_cast<std::uint32_t>(fat_sectors_for(count, bps));
    l.cluster_heap_offset = static_cast<std::uint32_t>(heap);
    l.cluster_count = static_cast<std::uint32_t>(count);
    l.number_of_fats = 1;
    l.bitmap_first_cluster = 2;
    l.bitmap_bytes = core::div_ceil(count, 8);
    l.upcase_first_cluster = l.bitmap_first_cluster + l.bitmap_clusters();
    l.upcase_bytes = kUpcaseTableBytes;
    l.root_first_cluster = l.upcase_first_cluster + l.upcase_clusters();
    if (count < std::uint64_t(l.bitmap_clusters()) + l.upcase_clusters() + 1) {
        s.why = fmt::format(
            "{} clusters of {} cannot hold the allocation bitmap, the up-case table ({} bytes) and the root "
            "directory",
            count, core::format_size(cluster_bytes), kUpcaseTableBytes);
        return s;
    }
    s.ok = true;
    return s;
}

bool valid_sector_size(std::uint32_t bps) { return bps == 512 || bps == 1024 || bps == 2048 || bps == 4096; }

}  // namespace

std::uint8_t Layout::bytes_per_sector_shift() const noexcept {
    return static_cast<std::uint8_t>(core::log2_floor(bytes_per_sector));
}
std::uint8_t Layout::sectors_per_cluster_shift() const noexcept {
    return static_cast<std::uint8_t>(core::log2_floor(sectors_per_cluster));
}

std::uint32_t default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    if (volume_bytes <= (256ull << 20)) return 4096;
    if (volume_bytes <= (32ull << 30)) return 32768;
    return 131072;
}

std::uint32_t mkfs_exfat_default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    return default_cluster_bytes(volume_bytes);  // the same table in exfatprogs 1.2.0
}

std::variant<Layout, LayoutRefusal> plan_layout(const LayoutRequest& r) {
    const std::uint32_t bps = r.bytes_per_sector;
    if (!valid_sector_size(bps)) {
        return LayoutRefusal{fmt::format("a sector of {} bytes is not possible: exFAT sectors are 512, 1024, "
                                         "2048 or 4096 bytes",
                                         bps),
                             {"--sector-size 512", "--sector-size 4096"}};
    }
    const std::uint64_t volume_length = r.volume_bytes / bps;
    if (volume_length * bps < kMinVolumeBytes) {
        return LayoutRefusal{fmt::format("an exFAT volume needs at least 1 MiB; this one has {}",
                                         core::format_size(volume_length * bps)),
                             {"a volume of at least 1 MiB (-s 1M without a partition table)"}};
    }

    // Cluster size.
    std::uint32_t cluster = 0;
    if (r.cluster_bytes) {
        cluster = *r.cluster_bytes;
        if (!core::is_power_of_two(cluster) || cluster < bps || cluster > kMaxClusterBytes) {
            return LayoutRefusal{
                fmt::format("a cluster of {} bytes is not possible: exFAT clusters are a power of two from "
                            "one sector ({} bytes) to 32 MiB",
                            cluster, bps),
                {fmt::format("-c {}", size_text(std::max<std::uint32_t>(
                                          bps, default_cluster_bytes(r.volume_bytes))))}};
        }
    } else {
        cluster = std::max(bps, default_cluster_bytes(r.volume_bytes));
        while (cluster < kMaxClusterBytes && volume_length / (cluster / bps) > kMaxClusterCount) cluster *= 2;
    }

    // Alignment.
    std::uint32_t align = 0;
    if (r.align_bytes) {
        align = *r.align_bytes;
        if (!core::is_power_of_two(align) || align < bps || align > kMaxAlignBytes) {
            return LayoutRefusal{fmt::format("--align {} is not possible: it must be a power of two from one "
                                             "sector ({} bytes) to 256 MiB",
                                             align, bps),
                                 {"--align 1M", "--align 4K"}};
        }
    } else {
        align = volume_length * bps < kSmallVolumeBytes ? std::max(cluster, bps) : kDefaultAlignBytes;
    }

    Solution s = solve(volume_length, bps, cluster, align, r.partition_offset);
    const bool capped_wastes = s.ok && s.capped && s.capped_excess_sectors >= cluster / bps;
    if (s.ok && !capped_wastes) return s.layout;

    // Refused: say why and what would work.
    LayoutRefusal refusal;
    std::vector<std::uint32_t> clusters_that_work;
    for (std::uint32_t c = bps; c <= kMaxClusterBytes; c *= 2) {
        if (c == cluster) continue;
        const std::uint32_t a =
            r.align_bytes ? align : (volume_length * bps < kSmallVolumeBytes ? c : kDefaultAlignBytes);
        Solution t = solve(volume_length, bps, c, a, r.partition_offset);
        if (t.ok && !(t.capped && t.capped_excess_sectors >= c / bps)) clusters_that_work.push_back(c);
    }
    if (capped_wastes) {
        refusal.reason = fmt::format(
            "with clusters of {} the cluster heap holds at most {} clusters ({}), leaving {} of the volume "
            "unused",
            core::format_size(cluster), core::format_count(kMaxClusterCount),
            core::format_size(std::uint64_t(kMaxClusterCount) * cluster),
            core::format_size(s.capped_excess_sectors * bps));
        for (std::uint32_t c : clusters_that_work) {
            if (c > cluster) {
                refusal.suggestions.push_back(fmt::format("-c {}", size_text(c)));
                break;
            }
        }
        return refusal;
    }
    refusal.reason = s.why;
    // Prefer the nearest smaller cluster, then a smaller alignment, then a larger volume.
    for (auto it = clusters_that_work.rbegin(); it != clusters_that_work.rend(); ++it) {
        if (*it < cluster) {
            refusal.suggestions.push_back(fmt::format("-c {}", size_text(*it)));
            break;
        }
    }
    if (align > bps) {
        for (std::uint32_t a = align / 2; a >= bps; a /= 2) {
            if (solve(volume_length, bps, cluster, a, r.partition_offset).ok) {
                refusal.suggestions.push_back(fmt::format("--align {}", size_text(a)));
                break;
            }
        }
    }
    // The smallest volume (in MiB steps) that works with these settings.
    for (std::uint64_t mib = 1; mib <= (1u << 16); mib *= 2) {
        const std::uint64_t v = mib << 20;
        if (v <= volume_length * bps) continue;
        if (solve(v / bps, bps, cluster, align, r.partition_offset).ok) {
            refusal.suggestions.push_back(fmt::format("a volume of at least {}", core::format_size(v)));
            break;
        }
    }
    return refusal;
}

}  // namespace fsimg::exfat
