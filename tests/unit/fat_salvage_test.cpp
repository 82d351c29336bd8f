// fat/salvage.hpp: what salvage_file writes of a file whose chain is broken,
// on FAT16 volumes made and filled by our own formatter and editor, then
// damaged here entry by entry.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <variant>
#include <vector>

#include "edit_test_support.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/edit.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/salvage.hpp"
#include "fsimg/fat/volume.hpp"

using namespace fsimg;
using namespace fsimg::fat;
using namespace fsimg::test;

namespace {

constexpr std::uint32_t kCluster = 2048;

Layout fat16() {
    LayoutRequest r;
    r.volume_bytes = 24 << 20;
    r.type = FatType::fat16;
    r.cluster_bytes = kCluster;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

/// Sets FAT16 entry n to `value` in both FATs.
void set_entry(io::MemoryImage& img, const Layout& l, std::uint32_t n, std::uint16_t value) {
    const std::array<std::byte, 2> b{std::byte(value & 0xFF), std::byte(value >> 8)};
    for (std::uint32_t k = 0; k < l.num_fats; ++k)
        img.write_at(l.first_fat_sector * l.bytes_per_sector + k * l.fat_bytes() + n * 2ull, b);
}

struct Salvaged {
    std::string bytes;
    check::Salvage report;
};

Salvaged salvage(const io::MemoryImage& img, const std::string& path) {
    const Volume v(img);
    const auto r = v.lookup(path);
    REQUIRE(r.has_value());
    std::vector<ClusterRun> lost;
    check::Findings f;
    CheckOptions o;
    o.lost = &lost;
    (void)check_volume(img, f, o);
    Salvaged s;
    s.report = salvage_file(v, *r, lost, [&](std::span<const std::byte> b) {
        s.bytes.append(reinterpret_cast<const char*>(b.data()), b.size());
    });
    return s;
}

/// A FAT16 volume holding A.BIN (4 clusters) and then B.BIN (6 clusters), each contiguous.
struct Card {
    Layout l = fat16();
    io::MemoryImage img{l.volume_bytes()};
    std::string a = pattern(4 * kCluster - 100, 1), b = pattern(6 * kCluster, 2);
    std::uint32_t first_a = 0, first_b = 0;
    Card() {
        FormatOptions fo;
        fo.volume_id = 0x12345678;
        fo.timestamp_unix = 1700000000;
        format_volume(img, l, fo);
        HostFiles h;
        Source sa(h.make("a", a)), sb(h.make("b", b));
        EditOptions eo;
        eo.now = eo.clamp.emplace(1700000000);
        Editor e(img, eo);
        e.add_file(kRootDir, "A.BIN", sa.open(), {});
        e.add_file(kRootDir, "B.BIN", sb.open(), {});
        e.finish();
        const Volume v(img);
        first_a = v.first_cluster(*v.lookup("/A.BIN"));
        first_b = v.first_cluster(*v.lookup("/B.BIN"));
        REQUIRE(first_b == first_a + 4);
    }
};

}  // namespace

TEST_CASE("fat salvage: a sound file reads whole and is not called salvaged", "[fat][salvage]") {
    Card c;
    const Salvaged s = salvage(c.img, "/A.BIN");
    CHECK(s.bytes == c.a);
    CHECK_FALSE(s.report.salvaged());
    CHECK(s.report.damage.empty());
}

TEST_CASE("fat salvage: a fragmented lost tail is followed along its links, not read in a row",
          "[fat][salvage]") {
    Card c;
    // A's last cluster moved past B (first_a + 10), its old place zeroed and freed; the chain cut
    // after 2 clusters: first_a + 2 -> first_a + 10 is a lost chain of the 2 missing clusters.
    const std::uint32_t moved = c.first_a + 10;
    std::vector<std::byte> cl(kCluster);
    c.img.read_at(c.l.cluster_offset(c.first_a + 3), cl);
    c.img.write_at(c.l.cluster_offset(moved), cl);
    std::fill(cl.begin(), cl.end(), std::byte{0});
    c.img.write_at(c.l.cluster_offset(c.first_a + 3), cl);
    set_entry(c.img, c.l, c.first_a + 1, 0xFFFF);
    set_entry(c.img, c.l, c.first_a + 2, static_cast<std::uint16_t>(moved));
    set_entry(c.img, c.l, c.first_a + 3, 0);
    set_entry(c.img, c.l, moved, 0xFFFF);
    const Salvaged s = salvage(c.img, "/A.BIN");
    CHECK(s.bytes == c.a);
    CHECK(s.report.salvaged());
    REQUIRE(s.report.pieces.size() == 2);
    CHECK(s.report.pieces[0].source == check::SalvageSource::chain);
    CHECK(s.report.pieces[0].bytes == 2 * kCluster);
    CHECK(s.report.pieces[1].source == check::SalvageSource::lost_chain);
    CHECK(s.report.pieces[1].first_cluster == c.first_a + 2);
    CHECK(s.report.damage.find("ends after 2 of the 4 clusters") != std::string::npos);
    // B, whose clusters lie between, reads whole.
    CHECK(salvage(c.img, "/B.BIN").bytes == c.b);
}

TEST_CASE("fat salvage: a lost chain of the wrong length gives way to free or lost clusters in a row",
          "[fat][salvage]") {
    Card c;
    // Cut after 1 cluster; the tail first_a+1.. relinked to end one cluster early (first_a + 2 holds
    // an end-of-chain mark, first_a + 3 a lost chain of its own).
    set_entry(c.img, c.l, c.first_a, 0xFFFF);
    set_entry(c.img, c.l, c.first_a + 2, 0xFFFF);
    const Salvaged s = salvage(c.img, "/A.BIN");
    CHECK(s.bytes == c.a);
    REQUIRE(s.report.pieces.size() == 2);
    CHECK(s.report.pieces[1].source == check::SalvageSource::free_run);
    CHECK(s.report.pieces[1].first_cluster == c.first_a + 1);
}

TEST_CASE("fat salvage: a first cluster outside the volume, and a size past the data area, stay bounded",
          "[fat][salvage]") {
    Card c;
    const Volume v(c.img);
    auto r = *v.lookup("/A.BIN");
    r.entry.first_cluster = 0xFFF0;  // not a cluster of this volume
    r.entry.file_size = 0xFFFFFFFF;  // 4 GiB - 1 on a 24 MiB volume
    std::uint64_t n = 0;
    bool zeros = true;
    const check::Salvage s = salvage_file(v, r, {}, [&](std::span<const std::byte> b) {
        n += b.size();
        for (const std::byte x : b) zeros = zeros && x == std::byte{0};
    });
    CHECK(n == std::uint64_t(v.max_cluster() - 1) * kCluster);
    CHECK(zeros);
    CHECK(s.salvaged());
    CHECK(s.damage.find("exceeds the volume's data area") != std::string::npos);
    CHECK(s.damage.find("is not a cluster of the volume") != std::string::npos);
}
