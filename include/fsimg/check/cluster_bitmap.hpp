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
    /// Bits 64*i .. 64*i+63 (bit k of the word is index 64*i+k); bits past size() are 0.
    std::uint64_t word(std::size_t i) const noexcept { return words_[i]; }
    std::size_t word_count() const noexcept { return words_.size(); }

private:
    std::uint64_t bits_;
    std::vector<std::uint64_t> words_;
};

}  // namespace fsimg::check
