#include "fsimg/core/utf.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "fsimg/core/error.hpp"

namespace fsimg::core {

namespace {

struct Decoded {
    char32_t cp = 0;
    std::size_t length = 0;       ///< bytes consumed when valid
    const char* error = nullptr;  ///< why the sequence at this offset is invalid
};

bool is_cont(unsigned char c) noexcept { return (c & 0xC0) == 0x80; }

/// Decodes one UTF-8 sequence at `i` (i < s.size()).
Decoded decode_one(std::string_view s, std::size_t i) noexcept {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return {b0, 1, nullptr};
    std::size_t len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    } else if (b0 == 0xC0 || b0 == 0xC1) {
        return {0, 0, "overlong encoding"};
    } else if (is_cont(b0)) {
        return {0, 0, "unexpected continuation byte"};
    } else {
        return {0, 0, "invalid lead byte"};
    }
    for (std::size_t k = 1; k < len; ++k) {
        if (i + k >= s.size()) return {0, 0, "truncated sequence"};
        const auto b = static_cast<unsigned char>(s[i + k]);
        if (!is_cont(b)) return {0, 0, "missing continuation byte"};
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min) return {0, 0, "overlong encoding"};
    if (cp >= 0xD800 && cp <= 0xDFFF) return {0, 0, "encoded surrogate code point"};
    if (cp > 0x10FFFF) return {0, 0, "code point above U+10FFFF"};
    return {cp, len, nullptr};
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

/// UTF-16 -> UTF-8; on an unpaired surrogate throws (lossy=false) or writes U+FFFD.
std::string to_utf8(std::u16string_view in, bool lossy) {
    std::string out;
    // Most names are ASCII: one byte per unit, no per-character append.
    if (std::all_of(in.begin(), in.end(), [](char16_t u) { return u < 0x80; })) {
        out.resize(in.size());
        std::transform(in.begin(), in.end(), out.begin(), [](char16_t u) { return static_cast<char>(u); });
        return out;
    }
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        const char16_t u = in[i];
        if (u < 0xD800 || u > 0xDFFF) {
            append_utf8(out, u);
            continue;
        }
        if (u <= 0xDBFF && i + 1 < in.size() && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
            append_utf8(out, 0x10000 + ((static_cast<char32_t>(u - 0xD800) << 10) | (in[i + 1] - 0xDC00)));
            ++i;
            continue;
        }
        if (!lossy) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("invalid UTF-16: unpaired {} surrogate 0x{:04X} at code unit {}",
                                    u <= 0xDBFF ? "high" : "low", static_cast<unsigned>(u), i));
        }
        append_utf8(out, 0xFFFD);
    }
    return out;
}

}  // namespace

std::u16string utf8_to_utf16(std::string_view utf8) {
    std::u16string out;
    out.reserve(utf8.size());
    for (std::size_t i = 0; i < utf8.size();) {
        const Decoded d = decode_one(utf8, i);
        if (d.error != nullptr) {
            throw Error(ErrorCode::usage, fmt::format("invalid UTF-8 at byte offset {} (byte 0x{:02X}): {}",
                                                      i, static_cast<unsigned char>(utf8[i]), d.error));
        }
        if (d.cp >= 0x10000) {
            const char32_t v = d.cp - 0x10000;
            out.push_back(static_cast<char16_t>(0xD800 + (v >> 10)));
            out.push_back(static_cast<char16_t>(0xDC00 + (v & 0x3FF)));
        } else {
            out.push_back(static_cast<char16_t>(d.cp));
        }
        i += d.length;
    }
    return out;
}

std::string utf16_to_utf8(std::u16string_view utf16) { return to_utf8(utf16, false); }

std::string utf16_to_utf8_lossy(std::u16string_view utf16) { return to_utf8(utf16, true); }

bool is_valid_utf8(std::string_view utf8) noexcept {
    for (std::size_t i = 0; i < utf8.size();) {
        const Decoded d = decode_one(utf8, i);
        if (d.error != nullptr) return false;
        i += d.length;
    }
    return true;
}

}  // namespace fsimg::core
