// UTF-8 <-> UTF-16 conversion with errors for invalid sequences.
#pragma once

#include <string>
#include <string_view>

namespace fsimg::core {

/// Converts UTF-8 to UTF-16 (surrogate pairs for code points above U+FFFF).
/// Throws Error(usage) naming the byte offset on invalid UTF-8: bad lead or
/// continuation bytes, overlong forms, surrogate code points, > U+10FFFF,
/// truncated sequences.
std::u16string utf8_to_utf16(std::string_view utf8);

/// Converts UTF-16 to UTF-8. Throws Error(corrupt) naming the unit index on an
/// unpaired surrogate.
std::string utf16_to_utf8(std::u16string_view utf16);

/// Like utf16_to_utf8, but an unpaired surrogate becomes U+FFFD instead of
/// throwing (for showing names from damaged images).
std::string utf16_to_utf8_lossy(std::u16string_view utf16);

/// True when the text is valid UTF-8.
bool is_valid_utf8(std::string_view utf8) noexcept;

}  // namespace fsimg::core
