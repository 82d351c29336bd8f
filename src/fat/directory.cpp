#include "fsimg/fat/directory.hpp"

#include "fsimg/exfat/structs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/utf.hpp"

namespace fsimg::fat {

namespace {

// Code page 850, bytes 0x80..0xFF (generated from Python's cp850 codec).
constexpr std::array<char16_t, 128> kCp850 = {
    0x00C7, 0x00FC, 0x00E9, 0x00E2, 0x00E4, 0x00E0, 0x00E5, 0x00E7, 0x00EA, 0x00EB, 0x00E8, 0x00EF, 0x00EE,
    0x00EC, 0x00C4, 0x00C5, 0x00C9, 0x00E6, 0x00C6, 0x00F4, 0x00F6, 0x00F2, 0x00FB, 0x00F9, 0x00FF, 0x00D6,
    0x00DC, 0x00F8, 0x00A3, 0x00D8, 0x00D7, 0x0192, 0x00E1, 0x00ED, 0x00F3, 0x00FA, 0x00F1, 0x00D1, 0x00AA,
    0x00BA, 0x00BF, 0x00AE, 0x00AC, 0x00BD, 0x00BC, 0x00A1, 0x00AB, 0x00BB, 0x2591, 0x2592, 0x2593, 0x2502,
    0x2524, 0x00C1, 0x00C2, 0x00C0, 0x00A9, 0x2563, 0x2551, 0x2557, 0x255D, 0x00A2, 0x00A5, 0x2510, 0x2514,
    0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x00E3, 0x00C3, 0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550,
    0x256C, 0x00A4, 0x00F0, 0x00D0, 0x00CA, 0x00CB, 0x00C8, 0x0131, 0x00CD, 0x00CE, 0x00CF, 0x2518, 0x250C,
    0x2588, 0x2584, 0x00A6, 0x00CC, 0x2580, 0x00D3, 0x00DF, 0x00D4, 0x00D2, 0x00F5, 0x00D5, 0x00B5, 0x00FE,
    0x00DE, 0x00DA, 0x00DB, 0x00D9, 0x00FD, 0x00DD, 0x00AF, 0x00B4, 0x00AD, 0x00B1, 0x2017, 0x00BE, 0x00B6,
    0x00A7, 0x00F7, 0x00B8, 0x00B0, 0x00A8, 0x00B7, 0x00B9, 0x00B3, 0x00B2, 0x25A0, 0x00A0};

// Code page 437, bytes 0x80..0xFF (generated from Python's cp437 codec).
constexpr std::array<char16_t, 128> kCp437 = {
    0x00C7, 0x00FC, 0x00E9, 0x00E2, 0x00E4, 0x00E0, 0x00E5, 0x00E7, 0x00EA, 0x00EB, 0x00E8, 0x00EF, 0x00EE,
    0x00EC, 0x00C4, 0x00C5, 0x00C9, 0x00E6, 0x00C6, 0x00F4, 0x00F6, 0x00F2, 0x00FB, 0x00F9, 0x00FF, 0x00D6,
    0x00DC, 0x00A2, 0x00A3, 0x00A5, 0x20A7, 0x0192, 0x00E1, 0x00ED, 0x00F3, 0x00FA, 0x00F1, 0x00D1, 0x00AA,
    0x00BA, 0x00BF, 0x2310, 0x00AC, 0x00BD, 0x00BC, 0x00A1, 0x00AB, 0x00BB, 0x2591, 0x2592, 0x2593, 0x2502,
    0x2524, 0x2561, 0x2562, 0x2556, 0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510, 0x2514,
    0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x255E, 0x255F, 0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550,
    0x256C, 0x2567, 0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256B, 0x256A, 0x2518, 0x250C,
    0x2588, 0x2584, 0x258C, 0x2590, 0x2580, 0x03B1, 0x00DF, 0x0393, 0x03C0, 0x03A3, 0x03C3, 0x00B5, 0x03C4,
    0x03A6, 0x0398, 0x03A9, 0x03B4, 0x221E, 0x03C6, 0x03B5, 0x2229, 0x2261, 0x00B1, 0x2265, 0x2264, 0x2320,
    0x2321, 0x00F7, 0x2248, 0x00B0, 0x2219, 0x00B7, 0x221A, 0x207F, 0x00B2, 0x25A0, 0x00A0};

// The code page in use: one per process, chosen once by the command line.
OemCodePage g_code_page = OemCodePage::cp850;

char16_t oem_char(std::uint8_t b) {
    if (b < 0x80) return char16_t(b);
    return g_code_page == OemCodePage::cp437 ? kCp437[b - 0x80] : kCp850[b - 0x80];
}

std::u16string oem_part(const std::uint8_t* p, std::size_t n, bool lower) {
    std::size_t len = n;
    while (len > 0 && p[len - 1] == ' ') --len;
    std::u16string out;
    for (std::size_t i = 0; i < len; ++i) {
        const std::uint8_t b = p[i];
        char16_t c = oem_char(b);
        if (lower && c >= u'A' && c <= u'Z') c = char16_t(c + 32);
        out.push_back(c);
    }
    return out;
}

}  // namespace

void set_oem_code_page(OemCodePage cp) { g_code_page = cp; }
OemCodePage oem_code_page() { return g_code_page; }

std::string oem_text(std::string_view bytes) {
    std::u16string out;
    for (const char ch : bytes) {
        const auto b = static_cast<std::uint8_t>(ch);
        out.push_back(oem_char(b));
    }
    return core::utf16_to_utf8_lossy(out);
}

namespace {

bool is_dot_name(const std::array<std::uint8_t, 11>& n, std::size_t dots) {
    for (std::size_t i = 0; i < 11; ++i) {
        if (n[i] != (i < dots ? '.' : ' ')) return false;
    }
    return true;
}

// Decodes one code point from UTF-8 at i (advancing i); -1 on invalid.
long next_code_point(std::string_view s, std::size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    const int len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
    if (len == 0 || i + std::size_t(len) > s.size()) return -1;
    long cp = b0 & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + std::size_t(k)]);
        if ((b & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (b & 0x3F);
    }
    i += std::size_t(len);
    return cp;
}

void append_utf8(std::string& out, long cp) {
    if (cp < 0x80) {
        out.push_back(char(cp));
    } else if (cp < 0x800) {
        out.push_back(char(0xC0 | (cp >> 6)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(char(0xE0 | (cp >> 12)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(char(0xF0 | (cp >> 18)));
        out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    }
}

long upcase(long c, bool ascii_only) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (ascii_only || c < 0x80 || c > 0xFFFF) return c;
    // The up-case table Microsoft publishes (exFAT's recommended one), as
    // case_fold_key folds names for mkfs and the editors (a unit outside the
    // BMP, a surrogate pair in UTF-16, is compared as it is).
    return exfat::recommended_upcase_map()[static_cast<std::size_t>(c)];
}

}  // namespace

std::array<char16_t, 13> lfn_units(DirEntrySpan e) noexcept {
    std::array<char16_t, 13> u{};
    constexpr std::size_t offs[13] = {1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30};
    for (std::size_t i = 0; i < 13; ++i) {
        u[i] = char16_t(std::uint16_t(e[offs[i]]) | std::uint16_t(std::uint16_t(e[offs[i] + 1]) << 8));
    }
    return u;
}

std::string short_name_display(const std::array<std::uint8_t, 11>& name, std::uint8_t nt_res,
                               bool apply_case) {
    std::array<std::uint8_t, 11> n = name;
    if (n[0] == 0x05) n[0] = 0xE5;
    std::u16string s = oem_part(n.data(), 8, apply_case && (nt_res & 0x08));
    const std::u16string ext = oem_part(n.data() + 8, 3, apply_case && (nt_res & 0x10));
    if (!ext.empty()) s += u'.' + ext;
    return core::utf16_to_utf8_lossy(s);
}

std::string fold_case(std::string_view s, bool ascii_only) {
    // ASCII first, byte by byte (most names are ASCII: fsck and the writers' check fold four keys
    // per entry); the rest from the first byte >= 0x80, code point by code point.
    std::string out(s);
    std::size_t i = 0;
    for (; i < out.size() && static_cast<unsigned char>(out[i]) < 0x80; ++i)
        if (out[i] >= 'a' && out[i] <= 'z') out[i] = static_cast<char>(out[i] - ('a' - 'A'));
    if (i == out.size()) return out;
    out.resize(i);
    while (i < s.size()) {
        const std::size_t at = i;
        const long cp = next_code_point(s, i);
        if (cp < 0) {
            out.push_back(s[at]);
            i = at + 1;
            continue;
        }
        append_utf8(out, upcase(cp, ascii_only));
    }
    return out;
}

ParsedDirectory parse_directory(std::span<const std::byte> bytes) {
    ParsedDirectory out;
    struct Pending {
        bool active = false;
        std::uint8_t count = 0;     // n from the first (0x40) entry
        std::uint8_t expected = 0;  // next ordinal expected
        std::uint8_t checksum = 0;
        std::uint32_t first_index = 0;
        std::array<char16_t, kMaxLfnEntries * 13> units{};
    } lfn;
    auto drop = [&](LfnAnomaly::Kind kind, std::uint32_t at) {
        if (lfn.active) {
            out.anomalies.push_back(
                LfnAnomaly{kind, at, std::uint32_t(lfn.count - lfn.expected), lfn.first_index});
        }
        lfn.active = false;
    };
    const std::size_t n = std::min<std::size_t>(bytes.size() / kDirEntrySize, kMaxDirEntries);
    for (std::size_t i = 0; i < n; ++i) {
        const auto idx = static_cast<std::uint32_t>(i);
        const DirEntrySpan e = bytes.subspan(i * kDirEntrySize).first<kDirEntrySize>();
        const auto first = static_cast<std::uint8_t>(e[0]);
        if (first == 0x00) {
            drop(LfnAnomaly::Kind::orphan, idx);
            out.end_marker = true;
            break;
        }
        out.entries_scanned = idx + 1;
        const auto attr = static_cast<std::uint8_t>(e[dir_off::Attr]);
        if (first == 0xE5) {
            // A deleted short entry: LFN entries still live before it are orphans.
            drop(LfnAnomaly::Kind::orphan, idx);
            continue;
        }
        if ((attr & 0x3F) == kAttrLongName) {
            const std::uint8_t ord = first & 0x1F;
            const auto checksum = static_cast<std::uint8_t>(e[13]);
            if (first & 0x40) {
                drop(LfnAnomaly::Kind::orphan, idx);
                if (ord == 0 || ord > kMaxLfnEntries || (first & 0x80)) {
                    out.anomalies.push_back(LfnAnomaly{LfnAnomaly::Kind::sequence, idx, 1, idx});
                    continue;
                }
                lfn.active = true;
                lfn.count = ord;
                lfn.expected = ord;
                lfn.checksum = checksum;
                lfn.first_index = idx;
            } else if (!lfn.active || ord != lfn.expected || checksum != lfn.checksum) {
                if (lfn.active) {
                    out.anomalies.push_back(LfnAnomaly{LfnAnomaly::Kind::sequence, idx,
                                                       std::uint32_t(lfn.count - lfn.expected + 1),
                                                       lfn.first_index});
                    lfn.active = false;
                } else {
                    out.anomalies.push_back(LfnAnomaly{LfnAnomaly::Kind::sequence, idx, 1, idx});
                }
                continue;
            }
            const auto u = lfn_units(e);
            std::copy(u.begin(), u.end(), lfn.units.begin() + (ord - 1) * 13);
            --lfn.expected;
            continue;
        }
        DirRecord r;
        r.entry = decode_dir_entry(e);
        r.index = idx;
        r.first_index = idx;
        if ((attr & (kAttrDirectory | kAttrVolumeId)) == (kAttrDirectory | kAttrVolumeId)) {
            r.kind = RecordKind::invalid_attr;
        } else if (attr & kAttrVolumeId) {
            r.kind = RecordKind::volume_label;
        } else if (is_dot_name(r.entry.name, 1)) {
            r.kind = RecordKind::dot;
        } else if (is_dot_name(r.entry.name, 2)) {
            r.kind = RecordKind::dotdot;
        } else {
            r.kind = (attr & kAttrDirectory) ? RecordKind::directory : RecordKind::file;
        }
        if (lfn.active) {
            if (lfn.expected != 0) {
                out.anomalies.push_back(LfnAnomaly{LfnAnomaly::Kind::sequence, idx,
                                                   std::uint32_t(lfn.count - lfn.expected), lfn.first_index});
            } else if (lfn.checksum != lfn_checksum(r.entry.name)) {
                out.anomalies.push_back(
                    LfnAnomaly{LfnAnomaly::Kind::checksum, idx, lfn.count, lfn.first_index});
            } else if (r.kind != RecordKind::volume_label) {
                const std::size_t total = std::size_t(lfn.count) * 13;
                const auto stop = lfn.units.begin() + long(total);
                const auto end = std::find(lfn.units.begin(), stop, u'\0');
                const std::size_t len = std::size_t(end - lfn.units.begin());
                // After the terminator the name is padded with 0xFFFF [FATGEN
                // "Long File Name Implementation"].
                r.lfn_padding_bad =
                    end != stop && std::any_of(end + 1, stop, [](char16_t u) { return u != 0xFFFF; });
                r.long_name.assign(lfn.units.begin(), lfn.units.begin() + long(len));
                r.has_long_name = true;
                r.first_index = lfn.first_index;
            }
            lfn.active = false;
        }
        r.short_name_raw = short_name_display(r.entry.name);
        r.short_name = short_name_display(r.entry.name, r.entry.nt_res, true);
        r.name = r.has_long_name ? core::utf16_to_utf8_lossy(r.long_name) : r.short_name;
        out.records.push_back(std::move(r));
    }
    if (!out.end_marker) drop(LfnAnomaly::Kind::orphan, out.entries_scanned);
    if (out.end_marker) {
        // The entries after the marker, with every 0x00 entry taken for a free
        // (deleted) one, as the Linux driver reads them. The copy is made only
        // when something stands there.
        const std::size_t start = std::size_t(out.entries_scanned) + 1;
        for (std::size_t i = start; i < n; ++i) {
            const auto b = static_cast<std::uint8_t>(bytes[i * kDirEntrySize]);
            if (b == 0x00 || b == 0xE5) continue;
            if (out.after_end_entries++ == 0) out.after_end_first = static_cast<std::uint32_t>(i);
        }
        if (out.after_end_entries != 0) {
            std::vector<std::byte> rest(bytes.begin() + static_cast<std::ptrdiff_t>(start * kDirEntrySize),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(n * kDirEntrySize));
            for (std::size_t i = 0; i < rest.size(); i += kDirEntrySize) {
                if (rest[i] == std::byte{0x00}) rest[i] = std::byte{0xE5};
            }
            ParsedDirectory tail = parse_directory(rest);  // no 0x00 entry: no further tail
            const auto shift = static_cast<std::uint32_t>(start);
            for (auto& r : tail.records) {
                r.index += shift;
                r.first_index += shift;
                out.after_end.push_back(std::move(r));
            }
            for (auto a : tail.anomalies) {
                a.index += shift;
                a.first += shift;
                out.after_end_anomalies.push_back(a);
            }
        }
    }
    return out;
}

std::optional<core::CivilTime> decode_timestamp(std::uint16_t date, std::uint16_t time) noexcept {
    const unsigned day = date & 0x1F, month = (date >> 5) & 0x0F;
    if (date == 0 || day == 0 || month == 0 || month > 12) return std::nullopt;
    core::CivilTime t;
    t.year = 1980 + (date >> 9);
    t.month = month;
    t.day = day;
    t.hour = time >> 11;
    t.minute = (time >> 5) & 0x3F;
    t.second = (time & 0x1F) * 2;
    return t;
}

std::string timestamp_problem(std::uint16_t date, std::uint16_t time, bool with_time, std::uint8_t tenth) {
    if (date == 0) return {};
    std::string out;
    const auto add = [&](const char* what, unsigned v) {
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", what, v);
    };
    const unsigned day = date & 0x1F, month = (date >> 5) & 0x0F;
    if (day == 0) add("day", day);
    if (month == 0 || month > 12) add("month", month);
    if (with_time) {
        if ((time >> 11) > 23) add("hour", time >> 11);
        if (((time >> 5) & 0x3F) > 59) add("minute", (time >> 5) & 0x3F);
        if ((time & 0x1F) > 29) add("two-second count", time & 0x1F);
        if (tenth > 199) add("tenths", tenth);
    }
    return out;
}

std::string timestamp_text(std::uint16_t date, std::uint16_t time, bool with_time, std::uint8_t tenth) {
    if (date == 0) return "-";
    auto t = decode_timestamp(date, time);
    if (!t || !timestamp_problem(date, time, with_time, tenth).empty()) {
        return with_time ? fmt::format("invalid (date 0x{:04X}, time 0x{:04X})", date, time)
                         : fmt::format("invalid (date 0x{:04X})", date);
    }
    if (!with_time) return fmt::format("{:04}-{:02}-{:02}", t->year, t->month, t->day);
    t->second += tenth / 100;  // DIR_CrtTimeTenth 100..199: the odd second
    return core::format_civil(*t);
}

}  // namespace fsimg::fat
