// exFAT directory contents: 32-byte entries -> File directory entry sets
// (File + Stream Extension + File Name entries, benign secondaries) with their
// SetChecksum and NameHash recomputed, and the system entries of the root.
//
// Pure: takes the bytes of a directory and returns what they say; every
// structural problem of an entry set is reported as an anomaly, never thrown.
// Facts: [EXFAT §6.2-6.4 (entry types, generic primary/secondary templates,
// SetChecksum), §7.4 (File), §7.6 (Stream Extension, NameHash), §7.7 (File
// Name), §8.2 (unknown entries)]; docs/formats.md §2.5, §2.8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/core/time.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

// EntryType fields [EXFAT §6.2.1, Table 8]
inline constexpr std::uint8_t kEntryInUse = 0x80;              ///< InUse bit
inline constexpr std::uint8_t kEntryCategorySecondary = 0x40;  ///< TypeCategory: 1 = secondary
inline constexpr std::uint8_t kEntryImportanceBenign = 0x20;   ///< TypeImportance: 1 = benign
inline constexpr std::uint8_t kEntryVendorExtension = 0xE0;    ///< benign secondary [EXFAT §7.8]
inline constexpr std::uint8_t kEntryVendorAllocation = 0xE1;   ///< benign secondary [EXFAT §7.9]

/// A benign secondary entry inside a File entry set (Vendor Extension 0xE0,
/// Vendor Allocation 0xE1 or an unknown benign secondary) [EXFAT §6.4, §8.2].
struct BenignSecondary {
    std::uint32_t index = 0;  ///< entry index in the directory
    std::uint8_t entry_type = 0;
    std::uint8_t flags = 0;           ///< GeneralSecondaryFlags
    std::uint32_t first_cluster = 0;  ///< FirstCluster (meaningful when AllocationPossible)
    std::uint64_t data_length = 0;    ///< DataLength
};

/// One decoded File directory entry set.
struct FileRecord {
    std::uint32_t index = 0;         ///< entry index of the File entry in the directory
    std::uint32_t entries = 0;       ///< 1 + SecondaryCount: entries the set spans
    std::uint16_t attributes = 0;    ///< FileAttributes
    EntryTimestamp created;          ///< Create* fields
    EntryTimestamp modified;         ///< LastModified* fields
    EntryTimestamp accessed;         ///< LastAccessed* (increment always 0)
    std::uint16_t set_checksum = 0;  ///< SetChecksum as stored
    std::uint16_t set_checksum_computed = 0;
    std::uint8_t secondary_flags = 0;  ///< Stream Extension GeneralSecondaryFlags
    std::uint8_t name_length = 0;      ///< NameLength (UTF-16 units)
    std::uint16_t name_hash = 0;       ///< NameHash as stored
    /// NameHash of the name up-cased through the table given to
    /// parse_directory; nullopt when no table was given.
    std::optional<std::uint16_t> name_hash_computed;
    std::uint64_t valid_data_length = 0;  ///< ValidDataLength, bytes
    std::uint32_t first_cluster = 0;      ///< FirstCluster
    std::uint64_t data_length = 0;        ///< DataLength, bytes
    std::u16string name16;                ///< NameLength units as stored
    /// Units the File Name entries hold before the first U+0000 (all they
    /// hold when none is 0): more than name_length when the entries hold a
    /// longer name than NameLength says.
    std::size_t units_held = 0;
    std::string name;                     ///< UTF-8 (unpaired surrogates become U+FFFD)
    std::vector<BenignSecondary> benign;  ///< vendor / unknown benign secondaries of the set
    bool is_root = false;                 ///< the synthetic record of the root directory

    bool is_directory() const noexcept { return (attributes & kFileAttrDirectory) != 0; }
    bool no_fat_chain() const noexcept { return (secondary_flags & kSecondaryNoFatChain) != 0; }
    bool checksum_ok() const noexcept { return set_checksum == set_checksum_computed; }
    bool name_hash_ok() const noexcept { return !name_hash_computed || *name_hash_computed == name_hash; }
};

/// A structural problem of the entries of a directory; the entries concerned
/// are not returned as a FileRecord.
struct SetAnomaly {
    enum class Kind : std::uint8_t {
        truncated,         ///< SecondaryCount reaches past the directory's end or an end marker
        secondary_count,   ///< SecondaryCount below 2 (a Stream Extension and one File Name are needed)
        no_stream,         ///< the first secondary is not a Stream Extension
        name_length,       ///< NameLength 0, or more than the File Name entries hold
        not_secondary,     ///< an entry inside the set is not an in-use secondary
        orphan_secondary,  ///< an in-use secondary entry outside any set
        unknown_critical,  ///< an in-use critical entry of unknown type: a primary outside any set, or a
                           ///< secondary inside one (the set is then not recognized [EXFAT §8.2])
    };
    Kind kind;
    std::uint32_t index = 0;  ///< entry index where it was noticed
    std::uint8_t entry_type = 0;
    std::string detail;  ///< names the values: "SecondaryCount 1, needs at least 2"
    /// The entries it concerns, from `first`: a set from its File entry (with
    /// the in-use secondaries that follow it, up to its SecondaryCount), a run
    /// of orphan secondaries, or an unknown primary with its secondaries.
    std::uint32_t first = 0;
    std::uint32_t count = 1;
};

/// A root-only system entry or a benign primary found in a directory.
struct SystemEntry {
    std::uint32_t index = 0;
    std::uint8_t entry_type =
        0;                      ///< 0x81 bitmap, 0x82 up-case, 0x83 label, 0xA0 GUID, other benign primaries
    std::uint32_t entries = 1;  ///< the entry and the secondaries that belong to it
};

struct ParsedDirectory {
    std::vector<FileRecord> files;  ///< every structurally complete set, in order (bad checksums included)
    std::vector<SystemEntry> system;
    std::vector<SetAnomaly> anomalies;
    std::uint32_t entries_scanned = 0;  ///< up to and excluding the end-of-directory entry
    bool end_marker = false;            ///< an entry of type 0x00 ended the scan
};

/// Parses directory bytes (a multiple of 32; a partial last entry is ignored)
/// up to the first end-of-directory entry (type 0x00). Unused entries (InUse
/// clear) are skipped. `upcase` is the volume's expanded up-case table (65,536
/// mappings, see expand_upcase_table); when given, each record's
/// name_hash_computed is filled. Never throws except std::bad_alloc; memory
/// is bounded by the input.
ParsedDirectory parse_directory(std::span<const std::byte> bytes, std::span<const char16_t> upcase = {});

/// Each unit mapped through an expanded up-case table (units past its end
/// left as they are) [EXFAT §7.2].
std::u16string upcase_name(std::u16string_view name, std::span<const char16_t> upcase);
/// NameHash [EXFAT §7.6.4] of `name` up-cased through `upcase`: the 16-bit
/// rotate-right-and-add over the up-cased UTF-16LE bytes.
std::uint16_t name_hash(std::u16string_view name, std::span<const char16_t> upcase);

/// A File entry timestamp decoded [EXFAT §7.4.8-7.4.10]: the local time it
/// states (10 ms increments in `local.nanosecond`) and its UTC offset.
struct DecodedTimestamp {
    core::CivilTime local;
    std::optional<int> utc_offset_minutes;  ///< nullopt when OffsetValid is 0
};
/// nullopt when the fields are not a valid time (day 0, month 0 or > 12,
/// hour > 23, minute > 59, DoubleSeconds > 29, increment > 199).
std::optional<DecodedTimestamp> decode_timestamp(const EntryTimestamp& t) noexcept;
/// Unix seconds and nanoseconds the timestamp stands for: its local time
/// minus its UTC offset; when OffsetValid is 0, the local time minus
/// `assumed_offset_minutes`. nullopt when the fields are not a valid time.
std::optional<std::pair<std::int64_t, std::uint32_t>> timestamp_unix(const EntryTimestamp& t,
                                                                     int assumed_offset_minutes = 0) noexcept;
/// "2024-05-01 12:34:56.78 +02:00": the stored local time with hundredths of
/// a second and the UTC offset ("" without OffsetValid); `with_increment`
/// false leaves out the hundredths (LastAccessed has none). "-" when the
/// fields are all 0 (not set); when they are not a valid time, "invalid" and
/// the raw fields ("invalid (0x00215800, 10ms 250)").
std::string timestamp_text(const EntryTimestamp& t, bool with_increment = true);
/// Why the fields are not a valid time ("day 0", "10ms increment 250"...),
/// empty when they are or are all 0 [EXFAT §7.4.8-7.4.9].
std::string timestamp_problem(const EntryTimestamp& t);

}  // namespace fsimg::exfat
