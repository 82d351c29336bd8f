// Text from an image made safe to show: names and labels may hold any byte.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsimg::core {

/// `s` made safe for a terminal and a one-line message: control characters
/// (below 0x20) and DEL as \xNN (lower-case hex, "\x1b"), a backslash as
/// "\\" so that the escaping can be told from the name; everything else
/// (UTF-8 included) as is.
std::string escape_name(std::string_view s);

/// `s` with control characters (below 0x20) but the line feed, and DEL, as
/// \xNN, in the spelling of escape_name, and nothing else changed (a
/// backslash stays one, a line feed stays: fsimg's own messages have lines,
/// "what would work:" lists): the last line of defence for warnings, notes
/// and errors that may already hold names escaped by escape_name, so that
/// no ESC, CR or other control byte of an image reaches a terminal raw.
/// Names themselves go through escape_name, where a line feed is \x0a.
std::string escape_controls(std::string_view s);

/// The candidate closest to `word` for a "did you mean" hint: the one at the
/// smallest edit distance (insertions, deletions, substitutions and swaps of
/// two neighbours, each 1: optimal string alignment), when that distance is
/// at most 2 and below half of `word`'s length rounded up ("lst" may be
/// "ls", "lx" is no guess); the first such one on a tie; nullopt otherwise.
std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& candidates);

/// True when `s` holds a wildcard character: `*`, `?` or `[`.
bool has_wildcard(std::string_view s) noexcept;

/// Whether `name` matches the shell-style `pattern` (one path component,
/// both UTF-8): `*` any run of characters (also none, also a leading dot),
/// `?` one character (a code point), `[abc]`, `[a-z]`, `[!a-z]` or `[^a-z]`
/// one character of (not of) the set, `\x` the character x itself; a `[`
/// without its `]` matches itself. `fold_case`: ASCII letters match either
/// case (as Windows and mtools match FAT, exFAT and NTFS names; other
/// letters match as stored). Bytes that are not UTF-8 are one character
/// each. Linear memory, at most pattern x name steps.
bool wildcard_match(std::string_view pattern, std::string_view name, bool fold_case);

/// `text` (one paragraph, UTF-8, no line feed) broken at spaces into lines
/// of at most `width` columns (a code point is a column), each ending in a
/// line feed; the first line starts with the text's own leading spaces,
/// every line after it with `indent` spaces. A
/// word longer than a line stays whole on a line of its own; runs of spaces
/// where a line breaks are dropped. A size's unit (a word of one to three
/// letters ending in 'B', punctuation after it aside: "MiB),") stays on the
/// line of the number before it ("3.01 MiB" is never broken).
std::string wrap_words(std::string_view text, std::size_t width, std::size_t indent = 0);

}  // namespace fsimg::core
