// NTFS geometry (include/fsimg/ntfs/layout.hpp): against mkntfs 2022.10.3
// [EXP, formats.md §3.3], invariants over random sizes and every cluster
// size, the extremes, refusals with suggestions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <variant>

#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"

using namespace fsimg::ntfs;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

std::variant<Layout, LayoutRefusal> plan(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {},
                                         std::uint32_t bps = 512, std::optional<std::uint32_t> record = {}) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.cluster_bytes = cluster;
    r.bytes_per_sector = bps;
    r.mft_record_bytes = record;
    return plan_layout(r, secure_sds_bytes());
}

Layout must(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {}, std::uint32_t bps = 512,
            std::optional<std::uint32_t> record = {}) {
    auto v = plan(bytes, cluster, bps, record);
    if (auto* r = std::get_if<LayoutRefusal>(&v)) FAIL("refused: " << r->reason);
    return std::get<Layout>(v);
}

LayoutRefusal refused(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {}, std::uint32_t bps = 512,
                      std::optional<std::uint32_t> record = {}) {
    auto v = plan(bytes, cluster, bps, record);
    if (std::holds_alternative<Layout>(v)) FAIL("expected a refusal");
    return std::get<LayoutRefusal>(v);
}

void check_invariants(const Layout& L) {
    INFO("volume " << L.volume_bytes() << " cluster " << L.cluster_bytes);
    const auto ext = L.allocated();
    for (std::size_t i = 0; i < ext.size(); ++i) {
        REQUIRE(ext[i].clusters > 0);
        REQUIRE(ext[i].lcn + ext[i].clusters <= L.cluster_count);
        if (i) REQUIRE(ext[i - 1].lcn + ext[i - 1].clusters <= ext[i].lcn);  // disjoint
    }
    REQUIRE(L.total_sectors == L.device_sectors - 1);
    REQUIRE(L.cluster_count == L.total_sectors / L.sectors_per_cluster());
    REQUIRE(L.cluster_count <= kMaxClusters);
    REQUIRE(L.bitmap_bytes * 8 >= L.cluster_count);
    REQUIRE(L.bitmap_bytes % 8 == 0);
    REQUIRE(L.mft_bytes() >= L.mftmirr_bytes());
    REQUIRE(L.mft_records >= kInitialMftRecords);
    REQUIRE(L.mft_bitmap_bytes * 8 >= L.mft_records);
    REQUIRE(L.boot.lcn == 0);
    REQUIRE(L.boot.clusters * L.cluster_bytes >= kBootBytes);
    REQUIRE(L.logfile_bytes >= 256 * KiB);
    REQUIRE(L.logfile.lcn == L.mftmirr.lcn + L.mftmirr.clusters);
    REQUIRE(L.clusters_for(L.sds_bytes) == [&] {
        std::uint64_t n = 0;
        for (auto& e : L.sds) n += e.clusters;
        return n;
    }());
}

}  // namespace

TEST_CASE("ntfs layout: mkntfs -s 512 -c 4096 on 100 MiB", "[ntfs][layout]") {
    const Layout L = must(100 * MiB);
    CHECK(L.cluster_bytes == 4096);
    CHECK(L.mft_record_bytes == 1024);
    CHECK(L.cluster_count == 25599);  // ntfsinfo: Volume Size in Clusters
    CHECK(L.total_sectors == 204799);
    CHECK(L.boot == Extent{0, 2});
    CHECK(L.mft_bitmap == Extent{2, 1});
    CHECK(L.mft == Extent{4, 7});  // 27,648 bytes in 7 clusters
    CHECK(L.mft_bytes() == 27648);
    CHECK(L.mftmirr == Extent{12799, 1});
    CHECK(L.mftmirr_records == 4);
    CHECK(L.logfile == Extent{12800, 512});
    CHECK(L.logfile_bytes == 2 * MiB);
    CHECK(L.mft_zone_end == 3203);  // ntfsinfo: MFT Zone End
    CHECK(L.bitmap_bytes == 3200);
    check_invariants(L);
}

TEST_CASE("ntfs layout: $MFT placement by cluster size (formats.md §3.3)", "[ntfs][layout]") {
    CHECK(must(100 * MiB, 512).mft.lcn == 32);
    CHECK(must(100 * MiB, 4096).mft.lcn == 4);
    const Layout big = must(256 * MiB, 65536);
    CHECK(big.mft.lcn == 2);
    CHECK(big.mft_records == 64);  // one cluster of records, like mkntfs
    CHECK(big.mftmirr_records == 64);
    CHECK(big.boot == Extent{0, 1});
    const Layout k4 = must(64 * MiB, 4096, 4096);
    CHECK(k4.mft_record_bytes == 4096);
    CHECK(k4.mft_bytes() == 27 * 4096);
    CHECK(k4.mft.lcn == 4);
}

TEST_CASE("ntfs layout: $LogFile sizes (formats.md §3.3)", "[ntfs][layout]") {
    CHECK(logfile_bytes_for(1 * MiB, 4096) == 256 * KiB);
    CHECK(logfile_bytes_for(3 * MiB, 4096) == 512 * KiB);
    CHECK(logfile_bytes_for(100 * MiB, 4096) == 2 * MiB);
    CHECK(logfile_bytes_for(GiB, 4096) == 5365760);  // [EXP] 1 GiB
    CHECK(logfile_bytes_for(13 * GiB, 4096) == 64 * MiB);
    CHECK(must(GiB).logfile_bytes == 5365760);
    CHECK(must(13 * GiB).logfile_bytes == 64 * MiB);
    // The table applies to the volume without its backup boot sector, as in
    // mkntfs [EXP mkntfs 2022.10.3 on devices of exactly these sizes].
    CHECK(must(2 * MiB).logfile_bytes == 256 * KiB);
    CHECK(must(4000256).logfile_bytes == 512 * KiB);
    CHECK(must(12 * GiB).logfile_bytes == 64421888);
}

TEST_CASE("ntfs layout: default cluster sizes (formats.md §3.10)", "[ntfs][layout]") {
    CHECK(default_cluster_bytes(1 * MiB) == 4096);
    CHECK(default_cluster_bytes(16 * TiB) == 4096);
    CHECK(default_cluster_bytes(16 * TiB + 1) == 8192);
    CHECK(default_cluster_bytes(64 * TiB) == 16384);
    CHECK(default_cluster_bytes(256 * TiB) == 65536);
    CHECK(must(8 * TiB).cluster_bytes == 4096);
    CHECK(must(20 * TiB).cluster_bytes == 8192);
    CHECK(must(1 * MiB, {}, 4096).cluster_bytes == 4096);
}

TEST_CASE("ntfs layout: refusals name the reason and what works", "[ntfs][layout]") {
    auto r = refused(MiB - 512);
    CHECK(r.reason.find("1 MiB") != std::string::npos);
    r = refused(100 * MiB, 3000);
    CHECK(r.reason.find("power of two") != std::string::npos);
    r = refused(100 * MiB, 256);
    CHECK(!r.suggestions.empty());
    r = refused(GiB, 128 * 1024);
    CHECK(r.reason.find("64 KiB") != std::string::npos);
    CHECK(r.suggestions.at(0) == "-c 64K");
    r = refused(17 * TiB, 4096);  // more than 2^32 - 1 clusters
    CHECK(r.reason.find("2^32") != std::string::npos);
    CHECK(r.suggestions.at(0) == "-c 8K or larger");
    r = refused(64 * MiB, {}, 512, 2048);
    CHECK(r.reason.find("1024 or 4096") != std::string::npos);
    r = refused(64 * MiB, {}, 4096, 1024);
    CHECK(r.suggestions.at(0) == "--mft-record-size 4096");
    r = refused(64 * MiB, {}, 520);
    CHECK(r.reason.find("sector size") != std::string::npos);
}

TEST_CASE("ntfs layout: invariants over sizes, clusters and sectors", "[ntfs][layout]") {
    for (std::uint32_t bps : {512u, 1024u, 2048u, 4096u}) {
        for (std::uint32_t c = bps; c <= 65536; c *= 2) {
            for (std::uint64_t size : {1 * MiB, 1 * MiB + 512 * 7, 3 * MiB, 10 * MiB, 100 * MiB + 4096 * 3,
                                       GiB, 13 * GiB, 2 * TiB, 16 * TiB - 4096}) {
                auto v = plan(size, c, bps);
                if (auto* L = std::get_if<Layout>(&v)) {
                    check_invariants(*L);
                } else {
                    // Only tiny volumes with big clusters may be refused.
                    INFO(std::get<LayoutRefusal>(v).reason);
                    CHECK((size / c < 64 || size / c > kMaxClusters));
                }
            }
        }
    }
}

TEST_CASE("ntfs layout: random sizes keep the invariants", "[ntfs][layout]") {
    const auto size = GENERATE(take(60, random<std::uint64_t>(MiB, 64 * GiB)));
    const auto shift = GENERATE(take(2, random(9, 16)));
    auto v = plan(size, 1u << shift);
    if (auto* L = std::get_if<Layout>(&v)) check_invariants(*L);
}

TEST_CASE("ntfs layout: tiny volumes fragment the system files but fit", "[ntfs][layout]") {
    const Layout L = must(MiB);
    check_invariants(L);
    CHECK(L.cluster_count == 255);
    CHECK(L.logfile_bytes == 256 * KiB);
    CHECK(std::get<LayoutRefusal>(plan(MiB, 65536)).reason.find("too small") != std::string::npos);
}
