// NTFS names as Windows stores them with 8.3 names on (ntfs/names.hpp): the
// namespace of every name and the generated DOS names, checked against
// aliases Windows produced (each with its source), and the rules populate
// relies on (uniqueness, POSIX where Win32 cannot hold a name).
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/populate.hpp"

using namespace fsimg;
using ntfs::Namespace;

namespace {

/// Plans `names` (UTF-8) as one directory, in the given creation order; returns
/// each name's DOS name in UTF-8 ("" when none).
std::vector<std::string> dos_names(const std::vector<std::string>& names,
                                   std::span<const std::u16string_view> reserved = {}) {
    std::vector<std::u16string> u16;
    for (const auto& n : names) u16.push_back(core::utf8_to_utf16(n));
    std::vector<ntfs::NameRequest> req;
    for (const auto& n : u16) req.push_back({n, false});
    std::vector<std::string> out;
    for (const auto& p : ntfs::plan_directory_names(req, reserved)) out.push_back(core::utf16_to_utf8(p.dos));
    return out;
}

std::string alias(const std::string& name) { return dos_names({name}).front(); }

}  // namespace

TEST_CASE("DOS names: aliases Windows generated", "[ntfs_names]") {
    // Microsoft KB 142982, "How Windows Generates 8.3 File Names from Long
    // File Names" (Windows upper-cases the alias; the article prints it as
    // typed): "Afile~1.doc" from "A file.doc" (a space: a short name even
    // under 8 characters), "Alongf~1.txt" from "A long filename.txt",
    // "Thisis~1.txt" from "This is a really long filename.123.456.789.txt"
    // (periods before the last one removed).
    CHECK(alias("A file.doc") == "AFILE~1.DOC");
    CHECK(alias("A long filename.txt") == "ALONGF~1.TXT");
    CHECK(alias("This is a really long filename.123.456.789.txt") == "THISIS~1.TXT");

    // R. Chen, "Not all short filenames contain a tilde", The Old New Thing,
    // 2004-04-14: "Long name for file.txt" -> LONGNA~1.TXT.
    CHECK(alias("Long name for file.txt") == "LONGNA~1.TXT");

    // T. Galvin, "A tale of two file names" (2015): "5+6 June Report.doc" ->
    // 5_6JUN~1.DOC ('+' becomes '_'); names that "aren't upper-case" get such
    // a tilde alias too.
    CHECK(alias("5+6 June Report.doc") == "5_6JUN~1.DOC");
    CHECK(alias("readme.txt") == "README~1.TXT");

    // The names Windows gives its program folders (restored with fsutil file
    // setshortname in gist phts/83b7118280411020f73d): PROGRA~1, PROGRA~2,
    // COMMON~1.
    CHECK(dos_names({"Program Files", "Program Files (x86)", "Common Files"}) ==
          std::vector<std::string>{"PROGRA~1", "PROGRA~2", "COMMON~1"});
}

TEST_CASE("DOS names: the hashed form after four tails, as a Windows dir /x listed it", "[ntfs_names]") {
    // Stack Overflow question 31526206 ("How are short file names generated
    // in Windows?", 2015) lists one Windows directory's long names and their
    // short names side by side: Der Meister, Eifersucht, Feuer Frei and Führe
    // Mich got RAMMST~1..~4; the four others the hashed form, two basis
    // characters + four hex digits of the name's hash + ~1. Created in that
    // order, our generator gives exactly the aliases Windows showed.
    const std::vector<std::string> names = {
        "Rammstein - Der Meister.mp3",    "Rammstein - Eifersucht.mp3", "Rammstein - Feuer Frei.mp3",
        "Rammstein - Führe Mich.mp3",     "Rammstein - Haifisch.mp3",   "Rammstein & Tatu - Moscow.mp3",
        "Rammstein - Asche zu Asche.mp3", "Rammstein - Du Hast.mp3",
    };
    CHECK(dos_names(names) == std::vector<std::string>{"RAMMST~1.MP3", "RAMMST~2.MP3", "RAMMST~3.MP3",
                                                       "RAMMST~4.MP3", "RA6BAA~1.MP3", "RA8E17~1.MP3",
                                                       "RA23A6~1.MP3", "RA0CAE~1.MP3"});
    // T. Galvin (above): SomeStuff.aspx -> SOBC84~1.ASP once SOMEST~1..~4 are taken.
    CHECK(dos_names(
              {"SomeStuff1.aspx", "SomeStuff2.aspx", "SomeStuff3.aspx", "SomeStuff4.aspx", "SomeStuff.aspx"})
              .back() == "SOBC84~1.ASP");
}

TEST_CASE("DOS names: namespaces", "[ntfs_names]") {
    const std::vector<std::u16string> n = {u"README.TXT", u"readme.md", u"MiXeD.TxT", u"Program Files",
                                           u"a:b",        u"trailing.", u"Case.txt",  u"CASE.TXT",
                                           u"linked.bin", u"$MFT"};
    std::vector<ntfs::NameRequest> req;
    for (const auto& s : n) req.push_back({s, s == u"linked.bin"});
    const std::array<std::u16string_view, 1> reserved{u"$mft"};
    const auto p = ntfs::plan_directory_names(req, reserved);
    CHECK(p[0].name_space == Namespace::win32_and_dos);  // an upper-case 8.3 name is its own DOS name
    CHECK(p[0].dos.empty());
    CHECK(p[1].name_space == Namespace::win32);  // 8.3-shaped in lower case: a tilde alias
    CHECK(p[1].dos == u"README~1.MD");
    CHECK(p[2].dos == u"MIXED~1.TXT");
    CHECK(p[3].name_space == Namespace::win32);
    CHECK(p[3].dos == u"PROGRA~1");
    CHECK(p[4].name_space == Namespace::posix);  // ':' cannot be Win32
    CHECK(p[5].name_space == Namespace::posix);  // a trailing period cannot be Win32
    CHECK(p[6].name_space == Namespace::posix);  // equal but for case: both POSIX, no DOS name
    CHECK(p[7].name_space == Namespace::posix);
    CHECK(p[8].name_space == Namespace::posix);  // a name of a hard-linked file
    CHECK(p[8].dos.empty());
    CHECK(p[9].name_space == Namespace::posix);  // equal to a reserved name but for case
    CHECK(p[9].equals_reserved);
    CHECK_FALSE(p[3].equals_reserved);
}

TEST_CASE("DOS names: never an 8.3 name the directory already holds", "[ntfs_names]") {
    // PROGRA~1 is taken by a long name in lower case, PROGRA~2 by an
    // upper-case one (its own DOS name), README.TXT by a lower-case one.
    const auto d = dos_names({"progra~1", "PROGRA~2", "Program Files", "readme.txt", "README~1.TXT"});
    CHECK(d[0] == "PROGRA~3");  // not its own upper-case form: a tilde alias, the first free
    CHECK(d[1].empty());        // Win32&DOS
    CHECK(d[2] == "PROGRA~4");
    CHECK(d[3] == "README~2.TXT");
    CHECK(d[4].empty());
}

TEST_CASE("DOS names: unique in a directory of many names sharing a basis", "[ntfs_names]") {
    const unsigned seed = GENERATE(take(3, random(0u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    std::vector<std::string> names;
    std::set<std::string> seen;
    const char* stems[] = {"Long File Name ", "LongFileName", "ab", "a b", "x.y.z", "Ünïcödé "};
    while (names.size() < 3000) {
        std::string n = stems[rng() % 6] + std::to_string(rng() % 5000) + (rng() % 2 ? ".txt" : "");
        if (seen.insert(n).second) names.push_back(n);
    }
    const auto d = dos_names(names);
    std::set<std::string> dos;
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (d[k].empty()) continue;
        CHECK(d[k].size() <= 12);
        CHECK(dos.insert(d[k]).second);
        CHECK(d[k].find(' ') == std::string::npos);
    }
    // No DOS name equals another long name but for case (ASCII names here).
    std::multiset<std::string> upper;
    auto up = [](std::string n) {
        for (char& c : n) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
        return n;
    };
    for (const auto& n : names) upper.insert(up(n));
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (d[k].empty()) continue;
        CHECK(upper.count(d[k]) == (up(names[k]) == d[k] ? 1u : 0u));
    }
}

TEST_CASE("DOS names one at a time: the same as planned against every name held", "[ntfs_names]") {
    // What the editor does per copied file (DirectoryNames) against what it did
    // (plan_directory_names of the one name against every name the directory
    // holds, its DOS names too): names sharing bases, 8.3 names in either case,
    // names equal but for case, names Win32 cannot hold, tails past ~4.
    const unsigned seed = GENERATE(take(3, random(0u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    const char* stems[] = {"Long File Name ", "readme",   "README", "ab",      "a b",
                           "x.y.z",           "Ünïcödé ", "q\"",    "PROGRA~1"};
    std::vector<std::u16string> held;  // what the directory holds: long names and DOS names
    std::vector<std::u16string> seed_names = {u"$MFT", u"README.TXT", u"readme~1.txt"};
    for (const auto& n : seed_names) held.push_back(n);
    std::vector<std::u16string_view> views(held.begin(), held.end());
    ntfs::DirectoryNames names(views);
    for (int i = 0; i < 400; ++i) {
        const std::string n8 = stems[rng() % 9] + std::to_string(rng() % 40) + (rng() % 2 ? ".txt" : "");
        const std::u16string n = core::utf8_to_utf16(n8);
        const ntfs::NameRequest req{n, rng() % 10 == 0};
        std::vector<std::u16string_view> all(held.begin(), held.end());
        const ntfs::NameRequest one[] = {req};
        const ntfs::NamePlan want = ntfs::plan_directory_names(one, all).front();
        const ntfs::NamePlan got = names.plan(req);
        INFO(n8);
        REQUIRE(got.name_space == want.name_space);
        REQUIRE(got.dos == want.dos);
        REQUIRE(got.equals_reserved == want.equals_reserved);
        if (want.equals_reserved) continue;  // the editor refuses a name the directory holds
        held.push_back(n);
        names.add(n);
        if (!want.dos.empty()) {
            held.push_back(want.dos);
            names.add(want.dos);
        }
        REQUIRE(names.size() == held.size());
    }
}

TEST_CASE("resident limit and index room count the DOS name's $FILE_NAME", "[ntfs_names]") {
    CHECK(ntfs::file_name_attribute_bytes(12) == 120);
    CHECK(ntfs::resident_limit(1024, 13) == 720);
    CHECK(ntfs::resident_limit(1024, 13, 12) == 600);  // 720 - 120
    CHECK(ntfs::directory_index_room(1024, 4096, 7, 8, 0).root_leaf -
              ntfs::directory_index_room(1024, 4096, 7, 8, 7).root_leaf ==
          ntfs::file_name_attribute_bytes(7));
}
