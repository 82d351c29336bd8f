#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
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
