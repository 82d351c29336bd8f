#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"

using namespace fsimg;
using core::civil_from_unix;
using core::CivilTime;

namespace {
CivilTime civil(int y, unsigned mo, unsigned d, unsigned h = 0, unsigned mi = 0, unsigned s = 0) {
    CivilTime t;
    t.year = y;
    t.month = mo;
    t.day = d;
    t.hour = h;
    t.minute = mi;
    t.second = s;
    return t;
}

/// Sets or unsets SOURCE_DATE_EPOCH for one scope.
class EpochEnv {
public:
    explicit EpochEnv(const char* value) {
        if (const char* old = std::getenv("SOURCE_DATE_EPOCH")) old_ = old;
        if (value != nullptr) {
            setenv("SOURCE_DATE_EPOCH", value, 1);
        } else {
            unsetenv("SOURCE_DATE_EPOCH");
        }
    }
    ~EpochEnv() {
        if (old_) {
            setenv("SOURCE_DATE_EPOCH", old_->c_str(), 1);
        } else {
            unsetenv("SOURCE_DATE_EPOCH");
        }
    }

private:
    std::optional<std::string> old_;
};
}  // namespace

TEST_CASE("civil_from_unix known vectors", "[core][time]") {
    struct Vector {
        std::int64_t unix;
        CivilTime civil;
    };
    const Vector vectors[] = {
        {0, civil(1970, 1, 1)},
        {86399, civil(1970, 1, 1, 23, 59, 59)},
        {951782400, civil(2000, 2, 29)},
        {951868800, civil(2000, 3, 1)},
        {4107542399, civil(2100, 2, 28, 23, 59, 59)},
        {4107542400, civil(2100, 3, 1)},  // 2100 is not a leap year
        {315532800, civil(1980, 1, 1)},   // FAT epoch
        {1234567890, civil(2009, 2, 13, 23, 31, 30)},
        {2147483647, civil(2038, 1, 19, 3, 14, 7)},
        {4102444800, civil(2100, 1, 1)},
        {-1, civil(1969, 12, 31, 23, 59, 59)},
        {-86400, civil(1969, 12, 31)},
        {-86401, civil(1969, 12, 30, 23, 59, 59)},
        {-11644473600, civil(1601, 1, 1)},  // NTFS epoch
        {-2208988800, civil(1900, 1, 1)},
        {253402300799, civil(9999, 12, 31, 23, 59, 59)},
    };
    for (const Vector& v : vectors) {
        INFO("unix " << v.unix);
        CHECK(civil_from_unix(v.unix) == v.civil);
        CHECK(core::unix_from_civil(v.civil) == v.unix);
    }
    CHECK(civil_from_unix(5, 123456789).nanosecond == 123456789u);
}

TEST_CASE("civil round trip across four centuries", "[core][time]") {
    // Every day from 1601 to 2400, at a time of day that varies; count failures
    // instead of asserting 290,000 times.
    std::int64_t failures = 0;
    std::int64_t first_failure = 0;
    for (std::int64_t t = -11644473600; t < 13569465600; t += 86400 - 7) {
        const CivilTime c = civil_from_unix(t);
        const bool ok = core::unix_from_civil(c) == t && c.month >= 1 && c.month <= 12 && c.day >= 1 &&
                        c.day <= 31 && c.hour < 24 && c.minute < 60 && c.second < 60;
        if (!ok && failures++ == 0) first_failure = t;
    }
    INFO("first failing Unix time: " << first_failure);
    CHECK(failures == 0);
}

TEST_CASE("format_civil", "[core][time]") {
    CHECK(core::format_civil(civil_from_unix(0)) == "1970-01-01 00:00:00");
    CHECK(core::format_civil(civil_from_unix(951782400 + 3723)) == "2000-02-29 01:02:03");
    CHECK(core::format_civil(civil(980, 5, 1, 12, 34, 56)) == "0980-05-01 12:34:56");
}

TEST_CASE("SOURCE_DATE_EPOCH", "[core][time]") {
    {
        EpochEnv env(nullptr);
        CHECK_FALSE(core::source_date_epoch().has_value());
        CHECK(core::creation_time_unix() > 1600000000);
    }
    {
        EpochEnv env("1700000000");
        CHECK(core::source_date_epoch() == 1700000000);
        CHECK(core::creation_time_unix() == 1700000000);
    }
    {
        EpochEnv env("0");
        CHECK(core::source_date_epoch() == 0);
    }
    for (const char* bad : {"", "-5", "12abc", " 1", "1.5", "9999999999999999999999"}) {
        EpochEnv env(bad);
        INFO("SOURCE_DATE_EPOCH=" << bad);
        CHECK_THROWS_WITH(core::source_date_epoch(), Catch::Contains(std::string("\"") + bad + "\""));
        try {
            core::creation_time_unix();
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::usage);
        }
    }
}
