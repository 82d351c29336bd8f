// Helpers shared by the commands that show what is inside a FAT image
// (ls, cat, extract, dump --what fat|dir|extents): opening, names, times;
// the name escaping, attribute letters, --what checks and extent printing
// serve exFAT too (volume_view.hpp, dump_exfat_view.cpp).
#pragma once

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// An image opened as a FAT volume (IMAGE or IMAGE@N).
struct FatImage {
    io::OpenedVolume opened;
    std::unique_ptr<fat::Volume> volume;
};
inline FatImage open_fat(const std::string& spec) {
    FatImage f;
    f.opened = io::open_volume(spec);
    f.volume = std::make_unique<fat::Volume>(f.opened.device());
    return f;
}

/// A name made safe for a terminal: control characters, DEL and backslash
/// escaped as \xNN / \\ (UTF-8 left as is).
inline std::string escape_name(std::string_view s) {
    std::string out;
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02x}", c);
        } else if (c == '\\') {
            out += "\\\\";
        } else {
            out.push_back(ch);
        }
    }
    return out;
}

/// "2024-05-01 12:34:56" from FAT date/time fields (local time of whoever
/// wrote them: FAT stores no zone); "-" when the date is 0 or invalid.
inline std::string fat_time_text(std::uint16_t date, std::uint16_t time, bool with_time = true) {
    const unsigned day = date & 0x1F, month = (date >> 5) & 0x0F, year = 1980 + (date >> 9);
    if (date == 0 || day == 0 || month == 0 || month > 12) return "-";
    if (!with_time) return fmt::format("{:04}-{:02}-{:02}", year, month, day);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", year, month, day, time >> 11,
                       (time >> 5) & 0x3F, (time & 0x1F) * 2);
}

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

/// dump --what fat | dir PATH | extents PATH (src/cli/dump_fat.cpp).
int dump_fat_view(const std::vector<std::string>& what, const std::string& image, bool json);

}  // namespace fsimg::cli
