// NTFS records (include/fsimg/ntfs/structs.hpp): encodings from formats.md
// §3.1, fixups, runlists (examples from [FLATCAP concepts/data_runs], round
// trips, hostile input), the up-case table against mkntfs', collation, record
// and index builders, $AttrDef and $Secure against mkntfs 2022.10.3 [EXP].
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/structs.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> v) {
    std::vector<std::byte> out;
    for (int x : v) out.push_back(static_cast<std::byte>(x));
    return out;
}

}  // namespace

TEST_CASE("ntfs boot sector: round trip and mkntfs' encodings", "[ntfs][structs]") {
    BootSector b;
    b.bytes_per_sector = 512;
    b.sectors_per_cluster_raw = 8;
    b.hidden_sectors = 2048;
    b.total_sectors = 204799;
    b.mft_lcn = 4;
    b.mftmirr_lcn = 12799;
    b.clusters_per_mft_record = -10;
    b.clusters_per_index_block = 1;
    b.volume_serial_number = 0x6AA677D662DD107Bull;
    std::array<std::byte, kBootSectorSize> s{};
    encode_boot_sector(b, s);
    CHECK(decode_boot_sector(s) == b);
    CHECK(core::load_string(std::span(s).subspan(3, 8)) == "NTFS    ");
    CHECK(s[0] == std::byte{0xEB});
    CHECK(s[510] == std::byte{0x55});
    CHECK(s[511] == std::byte{0xAA});
    CHECK(core::le32<off::DriveSignature>(std::span<const std::byte, 512>(s)) == 0x00800080);
    CHECK(static_cast<std::uint8_t>(s[off::ClustersPerMftRecord]) == 0xF6);

    // formats.md §3.1 [EXP]
    CHECK(encode_sectors_per_cluster(512, 512) == 1);
    CHECK(encode_sectors_per_cluster(4096, 512) == 8);
    CHECK(encode_sectors_per_cluster(65536, 512) == 0x80);
    CHECK(encode_sectors_per_cluster(131072, 512) == 0xF8);
    CHECK(encode_sectors_per_cluster(2u << 20, 512) == 0xF4);
    CHECK(!encode_sectors_per_cluster(4u << 20, 512));
    CHECK(!encode_sectors_per_cluster(3000, 512));
    CHECK(!encode_sectors_per_cluster(256, 512));
    CHECK(decode_cluster_bytes(0xF4, 512) == (2u << 20));
    CHECK(decode_cluster_bytes(0x80, 512) == 65536u);
    CHECK(!decode_cluster_bytes(0, 512));
    CHECK(!decode_cluster_bytes(0x81, 512));
    CHECK(encode_record_size(1024, 512) == 2);
    CHECK(encode_record_size(4096, 512) == 8);
    CHECK(encode_record_size(1024, 4096) == -10);
    CHECK(encode_record_size(4096, 4096) == 1);
    CHECK(encode_record_size(4096, 65536) == -12);
    CHECK(decode_record_size(-10, 4096) == 1024u);
    CHECK(decode_record_size(2, 512) == 1024u);
    CHECK(!decode_record_size(0, 4096));
    CHECK(!decode_record_size(-40, 4096));
}

TEST_CASE("ntfs fixups: apply, verify, and report a torn stride by position", "[ntfs][structs]") {
    std::vector<std::byte> r(1024);
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::byte>(i * 7);
    core::store_le16(r, 4, 0x30);
    core::store_le16(r, 6, 3);
    const auto original = r;
    apply_fixups(r, 0x30, 0x1234);
    CHECK(core::load_le16(r, 510) == 0x1234);
    CHECK(core::load_le16(r, 1022) == 0x1234);
    CHECK(core::load_le16(r, 0x32) == core::load_le16(original, 510));
    auto torn = r;
    core::store_le16(torn, 1022, 0x9999);
    CHECK(verify_and_remove_fixups(torn) == std::optional<std::size_t>(1));
    CHECK(!verify_and_remove_fixups(r));
    // Everything but the array itself is back.
    for (std::size_t i = 0; i < r.size(); ++i)
        if (i < 0x30 || i >= 0x36) REQUIRE(r[i] == original[i]);

    auto bad = original;
    core::store_le16(bad, 6, 5);  // count does not match 1024 bytes
    CHECK_THROWS_AS(verify_and_remove_fixups(bad), FormatError);
    core::store_le16(bad, 6, 3);
    core::store_le16(bad, 4, 0x1FE);  // array past the first stride
    CHECK_THROWS_AS(verify_and_remove_fixups(bad), FormatError);
    std::vector<std::byte> odd(1000);
    CHECK_THROWS_AS(apply_fixups(odd, 0x30, 1), FormatError);
}

TEST_CASE("ntfs runlists: documented examples", "[ntfs][structs]") {
    // [FLATCAP concepts/data_runs]: 21 18 34 56 = 0x18 clusters at LCN 0x5634.
    const auto runs = decode_runlist(bytes({0x21, 0x18, 0x34, 0x56, 0x00}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0] == DataRun{0x18, 0x5634});
    CHECK(encode_runlist(runs) == bytes({0x21, 0x18, 0x34, 0x56, 0x00}));
    // +0x80 needs two bytes, as does a length of 0x80 (read as signed by ntfs-3g).
    CHECK(encode_runlist(std::vector<DataRun>{{1, 0x80}}) == bytes({0x21, 0x01, 0x80, 0x00, 0x00}));
    CHECK(encode_runlist(std::vector<DataRun>{{0x80, 1}}) == bytes({0x12, 0x80, 0x00, 0x01, 0x00}));
    // mkntfs' $MFT and $BadClus:$Bad runs [EXP].
    CHECK(encode_runlist(std::vector<DataRun>{{7, 4}}) == bytes({0x11, 0x07, 0x04, 0x00}));
    CHECK(encode_runlist(std::vector<DataRun>{{25599, std::nullopt}}) == bytes({0x02, 0xFF, 0x63, 0x00}));
    // A backwards second run: negative delta.
    const std::vector<DataRun> back{{2, 0x1000}, {3, 0x10}};
    const auto enc = encode_runlist(back);
    CHECK(enc == bytes({0x21, 0x02, 0x00, 0x10, 0x21, 0x03, 0x10, 0xF0, 0x00}));
    CHECK(decode_runlist(enc) == back);
}

TEST_CASE("ntfs runlists: random round trips", "[ntfs][structs]") {
    const auto seed = GENERATE(take(20, random(1u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    std::vector<DataRun> runs;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
        const std::uint64_t len = 1 + (rng() >> (rng() % 60 + 4));
        if (rng() % 5 == 0)
            runs.push_back({len, std::nullopt});
        else
            runs.push_back({len, rng() >> (rng() % 62 + 2)});
    }
    CHECK(decode_runlist(encode_runlist(runs)) == runs);
}

TEST_CASE("ntfs runlists: hostile input is refused, never overrun", "[ntfs][structs]") {
    CHECK_THROWS_AS(decode_runlist(bytes({0x21, 0x18, 0x34})), FormatError);        // field past the end
    CHECK_THROWS_AS(decode_runlist(bytes({0x21, 0x18, 0x34, 0x56})), FormatError);  // no terminator
    CHECK_THROWS_AS(decode_runlist(bytes({0x11, 0x00, 0x05, 0x00})), FormatError);  // zero length
    CHECK_THROWS_AS(decode_runlist(bytes({0x90, 0x05, 0x00})), FormatError);        // length width 0
    CHECK_THROWS_AS(decode_runlist(bytes({0x11, 0x01, 0xFF, 0x00})), FormatError);  // LCN -1
    CHECK_THROWS_AS(decode_runlist(bytes({0x11, 0x01, 0x01, 0x11, 0x01, 0x01, 0x00}), 1),
                    FormatError);  // bound
    CHECK_THROWS_AS(encode_runlist(std::vector<DataRun>{{0, 1}}), Error);
}

TEST_CASE("ntfs $UpCase: the table mkntfs writes", "[ntfs][structs]") {
    const auto t = upcase_table();
    std::vector<std::byte> raw(2 * t.size());
    for (std::size_t i = 0; i < t.size(); ++i) core::store_le16(raw, 2 * i, t[i]);
    const auto crc = crc32(0, reinterpret_cast<const Bytef*>(raw.data()), static_cast<uInt>(raw.size()));
    CHECK(crc == 0xCEE8CFFAu);  // CRC-32 of mkntfs 2022.10.3's $UpCase [EXP]
    CHECK(std::count_if(t.begin(), t.end(), [i = 0u](std::uint16_t v) mutable { return v != i++; }) == 973);
    CHECK(t[u'a'] == u'A');
    CHECK(t[u'z'] == u'Z');
    CHECK(t[0x00E9] == 0x00C9);  // é
    CHECK(t[0x00FF] == 0x0178);  // ÿ -> Ÿ
    CHECK(t[0x03C9] == 0x03A9);  // ω
    CHECK(t[0x0430] == 0x0410);  // а (Cyrillic)
    CHECK(t[u'A'] == u'A');
    CHECK(t[0xFF41] == 0xFF21);  // fullwidth a
    // $UpCase:$Info: mkntfs' CRC for this table, also found in a Windows 10
    // 1709 $Info: the same table.
    CHECK(upcase_info_crc64(t) == 0xDADC7E776B1B690Cull);
    CHECK(upcase_info_crc64(std::vector<std::uint16_t>{}) == 0);
    std::vector<std::uint16_t> other(t.begin(), t.end());
    other[0x61] = 0x61;
    CHECK(upcase_info_crc64(other) != 0xDADC7E776B1B690Cull);
}

TEST_CASE("ntfs $I30 collation", "[ntfs][structs]") {
    CHECK(collate_file_names(u"$MFT", u"$MFTMirr") < 0);  // prefix first
    CHECK(collate_file_names(u"abc", u"ABC") == 0);
    CHECK(collate_file_names(u"$Volume", u".") < 0);  // '$' 0x24 < '.' 0x2E
    CHECK(collate_file_names(u"$AttrDef", u"$BadClus") < 0);
    CHECK(collate_file_names(u"$Bitmap", u"$Boot") < 0);
    CHECK(collate_file_names(u"_x", u"ax") > 0);  // '_' 0x5F > 'A' 0x41 after up-casing
    CHECK(collate_file_names(u"b", u"a") > 0);
}

TEST_CASE("ntfs attributes: header layouts (formats.md §3.5)", "[ntfs][structs]") {
    const auto si = encode_standard_information({});
    const auto a = build_resident_attribute(AttrType::standard_information, u"", si);
    CHECK(a.size() == 96);  // 24 + 72
    CHECK(core::load_le32(a, 0) == 0x10);
    CHECK(core::load_le32(a, 4) == 96);
    CHECK(core::load_le16(a, 0x14) == 24);
    const auto named = build_resident_attribute(AttrType::index_root, u"$I30", std::vector<std::byte>(56));
    CHECK(core::load_le16(named, 0x14) == 32);  // value after the 8-aligned name
    CHECK(named.size() == 88);                  // mkntfs' root $INDEX_ROOT
    CHECK(core::load_le16(named, 0x0A) == 24);
    const std::vector<DataRun> runs{{7, 4}};
    const auto nr = build_nonresident_attribute(AttrType::data, u"", runs, {28672, 27648, 27648}, 6);
    CHECK(nr.size() == 72);  // mkntfs' $MFT $DATA
    CHECK(nr[8] == std::byte{1});
    CHECK(core::load_le16(nr, 0x20) == 64);
    CHECK(core::load_le64(nr, 0x18) == 6);
    CHECK(core::load_le64(nr, 0x28) == 28672);
    const auto nn =
        build_nonresident_attribute(AttrType::index_allocation, u"$I30", runs, {4096, 4096, 4096}, 0);
    CHECK(core::load_le16(nn, 0x20) == 72);
    CHECK(nn.size() == 80);
}

TEST_CASE("ntfs $FILE_NAME and index entries", "[ntfs][structs]") {
    FileName fn;
    fn.parent = {5, 5};
    fn.name = u"$MFT";
    const auto v = encode_file_name(fn);
    CHECK(v.size() == 66 + 2 * 4);
    CHECK(core::load_le64(v, 0) == 0x0005000000000005ull);
    CHECK(v[0x40] == std::byte{4});
    CHECK(v[0x41] == std::byte{3});
    const auto e = build_file_name_index_entry({4, 4}, encode_file_name([] {
                                                   FileName f;
                                                   f.name = u"$AttrDef";
                                                   return f;
                                               }()));
    CHECK(e.size() == 0x68);  // r8(82 + 2*8), as in mkntfs' root index
    CHECK(core::load_le16(e, 0x0A) == 0x52);
    CHECK(build_end_index_entry().size() == 16);
    CHECK(build_end_index_entry(0).size() == 24);
    fn.name.clear();
    CHECK_THROWS_AS(encode_file_name(fn), Error);
    fn.name.assign(256, u'x');
    CHECK_THROWS_AS(encode_file_name(fn), Error);
}

TEST_CASE("ntfs MFT record builder", "[ntfs][structs]") {
    CHECK(first_attribute_offset(1024) == 0x38);
    CHECK(first_attribute_offset(4096) == 0x48);
    MftRecordBuilder b(1024, 7, 7, record_flag::in_use);
    b.set_link_count(1);
    b.add(build_resident_attribute(AttrType::standard_information, u"", encode_standard_information({})));
    b.add(build_resident_attribute(AttrType::data, u"", {}));
    auto r = b.finish();
    REQUIRE(r.size() == 1024);
    CHECK(!verify_and_remove_fixups(r));
    const auto h = decode_mft_record_header(r);
    CHECK(std::string(h.magic.data(), 4) == "FILE");
    CHECK(h.usa_offset == 0x30);
    CHECK(h.usa_count == 3);
    CHECK(h.sequence == 7);
    CHECK(h.link_count == 1);
    CHECK(h.first_attribute == 0x38);
    CHECK(h.flags == 1);
    CHECK(h.bytes_in_use == 0x38 + 96 + 24 + 8);
    CHECK(h.bytes_allocated == 1024);
    CHECK(h.next_instance == 2);
    CHECK(h.record_number == 7);
    CHECK(core::load_le16(r, 0x38 + 96 + 0x0E) == 1);  // second attribute's instance
    CHECK(core::load_le32(r, 0x38 + 96 + 24) == 0xFFFFFFFF);
    MftRecordBuilder full(1024, 1, 1, 1);
    CHECK_THROWS_AS(full.add(std::vector<std::byte>(1000)), Error);
}

TEST_CASE("ntfs INDX block", "[ntfs][structs]") {
    auto b = build_index_block(0, 4096, build_end_index_entry());
    REQUIRE(b.size() == 4096);
    CHECK(!verify_and_remove_fixups(b));
    CHECK(core::load_string(std::span(b).first(4)) == "INDX");
    CHECK(core::load_le16(b, 6) == 9);
    CHECK(core::load_le32(b, 0x18) == 0x28);  // entries at 0x40
    CHECK(core::load_le32(b, 0x1C) == 0x28 + 16);
    CHECK(core::load_le32(b, 0x20) == 4096 - 0x18);
    CHECK_THROWS_AS(build_index_block(0, 4096, std::vector<std::byte>(4096)), Error);
}

TEST_CASE("ntfs $AttrDef and $Secure match mkntfs", "[ntfs][structs]") {
    const auto t = build_attrdef();
    REQUIRE(t.size() == 2560);
    CHECK(core::load_le16(t, 0) == u'$');
    CHECK(core::load_le32(t, 0x80) == 0x10);
    CHECK(core::load_le64(t, 0x98) == 0x48);              // $STANDARD_INFORMATION max
    CHECK(core::load_le32(t, 14 * 160 + 0x80) == 0x100);  // $LOGGED_UTILITY_STREAM
    CHECK(std::all_of(t.begin() + 15 * 160, t.end(), [](std::byte x) { return x == std::byte{0}; }));

    // Descriptors 0x100/0x101 are mkntfs' two, byte for byte: their hashes
    // are the ones mkntfs stores in $SDS/$SDH/$SII [EXP].
    const auto d100 = security_descriptor(kSecurityIdSystem);
    CHECK(d100.size() == 104);
    CHECK(security_hash(d100) == 0xF80312F0u);
    CHECK(security_hash(security_descriptor(kSecurityIdSystemRw)) == 0x00B32451u);
    const auto s = build_secure_streams();
    CHECK(s.sds.size() == secure_sds_bytes());
    CHECK(std::equal(s.sds.begin(), s.sds.begin() + 0x100, s.sds.begin() + 0x40000));
    CHECK(core::load_le32(s.sds, 0) == 0xF80312F0u);
    CHECK(core::load_le32(s.sds, 4) == 0x100);
    CHECK(core::load_le32(s.sds, 16) == 124);
    CHECK(core::load_le64(s.sds, 0x80 + 8) == 0x80);  // second entry 16-aligned
    CHECK(s.sii_entries.size() == 3 * 0x28 + 16);
    CHECK(s.sdh_entries.size() == 3 * 0x30 + 16);
    CHECK(core::load_le32(s.sdh_entries, 16 + 8 + 20) == 0x00490049u);
}
