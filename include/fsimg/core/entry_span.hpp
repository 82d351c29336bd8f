// The one-write rename both editors make (fat/edit.hpp, exfat/edit.hpp):
// where a renamed entry set goes so that removing the old set and writing
// the new one is ONE write of consecutive device bytes. FAT and exFAT
// directory entries are both 32 bytes [FATGEN; EXFAT §6].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace fsimg::core {

/// What place_in_one_span chose: the new set at entry `at`, entries
/// [lo, hi) to be written in one write.
struct EntrySpan {
    std::uint32_t at = 0;
    std::uint32_t lo = 0;
    std::uint32_t hi = 0;
};

/// `entries`: a directory's 32-byte entries, the old set [old_first,
/// old_end) already marked free in them; `end`: the end-of-directory
/// entry (or the entry count). Finds the first place for `set` among free
/// entries (`is_free(first byte)`) and entries at or past `end` such that
/// the span from the lower of it and the old set to the higher (with a
/// zeroed entry after the set when it passes `end` and the next entry is
/// not zero) is consecutive on the device (`consecutive(lo, count)`).
/// Copies the set (and the zeroed entry) into `entries` and returns the
/// span; nullopt when there is none (nothing changed then). At most
/// entries-count places are tried, each checked in at most set-size steps.
template <typename IsFree, typename Consecutive>
std::optional<EntrySpan> place_in_one_span(std::vector<std::byte>& entries, std::uint32_t end,
                                           std::uint32_t old_first, std::uint32_t old_end,
                                           std::span<const std::byte> set, IsFree&& is_free,
                                           Consecutive&& consecutive) {
    constexpr std::size_t kEntry = 32;
    const auto total = static_cast<std::uint32_t>(entries.size() / kEntry);
    const auto need = static_cast<std::uint32_t>(set.size() / kEntry);
    auto first_byte = [&](std::uint32_t i) {
        return std::to_integer<std::uint8_t>(entries[std::size_t(i) * kEntry]);
    };
    for (std::uint32_t s = 0; s <= end && s + need <= total; ++s) {
        bool free = true;
        for (std::uint32_t k = s; k < s + need && free; ++k) free = k >= end || is_free(first_byte(k));
        if (!free) continue;
        const bool terminator = s + need > end && s + need < total && first_byte(s + need) != 0;
        const std::uint32_t lo = std::min(s, old_first);
        const std::uint32_t hi = std::max(s + need + (terminator ? 1u : 0u), old_end);
        if (!consecutive(lo, hi - lo)) continue;
        std::copy(set.begin(), set.end(), entries.begin() + std::ptrdiff_t(s) * kEntry);
        if (terminator)
            std::fill_n(entries.begin() + std::ptrdiff_t(s + need) * kEntry, kEntry, std::byte{0});
        return EntrySpan{s, lo, hi};
    }
    return std::nullopt;
}

}  // namespace fsimg::core
