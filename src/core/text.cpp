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

bool has_wildcard(std::string_view s) noexcept { return s.find_first_of("*?[") != std::string_view::npos; }

namespace {

/// The code points of UTF-8 `s`; a byte that does not start a valid sequence is one of its own.
std::u32string wildcard_code_points(std::string_view s) {
    std::u32string out;
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        bool ok = n != 0 && i + n <= s.size();
        char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto t = static_cast<unsigned char>(s[i + k]);
            ok = (t >> 6) == 2;
            c = (c << 6) | (t & 0x3F);
        }
        if (!ok) {
            out.push_back(b);
            ++i;
        } else {
            out.push_back(c);
            i += n;
        }
    }
    return out;
}

char32_t wildcard_fold(char32_t c, bool on) noexcept {
    return on && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/// A bracket expression at p[i] ('['): sets `end` past its ']' and returns
/// whether `c` is in it; false with end = i when there is no closing ']'.
bool wildcard_in_set(const std::u32string& p, std::size_t i, char32_t c, bool fold_case, std::size_t& end) {
    std::size_t j = i + 1;
    const bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
    if (negate) ++j;
    bool hit = false, first = true;
    for (; j < p.size() && (first || p[j] != ']'); first = false) {
        char32_t lo = p[j];
        if (lo == '\\' && j + 1 < p.size()) lo = p[++j];
        ++j;
        char32_t hi = lo;
        if (j + 1 < p.size() && p[j] == '-' && p[j + 1] != ']') {
            hi = p[j + 1];
            if (hi == '\\' && j + 2 < p.size()) hi = p[++j + 1];
            j += 2;
        }
        const char32_t x = wildcard_fold(c, fold_case);
        if ((c >= lo && c <= hi) || (x >= wildcard_fold(lo, fold_case) && x <= wildcard_fold(hi, fold_case)))
            hit = true;
    }
    if (j >= p.size()) {
        end = i;
        return false;
    }
    end = j + 1;
    return hit != negate;
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view name, bool fold_case) {
    const std::u32string p = wildcard_code_points(pattern), n = wildcard_code_points(name);
    // Iterative matching with one backtrack point for the last '*' (linear memory).
    std::size_t pi = 0, ni = 0, star = std::u32string::npos, mark = 0;
    while (ni < n.size()) {
        if (pi < p.size()) {
            const char32_t c = p[pi];
            if (c == '*') {
                star = ++pi;
                mark = ni;
                continue;
            }
            if (c == '?') {
                ++pi;
                ++ni;
                continue;
            }
            if (c == '[') {
                std::size_t end = 0;
                const bool hit = wildcard_in_set(p, pi, n[ni], fold_case, end);
                if (end != pi) {
                    if (hit) {
                        pi = end;
                        ++ni;
                        continue;
                    }
                } else if (wildcard_fold(n[ni], fold_case) == '[') {  // no ']': a literal '['
                    ++pi;
                    ++ni;
                    continue;
                }
            } else {
                const char32_t lit = c == '\\' && pi + 1 < p.size() ? p[pi + 1] : c;
                if (wildcard_fold(lit, fold_case) == wildcard_fold(n[ni], fold_case)) {
                    pi += c == '\\' && pi + 1 < p.size() ? 2 : 1;
                    ++ni;
                    continue;
                }
            }
        }
        if (star == std::u32string::npos) return false;
        pi = star;
        ni = ++mark;
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

std::string wrap_words(std::string_view text, std::size_t width, std::size_t indent) {
    const auto columns = [](std::string_view w) {
        return static_cast<std::size_t>(std::count_if(
            w.begin(), w.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    };
    std::string out, line;
    std::size_t used = 0;  // columns of `line`
    bool words = false;    // `line` holds a word
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = text.find_first_not_of(' ', i);
        if (start == std::string_view::npos) break;
        std::size_t end = text.find(' ', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view word = text.substr(start, end - start);
        const std::size_t gap = start - i;  // the spaces before the word, kept inside a line
        const std::size_t need = columns(word);
        const std::size_t space = std::max<std::size_t>(gap, 1);
        // A size's unit stays with its number ("3.01 MiB"): no break before
        // a word of 1..3 letters ending in 'B' that follows a digit.
        std::string_view letters = word;  // the unit without the punctuation after it
        while (!letters.empty() && std::string_view(")],;.:").find(letters.back()) != std::string_view::npos)
            letters.remove_suffix(1);
        const bool unit = words && !line.empty() && line.back() >= '0' && line.back() <= '9' &&
                          !letters.empty() && letters.size() <= 3 && letters.back() == 'B' &&
                          std::all_of(letters.begin(), letters.end(), [](char c) {
                              return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
                          });
        if (unit && used + space + need > width) {
            // Carry the number over with its unit.
            const std::size_t cut = line.find_last_of(' ');
            if (cut != std::string::npos && cut >= indent && line.find_first_not_of(' ') < cut) {
                const std::string number = line.substr(cut + 1);
                line.resize(cut);
                while (!line.empty() && line.back() == ' ') line.pop_back();
                out += line + "\n";
                line.assign(indent, ' ');
                line += number;
                used = indent + columns(number);
            }
        }
        if (words && used + space + need > width && !unit) {
            out += line + "\n";
            line.assign(indent, ' ');
            used = indent;
        } else if (words || gap != 0) {  // leading spaces of the text kept
            line.append(words ? space : gap, ' ');
            used += words ? space : gap;
        }
        line += word;
        used += need;
        words = true;
        i = end;
    }
    if (words) out += line + "\n";
    return out;
}

}  // namespace fsimg::core
