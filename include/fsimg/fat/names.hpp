// FAT long and short (8.3) names: validation, when an LFN is needed, short
// name generation, LFN entry encoding. Pure: no I/O.
//
// Facts: docs/formats.md §1.8-1.11 [FATGEN "FAT Long Directory
// Entries", "Name Matching in Short and Long Names", basis-name and
// numeric-tail algorithms; LINUX-VFAT; WIKI-83].
//
// What is verified and what is not:
//  - The basis-name algorithm, the ~N tail and the NT case bits follow
//    fatgen103 and match what mtools writes ([EXP] in formats.md §1.10:
//    "A long file name.text" -> ALONGF~1.TEX, "ab+c.txt" -> AB_C~1.TXT,
//    "a.txt" -> "A       TXT" with DIR_NTRes 0x18).
//  - After ~1..~4 are taken, Windows NT switches to two basis characters +
//    four hex digits of a hash of the long name + "~1" (WIKI-83). The hash
//    is Windows 7 and later's, as reconstructed by T. Galvin, "A Tale of Two
//    File Names", 2015 (SomeStuff.aspx -> SOBC84~1.ASP); it reproduces the
//    four hashed aliases of a Windows `dir /x` listing (Stack Overflow
//    question 31526206, tests/unit/ntfs_names_test.cpp). NTFS populate
//    generates its DOS names with the same allocator (ntfs/names.hpp).
//    Readers never depend on the form: only uniqueness within the
//    directory matters, and that is guaranteed.
//  - Characters outside ASCII are not converted to an OEM code page: in a
//    short name each becomes '_' (lossy, so the name gets a tail and an LFN).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <unordered_set>
#include <vector>
#include "fsimg/core/windows_names.hpp"

namespace fsimg::fat {

/// Longest long name: 255 UTF-16 code units [FATGEN].
inline constexpr std::size_t kMaxLongNameUnits = 255;
/// UTF-16 code units in one LFN entry [FATGEN].
inline constexpr std::size_t kLfnUnitsPerEntry = 13;
/// DIR_NTRes case bits [LINUX-FAT CASE_LOWER_BASE / CASE_LOWER_EXT].
inline constexpr std::uint8_t kNtLowerBase = 0x08;
inline constexpr std::uint8_t kNtLowerExt = 0x10;

using ShortName = std::array<std::uint8_t, 11>;  ///< DIR_Name: 8 + 3 bytes, space padded

/// Why a host name cannot be a FAT long name, or nullopt when it can.
/// Refused (every rule named in the message): invalid UTF-8; empty; "." or
/// ".."; a code point below U+0020, or U+FFFF (the LFN padding unit); one of
/// " * / : < > ? \ |; a trailing period or space (Windows strips them, so the
/// file could not be opened there); more than 255 UTF-16 code units. Accepted although Windows
/// programs dislike them: leading spaces, several periods, reserved device
/// names (CON, AUX.TXT: an API rule, not an on-disk one; see
/// is_windows_device_name), characters outside the BMP.
std::optional<std::string> long_name_problem(std::string_view utf8);

/// A name FAT can hold, made from any host name for `mkfs --from --rename`:
/// invalid UTF-8 bytes, control characters and " * / : < > ? \ | become '_',
/// as do trailing periods and spaces; an empty result is "_"; names longer
/// than 255 UTF-16 units are cut (keeping an extension of up to 16 units, and
/// never splitting a surrogate pair). Returns the name unchanged when
/// long_name_problem() accepts it. Pure and deterministic.
std::string fat_safe_name(std::string_view utf8);

/// `name` with "~N" inserted before its extension ("a.txt", 2 -> "a~2.txt"),
/// shortened so the result stays within 255 UTF-16 units.
std::string with_name_suffix(std::string_view utf8, unsigned n);

/// Windows device names (CON, AUX.TXT ...): core/windows_names.hpp.
using core::is_windows_device_name;

/// The key under which two names collide in one directory: FAT long and short
/// names form one case-insensitive namespace [FATGEN], compared by Windows
/// through its up-case table. Each UTF-16 unit goes through the up-case table
/// Microsoft publishes for exFAT (the recommended table, exfat::
/// recommended_upcase_map [EXFAT §7.2.5]): every script Windows folds,
/// fullwidth letters, circled letters and Georgian, Glagolitic and Greek
/// extended included; dotless i and long s are kept, as Windows keeps them.
std::u16string case_fold_key(std::u16string_view name);

/// When `name` can be stored as a short entry alone (Windows NT / mtools
/// rule): a legal 8.3 name (1-8 base characters, optionally one period and
/// 1-3 extension characters, only characters valid in short names, no
/// spaces, ASCII) whose base and extension are each all upper or all lower
/// case. Returns the short name and the DIR_NTRes case bits (0x08 base lower,
/// 0x10 extension lower); nullopt when an LFN is needed.
/// Note: Linux vfat's default (shortname=mixed) stores an LFN for any
/// lower-case name; images we write are read correctly by both.
struct PlainShortName {
    ShortName name{};
    std::uint8_t nt_case = 0;
};
std::optional<PlainShortName> plain_short_name(std::u16string_view name);

/// True when `name` has the shape of an 8.3 name in any letter case: 1-8
/// base characters, optionally one period and 1-3 extension characters,
/// each an ASCII letter, digit or one of $ % ' - _ @ ~ ` ! ( ) { } ^ # &
/// (no space) [FATGEN].
bool is_83_shaped(std::u16string_view name) noexcept;

/// The upper-case short name of an 8.3-shaped name ("TextFile.Txt" ->
/// "TEXTFILE TXT"), the short name Windows gives such a name before any
/// tail [WIKI-83: "If the LFN is 8.3 mixed case ... the 8.3 name will be an
/// uppercased version of it"]; nullopt when !is_83_shaped(name).
std::optional<ShortName> upper_short_form(std::u16string_view name);

/// Number of LFN entries for a name of `units` UTF-16 code units: ceil(units/13).
constexpr std::uint32_t lfn_entry_count(std::size_t units) noexcept {
    return static_cast<std::uint32_t>((units + kLfnUnitsPerEntry - 1) / kLfnUnitsPerEntry);
}

/// The fatgen103 basis name of a long name: upper-cased, characters invalid
/// in short names (and non-ASCII) replaced by '_' (lossy), spaces and leading
/// periods removed, up to 8 characters before the first remaining period,
/// up to 3 after the last one.
struct BasisName {
    std::string base;    ///< 0..8 characters (empty only for names of periods and spaces)
    std::string ext;     ///< 0..3 characters
    bool lossy = false;  ///< characters were replaced by '_' or cut off
};
BasisName basis_name(std::u16string_view name);

/// The Windows short-name hash of a long name (4 hex digits in the hashed
/// tail): Windows 7 and later's, reconstructed by T. Galvin (see the file
/// comment).
std::uint16_t windows_short_name_hash(std::u16string_view name) noexcept;

/// "NAME    EXT" -> "NAME.EXT" for messages and tests.
std::string short_name_dotted(const ShortName& name);

/// Assigns unique short names within one directory.
///
/// Use: reserve() every name that plain_short_name() accepts (and every other
/// short name already present), then call generate() for the names that need
/// an LFN, in a deterministic order. Candidates, first free wins: the basis
/// name itself when not lossy and the long name is 8.3-shaped; BASIS~1 ..
/// BASIS~4 (basis truncated so base + tail <= 8); then XXHHHH~1, ~2, ...
/// (two basis characters + the hash of the long name, truncated to fit).
/// Always terminates: a directory holds at most 65,536 entries and there
/// are far more candidates.
/// A short name for a long name that needs an LFN, unique against `taken`
/// (true for a DIR_Name already in the directory): the basis name, then
/// tails ~1..~4, then two basis characters, a 4-digit hash of the long name
/// and a tail, as Windows generates them [FATGEN "Basis-Name Generation",
/// "Numeric-Tail Generation"], so that a directory of N similar names costs
/// O(N) candidates, not O(N^2). `tail_always` as ShortNameAllocator::generate.
ShortName generate_short_name(std::u16string_view long_name,
                              const std::function<bool(const ShortName&)>& taken, bool tail_always = false);

class ShortNameAllocator {
public:
    /// Marks a short name as taken; false if it already was.
    bool reserve(const ShortName& name);
    bool contains(const ShortName& name) const { return used_.count(key(name)) != 0; }
    /// A unique short name for a long name that needs an LFN. `tail_always`
    /// skips the first candidate (the basis without a tail, which FAT uses
    /// for a valid 8.3 name in mixed case) as NTFS's RtlGenerate8dot3Name
    /// does: every generated NTFS DOS name has a ~N tail (ntfs/names.hpp).
    ShortName generate(std::u16string_view long_name, bool tail_always = false);

private:
    static std::string key(const ShortName& n) { return std::string(n.begin(), n.end()); }
    std::unordered_set<std::string> used_;
};

/// Encodes the LFN entries of `name` for a short entry with checksum
/// `checksum` (lfn_checksum of its DIR_Name), in on-disk order: the entry with
/// the highest ordinal (ORed with 0x40) first. 13 units per entry; after the
/// last unit one 0x0000 and then 0xFFFF padding, neither when the name fills
/// its last entry exactly [FATGEN, EXP]. `out` must hold
/// 32 * lfn_entry_count(name.size()) bytes; name must be 1..255 units.
void encode_lfn_entries(std::u16string_view name, std::uint8_t checksum, std::span<std::byte> out);

}  // namespace fsimg::fat
