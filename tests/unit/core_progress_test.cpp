#include "fsimg/core/progress.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

using fsimg::core::Progress;
using fsimg::core::ProgressState;
using fsimg::core::ProgressUnit;
using fsimg::core::render_progress_line;

TEST_CASE("render_progress_line with a total: bar, percent, amounts, rate, ETA") {
    ProgressState s{"copying files", ProgressUnit::bytes, 118u << 20, 236u << 20, 2.0, false};
    // 59 MiB/s, 118 MiB left: ETA 2 s.
    CHECK(render_progress_line(s, 100) ==
          "copying files [###############...............]  50%  118 MiB / 236 MiB  59 MiB/s  ETA 0:02");
    s.finished = true;
    s.done = s.total;
    s.elapsed_seconds = 4;
    CHECK(render_progress_line(s, 100) ==
          "copying files [##############################] 100%  236 MiB / 236 MiB  59 MiB/s  0:04");
}

TEST_CASE("render_progress_line without a total: count and rate, no bar, no ETA") {
    ProgressState s{"walking the tree", ProgressUnit::items, 120301, 0, 3.0, false};
    CHECK(render_progress_line(s, 80) == "walking the tree  120,301 items  40,100 items/s");
    s.elapsed_seconds = 0.1;  // too early for a rate
    CHECK(render_progress_line(s, 80) == "walking the tree  120,301 items");
}

TEST_CASE("render_progress_line: done past an estimated total is shown as the total; long ETAs in hours") {
    ProgressState s{"checking", ProgressUnit::items, 150, 100, 1.0, false};
    CHECK(render_progress_line(s, 60).find("100%  100 / 100") != std::string::npos);
    s = {"checking", ProgressUnit::items, 1, 10000, 1.0, false};
    CHECK(render_progress_line(s, 120).find("ETA 2:46:39") != std::string::npos);
}

TEST_CASE("render_progress_line fits the width: the bar shrinks, goes, then the phase is cut") {
    ProgressState s{"copying files", ProgressUnit::bytes, 118u << 20, 236u << 20, 2.0, false};
    for (unsigned width : {100u, 80u, 70u, 60u, 50u, 40u, 20u, 5u}) {
        INFO(width);
        CHECK(render_progress_line(s, width).size() <= width);
    }
    const std::string w70 = render_progress_line(s, 70);
    CHECK(w70.find('[') != std::string::npos);
    CHECK(render_progress_line(s, 60).find('[') == std::string::npos);  // no room for 10 columns of bar
}

TEST_CASE("Progress: a snapshot at begin and at end, none in between when the interval is long") {
    std::vector<ProgressState> got;
    Progress p([&](const ProgressState& s) { got.push_back(s); }, std::chrono::hours(1));
    p.begin("copying files", 1000, ProgressUnit::items);
    for (int i = 0; i < 1000; ++i) p.advance(1);
    p.end();
    p.end();  // a second end is a no-op
    REQUIRE(got.size() == 2);
    CHECK(got[0].done == 0);
    CHECK_FALSE(got[0].finished);
    CHECK(got[1].done == 1000);
    CHECK(got[1].finished);
    CHECK(got[1].phase == "copying files");
}

TEST_CASE("Progress: with no interval, a snapshot every 64 calls; begin ends the previous phase") {
    std::vector<ProgressState> got;
    Progress p([&](const ProgressState& s) { got.push_back(s); }, std::chrono::milliseconds(0));
    p.begin("a", 0, ProgressUnit::items);
    for (int i = 0; i < 128; ++i) p.advance(1);
    REQUIRE(got.size() == 3);  // begin, after 64, after 128
    CHECK(got[1].done == 64);
    CHECK(got[2].done == 128);
    p.begin("b", 10, ProgressUnit::bytes);  // ends "a" first
    REQUIRE(got.size() == 5);
    CHECK(got[3].phase == "a");
    CHECK(got[3].finished);
    CHECK(got[4].phase == "b");
    CHECK(got[4].done == 0);
    // 1 MiB of bytes in one call also triggers a snapshot.
    p.advance(1u << 20);
    CHECK(got.size() == 6);
    p.advance(5);  // without a begin/after end nothing is counted
    p.end();
    p.advance(5);
    CHECK(got.back().done == (1u << 20) + 5);
}
