#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/fat/structs.hpp"

using namespace fsimg;
using namespace fsimg::fat;

namespace {
std::array<std::uint8_t, 11> name11(const char* s) {
    std::array<std::uint8_t, 11> n{};
    std::memcpy(n.data(), s, 11);
    return n;
}
}  // namespace

TEST_CASE("LFN checksum matches what mtools writes", "[fat_structs]") {
    // mtools 4.0.32: "A long file name.text" -> short "ALONGF~1TEX", LFN checksum 0x7D.
    CHECK(lfn_checksum(name11("ALONGF~1TEX")) == 0x7D);
    // Rotate-right-and-add by hand for an all-space name: every step maps s to ror(s)+0x20.
    std::uint8_t s = 0;
    for (int i = 0; i < 11; ++i) s = static_cast<std::uint8_t>(((s & 1) << 7) + (s >> 1) + 0x20);
    CHECK(lfn_checksum(name11("           ")) == s);
}

TEST_CASE("boot sector encode/decode round trip for both BPB shapes", "[fat_structs]") {
    for (bool fat32 : {false, true}) {
        BootSector bs;
        bs.jmp_boot = {0xEB, static_cast<std::uint8_t>(fat32 ? 0x58 : 0x3C), 0x90};
        bs.oem_name = "MSWIN4.1";
        bs.bytes_per_sector = 4096;
        bs.sectors_per_cluster = 8;
        bs.reserved_sectors = fat32 ? 32 : 1;
        bs.num_fats = 2;
        bs.root_entry_count = fat32 ? 0 : 512;
        bs.total_sectors_16 = fat32 ? 0 : 60000;
        bs.total_sectors_32 = fat32 ? 123456789 : 0;
        bs.media = 0xF8;
        bs.fat_size_16 = fat32 ? 0 : 77;
        bs.sectors_per_track = 63;
        bs.num_heads = 255;
        bs.hidden_sectors = 2048;
        bs.is_fat32_shape = fat32;
        bs.fat_size_32 = fat32 ? 0x12345 : 0;
        bs.root_cluster = fat32 ? 2 : 0;
        bs.fsinfo_sector = fat32 ? 1 : 0;
        bs.backup_boot_sector = fat32 ? 6 : 0;
        bs.drive_number = 0x80;
        bs.boot_signature = 0x29;
        bs.volume_id = 0xDEADBEEF;
        bs.volume_label = "LABEL      ";
        bs.fs_type = fat32 ? "FAT32   " : "FAT16   ";
        bs.signature = 0xAA55;
        std::array<std::byte, kBootSectorSize> buf{};
        encode_boot_sector(bs, buf);
        CHECK(buf[510] == std::byte{0x55});
        CHECK(buf[511] == std::byte{0xAA});
        CHECK(buf[0x0B] == std::byte{0x00});
        CHECK(buf[0x0C] == std::byte{0x10});  // 4096 little-endian
        const BootSector back = decode_boot_sector(buf);
        CHECK(back.volume_id == 0xDEADBEEF);
        CHECK(back.fat_size() == (fat32 ? 0x12345u : 77u));
        CHECK(back.total_sectors() == (fat32 ? 123456789u : 60000u));
        CHECK(back.volume_label == "LABEL      ");
        CHECK(back.is_fat32_shape == fat32);
        CHECK(back.hidden_sectors == 2048);
        // Field positions per FATGEN: the FAT32 label lives at 0x47, the FAT16 one at 0x2B.
        CHECK(buf[fat32 ? 0x47 : 0x2B] == std::byte{'L'});
    }
}

TEST_CASE("FAT12 entries straddle bytes and keep their neighbours", "[fat_structs]") {
    std::vector<std::byte> fat(3 * 100);
    std::mt19937 rng(12345);
    std::vector<std::uint32_t> want(200);
    for (std::uint32_t n = 0; n < 200; ++n) {
        want[n] = rng() & 0xFFF;
        set_fat_entry(fat, FatType::fat12, n, want[n]);
    }
    for (std::uint32_t n = 0; n < 200; ++n) CHECK(get_fat_entry(fat, FatType::fat12, n) == want[n]);
    // Entry 1 = 0xABC, entry 0 = 0x123 are packed as bytes 23 C1 AB.
    std::vector<std::byte> three(3);
    set_fat_entry(three, FatType::fat12, 0, 0x123);
    set_fat_entry(three, FatType::fat12, 1, 0xABC);
    CHECK(three == std::vector<std::byte>{std::byte{0x23}, std::byte{0xC1}, std::byte{0xAB}});
    // Out of range is an error, not a read past the buffer.
    CHECK_THROWS_AS(get_fat_entry(three, FatType::fat12, 2), FormatError);
}

TEST_CASE("FAT32 entries keep the reserved top four bits", "[fat_structs]") {
    std::vector<std::byte> fat(16, std::byte{0xFF});
    set_fat_entry(fat, FatType::fat32, 2, 0x00000005);
    CHECK(get_fat_entry(fat, FatType::fat32, 2) == 5);
    CHECK(fat[11] == std::byte{0xF0});
    CHECK(fat0_value(FatType::fat32, 0xF8) == 0x0FFFFFF8);
    CHECK(fat0_value(FatType::fat16, 0xF0) == 0xFFF0);
    CHECK(fat0_value(FatType::fat12, 0xF8) == 0xFF8);
}

TEST_CASE("FAT timestamps: fields, 2-second rounding, clamping", "[fat_structs]") {
    // 2000-02-29 13:45:31 UTC = 951831931
    const FatTimestamp ts = fat_timestamp_from_unix(951831931);
    CHECK(ts.date == ((20 << 9) | (2 << 5) | 29));
    CHECK(ts.time == ((13 << 11) | (45 << 5) | 15));
    CHECK(ts.tenth == 100);
    CHECK(unix_from_fat_timestamp(ts.date, ts.time) == 951831930);
    // Before 1980 clamps to 1980-01-01 00:00:00.
    const FatTimestamp early = fat_timestamp_from_unix(0);
    CHECK(early.date == ((0 << 9) | (1 << 5) | 1));
    CHECK(early.time == 0);
    // After 2107 clamps to 2107-12-31 23:59:58.
    const FatTimestamp late = fat_timestamp_from_unix(9999999999);
    CHECK(late.date == ((127 << 9) | (12 << 5) | 31));
    CHECK(late.time == ((23 << 11) | (59 << 5) | 29));
    CHECK(unix_from_fat_timestamp(0, 0) == -1);  // month 0 is invalid
}

TEST_CASE("directory entry round trip splits the first cluster", "[fat_structs]") {
    DirEntry d;
    d.name = name11("README  TXT");
    d.attr = kAttrArchive;
    d.nt_res = 0x18;
    d.first_cluster = 0x0012ABCD;
    d.file_size = 45;
    d.wrt_date = 0x5A21;
    std::array<std::byte, kDirEntrySize> raw{};
    encode_dir_entry(d, raw);
    CHECK(raw[20] == std::byte{0x12});  // DIR_FstClusHI low byte
    CHECK(raw[26] == std::byte{0xCD});  // DIR_FstClusLO low byte
    const DirEntry back = decode_dir_entry(raw);
    CHECK(back.first_cluster == 0x0012ABCD);
    CHECK(back.file_size == 45);
    CHECK(back.nt_res == 0x18);
    CHECK(back.name == d.name);
}

TEST_CASE("volume labels: upper-cased, padded, bad ones named", "[fat_structs]") {
    CHECK(normalize_volume_label("") == "NO NAME    ");
    CHECK(normalize_volume_label("my disk") == "MY DISK    ");
    CHECK(normalize_volume_label("ABCDEFGHIJK") == "ABCDEFGHIJK");
    CHECK_THROWS_WITH(normalize_volume_label("ABCDEFGHIJKL"),
                      Catch::Contains("ABCDEFGHIJKL") && Catch::Contains("11"));
    CHECK_THROWS_WITH(normalize_volume_label("A*B"), Catch::Contains("A*B") && Catch::Contains("'*'"));
    CHECK_THROWS_WITH(normalize_volume_label("A.B"), Catch::Contains("'.'"));
    CHECK_THROWS_WITH(normalize_volume_label("caf\xC3\xA9"), Catch::Contains("non-ASCII"));
    CHECK_THROWS_AS(normalize_volume_label(" X"), Error);
}

TEST_CASE("boot stub: jump targets the code, message is addressed", "[fat_structs]") {
    for (bool fat32 : {false, true}) {
        std::array<std::byte, kBootSectorSize> s{};
        write_boot_stub(s, fat32);
        const std::size_t code = fat32 ? 0x5A : 0x3E;
        CHECK(s[0] == std::byte{0xEB});
        CHECK(static_cast<std::size_t>(s[1]) + 2 == code);
        CHECK(s[code] == std::byte{0x31});  // xor ax,ax
        const std::size_t msg = static_cast<std::size_t>(s[code + 5]) | static_cast<std::size_t>(s[code + 6])
                                                                            << 8;
        REQUIRE(msg > 0x7C00);
        const char* text = reinterpret_cast<const char*>(s.data() + (msg - 0x7C00));
        CHECK(std::string(text).find("not a bootable disk") != std::string::npos);
    }
}
