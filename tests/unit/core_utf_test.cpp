#include <catch2/catch.hpp>

#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/utf8_safe.hpp"

using namespace fsimg;
using core::utf16_to_utf8;
using core::utf8_to_utf16;

TEST_CASE("UTF-8 to UTF-16 and back", "[core][utf]") {
    CHECK(utf8_to_utf16("") == u"");
    CHECK(utf8_to_utf16("README.TXT") == u"README.TXT");
    // 2-, 3- and 4-byte forms: é (U+00E9), € (U+20AC), 😀 (U+1F600 -> D83D DE00).
    CHECK(utf8_to_utf16("\xC3\xA9") == std::u16string{0x00E9});
    CHECK(utf8_to_utf16("\xE2\x82\xAC") == std::u16string{0x20AC});
    CHECK(utf8_to_utf16("\xF0\x9F\x98\x80") == std::u16string{0xD83D, 0xDE00});
    // Limits: U+007F, U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF.
    CHECK(utf8_to_utf16("\x7F") == std::u16string{0x7F});
    CHECK(utf8_to_utf16("\xC2\x80") == std::u16string{0x80});
    CHECK(utf8_to_utf16("\xDF\xBF") == std::u16string{0x7FF});
    CHECK(utf8_to_utf16("\xE0\xA0\x80") == std::u16string{0x800});
    CHECK(utf8_to_utf16("\xEF\xBF\xBF") == std::u16string{0xFFFF});
    CHECK(utf8_to_utf16("\xF0\x90\x80\x80") == std::u16string{0xD800, 0xDC00});
    CHECK(utf8_to_utf16("\xF4\x8F\xBF\xBF") == std::u16string{0xDBFF, 0xDFFF});

    const std::string mixed = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF end";
    CHECK(utf16_to_utf8(utf8_to_utf16(mixed)) == mixed);
    CHECK(utf16_to_utf8(std::u16string{0xD83D, 0xDE00, u'x'}) == "\xF0\x9F\x98\x80x");
    CHECK(std::string(1, '\0') == utf16_to_utf8(std::u16string(1, u'\0')));
}

TEST_CASE("invalid UTF-8 is refused naming the byte offset", "[core][utf]") {
    struct Case {
        std::string text;
        const char* offset;
        const char* why;
    };
    const Case cases[] = {
        {"ab\x80", "offset 2", "continuation"},         // lone continuation byte
        {"a\xC3", "offset 1", "truncated"},             // truncated 2-byte
        {"\xE2\x82", "offset 0", "truncated"},          // truncated 3-byte
        {"xy\xF0\x9F\x98", "offset 2", "truncated"},    // truncated 4-byte
        {"\xC3(", "offset 0", "missing continuation"},  // bad continuation
        {"\xE2\x28\xA1", "offset 0", "missing continuation"},
        {"\xC0\xAF", "offset 0", "overlong"},  // overlong '/'
        {"\xC1\xBF", "offset 0", "overlong"},
        {"\xE0\x80\xAF", "offset 0", "overlong"},       // overlong 3-byte
        {"\xF0\x80\x80\xAF", "offset 0", "overlong"},   // overlong 4-byte
        {"a\xED\xA0\x80", "offset 1", "surrogate"},     // U+D800 encoded
        {"\xED\xBF\xBF", "offset 0", "surrogate"},      // U+DFFF encoded
        {"\xF4\x90\x80\x80", "offset 0", "U+10FFFF"},   // U+110000
        {"\xF5\x80\x80\x80", "offset 0", "lead byte"},  // lead byte beyond F4
        {"\xFF", "offset 0", "lead byte"},
        {"\xFE", "offset 0", "lead byte"},
    };
    for (const Case& c : cases) {
        INFO("input bytes: " << c.text.size() << ", expected " << c.why);
        CHECK_FALSE(core::is_valid_utf8(c.text));
        CHECK_THROWS_WITH(utf8_to_utf16(c.text), Catch::Contains(c.offset) && Catch::Contains(c.why));
        try {
            utf8_to_utf16(c.text);
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::usage);
        }
    }
    CHECK(core::is_valid_utf8(""));
    CHECK(core::is_valid_utf8("plain"));
    CHECK(core::is_valid_utf8("\xF0\x9F\x98\x80\xC3\xA9"));
}

TEST_CASE("unpaired surrogates in UTF-16", "[core][utf]") {
    const std::u16string lone_high{u'a', 0xD83D, u'b'};
    const std::u16string lone_low{0xDE00};
    const std::u16string high_at_end{u'x', u'y', 0xD800};
    const std::u16string swapped{0xDE00, 0xD83D};
    CHECK_THROWS_WITH(utf16_to_utf8(lone_high), Catch::Contains("unit 1") && Catch::Contains("high"));
    CHECK_THROWS_WITH(utf16_to_utf8(lone_low), Catch::Contains("unit 0") && Catch::Contains("low"));
    CHECK_THROWS_WITH(utf16_to_utf8(high_at_end), Catch::Contains("unit 2"));
    CHECK_THROWS_WITH(utf16_to_utf8(swapped), Catch::Contains("unit 0"));
    try {
        utf16_to_utf8(lone_low);
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
    }
    CHECK(core::utf16_to_utf8_lossy(lone_high) ==
          "a\xEF\xBF\xBD"
          "b");
    CHECK(core::utf16_to_utf8_lossy(swapped) == "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(core::utf16_to_utf8_lossy(std::u16string{0xD83D, 0xDE00}) == "\xF0\x9F\x98\x80");
}

TEST_CASE("escape_invalid_utf8 keeps valid text and escapes the rest") {
    using fsimg::core::escape_invalid_utf8;
    CHECK(escape_invalid_utf8("DONN\xC3\x89"
                              "ES") ==
          "DONN\xC3\x89"
          "ES");
    CHECK(escape_invalid_utf8("DONN\x90"
                              "ES") == "DONN\\x90ES");                     // a raw CP850 byte
    CHECK(escape_invalid_utf8("\xC0\xAF") == "\\xc0\\xaf");                // overlong '/'
    CHECK(escape_invalid_utf8("\xED\xA0\x80") == "\\xed\\xa0\\x80");       // a surrogate
    CHECK(escape_invalid_utf8("\xE2\x82") == "\\xe2\\x82");                // cut short
    CHECK(escape_invalid_utf8("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");  // U+1F600
}

TEST_CASE("escape_name and escape_controls spell control characters alike") {
    using fsimg::core::escape_controls;
    using fsimg::core::escape_name;
    CHECK(escape_name("a\x1b"
                      "b\nc") == "a\\x1bb\\x0ac");
    CHECK(escape_name("back\\slash\x7f") == "back\\\\slash\\x7f");
    CHECK(escape_controls("a\x1b"
                          "b\rc") == "a\\x1bb\\x0dc");
    CHECK(escape_controls("error\n  what would work:") == "error\n  what would work:");  // fsimg's own lines
    // A message already holding an escaped name is left as it is: only raw controls change.
    CHECK(escape_controls("entry \"back\\\\slash\" \x07") == "entry \"back\\\\slash\" \\x07");
    CHECK(escape_controls("D\xC3\x89") == "D\xC3\x89");
}
