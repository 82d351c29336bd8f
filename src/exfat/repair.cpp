#include "fsimg/exfat/repair.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

#include "fsimg/core/bytes.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

std::vector<check::Repair> repair_volume(io::BlockDevice& dev, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options) {
    std::vector<check::Repair> done;
    std::array<std::byte, 512> s{};
    if (dev.size() < s.size()) return done;
    dev.read_at(0, s);
    if (std::memcmp(s.data() + off::FileSystemName, "EXFAT   ", 8) != 0) return done;
    const check::RepairPlan plan = check::plan_repairs(found, options.level);
    const std::set<std::string_view>& codes = plan.codes;
    const bool errors_left = plan.errors_left;
    const bool dirty = codes.count("exfat.boot.dirty") != 0;
    const bool percent =
        codes.count("exfat.boot.percent_in_use") || codes.count("exfat.bitmap.percent-in-use");
    std::uint16_t flags = core::load_le16(s, off::VolumeFlags);
    auto write_flags = [&](std::uint16_t v) {
        std::array<std::byte, 2> b{};
        core::store_le16(b, 0, v);
        dev.write_at(off::VolumeFlags, b);
        flags = v;
    };
    // 1. VolumeDirty set before the first repair.
    bool marked = false;
    if (percent && !dirty) {
        write_flags(flags | kVolumeFlagVolumeDirty);
        marked = true;
    }
    if (percent && summary.cluster_count > 0) {
        const auto pct = static_cast<std::uint8_t>(summary.marked_clusters * 100 / summary.cluster_count);
        const auto was = static_cast<unsigned>(s[off::PercentInUse]);
        const std::array<std::byte, 1> b{static_cast<std::byte>(pct)};
        dev.write_at(off::PercentInUse, b);
        done.push_back({codes.count("exfat.boot.percent_in_use") ? "exfat.boot.percent_in_use"
                                                                 : "exfat.bitmap.percent-in-use",
                        fmt::format("PercentInUse set to {} (it said {})", unsigned(pct), was)});
    }
    // 2. Clean last, after a barrier; only when nothing wrong is left.
    if ((dirty || marked) && !errors_left) {
        if (options.barrier) options.barrier();
        write_flags(static_cast<std::uint16_t>(flags & ~kVolumeFlagVolumeDirty));
        if (dirty) done.push_back({"exfat.boot.dirty", "VolumeDirty cleared: the volume is marked clean"});
    }
    return done;
}

}  // namespace fsimg::exfat
