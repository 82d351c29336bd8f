// Size strings: "512", "4K", "4KiB", "1M", "64G" (binary units, powers of
// 1024) and "4kB", "256GB" (decimal units, powers of 1000), as GNU coreutils
// reads them (truncate(1): "Units are K,M,G,T,P,E,Z,Y,R,Q (powers of 1024) or
// KB,MB,... (powers of 1000). Binary prefixes can be used, too: KiB=K, MiB=M";
// coreutils manual §2.2 Block size: "kB" = 1000).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fsimg::core {

/// Parses a byte count: digits, then an optional unit.
///  - none, "B" or "b": bytes;
///  - K, M, G, T, P, E (either case) alone or followed by "iB" (either case):
///    binary, powers of 1024 ("4K" = "4KiB" = 4096, "256G" = 256 x 2^30);
///  - the same letter followed by an upper-case "B": decimal, powers of 1000
///    ("4kB" = "4KB" = 4000, "256GB" = 256,000,000,000), as coreutils reads them.
/// No spaces, signs or fractions. Throws Error(usage) naming the text on an
/// unknown suffix ("4X"), a lower-case "b" after a unit letter ("4kb": bits or
/// bytes?), a fraction ("1.5G"), a space ("256 M"), empty input, or a value
/// that does not fit 64 bits.
std::uint64_t parse_size(std::string_view text);

/// Formats bytes in decimal units: "512 B", "4 kB", "256 GB", "1.5 MB"
/// (kB = 1000; exact multiples get no decimals, others up to 2).
std::string format_decimal_size(std::uint64_t bytes);

/// Formats a size a user gave in both unit systems where they differ: the
/// exact one first, the other in parentheses: "256 GB (238.42 GiB)",
/// "4 GiB (4.29 GB)", "512 B". Below 1000 bytes both are "N B" and one is given.
std::string format_size_both(std::uint64_t bytes);

/// Formats bytes for people: "512 B", "4 KiB", "1.5 MiB" (exact powers get no
/// decimals; others get up to 2 significant decimals).
std::string format_size(std::uint64_t bytes);

/// Thousands separators: 1234567 -> "1,234,567".
std::string format_count(std::uint64_t n);
/// A count and its noun, singular for exactly 1: (1, "file", "files") ->
/// "1 file", (1234, "file", "files") -> "1,234 files", (0, ...) -> "0 files".
std::string format_counted(std::uint64_t n, std::string_view one, std::string_view many);

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
