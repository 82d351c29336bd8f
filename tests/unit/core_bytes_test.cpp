#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "fsimg/core/bytes.hpp"

using namespace fsimg;

namespace {
template <std::size_t N>
std::array<std::byte, N> bytes_of(std::initializer_list<int> values) {
    std::array<std::byte, N> out{};
    std::size_t i = 0;
    for (int v : values) out[i++] = static_cast<std::byte>(v);
    return out;
}
}  // namespace

TEST_CASE("fixed-offset little-endian loads", "[core][bytes]") {
    const auto rec = bytes_of<16>(
        {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0xFA, 0xF9, 0xF8});
    const std::span<const std::byte, 16> s(rec);
    CHECK(core::le8<0>(s) == 0x01);
    CHECK(core::le16<0>(s) == 0x0201);
    CHECK(core::le32<0>(s) == 0x04030201u);
    CHECK(core::le64<0>(s) == 0x0807060504030201ull);
    CHECK(core::le16<8>(s) == 0xFEFF);
    CHECK(core::le32<12>(s) == 0xF8F9FAFBu);
    CHECK(core::le64<8>(s) == 0xF8F9FAFBFCFDFEFFull);
}

TEST_CASE("fixed-offset stores round trip", "[core][bytes]") {
    std::array<std::byte, 16> rec{};
    const std::span<std::byte, 16> s(rec);
    core::store8<0>(s, 0xAB);
    core::store16<1>(s, 0x1234);
    core::store32<3>(s, 0xDEADBEEF);
    core::store64<8>(s, 0x0123456789ABCDEFull);
    CHECK(rec[1] == std::byte{0x34});
    CHECK(rec[2] == std::byte{0x12});
    CHECK(rec[3] == std::byte{0xEF});
    CHECK(rec[6] == std::byte{0xDE});
    CHECK(rec[8] == std::byte{0xEF});
    CHECK(rec[15] == std::byte{0x01});
    const std::span<const std::byte, 16> c(rec);
    CHECK(core::le8<0>(c) == 0xAB);
    CHECK(core::le16<1>(c) == 0x1234);
    CHECK(core::le32<3>(c) == 0xDEADBEEFu);
    CHECK(core::le64<8>(c) == 0x0123456789ABCDEFull);
}

TEST_CASE("run-time offset loads and stores check bounds", "[core][bytes]") {
    std::vector<std::byte> buf(10);
    core::store_le16(buf, 0, 0xBEEF);
    core::store_le32(buf, 2, 0x11223344);
    core::store_le16(buf, 8, 0x5566);
    CHECK(core::load_le16(buf, 0) == 0xBEEF);
    CHECK(core::load_le32(buf, 2) == 0x11223344u);
    CHECK(core::load_le64(buf, 2) == 0x5566000011223344ull);
    CHECK(core::load_le16(buf, 8) == 0x5566);

    CHECK_THROWS_AS(core::load_le16(buf, 9), FormatError);
    CHECK_THROWS_AS(core::load_le32(buf, 7), FormatError);
    CHECK_THROWS_AS(core::load_le64(buf, 3), FormatError);
    CHECK_THROWS_AS(core::store_le64(buf, 4, 1), FormatError);
    CHECK_THROWS_AS(core::store_le32(buf, std::size_t(-2), 1), FormatError);  // no wrap-around
    try {
        core::load_le32(buf, 8);
        FAIL("expected a FormatError");
    } catch (const FormatError& e) {
        CHECK(e.code() == ErrorCode::corrupt);
        CHECK(e.byte_offset() == 8u);
        CHECK_THAT(e.what(), Catch::Contains("offset 8") && Catch::Contains("10 bytes"));
    }
}

TEST_CASE("ByteReader reads in order and refuses to leave the record", "[core][bytes]") {
    const auto rec = bytes_of<15>({0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 1, 0, 0, 0, 0, 0, 0, 0x80});
    core::ByteReader r(rec);
    CHECK(r.remaining() == 15);
    CHECK(r.u8("a") == 0x01);
    CHECK(r.u16("b") == 0x1234);
    CHECK(r.u32("c") == 0x12345678u);
    CHECK(r.position() == 7);
    CHECK(r.u64("d") == 0x8000000000000001ull);
    CHECK(r.remaining() == 0);
    CHECK_THROWS_WITH(r.u8("attribute length"), Catch::Contains("attribute length"));

    r.seek(13, "seek");
    CHECK(r.position() == 13);
    const auto two = r.bytes(2, "tail");
    CHECK(two.size() == 2);
    CHECK(two[1] == std::byte{0x80});
    r.seek(15, "end is allowed");
    CHECK_THROWS_AS(r.seek(16, "past end"), FormatError);
    r.seek(0, "start");
    CHECK_THROWS_AS(r.skip(16, "skip"), FormatError);
    CHECK(r.position() == 0);  // a failed read does not move the cursor
    CHECK_THROWS_AS(r.bytes(std::size_t(-1), "huge"), FormatError);
    r.skip(14, "skip");
    try {
        r.u16("name length");
        FAIL("expected a FormatError");
    } catch (const FormatError& e) {
        CHECK(e.byte_offset() == 14u);
        CHECK_THAT(e.what(), Catch::Contains("name length"));
    }
}

TEST_CASE("padded ASCII fields", "[core][bytes]") {
    std::array<std::byte, 8> field{};
    core::store_padded(field, "NO NAME");
    CHECK(core::load_string(field) == "NO NAME ");
    core::store_padded(field, "FAT32");
    CHECK(core::load_string(field) == "FAT32   ");
    core::store_padded(field, "TOOLONGNAME", '\0');
    CHECK(core::load_string(field) == "TOOLONGN");
    core::store_padded(field, "AB", '\0');
    CHECK(core::load_string(field) == std::string("AB\0\0\0\0\0\0", 8));
}
