// Helpers shared by the commands that show what is inside an image (ls,
// extract, dump --what fat|dir|extents): name escaping, attribute letters,
// --what checks and extent printing (FAT and exFAT alike).
#pragma once

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// A name made safe for a terminal (core/text.hpp).
using core::escape_name;

/// "DRHSA" letters, '-' for bits not set (directory, read-only, hidden, system, archive).
inline std::string attr_text(std::uint8_t a) {
    std::string s = "-----";
    if (a & fat::kAttrDirectory) s[0] = 'd';
    if (a & fat::kAttrReadOnly) s[1] = 'r';
    if (a & fat::kAttrHidden) s[2] = 'h';
    if (a & fat::kAttrSystem) s[3] = 's';
    if (a & fat::kAttrArchive) s[4] = 'a';
    return s;
}

/// dump --what extents: a file's cluster runs (any type with first/count) as
/// JSON objects or text lines, with their byte offsets in the volume (`v`
/// provides cluster_offset and cluster_bytes).
template <typename Volume, typename Runs>
nlohmann::json extent_runs_json(const Volume& v, const Runs& runs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& run : runs) {
        a.push_back({{"first", run.first},
                     {"count", run.count},
                     {"byte_offset", v.cluster_offset(run.first)},
                     {"bytes", std::uint64_t(run.count) * v.cluster_bytes()}});
    }
    return a;
}
template <typename Volume, typename Runs>
void print_extent_runs(const Volume& v, const Runs& runs) {
    for (const auto& run : runs) {
        fmt::print("  clusters {:>9}..{:<9} ({:>6})  bytes {}..{}\n", run.first, run.first + run.count - 1,
                   run.count, v.cluster_offset(run.first),
                   v.cluster_offset(run.first) + std::uint64_t(run.count) * v.cluster_bytes() - 1);
    }
}

/// Checks the operands of dump --what KIND [PATH] for a filesystem whose
/// whole-volume view is `whole` ("fat" for FAT, "bitmap" for exFAT): dir and
/// extents need a PATH, `whole` takes none, `other` (the other filesystem's
/// view) is refused saying `why`. Throws Error(usage).
inline void check_view_what(const std::vector<std::string>& what, std::string_view whole,
                            std::string_view other, std::string_view why) {
    const std::string& kind = what.at(0);
    if (kind == other) throw Error(ErrorCode::usage, fmt::format("--what {}: {}", kind, why));
    if (kind != whole && kind != "dir" && kind != "extents") {
        throw Error(ErrorCode::usage,
                    fmt::format("--what {}: expected boot, {}, dir PATH or extents PATH", kind, whole));
    }
    if (kind == whole && what.size() != 1)
        throw Error(ErrorCode::usage, fmt::format("--what {} takes no PATH", kind));
    if (kind != whole && what.size() != 2) {
        throw Error(ErrorCode::usage, fmt::format("--what {} needs a PATH inside the image", kind));
    }
}

/// dump --what fat | dir PATH | extents PATH of the FAT volume on `volume`
/// (src/cli/dump_fat.cpp).
int dump_fat_view(const std::vector<std::string>& what, const std::string& image,
                  const io::BlockDevice& volume, bool json);

}  // namespace fsimg::cli
