#include "fsimg/core/text.hpp"

#include <fmt/format.h>

namespace fsimg::core {

std::string escape_name(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
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

std::string escape_controls(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02x}", c);
        } else {
            out.push_back(ch);
        }
    }
    return out;
}

}  // namespace fsimg::core
