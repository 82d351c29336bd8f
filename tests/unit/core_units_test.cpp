#include <catch2/catch.hpp>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

using namespace fsimg;
using core::parse_size;

TEST_CASE("parse_size accepts binary units", "[core][units]") {
    CHECK(parse_size("0") == 0);
    CHECK(parse_size("512") == 512);
    CHECK(parse_size("4K") == 4096);
    CHECK(parse_size("4k") == 4096);
    CHECK(parse_size("4KiB") == 4096);
    CHECK(parse_size("4kib") == 4096);
    CHECK(parse_size("512B") == 512);
    CHECK(parse_size("1M") == 1048576);
    CHECK(parse_size("1MiB") == 1048576);
    CHECK(parse_size("64G") == 68719476736ull);
    CHECK(parse_size("1T") == 1099511627776ull);
    CHECK(parse_size("2P") == 2251799813685248ull);
    CHECK(parse_size("15E") == 15ull << 60);
    CHECK(parse_size("18446744073709551615") == 18446744073709551615ull);
}

TEST_CASE("parse_size reads KB, MB, GB... as powers of 1000, as coreutils does", "[core][units]") {
    // coreutils truncate(1): K,M,G... powers of 1024, KB,MB,... powers of 1000, KiB=K.
    CHECK(parse_size("256GB") == 256'000'000'000ull);
    CHECK(parse_size("256G") == 274'877'906'944ull);  // 256 * 1024^3
    CHECK(parse_size("256GiB") == 274'877'906'944ull);
    CHECK(parse_size("4KiB") == 4096);
    CHECK(parse_size("4K") == 4096);
    CHECK(parse_size("4kB") == 4000);
    CHECK(parse_size("4KB") == 4000);
    CHECK(parse_size("1MB") == 1'000'000);
    CHECK(parse_size("1GB") == 1'000'000'000);
    CHECK(parse_size("2TB") == 2'000'000'000'000ull);
    CHECK(parse_size("3PB") == 3'000'000'000'000'000ull);
    CHECK(parse_size("18EB") == 18'000'000'000'000'000'000ull);
    REQUIRE_THROWS_WITH(parse_size("19EB"), Catch::Contains("\"19EB\"") && Catch::Contains("64 bits"));
    // A lower-case b after a unit letter (bits?) is refused, naming both spellings.
    REQUIRE_THROWS_WITH(parse_size("4kb"),
                        Catch::Contains("\"4kb\"") && Catch::Contains("4kB") && Catch::Contains("4KiB"));
    REQUIRE_THROWS_WITH(parse_size("1.5G"), Catch::Contains("\"1.5G\"") && Catch::Contains("fractions"));
    // The hint writes the same size whole, in the largest unit of the same kind that holds it.
    REQUIRE_THROWS_WITH(parse_size("1.5G"), Catch::Contains("fractions are not accepted: write 1536M;"));
    REQUIRE_THROWS_WITH(parse_size("1.5GB"), Catch::Contains("fractions are not accepted: write 1500MB;"));
    REQUIRE_THROWS_WITH(parse_size("1,5GiB"), Catch::Contains("fractions are not accepted: write 1536MiB;"));
    REQUIRE_THROWS_WITH(parse_size("1.0G"), Catch::Contains("fractions are not accepted: write 1G;"));
    REQUIRE_THROWS_WITH(parse_size("2.25TB"), Catch::Contains("fractions are not accepted: write 2250GB;"));
    REQUIRE_THROWS_WITH(parse_size("0.5K"), Catch::Contains("fractions are not accepted: write 512;"));
    REQUIRE_THROWS_WITH(parse_size("1.5kB"), Catch::Contains("fractions are not accepted: write 1500;"));
    // Not a whole number of bytes, or no unit: the general hint.
    REQUIRE_THROWS_WITH(parse_size("1.1K"), Catch::Contains("(write 1536M for 1.5G, 1500MB for 1.5GB)"));
    REQUIRE_THROWS_WITH(parse_size("1.5"), Catch::Contains("(write 1536M for 1.5G, 1500MB for 1.5GB)"));
    REQUIRE_THROWS_WITH(parse_size("1.5X"), Catch::Contains("(write 1536M for 1.5G, 1500MB for 1.5GB)"));
    REQUIRE_THROWS_WITH(parse_size("256 M"), Catch::Contains("\"256 M\"") && Catch::Contains("spaces"));
    REQUIRE_THROWS_WITH(parse_size("4GiBB"), Catch::Contains("unknown suffix"));
}

TEST_CASE("parse_size rejects bad input naming it", "[core][units]") {
    REQUIRE_THROWS_WITH(parse_size("4X"), Catch::Contains("\"4X\"") && Catch::Contains("suffix"));
    REQUIRE_THROWS_WITH(parse_size(""), Catch::Contains("empty"));
    REQUIRE_THROWS_WITH(parse_size("-1"), Catch::Contains("\"-1\""));
    REQUIRE_THROWS_WITH(parse_size("+1"), Catch::Contains("\"+1\""));
    REQUIRE_THROWS_WITH(parse_size(" 1K"), Catch::Contains("\" 1K\""));
    REQUIRE_THROWS_WITH(parse_size("1 K"), Catch::Contains("\"1 K\""));
    REQUIRE_THROWS_WITH(parse_size("K"), Catch::Contains("\"K\""));
    REQUIRE_THROWS_WITH(parse_size("4KiBB"), Catch::Contains("\"4KiBB\""));
    REQUIRE_THROWS_WITH(parse_size("4iB"), Catch::Contains("\"4iB\""));
    REQUIRE_THROWS_WITH(parse_size("1.5M"), Catch::Contains("\"1.5M\""));
    REQUIRE_THROWS_WITH(parse_size("16E"), Catch::Contains("\"16E\"") && Catch::Contains("64 bits"));
    REQUIRE_THROWS_WITH(parse_size("99999999999999999999"),
                        Catch::Contains("\"99999999999999999999\"") && Catch::Contains("64 bits"));
    REQUIRE_THROWS_WITH(parse_size("18446744073709551616"), Catch::Contains("64 bits"));
    try {
        parse_size("4X");
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::usage);
    }
}

TEST_CASE("format_size", "[core][units]") {
    CHECK(core::format_size(0) == "0 B");
    CHECK(core::format_size(512) == "512 B");
    CHECK(core::format_size(1023) == "1023 B");
    CHECK(core::format_size(1024) == "1 KiB");
    CHECK(core::format_size(4096) == "4 KiB");
    CHECK(core::format_size(1536) == "1.5 KiB");
    CHECK(core::format_size(1572864) == "1.5 MiB");
    CHECK(core::format_size(3ull << 30) == "3 GiB");
    CHECK(core::format_size(1ull << 40) == "1 TiB");
    CHECK(core::format_size(1280) == "1.25 KiB");
    CHECK(core::format_size(1030) == "1.01 KiB");
    CHECK(core::format_size(1048575) == "1024 KiB");  // rounds up into the next whole number
    CHECK(core::format_size(18446744073709551615ull) == "16 EiB");
}

TEST_CASE("format_decimal_size and format_size_both", "[core][units]") {
    CHECK(core::format_decimal_size(999) == "999 B");
    CHECK(core::format_decimal_size(1000) == "1 kB");
    CHECK(core::format_decimal_size(4096) == "4.1 kB");
    CHECK(core::format_decimal_size(256'000'000'000ull) == "256 GB");
    CHECK(core::format_decimal_size(1'500'000) == "1.5 MB");
    CHECK(core::format_size_both(512) == "512 B");
    // 256e9 / 2^30 = 238.4185791...
    CHECK(core::format_size_both(256'000'000'000ull) == "256 GB (238.42 GiB)");
    // 4 * 2^30 = 4,294,967,296 = 4.29 GB
    CHECK(core::format_size_both(4ull << 30) == "4 GiB (4.29 GB)");
    CHECK(core::format_size_both(1'000'000'000) == "1 GB (953.67 MiB)");
    // Exact in neither: binary first. 1,234,567 / 2^20 = 1.177..., / 10^6 = 1.23
    CHECK(core::format_size_both(1'234'567) == "1.18 MiB (1.23 MB)");
}

TEST_CASE("format_count", "[core][units]") {
    CHECK(core::format_count(0) == "0");
    CHECK(core::format_count(999) == "999");
    CHECK(core::format_count(1000) == "1,000");
    CHECK(core::format_count(1234567) == "1,234,567");
    CHECK(core::format_count(18446744073709551615ull) == "18,446,744,073,709,551,615");
}

TEST_CASE("format_counted: singular for exactly one", "[core][units]") {
    CHECK(core::format_counted(0, "file", "files") == "0 files");
    CHECK(core::format_counted(1, "directory", "directories") == "1 directory");
    CHECK(core::format_counted(2, "directory", "directories") == "2 directories");
    CHECK(core::format_counted(1001, "file", "files") == "1,001 files");
}

TEST_CASE("integer helpers", "[core][units]") {
    STATIC_REQUIRE(core::is_power_of_two(1));
    STATIC_REQUIRE(core::is_power_of_two(4096));
    STATIC_REQUIRE(!core::is_power_of_two(0));
    STATIC_REQUIRE(!core::is_power_of_two(3));
    STATIC_REQUIRE(core::log2_floor(1) == 0);
    STATIC_REQUIRE(core::log2_floor(4096) == 12);
    STATIC_REQUIRE(core::log2_floor(4097) == 12);
    STATIC_REQUIRE(core::div_ceil(10, 3) == 4);
    STATIC_REQUIRE(core::div_ceil(9, 3) == 3);
    STATIC_REQUIRE(core::round_up(1000, 512) == 1024);
    CHECK(core::checked_mul(1ull << 32, 1ull << 31, "x") == 1ull << 63);
    CHECK(core::checked_add(1, 2, "x") == 3);
    REQUIRE_THROWS_WITH(core::checked_mul(1ull << 32, 1ull << 32, "sector count * sector size"),
                        Catch::Contains("sector count * sector size"));
    REQUIRE_THROWS_WITH(core::checked_add(~0ull, 1, "end offset"), Catch::Contains("end offset"));
    try {
        core::checked_add(~0ull, 1, "end offset");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
    }
}
