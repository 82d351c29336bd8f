// fs::write_safety: which findings of a check refuse a change, which warn,
// which are routine (fs/edit.hpp).
#include <catch2/catch.hpp>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/fs/edit.hpp"

using namespace fsimg;

namespace {

std::vector<std::string_view> codes(const std::vector<const check::Finding*>& v) {
    std::vector<std::string_view> out;
    for (const auto* f : v) out.push_back(f->code);
    return out;
}

}  // namespace

TEST_CASE("write_safety: ownership damage refuses, other errors warn, flags and counts are routine",
          "[fs][edit]") {
    check::Summary complete;
    complete.complete = true;
    check::Findings f;
    f.add("fat.boot.dirty", {}, "dirty");                // routine: a crash leaves it
    f.add("fat.fsinfo.free-count", {}, "count");         // routine: every change rewrites it
    f.add("fat.chain.lost", {}, "lost");                 // elsewhere: allocated, owned by nothing
    f.add("fat.lfn.checksum", {}, "lfn");                // elsewhere: a name
    f.add("fat.chain.cross-link", {}, "shared");         // unsafe: rm would free the other's clusters
    f.add("exfat.bitmap.free-in-use", {}, "clear bit");  // unsafe: cp would allocate a used cluster
    f.add("fat.boot.backup-boot-code", {}, "note");      // a note: nothing
    const auto w = fs::write_safety(f, complete);
    CHECK(codes(w.unsafe) ==
          std::vector<std::string_view>{"fat.chain.cross-link", "exfat.bitmap.free-in-use"});
    CHECK(codes(w.elsewhere) == std::vector<std::string_view>{"fat.chain.lost", "fat.lfn.checksum"});
    CHECK_FALSE(w.safe());

    check::Findings lost_only;
    lost_only.add("fat.chain.lost", {}, "lost");
    CHECK(fs::write_safety(lost_only, complete).safe());
    // A check that did not finish: who owns each cluster is unknown.
    check::Summary partial;
    partial.complete = false;
    const auto p = fs::write_safety(lost_only, partial);
    CHECK(p.incomplete);
    CHECK_FALSE(p.safe());
    // Every fatal finding refuses, whatever its code.
    check::Findings fatal;
    fatal.add("fat.boot.geometry", {}, "no geometry");
    CHECK(codes(fs::write_safety(fatal, complete).unsafe) ==
          std::vector<std::string_view>{"fat.boot.geometry"});
}
