// NTFS geometry: see include/fsimg/ntfs/layout.hpp for the rules and sources.
#include "fsimg/ntfs/layout.hpp"

#include <algorithm>

#include "fsimg/core/units.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

using core::format_size;
using core::is_power_of_two;

/// First-fit allocation over [0, cluster_count) minus reserved extents,
/// starting at a hint and wrapping around once. Pure bookkeeping.
class Allocator {
public:
    explicit Allocator(std::uint64_t cluster_count) : count_(cluster_count) {}
    void reserve(const Extent& e) {
        if (e.clusters) used_.push_back(e);
    }
    /// `clusters` clusters in as few extents as first fit gives; nullopt when
    /// the volume has too few free clusters.
    std::optional<std::vector<Extent>> allocate(std::uint64_t clusters, std::uint64_t hint) {
        std::vector<Extent> got;
        std::uint64_t need = clusters;
        for (int pass = 0; pass < 2 && need; ++pass) {
            std::uint64_t lcn = pass == 0 ? hint : 0;
            const std::uint64_t stop = pass == 0 ? count_ : hint;
            while (need && lcn < stop) {
                std::sort(used_.begin(), used_.end(),
                          [](const Extent& a, const Extent& b) { return a.lcn < b.lcn; });
                // Skip a used extent covering lcn; else find the free stretch length.
                bool moved = false;
                std::uint64_t free_end = stop;
                for (const Extent& u : used_) {
                    if (u.lcn <= lcn && lcn < u.lcn + u.clusters) {
                        lcn = u.lcn + u.clusters;
                        moved = true;
                        break;
                    }
                    if (u.lcn > lcn) {
                        free_end = std::min(free_end, u.lcn);
                        break;
                    }
                }
                if (moved) continue;
                const std::uint64_t take = std::min(need, free_end - lcn);
                if (take == 0) break;
                const Extent e{lcn, take};
                got.push_back(e);
                used_.push_back(e);
                need -= take;
                lcn += take;
            }
        }
        if (need) return std::nullopt;
        return got;
    }

private:
    std::uint64_t count_;
    std::vector<Extent> used_;
};

/// A size as a command-line argument: "512", "8K", "1M".
std::string size_arg(std::uint64_t bytes) {
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "K";
    return std::to_string(bytes);
}

}  // namespace

std::uint64_t clusters_of(const std::vector<Extent>& extents) noexcept {
    std::uint64_t n = 0;
    for (const Extent& e : extents) n += e.clusters;
    return n;
}

std::vector<DataRun> runs_of(const std::vector<Extent>& extents) {
    std::vector<DataRun> r;
    for (const Extent& e : extents) r.push_back({e.clusters, e.lcn});
    return r;
}

std::vector<Extent> Layout::allocated() const {
    std::vector<Extent> v{boot, mft_bitmap, mft, mftmirr, logfile};
    for (const auto* list : {&bitmap, &attrdef, &root_index, &upcase, &sds})
        v.insert(v.end(), list->begin(), list->end());
    std::sort(v.begin(), v.end(), [](const Extent& a, const Extent& b) { return a.lcn < b.lcn; });
    return v;
}

std::uint64_t Layout::used_clusters() const {
    std::uint64_t n = 0;
    for (const auto& e : allocated()) n += e.clusters;
    return n;
}

std::uint32_t default_cluster_bytes(std::uint64_t volume_bytes) noexcept {
    constexpr std::uint64_t kTiB = std::uint64_t(1) << 40;
    std::uint32_t c = 4096;
    std::uint64_t limit = 16 * kTiB;
    while (volume_bytes > limit && c < kMaxClusterBytes) {
        c *= 2;
        limit *= 2;
    }
    return c;
}

std::uint64_t logfile_bytes_for(std::uint64_t volume_bytes, std::uint32_t cluster_bytes) noexcept {
    constexpr std::uint64_t kMiB = 1u << 20;
    if (volume_bytes < 2 * kMiB) return 256 * 1024;
    if (volume_bytes < 4000000) return 512 * 1024;
    if (volume_bytes <= 200 * kMiB) return 2 * kMiB;
    if (volume_bytes < (std::uint64_t(12) << 30)) return volume_bytes / 200 / cluster_bytes * cluster_bytes;
    return 64 * kMiB;
}

std::variant<Layout, LayoutRefusal> plan_layout(const LayoutRequest& rq, std::uint64_t sds_bytes) {
    const std::uint32_t bps = rq.bytes_per_sector;
    if (!is_power_of_two(bps) || bps < 512 || bps > 4096) {
        return LayoutRefusal{"sector size " + std::to_string(bps) + " is not 512, 1024, 2048 or 4096",
                             {"--sector-size 512", "--sector-size 4096"}};
    }
    Layout L;
    L.bytes_per_sector = bps;
    L.device_sectors = rq.volume_bytes / bps;
    if (L.volume_bytes() < kMinVolumeBytes) {
        return LayoutRefusal{
            "an NTFS volume needs at least 1 MiB, this one has " + format_size(L.volume_bytes()),
            {"-s 1M or larger"}};
    }
    L.total_sectors = L.device_sectors - 1;
    L.hidden_sectors = rq.hidden_sectors;

    // Cluster size.
    const bool explicit_cluster = rq.cluster_bytes.has_value();
    std::uint32_t c =
        explicit_cluster ? *rq.cluster_bytes : std::max(default_cluster_bytes(L.volume_bytes()), bps);
    if (!is_power_of_two(c) || c < bps || c > kMaxClusterBytes || !encode_sectors_per_cluster(c, bps)) {
        return LayoutRefusal{"cluster size " + std::to_string(c) +
                                 " must be a power of two from the sector size (" + format_size(bps) +
                                 ") to 2 MiB",
                             {"-c 4K (the default up to 16 TiB)"}};
    }
    if (c > kClassicMaxClusterBytes) {
        return LayoutRefusal{"clusters above 64 KiB (" + format_size(c) +
                                 ") are not written: The Sleuth Kit cannot read such volumes and Windows "
                                 "before 10 1709 / Server 2019 cannot mount them",
                             {"-c 64K"}};
    }
    if (!explicit_cluster) {
        while (L.total_sectors / (c / bps) > kMaxClusters && c < kClassicMaxClusterBytes) c *= 2;
    }
    if (L.total_sectors / (c / bps) > kMaxClusters) {
        std::uint32_t fit = c;
        while (fit < kClassicMaxClusterBytes && L.total_sectors / (fit / bps) > kMaxClusters) fit *= 2;
        std::vector<std::string> s;
        if (L.total_sectors / (fit / bps) <= kMaxClusters) s.push_back("-c " + size_arg(fit) + " or larger");
        s.push_back("a volume of at most " + format_size(kMaxClusters * std::uint64_t(c)));
        return LayoutRefusal{"with " + format_size(c) +
                                 " clusters the volume would have more than 2^32-1 clusters, "
                                 "which Windows cannot address",
                             s};
    }
    L.cluster_bytes = c;
    L.cluster_count = L.total_sectors / (c / bps);

    // MFT record size.
    const std::uint32_t rs = rq.mft_record_bytes.value_or(bps <= 1024 ? 1024 : 4096);
    if (rs != 1024 && rs != 4096) {
        return LayoutRefusal{"MFT record size " + std::to_string(rs) + " is not 1024 or 4096",
                             {"--mft-record-size 1024", "--mft-record-size 4096"}};
    }
    if (rs < bps) {
        return LayoutRefusal{"MFT records of " + std::to_string(rs) + " bytes are smaller than the " +
                                 std::to_string(bps) + "-byte sector",
                             {"--mft-record-size 4096"}};
    }
    L.mft_record_bytes = rs;
    L.mft_records = std::max<std::uint32_t>(kInitialMftRecords, c / rs);
    L.mftmirr_records = c <= 4 * rs ? 4 : c / rs;
    L.mft_bitmap_bytes = core::round_up(core::div_ceil(L.mft_records, 8), 8);
    L.bitmap_bytes = core::round_up(core::div_ceil(L.cluster_count, 8), 8);

    // Fixed placement (formats.md §3.3).
    L.boot = {0, L.clusters_for(kBootBytes)};
    L.mft_bitmap = {L.boot.clusters, L.clusters_for(L.mft_bitmap_bytes)};
    L.mft = {std::max<std::uint64_t>(L.mft_bitmap.lcn + L.mft_bitmap.clusters, 16384 / c),
             L.clusters_for(L.mft_bytes())};
    L.mftmirr = {L.total_sectors * bps / 2 / c, L.clusters_for(L.mftmirr_bytes())};
    L.mft_zone_end = L.mft.lcn + L.cluster_count / 8;

    const std::uint64_t mirror_end = L.mftmirr.lcn + L.mftmirr.clusters;
    // mkntfs sizes the $LogFile by the volume without its backup boot sector
    // (total sectors x sector size): a 2 MiB device gets 256 KiB, a 12 GiB
    // one 64,421,888 bytes [EXP mkntfs 2022.10.3].
    std::uint64_t log = logfile_bytes_for(L.total_sectors * bps, c);
    log = std::max<std::uint64_t>(log / c * c, c);
    while (log >= 256 * 1024 && mirror_end + log / c > L.cluster_count) log = log / 2 / c * c;
    auto too_small = [&](const std::string& what) {
        return LayoutRefusal{"the volume (" + format_size(L.volume_bytes()) + " in " + format_size(c) +
                                 " clusters) is too small for " + what,
                             {"a larger volume (-s)", "smaller clusters (-c)"}};
    };
    if (log < 256 * 1024 || mirror_end + log / c > L.cluster_count ||
        L.mft.lcn + L.mft.clusters > L.mftmirr.lcn) {
        return too_small("$MFT, $MFTMirr and a $LogFile of at least 256 KiB");
    }
    L.logfile_bytes = log;
    L.logfile = {mirror_end, log / c};

    Allocator alloc(L.cluster_count);
    for (const Extent& e : {L.boot, L.mft_bitmap, L.mft, L.mftmirr, L.logfile}) alloc.reserve(e);
    const std::uint64_t hint = std::min(L.mft_zone_end, L.cluster_count);
    L.sds_bytes = sds_bytes;
    struct Want {
        std::vector<Extent>* into;
        std::uint64_t bytes;
        const char* what;
    };
    for (const Want& w :
         {Want{&L.bitmap, L.bitmap_bytes, "$Bitmap"}, Want{&L.attrdef, kAttrDefBytes, "$AttrDef"},
          Want{&L.root_index, kIndexBlockBytes, "the root index"}, Want{&L.upcase, kUpcaseBytes, "$UpCase"},
          Want{&L.sds, sds_bytes, "$Secure:$SDS"}}) {
        auto got = alloc.allocate(L.clusters_for(w.bytes), hint);
        if (!got) return too_small(std::string("the system files (") + w.what + " does not fit)");
        *w.into = std::move(*got);
    }
    return L;
}

}  // namespace fsimg::ntfs
