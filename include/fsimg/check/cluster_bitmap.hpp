// One bit per cluster number, for checkers that claim clusters for owners
// (FAT and exFAT "owned" maps). Callers size it from what the image holds
// (design.md: memory bounded by the image, not by a field).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fsimg::check {

/// A fixed-size bit set indexed by cluster number; indices must be < size().
class ClusterBitmap {
public:
    explicit ClusterBitmap(std::uint64_t bits = 0) : bits_(bits), words_((bits + 63) / 64, 0) {}
    std::uint64_t size() const noexcept { return bits_; }
    bool test(std::uint64_t i) const noexcept { return (words_[i / 64] >> (i % 64)) & 1u; }
    void set(std::uint64_t i) noexcept { words_[i / 64] |= std::uint64_t(1) << (i % 64); }
    void reset(std::uint64_t i) noexcept { words_[i / 64] &= ~(std::uint64_t(1) << (i % 64)); }
    void clear() noexcept { std::fill(words_.begin(), words_.end(), 0); }
    /// True when any bit of [first, first + count) is set; first + count <= size().
    bool any(std::uint64_t first, std::uint64_t count) const noexcept {
        const std::uint64_t end = first + count;
        while (first < end) {
            const std::uint64_t w = first / 64, lo = first % 64,
                                n = std::min<std::uint64_t>(64 - lo, end - first);
            const std::uint64_t mask = (n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1)) << lo;
            if (words_[w] & mask) return true;
            first += n;
        }
        return false;
    }
    /// Sets every bit of [first, first + count); first + count <= size().
    void set(std::uint64_t first, std::uint64_t count) noexcept {
        const std::uint64_t end = first + count;
        while (first < end) {
            const std::uint64_t w = first / 64, lo = first % 64,
                                n = std::min<std::uint64_t>(64 - lo, end - first);
            words_[w] |= (n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1)) << lo;
            first += n;
        }
    }
    /// Bits 64*i .. 64*i+63 (bit k of the word is index 64*i+k); bits past size() are 0.
    std::uint64_t word(std::size_t i) const noexcept { return words_[i]; }
    std::size_t word_count() const noexcept { return words_.size(); }

private:
    std::uint64_t bits_;
    std::vector<std::uint64_t> words_;
};

}  // namespace fsimg::check
