// core/cluster_runs.hpp and core/entry_span.hpp: the next-fit free-cluster search, the chain
// links and the one-write rename span both editors use.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "fsimg/core/cluster_runs.hpp"
#include "fsimg/core/entry_span.hpp"

namespace {

struct Run {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
};

/// '.' free, 'x' used; cluster 2 is the first character.
std::vector<std::pair<std::uint32_t, std::uint32_t>> search(const std::string& map, std::uint64_t n,
                                                            std::uint32_t near, std::uint64_t* seen = nullptr,
                                                            bool skip = false) {
    std::uint64_t free_seen = 0;
    const auto free = [&](std::uint32_t c) { return map.at(c - 2) == '.'; };
    const auto used_span = [&](std::uint32_t c) -> std::uint64_t {
        if (!skip) return 0;
        std::uint64_t k = 0;
        while (c - 2 + k < map.size() && map[c - 2 + k] == 'x') ++k;
        return k;
    };
    const auto runs = fsimg::core::find_free_runs<Run>(n, near, 2, static_cast<std::uint32_t>(map.size() + 1),
                                                       free, used_span, free_seen);
    if (seen) *seen = free_seen;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    for (const Run& r : runs) out.emplace_back(r.first, r.count);
    return out;
}

}  // namespace

TEST_CASE("find_free_runs: one run next-fit, else fragments from near, else nothing", "[cluster_runs]") {
    using V = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
    for (const bool skip : {false, true}) {
        INFO("used_span " << skip);
        //            2345678901234
        const std::string map = "xx..x...xx.xx";
        CHECK(search(map, 3, 2, nullptr, skip) == V{{7, 3}});    // the 2-cluster gap at 4 is passed over
        CHECK(search(map, 1, 11, nullptr, skip) == V{{12, 1}});  // next-fit from near
        CHECK(search(map, 2, 11, nullptr, skip) == V{{4, 2}});   // wraps to the start for a run
        CHECK(search(map, 6, 2, nullptr, skip) == V{{4, 2}, {7, 3}, {12, 1}});  // only fragments
        CHECK(search(map, 6, 8, nullptr, skip) == V{{8, 2}, {12, 1}, {4, 2}, {7, 1}});
        std::uint64_t seen = 0;
        CHECK(search(map, 7, 2, &seen, skip).empty());  // 6 free: not enough
        CHECK(seen == 6);
        CHECK(search(map, 0, 2, nullptr, skip).empty());
        CHECK(search(map, 1, 999, nullptr, skip) == V{{4, 1}});  // a near outside the volume starts at 2
    }
}

TEST_CASE("chain_links: each cluster to the next, across runs, the last to the end mark", "[cluster_runs]") {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
    fsimg::core::chain_links(std::vector<Run>{{5, 2}, {9, 1}, {20, 2}}, 0xFFFFFFFFu,
                             [&](std::uint32_t c, std::uint32_t next) { links.emplace_back(c, next); });
    CHECK(links == std::vector<std::pair<std::uint32_t, std::uint32_t>>{
                       {5, 6}, {6, 9}, {9, 20}, {20, 21}, {21, 0xFFFFFFFFu}});
}

TEST_CASE("place_in_one_span: the renamed set where old and new fit one consecutive span", "[cluster_runs]") {
    // Entries by first byte: 'A' in use, 0xE5 free (the old set, marked), 0 end; 4 entries per "cluster".
    const auto dir = [](std::initializer_list<int> types) {
        std::vector<std::byte> d;
        for (const int t : types) {
            d.push_back(static_cast<std::byte>(t));
            d.insert(d.end(), 31, std::byte{0});
        }
        return d;
    };
    const std::vector<std::byte> set(3 * 32, std::byte{'N'});
    const auto is_free = [](std::uint8_t b) { return b == 0xE5; };
    {
        std::vector<std::byte> d = dir({'A', 0xE5, 0xE5, 'A', 'A', 0, 0, 0});
        const auto all = [](std::uint32_t, std::uint32_t) { return true; };
        const auto s = fsimg::core::place_in_one_span(d, 5, 1, 3, set, is_free, all);
        REQUIRE(s);
        CHECK(
            (s->at == 5 && s->lo == 1 && s->hi == 8));  // past the end: 1..2 freed and 5..7 written together
        CHECK(d[5 * 32] == std::byte{'N'});
    }
    {
        // Clusters 0..3 and 4..7 not adjacent: no span holds both the old set and the new one.
        std::vector<std::byte> d = dir({'A', 0xE5, 0xE5, 'A', 'A', 0, 0, 0});
        const auto split = [](std::uint32_t lo, std::uint32_t n) { return lo / 4 == (lo + n - 1) / 4; };
        const std::vector<std::byte> before = d;
        CHECK_FALSE(fsimg::core::place_in_one_span(d, 5, 1, 3, set, is_free, split));
        CHECK(d == before);
        // A set of two fits where the old one was.
        const std::vector<std::byte> two(2 * 32, std::byte{'M'});
        const auto s = fsimg::core::place_in_one_span(d, 5, 1, 3, two, is_free, split);
        REQUIRE(s);
        CHECK((s->at == 1 && s->lo == 1 && s->hi == 3));
    }
}
