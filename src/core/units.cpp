#include "fsimg/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <optional>

#include "fsimg/core/error.hpp"

namespace fsimg::core {

namespace {

char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

[[noreturn]] void bad_size(std::string_view text, std::string_view why) {
    throw Error(ErrorCode::usage,
                fmt::format("invalid size \"{}\": {}; use digits with an optional unit: K, M, G, T, P, E or "
                            "KiB..EiB (binary, K = 1024) or kB, MB, GB, TB, PB, EB (decimal, kB = 1000), "
                            "e.g. 512, 4K, 64G, 256GB",
                            text, why));
}

/// "2.5" style text of whole + rem/scale with up to two decimals, rounded
/// half up; `unit` appended after a space.
std::string two_decimals(std::uint64_t whole, std::uint64_t rem, std::uint64_t scale, std::string_view unit) {
    // rem * 100 may overflow for the largest units; long double only for the fraction.
    auto hundredths = static_cast<std::uint64_t>(static_cast<long double>(rem) * 100.0L / scale + 0.5L);
    std::uint64_t w = whole;
    if (hundredths >= 100) {
        ++w;
        hundredths -= 100;
    }
    if (hundredths == 0) return fmt::format("{} {}", w, unit);
    if (hundredths % 10 == 0) return fmt::format("{}.{} {}", w, hundredths / 10, unit);
    return fmt::format("{}.{:02} {}", w, hundredths, unit);
}

constexpr std::string_view kUnits = "kmgtpe";

/// A unit suffix: K..E or KiB..EiB (powers of 1024), kB..EB (powers of 1000).
struct Unit {
    unsigned power = 0;  ///< 1 for K/kB .. 6 for E/EB
    bool decimal = false;
    bool iec = false;  ///< written "KiB".."EiB"
};

/// The unit `suffix` names, nullopt when it names none (empty, unknown, "4kb").
std::optional<Unit> unit_of(std::string_view suffix) {
    if (suffix.empty()) return std::nullopt;
    const auto pos = kUnits.find(lower(suffix[0]));
    if (pos == std::string_view::npos) return std::nullopt;
    const std::string_view rest = suffix.substr(1);
    const bool iec = rest.size() == 2 && lower(rest[0]) == 'i' && lower(rest[1]) == 'b';
    if (!rest.empty() && !iec && rest != "B") return std::nullopt;
    return Unit{static_cast<unsigned>(pos + 1), rest == "B", iec};
}

/// For a size written with a fraction ("1.5G", "1,5GB", "1.0G"): the same size without one, in
/// the largest unit of the same kind (K..E and KiB..EiB: powers of 1024; kB..EB: powers of 1000)
/// that holds it exactly ("1536M", "1500MB", "1G"); empty when the text after the digits `whole`
/// (ending at `at`, where the '.' or ',' is) is not a fraction and a known unit.
std::string without_fraction(std::string_view text, std::uint64_t whole, std::size_t at) {
    std::size_t j = at + 1;
    unsigned __int128 num = whole, den = 1;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') {
        if (j - at > 9 || whole >= (std::uint64_t{1} << 40)) return {};
        num = num * 10 + static_cast<unsigned>(text[j] - '0');
        den *= 10;
        ++j;
    }
    if (j == at + 1) return {};
    const auto unit = unit_of(text.substr(j));
    if (!unit) return {};
    const bool decimal = unit->decimal, iec = unit->iec;
    const unsigned base = decimal ? 1000 : 1024, power = unit->power;
    for (unsigned q = power + 1; q-- > 0;) {
        unsigned __int128 v = num;
        for (unsigned k = q; k < power; ++k) v *= base;
        if (v % den != 0) continue;
        v /= den;
        if (v > std::numeric_limits<std::uint64_t>::max()) return {};
        const auto n = static_cast<std::uint64_t>(v);
        if (q == 0) return fmt::format("{}", n);
        const char upper = static_cast<char>(kUnits[q - 1] - 'a' + 'A');
        if (decimal) return fmt::format("{}{}B", n, q == 1 ? 'k' : upper);
        return fmt::format("{}{}{}", n, upper, iec ? "iB" : "");
    }
    return {};
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
    const std::string_view suffix = text.substr(i);
    if (!suffix.empty() && (suffix[0] == '.' || suffix[0] == ',')) {
        const std::string whole = without_fraction(text, value, i);
        if (!whole.empty()) bad_size(text, fmt::format("fractions are not accepted: write {}", whole));
        bad_size(text, "fractions are not accepted (write 1536M for 1.5G, 1500MB for 1.5GB)");
    }
    if (suffix.find_first_of(" \t") != std::string_view::npos) {
        bad_size(text, "it must not contain spaces (write 256M, not 256 M)");
    }
    if (suffix.empty() || suffix == "B" || suffix == "b") return value;

    if (const auto unit = unit_of(suffix)) {
        if (!unit->decimal) {
            const unsigned shift = 10 * unit->power;
            if (value > (kMax >> shift)) bad_size(text, "it does not fit in 64 bits");
            return value << shift;
        }
        std::uint64_t scale = 1;
        for (unsigned k = 0; k < unit->power; ++k) scale *= 1000;
        if (value > kMax / scale) bad_size(text, "it does not fit in 64 bits");
        return value * scale;
    }
    const auto pos = kUnits.find(lower(suffix[0]));
    if (pos != std::string_view::npos && suffix.substr(1) == "b") {
        const char upper = static_cast<char>(kUnits[pos] - 'a' + 'A');
        bad_size(text,
                 fmt::format("a lower-case b after {} is ambiguous (bits?): write {}{}B for powers of "
                             "1000 or {}{}iB for powers of 1024",
                             suffix[0], text.substr(0, i), pos == 0 ? 'k' : upper, text.substr(0, i), upper));
    }
    bad_size(text, fmt::format("unknown suffix \"{}\"", suffix));
}

std::string format_decimal_size(std::uint64_t bytes) {
    static constexpr std::array<std::string_view, 7> kNames = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    unsigned unit = 0;
    std::uint64_t scale = 1;
    while (unit + 1 < kNames.size() && bytes / 1000 >= scale) {
        scale *= 1000;
        ++unit;
    }
    if (unit == 0) return fmt::format("{} B", bytes);
    return two_decimals(bytes / scale, bytes % scale, scale, kNames[unit]);
}

std::string format_size_both(std::uint64_t bytes) {
    const std::string binary = format_size(bytes);
    const std::string decimal = format_decimal_size(bytes);
    if (binary == decimal || bytes < 1000) return binary;
    // The exact form first: a whole number of decimal units that is not one of binary units.
    std::uint64_t dscale = 1;
    while (bytes / 1000 >= dscale && dscale <= std::numeric_limits<std::uint64_t>::max() / 1000)
        dscale *= 1000;
    const bool decimal_exact = bytes % dscale == 0;
    const bool binary_exact = bytes % (std::uint64_t{1} << (10 * (core::log2_floor(bytes) / 10))) == 0;
    if (decimal_exact && !binary_exact) return fmt::format("{} ({})", decimal, binary);
    return fmt::format("{} ({})", binary, decimal);
}

std::string format_size(std::uint64_t bytes) {
    static constexpr std::array<std::string_view, 7> kNames = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned unit = 0;
    while (unit + 1 < kNames.size() && bytes >= (std::uint64_t{1} << (10 * (unit + 1)))) ++unit;
    if (unit == 0) return fmt::format("{} B", bytes);
    const std::uint64_t scale = std::uint64_t{1} << (10 * unit);
    return two_decimals(bytes / scale, bytes % scale, scale, kNames[unit]);
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

std::string format_counted(std::uint64_t n, std::string_view one, std::string_view many) {
    std::string out = format_count(n);
    out += ' ';
    out += n == 1 ? one : many;
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
