// Passes 4 and 5: clusters allocated but owned by nothing (lost chains), and
// the FSInfo hints against the real free count.
#include <algorithm>
#include <bit>
#include <vector>

#include "check_internal.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat::detail {

void check_summary(Context& c) {
    Volume& v = *c.vol;
    std::uint64_t lost = 0, heads = 0, used = 0;
    std::vector<std::uint32_t> first_heads, first_lost;
    // A tree walk that could not run (bad root) owns nothing, and one that
    // stopped early (unreadable directory, depth limit) misses what lies below:
    // do not call those clusters lost then (the finding that stopped it says so).
    const bool walked = c.root_ok && c.walk_complete;
    // From pass 2's map of allocated entries (not free, not bad), 64 clusters
    // at a time: the FAT is not read again.
    const std::uint64_t reserved = 0b11;  // entries 0 and 1 are no clusters
    for (std::size_t w = 0; w < c.owned.word_count(); ++w) {
        const std::uint64_t owned = c.owned.word(w) & (w == 0 ? ~reserved : ~std::uint64_t{0});
        used += static_cast<std::uint64_t>(std::popcount(owned));
        if (!walked) continue;
        std::uint64_t lost_bits = c.allocated.word(w) & ~owned & (w == 0 ? ~reserved : ~std::uint64_t{0});
        while (lost_bits != 0) {
            const auto cl =
                static_cast<std::uint32_t>(w * 64 + static_cast<unsigned>(std::countr_zero(lost_bits)));
            lost_bits &= lost_bits - 1;
            ++lost;
            if (first_lost.size() < kFirstLocations) first_lost.push_back(cl);
            if (auto* runs = c.options.lost) {
                if (!runs->empty() && runs->back().first + runs->back().count == cl) {
                    ++runs->back().count;
                } else {
                    runs->push_back(ClusterRun{cl, 1});
                }
            }
            if (!c.linked.test(cl)) {
                ++heads;
                if (first_heads.size() < kFirstLocations) first_heads.push_back(cl);
            }
        }
    }
    c.summary.used_clusters = used;
    c.summary.lost_clusters = lost;
    if (lost > 0) {
        const auto& firsts = first_heads.empty() ? first_lost : first_heads;
        std::string list;
        for (auto f : firsts) list += (list.empty() ? "" : ", ") + std::to_string(f);
        const std::uint64_t chains = std::max<std::uint64_t>(heads, 1);
        c.out.add("fat.chain.lost", at_cluster(c, firsts.front(), fmt::format("cluster {}", firsts.front())),
                  fmt::format("{} in {} chain{} {} allocated in the FAT but {} to no file or directory "
                              "(chain{} starting at cluster {}{})",
                              clusters_text(c, lost), chains, chains == 1 ? "" : "s",
                              lost == 1 ? "is" : "are", lost == 1 ? "belongs" : "belong",
                              chains == 1 ? "" : "s", list, chains > firsts.size() ? ", ..." : ""),
                  lost);
    }
    if (c.layout().type != FatType::fat32 || !c.boot.fsinfo) return;
    const FsInfo& fi = *c.boot.fsinfo;
    if (fi.lead_signature != kFsInfoLeadSig || fi.struct_signature != kFsInfoStrucSig) return;
    const auto loc = at_sector(c.boot.boot.fsinfo_sector, c.layout().bytes_per_sector, "FSInfo");
    if (fi.free_count != kFsInfoUnknown && fi.free_count != c.summary.free_clusters) {
        c.out.add(
            "fat.fsinfo.free-count", loc,
            fmt::format("FSI_Free_Count says {} free clusters, the FAT has {}",
                        core::format_count(fi.free_count), core::format_count(c.summary.free_clusters)));
    }
    if (fi.next_free != kFsInfoUnknown && !v.is_cluster(fi.next_free)) {
        c.out.add("fat.fsinfo.next-free", loc,
                  fmt::format("FSI_Nxt_Free is {}, not a cluster of the volume (2..{})", fi.next_free,
                              v.max_cluster()));
    }
}

}  // namespace fsimg::fat::detail
