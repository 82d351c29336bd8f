#include "fsimg/core/text.hpp"

#include <fmt/format.h>

namespace fsimg::core {

namespace {

/// Control characters and DEL as \xNN (a line feed kept when `keep_lf`); a
/// backslash as "\\" when `backslash`.
std::string escape(std::string_view s, bool backslash, bool keep_lf) {
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && !(keep_lf && c == '\n')) || c == 0x7F) {
            out += fmt::format("\\x{:02x}", c);
        } else if (backslash && c == '\\') {
            out += "\\\\";
        } else {
            out.push_back(ch);
        }
    }
    return out;
}

}  // namespace

std::string escape_name(std::string_view s) { return escape(s, true, false); }

std::string escape_controls(std::string_view s) { return escape(s, false, true); }

}  // namespace fsimg::core
