// What a file tree costs on an exFAT volume, per file and per directory. Pure.
// The slack analyzer predicts with these functions and exFAT populate
// (exfat/populate.hpp) allocates with the same ones, so that prediction ==
// allocation, cluster for cluster, as for FAT (fat/cost.hpp); slack --verify
// and tests/unit/exfat_populate_test.cpp check it.
//
// Facts: docs/formats.md §5.1-5.2 (cost model, [EXP] with
// exfat-fuse), §2.5 (directory entry sets, name rules, 256 MiB directories),
// §2.10 (limits), §2.11 (mkfs.exfat writes label, bitmap and up-case entries
// in the root: 96 bytes; exfat/format.hpp build_root_entries does the same).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fsimg::exfat {

/// Bytes of one directory entry [EXFAT §6].
inline constexpr std::uint32_t kEntryBytes = 32;
/// UTF-16 units in one File Name entry [EXFAT §7.7].
inline constexpr std::uint32_t kNameUnitsPerEntry = 15;
/// Longest file name: 255 UTF-16 units (NameLength is 8 bits) [EXFAT §7.6.3].
inline constexpr std::size_t kMaxNameUnits = 255;
/// Largest directory: 256 MiB (DataLength of a directory) [EXFAT §6.2].
inline constexpr std::uint64_t kMaxDirectoryBytes = 256ull << 20;
/// Entries format writes at the start of the root: Volume Label, Allocation
/// Bitmap, Up-case Table (exfat/format.hpp build_root_entries).
inline constexpr std::uint32_t kRootSystemEntries = 3;

/// 32-byte entries of the entry set of a file or directory whose name has
/// `name_units` UTF-16 units: File + Stream Extension + ceil(units/15) File
/// Name entries [EXFAT §6.3, §7.6, §7.7].
constexpr std::uint32_t entry_set_entries(std::size_t name_units) noexcept {
    return 2 + static_cast<std::uint32_t>((name_units + kNameUnitsPerEntry - 1) / kNameUnitsPerEntry);
}

/// Data clusters of a file of `bytes` bytes: ceil(bytes / cluster_bytes);
/// 0 for an empty file (FirstCluster 0) [EXFAT §7.6.5].
constexpr std::uint64_t file_clusters(std::uint64_t bytes, std::uint32_t cluster_bytes) noexcept {
    return (bytes + cluster_bytes - 1) / cluster_bytes;
}

/// Clusters of a directory holding `entries` 32-byte entries (the root's
/// system entries included): ceil(entries * 32 / cluster_bytes), at least
/// one (a new directory gets one cluster even when empty [EXP]).
constexpr std::uint64_t directory_clusters(std::uint64_t entries, std::uint32_t cluster_bytes) noexcept {
    const std::uint64_t c = (entries * kEntryBytes + cluster_bytes - 1) / cluster_bytes;
    return c == 0 ? 1 : c;
}

/// Why `utf16` cannot be an exFAT file name, or nullopt when it can [EXFAT
/// §7.7.3]: empty; "." or ".."; more than 255 units; a unit below U+0020 or
/// one of " * / : < > ? \ |. (Trailing periods and spaces are legal on disk.)
std::optional<std::string> name_problem(std::u16string_view utf16);

/// The key under which two names collide in one directory: each unit mapped
/// through the recommended up-case table (what format writes) [EXFAT §7.2].
std::u16string upcase_key(std::u16string_view utf16);

}  // namespace fsimg::exfat
