#include <catch2/catch.hpp>

#include <array>
#include <set>
#include <string>
#include <vector>

#include "fsimg/core/utf.hpp"
#include "fsimg/fat/cost.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"

using namespace fsimg;
using namespace fsimg::fat;

namespace {
std::u16string u(const char* utf8) { return core::utf8_to_utf16(utf8); }
std::string shortname(const ShortName& n) { return std::string(n.begin(), n.end()); }
}  // namespace

TEST_CASE("long names FAT refuses are named, others accepted", "[fat_names]") {
    for (const char* bad :
         {"colon:name.txt", "star*name.txt", "question?.txt", "quote\".txt", "lt<gt>.txt", "pipe|name.txt",
          "back\\slash.txt", "tab\tname.txt", "trailing dot.", "trailing space ", ".", "..", ""}) {
        INFO(bad);
        CHECK(long_name_problem(bad).has_value());
    }
    CHECK(long_name_problem(std::string("bad\xff utf8")).value().find("UTF-8") != std::string::npos);
    CHECK(long_name_problem("pad\xef\xbf\xbf.txt").value().find("U+FFFF") != std::string::npos);
    CHECK(fat_safe_name("pad\xef\xbf\xbf.txt") == "pad_.txt");
    CHECK(long_name_problem(std::string(255, 'x')) == std::nullopt);
    CHECK(long_name_problem(std::string(256, 'x')).value().find("256") != std::string::npos);
    // 120 x "é" (one unit each) + ".txt" = 124 units although 244 bytes of UTF-8.
    std::string accents;
    for (int i = 0; i < 120; ++i) accents += "\xc3\xa9";
    CHECK(long_name_problem(accents + ".txt") == std::nullopt);
    for (const char* ok : {" leading space.txt", ".hidden", "..double", "a.b.c.d.e", "CON", "aux.txt",
                           "emoji \xf0\x9f\x98\x80 file.txt", "ab+c;d=e[f]g,h.txt"}) {
        INFO(ok);
        CHECK(long_name_problem(ok) == std::nullopt);
    }
    CHECK(is_windows_device_name(u("CON")));
    CHECK(is_windows_device_name(u("aux.txt")));
    CHECK(is_windows_device_name(u("nul.c")));
    CHECK(is_windows_device_name(u("com7")));
    CHECK_FALSE(is_windows_device_name(u("console")));
    CHECK_FALSE(is_windows_device_name(u("com0")));
}

TEST_CASE("case fold key: one namespace per directory", "[fat_names]") {
    CHECK(case_fold_key(u("CaseName.txt")) == case_fold_key(u("casename.TXT")));
    CHECK(case_fold_key(u("caf\xc3\xa9")) == case_fold_key(u("CAF\xc3\x89")));            // é / É
    CHECK(case_fold_key(u("\xce\xb1\xce\xb2")) == case_fold_key(u("\xce\x91\xce\x92")));  // αβ / ΑΒ
    CHECK(case_fold_key(u("\xd0\xb6")) == case_fold_key(u("\xd0\x96")));                  // ж / Ж
    CHECK(case_fold_key(u("a")) != case_fold_key(u("b")));
    // Windows' up-case table beyond the Latin, Greek and Cyrillic basics (issue 40).
    CHECK(case_fold_key(u("\xef\xbd\x81")) == case_fold_key(u("\xef\xbc\xa1")));  // fullwidth a / A
    CHECK(case_fold_key(u("\xe2\x93\x90")) == case_fold_key(u("\xe2\x92\xb6")));  // circled a / A
    CHECK(case_fold_key(u("\xe1\xb8\x81")) == case_fold_key(u("\xe1\xb8\x80")));  // a ring below
    CHECK(case_fold_key(u("\xcf\x82")) == case_fold_key(u("\xce\xa3")));          // final sigma / Sigma
    CHECK(case_fold_key(u("\xc4\xb1")) != case_fold_key(u("I")));                 // dotless i kept
}

TEST_CASE("8.3 names in one case per part need no LFN (NT case bits)", "[fat_names]") {
    struct Case {
        const char* name;
        const char* short11;
        std::uint8_t nt;
    };
    // [EXP mtools] a.txt -> "A       TXT" + 0x18; README.TXT plain.
    for (const Case& c : {Case{"a.txt", "A       TXT", 0x18}, Case{"README.TXT", "README  TXT", 0x00},
                          Case{"readme.TXT", "README  TXT", 0x08}, Case{"README.txt", "README  TXT", 0x10},
                          Case{"f000123", "F000123    ", 0x08}, Case{"12345678.123", "12345678123", 0},
                          Case{"UPPER.TXT", "UPPER   TXT", 0}, Case{"lower.txt", "LOWER   TXT", 0x18},
                          Case{"$x~1.a", "$X~1    A  ", 0x18}}) {
        INFO(c.name);
        auto p = plain_short_name(u(c.name));
        REQUIRE(p);
        CHECK(shortname(p->name) == c.short11);
        CHECK(p->nt_case == c.nt);
        CHECK(name_entry_count(u(c.name)) == 1);
    }
    for (const char* lfn :
         {"MixCase.txt", "MiXeD.TxT", "Sub", "a.b.c", "toolongname.txt", "a.text", "a b.txt", ".hidden",
          "ab+c.txt", "caf\xc3\xa9.txt", "no_extension", "x.", "1.2.3"}) {
        INFO(lfn);
        CHECK_FALSE(plain_short_name(u(lfn)));
    }
    // [EXP] formats.md §5.5: MixCase.txt costs 64 bytes, "A long file name.text" 96.
    CHECK(name_entry_count(u("MixCase.txt")) == 2);
    CHECK(name_entry_count(u("A long file name.text")) == 3);
    CHECK(name_entry_count(u("file_with_name_0001.txt")) == 3);  // L = 23
    CHECK(name_entry_count(u("big_0001.bin")) == 1);             // a legal lower-case 8.3 name
}

TEST_CASE("basis names follow fatgen103 (Windows' period handling)", "[fat_names]") {
    auto b = basis_name(u("A long file name.text"));
    CHECK(b.base == "ALONGFIL");
    CHECK(b.ext == "TEX");
    b = basis_name(u("ab+c.txt"));
    CHECK(b.base == "AB_C");
    CHECK(b.lossy);
    b = basis_name(u("a.testing.file.bat"));
    CHECK(b.base == "ATESTING");
    CHECK(b.ext == "BAT");
    b = basis_name(u(".hidden"));
    CHECK(b.base == "HIDDEN");
    CHECK(b.ext.empty());
    b = basis_name(u("emoji \xf0\x9f\x98\x80 file.txt"));
    CHECK(b.base == "EMOJI_FI");  // one '_' for the surrogate pair
    CHECK(b.lossy);
    b = basis_name(u("MixCase.txt"));
    CHECK(b.base == "MIXCASE");
    CHECK_FALSE(b.lossy);
}

TEST_CASE("short names: basis, ~1..~4, then the hashed form; always unique", "[fat_names]") {
    ShortNameAllocator a;
    // [EXP mtools] examples from formats.md §1.10
    CHECK(short_name_dotted(a.generate(u("A long file name.text"))) == "ALONGF~1.TEX");
    CHECK(short_name_dotted(a.generate(u("ab+c.txt"))) == "AB_C~1.TXT");
    CHECK(short_name_dotted(a.generate(u("MixCase.txt"))) == "MIXCASE.TXT");   // fits 8.3: no tail
    CHECK(short_name_dotted(a.generate(u("mixcase.TxT"))) == "MIXCAS~1.TXT");  // basis taken: tail

    ShortNameAllocator b;
    std::vector<std::string> got;
    for (int i = 1; i <= 6; ++i)
        got.push_back(
            short_name_dotted(b.generate(u(("LongFileName" + std::to_string(i) + ".txt").c_str()))));
    CHECK(got[0] == "LONGFI~1.TXT");
    CHECK(got[3] == "LONGFI~4.TXT");
    // From the fifth on: 2 basis characters + 4 hex digits + ~1 (Windows 7+; ntfs_names_test.cpp).
    CHECK(got[4].substr(0, 2) == "LO");
    CHECK(got[4].substr(6) == "~1.TXT");
    CHECK(got[5].substr(6) == "~1.TXT");
    CHECK(got[4] != got[5]);

    // Many collisions still end unique, including when hashes collide.
    ShortNameAllocator c;
    std::set<std::string> seen;
    for (int i = 0; i < 3000; ++i) {
        const ShortName n = c.generate(u(("Long File Name " + std::to_string(i % 50) + ".txt").c_str()));
        CHECK(seen.insert(shortname(n)).second);
    }
    // A reserved plain name is never handed out again.
    ShortNameAllocator d;
    ShortName taken;
    std::copy_n("LONGFI~1TXT", 11, taken.begin());
    CHECK(d.reserve(taken));
    CHECK(short_name_dotted(d.generate(u("LongFileName.txt"))) == "LONGFI~2.TXT");
}

TEST_CASE("Windows short-name hash reproduces the published example", "[fat_names]") {
    // T. Galvin, "A Tale of Two File Names" (2015): SomeStuff.aspx -> SOBC84~1.ASP.
    CHECK(windows_short_name_hash(u("SomeStuff.aspx")) == 0xBC84);
}

TEST_CASE("LFN entries: 13 units each, 0x0000 then 0xFFFF padding, reverse order", "[fat_names]") {
    ShortName sn;
    std::copy_n("MIXCASE TXT", 11, sn.begin());
    const std::uint8_t sum = lfn_checksum(sn);
    auto unit = [](std::span<const std::byte> e, int j) {
        static constexpr int off[13] = {1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30};
        return static_cast<unsigned>(e[off[j]]) | static_cast<unsigned>(e[off[j] + 1]) << 8;
    };
    {
        std::vector<std::byte> out(32);
        encode_lfn_entries(u("MixCase.txt"), sum, out);
        CHECK(out[0] == std::byte{0x41});
        CHECK(out[11] == std::byte{0x0F});
        CHECK(out[12] == std::byte{0});
        CHECK(out[13] == std::byte{sum});
        CHECK(out[26] == std::byte{0});
        CHECK(out[27] == std::byte{0});
        CHECK(unit(out, 0) == 'M');
        CHECK(unit(out, 10) == 't');
        CHECK(unit(out, 11) == 0x0000);
        CHECK(unit(out, 12) == 0xFFFF);
    }
    {  // exactly 13 units: neither terminator nor padding [EXP]
        std::vector<std::byte> out(32);
        encode_lfn_entries(u("abcdefghijklm"), sum, out);
        CHECK(unit(out, 12) == 'm');
    }
    {  // 14 units: two entries, ordinal 2|0x40 first, then 1
        std::vector<std::byte> out(64);
        encode_lfn_entries(u("abcdefghijklmn"), sum, out);
        CHECK(out[0] == std::byte{0x42});
        CHECK(out[32] == std::byte{0x01});
        CHECK(unit(std::span<const std::byte>(out).subspan(0, 32), 0) == 'n');
        CHECK(unit(std::span<const std::byte>(out).subspan(0, 32), 1) == 0);
        CHECK(unit(std::span<const std::byte>(out).subspan(0, 32), 2) == 0xFFFF);
        CHECK(unit(std::span<const std::byte>(out).subspan(32, 32), 0) == 'a');
    }
    {  // 255 units: 20 entries
        std::vector<std::byte> out(20 * 32);
        encode_lfn_entries(std::u16string(255, u'x'), sum, out);
        CHECK(out[0] == std::byte{0x40 | 20});
        CHECK(lfn_entry_count(255) == 20);
    }
    std::vector<std::byte> wrong(32);
    CHECK_THROWS(encode_lfn_entries(u("abcdefghijklmn"), sum, wrong));
}

TEST_CASE("cost functions", "[fat_names][fat_cost]") {
    CHECK(file_clusters(0, 4096) == 0);
    CHECK(file_clusters(1, 4096) == 1);
    CHECK(file_clusters(4096, 4096) == 1);
    CHECK(file_clusters(4097, 4096) == 2);
    CHECK(file_clusters(kMaxFileBytes, 65536) == 65536);
    CHECK(directory_clusters(0, 512) == 1);
    // [EXP 4 KiB]: 126 short-named children + . + .. fill one cluster; the 127th needs a second.
    CHECK(directory_clusters(subdirectory_entries(126), 4096) == 1);
    CHECK(directory_clusters(subdirectory_entries(127), 4096) == 2);
    // formats.md §5.5: data/ with 100 x 3 + 10 x 1 + 1 x 1 entries = 313 -> 3 clusters of 4 KiB.
    CHECK(directory_clusters(subdirectory_entries(100 * 3 + 10 + 1), 4096) == 3);
}

TEST_CASE("fat_safe_name and with_name_suffix (--rename)", "[fat_names]") {
    CHECK(fat_safe_name("fine.txt") == "fine.txt");
    CHECK(fat_safe_name("colon:name.txt") == "colon_name.txt");
    CHECK(fat_safe_name("tab\tname.txt") == "tab_name.txt");
    CHECK(fat_safe_name("trailing dot.") == "trailing dot_");
    CHECK(fat_safe_name("trailing space ") == "trailing space_");
    CHECK(fat_safe_name("dots..") == "dots__");
    CHECK(fat_safe_name("bad\xff utf8") == "bad_ utf8");
    CHECK(fat_safe_name("..") == "__");
    const std::string long_name = std::string(300, 'x') + ".jpeg";
    const std::string cut = fat_safe_name(long_name);
    CHECK(cut.size() == 255);
    CHECK(cut.substr(cut.size() - 5) == ".jpeg");
    for (const char* n : {"colon:name.txt", "trailing dot.", "bad\xff utf8"})
        CHECK_FALSE(long_name_problem(fat_safe_name(n)));
    CHECK(with_name_suffix("a.txt", 2) == "a~2.txt");
    CHECK(with_name_suffix("noext", 3) == "noext~3");
    CHECK(with_name_suffix(".hidden", 2) == ".hidden~2");
    const std::string full = with_name_suffix(cut, 12);
    CHECK(core::utf8_to_utf16(full).size() == 255);
    CHECK(full.substr(full.size() - 8) == "~12.jpeg");
}
