// FAT directory contents: 32-byte entries -> records with their long names.
//
// Pure: takes the bytes of a directory and returns what they say, with every
// long-name (LFN) anomaly reported instead of thrown [FATGEN "FAT Long
// Directory Entries"; formats.md §1.8-1.11]. Names are UTF-8; short names
// are decoded from OEM code page 850 (what mtools and dosfstools default to).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/core/time.hpp"
#include "fsimg/fat/structs.hpp"

namespace fsimg::fat {

/// Most LFN entries one name uses: 255 UTF-16 units (names.hpp
/// kMaxLongNameUnits) in 13-unit entries.
inline constexpr std::size_t kMaxLfnEntries = 20;
/// A directory holds at most 65,536 entries (2 MiB) [FATGEN].
inline constexpr std::uint32_t kMaxDirEntries = 65536;

/// What a short entry is, from DIR_Attr and DIR_Name [FATGEN attribute test order].
enum class RecordKind : std::uint8_t {
    file,
    directory,
    volume_label,
    dot,          ///< "."  (a directory entry named ".")
    dotdot,       ///< ".." (a directory entry named "..")
    invalid_attr  ///< ATTR_DIRECTORY and ATTR_VOLUME_ID both set
};

/// One live short entry and the long name assembled for it.
struct DirRecord {
    DirEntry entry;  ///< the decoded short entry
    RecordKind kind = RecordKind::file;
    std::uint32_t index = 0;        ///< entry index of the short entry within the directory
    std::uint32_t first_index = 0;  ///< index of the first LFN entry (== index without a long name)
    bool has_long_name = false;
    bool lfn_padding_bad = false;  ///< a unit after the long name's 0x0000 terminator is not 0xFFFF
    std::u16string long_name;      ///< as stored (UTF-16), when has_long_name
    std::string name;              ///< UTF-8: the long name if any, else short_name
    std::string short_name;        ///< "NAME.EXT" in UTF-8 with DIR_NTRes lower-case bits applied
    std::string short_name_raw;    ///< "NAME.EXT" as stored (upper case), OEM bytes decoded
    bool is_root = false;          ///< the synthetic record of the root directory
};

/// A long-name problem; the entries it concerns are ignored as long names.
struct LfnAnomaly {
    enum class Kind : std::uint8_t {
        orphan,    ///< LFN entries not followed by their short entry
        checksum,  ///< LDIR_Chksum differs from the short name's checksum
        sequence   ///< ordinals not n|0x40, n-1, ..., 1, or out of range
    };
    Kind kind;
    std::uint32_t index = 0;    ///< entry index where it was noticed
    std::uint32_t entries = 1;  ///< LFN entries concerned
    std::uint32_t first = 0;    ///< entry index of the first of them (they follow one another)
};

struct ParsedDirectory {
    std::vector<DirRecord> records;  ///< live entries (deleted ones skipped), in order
    std::vector<LfnAnomaly> anomalies;
    std::uint32_t entries_scanned = 0;  ///< up to and excluding the 0x00 end marker
    bool end_marker = false;            ///< a 0x00 entry ended the scan
    /// What stands after the end marker, read as the Linux vfat driver reads
    /// it (fs/fat/dir.c takes a 0x00 entry for a free one and reads on,
    /// IS_FREE): the records it still shows, their long-name problems, and
    /// how many entries there are neither free (0x00) nor deleted (0xE5),
    /// the first at `after_end_first`. Indices count from the directory's start.
    std::vector<DirRecord> after_end;
    std::vector<LfnAnomaly> after_end_anomalies;
    std::uint32_t after_end_entries = 0;
    std::uint32_t after_end_first = 0;
};

/// Parses directory bytes (a multiple of 32; a partial last entry is ignored)
/// up to the first entry whose first byte is 0x00, at most kMaxDirEntries
/// entries; what stands after that marker goes to the after_end fields. Deleted entries (0xE5) and the LFN
/// entries before them are skipped. Never throws except std::bad_alloc.
ParsedDirectory parse_directory(std::span<const std::byte> bytes);

/// The OEM code pages short names and labels are decoded through. The bytes
/// do not say which one wrote them: 850 is mtools' default (and what
/// dosfstools' fsck.fat shows), 437 the Linux vfat driver's
/// (CONFIG_FAT_DEFAULT_CODEPAGE) and US DOS/Windows'. They agree on ASCII
/// and on 81 of the 128 upper bytes (the accented letters of 0x80..0x9A);
/// of the 47 others, 437 has box drawing, Greek and symbols where 850 has
/// Latin-1 letters (0x9B: 437 U+00A2 CENT SIGN, 850 U+00F8 o WITH STROKE).
enum class OemCodePage : std::uint8_t { cp850, cp437 };

/// Chooses the code page for every later decoding in this process (default
/// cp850). Not thread-safe: the command line calls it once, before reading.
void set_oem_code_page(OemCodePage cp);
/// The code page in use.
OemCodePage oem_code_page();

/// OEM bytes as UTF-8, decoded through the code page in use (default 850,
/// what mtools and dosfstools use): BS_OEMName, BS_VolLab, BS_FilSysType and
/// the root's volume-label entry, so that text and JSON show the same valid
/// UTF-8 ("DONNÉES" for the bytes mlabel writes, 0x90 = É). Control bytes
/// stay as they are (the printer escapes them); nothing is trimmed.
std::string oem_text(std::string_view bytes);

/// The short name as "NAME.EXT" (no dot without an extension); 0x05 in the
/// first byte stands for 0xE5; OEM bytes above 0x7F decoded through the
/// code page in use (set_oem_code_page).
/// `apply_case` applies the DIR_NTRes lower-case bits (0x08 base, 0x10 ext).
std::string short_name_display(const std::array<std::uint8_t, 11>& name, std::uint8_t nt_res = 0,
                               bool apply_case = false);

/// Upper-cases for FAT's case-insensitive comparison: ASCII letters only when
/// `ascii_only`, otherwise every code point of the Basic Multilingual Plane
/// through the up-case table Microsoft publishes (exfat::
/// recommended_upcase_map [EXFAT §7.2.5]), as case_fold_key folds names for
/// mkfs: Latin-1 and Extended-A/B, Greek with tonos, Cyrillic, ...; U+00FF
/// to U+0178. Input and output UTF-8; invalid UTF-8 is compared byte for
/// byte.
std::string fold_case(std::string_view utf8, bool ascii_only = false);

/// The civil time of FAT date and time fields (DIR_WrtDate/DIR_WrtTime and
/// their kin: years from 1980, two-second resolution; the local time of
/// whoever wrote them, FAT stores no zone) [FATGEN "Date and Time Formats"];
/// nullopt when the date is 0 or its day or month is 0 or the month past 12.
std::optional<core::CivilTime> decode_timestamp(std::uint16_t date, std::uint16_t time) noexcept;
/// "2024-05-01 12:34:56" from the fields, the date alone without `with_time`
/// (DIR_LstAccDate has no time); `tenth` is DIR_CrtTimeTenth (10 ms units,
/// 0..199: 100..199 add a second). "-" for a date of 0 (not set); for a date
/// decode_timestamp refuses, or a tenth above 199, "invalid" and the raw
/// fields ("invalid (date 0x5800, time 0x0000)").
std::string timestamp_text(std::uint16_t date, std::uint16_t time, bool with_time = true,
                           std::uint8_t tenth = 0);
/// Why the fields are not a valid time ("day 0", "month 13", "hour 25",
/// "tenths 200"...), empty when they are or the date is 0 (not set)
/// [FATGEN "Date and Time Formats"; DIR_CrtTimeTenth 0..199].
std::string timestamp_problem(std::uint16_t date, std::uint16_t time, bool with_time = true,
                              std::uint8_t tenth = 0);

/// The 13 UTF-16 units of one LFN entry (offsets 1, 14, 28) [FATGEN].
std::array<char16_t, 13> lfn_units(DirEntrySpan entry) noexcept;

}  // namespace fsimg::fat
