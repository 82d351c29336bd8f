// fat/deleted.hpp: deleted entries and their long names, read back from
// directory bytes built here as a driver deletes (0xE5 over byte 0 of each
// entry of the set).
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "fsimg/fat/deleted.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"

using namespace fsimg;

namespace {

std::array<std::uint8_t, 11> name11(const char* s) {
    std::array<std::uint8_t, 11> n{};
    for (std::size_t i = 0; i < 11; ++i) n[i] = static_cast<std::uint8_t>(s[i]);
    return n;
}

/// Appends the entry set of `long_name` (empty: none) and short name `sfn`, deleted when `deleted`.
void add_set(std::vector<std::byte>& dir, const std::u16string& long_name, const char* sfn, bool deleted,
             std::uint32_t cluster = 5, std::uint32_t size = 100) {
    const auto n = name11(sfn);
    const std::size_t lfn = long_name.empty() ? 0 : (long_name.size() + 12) / 13;
    const std::size_t at = dir.size();
    dir.resize(at + (lfn + 1) * fat::kDirEntrySize);
    if (lfn) {
        fat::encode_lfn_entries(long_name, fat::lfn_checksum(n),
                                std::span(dir).subspan(at, lfn * fat::kDirEntrySize));
    }
    fat::DirEntry e;
    e.name = n;
    e.attr = fat::kAttrArchive;
    e.first_cluster = cluster;
    e.file_size = size;
    fat::encode_dir_entry(e,
                          std::span(dir).subspan(at + lfn * fat::kDirEntrySize).first<fat::kDirEntrySize>());
    if (deleted)
        for (std::size_t i = 0; i <= lfn; ++i) dir[at + i * fat::kDirEntrySize] = std::byte{0xE5};
}

}  // namespace

TEST_CASE("fat deleted: long names come back, the short name's first byte proven by the checksum",
          "[fat][deleted]") {
    std::vector<std::byte> dir;
    add_set(dir, u"Photo 0001.jpg", "PHOTO0~1JPG", true);
    add_set(dir, u"live file.txt", "LIVEFI~1TXT", false);
    add_set(dir, u"", "GONE    BIN", true, 9, 5000);
    add_set(dir, u"Exactly13Char", "EXACTL~1   ", true);  // fills its entry: no terminator
    dir.resize(dir.size() + fat::kDirEntrySize);          // the end marker
    const auto d = fat::parse_deleted(dir);
    REQUIRE(d.size() == 3);
    CHECK(d[0].name == "Photo 0001.jpg");
    CHECK(d[0].short_name == "PHOTO0~1.JPG");
    CHECK(d[0].has_long_name);
    CHECK(d[1].name == "?ONE.BIN");
    CHECK(d[1].short_name == "?ONE.BIN");
    CHECK_FALSE(d[1].has_long_name);
    CHECK(d[1].entry.first_cluster == 9);
    CHECK(d[1].entry.file_size == 5000);
    CHECK(d[2].name == "Exactly13Char");
    CHECK(d[2].short_name == "EXACTL~1");
}

TEST_CASE("fat deleted: long-name entries of another set are not taken", "[fat][deleted]") {
    std::vector<std::byte> dir;
    add_set(dir, u"first.txt", "FIRST   TXT", true);
    // The long name of a set whose short entry was reused by another file: its checksum proves a
    // first byte ("F") that the deleted short entry after it does not lead to a valid name for.
    std::vector<std::byte> other;
    add_set(other, u"x", "\x01OTHER  TXT", true);  // checksum of a name starting with byte 0x01
    dir.insert(dir.end(), other.begin(), other.end());
    dir.resize(dir.size() + fat::kDirEntrySize);
    const auto d = fat::parse_deleted(dir);
    REQUIRE(d.size() == 2);
    CHECK(d[0].name == "first.txt");
    CHECK(d[1].name == "?OTHER.TXT");  // 0x01 cannot start a short name: no long name
    CHECK_FALSE(d[1].has_long_name);
}
