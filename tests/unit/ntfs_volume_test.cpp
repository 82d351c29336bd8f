// The read-only NTFS reader (include/fsimg/ntfs/volume.hpp) on volumes our
// format code writes in memory: every attribute of records 0..26 re-encodes
// to the bytes format wrote, runlists equal the layout, streams read back;
// and hostile images (bad fixups, runs outside the volume, attribute lengths
// 0 or overflowing, random corruption) give fsimg::Error, never a crash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <variant>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/structs.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "ntfs_fixture.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
using fsimg::ntfs::test::must;
using fsimg::ntfs::test::opts;

namespace {

io::MemoryImage formatted(const Layout& L) {
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, opts());
    return img;
}

std::vector<MappedRun> mapped(const std::vector<Extent>& extents) {
    std::vector<MappedRun> r;
    std::uint64_t vcn = 0;
    for (const Extent& e : extents) {
        r.push_back({Vcn{vcn}, e.clusters, Lcn{e.lcn}});
        vcn += e.clusters;
    }
    return r;
}

std::vector<std::uint32_t> types_of(const MftRecord& r) {
    std::vector<std::uint32_t> t;
    for (const auto& a : r.attributes) t.push_back(a.type);
    return t;
}

/// Rewrites MFT record n in place: fixups removed, `edit` applied, fixups
/// applied again (so that only the edit is wrong).
template <typename F>
void patch_record(io::MemoryImage& img, const Layout& L, std::uint32_t n, F edit) {
    const std::uint64_t at = L.mft.lcn * L.cluster_bytes + std::uint64_t(n) * L.mft_record_bytes;
    std::vector<std::byte> r(L.mft_record_bytes);
    img.read_at(at, r);
    REQUIRE(!verify_and_remove_fixups(r));
    edit(r);
    apply_fixups(r, 0x30, 1);
    img.write_at(at, r);
}

/// The offset of an attribute's header in its record.
std::size_t attr_offset(const MftRecord& r, AttrType t, std::u16string_view name = u"") {
    const Attribute* a = r.find(t, name);
    REQUIRE(a);
    return a->offset;
}

template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("ntfs volume: the boot sector and $MFT of formatted volumes", "[ntfs][volume]") {
    const auto bps = GENERATE(512u, 4096u);
    const auto cluster = GENERATE(512u, 4096u, 65536u);
    const auto record = GENERATE(1024u, 4096u);
    if (cluster < bps || record < bps) return;
    INFO("sector " << bps << " cluster " << cluster << " record " << record);
    const Layout L = must(16u << 20, cluster, bps, record);
    const auto img = formatted(L);
    const Volume v(img);
    CHECK(v.geometry().bytes_per_sector == bps);
    CHECK(v.geometry().cluster_bytes == cluster);
    CHECK(v.geometry().mft_record_bytes == record);
    CHECK(v.geometry().index_block_bytes == 4096u);
    CHECK(v.geometry().cluster_count == L.cluster_count);
    CHECK(v.geometry().total_sectors == L.total_sectors);
    CHECK(v.boot().volume_serial_number == 0x0123456789ABCDEFull);
    CHECK(v.backup_boot_matches() == true);
    CHECK(v.record_count() == L.mft_records);
    CHECK(v.mft_data().runs == mapped({L.mft}));
    // Every record (with 4 KiB records on 512 B clusters, each spans 8
    // clusters) reads through the runlist and names itself.
    for (std::uint32_t n = 0; n < L.mft_records; ++n) {
        const MftRecord r = v.read_record(n);
        CHECK(r.header.record_number == n);
        CHECK(r.fixup_strides == record / 512);
        CHECK(r.byte_offset == L.mft.lcn * cluster + std::uint64_t(n) * record);
    }
    CHECK(validate_boot_sector(v.boot_sector_bytes()).empty());
}

TEST_CASE("ntfs volume: records 0..26 decode to exactly what format wrote", "[ntfs][volume]") {
    const Layout L = must(64u << 20);
    const auto img = formatted(L);
    const Volume v(img);
    const std::uint64_t C = L.cluster_bytes;
    for (std::uint32_t n = 0; n < L.mft_records; ++n) {
        INFO("record " << n);
        const MftRecord r = v.read_record(n);
        const bool in_use = n < 16 || n >= 24;
        CHECK(r.in_use() == in_use);
        CHECK(r.update_sequence_number == 1);
        if (!in_use) {
            CHECK(r.attributes.empty());
            continue;
        }
        // Each attribute re-encodes to its bytes on disk (the instance field
        // aside, which MftRecordBuilder assigns in order).
        std::vector<std::byte> plain(L.mft_record_bytes);
        img.read_at(L.mft.lcn * C + std::uint64_t(n) * L.mft_record_bytes, plain);
        REQUIRE(!verify_and_remove_fixups(plain));
        std::uint16_t instance = 0;
        for (const Attribute& a : r.attributes) {
            INFO("attribute " << a.display_name());
            std::vector<std::byte> again;
            if (a.non_resident) {
                std::vector<DataRun> runs;
                for (const auto& m : a.runs)
                    runs.push_back(
                        {m.length, m.lcn ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*m.lcn))
                                         : std::nullopt});
                again = build_nonresident_attribute(a.kind(), a.name, runs,
                                                    {a.allocated_size, a.data_size, a.initialized_size},
                                                    static_cast<std::uint64_t>(a.last_vcn));
            } else {
                again = build_resident_attribute(a.kind(), a.name, a.value, a.indexed);
            }
            core::store_le16(again, 0x0E, instance);
            CHECK(a.instance == instance++);
            REQUIRE(a.offset + again.size() <= plain.size());
            CHECK(std::equal(again.begin(), again.end(), plain.begin() + a.offset));
        }
        CHECK(r.header.next_instance == instance);
        if (n > 11 && n < 16) CHECK(types_of(r) == std::vector<std::uint32_t>{0x10, 0x80});
    }

    // The types per record and the runlists equal the layout.
    const auto r0 = v.read_record(0);
    CHECK(types_of(r0) == std::vector<std::uint32_t>{0x10, 0x30, 0x80, 0xB0});
    CHECK(r0.find(AttrType::bitmap)->runs == mapped({L.mft_bitmap}));
    CHECK(r0.find(AttrType::data)->data_size == 27u * 1024);
    CHECK(v.read_record(1).find(AttrType::data)->runs == mapped({L.mftmirr}));
    const MftRecord r2 = v.read_record(2);
    const auto log = r2.find(AttrType::data);
    CHECK(log->runs == mapped({L.logfile}));
    CHECK(log->data_size == L.logfile_bytes);
    const auto r6 = v.read_record(6);
    CHECK(r6.find(AttrType::data)->runs == mapped(L.bitmap));
    CHECK(r6.find(AttrType::data)->data_size == L.bitmap_bytes);
    CHECK(v.read_record(7).find(AttrType::data)->runs == mapped({L.boot}));
    CHECK(v.read_record(4).find(AttrType::data)->runs == mapped(L.attrdef));
    CHECK(v.read_record(10).find(AttrType::data)->runs == mapped(L.upcase));
    CHECK(v.read_record(9).find(AttrType::data, u"$SDS")->runs == mapped(L.sds));
    const MftRecord r8 = v.read_record(8);
    const auto bad = r8.find(AttrType::data, u"$Bad");
    REQUIRE(bad);
    CHECK(bad->runs == std::vector<MappedRun>{{Vcn{0}, L.cluster_count, std::nullopt}});
    CHECK(static_cast<std::uint64_t>(bad->last_vcn) == L.cluster_count - 1);

    // $Volume: label and version 3.1, clean.
    const auto r3 = v.read_record(3);
    CHECK(types_of(r3) == std::vector<std::uint32_t>{0x10, 0x30, 0x60, 0x70, 0x80});
    CHECK(decode_utf16(r3.find(AttrType::volume_name)->value) == u"TEST");
    const auto vi = decode_volume_information(r3.find(AttrType::volume_information)->value);
    CHECK(vi.major == 3);
    CHECK(vi.minor == 1);
    CHECK(vi.flags == 0);

    // Names, parents, times.
    const auto fn0 = decode_file_name(r0.find(AttrType::file_name)->value);
    CHECK(fn0.name == u"$MFT");
    CHECK(fn0.parent == FileReference{5, 5});
    CHECK(fn0.data_size == 27u * 1024);
    CHECK(fn0.creation_time == filetime_from_unix(1700000000));
    const auto si5 =
        decode_standard_information(v.read_record(5).find(AttrType::standard_information)->value);
    CHECK(si5.security_id == kSecurityIdRoot);
    CHECK(si5.file_attributes == (file_attr::hidden | file_attr::system));
    const auto quota = decode_file_name(v.read_record(24).find(AttrType::file_name)->value);
    CHECK(quota.name == u"$Quota");
    CHECK(quota.parent == FileReference{11, 11});

    // Index roots: the root's is large (one end entry pointing at VCN 0),
    // $Extend's holds its three children in collation order.
    const auto root = decode_index_root(v.read_record(5).find(AttrType::index_root, u"$I30")->value);
    CHECK(root.node_flags == 1);
    REQUIRE(root.entries.size() == 1);
    CHECK(root.entries[0].last());
    CHECK(root.entries[0].child_vcn == 0u);
    const auto ext = decode_index_root(v.read_record(11).find(AttrType::index_root, u"$I30")->value);
    REQUIRE(ext.entries.size() == 4);
    CHECK(ext.entries[0].file_name->name == u"$ObjId");
    CHECK(ext.entries[1].file_name->name == u"$Quota");
    CHECK(ext.entries[2].file_name->name == u"$Reparse");
    CHECK(FileReference::unpack(ext.entries[1].reference) == FileReference{24, 1});
    CHECK(ext.entries[3].last());
    const auto sii = decode_index_root(v.read_record(9).find(AttrType::index_root, u"$SII")->value);
    CHECK(sii.collation_rule == collation::ulong);
    CHECK(sii.entries.size() == 4);  // ids 0x100..0x102 and the end entry
}

TEST_CASE("ntfs volume: streams read through their runlists", "[ntfs][volume]") {
    const auto cluster = GENERATE(512u, 4096u);
    const Layout L = must(1u << 20, cluster);  // 1 MiB: system files fragmented
    const auto img = formatted(L);
    const Volume v(img);
    CHECK(v.read_stream(*v.read_record(4).find(AttrType::data), 1u << 20) == build_attrdef());
    const auto up = v.read_stream(*v.read_record(10).find(AttrType::data), 1u << 20);
    REQUIRE(up.size() == kUpcaseBytes);
    for (std::size_t i = 0; i < 65536; i += 997) CHECK(core::load_le16(up, 2 * i) == upcase_table()[i]);
    // $MFTMirr holds the first records of $MFT.
    const auto mirror = v.read_stream(*v.read_record(1).find(AttrType::data), 1u << 20);
    std::vector<std::byte> first(mirror.size());
    v.read_stream(v.mft_data(), 0, first);
    CHECK(mirror == first);
    // The root's INDX block, a sparse run, the byte offset of a stream.
    const auto r5 = v.read_record(5);
    const auto* alloc = r5.find(AttrType::index_allocation, u"$I30");
    auto indx = v.read_stream(*alloc, 4096);
    CHECK(!verify_and_remove_fixups(indx));
    CHECK(core::load_string(std::span(indx).first(4)) == "INDX");
    CHECK(v.device_offset(*alloc, 100) == L.root_index.at(0).lcn * cluster + 100);
    // ... decoded: the 12 system files and ".", in $UpCase collation order.
    const IndexBlock root = v.read_index_block(*alloc, 0, 4096, true);
    CHECK(root.vcn == 0);
    REQUIRE(root.entries.size() == 13);
    CHECK(root.entries.back().last());
    std::vector<std::u16string> names;
    for (std::size_t i = 0; i + 1 < root.entries.size(); ++i)
        names.push_back(root.entries[i].file_name->name);
    CHECK(names == std::vector<std::u16string>{u"$AttrDef", u"$BadClus", u"$Bitmap", u"$Boot", u"$Extend",
                                               u"$LogFile", u"$MFT", u"$MFTMirr", u"$Secure", u"$UpCase",
                                               u"$Volume", u"."});
    CHECK(FileReference::unpack(root.entries[6].reference) == FileReference{0, 1});
    CHECK_THROWS_AS(v.read_index_block(*alloc, 1, 4096, true), Error);  // one block only
    CHECK_THROWS_AS(v.read_index_block(*alloc, 0, 1000, true), Error);  // not a power of two
    const MftRecord r8 = v.read_record(8);
    const auto* bad = r8.find(AttrType::data, u"$Bad");
    std::vector<std::byte> zeros(3 * cluster + 7, std::byte{0x55});
    v.read_stream(*bad, cluster - 3, zeros);
    CHECK(std::all_of(zeros.begin(), zeros.end(), [](std::byte b) { return b == std::byte{0}; }));
    CHECK(!v.device_offset(*bad, 0));
    // Past the stream: a usage error, not a read.
    std::vector<std::byte> one(1);
    CHECK_THROWS_AS(v.read_stream(*alloc, 4096, one), Error);
    CHECK_THROWS_AS(v.read_stream(*bad, 1000), Error);  // larger than allowed
    CHECK_THROWS_AS(v.read_record(L.mft_records), Error);
}

TEST_CASE("ntfs volume: boot sector rules", "[ntfs][volume]") {
    const Layout L = must(8u << 20);
    auto img = formatted(L);
    std::array<std::byte, 512> s{};
    img.read_at(0, s);
    auto codes_after = [&](std::size_t at, std::uint8_t value) {
        auto t = s;
        t[at] = std::byte{value};
        std::vector<std::string_view> codes;
        for (const auto& p : validate_boot_sector(t)) codes.push_back(p.code);
        return codes;
    };
    using C = std::vector<std::string_view>;
    CHECK(codes_after(off::OemId, 'X') == C{"ntfs.boot.oem_id"});
    CHECK(codes_after(off::Signature, 0) == C{"ntfs.boot.signature"});
    CHECK(codes_after(off::BytesPerSector + 1, 0x03) == C{"ntfs.boot.bytes_per_sector"});  // 0x300
    CHECK(codes_after(off::SectorsPerCluster, 3) == C{"ntfs.boot.cluster_size"});
    CHECK(codes_after(off::SectorsPerCluster, 0xF0) == C{"ntfs.boot.cluster_size"});
    CHECK(codes_after(off::ClustersPerMftRecord, 0xE0) == C{"ntfs.boot.mft_record_size"});  // 2^32
    CHECK(codes_after(off::ClustersPerMftRecord, 0xF8) == C{"ntfs.boot.mft_record_size"});  // 256 B
    CHECK(codes_after(off::ClustersPerIndexBlock, 0) == C{"ntfs.boot.index_block_size"});
    CHECK(codes_after(off::MftLcn + 7, 0x01) == C{"ntfs.boot.mft_lcn"});
    CHECK(codes_after(off::MftMirrLcn + 4, 0x01) == C{"ntfs.boot.mftmirr_lcn"});
    auto t = s;
    core::store_le64(t, off::TotalSectors, 7);  // less than one 4 KiB cluster
    CHECK(validate_boot_sector(t).at(0).code == "ntfs.boot.total_sectors");
    CHECK(!geometry_of(t));
    // Volume refuses: not NTFS, or a broken rule named in the message.
    io::MemoryImage zero(1u << 20);
    CHECK_FALSE(is_ntfs(zero));
    try {
        const Volume v(zero);
        FAIL("opened a zero image");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::not_this_fs);
    }
    img.write_at(off::SectorsPerCluster, std::array<std::byte, 1>{std::byte{3}});
    CHECK(is_ntfs(img));
    CHECK_THAT(error_of([&] { const Volume v(img); }), Catch::Contains("ntfs.boot.cluster_size"));
}

TEST_CASE("ntfs volume: damaged records give errors naming record and offset", "[ntfs][volume]") {
    const Layout L = must(8u << 20);
    const std::uint64_t mft = L.mft.lcn * L.cluster_bytes;
    const std::uint64_t rs = L.mft_record_bytes;

    SECTION("a torn stride: fixup mismatch at its tail") {
        auto img = formatted(L);
        img.write_at(mft + 5 * rs + 1022, std::array<std::byte, 2>{std::byte{9}, std::byte{9}});
        const Volume v(img);
        try {
            (void)v.read_record(5);
            FAIL("no error");
        } catch (const Error& e) {
            CHECK_THAT(e.what(),
                       Catch::Contains("MFT record 5") && Catch::Contains("fixup mismatch: stride 1"));
            CHECK(e.byte_offset() == mft + 5 * rs + 1022);
        }
        CHECK_NOTHROW(v.read_record(4));
    }
    SECTION("a torn INDX block") {
        auto img = formatted(L);
        const std::uint64_t at = L.root_index.at(0).lcn * L.cluster_bytes + 2 * 512 - 2;
        img.write_at(at, std::array<std::byte, 2>{std::byte{7}, std::byte{7}});
        const Volume v(img);
        const MftRecord r5 = v.read_record(5);
        try {
            (void)v.read_index_block(*r5.find(AttrType::index_allocation, u"$I30"), 0, 4096, true);
            FAIL("no error");
        } catch (const Error& e) {
            CHECK_THAT(e.what(),
                       Catch::Contains("MFT record 5 attribute $INDEX_ALLOCATION:$I30: index block 0") &&
                           Catch::Contains("stride 1"));
            CHECK(e.byte_offset() == at);
        }
    }
    SECTION("a broken update sequence array count") {
        auto img = formatted(L);
        img.write_at(mft + 7 * rs + 6, std::array<std::byte, 2>{std::byte{9}, std::byte{0}});
        const Volume v(img);
        CHECK_THAT(error_of([&] { (void)v.read_record(7); }),
                   Catch::Contains("update sequence array count 9"));
    }
    SECTION("BAAD and zeroed records") {
        auto img = formatted(L);
        img.write_at(mft + 3 * rs, std::array<std::byte, 4>{std::byte{'B'}, std::byte{'A'}, std::byte{'A'},
                                                            std::byte{'D'}});
        img.write_at(mft + 4 * rs, std::vector<std::byte>(rs));
        const Volume v(img);
        CHECK_THAT(error_of([&] { (void)v.read_record(3); }), Catch::Contains("BAAD"));
        CHECK_THAT(error_of([&] { (void)v.read_record(4); }), Catch::Contains("is not \"FILE\""));
    }
    SECTION("attribute length 0, overflowing, unaligned") {
        for (const std::uint32_t length : {0u, 0xFFFFFFF8u, 0x61u, 0x400u}) {
            INFO("length " << length);
            auto img = formatted(L);
            const std::size_t at = attr_offset(Volume(img).read_record(2), AttrType::file_name);
            patch_record(img, L, 2, [&](std::vector<std::byte>& r) { core::store_le32(r, at + 4, length); });
            const Volume v(img);
            try {
                (void)v.read_record(2);
                FAIL("no error");
            } catch (const Error& e) {
                CHECK_THAT(e.what(), Catch::Contains("MFT record 2") && Catch::Contains("length"));
                CHECK(e.byte_offset() == mft + 2 * rs + at + 4);
            }
        }
    }
    SECTION("a name, a value or a runlist past its attribute") {
        auto img = formatted(L);
        const Volume v0(img);
        const std::size_t si = attr_offset(v0.read_record(2), AttrType::standard_information);
        const std::size_t root = attr_offset(v0.read_record(5), AttrType::index_root, u"$I30");
        patch_record(img, L, 2, [&](std::vector<std::byte>& r) { core::store_le32(r, si + 0x10, 0x1000); });
        patch_record(img, L, 5, [&](std::vector<std::byte>& r) { r[root + 9] = std::byte{200}; });
        patch_record(img, L, 6, [&](std::vector<std::byte>& r) {
            const std::size_t d = attr_offset(v0.read_record(6), AttrType::data);
            core::store_le16(r, d + 0x20, 0x7FF0);
        });
        patch_record(img, L, 7, [&](std::vector<std::byte>& r) {
            const std::size_t d = attr_offset(v0.read_record(7), AttrType::data);
            // Run headers promising 8 length bytes up to the attribute's end: no terminator.
            const std::size_t len = core::load_le32(r, d + 4);
            for (std::size_t i = core::load_le16(r, d + 0x20); i < len; ++i) r[d + i] = std::byte{0x08};
        });
        const Volume v(img);
        CHECK_THAT(error_of([&] { (void)v.read_record(2); }),
                   Catch::Contains("resident value of 4096 bytes"));
        CHECK_THAT(error_of([&] { (void)v.read_record(5); }), Catch::Contains("name of 200 units"));
        CHECK_THAT(error_of([&] { (void)v.read_record(6); }), Catch::Contains("runlist offset"));
        CHECK_THAT(error_of([&] { (void)v.read_record(7); }), Catch::Contains("runlist"));
    }
    SECTION("bytes in use and first attribute outside the record, no end marker") {
        auto img = formatted(L);
        patch_record(img, L, 2, [&](std::vector<std::byte>& r) { core::store_le32(r, 0x18, 0x800); });
        patch_record(img, L, 3, [&](std::vector<std::byte>& r) { core::store_le16(r, 0x14, 0x3F0); });
        patch_record(img, L, 4, [&](std::vector<std::byte>& r) {
            const std::uint32_t used = core::load_le32(r, 0x18);
            core::store_le32(r, used - 8, 0x80);  // the end marker becomes a $DATA type
        });
        const Volume v(img);
        CHECK_THAT(error_of([&] { (void)v.read_record(2); }), Catch::Contains("bytes in use 2048"));
        CHECK_THAT(error_of([&] { (void)v.read_record(3); }), Catch::Contains("first attribute offset 1008"));
        CHECK_THAT(error_of([&] { (void)v.read_record(4); }), Catch::Contains("passes bytes in use"));
    }
    SECTION("a runlist pointing outside the volume") {
        auto img = formatted(L);
        const std::size_t at = attr_offset(Volume(img).read_record(2), AttrType::data);
        patch_record(img, L, 2, [&](std::vector<std::byte>& r) {
            const std::uint16_t runs = core::load_le16(r, at + 0x20);
            // 0x31: 1 length byte, 3 offset bytes: LCN 0x7FFFFF, far past 2,047 clusters.
            const std::array<std::uint8_t, 6> mp{0x31, 0x10, 0xFF, 0xFF, 0x7F, 0x00};
            for (std::size_t i = 0; i < mp.size(); ++i) r[at + runs + i] = std::byte{mp[i]};
        });
        const Volume v(img);
        const MftRecord r2 = v.read_record(2);  // decoding does not judge
        const Attribute& log = *r2.find(AttrType::data);
        CHECK(log.runs == std::vector<MappedRun>{{Vcn{0}, 0x10, Lcn{0x7FFFFF}}});
        CHECK_THAT(error_of([&] { v.check_runs(log); }),
                   Catch::Contains("MFT record 2 attribute $DATA") &&
                       Catch::Contains("passes the volume's last cluster"));
        std::vector<std::byte> buf(16);
        CHECK_THAT(error_of([&] { v.read_stream(log, 0, buf); }), Catch::Contains("LCN 8388607"));
        CHECK(!v.device_offset(log, 0));
        // The same in $MFT's own runlist: the volume does not open.
        auto img0 = formatted(L);
        const std::size_t d0 = attr_offset(Volume(img0).read_record(0), AttrType::data);
        patch_record(img0, L, 0, [&](std::vector<std::byte>& r) {
            const std::uint16_t runs = core::load_le16(r, d0 + 0x20);
            const std::array<std::uint8_t, 6> mp{0x31, 0x07, 0xFF, 0xFF, 0x7F, 0x00};
            for (std::size_t i = 0; i < mp.size(); ++i) r[d0 + runs + i] = std::byte{mp[i]};
        });
        CHECK_THAT(error_of([&] { const Volume v0(img0); }), Catch::Contains("MFT record 0 attribute $DATA"));
    }
    SECTION("runs that leave the stream unmapped") {
        auto img = formatted(L);
        const std::size_t at = attr_offset(Volume(img).read_record(2), AttrType::data);
        patch_record(img, L, 2, [&](std::vector<std::byte>& r) {
            const std::uint16_t runs = core::load_le16(r, at + 0x20);
            // One cluster at the $LogFile's LCN, of its many.
            const std::array<std::uint8_t, 5> mp{0x21, 0x01, static_cast<std::uint8_t>(L.logfile.lcn & 0xFF),
                                                 static_cast<std::uint8_t>(L.logfile.lcn >> 8), 0x00};
            for (std::size_t i = 0; i < mp.size(); ++i) r[at + runs + i] = std::byte{mp[i]};
        });
        const Volume v(img);
        const Attribute log = *v.read_record(2).find(AttrType::data);
        std::vector<std::byte> buf(2 * L.cluster_bytes);
        CHECK_THAT(error_of([&] { v.read_stream(log, 0, buf); }),
                   Catch::Contains("VCN 1") && Catch::Contains("not mapped"));
    }
}

TEST_CASE("ntfs volume: random corruption never crashes or hangs", "[ntfs][volume]") {
    const Layout L = must(1u << 20);
    const auto clean = formatted(L);
    const std::uint64_t mft = L.mft.lcn * L.cluster_bytes;
    const std::uint64_t region = std::uint64_t(L.mft_records) * L.mft_record_bytes;
    const std::uint32_t seed = 20261130;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    std::size_t opened = 0, errors = 0, records_read = 0;
    // One image, damaged and restored each round: only the boot sector and
    // the MFT records change, so only they are copied back (a fresh 1 MiB
    // copy per round cost most of this case's time under the sanitizers).
    io::MemoryImage img(clean.bytes());
    const std::span<const std::byte> clean_bytes(clean.bytes());
    auto restore = [&] {
        img.write_at(0, clean_bytes.first(512));
        img.write_at(mft, clean_bytes.subspan(mft, region));
    };
    std::vector<std::byte> stream(1u << 20);  // every stream of up to 1 MiB, read into one buffer
    for (int round = 0; round < 3000; ++round) {
        restore();
        const int hits = 1 + static_cast<int>(rng() % 8);
        for (int h = 0; h < hits; ++h) {
            // Mostly inside the MFT records, sometimes the boot sector.
            const std::uint64_t at = (rng() % 8 == 0) ? rng() % 512 : mft + rng() % region;
            const std::byte value = static_cast<std::byte>(rng() & 0xFF);
            img.write_at(at, std::span(&value, 1));
        }
        // Fixups re-applied half of the time, so that damage reaches the
        // attribute walk instead of stopping at the update sequence check.
        if (round % 2) {
            std::vector<std::byte> r(L.mft_record_bytes);
            for (std::uint32_t n = 0; n < L.mft_records; ++n) {
                const std::uint64_t at = mft + std::uint64_t(n) * L.mft_record_bytes;
                img.read_at(at, r);
                for (std::size_t s = 0; s < r.size() / 512; ++s) {
                    r[(s + 1) * 512 - 2] = r[0x30];
                    r[(s + 1) * 512 - 1] = r[0x31];
                }
                img.write_at(at, r);
            }
        }
        try {
            const Volume v(img);
            ++opened;
            for (std::uint64_t n = 0; n < std::min<std::uint64_t>(v.record_count(), 64); ++n) {
                try {
                    const MftRecord r = v.read_record(n);
                    ++records_read;
                    for (const Attribute& a : r.attributes) {
                        if (a.size() <= stream.size())
                            v.read_stream(a, 0, std::span(stream).first(static_cast<std::size_t>(a.size())));
                        if (!a.non_resident && a.type == 0x90) (void)decode_index_root(a.value);
                        if (!a.non_resident && a.type == 0x30) (void)decode_file_name(a.value);
                    }
                } catch (const Error&) {
                    ++errors;
                }
            }
        } catch (const Error&) {
            ++errors;
        }
    }
    // The loop exercised both outcomes.
    CHECK(opened > 500);
    CHECK(errors > 500);
    CHECK(records_read > 5000);
}

TEST_CASE("ntfs volume: parse_mft_record on crafted buffers", "[ntfs][volume]") {
    MftRecordBuilder b(1024, 42, 3, record_flag::in_use);
    const std::vector<std::byte> name{std::byte{'x'}, std::byte{0}};
    b.add(build_resident_attribute(AttrType::data, u"s1", name));
    b.add(build_nonresident_attribute(AttrType::data, u"big",
                                      std::vector<DataRun>{{3, 100}, {5, std::nullopt}, {2, 90}},
                                      {40960, 40000, 20000}, 9));
    auto raw = b.finish();
    const MftRecord r = parse_mft_record(raw, 42, 0x10000);
    CHECK(r.number == 42);
    CHECK(r.header.sequence == 3);
    REQUIRE(r.attributes.size() == 2);
    CHECK(r.attributes[0].display_name() == "$DATA:s1");
    CHECK(r.attributes[0].value == name);
    const Attribute& big = r.attributes[1];
    CHECK(big.display_name() == "$DATA:big");
    CHECK(big.runs ==
          std::vector<MappedRun>{{Vcn{0}, 3, Lcn{100}}, {Vcn{3}, 5, std::nullopt}, {Vcn{8}, 2, Lcn{90}}});
    CHECK(big.size() == 40000);
    CHECK(big.initialized_size == 20000);
    CHECK(r.find(AttrType::data, u"big") == &r.attributes[1]);
    CHECK(r.find(AttrType::data) == nullptr);
    // Too short or not a multiple of 512.
    std::vector<std::byte> tiny(100);
    CHECK_THROWS_AS(parse_mft_record(tiny, 1), Error);
}

TEST_CASE("ntfs volume: salvage_mft_record keeps the attributes that decode", "[ntfs][volume]") {
    // Three resident attributes: $STANDARD_INFORMATION-sized data at 0x38 (type
    // 0x10), $DATA:s1, $DATA:s2; fixups removed, as the editor hands it over.
    MftRecordBuilder b(1024, 42, 3, record_flag::in_use);
    const std::vector<std::byte> v(48, std::byte{0x11});
    b.add(build_resident_attribute(AttrType::standard_information, u"", v));
    b.add(build_resident_attribute(AttrType::data, u"s1", std::vector<std::byte>(8, std::byte{1})));
    b.add(build_resident_attribute(AttrType::data, u"s2", std::vector<std::byte>(8, std::byte{2})));
    auto raw = b.finish();
    std::vector<std::byte> plain = raw;
    REQUIRE_FALSE(verify_and_remove_fixups(plain));
    const MftRecord whole = parse_mft_record(raw, 42);
    REQUIRE(whole.attributes.size() == 3);
    const std::uint32_t at1 = whole.attributes[1].offset;
    // The salvaged record as a reader sees it: fixups applied, then parsed.
    const auto reparsed = [](const SalvagedRecord& s) {
        std::vector<std::byte> again = s.bytes;
        apply_fixups(again, core::load_le16(again, 4), 7);
        return parse_mft_record(again, 42);
    };

    SECTION("sound: kept as it is") {
        const auto s = salvage_mft_record(plain, 42);
        REQUIRE(s);
        CHECK(s->dropped == 0);
        CHECK_FALSE(s->truncated);
        CHECK(s->bytes == plain);
    }
    SECTION("a value past its attribute: that attribute left out, the walk goes on") {
        core::store_le32(plain, at1 + 0x10, 4096);  // value length
        const auto s = salvage_mft_record(plain, 42);
        REQUIRE(s);
        CHECK(s->dropped == 1);
        CHECK_FALSE(s->truncated);
        const MftRecord r = reparsed(*s);
        REQUIRE(r.attributes.size() == 2);
        CHECK(r.attributes[1].display_name() == "$DATA:s2");
        CHECK(r.header.bytes_in_use == whole.header.bytes_in_use - whole.attributes[1].length);
    }
    SECTION("a length that is not 8-aligned: it and every later one left out") {
        core::store_le32(plain, at1 + 4, whole.attributes[1].length + 4);
        const auto s = salvage_mft_record(plain, 42);
        REQUIRE(s);
        CHECK(s->dropped == 1);
        CHECK(s->truncated);
        const MftRecord r = reparsed(*s);
        REQUIRE(r.attributes.size() == 1);
        CHECK(r.header.bytes_in_use == at1 + 8);
    }
    SECTION("bytes in use past the record: set where the attributes end") {
        core::store_le32(plain, 0x18, 1024 + 8);
        const auto s = salvage_mft_record(plain, 42);
        REQUIRE(s);
        CHECK(s->dropped == 0);
        CHECK(core::load_le32(s->bytes, 0x18) == whole.header.bytes_in_use);
    }
    SECTION("a header that is not sound: nothing") {
        core::store_le16(plain, 0x14, 0x31);  // first attribute not 8-aligned
        CHECK_FALSE(salvage_mft_record(plain, 42));
        plain[0] = std::byte{'B'};
        CHECK_FALSE(salvage_mft_record(plain, 42));
    }
}

namespace {

/// A 16 MiB volume whose $MFT $DATA (7 clusters at LCN 4) is split: record 0
/// maps VCN 0..3, extension record 15 maps VCN 4..6, and record 0's
/// $ATTRIBUTE_LIST names both extents (what a fragmented $MFT looks like).
/// `second_vcn` is the starting VCN the list gives for the second extent.
io::MemoryImage split_mft(const Layout& L, std::uint64_t second_vcn) {
    auto img = formatted(L);
    const std::uint64_t C = L.cluster_bytes, rs = L.mft_record_bytes;
    REQUIRE(L.mft.clusters == 7);
    const MftRecord old0 = Volume(img).read_record(0);
    auto nonres = [&](std::uint64_t first_vcn, std::uint64_t lcn, std::uint64_t clusters, bool sizes) {
        const std::vector<DataRun> runs{{clusters, lcn}};
        const NonResidentSizes sz =
            sizes ? NonResidentSizes{7 * C, L.mft_bytes(), L.mft_bytes()} : NonResidentSizes{};
        auto a = build_nonresident_attribute(AttrType::data, u"", runs, sz, first_vcn + clusters - 1);
        core::store_le64(a, 0x10, first_vcn);
        return a;
    };
    std::vector<std::byte> list;
    auto entry = [&](std::uint32_t type, std::uint64_t vcn, std::uint64_t record, std::uint16_t seq) {
        std::vector<std::byte> e(32);
        core::store_le32(e, 0, type);
        core::store_le16(e, 4, 32);
        e[7] = std::byte{26};
        core::store_le64(e, 8, vcn);
        core::store_le64(e, 16, FileReference{record, seq}.packed());
        list.insert(list.end(), e.begin(), e.end());
    };
    entry(0x10, 0, 0, 1);
    entry(0x30, 0, 0, 1);
    entry(0x80, 0, 0, 1);
    entry(0x80, second_vcn, 15, 15);
    entry(0xB0, 0, 0, 1);
    MftRecordBuilder b0(static_cast<std::uint32_t>(rs), 0, 1, record_flag::in_use);
    b0.set_link_count(1);
    for (const Attribute& a : old0.attributes) {
        if (a.type == 0x10) {
            b0.add(build_resident_attribute(AttrType::standard_information, u"", a.value));
            b0.add(build_resident_attribute(AttrType::attribute_list, u"", list));
        } else if (a.type == 0x30) {
            b0.add(build_resident_attribute(AttrType::file_name, u"", a.value, true));
        } else if (a.type == 0x80) {
            b0.add(nonres(0, L.mft.lcn, 4, true));
        } else {
            std::vector<DataRun> runs{{a.runs[0].length, static_cast<std::uint64_t>(*a.runs[0].lcn)}};
            b0.add(build_nonresident_attribute(AttrType::bitmap, u"", runs,
                                               {a.allocated_size, a.data_size, a.initialized_size}, 0));
        }
    }
    MftRecordBuilder b15(static_cast<std::uint32_t>(rs), 15, 15, record_flag::in_use);
    b15.add(nonres(4, L.mft.lcn + 4, 3, false));
    auto r15 = b15.finish();
    core::store_le64(r15, 0x20, FileReference{0, 1}.packed());  // base record (not in a fixup tail)
    img.write_at(L.mft.lcn * C, b0.finish());
    img.write_at(L.mft.lcn * C + 15 * rs, r15);
    return img;
}

}  // namespace

TEST_CASE("ntfs volume: a fragmented $MFT continues through $ATTRIBUTE_LIST", "[ntfs][volume]") {
    const Layout L = must(16u << 20);
    const auto img = split_mft(L, 4);
    const Volume v(img);
    CHECK(v.mft_data().runs ==
          std::vector<MappedRun>{{Vcn{0}, 4, Lcn{L.mft.lcn}}, {Vcn{4}, 3, Lcn{L.mft.lcn + 4}}});
    CHECK(static_cast<std::uint64_t>(v.mft_data().last_vcn) == 6);
    CHECK(v.record_count() == 27);
    // Records past the base extent (VCN 4 holds records 16..19) read through
    // the extension's runs.
    for (std::uint32_t n = 16; n < 27; ++n) CHECK(v.read_record(n).header.record_number == n);
    const MftRecord r0 = v.read_record(0);
    const auto list = r0.find(AttrType::attribute_list);
    REQUIRE(list);
    const auto entries = decode_attribute_list(list->value);
    REQUIRE(entries.size() == 5);
    CHECK(entries[3].record == FileReference{15, 15});
    CHECK(entries[3].starting_vcn == 4);
    // An extent that does not continue the runs: refused, not guessed.
    const auto gap = split_mft(L, 5);
    CHECK_THAT(error_of([&] { const Volume bad(gap); }),
               Catch::Contains("extent at VCN 5 in record 15") && Catch::Contains("end at VCN 4"));
}
