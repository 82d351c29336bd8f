// Byte strings from an image made safe for text and JSON output.
#pragma once

#include <string>
#include <string_view>

namespace fsimg::core {

/// `s` as valid UTF-8: every byte that does not start or continue a valid
/// UTF-8 sequence (an unpaired surrogate's encoding and overlong forms
/// included) becomes the four characters "\xNN"; valid text is left as it
/// is. The last line of defence before JSON (nlohmann::json refuses invalid
/// UTF-8): names and labels are decoded through their code page first.
std::string escape_invalid_utf8(std::string_view s);

}  // namespace fsimg::core
