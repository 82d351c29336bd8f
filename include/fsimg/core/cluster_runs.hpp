// Cluster allocation the FAT and exFAT editors share (fat/edit.hpp,
// exfat/edit.hpp): where n free clusters are, next-fit, and the links of the
// FAT chain through a list of runs. Pure over a callback that says whether a
// cluster is free (a FAT entry of 0 on FAT [FATGEN]; a clear allocation
// bitmap bit on exFAT [EXFAT §7.1.5]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fsimg::core {

/// n free clusters among first..last: ONE run of n when there is one (the
/// first found from `near` to `last`, then from `first` up to `near`), else
/// the free clusters found from `near` on (wrapping), adjacent ones merged
/// into runs. `is_free(c)` says whether cluster c is free; `used_span(c)`
/// may say that clusters c.. c+k-1 are all in use (k, or 0 when it does not
/// know; lets a bitmap skip full bytes). `free_seen` gets the free clusters
/// counted before the search ended. Returns an empty list (and free_seen <
/// n) when the volume has fewer than n free clusters. Every loop is bounded
/// by last - first + 1 steps per pass. `Run` has `first` and `count`.
template <typename Run, typename IsFree, typename UsedSpan>
std::vector<Run> find_free_runs(std::uint64_t n, std::uint32_t near, std::uint32_t first, std::uint32_t last,
                                IsFree&& is_free, UsedSpan&& used_span, std::uint64_t& free_seen) {
    std::vector<Run> out;
    free_seen = 0;
    if (n == 0 || last < first) return out;
    if (near < first || near > last) near = first;
    for (int pass = 0; pass < 2; ++pass) {
        const std::uint64_t lo = pass == 0 ? near : first;
        const std::uint64_t hi = pass == 0 ? last : std::uint64_t(near) - 1;
        std::uint32_t run_start = 0;
        std::uint64_t run_len = 0;
        for (std::uint64_t c = lo; c <= hi;) {
            if (const std::uint64_t k = used_span(static_cast<std::uint32_t>(c)); k != 0 && c + k - 1 <= hi) {
                run_len = 0;
                c += k;
                continue;
            }
            if (is_free(static_cast<std::uint32_t>(c))) {
                ++free_seen;
                if (run_len == 0) run_start = static_cast<std::uint32_t>(c);
                if (++run_len == n) return {Run{run_start, static_cast<std::uint32_t>(n)}};
            } else {
                run_len = 0;
            }
            ++c;
        }
    }
    if (free_seen < n) return out;
    const std::uint64_t span = std::uint64_t(last) - first + 1;
    std::uint64_t got = 0;
    for (std::uint64_t k = 0; k < span && got < n; ++k) {
        const auto c = static_cast<std::uint32_t>(first + (near - first + k) % span);
        if (!is_free(c)) continue;
        if (!out.empty() && out.back().first + out.back().count == c) {
            ++out.back().count;
        } else {
            out.push_back(Run{c, 1});
        }
        ++got;
    }
    return out;
}

/// Calls link(c, next) for every cluster of `runs` in order: next is the
/// following cluster of the chain, `end` (the end-of-chain value) for the last.
template <typename Run, typename Link>
void chain_links(const std::vector<Run>& runs, std::uint32_t end, Link&& link) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
        for (std::uint32_t i = 0; i < runs[r].count; ++i) {
            const std::uint32_t c = runs[r].first + i;
            std::uint32_t next = c + 1;
            if (i + 1 == runs[r].count) next = r + 1 < runs.size() ? runs[r + 1].first : end;
            link(c, next);
        }
    }
}

}  // namespace fsimg::core
