// exFAT geometry (include/fsimg/exfat/layout.hpp): against mkfs.exfat 1.2.0,
// invariants over random sizes and every cluster size, the extremes (1 MiB,
// 2 TiB of 512-byte clusters, 4 TiB of 4 KiB clusters, 16 TiB), refusals.
#include <catch2/catch.hpp>

#include <variant>

#include "fsimg/core/units.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/structs.hpp"

using namespace fsimg;
using namespace fsimg::exfat;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

std::variant<Layout, LayoutRefusal> plan(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {},
                                         std::uint32_t bps = 512, std::optional<std::uint32_t> align = {},
                                         std::uint64_t partition_offset = 0) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.cluster_bytes = cluster;
    r.bytes_per_sector = bps;
    r.align_bytes = align;
    r.partition_offset = partition_offset;
    return plan_layout(r);
}

Layout must(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {}, std::uint32_t bps = 512,
            std::optional<std::uint32_t> align = {}, std::uint64_t partition_offset = 0) {
    auto v = plan(bytes, cluster, bps, align, partition_offset);
    if (auto* r = std::get_if<LayoutRefusal>(&v)) FAIL("refused: " << r->reason);
    return std::get<Layout>(v);
}

LayoutRefusal refused(std::uint64_t bytes, std::optional<std::uint32_t> cluster = {}, std::uint32_t bps = 512,
                      std::optional<std::uint32_t> align = {}) {
    auto v = plan(bytes, cluster, bps, align);
    if (std::holds_alternative<Layout>(v)) FAIL("accepted " << bytes << " bytes");
    return std::get<LayoutRefusal>(v);
}

/// Every rule a layout must satisfy, for the request that produced it.
void check_invariants(const Layout& l, std::uint64_t bytes, std::uint32_t align_requested) {
    INFO("volume " << bytes << " cluster " << l.cluster_bytes() << " bps " << l.bytes_per_sector << " align "
                   << l.align_bytes);
    const std::uint64_t bps = l.bytes_per_sector;
    const std::uint64_t spc = l.sectors_per_cluster;
    const std::uint64_t p = l.partition_offset;
    CHECK(l.align_bytes == align_requested);
    CHECK(l.volume_length + l.unused_tail_sectors == bytes / bps);
    CHECK(l.volume_bytes() >= kMinVolumeBytes);
    CHECK(l.fat_offset >= kMinFatOffset);
    CHECK((p + l.fat_offset) * bps % l.align_bytes == 0);
    CHECK((p + l.cluster_heap_offset) * bps % std::max<std::uint64_t>(l.align_bytes, l.cluster_bytes()) == 0);
    CHECK(std::uint64_t(l.fat_length) == core::div_ceil((std::uint64_t(l.cluster_count) + 2) * 4, bps));
    CHECK(std::uint64_t(l.fat_offset) + l.fat_length <= l.cluster_heap_offset);
    const std::uint64_t heap_end = l.cluster_heap_offset + std::uint64_t(l.cluster_count) * spc;
    CHECK(heap_end <= l.volume_length);
    // [EXFAT §3.1.9]: the count is exactly what fits, or the cap.
    CHECK(l.cluster_count ==
          std::min<std::uint64_t>((l.volume_length - l.cluster_heap_offset) / spc, kMaxClusterCount));
    // Maximal: one more cluster would need a longer FAT that pushes the heap
    // to the next boundary, past the space given.
    if (l.cluster_count < kMaxClusterCount) {
        const std::uint64_t a = std::max<std::uint64_t>(l.align_bytes, l.cluster_bytes()) / bps;
        const std::uint64_t fat_end =
            p + l.fat_offset + core::div_ceil((std::uint64_t(l.cluster_count) + 3) * 4, bps);
        const std::uint64_t heap2 = core::round_up(fat_end, a) - p;
        CHECK(heap2 + (std::uint64_t(l.cluster_count) + 1) * spc > bytes / bps);
    }
    if (l.unused_tail_sectors) CHECK(l.volume_length == heap_end);
    CHECK(l.bitmap_first_cluster == 2);
    CHECK(l.bitmap_bytes == core::div_ceil(l.cluster_count, 8));
    CHECK(l.upcase_first_cluster == 2 + l.bitmap_clusters());
    CHECK(l.root_first_cluster == l.upcase_first_cluster + l.upcase_clusters());
    CHECK(l.used_clusters() <= l.cluster_count);
    CHECK(l.percent_in_use() <= 100);
    const auto problems = validate_boot_sector(boot_sector_from_layout(l, 0, l.percent_in_use()));
    for (const auto& pr : problems) FAIL_CHECK(pr.message);
}

}  // namespace

TEST_CASE("exFAT layout: geometry compared with mkfs.exfat 1.2.0", "[exfat_layout]") {
    // truncate -s SIZE img && mkfs.exfat img; dump.exfat img (formats.md §2.11 [EXP]).
    // Same FatOffset, ClusterHeapOffset, ClusterCount and root cluster; our
    // FatLength is the exact minimum where mkfs.exfat rounds it up to a cluster.
    struct Case {
        std::uint64_t bytes;
        std::uint32_t bps;
        std::uint32_t cluster;
        std::uint32_t fat_offset, heap, count, root;
    };
    for (const Case& c : {
             Case{64 * MiB, 512, 4096, 2048, 4096, 15872, 5},
             Case{64 * MiB, 4096, 4096, 256, 512, 15872, 5},  // loop device with 4 KiB sectors
             Case{257 * MiB, 512, 32768, 2048, 4096, 8160, 4},
             Case{32 * GiB, 512, 32768, 2048, 10240, 1048416, 7},
             Case{33 * GiB, 512, 131072, 2048, 6144, 270312, 4},
         }) {
        INFO(c.bytes);
        const Layout l = must(c.bytes, {}, c.bps);
        CHECK(l.cluster_bytes() == c.cluster);
        CHECK(l.fat_offset == c.fat_offset);
        CHECK(l.cluster_heap_offset == c.heap);
        CHECK(l.cluster_count == c.count);
        CHECK(l.root_first_cluster == c.root);
        check_invariants(l, c.bytes, kDefaultAlignBytes);
    }
}

TEST_CASE("exFAT layout: random sizes, every cluster size and alignment", "[exfat_layout]") {
    const double log2_bytes = GENERATE(take(60, random(20.0, 44.0)));  // 1 MiB .. 16 TiB
    const std::uint32_t bps = GENERATE(512u, 4096u);
    const std::uint64_t bytes = static_cast<std::uint64_t>(std::exp2(log2_bytes)) / 512 * 512;
    for (std::uint32_t cluster = bps; cluster <= kMaxClusterBytes; cluster *= 2) {
        for (std::optional<std::uint32_t> align :
             {std::optional<std::uint32_t>{}, std::optional<std::uint32_t>{bps},
              std::optional<std::uint32_t>{4 * MiB}}) {
            for (std::uint64_t poff : {std::uint64_t{0}, std::uint64_t{MiB / bps}}) {
                auto v = plan(bytes, cluster, bps, align, poff);
                if (auto* l = std::get_if<Layout>(&v)) {
                    const std::uint32_t want =
                        align ? *align
                              : (bytes / bps * bps < kSmallVolumeBytes ? cluster : kDefaultAlignBytes);
                    check_invariants(*l, bytes, want);
                } else {
                    const auto& r = std::get<LayoutRefusal>(v);
                    INFO(bytes << " bytes, cluster " << cluster << ": " << r.reason);
                    CHECK_FALSE(r.reason.empty());
                    // Refused only when there is a reason: too few clusters for the
                    // system objects, nothing fits, or a capped count wasting space.
                    const std::uint64_t fits = bytes / cluster;
                    CHECK((fits < 64 || fits > kMaxClusterCount || (align && *align >= bytes / 4)));
                }
            }
        }
    }
}

TEST_CASE("exFAT layout: default sizes keep every invariant", "[exfat_layout]") {
    const double log2_bytes = GENERATE(take(200, random(20.0, 44.0)));
    const std::uint32_t bps = GENERATE(512u, 1024u, 4096u);
    const std::uint64_t bytes = static_cast<std::uint64_t>(std::exp2(log2_bytes)) / 512 * 512;
    if (bytes / bps * bps < kMinVolumeBytes) return;
    const Layout l = must(bytes, {}, bps);
    check_invariants(l, bytes,
                     bytes / bps * bps < kSmallVolumeBytes ? l.cluster_bytes() : kDefaultAlignBytes);
    CHECK(l.cluster_bytes() == std::max(bps, default_cluster_bytes(bytes)));
}

TEST_CASE("exFAT layout: every sector count across a FAT-sector boundary", "[exfat_layout]") {
    // Where one more cluster needs one more FAT sector, which moves the heap
    // by a whole alignment unit: the count must stay maximal and exact.
    for (std::uint32_t cluster : {512u, 4096u, 65536u}) {
        const Layout base = must(300 * MiB, cluster, 512, 4096);
        const std::uint64_t per_fat_sector = 512 / 4;
        const std::uint64_t start = base.volume_length - per_fat_sector * (cluster / 512) * 2;
        for (std::uint64_t s = start; s < start + per_fat_sector * (cluster / 512) * 4; s += 7) {
            check_invariants(must(s * 512, cluster, 512, 4096), s * 512, 4096);
        }
    }
}

TEST_CASE("exFAT layout: the smallest volumes", "[exfat_layout]") {
    // Spec minimum: 1 MiB. Small volumes get cluster-size alignment by default.
    const Layout l = must(MiB);
    CHECK(l.cluster_bytes() == 4096);
    CHECK(l.align_bytes == 4096);
    CHECK(l.fat_offset == 24);
    CHECK(l.fat_length == 2);
    CHECK(l.cluster_heap_offset == 32);
    CHECK(l.cluster_count == 252);
    CHECK(l.root_first_cluster == 5);
    check_invariants(l, MiB, 4096);
    CHECK(must(MiB, 512).cluster_count == 2008);  // heap at sector 40
    CHECK(must(MiB, {}, 4096).fat_offset == 24);  // 24 sectors of 4 KiB are already aligned
    CHECK(must(MiB, {}, 4096).cluster_heap_offset == 25);

    const LayoutRefusal r = refused(MiB - 512);
    CHECK(r.reason.find("at least 1 MiB") != std::string::npos);
    // 1 MiB alignment does not fit in 2 MiB: suggest a smaller one or more space.
    const LayoutRefusal a = refused(2 * MiB, {}, 512, MiB);
    CHECK(std::find(a.suggestions.begin(), a.suggestions.end(), "--align 512K") != a.suggestions.end());
    CHECK(std::find(a.suggestions.begin(), a.suggestions.end(), "a volume of at least 4 MiB") !=
          a.suggestions.end());
    check_invariants(must(3 * MiB, {}, 512, MiB), 3 * MiB, MiB);
    // 32 MiB clusters need a 32 MiB-aligned heap and 3 clusters (bitmap,
    // up-case, root): refused on 40 MiB and 96 MiB, fine on 128 MiB.
    const LayoutRefusal big = refused(40 * MiB, 32 * MiB);
    CHECK(std::find(big.suggestions.begin(), big.suggestions.end(), "-c 8M") != big.suggestions.end());
    CHECK_FALSE(refused(96 * MiB, 32 * MiB).reason.empty());
    CHECK(must(128 * MiB, 32 * MiB).cluster_count == 3);
}

TEST_CASE("exFAT layout: 4 TiB with 4 KiB clusters, and the cluster-count cap", "[exfat_layout]") {
    // Near 4 TiB the FAT passes 4 GiB and the bitmap 128 MiB; all must stay exact.
    for (std::uint64_t bytes :
         {4 * TiB - MiB, 4 * TiB, 4 * TiB + 4 * GiB, 4198400 * MiB, 8 * TiB, 16 * TiB}) {
        INFO(bytes);
        const Layout l = must(bytes, 4096);
        check_invariants(l, bytes, kDefaultAlignBytes);
        CHECK(l.bitmap_bytes == core::div_ceil(l.cluster_count, 8));
        CHECK(std::uint64_t(l.fat_length) * 512 >= (std::uint64_t(l.cluster_count) + 2) * 4);
    }
    const Layout four = must(4 * TiB, 4096);
    CHECK(four.cluster_count == 1072693760u);
    CHECK(four.cluster_heap_offset == 8384512u);
    CHECK(four.bitmap_bytes == 134086720u);  // 128 MiB - 128 KiB
    CHECK(four.fat_length == core::div_ceil((std::uint64_t(four.cluster_count) + 2) * 4, 512));

    // 16 TiB of 4 KiB clusters is just below the cap (the 16 GiB FAT takes its
    // share); 32 GiB more would pass 2^32-11 clusters: the cap would leave
    // space unused, refused with the cluster size that covers it.
    CHECK(must(16 * TiB, 4096).cluster_count == 4290776576u);
    const LayoutRefusal r = refused(16 * TiB + 32 * GiB, 4096);
    CHECK(r.reason.find("4,294,967,285") != std::string::npos);
    CHECK(r.suggestions == std::vector<std::string>{"-c 8K"});
    // 2 TiB + 32 GiB of 512-byte clusters: the same with -c 1K.
    CHECK(refused(2 * TiB + 32 * GiB, 512).suggestions == std::vector<std::string>{"-c 1K"});
    // Exactly the cap fills the volume: accepted with ClusterCount 2^32-11.
    // (FAT of 2^25 sectors from sector 2048: heap at 33,556,480, already aligned.)
    const std::uint64_t exact = (33556480ull + kMaxClusterCount) * 512;
    const Layout capped = must(exact, 512);
    CHECK(capped.cluster_count == kMaxClusterCount);
    CHECK(capped.cluster_heap_offset == 33556480u);
    check_invariants(capped, exact, kDefaultAlignBytes);
    // Less than a cluster more is excess space; a cluster more is refused.
    check_invariants(must(exact + 511, 512), exact, kDefaultAlignBytes);
    CHECK_FALSE(refused(exact + 512, 512).reason.empty());
    // Default cluster sizes never hit the cap.
    CHECK(must(16 * TiB - 4 * GiB).cluster_bytes() == 131072);
}

TEST_CASE("exFAT layout: Windows default cluster sizes (KB140365)", "[exfat_layout]") {
    CHECK(default_cluster_bytes(MiB) == 4096);
    CHECK(default_cluster_bytes(256 * MiB) == 4096);
    CHECK(default_cluster_bytes(256 * MiB + 512) == 32768);
    CHECK(default_cluster_bytes(32 * GiB) == 32768);
    CHECK(default_cluster_bytes(32 * GiB + 512) == 131072);
    CHECK(default_cluster_bytes(256 * TiB) == 131072);
    CHECK(mkfs_exfat_default_cluster_bytes(64 * MiB) == 4096);
    // With 4 KiB sectors the default stays 4 KiB (one sector) on small volumes.
    CHECK(must(8 * MiB, {}, 4096).cluster_bytes() == 4096);
    // Beyond 512 TiB at 128 KiB the count would pass 2^32-11: doubled.
    LayoutRequest r;
    r.volume_bytes = 600 * TiB;
    const auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    CHECK(std::get<Layout>(v).cluster_bytes() == 262144);
}

TEST_CASE("exFAT layout: alignment is media-relative and never below the cluster", "[exfat_layout]") {
    // Partition at LBA 63 (old DOS style): FAT and heap still on 1 MiB media boundaries.
    const Layout l = must(100 * MiB, 4096, 512, {}, 63);
    CHECK((63 + l.fat_offset) % 2048 == 0);
    CHECK((63 + l.cluster_heap_offset) % 2048 == 0);
    check_invariants(l, 100 * MiB, MiB);
    // 2 MiB clusters with 1 MiB alignment: the heap is on a 2 MiB boundary.
    const Layout big = must(1 * GiB, 2 * MiB);
    CHECK(big.cluster_heap_offset * 512ull % (2 * MiB) == 0);
    CHECK(big.fat_offset == 2048);
}

TEST_CASE("exFAT layout: invalid parameters name the value", "[exfat_layout]") {
    CHECK(refused(64 * MiB, 3000).reason.find("3000") != std::string::npos);
    CHECK(refused(64 * MiB, 64 * MiB).reason.find("32 MiB") != std::string::npos);
    CHECK(refused(64 * MiB, 512, 4096).reason.find("one sector") != std::string::npos);
    CHECK(refused(64 * MiB, {}, 8192).reason.find("8192") != std::string::npos);
    CHECK(refused(64 * MiB, {}, 512, 3000).reason.find("--align 3000") != std::string::npos);
    CHECK(refused(64 * MiB, {}, 512, 512u << 20).reason.find("256 MiB") != std::string::npos);
}

TEST_CASE("exFAT layout: explain names the regions", "[exfat_layout]") {
    LayoutRequest r;
    r.volume_bytes = 64 * MiB;
    const Layout l = std::get<Layout>(plan_layout(r));
    const auto lines = explain_layout(r, l);
    std::string all;
    for (const auto& s : lines) all += s + "\n";
    CHECK(all.find("cluster heap: at sector 4,096 (2 MiB), 15,872 clusters") != std::string::npos);
    CHECK(all.find("root directory: cluster 5") != std::string::npos);
}
