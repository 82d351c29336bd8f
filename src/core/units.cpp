#include "fsimg/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <limits>

#include "fsimg/core/error.hpp"

namespace fsimg::core {

namespace {

char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

[[noreturn]] void bad_size(std::string_view text, std::string_view why) {
    throw Error(
        ErrorCode::usage,
        fmt::format("invalid size \"{}\": {}; use digits with an optional binary suffix K, M, G, T, P "
                    "or E (e.g. 512, 4K, 4KiB, 64G)",
                    text, why));
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
    if (text.empty()) bad_size(text, "it is empty");
    std::size_t i = 0;
    std::uint64_t value = 0;
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        const auto digit = static_cast<std::uint64_t>(text[i] - '0');
        if (value > (kMax - digit) / 10) bad_size(text, "it does not fit in 64 bits");
        value = value * 10 + digit;
        ++i;
    }
    if (i == 0) bad_size(text, "it must start with a digit (no signs or spaces)");

    std::string suffix;
    for (; i < text.size(); ++i) suffix.push_back(lower(text[i]));
    unsigned shift = 0;
    if (!suffix.empty()) {
        static constexpr std::string_view kUnits = "kmgtpe";
        const auto pos = kUnits.find(suffix[0]);
        std::string_view rest = suffix;
        if (pos != std::string_view::npos) {
            shift = 10 * static_cast<unsigned>(pos + 1);
            rest.remove_prefix(1);
            if (!rest.empty() && rest != "ib" && rest != "b") {
                bad_size(text,
                         fmt::format("unknown suffix \"{}\"", text.substr(text.size() - suffix.size())));
            }
        } else if (rest != "b") {
            bad_size(text, fmt::format("unknown suffix \"{}\"", text.substr(text.size() - suffix.size())));
        }
    }
    if (shift != 0 && value > (kMax >> shift)) bad_size(text, "it does not fit in 64 bits");
    return value << shift;
}

std::string format_size(std::uint64_t bytes) {
    static constexpr std::array<std::string_view, 7> kNames = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned unit = 0;
    while (unit + 1 < kNames.size() && bytes >= (std::uint64_t{1} << (10 * (unit + 1)))) ++unit;
    if (unit == 0) return fmt::format("{} B", bytes);
    const std::uint64_t scale = std::uint64_t{1} << (10 * unit);
    if (bytes % scale == 0) return fmt::format("{} {}", bytes / scale, kNames[unit]);
    // Two decimals, rounded half up, computed in integers: whole part and hundredths.
    const std::uint64_t whole = bytes / scale;
    const std::uint64_t rem = bytes % scale;
    // rem * 100 may overflow for EiB; use long double only for the fraction.
    auto hundredths = static_cast<std::uint64_t>(static_cast<long double>(rem) * 100.0L / scale + 0.5L);
    std::uint64_t w = whole;
    if (hundredths >= 100) {
        ++w;
        hundredths -= 100;
    }
    if (hundredths == 0) return fmt::format("{} {}", w, kNames[unit]);
    if (hundredths % 10 == 0) return fmt::format("{}.{} {}", w, hundredths / 10, kNames[unit]);
    return fmt::format("{}.{:02} {}", w, hundredths, kNames[unit]);
}

std::string format_count(std::uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) {
        throw Error(ErrorCode::corrupt, fmt::format("{}: {} * {} does not fit in 64 bits", what, a, b));
    }
    return r;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) {
        throw Error(ErrorCode::corrupt, fmt::format("{}: {} + {} does not fit in 64 bits", what, a, b));
    }
    return r;
}

}  // namespace fsimg::core
