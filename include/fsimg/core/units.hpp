// Size strings: "512", "4K", "4KiB", "1M", "64G", "1T" (binary units).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fsimg::core {

/// Parses a byte count. Accepted: digits with an optional suffix K, M, G, T,
/// P, E (binary: K = 1024), optionally followed by "iB" or "B" ("4K", "4KiB",
/// "4KB" are all 4096), case-insensitive, no spaces or signs.
/// Throws Error(usage) naming the text on an unknown suffix ("4X"), empty
/// input, or a value that does not fit 64 bits.
std::uint64_t parse_size(std::string_view text);

/// Formats bytes for people: "512 B", "4 KiB", "1.5 MiB" (exact powers get no
/// decimals; others get up to 2 significant decimals).
std::string format_size(std::uint64_t bytes);

/// Thousands separators: 1234567 -> "1,234,567".
std::string format_count(std::uint64_t n);

/// True when v is a power of two (0 is not).
constexpr bool is_power_of_two(std::uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }
/// floor(log2(v)) for v > 0.
constexpr unsigned log2_floor(std::uint64_t v) noexcept {
    unsigned r = 0;
    while (v >>= 1) ++r;
    return r;
}
/// ceil(a / b) for b > 0.
constexpr std::uint64_t div_ceil(std::uint64_t a, std::uint64_t b) noexcept { return a / b + (a % b != 0); }
/// a rounded up to a multiple of b (b > 0).
constexpr std::uint64_t round_up(std::uint64_t a, std::uint64_t b) noexcept { return div_ceil(a, b) * b; }

/// a*b and a+b, throwing Error(corrupt) with `what` on 64-bit overflow.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what);
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what);

}  // namespace fsimg::core
