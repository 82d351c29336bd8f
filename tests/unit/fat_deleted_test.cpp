// fat/deleted.hpp: deleted entries and their long names, read back from
// directory bytes built here as a driver deletes (0xE5 over byte 0 of each
// entry of the set).
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/fat/deleted.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"

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

TEST_CASE("fat deleted: a deleted directory continues into the free clusters after its first",
          "[fat][deleted]") {
    // FAT16, 512-byte clusters (16 entries each); clusters 10, 11, 12 free in the FAT.
    fat::LayoutRequest lr;
    lr.volume_bytes = 16 << 20;
    lr.type = fat::FatType::fat16;
    lr.cluster_bytes = 512;
    const auto planned = fat::plan_layout(lr);
    REQUIRE(std::holds_alternative<fat::Layout>(planned));
    const fat::Layout l = std::get<fat::Layout>(planned);
    io::MemoryImage img(l.volume_bytes());
    fat::format_volume(img, l, {});
    // Cluster 10: ".", "..", then 14 deleted single-entry files (no end marker);
    // cluster 11: one more, then the end marker.
    std::vector<std::byte> dir;
    fat::DirEntry dot;
    dot.name = name11(".          ");
    dot.attr = fat::kAttrDirectory;
    dot.first_cluster = 10;
    dir.resize(64);
    fat::encode_dir_entry(dot, std::span(dir).first<fat::kDirEntrySize>());
    dot.name = name11("..         ");
    dot.first_cluster = 0;
    fat::encode_dir_entry(dot, std::span(dir).subspan(32).first<fat::kDirEntrySize>());
    for (int i = 0; i < 15; ++i) {
        char sfn[16];
        std::snprintf(sfn, sizeof sfn, "FILE%04dTXT", i);
        add_set(dir, u"", sfn, true, 20 + i, 10);
    }
    dir.resize(2 * 512);
    const auto write_cluster = [&](std::uint32_t c, std::span<const std::byte> b) {
        img.write_at(l.cluster_offset(c), b);
    };
    write_cluster(10, std::span<const std::byte>(dir).first(512));
    write_cluster(11, std::span<const std::byte>(dir).subspan(512));
    fat::DeletedRecord d;
    d.entry.attr = fat::kAttrDirectory;
    d.entry.first_cluster = 10;
    d.name = "?IR";
    const auto names = [&] {
        std::vector<std::string> out;
        for (const auto& r : fat::deleted_directory_entries(fat::Volume(img), d)) out.push_back(r.short_name);
        return out;
    };
    CHECK(names().size() == 15);
    CHECK(names().back() == "?ILE0014.TXT");
    // Cluster 11 holding what no directory holds (a control byte in a name): the first cluster only.
    std::vector<std::byte> junk(512, std::byte{0x01});
    write_cluster(11, junk);
    CHECK(names().size() == 14);
    // Cluster 11 in use by a file again: the first cluster only.
    write_cluster(11, std::span<const std::byte>(dir).subspan(512));
    const std::array<std::byte, 2> end{std::byte{0xFF}, std::byte{0xFF}};
    img.write_at(l.first_fat_sector * l.bytes_per_sector + 11 * 2, end);
    CHECK(names().size() == 14);
}
