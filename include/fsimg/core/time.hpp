// Time conversions shared by the filesystems.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fsimg::core {

/// A broken-down calendar time (proleptic Gregorian, no time zone attached).
struct CivilTime {
    int year = 1970;      ///< e.g. 2024
    unsigned month = 1;   ///< 1..12
    unsigned day = 1;     ///< 1..31
    unsigned hour = 0;    ///< 0..23
    unsigned minute = 0;  ///< 0..59
    unsigned second = 0;  ///< 0..59
    std::uint32_t nanosecond = 0;
    friend bool operator==(const CivilTime&, const CivilTime&) = default;
};

/// Unix seconds (may be negative) -> UTC civil time; and back.
CivilTime civil_from_unix(std::int64_t seconds, std::uint32_t nanosecond = 0) noexcept;
std::int64_t unix_from_civil(const CivilTime& t) noexcept;

/// "2024-05-01 12:34:56" (ISO-8601 without zone).
std::string format_civil(const CivilTime& t);

/// The SOURCE_DATE_EPOCH environment variable as Unix seconds, if set.
/// Throws Error(usage) when it is set but not a non-negative integer.
std::optional<std::int64_t> source_date_epoch();

/// The time to stamp new metadata with: SOURCE_DATE_EPOCH when set, else now.
std::int64_t creation_time_unix();

}  // namespace fsimg::core
