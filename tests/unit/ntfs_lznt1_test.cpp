// LZNT1 decompression (hand-built chunks, the MS-XCA 3.3 example, round
// trips through the test compressor, hostile chunks) and the classification
// of NTFS compression units from runlists.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/compression.hpp"
#include "fsimg/ntfs/lznt1.hpp"
#include "lznt1_compress.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;

namespace {

std::vector<std::byte> bytes(std::initializer_list<unsigned> v) {
    std::vector<std::byte> out;
    for (unsigned b : v) out.push_back(std::byte(b));
    return out;
}
std::vector<std::byte> bytes(std::string_view s) {
    std::vector<std::byte> out(s.size());
    std::memcpy(out.data(), s.data(), s.size());
    return out;
}
void put16(std::vector<std::byte>& v, unsigned x) {
    v.push_back(std::byte(x & 0xFF));
    v.push_back(std::byte(x >> 8));
}
/// A chunk: header (compressed flag, signature 3, size - 3) then `body`.
std::vector<std::byte> chunk(const std::vector<std::byte>& body, bool compressed = true) {
    const unsigned header = (compressed ? 0xB000u : 0x3000u) | static_cast<unsigned>(body.size() + 2 - 3);
    std::vector<std::byte> c(body.size() + 2);
    c[0] = std::byte(header & 0xFF);
    c[1] = std::byte(header >> 8);
    std::copy(body.begin(), body.end(), c.begin() + 2);
    return c;
}
std::string text(std::span<const std::byte> s) {
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

/// Decompresses into a 4096 * chunks buffer pre-filled with 0xEE; returns
/// the bytes up to the returned end.
std::string run(const std::vector<std::byte>& in, std::size_t out_bytes = 4096) {
    std::vector<std::byte> out(out_bytes, std::byte{0xEE});
    const std::size_t n = lznt1::decompress(in, out);
    return text(std::span<const std::byte>(out).first(n));
}

/// The input offset a FormatError names, or ~0 when nothing is thrown.
std::uint64_t error_at(const std::vector<std::byte>& in, std::size_t out_bytes = 4096) {
    std::vector<std::byte> out(out_bytes);
    try {
        lznt1::decompress(in, out);
    } catch (const FormatError& e) {
        return e.byte_offset().value_or(~std::uint64_t(0) - 1);
    }
    return ~std::uint64_t(0);
}

}  // namespace

TEST_CASE("lznt1: literal-only chunks, flag groups over 8 tokens", "[ntfs][lznt1]") {
    auto body = bytes({0x00});
    for (char c : std::string("ABCDEFGH")) body.push_back(std::byte(c));
    body.push_back(std::byte{0x00});
    body.push_back(std::byte{'I'});
    body.push_back(std::byte{'J'});
    CHECK(run(chunk(body)) == "ABCDEFGHIJ");
    // A flag byte with bits set beyond the body's end: the body ends first.
    CHECK(run(chunk(bytes({0xF0, 'x', 'y'}))) == "xy");
    // No chunk at all; a zero header ends the buffer, what follows is ignored.
    CHECK(run({}) == "");
    CHECK(run(bytes({0x00, 0x00, 0xFF, 0xFF})) == "");
    CHECK(run(bytes({0x42})) == "");  // one byte: no header
}

TEST_CASE("lznt1: copy tokens change their displacement/length split with the position", "[ntfs][lznt1]") {
    SECTION("U = 3: 4 displacement bits, 12 length bits; an overlapping copy") {
        // flag 0x08: three literals, then token (3-1)<<12 | (10-3).
        CHECK(run(chunk(bytes({0x08, 'a', 'b', 'c', 0x07, 0x20}))) == "abcabcabcabca");
    }
    SECTION("U = 16 still 4 bits; U = 17 takes 5") {
        std::string lit16 = "0123456789abcdef", lit17 = lit16 + "g";
        // Group 1 = 8 literals, group 2 = 8 literals, group 3 = a token.
        auto b16 = bytes({0x00});
        for (std::size_t i = 0; i < 8; ++i) b16.push_back(std::byte(lit16[i]));
        b16.push_back(std::byte{0x00});
        for (std::size_t i = 8; i < 16; ++i) b16.push_back(std::byte(lit16[i]));
        b16.push_back(std::byte{0x01});
        put16(b16, (15u << 12) | 2);  // 4-bit displacement 16, length 5
        CHECK(run(chunk(b16)) == lit16 + "01234");
        auto b17 = b16;
        b17.resize(b17.size() - 3);
        b17.push_back(std::byte{0x02});  // group 3: literal 'g', then a token
        b17.push_back(std::byte{'g'});
        put16(b17, (16u << 11) | 2);  // 5-bit displacement 17, length 5
        CHECK(run(chunk(b17)) == lit17 + "01234");
        // The same token read with the 4-bit split would mean displacement 9, length 5.
        CHECK(run(chunk(b17)) != lit17 + "9abcd");
    }
    SECTION("U > 2048: 12 displacement bits, 4 length bits") {
        // 'a', a copy of 2100 (U = 1: length 12 bits), "xyz", then at U = 2104
        // a token of displacement 3 and the largest length, 15 + 3.
        // One group: flag bits 1 and 5 set (tokens), 0 and 2..4 literals.
        auto b = bytes({0x22, 'a'});
        put16(b, 2100 - 3);
        b.insert(b.end(), {std::byte{'x'}, std::byte{'y'}, std::byte{'z'}});
        put16(b, ((3u - 1) << 4) | 15);
        std::string want(2101, 'a');
        want += "xyz";
        for (int i = 0; i < 6; ++i) want += "xyz";
        CHECK(run(chunk(b)) == want);
    }
}

TEST_CASE("lznt1: the MS-XCA 3.3 example", "[ntfs][lznt1]") {
    const auto in =
        bytes({0x38, 0xb0, 0x88, 0x46, 0x23, 0x20, 0x00, 0x20, 0x47, 0x20, 0x41, 0x00, 0x10, 0xa2, 0x47,
               0x01, 0xa0, 0x45, 0x20, 0x44, 0x00, 0x08, 0x45, 0x01, 0x50, 0x79, 0x00, 0xc0, 0x45, 0x20,
               0x05, 0x24, 0x13, 0x88, 0x05, 0xb4, 0x02, 0x4a, 0x44, 0xef, 0x03, 0x58, 0x02, 0x8c, 0x09,
               0x16, 0x01, 0x48, 0x45, 0x00, 0xbe, 0x00, 0x9e, 0x00, 0x04, 0x01, 0x18, 0x90, 0x00});
    REQUIRE(in.size() == 59);
    std::string want =
        "F# F# G A A G F# E D D E F# F# E E F# F# G A A G F# E D D E F# E D D E E F# D E F# G F# D E F# G F# "
        "E D "
        "E A F# F# G A A G F# E D D E F# E D D";
    want.push_back('\0');
    CHECK(run(in) == want);
}

TEST_CASE("lznt1: uncompressed chunks, short chunks and zero fill", "[ntfs][lznt1]") {
    std::string raw(4096, '\0');
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7 + 3);
    auto in = chunk(bytes(raw), false);
    CHECK(in[0] == std::byte{0xFF});
    CHECK(in[1] == std::byte{0x3F});  // 0x3FFF: uncompressed, signature 3, 4098 bytes
    auto second = chunk(bytes({0x00, 'h', 'i'}));
    in.insert(in.end(), second.begin(), second.end());
    CHECK(run(in, 8192) == raw + "hi");
    // A short first chunk: the next one still starts at output byte 4096,
    // and every byte no chunk writes is zero (also past the last chunk).
    auto in2 = chunk(bytes({0x00, 'a', 'b'}));
    in2.insert(in2.end(), second.begin(), second.end());
    std::vector<std::byte> out(3 * 4096, std::byte{0xEE});
    CHECK(lznt1::decompress(in2, out) == 4096 + 2);
    CHECK(text(std::span<const std::byte>(out).first(2)) == "ab");
    CHECK(std::all_of(out.begin() + 2, out.begin() + 4096, [](std::byte b) { return b == std::byte{0}; }));
    CHECK(text(std::span<const std::byte>(out).subspan(4096, 2)) == "hi");
    CHECK(std::all_of(out.begin() + 4098, out.end(), [](std::byte b) { return b == std::byte{0}; }));
    // A full output stops the walk: the second chunk is not read (even if bad).
    auto in3 = chunk(bytes({0x00, 'a'}));
    in3.insert(in3.end(), {std::byte{0x01}, std::byte{0x80}});
    std::vector<std::byte> one(4096);
    CHECK(lznt1::decompress(in3, one) == 1);
}

TEST_CASE("lznt1: hostile chunks throw FormatError at the bad byte", "[ntfs][lznt1]") {
    // A copy token cut by the chunk's end (1 of its 2 bytes): at input byte 5.
    CHECK(error_at(chunk(bytes({0x04, 'a', 'b', 0x07}))) == 5);
    // A displacement before the chunk's first byte: at U = 3, displacement 4.
    CHECK(error_at(chunk(bytes({0x08, 'a', 'b', 'c', 0x00, 0x30}))) == 6);
    // A copy at U = 0.
    CHECK(error_at(chunk(bytes({0x01, 0x00, 0x00}))) == 3);
    // A length past the chunk's 4096 bytes: at U = 1, length 4098.
    CHECK(error_at(chunk(bytes({0x02, 'a', 0xFF, 0x0F}))) == 4);
    // ... and exactly up to 4096 is fine.
    CHECK(run(chunk(bytes({0x02, 'a', 0xFC, 0x0F}))) == std::string(4096, 'a'));
    // A literal after the chunk's 4096 bytes.
    CHECK(error_at(chunk(bytes({0x06, 'a', 0xFC, 0x0F, 'b'}))) == 6);
    // A signature other than 3, in the second chunk: offset of its header.
    auto sig = chunk(bytes({0x00, 'a'}));
    sig.insert(sig.end(), {std::byte{0x01}, std::byte{0xA0}, std::byte{0x00}, std::byte{'b'}});
    CHECK(error_at(sig, 8192) == 4);
    // A chunk longer than the input left.
    CHECK(error_at(bytes({0x10, 0xB0, 0x00, 'a'})) == 0);
    // An uncompressed chunk larger than the output left.
    CHECK(error_at(chunk(bytes("0123456789"), false), 8) == 0);
    // A compressed chunk that writes past a short output.
    CHECK(error_at(chunk(bytes({0x00, '0', '1', '2', '3', '4'})), 3) == 6);
}

TEST_CASE("lznt1: round trips through the test compressor", "[ntfs][lznt1]") {
    std::mt19937 rng(12345);
    auto random = [&](std::size_t n) {
        std::vector<std::byte> v(n);
        for (auto& b : v) b = std::byte(rng() & 0xFF);
        return v;
    };
    std::string words;
    for (int i = 0; words.size() < 20000; ++i)
        words += "line " + std::to_string(i * 37 % 1000) + " of some text\n";
    std::vector<std::vector<std::byte>> cases = {bytes(words),
                                                 random(12288 + 100),
                                                 std::vector<std::byte>(4096),
                                                 std::vector<std::byte>(65536),
                                                 bytes("x"),
                                                 random(4095),
                                                 random(4097),
                                                 bytes(std::string(5000, 'z'))};
    for (const auto& data : cases) {
        const auto packed = fsimg::test::lznt1_compress(data);
        std::vector<std::byte> out((data.size() + 4095) / 4096 * 4096, std::byte{0xEE});
        const std::size_t n = lznt1::decompress(packed, out);
        CHECK(n == data.size());
        CHECK(std::equal(data.begin(), data.end(), out.begin()));
        CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(data.size()), out.end(),
                          [](std::byte b) { return b == std::byte{0}; }));
    }
    CHECK(fsimg::test::lznt1_compress(bytes(words)).size() < words.size() / 2);
}

TEST_CASE("lznt1: mutated chunks never read or write out of bounds", "[ntfs][lznt1]") {
    std::string words;
    for (int i = 0; words.size() < 9000; ++i) words += "word" + std::to_string(i % 50) + " ";
    const auto packed = fsimg::test::lznt1_compress(bytes(words));
    std::mt19937 rng(7);
    std::vector<std::byte> out(3 * 4096);
    int thrown = 0;
    for (int round = 0; round < 3000; ++round) {
        auto m = packed;
        for (int k = 0; k < 4; ++k) m[rng() % m.size()] = std::byte(rng() & 0xFF);
        m.resize(m.size() - rng() % 8);
        try {
            lznt1::decompress(m, out);
        } catch (const FormatError&) {
            ++thrown;
        }
    }
    CHECK(thrown > 0);
}

TEST_CASE("ntfs compression units: classified from the runs", "[ntfs][lznt1]") {
    using K = UnitPlan::Kind;
    auto mr = [](std::uint64_t vcn, std::uint64_t len, std::optional<std::uint64_t> lcn) {
        MappedRun r{Vcn{vcn}, len, std::nullopt};
        if (lcn) r.lcn = Lcn{*lcn};
        return r;
    };
    const std::vector<MappedRun> stored = {mr(0, 16, 100)};
    auto p = plan_compression_unit(stored, 0, 16);
    CHECK(p.kind == K::stored);
    CHECK(p.extents == std::vector<UnitPlan::Extent>{{100, 16}});
    CHECK_FALSE(p.first_unmapped);

    const std::vector<MappedRun> packed = {
        mr(0, 3, 100),      mr(3, 13, std::nullopt), mr(16, 16, std::nullopt),
        mr(32, 2, 100 + 3), mr(34, 1, 50),           mr(35, 13, std::nullopt)};
    p = plan_compression_unit(packed, 0, 16);
    CHECK(p.kind == K::compressed);
    CHECK(p.allocated == 3);
    CHECK(plan_compression_unit(packed, 16, 16).kind == K::sparse);
    p = plan_compression_unit(packed, 32, 16);
    CHECK(p.kind == K::compressed);
    CHECK(p.extents == std::vector<UnitPlan::Extent>{{103, 2}, {50, 1}});
    CHECK_FALSE(p.first_unmapped);

    // A unit across runs; adjacent clusters merge into one extent.
    const std::vector<MappedRun> spanning = {mr(0, 20, 10), mr(20, 2, 40), mr(22, 10, std::nullopt)};
    p = plan_compression_unit(spanning, 16, 16);
    CHECK(p.kind == K::compressed);
    CHECK(p.extents == std::vector<UnitPlan::Extent>{{26, 4}, {40, 2}});
    const std::vector<MappedRun> adjacent = {mr(0, 8, 100), mr(8, 8, 108)};
    CHECK(plan_compression_unit(adjacent, 0, 16).extents == std::vector<UnitPlan::Extent>{{100, 16}});

    // VCNs no run maps count as sparse and are named.
    const std::vector<MappedRun> short_runs = {mr(0, 5, 1)};
    p = plan_compression_unit(short_runs, 0, 16);
    CHECK(p.kind == K::compressed);
    CHECK(p.first_unmapped == 5u);
    p = plan_compression_unit(short_runs, 16, 16);
    CHECK(p.kind == K::sparse);
    CHECK(p.first_unmapped == 16u);
    CHECK(plan_compression_unit({}, 0, 16).first_unmapped == 0u);
    const std::vector<MappedRun> late = {mr(4, 12, 7)};  // runs starting after the unit's start
    p = plan_compression_unit(late, 0, 16);
    CHECK(p.first_unmapped == 0u);
    CHECK(p.allocated == 12);
}
