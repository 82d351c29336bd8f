// exFAT records (include/fsimg/exfat/structs.hpp): checksum vectors taken from
// images made by mkfs.exfat (exfatprogs 1.2.0), round trips, the up-case table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/exfat/structs.hpp"

using namespace fsimg;
using namespace fsimg::exfat;

namespace {

std::vector<std::byte> from_hex(const std::string& hex) {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        out.push_back(static_cast<std::byte>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

/// Sectors 0..10 of a boot region as mkfs.exfat 1.2.0 writes them: boot
/// sector (fields, zero boot code, 55AA), 8 extended boot sectors (zeros, 55AA
/// in the last two bytes), OEM parameters filled with 0xFF, reserved zeros.
std::vector<std::byte> mkfs_exfat_region(const std::string& first120_hex, std::size_t bps) {
    std::vector<std::byte> r(11 * bps);
    const auto head = from_hex(first120_hex);
    std::copy(head.begin(), head.end(), r.begin());
    r[510] = std::byte{0x55};
    r[511] = std::byte{0xAA};
    for (std::size_t s = 1; s <= 8; ++s) {
        r[s * bps + bps - 2] = std::byte{0x55};
        r[s * bps + bps - 1] = std::byte{0xAA};
    }
    std::fill(r.begin() + 9 * bps, r.begin() + 10 * bps, std::byte{0xFF});
    return r;
}

// `truncate -s 64M a.img && mkfs.exfat a.img` (512-byte sectors), checksum
// sector holds 37 B3 1D 02 repeated.
const std::string k512Head =
    "eb7690455846415420202000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000020000000000000800008000000000100000003e0000"
    "05000000d9690f6f00010000090301800000000000000000";
// The same on a loop device with 4096-byte logical sectors (`losetup -b 4096`):
// checksum sector holds 34 33 4C D1 repeated.
const std::string k4096Head =
    "eb7690455846415420202000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000040000000000000000100001000000000020000003e0000"
    "05000000737cefff000100000c0001800000000000000000";

}  // namespace

TEST_CASE("exFAT boot checksum matches mkfs.exfat's, 512 and 4096-byte sectors", "[exfat_structs]") {
    REQUIRE(from_hex(k512Head).size() == 120);
    REQUIRE(from_hex(k4096Head).size() == 120);
    const auto r512 = mkfs_exfat_region(k512Head, 512);
    CHECK(boot_checksum(r512) == 0x021DB337);
    const auto r4k = mkfs_exfat_region(k4096Head, 4096);
    CHECK(boot_checksum(r4k) == 0xD14C3334);

    // VolumeFlags (106, 107) and PercentInUse (112) are skipped, nothing else is.
    auto changed = r512;
    changed[106] = std::byte{0x02};
    changed[107] = std::byte{0x01};
    changed[112] = std::byte{0x64};
    CHECK(boot_checksum(changed) == 0x021DB337);
    for (std::size_t at : {std::size_t{0}, std::size_t{105}, std::size_t{108}, std::size_t{111},
                           std::size_t{113}, std::size_t{9 * 512}, r512.size() - 1}) {
        auto c = r512;
        c[at] ^= std::byte{1};
        CHECK(boot_checksum(c) != 0x021DB337);
    }
}

TEST_CASE("exFAT boot sector from mkfs.exfat decodes and validates", "[exfat_structs]") {
    auto r = mkfs_exfat_region(k512Head, 512);
    const BootSector bs = decode_boot_sector(std::span<const std::byte>(r).first<kBootSectorSize>());
    CHECK(bs.jump_boot == kJumpBoot);
    CHECK(bs.file_system_name == "EXFAT   ");
    CHECK(bs.must_be_zero_is_zero);
    CHECK(bs.volume_length == 131072);
    CHECK(bs.fat_offset == 2048);
    CHECK(bs.fat_length == 128);
    CHECK(bs.cluster_heap_offset == 4096);
    CHECK(bs.cluster_count == 15872);
    CHECK(bs.first_cluster_of_root_directory == 5);
    CHECK(bs.volume_serial_number == 0x6F0F69D9);
    CHECK(bs.file_system_revision == 0x0100);
    CHECK(bs.bytes_per_sector_shift == 9);
    CHECK(bs.sectors_per_cluster_shift == 3);
    CHECK(bs.number_of_fats == 1);
    CHECK(bs.drive_select == 0x80);
    CHECK(bs.boot_signature == 0xAA55);
    CHECK(validate_boot_sector(bs).empty());

    // Re-encoding gives the same bytes (BootCode untouched).
    std::vector<std::byte> again(512);
    encode_boot_sector(bs, std::span<std::byte>(again).first<kBootSectorSize>());
    CHECK(std::equal(again.begin(), again.end(), r.begin()));
}

TEST_CASE("exFAT boot sector round trip with random fields", "[exfat_structs]") {
    const auto seed = GENERATE(take(20, random(0u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    BootSector bs;
    bs.jump_boot = {static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()), 0x90};
    bs.file_system_name = "EXFAT   ";
    bs.partition_offset = rng();
    bs.volume_length = rng();
    bs.fat_offset = static_cast<std::uint32_t>(rng());
    bs.fat_length = static_cast<std::uint32_t>(rng());
    bs.cluster_heap_offset = static_cast<std::uint32_t>(rng());
    bs.cluster_count = static_cast<std::uint32_t>(rng());
    bs.first_cluster_of_root_directory = static_cast<std::uint32_t>(rng());
    bs.volume_serial_number = static_cast<std::uint32_t>(rng());
    bs.file_system_revision = static_cast<std::uint16_t>(rng());
    bs.volume_flags = static_cast<std::uint16_t>(rng());
    bs.bytes_per_sector_shift = static_cast<std::uint8_t>(rng());
    bs.sectors_per_cluster_shift = static_cast<std::uint8_t>(rng());
    bs.number_of_fats = static_cast<std::uint8_t>(rng());
    bs.drive_select = static_cast<std::uint8_t>(rng());
    bs.percent_in_use = static_cast<std::uint8_t>(rng());
    bs.boot_signature = static_cast<std::uint16_t>(rng());
    std::vector<std::byte> s(512, std::byte{0x5A});
    encode_boot_sector(bs, std::span<std::byte>(s).first<kBootSectorSize>());
    CHECK(decode_boot_sector(std::span<const std::byte>(s).first<kBootSectorSize>()) == bs);
    CHECK(s[off::BootCode] == std::byte{0x5A});  // BootCode left alone
    // validate never throws or shifts out of range, whatever the values.
    CHECK_NOTHROW(validate_boot_sector(bs));
}

TEST_CASE("exFAT boot sector validation names each broken rule", "[exfat_structs]") {
    Layout l;
    l.volume_length = 131072;
    l.fat_offset = 2048;
    l.fat_length = 125;
    l.cluster_heap_offset = 4096;
    l.cluster_count = 15872;
    l.root_first_cluster = 5;
    const BootSector good = boot_sector_from_layout(l, 1, 0);
    REQUIRE(validate_boot_sector(good).empty());
    auto codes = [](const BootSector& bs) {
        std::vector<std::string> out;
        for (const auto& p : validate_boot_sector(bs)) out.emplace_back(p.code);
        return out;
    };
    using V = std::vector<std::string>;
    BootSector b = good;
    b.bytes_per_sector_shift = 13;
    CHECK(codes(b) == V{"exfat.boot.bytes_per_sector_shift"});
    b = good;
    b.sectors_per_cluster_shift = 17;  // 64 MiB clusters
    CHECK(codes(b) == V{"exfat.boot.sectors_per_cluster_shift"});
    b = good;
    b.fat_length = 124;
    CHECK(codes(b) == V{"exfat.boot.fat_length"});
    b = good;
    b.cluster_count = 15871;
    CHECK(codes(b) == V{"exfat.boot.cluster_count"});
    b = good;
    b.fat_offset = 23;
    CHECK(codes(b) == V{"exfat.boot.fat_offset"});
    b = good;
    b.first_cluster_of_root_directory = 15874;
    CHECK(codes(b) == V{"exfat.boot.root_cluster"});
    b = good;
    b.volume_length = 2047;
    const auto vl = codes(b);
    CHECK(std::count(vl.begin(), vl.end(), "exfat.boot.volume_length") == 1);
    b = good;
    b.file_system_revision = 0x0200;
    CHECK(codes(b) == V{"exfat.boot.revision"});
    b = good;
    b.must_be_zero_is_zero = false;
    b.boot_signature = 0;
    CHECK(codes(b) == V{"exfat.boot.must_be_zero", "exfat.boot.signature"});
}

TEST_CASE("exFAT checksum sector and extended boot sectors", "[exfat_structs]") {
    for (std::size_t bps : {std::size_t{512}, std::size_t{4096}}) {
        std::vector<std::byte> region(12 * bps);
        auto r = std::span<std::byte>(region);
        for (std::size_t s = 1; s <= 8; ++s) encode_extended_boot_sector(r.subspan(s * bps, bps));
        CHECK(extended_boot_signature(r.subspan(bps, bps)) == kExtendedBootSignature);
        CHECK(region[2 * bps - 2] == std::byte{0x55});
        CHECK(region[2 * bps - 1] == std::byte{0xAA});
        CHECK(region[2 * bps - 4] == std::byte{0x00});
        CHECK_FALSE(boot_region_checksum_ok(region, static_cast<std::uint32_t>(bps)));
        encode_checksum_sector(boot_checksum(r.first(11 * bps)), r.subspan(11 * bps, bps));
        CHECK(boot_region_checksum_ok(region, static_cast<std::uint32_t>(bps)));
        region[11 * bps + bps - 1] ^= std::byte{1};  // the last copy counts too
        CHECK_FALSE(boot_region_checksum_ok(region, static_cast<std::uint32_t>(bps)));
    }
    std::vector<std::byte> tiny(3);
    CHECK_THROWS_AS(encode_extended_boot_sector(tiny), FormatError);
    CHECK_THROWS_AS(encode_checksum_sector(1, std::span<std::byte>(tiny)), FormatError);
    CHECK_FALSE(boot_region_checksum_ok(tiny, 512));
}

TEST_CASE("exFAT recommended up-case table: size, checksum, expansion", "[exfat_structs]") {
    const auto table = recommended_upcase_table();
    CHECK(table.size() == 2918);
    const auto bytes = upcase_table_bytes(table);
    CHECK(bytes.size() == kRecommendedUpcaseBytes);
    CHECK(table_checksum(bytes) == kRecommendedUpcaseChecksum);
    CHECK(table_checksum(bytes) == 0xE619D30D);

    const auto map = expand_upcase_table(bytes);
    REQUIRE(map);
    REQUIRE(map->size() == 0x10000);
    CHECK((*map)[u'a'] == u'A');
    CHECK((*map)[u'z'] == u'Z');
    CHECK((*map)[u'A'] == u'A');
    CHECK((*map)[u'0'] == u'0');
    CHECK((*map)[0x00E9] == 0x00C9);  // é -> É
    CHECK((*map)[0x03B1] == 0x0391);  // α -> Α
    CHECK((*map)[0x0430] == 0x0410);  // а -> А (Cyrillic)
    CHECK((*map)[0xFF41] == 0xFF21);  // fullwidth a -> A
    CHECK((*map)[0xFFFF] == 0xFFFF);
    // Only a-z change among the first 128 (mandatory part, [EXFAT §7.2]).
    for (char16_t c = 0; c < 128; ++c) {
        const char16_t want = (c >= u'a' && c <= u'z') ? static_cast<char16_t>(c - 32) : c;
        CHECK((*map)[c] == want);
    }
}

TEST_CASE("exFAT up-case expansion rejects malformed tables", "[exfat_structs]") {
    auto le = [](std::vector<std::uint16_t> v) { return upcase_table_bytes(v); };
    CHECK_FALSE(expand_upcase_table(std::vector<std::byte>(3)));             // odd
    CHECK_FALSE(expand_upcase_table(le({0x0000, 0x0001})));                  // too short
    CHECK_FALSE(expand_upcase_table(le({0xFFFF, 0xFFFF, 0xFFFF, 0x0002})));  // run passes U+FFFF
    CHECK_FALSE(expand_upcase_table(le({0xFFFF})));                          // run without a length
    // The smallest complete table: one run of every identity mapping.
    const auto identity = expand_upcase_table(le({0xFFFF, 0xFFFF, 0xFFFF}));
    REQUIRE(identity);
    CHECK((*identity)[u'a'] == u'a');
    CHECK_FALSE(expand_upcase_table(le({0xFFFF, 0xFFFF, 0xFFFF, 0x0041})));  // past U+FFFF
}

TEST_CASE("exFAT system directory entries round trip", "[exfat_structs]") {
    std::array<std::byte, kDirEntrySize> e{};
    encode_allocation_bitmap_entry({1, 2, 0x123456789ULL}, e);
    CHECK(e[0] == std::byte{0x81});
    CHECK(decode_allocation_bitmap_entry(e) == AllocationBitmapEntry{1, 2, 0x123456789ULL});
    encode_upcase_table_entry({0xE619D30D, 3, 5836}, e);
    CHECK(e[0] == std::byte{0x82});
    CHECK(decode_upcase_table_entry(e) == UpcaseTableEntry{0xE619D30D, 3, 5836});

    const VolumeLabelEntry label = volume_label_entry_from_utf8("Données 123");
    CHECK(label.character_count == 11);
    encode_volume_label_entry(label, e);
    CHECK(e[0] == std::byte{0x83});
    CHECK(e[1] == std::byte{11});
    CHECK(e[2] == std::byte{'D'});
    CHECK(e[10] == std::byte{0xE9});  // é (5th unit), UTF-16LE
    CHECK(e[11] == std::byte{0x00});
    CHECK(decode_volume_label_entry(e) == label);

    const VolumeLabelEntry empty = volume_label_entry_from_utf8("");
    CHECK(empty.character_count == 0);
    encode_volume_label_entry(empty, e);
    CHECK(std::all_of(e.begin() + 1, e.end(), [](std::byte b) { return b == std::byte{0}; }));

    CHECK(volume_label_entry_from_utf8("\xF0\x9F\x98\x80 smile").character_count ==
          8);  // surrogate pair: 2 units
    CHECK_THROWS_AS(volume_label_entry_from_utf8("TWELVE CHARS"), Error);
    CHECK_THROWS_AS(volume_label_entry_from_utf8("A:B"), Error);
    CHECK_THROWS_AS(volume_label_entry_from_utf8("A\tB"), Error);
    CHECK_THROWS_AS(volume_label_entry_from_utf8("\xFF"), Error);
}
