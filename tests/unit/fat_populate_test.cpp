#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/core/utf.hpp"
#include "fsimg/fat/cost.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/io/block_device.hpp"
#include "tree_builder.hpp"

using namespace fsimg;
using namespace fsimg::fat;
namespace fs = std::filesystem;

namespace {

Layout plan(std::uint64_t bytes, FatType type, std::uint32_t cluster) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.type = type;
    r.cluster_bytes = cluster;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

/// A tree built in memory with the FAT rules.
struct TreeBuilder : test::TreeBuilder {
    TreeBuilder() : test::TreeBuilder(&check_source_tree) {}
};

/// The cost model summed over a tree, node by node (independently of plan_population).
std::uint64_t predicted_clusters(const SourceTree& t, FatType type, std::uint32_t cb, bool label) {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
        const TreeNode& n = t.nodes[i];
        if (!n.is_dir) {
            sum += file_clusters(n.size, cb);
            continue;
        }
        std::uint64_t entries = 0;
        for (auto c : n.children) entries += name_entry_count(t.nodes[c].name16);
        if (i == 0) {
            if (type == FatType::fat32) sum += directory_clusters(entries + (label ? 1 : 0), cb);
        } else {
            sum += directory_clusters(subdirectory_entries(entries), cb);
        }
    }
    return sum;
}

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/fsimg-pop-test.XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(path); }
    void file(const std::string& rel, std::size_t size, unsigned seed = 1) {
        fs::create_directories((path / rel).parent_path());
        std::ofstream f(path / rel, std::ios::binary);
        for (std::size_t i = 0; i < size; ++i) f.put(static_cast<char>((i * 131 + seed * 7) % 251));
    }
};

std::vector<std::byte> read_cluster_bytes(const io::BlockDevice& d, const Layout& l, std::uint32_t first,
                                          std::uint64_t n) {
    std::vector<std::byte> out(n);
    d.read_at(l.cluster_offset(first), out);
    return out;
}

}  // namespace

TEST_CASE("check_source_tree lists every offender", "[fat_populate]") {
    TreeBuilder b;
    const auto d = b.add(0, "names", true);
    b.add(d, "CaseName.txt", false, 1);
    b.add(d, "casename.TXT", false, 1);
    b.add(d, "colon:name.txt", false, 1);
    b.add(d, "trailing dot.", false, 1);
    b.add(d, "fine.txt", false, 1);
    b.add(0, "huge.bin", false, (4ull << 30));
    b.add(0, "max.bin", false, (4ull << 30) - 1);
    std::uint32_t deep = 0;
    for (std::uint32_t i = 0; i < kMaxTreeDepth + 3; ++i) deep = b.add(deep, "d", true);
    const SourceTree t = b.done();
    std::vector<std::string> paths;
    for (const auto& p : t.problems) paths.push_back(p.path);
    CHECK(std::count(paths.begin(), paths.end(), "/names/casename.TXT") == 1);
    CHECK(std::count(paths.begin(), paths.end(), "/names/colon:name.txt") == 1);
    CHECK(std::count(paths.begin(), paths.end(), "/names/trailing dot.") == 1);
    CHECK(std::count(paths.begin(), paths.end(), "/huge.bin") == 1);
    CHECK(std::count(paths.begin(), paths.end(), "/max.bin") == 0);
    CHECK(std::count(paths.begin(), paths.end(), "/names/fine.txt") == 0);
    CHECK(t.problems.size() == 5);  // + one for the first too-deep directory
}

TEST_CASE("plan: used clusters equal the cost model, files contiguous", "[fat_populate]") {
    TreeBuilder b;
    // formats.md §5.5: data/ with 100 x 45 B long names, 10 x 5,000 B 8.3 names, 1 empty file.
    const auto data = b.add(0, "data", true);
    for (int i = 1; i <= 100; ++i) b.add(data, fmt::format("file_with_name_{:04d}.txt", i), false, 45);
    for (int i = 1; i <= 10; ++i) b.add(data, fmt::format("big_{:04d}.bin", i), false, 5000);
    b.add(data, "empty.txt", false, 0);
    const SourceTree t = b.done();
    REQUIRE(t.problems.empty());
    const Layout l = plan(512u << 20, FatType::fat32, 4096);
    auto v = plan_population(t, l, false);
    REQUIRE(std::holds_alternative<PopulatePlan>(v));
    const PopulatePlan& p = std::get<PopulatePlan>(v);
    // [EXP] mkfs.fat + mtools: 123 clusters for the tree, 1 root cluster -> fsck.fat reports 124.
    CHECK(p.used_clusters == 124);
    CHECK(p.used_clusters == predicted_clusters(t, FatType::fat32, 4096, false));
    CHECK(p.nodes[data].entries == 2 + 100 * 3 + 10 + 1);
    CHECK(p.nodes[data].clusters == 3);
    CHECK(p.next_free == 2 + 124);
    std::uint32_t expect = 2;
    for (auto i : p.allocation_order) {
        CHECK(p.nodes[i].first_cluster == expect);
        expect += p.nodes[i].clusters;
    }
    for (std::uint32_t c : t.nodes[data].children) {
        if (t.nodes[c].size == 0) CHECK(p.nodes[c].first_cluster == 0);
    }
}

TEST_CASE("plan refusals: full volume, FAT16 root capacity, 65,536 entries", "[fat_populate]") {
    SECTION("needed vs available") {
        TreeBuilder b;
        b.add(0, "a.bin", false, 30u << 20);
        const SourceTree t = b.done();
        const Layout l = plan(16u << 20, FatType::fat16, 2048);
        auto v = plan_population(t, l, false);
        REQUIRE(std::holds_alternative<std::vector<TreeProblem>>(v));
        const auto& probs = std::get<std::vector<TreeProblem>>(v);
        REQUIRE(probs.size() == 1);
        CHECK(probs[0].reason.find("needs 30 MiB") != std::string::npos);
    }
    SECTION("FAT16 root: LFN and label entries count") {
        TreeBuilder b;
        for (int i = 0; i < 255; ++i) b.add(0, fmt::format("Mixed{:03d}", i), false, 0);  // 2 entries each
        const SourceTree t = b.done();
        const Layout l = plan(16u << 20, FatType::fat16, 2048);
        CHECK(std::holds_alternative<PopulatePlan>(plan_population(t, l, true)));  // 510 + 1 label
        TreeBuilder b2 = b;
        b2.add(0, "Mixed999", false, 0);
        const SourceTree t2 = b2.done();
        CHECK(std::holds_alternative<PopulatePlan>(plan_population(t2, l, false)));             // 512
        CHECK(std::holds_alternative<std::vector<TreeProblem>>(plan_population(t2, l, true)));  // 513
    }
    SECTION("a directory of more than 65,536 entries") {
        TreeBuilder b;
        const auto d = b.add(0, "wide", true);
        for (int i = 0; i < 65534; ++i) b.add(d, fmt::format("f{:06d}", i), false, 0);
        const SourceTree ok = b.done();
        const Layout l = plan(64u << 20, FatType::fat32, 512);
        CHECK(std::holds_alternative<PopulatePlan>(plan_population(ok, l, false)));
        b.add(d, "one_more", false, 0);
        const SourceTree over = b.done();
        auto v = plan_population(over, l, false);
        REQUIRE(std::holds_alternative<std::vector<TreeProblem>>(v));
        CHECK(std::get<std::vector<TreeProblem>>(v)[0].path == "/wide");
    }
}

TEST_CASE("scan, plan and write a real tree; read it back", "[fat_populate]") {
    TempDir src;
    src.file("b/zeta.txt", 5000, 1);
    src.file("b/Alpha.TXT", 1, 2);
    src.file("a long name with spaces.data", 70000, 3);
    src.file("empty", 0);
    src.file("zeros.bin", 200000, 0);
    fs::create_directories(src.path / "emptydir");
    ::symlink("zeta.txt", (src.path / "b/link").c_str());
    ::chmod((src.path / "b/zeta.txt").c_str(), 0444);

    ScanOptions so;
    so.sources.push_back({src.path, "/"});
    so.sources.push_back({src.path / "b", "/copy/of/b"});
    SourceTree t = scan_tree(so);
    REQUIRE(t.problems.empty());
    CHECK(t.warnings.size() == 2);  // the symlink, seen through both sources
    CHECK(t.files == 7);
    // Children are sorted by UTF-8 bytes: upper case before lower case.
    const auto& root = t.nodes[0];
    std::vector<std::string> names;
    for (auto c : root.children) names.push_back(t.nodes[c].name);
    CHECK(names == std::vector<std::string>{"a long name with spaces.data", "b", "copy", "empty", "emptydir",
                                            "zeros.bin"});

    for (FatType type : {FatType::fat12, FatType::fat16, FatType::fat32}) {
        const std::uint32_t cb = type == FatType::fat16 ? 2048 : 512;
        const Layout l = type == FatType::fat12   ? plan(2u << 20, type, 512)
                         : type == FatType::fat16 ? plan(16u << 20, type, 2048)
                                                  : plan(40u << 20, type, 512);
        io::MemoryImage dev(l.volume_bytes());
        FormatOptions fo;
        fo.label = "POP";
        format_volume(dev, l, fo);
        auto v = plan_population(t, l, true);
        REQUIRE(std::holds_alternative<PopulatePlan>(v));
        const PopulatePlan& p = std::get<PopulatePlan>(v);
        CHECK(p.used_clusters == predicted_clusters(t, type, cb, true));
        WriteOptions wo;
        wo.clamp = 1700000000;
        write_population(dev, l, t, p, wo);

        // Count used FAT entries in both copies.
        for (std::uint32_t copy = 0; copy < 2; ++copy) {
            std::vector<std::byte> fat(l.fat_bytes());
            dev.read_at(l.first_fat_sector * 512 + copy * l.fat_bytes(), fat);
            std::uint32_t used = 0;
            for (std::uint32_t n = 2; n < l.cluster_count + 2; ++n) used += get_fat_entry(fat, type, n) != 0;
            CHECK(used == p.used_clusters);
            CHECK(get_fat_entry(fat, type, 0) == fat0_value(type, l.media));
        }
        if (type == FatType::fat32) {
            std::array<std::byte, 512> s{};
            dev.read_at(512, s);
            CHECK(decode_fsinfo(s).free_count == l.cluster_count - p.used_clusters);
            CHECK(decode_fsinfo(s).next_free == 2 + p.used_clusters);
        }
        // Every file's data is where the plan put it.
        for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
            const TreeNode& n = t.nodes[i];
            if (n.is_dir || n.size == 0) continue;
            auto got = read_cluster_bytes(dev, l, p.nodes[i].first_cluster, n.size);
            std::ifstream f(n.host_path, std::ios::binary);
            std::vector<char> want(n.size);
            f.read(want.data(), static_cast<std::streamsize>(n.size));
            CHECK(std::memcmp(got.data(), want.data(), n.size) == 0);
        }
        // The read-only file and the LFN set of the long name.
        const auto b = root.children[1];
        for (auto c : t.nodes[b].children) {
            if (t.nodes[c].name == "zeta.txt") CHECK(t.nodes[c].read_only);
        }
        const auto lf = root.children[0];
        CHECK(p.nodes[lf].lfn);
        CHECK(short_name_dotted(p.nodes[lf].short_name) == "ALONGN~1.DAT");
    }
}

TEST_CASE("volume_bytes_for_tree gives a volume the tree fits", "[fat_populate]") {
    TreeBuilder b;
    const auto d = b.add(0, "pics", true);
    for (int i = 0; i < 40; ++i) b.add(d, fmt::format("IMG_{:04d}.JPG", i), false, 3'000'000 + i * 1000);
    const SourceTree t = b.done();
    for (std::optional<FatType> type : {std::optional<FatType>{}, std::optional<FatType>{FatType::fat32},
                                        std::optional<FatType>{FatType::fat16}}) {
        LayoutRequest base;
        base.type = type;
        auto v = volume_bytes_for_tree(t, base, false, 1 << 20);
        REQUIRE(std::holds_alternative<std::uint64_t>(v));
        LayoutRequest req = base;
        req.volume_bytes = std::get<std::uint64_t>(v);
        CHECK(req.volume_bytes % (1 << 20) == 0);
        auto l = plan_layout(req);
        REQUIRE(std::holds_alternative<Layout>(l));
        auto p = plan_population(t, std::get<Layout>(l), false);
        REQUIRE(std::holds_alternative<PopulatePlan>(p));
        const auto free = std::get<Layout>(l).cluster_count - std::get<PopulatePlan>(p).used_clusters;
        CHECK(std::uint64_t{free} * std::get<Layout>(l).cluster_bytes() >= (1u << 20));
        // Not wasteful: a volume 1/8 smaller would not hold it (outside a type minimum).
        if (!type || *type != FatType::fat32) CHECK(req.volume_bytes < t.data_bytes * 1.15 + (4 << 20));
    }
    LayoutRequest fat12;
    fat12.type = FatType::fat12;
    fat12.cluster_bytes = 512;  // at most 4,084 clusters: 2 MiB
    CHECK(std::holds_alternative<LayoutRefusal>(volume_bytes_for_tree(t, fat12, false, 0)));
}

TEST_CASE("rename_for_fat: safe, unique ignoring case, deterministic", "[fat_populate]") {
    TreeBuilder b;
    const auto d = b.add(0, "names", true);
    for (const char* n : {"CaseName.txt", "casename.TXT", "a:b", "a_b", "A_B~2", "trailing.", "ok"})
        b.add(d, n, false, 1);
    rename_for_fat(b.t);
    const SourceTree t = b.done();
    CHECK(t.problems.empty());
    std::vector<std::string> names;
    for (auto c : t.nodes[d].children) names.push_back(t.nodes[c].name);
    // Kept: A_B~2, CaseName.txt, a_b, ok; renamed: casename.TXT -> ~2, a:b -> a_b~3 (a_b, A_B~2 taken),
    // trailing.
    CHECK(names == std::vector<std::string>{"A_B~2", "CaseName.txt", "a_b", "a_b~3", "casename~2.TXT", "ok",
                                            "trailing_"});
    REQUIRE(t.renamed.size() == 3);
    // In the directory's order (here insertion order; scan_tree sorts first).
    CHECK(t.renamed[0].second == "/names/casename~2.TXT");
    CHECK(t.renamed[1] == std::pair<std::string, std::string>{"/names/a:b", "/names/a_b~3"});
    CHECK(t.renamed[2].second == "/names/trailing_");
}
