// Passes 4 and 5: the allocation bitmap against the clusters the walk owned
// (lost: marked used, owned by nothing; marked free but owned), streamed in
// 64 KiB pieces, and PercentInUse against the bitmap.
#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "check_internal.hpp"
#include "fsimg/core/bytes.hpp"
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

/// Set bits of each byte value (a table: without -mpopcnt, std::popcount is a libgcc call).
constexpr auto kBitsSet = [] {
    std::array<std::uint8_t, 256> t{};
    for (unsigned i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(i));
    return t;
}();

/// Bits [from, from + count) of `b` (count <= 64) as the low bits of the
/// result; bits past its end read as 0.
std::uint64_t owned_bits(const check::ClusterBitmap& b, std::uint64_t from, unsigned count) noexcept {
    const std::size_t w = static_cast<std::size_t>(from / 64);
    const unsigned o = static_cast<unsigned>(from % 64);
    if (w >= b.word_count()) return 0;
    std::uint64_t v = b.word(w) >> o;
    if (o != 0 && o + count > 64 && w + 1 < b.word_count()) v |= b.word(w + 1) << (64 - o);
    return count == 64 ? v : v & ((std::uint64_t{1} << count) - 1);
}

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
                const std::uint64_t first = (done + i) * 8;
                if (first >= bits) break;
                // 64 clusters at a time while they agree (the common case),
                // else eight, else one by one.
                if (i + 8 <= n && first + 64 <= bits) {
                    const std::uint64_t used = core::load_le64(buf, i);
                    if (used == owned_bits(c.owned, first + 2, 64)) {
                        unsigned set = 0;
                        for (unsigned b = 0; b < 64; b += 8) set += kBitsSet[(used >> b) & 0xFF];
                        marked += set;
                        owned += set;
                        i += 7;
                        continue;
                    }
                }
                const unsigned valid = first + 8 <= bits ? 0xFFu : ((1u << (bits - first)) - 1);
                const unsigned used = std::to_integer<unsigned>(buf[i]) & valid;
                const unsigned mine = static_cast<unsigned>(owned_bits(c.owned, first + 2, 8)) & valid;
                marked += kBitsSet[used];
                owned += kBitsSet[mine];
                if (used == mine) continue;
                BitmapFix fix{at + i, 0, 0};
                for (unsigned k = 0; k < 8 && first + k < bits; ++k) {
                    const auto cl = static_cast<std::uint32_t>(first + k + 2);
                    const bool u = (used >> k) & 1, m = (mine >> k) & 1;
                    if (u && !m) {
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
                            fix.clear |= static_cast<std::uint8_t>(1u << k);
                            if (auto* runs = c.options.lost) {
                                if (!runs->empty() && runs->back().first + runs->back().count == cl)
                                    ++runs->back().count;
                                else
                                    runs->push_back({cl, 1});
                            }
                        }
                    } else if (!u && m) {
                        free_used.add(cl);
                        if (cl >= c.doubtful.size() || !c.doubtful.test(cl))
                            fix.set |= static_cast<std::uint8_t>(1u << k);
                    }
                }
                if (c.options.bitmap_fixes && (fix.set | fix.clear) != 0)
                    c.options.bitmap_fixes->push_back(fix);
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
    if (!c.walk_complete && c.options.lost) c.options.lost->clear();
    if (!c.walk_complete && c.options.bitmap_fixes) {
        auto& fixes = *c.options.bitmap_fixes;
        for (auto& f : fixes) f.clear = 0;
        std::erase_if(fixes, [](const BitmapFix& f) { return f.set == 0; });
    }
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
    // PercentInUse is kept current in the main boot sector only; when that
    // one is lost (it no longer says "EXFAT   ") the backup's stale value is
    // a consequence of the main sector's damage, not a finding of its own.
    const bool stale = c.boot.use_backup && c.boot.main.boot.file_system_name != kFileSystemName;
    if (!stale && pct != kPercentInUseUnknown && pct <= 100 && bits > 0) {
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
