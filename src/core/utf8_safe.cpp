#include "fsimg/core/utf8_safe.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace fsimg::core {

std::string escape_invalid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;  // continuation bytes
        std::uint32_t cp = 0;
        if (c < 0x80) {
            out.push_back(s[i++]);
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        }
        bool ok = n > 0;
        for (std::size_t k = 1; ok && k <= n; ++k) {
            if (i + k >= s.size()) {
                ok = false;
                break;
            }
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d & 0xC0) != 0x80) ok = false;
            cp = (cp << 6) | (d & 0x3F);
        }
        // No overlong forms, no surrogates, nothing past U+10FFFF.
        if (ok && ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) ||
                   cp > 0x10FFFF))
            ok = false;
        if (ok) {
            out.append(s.substr(i, n + 1));
            i += n + 1;
        } else {
            out += fmt::format("\\x{:02x}", c);
            ++i;
        }
    }
    return out;
}

}  // namespace fsimg::core
