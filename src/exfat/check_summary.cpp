// Passes 4 and 5: the allocation bitmap against the clusters the walk owned
// (lost: marked used, owned by nothing; marked free but owned), streamed in
// 64 KiB pieces, and PercentInUse against the bitmap.
#include <algorithm>
#include <vector>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::exfat::detail {

namespace {

constexpr std::size_t kChunkBytes = 65536;

struct Tally {
    std::uint64_t n = 0;
    std::vector<std::uint32_t> first;
    void add(std::uint32_t cl) {
        if (n++ < kFirstLocations) first.push_back(cl);
    }
};

}  // namespace

void check_summary(Context& c) {
    const Volume& v = *c.vol;
    if (!c.ownership || c.bitmap_runs.empty()) return;
    const std::uint64_t bits = v.cluster_count();
    const std::uint64_t total = core::div_ceil(bits, 8);
    Tally lost, free_used;
    std::uint64_t marked = 0, owned = 0, bad = 0;
    std::vector<std::byte> buf;
    std::uint64_t done = 0;
    for (const auto& r : c.bitmap_runs) {
        std::uint64_t at = v.cluster_offset(r.first);
        std::uint64_t left =
            std::min<std::uint64_t>(std::uint64_t(r.count) * v.cluster_bytes(), total - done);
        while (left > 0) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kChunkBytes));
            buf.resize(n);
            c.device.read_at(at, buf);
            for (std::size_t i = 0; i < n; ++i) {
                const auto byte = std::to_integer<unsigned>(buf[i]);
                for (unsigned k = 0; k < 8; ++k) {
                    const std::uint64_t bit = (done + i) * 8 + k;
                    if (bit >= bits) break;
                    const auto cl = static_cast<std::uint32_t>(bit + 2);
                    const bool used = (byte >> k) & 1;
                    const bool mine = c.owned.test(cl);
                    marked += used;
                    owned += mine;
                    if (used && !mine) {
                        bool is_bad = false;
                        try {
                            is_bad = v.fat_entry(cl) == kFatBadCluster;
                        } catch (const Error& e) {
                            if (e.code() == ErrorCode::io) throw;
                        }
                        if (is_bad) {
                            ++bad;
                        } else {
                            lost.add(cl);
                        }
                    } else if (!used && mine) {
                        free_used.add(cl);
                    }
                }
            }
            done += n;
            at += n;
            left -= n;
        }
    }
    c.summary.marked_clusters = marked;
    c.summary.free_clusters = bits - marked;
    c.summary.used_clusters = owned;
    c.summary.bad_clusters = bad;
    if (free_used.n > 0) {
        check::Location l = at_cluster(c, free_used.first.front(), "allocation bitmap");
        c.out.add("exfat.bitmap.free-in-use", l,
                  fmt::format("{} owned by files, directories or system objects {} marked free in the "
                              "allocation bitmap (clusters {})",
                              clusters_text(c, free_used.n), free_used.n == 1 ? "is" : "are",
                              first_list(free_used.first, free_used.n)),
                  free_used.n);
    }
    // A walk that stopped early (unreadable directory, unrecognized entry
    // set, depth limit) misses owners: do not call clusters lost then.
    if (c.walk_complete) {
        c.summary.lost_clusters = lost.n;
        if (lost.n > 0) {
            c.out.add("exfat.bitmap.lost", at_cluster(c, lost.first.front(), "allocation bitmap"),
                      fmt::format("{} {} marked in use in the allocation bitmap but belong{} to no file, "
                                  "directory or system object (clusters {})",
                                  clusters_text(c, lost.n), lost.n == 1 ? "is" : "are",
                                  lost.n == 1 ? "s" : "", first_list(lost.first, lost.n)),
                      lost.n);
        }
    }
    const unsigned pct = v.boot_sector().percent_in_use;
    if (pct != kPercentInUseUnknown && pct <= 100 && bits > 0) {
        const std::uint64_t lo = marked * 100 / bits;
        const std::uint64_t hi = core::div_ceil(marked * 100, bits);
        if (pct < lo || pct > hi) {
            check::Finding& f = c.out.add(
                "exfat.bitmap.percent-in-use", at_sector(0, c.bps(), "boot sector PercentInUse"),
                fmt::format(
                    "PercentInUse is {}, the allocation bitmap marks {} of {} clusters in use ({}%){}", pct,
                    core::format_count(marked), core::format_count(bits), lo,
                    pct == 0 ? " (0 is what mkfs.exfat writes and the Linux driver does not update: a "
                               "note, not a warning)"
                             : ""));
            if (pct == 0) f.severity = check::Severity::info;
        }
    }
}

}  // namespace fsimg::exfat::detail
