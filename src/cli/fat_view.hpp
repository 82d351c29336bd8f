// Helpers shared by the commands that show what is inside a FAT image
// (ls, cat, extract, dump --what fat|dir|extents): opening, names, times.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

/// dump --what fat | dir PATH | extents PATH (src/cli/dump_fat.cpp).
int dump_fat_view(const std::vector<std::string>& what, const std::string& image, bool json);

}  // namespace fsimg::cli
