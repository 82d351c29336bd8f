#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"

using namespace fsimg;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir() {
    std::string t = (fs::temp_directory_path() / "fsimg-gz-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    return t;
}
}  // namespace

TEST_CASE("gzip images round trip through write_gzip and open_gzip", "[io][gzip]") {
    const fs::path dir = temp_dir();
    // 3 MiB: a random first MiB, a zero MiB, a patterned last MiB (not a multiple of the chunk).
    std::vector<std::byte> data((3u << 20) + 4321);
    std::mt19937 rng(7);
    for (std::size_t i = 0; i < (1u << 20); ++i) data[i] = static_cast<std::byte>(rng());
    for (std::size_t i = 2u << 20; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 7);
    io::MemoryImage src(data);
    io::write_gzip(src, dir / "a.img.gz");
    CHECK(io::is_gzip_file(dir / "a.img.gz"));
    CHECK_FALSE(io::is_gzip_file(dir / "missing"));

    auto img = io::FileImage::open_gzip(dir / "a.img.gz");
    REQUIRE(img->size() == data.size());
    std::vector<std::byte> back(data.size());
    img->read_at(0, back);
    CHECK(back == data);
    CHECK(img->path() == dir / "a.img.gz");
    // open_volume takes the same path transparently.
    auto v = io::open_volume((dir / "a.img.gz").string());
    CHECK(v.device().size() == data.size());
    // Nothing but the .gz remains in the folder (no temporary left from write_gzip).
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
    fs::remove_all(dir);
}

TEST_CASE("damaged and truncated gzip streams are errors naming the offset", "[io][gzip]") {
    const fs::path dir = temp_dir();
    std::vector<std::byte> data(1u << 20);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>((i * 2654435761u) >> 13);
    io::MemoryImage src(data);
    io::write_gzip(src, dir / "b.gz");
    const auto full = fs::file_size(dir / "b.gz");
    fs::resize_file(dir / "b.gz", full / 2);
    CHECK_THROWS_WITH(io::FileImage::open_gzip(dir / "b.gz"),
                      Catch::Contains("b.gz") && Catch::Contains("ends early"));
    fs::remove_all(dir);
}

TEST_CASE("a gzip image is decompressed only as far as reads reach", "[io][gzip]") {
    const fs::path dir = temp_dir();
    // An MBR declaring one partition of 24 MiB at LBA 2048: the image's extent is 25 MiB; its
    // last MiB is random, the rest zeros, and 7 MiB of random bytes follow past the extent.
    std::vector<std::byte> data(32u << 20);
    data[510] = std::byte{0x55};
    data[511] = std::byte{0xAA};
    data[446 + 4] = std::byte{0x0C};
    const std::uint32_t first = 2048, count = 24u << 11;
    for (int i = 0; i < 4; ++i) {
        data[446 + 8 + i] = static_cast<std::byte>(first >> (8 * i));
        data[446 + 12 + i] = static_cast<std::byte>(count >> (8 * i));
    }
    std::mt19937 rng(11);
    for (std::size_t i = 24u << 20; i < data.size(); ++i) data[i] = static_cast<std::byte>(rng());
    io::MemoryImage src(data);
    io::write_gzip(src, dir / "p.img.gz");
    ::setenv("FSIMG_GZIP_TEMP_LIMIT", "2M", 1);
    auto img = io::FileImage::open_gzip(dir / "p.img.gz");
    CHECK(img->size() == (25u << 20));
    std::array<std::byte, 512> s0{};
    img->read_at(0, s0);  // the first MiB only
    CHECK(s0[510] == std::byte{0x55});
    std::vector<std::byte> tail(1u << 20);
    img->read_at(24u << 20, tail);  // 1 MiB of random data: within the 2 MiB cap
    CHECK(std::equal(tail.begin(), tail.end(), data.begin() + (24 << 20)));
    ::unsetenv("FSIMG_GZIP_TEMP_LIMIT");
    CHECK(img->gzip_problems().empty());
    // Past the extent nothing is stored; the trailer is checked to the end.
    img->verify_gzip();
    CHECK(img->gzip_problems().empty());
    CHECK_FALSE(img->gzip_damaged());
    fs::remove_all(dir);
}

TEST_CASE("a gzip stream with a cut trailer or trailing garbage is reported", "[io][gzip]") {
    const fs::path dir = temp_dir();
    std::vector<std::byte> data(200000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>((i * 2654435761u) >> 13);
    io::MemoryImage src(data);
    io::write_gzip(src, dir / "c.gz");
    const auto full = fs::file_size(dir / "c.gz");
    fs::copy_file(dir / "c.gz", dir / "g.gz");
    fs::resize_file(dir / "c.gz", full - 4);  // ISIZE cut off
    CHECK_THROWS_WITH(io::FileImage::open_gzip(dir / "c.gz"), Catch::Contains("before its trailer"));
    {
        std::ofstream g(dir / "g.gz", std::ios::binary | std::ios::app);
        g << "garbage!";
    }
    auto img = io::FileImage::open_gzip(dir / "g.gz");
    REQUIRE(img->gzip_problems().size() == 1);
    CHECK_THAT(img->gzip_problems()[0], Catch::Contains("8 bytes of trailing garbage"));
    CHECK_FALSE(img->gzip_damaged());
    fs::remove_all(dir);
}
