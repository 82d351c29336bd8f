#include "fsimg/core/text.hpp"

#include <algorithm>
#include <vector>

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

std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& candidates) {
    const auto distance = [](std::string_view a, std::string_view b) {
        std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
        for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
        for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i)
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
                d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                    d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        return d[a.size()][b.size()];
    };
    if (word.size() > 64) return std::nullopt;  // nobody mistypes 64 characters
    std::optional<std::string> best;
    // At most 2, and below half the word's length rounded up: "lst" may be "ls", "lx" is no guess.
    const std::size_t half = (word.size() + 1) / 2;
    std::size_t best_d = std::min<std::size_t>(2, half == 0 ? 0 : half - 1) + 1;  // exclusive
    for (const std::string& c : candidates) {
        if (c.size() > 64) continue;
        const std::size_t k = distance(word, c);
        if (k < best_d) {
            best_d = k;
            best = c;
        }
    }
    return best;
}

}  // namespace fsimg::core
