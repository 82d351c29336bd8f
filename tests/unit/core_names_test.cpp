// core/scramble.hpp: made-up names keep length, extension and character classes;
// core/text.hpp closest_word: the "did you mean" hint.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "fsimg/core/scramble.hpp"
#include "fsimg/core/text.hpp"

using fsimg::core::NameScrambler;

TEST_CASE("name scrambler: same length, extension and classes; the key decides", "[core][scramble]") {
    const NameScrambler s(42), t(43);
    const std::u16string name = u"Holiday Photo 2024.JPEG";
    const std::u16string a = s.scramble(name, 7, 0);
    REQUIRE(a.size() == name.size());
    CHECK(a.substr(a.size() - 5) == u".JPEG");
    CHECK(a != name);
    for (std::size_t i = 0; i + 5 < name.size(); ++i) {
        const char16_t o = name[i], m = a[i];
        if (o >= u'0' && o <= u'9') CHECK((m >= u'0' && m <= u'9'));
        if (o >= u'A' && o <= u'Z') CHECK((m >= u'A' && m <= u'Z'));
        if (o >= u'a' && o <= u'z') CHECK((m >= u'a' && m <= u'z'));
        if (o == u' ') CHECK(m == u' ');
    }
    CHECK(s.scramble(name, 7, 0) == a);  // deterministic for one key
    CHECK(t.scramble(name, 7, 0) != a);
    CHECK(s.scramble(name, 7, 1) != a);  // another attempt, another name
    CHECK(s.scramble(name, 8, 0) != a);  // another salt (directory)
    // Non-ASCII units (a surrogate pair too) become letters: the length in units stays.
    const std::u16string wide = u"\u00e9t\u00e9 \U0001F600.txt";
    const std::u16string w = s.scramble(wide, 1, 0);
    REQUIRE(w.size() == wide.size());
    for (std::size_t i = 0; i < 5; ++i) CHECK(((w[i] >= u'a' && w[i] <= u'z') || w[i] == u' '));
    CHECK(w.substr(w.size() - 4) == u".txt");
    // Short names: upper case only; a leading dot is not an extension.
    const std::u16string up = s.scramble(u"abc~1", 3, 0, true);
    CHECK((up[0] >= u'A' && up[0] <= u'Z'));
    CHECK(up[3] == u'~');
    CHECK(s.scramble(u".hidden", 1, 0).front() == u'.');
}

TEST_CASE("closest word: a typo's nearest candidate, no guess when nothing is near", "[core][text]") {
    using fsimg::core::closest_word;
    const std::vector<std::string> commands{"mkfs", "dump", "fsck", "ls", "cat", "extract", "rm", "mv"};
    CHECK(closest_word("lst", commands) == std::optional<std::string>("ls"));
    CHECK(closest_word("mkfds", commands) == std::optional<std::string>("mkfs"));
    CHECK(closest_word("fsk", commands) == std::optional<std::string>("fsck"));
    CHECK(closest_word("extarct", commands) ==
          std::optional<std::string>("extract"));  // two neighbours swapped
    CHECK_FALSE(closest_word("lx", commands));     // too short to guess
    CHECK_FALSE(closest_word("format", commands));
    CHECK_FALSE(closest_word("", commands));
    CHECK(closest_word("--delted", {"--deleted", "--json", "-R"}) == std::optional<std::string>("--deleted"));
}

TEST_CASE("wildcards: *, ?, sets, escapes and case as Windows matches names", "[core][wildcard]") {
    using fsimg::core::has_wildcard;
    using fsimg::core::wildcard_match;
    CHECK(has_wildcard("*.JPG"));
    CHECK(has_wildcard("IMG_000?.JPG"));
    CHECK(has_wildcard("photo [1].jpg"));
    CHECK_FALSE(has_wildcard("/DCIM/100CANON/IMG_0001.JPG"));
    CHECK(wildcard_match("*.jpg", "IMG_0001.JPG", true));
    CHECK_FALSE(wildcard_match("*.jpg", "IMG_0001.JPG", false));
    CHECK(wildcard_match("*", ".hidden", true));  // a leading dot is no exception
    CHECK(wildcard_match("*", "", true));
    CHECK_FALSE(wildcard_match("?", "", true));
    CHECK(wildcard_match("IMG_000?.JPG", "IMG_0007.JPG", true));
    CHECK_FALSE(wildcard_match("IMG_000?.JPG", "IMG_00010.JPG", true));
    CHECK(wildcard_match("IMG_000[12].JPG", "IMG_0002.JPG", true));
    CHECK_FALSE(wildcard_match("IMG_000[12].JPG", "IMG_0003.JPG", true));
    CHECK(wildcard_match("IMG_000[!12].JPG", "IMG_0003.JPG", true));
    CHECK(wildcard_match("IMG_000[^12].JPG", "IMG_0003.JPG", true));
    CHECK(wildcard_match("[a-c]*", "Beta", true));
    CHECK_FALSE(wildcard_match("[a-c]*", "Beta", false));
    CHECK(wildcard_match("[]]x", "]x", true));  // ']' first in a set is a member
    CHECK(wildcard_match("a[b", "a[b", true));  // no closing ']': a literal '['
    CHECK(wildcard_match("\\*.txt", "*.txt", true));
    CHECK_FALSE(wildcard_match("\\*.txt", "a.txt", true));
    // One character is one code point: "é" (2 bytes) matches "?"; other letters match as stored.
    CHECK(wildcard_match("caf?", "caf\xC3\xA9", true));
    CHECK_FALSE(wildcard_match("CAF\xC3\x89", "caf\xC3\xA9", true));
    // Backtracking over several stars, in linear memory.
    CHECK(wildcard_match("*a*b*c*", "xxaxxbxxcxx", true));
    CHECK_FALSE(wildcard_match("*a*b*c*", "xxaxxcxxbxx", true));
    CHECK(wildcard_match("*.tar.gz", "backup.2024.tar.gz", true));
    const std::string many(2000, 'a');
    CHECK_FALSE(wildcard_match("*a*a*a*a*a*b", many, true));
}

TEST_CASE("wrap_words breaks at spaces, keeps a size with its unit", "[core][text]") {
    using fsimg::core::wrap_words;
    CHECK(wrap_words("", 10).empty());
    CHECK(wrap_words("one two three", 80) == "one two three\n");
    CHECK(wrap_words("one two three", 7) == "one two\nthree\n");
    CHECK(wrap_words("one two three", 7, 2) == "one two\n  three\n");
    // A word longer than the line stays whole, on a line of its own.
    CHECK(wrap_words("a extraordinarily b", 6) == "a\nextraordinarily\nb\n");
    // Leading spaces and runs inside a line are kept; spaces at a break are not.
    CHECK(wrap_words("  x    y", 80) == "  x    y\n");
    CHECK(wrap_words("  x    y", 5) == "  x\ny\n");
    // "3.01 MiB)," is not broken after the number: the number goes along.
    CHECK(wrap_words("overhead 3.01 MiB), done", 14) == "overhead\n3.01 MiB),\ndone\n");
    CHECK(wrap_words("ab 12 B", 5) == "ab\n12 B\n");
    // Code points, not bytes, are columns.
    CHECK(wrap_words("\xc3\xa9\xc3\xa9\xc3\xa9 x", 5) == "\xc3\xa9\xc3\xa9\xc3\xa9 x\n");
}
