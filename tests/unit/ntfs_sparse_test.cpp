// NTFS populate of sparse sources (issue 19): which VCNs get clusters
// (whole aligned compression units of 16 clusters), the runlist room rule,
// the runlist with holes, and the 72-byte sparse attribute header.
#include <catch2/catch.hpp>

#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/structs.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
using source::Segment;

namespace {
std::vector<VcnRange> vcns(const std::vector<Segment>& data, std::uint64_t size, std::uint32_t cb,
                           std::uint64_t room = 600) {
    const auto r = sparse_data_vcns(data, size, cb, room);
    REQUIRE(r.has_value());
    return *r;
}
}  // namespace

TEST_CASE("ntfs sparse: data keeps whole aligned compression units", "[ntfs][sparse]") {
    // 4 KiB clusters, a unit is 64 KiB. One byte at 1 MiB + 5 in a 2 MiB file.
    CHECK(vcns({{(1 << 20) + 5, 1}}, 2 << 20, 4096) == std::vector<VcnRange>{{256, 16}});
    // Data in two neighbouring units and one far away; the last unit whole although the file ends in it.
    CHECK(vcns({{60000, 10000}, {1000000, 100}}, 1000100, 4096) == std::vector<VcnRange>{{0, 32}, {240, 16}});
    CHECK(sparse_allocated_clusters(1000100, 4096) == 256);
    // 4 GiB + 2 bytes, the last 2 bytes data: one unit, the rest one hole.
    const std::uint64_t big = (4ull << 30) + 2;
    CHECK(vcns({{big - 2, 2}}, big, 4096) == std::vector<VcnRange>{{1ull << 20, 16}});
    CHECK(vcns({{big - 2, 2}}, big, 512) == std::vector<VcnRange>{{8ull << 20, 16}});
    CHECK(sparse_allocated_clusters(big, 512) == (8ull << 20) + 16);
    // All hole: no data range at all.
    CHECK(vcns({}, 5 << 20, 4096).empty());
}

TEST_CASE("ntfs sparse: files without a whole-unit hole are not sparse", "[ntfs][sparse]") {
    // 40,000 bytes, a hole before byte 30,000: one unit at 4 KiB clusters (dense), 5 units at 512 B.
    CHECK_FALSE(sparse_data_vcns(std::vector<Segment>{{30000, 10000}}, 40000, 4096, 600));
    CHECK(vcns({{30000, 10000}}, 40000, 512) == std::vector<VcnRange>{{48, 32}});
    CHECK_FALSE(sparse_data_vcns(std::vector<Segment>{{0, 1 << 20}}, 1 << 20, 4096, 600));
    CHECK_FALSE(sparse_data_vcns(std::vector<Segment>{}, 0, 4096, 600));
    // No room for even one hole.
    CHECK_FALSE(sparse_data_vcns(std::vector<Segment>{}, 5 << 20, 4096, 8));
}

TEST_CASE("ntfs sparse: too many holes for the record keep the longest", "[ntfs][sparse]") {
    // 100 data units with holes of 1..100 units between them (4 KiB clusters).
    std::vector<Segment> data;
    std::uint64_t at = 0;
    for (int k = 1; k <= 100; ++k) {
        data.push_back({at * 65536, 1});
        at += 1 + k;
    }
    const std::uint64_t size = at * 65536;
    // Every run at its widest: data 1 + 3 + 8, hole 1 + 3 (n = 5150 * 16 clusters needs 3 bytes).
    const std::uint64_t room = 1 + 12 + 10 * (12 + 4);  // exactly 10 holes
    const auto r = vcns(data, size, 4096, room);
    std::uint64_t last = 0;
    std::vector<std::uint64_t> holes;
    for (const VcnRange& v : r) {
        if (v.vcn > last) holes.push_back(v.vcn - last);
        last = v.vcn + v.clusters;
    }
    if (size / 4096 > last) holes.push_back(size / 4096 - last);  // the last hole ends the file
    REQUIRE(holes.size() == 10);
    for (std::size_t k = 0; k < 10; ++k) CHECK(holes[k] == (91 + k) * 16);
    CHECK(sparse_runlist_room(1024, 9) == resident_limit(1024, 9) - 48);
    CHECK(sparse_runlist_room(1024, 255, 12) == 72);  // 120 resident bytes less the 48 the header adds
    CHECK(sparse_runlist_room(1024, 255, 255) == 0);
}

TEST_CASE("ntfs sparse: runlist with holes and the 72-byte header", "[ntfs][sparse]") {
    const std::vector<VcnRange> data{{16, 16}, {64, 5}};
    const std::vector<Extent> ext{{1000, 10}, {2000, 11}};
    const std::vector<DataRun> runs = sparse_runlist(data, ext, 100);
    const std::vector<DataRun> want{{16, std::nullopt}, {10, 1000}, {6, 2000},
                                    {32, std::nullopt}, {5, 2006},  {31, std::nullopt}};
    CHECK(runs == want);
    CHECK_THROWS(sparse_runlist(data, std::vector<Extent>{{1000, 20}}, 100));
    CHECK_THROWS(sparse_runlist(data, std::vector<Extent>{{1000, 22}}, 100));
    CHECK_THROWS(sparse_runlist(data, ext, 60));

    const NonResidentSizes sizes{100 * 4096, 100 * 4096 - 7, 100 * 4096 - 7};
    const std::vector<std::byte> a =
        build_nonresident_attribute(AttrType::data, u"", runs, sizes, 99, 21 * 4096);
    CHECK(core::load_le16(a, 0x0C) == 0x8000);  // ATTR_IS_SPARSE
    CHECK(core::load_le16(a, 0x20) == 0x48);    // runlist after the compressed size
    CHECK(core::load_le16(a, 0x22) == 4);       // compression unit 2^4
    CHECK(core::load_le64(a, 0x40) == 21 * 4096);
    CHECK(decode_runlist(std::span(a).subspan(0x48)) == runs);
    // Not sparse: the 64-byte header of before.
    const std::vector<std::byte> d = build_nonresident_attribute(
        AttrType::data, u"", std::vector<DataRun>{{4, 7}}, {16384, 16000, 16000}, 3);
    CHECK(core::load_le16(d, 0x0C) == 0);
    CHECK(core::load_le16(d, 0x20) == 0x40);
    CHECK(core::load_le16(d, 0x22) == 0);
}
