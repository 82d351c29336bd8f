#include <unistd.h>
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/slack/analyzer.hpp"
#include "fsimg/slack/report.hpp"
#include "tree_builder.hpp"

using namespace fsimg;
using namespace fsimg::exfat;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> hex(const std::string& text) {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i + 1 < text.size();) {
        if (text[i] == ' ' || text[i] == '\n') {
            ++i;
            continue;
        }
        out.push_back(static_cast<std::byte>(std::stoi(text.substr(i, 2), nullptr, 16)));
        i += 2;
    }
    return out;
}

Layout plan(std::uint64_t bytes, std::uint32_t cluster, std::uint32_t sector = 512) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.cluster_bytes = cluster;
    r.bytes_per_sector = sector;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

/// A tree built in memory with the exFAT rules, children sorted by name as
/// the scan sorts them.
struct TreeBuilder : test::TreeBuilder {
    TreeBuilder() : test::TreeBuilder(&check_source_tree) {}
    source::SourceTree done() {
        for (auto& node : t.nodes) {
            std::sort(node.children.begin(), node.children.end(),
                      [&](std::uint32_t a, std::uint32_t b) { return t.nodes[a].name < t.nodes[b].name; });
        }
        return test::TreeBuilder::done();
    }
};

/// Clusters the slack analyzer predicts for exFAT at `cluster` (tree only).
std::uint64_t analyzer_clusters(const source::SourceTree& tree, std::uint32_t cluster) {
    slack::AnalyzerOptions opt;
    opt.fs_mask = slack::fs_bit(slack::Fs::exfat);
    slack::Tally t;
    struct Item {
        std::uint32_t node;
        slack::DirContext ctx;
    };
    std::vector<Item> stack{{0, slack::DirContext{}}};
    while (!stack.empty()) {
        Item it = std::move(stack.back());
        stack.pop_back();
        slack::DirAccumulator acc(opt, it.ctx);
        for (const std::uint32_t c : tree.nodes[it.node].children) {
            const auto& cn = tree.nodes[c];
            const auto ex = acc.add(
                t, cn.name, cn.is_dir ? slack::EntryKind::directory : slack::EntryKind::file, cn.size);
            if (cn.is_dir) stack.push_back({c, acc.context().child(cn.name, ex)});
        }
        acc.finish(t);
    }
    slack::ReportOptions ro;
    ro.filesystems = {slack::Fs::exfat};
    const slack::Report r = slack::build_report(t, ro);
    for (const auto& row : r.rows) {
        if (row.cluster_bytes == cluster) return row.data_clusters + row.metadata_clusters;
    }
    FAIL("no exFAT row for " << cluster);
    return 0;
}

/// plan_population, which must succeed.
PopulatePlan must_plan(const source::SourceTree& t, const Layout& l) {
    auto planned = plan_population(t, l);
    REQUIRE(std::holds_alternative<PopulatePlan>(planned));
    return std::get<PopulatePlan>(std::move(planned));
}

/// A fresh in-memory volume: format_volume, then write_population.
std::unique_ptr<io::MemoryImage> populated(const source::SourceTree& t, const Layout& l,
                                           const PopulatePlan& p, const source::PopulateWriteOptions& wo = {},
                                           const FormatOptions& fo = {}) {
    auto img = std::make_unique<io::MemoryImage>(l.volume_bytes());
    format_volume(*img, l, fo);
    write_population(*img, l, t, p, wo);
    return img;
}

/// scan_tree of one host directory into the root, which must have no problems.
source::SourceTree scan_dir(const fs::path& dir) {
    ScanOptions so;
    so.sources.push_back({dir, "/"});
    source::SourceTree t = scan_tree(so);
    REQUIRE(t.problems.empty());
    return t;
}

std::uint64_t bits_set(const io::BlockDevice& d, const Layout& l) {
    std::vector<std::byte> bitmap(l.bitmap_bytes);
    d.read_at(l.cluster_offset(l.bitmap_first_cluster), bitmap);
    std::uint64_t n = 0;
    for (const std::byte b : bitmap)
        n += static_cast<std::uint64_t>(__builtin_popcount(static_cast<unsigned>(b)));
    return n;
}

}  // namespace

// Reference entry sets written by exfat-fuse 1.3.0 (mkfs.exfat 1.2.0, 8 MiB,
// 4 KiB clusters; `echo -n "hello, exFAT" > note45.txt`, `touch -d
// '2024-05-01 12:34:57.250'`, `mkdir "A Longer Directory Name Here"`), read
// with xxd from the root cluster. fsck.exfat -n finds that image clean.
TEST_CASE("entry set bytes equal exfat-fuse's (SetChecksum, NameHash)", "[exfat_populate]") {
    SECTION("file note45.txt: one File Name entry") {
        const auto expected =
            hex("8502 9a21 2000 0000 d341 7e5d 5c64 a158 5c64 a158 6464 8080 8000 0000 0000 0000"
                "c003 000a 3960 0000 0c00 0000 0000 0000 0000 0000 0600 0000 0c00 0000 0000 0000"
                "c100 6e00 6f00 7400 6500 3400 3500 2e00 7400 7800 7400 0000 0000 0000 0000 0000");
        FileEntrySetInfo e;
        e.name = u"note45.txt";
        e.attributes = kFileAttrArchive;
        e.created = {0x5d7e41d3, 100, 0x80};
        e.modified = {0x58a1645c, 100, 0x80};
        e.accessed = {0x58a1645c, 0, 0x80};
        e.secondary_flags = kSecondaryAllocationPossible | kSecondaryNoFatChain;
        e.first_cluster = 6;
        e.valid_data_length = e.data_length = 12;
        const auto got = encode_file_entry_set(e);
        CHECK(got == expected);
        CHECK(name_hash(u"note45.txt") == 0x6039);  // also formats.md §2.5 [EXP]
        CHECK(name_hash(u"NOTE45.TXT") == 0x6039);  // the hash is over the up-cased name
        CHECK(entry_set_checksum(got) == 0x219A);
    }
    SECTION("directory with a 28-unit name: two File Name entries") {
        const auto expected =
            hex("8503 ee1e 1000 0000 d341 7e5d d341 7e5d d341 7e5d 6464 8080 8000 0000 0000 0000"
                "c003 001c 656b 0000 0010 0000 0000 0000 0000 0000 0700 0000 0010 0000 0000 0000"
                "c100 4100 2000 4c00 6f00 6e00 6700 6500 7200 2000 4400 6900 7200 6500 6300 7400"
                "c100 6f00 7200 7900 2000 4e00 6100 6d00 6500 2000 4800 6500 7200 6500 0000 0000");
        FileEntrySetInfo e;
        e.name = u"A Longer Directory Name Here";
        e.attributes = kFileAttrDirectory;
        e.created = e.modified = {0x5d7e41d3, 100, 0x80};
        e.accessed = {0x5d7e41d3, 0, 0x80};
        e.secondary_flags = 0x03;
        e.first_cluster = 7;
        e.valid_data_length = e.data_length = 4096;
        CHECK(encode_file_entry_set(e) == expected);
    }
    SECTION("255 units: 19 entries; 256 refused") {
        const std::u16string name(255, u'x');
        FileEntrySetInfo e;
        e.name = name;
        const auto set = encode_file_entry_set(e);
        CHECK(set.size() == 19 * 32);
        CHECK(static_cast<unsigned>(set[1]) == 18);                 // SecondaryCount
        CHECK(static_cast<unsigned>(set[32 + 3]) == 255);           // NameLength
        CHECK(core::load_le16(set, 18 * 32 + 2 + 2 * 14) == u'x');  // last unit of the last entry
        const std::u16string longer(256, u'x');
        e.name = longer;
        CHECK_THROWS(encode_file_entry_set(e));
    }
}

TEST_CASE("entry_set_checksums: two sets at once equal one at a time", "[exfat_populate]") {
    // exfat-fuse's note45.txt set (above) against sets of every length 0..20
    // entries and the short lengths below the SetChecksum field (0..5 bytes).
    const auto note =
        hex("8502 9a21 2000 0000 d341 7e5d 5c64 a158 5c64 a158 6464 8080 8000 0000 0000 0000"
            "c003 000a 3960 0000 0c00 0000 0000 0000 0000 0000 0600 0000 0c00 0000 0000 0000"
            "c100 6e00 6f00 7400 6500 3400 3500 2e00 7400 7800 7400 0000 0000 0000 0000 0000");
    std::mt19937 rng(6);
    std::vector<std::vector<std::byte>> sets{note};
    for (std::size_t n : {0, 1, 2, 3, 4, 5}) sets.emplace_back(n);
    for (std::size_t entries = 1; entries <= 20; ++entries) sets.emplace_back(entries * kDirEntrySize);
    for (auto& set : sets) {
        if (set.size() == note.size() && set == note) continue;
        for (auto& b : set) b = static_cast<std::byte>(rng());
    }
    for (const auto& a : sets) {
        for (const auto& b : sets) {
            const auto [ca, cb] = entry_set_checksums(a, b);
            CHECK(ca == entry_set_checksum(a));
            CHECK(cb == entry_set_checksum(b));
        }
    }
    CHECK(entry_set_checksums(note, sets.back()).first == 0x219A);
    CHECK(entry_set_checksums(sets[5], note).second == 0x219A);  // 4 bytes: the two-set loop
}

TEST_CASE("entry timestamps: fields, 10 ms, UTC offset, range", "[exfat_populate]") {
    const std::int64_t t = core::unix_from_civil({2024, 5, 1, 12, 34, 57, 0});
    const EntryTimestamp a = entry_timestamp(t, 250000000);
    CHECK(a.timestamp == 0x58a1645c);                              // exfat-fuse's value for this time above
    CHECK(a.increment_10ms == 125);                                // odd second + 0.25 s
    CHECK(a.utc_offset == 0x80);                                   // OffsetValid, +0
    const EntryTimestamp b = entry_timestamp(t, 999999999, 3600);  // +01:00 local
    CHECK(b.timestamp == ((0x58a1u << 16) | (13u << 11) | (34u << 5) | 28u));
    CHECK(b.increment_10ms == 199);
    CHECK(b.utc_offset == 0x84);
    CHECK(entry_timestamp(t, 0, -5 * 3600).utc_offset == (0x80 | (-20 & 0x7F)));  // 0xEC
    CHECK(entry_timestamp(t, 0, -5 * 3600).utc_offset == 0xEC);
    const EntryTimestamp early = entry_timestamp(0, 500000000);  // 1970: clamped to 1980-01-01
    CHECK(early.timestamp == ((0u << 25) | (1u << 21) | (1u << 16)));
    CHECK(early.increment_10ms == 0);
}

TEST_CASE("exFAT name rules on a tree: every offender listed", "[exfat_populate]") {
    TreeBuilder b;
    const auto d = b.add(0, "names", true);
    b.add(d, "Straße.txt", false, 1);
    b.add(d, "STRASSE.TXT", false, 1);  // not a duplicate: the up-case table maps ß to itself
    b.add(d, "Ärger", false, 1);
    b.add(d, "äRGER", false, 1);  // duplicate of Ärger under the up-case table
    b.add(d, "colon:name.txt", false, 1);
    b.add(d, "trailing dot.", false, 1);    // legal on exFAT
    b.add(d, "trailing space ", false, 1);  // legal on exFAT
    b.add(d, std::string(255, 'n'), false, 1);
    b.add(d, std::string(256, 'n'), false, 1);
    b.add(d, "bad\xff utf8", false, 1);
    b.add(d, "CON", false, 1);                // warned, stored
    b.add(0, "huge.bin", false, 5ull << 30);  // no 4 GiB limit on exFAT
    const source::SourceTree t = b.done();
    std::vector<std::string> paths;
    for (const auto& p : t.problems) paths.push_back(p.path);
    std::sort(paths.begin(), paths.end());
    const std::vector<std::string> expected{"/names/" + std::string(256, 'n'), "/names/bad\xff utf8",
                                            "/names/colon:name.txt", "/names/äRGER"};
    std::vector<std::string> sorted_expected = expected;
    std::sort(sorted_expected.begin(), sorted_expected.end());
    CHECK(paths == sorted_expected);
    // Device names and trailing periods/spaces are stored, with a warning:
    // Windows cannot open them, the Linux exfat driver strips a trailing period.
    REQUIRE(t.warnings.size() == 3);
    CHECK(t.warnings[0].find("/names/CON") == 0);
    CHECK(t.warnings[1].find("/names/trailing dot.: \"trailing dot.\" ends with a period") == 0);
    CHECK(t.warnings[2].find("/names/trailing space : \"trailing space \" ends with a space") == 0);
}

TEST_CASE("plan: allocation equals the cost model and the slack analyzer", "[exfat_populate]") {
    const auto seed = GENERATE(take(8, random(1u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    const std::vector<std::string> stems = {
        "a",       "README", "long file name with spaces to pass fifteen units",
        "Ünïcode", "emoji😀", std::string(100, 'w')};
    TreeBuilder b;
    std::vector<std::uint32_t> dirs{0};
    const int n = std::uniform_int_distribution<int>(1, 400)(rng);
    for (int i = 0; i < n; ++i) {
        const std::uint32_t parent = dirs[rng() % dirs.size()];
        const bool is_dir = rng() % 6 == 0;
        const std::uint64_t size = is_dir ? 0 : std::uint64_t(rng() % 3 == 0 ? rng() % 300000 : rng() % 5000);
        const auto idx = b.add(parent, stems[rng() % stems.size()] + fmt::format("{}", i), is_dir, size);
        if (is_dir) dirs.push_back(idx);
    }
    const source::SourceTree tree = b.done();
    REQUIRE(tree.problems.empty());
    for (const std::uint32_t c : {512u, 4096u, 32768u, 1u << 20}) {
        INFO("cluster " << c);
        const Layout l = plan(c == (1u << 20) ? 2048ull << 20 : 256ull << 20, c);
        const PopulatePlan p = must_plan(tree, l);
        // Independent sum of the cost model.
        std::uint64_t expect = 0;
        for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
            const auto& node = tree.nodes[i];
            if (!node.is_dir) {
                expect += (node.size + c - 1) / c;
                continue;
            }
            std::uint64_t bytes = i == 0 ? 96 : 0;
            for (const auto ch : node.children) bytes += 32 * (2 + (tree.nodes[ch].name16.size() + 14) / 15);
            expect += std::max<std::uint64_t>(1, (bytes + c - 1) / c);
        }
        CHECK(p.usage.clusters() == expect);
        CHECK(p.used_clusters - l.used_clusters() == expect - 1);
        CHECK(analyzer_clusters(tree, c) == expect - 1);
        // Contiguous, ascending, no overlap, starting at the root.
        std::uint64_t next = l.root_first_cluster;
        for (const std::uint32_t i : p.allocation_order) {
            CHECK(p.nodes[i].first_cluster == next);
            next += p.nodes[i].clusters;
        }
        CHECK(next == 2 + p.used_clusters);
    }
}

TEST_CASE("plan refusals: tree larger than the volume, needed vs available", "[exfat_populate]") {
    TreeBuilder b;
    b.add(0, "big.bin", false, 10ull << 20);
    const source::SourceTree t = b.done();
    const Layout l = plan(8ull << 20, 4096);
    const auto planned = plan_population(t, l);
    REQUIRE(std::holds_alternative<std::vector<source::TreeProblem>>(planned));
    const auto& problems = std::get<std::vector<source::TreeProblem>>(planned);
    REQUIRE(problems.size() == 1);
    // 2,560 data clusters; the free ones: the count minus bitmap, up-case table and root.
    CHECK(problems[0].reason.find("needs 10 MiB (2,560 clusters of 4 KiB)") != std::string::npos);
    CHECK(problems[0].reason.find(fmt::format("{} clusters of 4 KiB) free",
                                              core::format_count(l.cluster_count - l.used_clusters()))) !=
          std::string::npos);
    // -s auto finds a volume that holds it, with 1 MiB to spare.
    LayoutRequest base;
    base.cluster_bytes = 4096;
    const auto sized = volume_bytes_for_tree(t, base, 1 << 20);
    REQUIRE(std::holds_alternative<std::uint64_t>(sized));
    const Layout fits = plan(std::get<std::uint64_t>(sized), 4096);
    CHECK(std::holds_alternative<PopulatePlan>(plan_population(t, fits)));
    CHECK(fits.cluster_count - fits.used_clusters() >= 2560 + 256);
    const Layout smaller = plan(std::get<std::uint64_t>(sized) - (1 << 20), 4096);
    CHECK(smaller.cluster_count - smaller.used_clusters() < 2560 + 256);
}

TEST_CASE("scan, plan and write a real tree; read the structures back", "[exfat_populate]") {
    const fs::path dir = fs::temp_directory_path() / fmt::format("fsimg-exfat-pop-{}", ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir / "sub" / "empty");
    std::ofstream(dir / "hello.txt") << "hello, exFAT";
    std::ofstream(dir / "sub" / "zero.bin");
    {
        std::ofstream big(dir / "sub" / "big.bin", std::ios::binary);
        for (int i = 0; i < 10000; ++i) big << fmt::format("{:08d}", i);  // 80,000 bytes
    }
    ScanOptions so;
    so.sources.push_back({dir, "/"});
    so.sources.push_back({dir / "sub", "/copy/of/sub"});
    const source::SourceTree tree = scan_tree(so);
    REQUIRE(tree.problems.empty());
    CHECK(tree.files == 5);
    CHECK(tree.directories == 6);  // sub, sub/empty, copy, copy/of, copy/of/sub, copy/of/sub/empty

    const Layout l = plan(8ull << 20, 4096);
    FormatOptions fo;
    fo.volume_serial_number = 0x12345678;
    const PopulatePlan p = must_plan(tree, l);
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    wo.clamp = 1700000000;
    const auto image = populated(tree, l, p, wo, fo);
    const io::MemoryImage& img = *image;
    fs::remove_all(dir);

    // Data: 2 x 20 clusters (80,000 B) + 1 (hello); directories: root 1, sub, empty, copy, of, sub, empty.
    CHECK(p.usage.data_clusters == 41);
    CHECK(p.usage.directory_clusters == 7);
    CHECK(p.used_clusters == l.used_clusters() + 47);
    CHECK(bits_set(img, l) == p.used_clusters);
    std::array<std::byte, 512> boot{};
    img.read_at(0, boot);
    CHECK(static_cast<unsigned>(boot[off::PercentInUse]) == p.used_clusters * 100 / l.cluster_count);
    std::vector<std::byte> region(12 * 512);
    img.read_at(0, region);
    CHECK(boot_region_checksum_ok(region, 512));

    // Root: system entries, then "copy" (dir), "hello.txt", "sub" in name order.
    std::vector<std::byte> root(4096);
    img.read_at(l.cluster_offset(l.root_first_cluster), root);
    CHECK(static_cast<unsigned>(root[0]) == kEntryVolumeLabel);
    CHECK(static_cast<unsigned>(root[96]) == kEntryFile);
    CHECK(core::load_le16(root, 96 + 4) == kFileAttrDirectory);
    const auto set_of = [&](std::size_t at, std::size_t entries) {
        return std::span<const std::byte>(root).subspan(at, entries * 32);
    };
    CHECK(core::load_le16(root, 96 + 2) == entry_set_checksum(set_of(96, 3)));
    const std::size_t hello = 96 + 3 * 32;
    CHECK(static_cast<unsigned>(root[hello]) == kEntryFile);
    CHECK(core::load_le16(root, hello + 4) == kFileAttrArchive);
    CHECK(core::load_le32(root, hello + 12) == entry_timestamp(1700000000, 0).timestamp);  // clamped
    CHECK(static_cast<unsigned>(root[hello + 32 + 1]) == 0x03);                            // NoFatChain
    CHECK(core::load_le64(root, hello + 32 + 24) == 12);
    const std::uint32_t first = core::load_le32(root, hello + 32 + 20);
    std::vector<std::byte> data(12);
    img.read_at(l.cluster_offset(first), data);
    CHECK(std::string(reinterpret_cast<const char*>(data.data()), 12) == "hello, exFAT");
    // Contiguous files leave their FAT entries 0; the root (1 cluster) ends its chain.
    std::array<std::byte, 4> fat_entry{};
    img.read_at(std::uint64_t{l.fat_offset} * 512 + 4ull * first, fat_entry);
    CHECK(core::load_le32(fat_entry, 0) == 0);
    img.read_at(std::uint64_t{l.fat_offset} * 512 + 4ull * l.root_first_cluster, fat_entry);
    CHECK(core::load_le32(fat_entry, 0) == kFatEndOfChain);
    CHECK(static_cast<unsigned>(root[hello + 96]) == kEntryFile);  // "sub"
    CHECK(static_cast<unsigned>(root[hello + 192]) == 0);          // end of directory
}

TEST_CASE("a root of several clusters is FAT-chained in one run", "[exfat_populate]") {
    TreeBuilder b;
    for (int i = 0; i < 60; ++i)
        b.add(0, fmt::format("file{:03d}", i), false, 0);  // 60 x 3 + 3 = 183 entries
    const source::SourceTree t = b.done();
    const Layout l = plan(8ull << 20, 512);
    const PopulatePlan p = must_plan(t, l);
    CHECK(p.nodes[0].clusters == 12);  // 183 * 32 = 5,856 bytes
    const auto image = populated(t, l, p);
    const io::MemoryImage& img = *image;
    std::vector<std::byte> fat(4 * 12);
    img.read_at(std::uint64_t{l.fat_offset} * 512 + 4ull * l.root_first_cluster, fat);
    for (std::uint32_t i = 0; i < 12; ++i) {
        CHECK(core::load_le32(fat, 4 * i) == (i == 11 ? kFatEndOfChain : l.root_first_cluster + i + 1));
    }
    CHECK(bits_set(img, l) == l.used_clusters() + 11);
}

TEST_CASE("the analyzer leaves out what populate refuses: paths past 128 directories", "[exfat_populate]") {
    // 130 nested directories with a file at the bottom: populate refuses the
    // 129th directory (source::kMaxTreeDepth), so the prediction must count the
    // tree cut there.
    auto chain = [](std::uint32_t levels) {
        TreeBuilder b;
        std::uint32_t d = 0;
        for (std::uint32_t i = 0; i < levels; ++i) d = b.add(d, "d", true);
        b.add(d, "f", false, 5000);
        return b.done();
    };
    const source::SourceTree deep = chain(130);
    REQUIRE(deep.problems.size() == 1);
    CHECK(deep.problems[0].reason.find("lies 129 directories deep") == 0);
    source::SourceTree cut;
    {
        TreeBuilder b;
        std::uint32_t d = 0;
        for (std::uint32_t i = 0; i < source::kMaxTreeDepth; ++i) d = b.add(d, "d", true);
        cut = b.done();
    }
    REQUIRE(cut.problems.empty());
    for (const std::uint32_t c : {512u, 4096u}) {
        CHECK(analyzer_clusters(deep, c) == tree_usage(cut, c).new_clusters());
        CHECK(tree_usage(cut, c).new_clusters() == source::kMaxTreeDepth);  // one cluster per directory
    }
}

TEST_CASE("a reused device (not zeros) gets the same metadata and data as a fresh one", "[exfat_populate]") {
    TreeBuilder b;
    const auto d = b.add(0, "dir", true);
    for (int i = 0; i < 40; ++i)
        b.add(d, fmt::format("file number {:02d} with a long name.txt", i), false, 0);
    b.add(0, "empty", true);
    const source::SourceTree t = b.done();
    const Layout l = plan(8ull << 20, 4096);
    const PopulatePlan p = must_plan(t, l);
    FormatOptions fo;
    fo.volume_serial_number = 0xCAFE0001;
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    const auto fresh = populated(t, l, p, wo, fo);

    io::MemoryImage reused(std::vector<std::byte>(l.volume_bytes(), std::byte{0xA5}));
    fo.device_is_zeroed = false;
    format_volume(reused, l, fo);
    wo.device_is_zeroed = false;
    write_population(reused, l, t, p, wo);

    // Everything up to the end of the last used cluster is identical: boot
    // regions, FAT, bitmap, up-case table, directories (zero-filled to their end).
    const std::uint64_t end = l.cluster_offset(static_cast<std::uint32_t>(2 + p.used_clusters));
    std::vector<std::byte> a(end), c(end);
    fresh->read_at(0, a);
    reused.read_at(0, c);
    CHECK(a == c);
    CHECK(p.nodes[1].clusters == 2);  // dir: 40 x (2 + 3) entries = 6,400 bytes
}

TEST_CASE("attributes: read-only from the host mode, hidden with dot_hidden", "[exfat_populate]") {
    const fs::path dir = fs::temp_directory_path() / fmt::format("fsimg-exfat-attr-{}", ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir / ".config");
    std::ofstream(dir / ".profile") << "x";
    std::ofstream(dir / "ro.txt") << "y";
    fs::permissions(dir / "ro.txt", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    const source::SourceTree tree = scan_dir(dir);
    const Layout l = plan(8ull << 20, 4096);
    source::PopulateWriteOptions wo;
    wo.dot_hidden = true;
    const auto image = populated(tree, l, must_plan(tree, l), wo);
    const io::MemoryImage& img = *image;
    fs::remove_all(dir);
    std::vector<std::byte> root(4096);
    img.read_at(l.cluster_offset(l.root_first_cluster), root);
    // ".config" (3 entries), ".profile" (3), "ro.txt" (3) after the 3 system entries.
    CHECK(core::load_le16(root, 96 + 4) == (kFileAttrDirectory | kFileAttrHidden));
    CHECK(core::load_le16(root, 192 + 4) == (kFileAttrArchive | kFileAttrHidden));
    CHECK(core::load_le16(root, 288 + 4) == (kFileAttrArchive | kFileAttrReadOnly));
    CHECK(static_cast<unsigned>(root[384]) == 0);
}

TEST_CASE("the exFAT reader reads a populated tree back: checksums, hashes, lookups, data, bitmap",
          "[exfat_populate]") {
    const fs::path dir = fs::temp_directory_path() / fmt::format("fsimg-exfat-rt-{}", ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir / "Ünïcode dir" / "deeper");
    std::string big;
    for (int i = 0; i < 3000; ++i) big += fmt::format("{:08d}", i);  // 24,000 bytes: 47 clusters of 512 B
    std::ofstream(dir / "Ünïcode dir" / "deeper" / "big.bin", std::ios::binary) << big;
    std::ofstream(dir / (std::string(200, 'L') + ".txt")) << "long name";
    std::ofstream(dir / "empty");
    const source::SourceTree tree = scan_dir(dir);
    const Layout l = plan(4ull << 20, 512);
    const PopulatePlan p = must_plan(tree, l);
    const auto image = populated(tree, l, p);
    fs::remove_all(dir);

    const Volume v(*image);
    CHECK(!v.upcase_problem());
    CHECK(v.used_clusters() == p.used_clusters);
    // Every set in every directory: SetChecksum and NameHash as the reader recomputes them.
    std::vector<FileRecord> todo{v.root_record()};
    std::size_t sets = 0;
    while (!todo.empty()) {
        const FileRecord d = todo.back();
        todo.pop_back();
        const ParsedDirectory pd = v.read_directory(d);
        CHECK(pd.anomalies.empty());
        for (const FileRecord& r : pd.files) {
            ++sets;
            CHECK(r.checksum_ok());
            CHECK(r.name_hash_ok());
            CHECK(r.no_fat_chain() == (r.data_length > 0));
            if (r.is_directory()) {
                CHECK(r.data_length % 512 == 0);
                CHECK(r.valid_data_length == r.data_length);
                todo.push_back(r);
            }
        }
    }
    CHECK(sets == 5);  // Ünïcode dir, deeper, big.bin, the long name, empty
    const auto f = v.lookup("/ünïCODE DIR/DEEPER/BIG.BIN");  // up-case lookup
    REQUIRE(f);
    CHECK(f->data_length == 24000);
    std::string back;
    v.read_file(*f, [&](std::span<const std::byte> s) {
        back.append(reinterpret_cast<const char*>(s.data()), s.size());
    });
    CHECK(back == big);
    const auto longname = v.lookup("/" + std::string(200, 'l') + ".TXT");
    REQUIRE(longname);
    CHECK(longname->name16.size() == 204);
}
