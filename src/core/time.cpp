#include "fsimg/core/time.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string_view>

#include "fsimg/core/error.hpp"

namespace fsimg::core {

namespace {

// Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms"
// (days_from_civil / civil_from_days), proleptic Gregorian, day 0 = 1970-01-01.
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Ymd {
    std::int64_t y;
    unsigned m;
    unsigned d;
};

constexpr Ymd civil_from_days(std::int64_t z) noexcept {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);                    // [0, 146096]
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
    const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);  // [0, 365]
    const unsigned mp = (5 * doy + 2) / 153;                       // [0, 11]
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;               // [1, 31]
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;                  // [1, 12]
    return {y + (m <= 2), m, d};
}

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(2000, 3, 1) == 11017);
static_assert(civil_from_days(-1).y == 1969 && civil_from_days(-1).m == 12 && civil_from_days(-1).d == 31);

constexpr std::int64_t kSecondsPerDay = 86400;

}  // namespace

CivilTime civil_from_unix(std::int64_t seconds, std::uint32_t nanosecond) noexcept {
    std::int64_t days = seconds / kSecondsPerDay;
    std::int64_t rem = seconds % kSecondsPerDay;
    if (rem < 0) {
        rem += kSecondsPerDay;
        --days;
    }
    const Ymd ymd = civil_from_days(days);
    CivilTime t;
    t.year = static_cast<int>(ymd.y);
    t.month = ymd.m;
    t.day = ymd.d;
    t.hour = static_cast<unsigned>(rem / 3600);
    t.minute = static_cast<unsigned>(rem % 3600 / 60);
    t.second = static_cast<unsigned>(rem % 60);
    t.nanosecond = nanosecond;
    return t;
}

std::int64_t unix_from_civil(const CivilTime& t) noexcept {
    return days_from_civil(t.year, t.month, t.day) * kSecondsPerDay +
           static_cast<std::int64_t>(t.hour) * 3600 + static_cast<std::int64_t>(t.minute) * 60 +
           static_cast<std::int64_t>(t.second);
}

std::string format_civil(const CivilTime& t) {
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", t.year, t.month, t.day, t.hour, t.minute,
                       t.second);
}

std::optional<std::int64_t> source_date_epoch() {
    const char* env = std::getenv("SOURCE_DATE_EPOCH");
    if (env == nullptr) return std::nullopt;
    const std::string_view text(env);
    // Bounded to 12 digits (year ~33658) so that every value converts to a civil time.
    bool ok = !text.empty() && text.size() <= 12;
    std::int64_t value = 0;
    for (std::size_t i = 0; ok && i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') ok = false;
        value = value * 10 + (text[i] - '0');
    }
    if (!ok) {
        throw Error(ErrorCode::usage,
                    fmt::format("SOURCE_DATE_EPOCH is \"{}\", must be a non-negative integer of Unix seconds "
                                "(at most 12 digits); unset it or fix its value",
                                text));
    }
    return value;
}

std::int64_t creation_time_unix() {
    if (auto epoch = source_date_epoch()) return *epoch;
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace fsimg::core
