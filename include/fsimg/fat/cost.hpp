// What a file tree costs on a FAT volume, per file and per directory. Pure.
// populate allocates exactly this, and the slack analyzer predicts with it:
// both call these functions, so prediction == allocation, cluster for cluster.
//
// Facts: docs/formats.md §5.1-5.2 (cost model, [EXP] on mkfs.fat +
// mtools images), §1.7 (root directory), §1.8 (65,536 entries per directory),
// §1.11 (4 GiB - 1 per file).
#pragma once

#include <cstdint>
#include <string_view>

namespace fsimg::fat {

/// Largest file: DIR_FileSize is 32 bits, 0xFFFFFFFF = 4 GiB - 1 bytes [FATGEN].
inline constexpr std::uint64_t kMaxFileBytes = 0xFFFFFFFF;
/// Most 32-byte entries one directory may hold, "." and ".." included
/// (2 MiB) [FATGEN].
inline constexpr std::uint32_t kMaxDirectoryEntries = 65536;
/// "." and ".." in every subdirectory.
inline constexpr std::uint32_t kDotEntries = 2;

/// 32-byte directory entries a child named `name` (UTF-16) adds to its
/// parent: the short entry, plus ceil(units/13) LFN entries unless the name
/// is stored as a short name alone (plain_short_name: legal 8.3, each part
/// all upper or all lower case; Windows / mtools rule). Linux vfat's default
/// mount writes an LFN for lower-case names too, so a tree it copies may cost
/// more; this is what fsimg writes.
std::uint32_t name_entry_count(std::u16string_view name);

/// Data clusters of a file of `bytes` bytes: ceil(bytes / cluster_bytes);
/// 0 for an empty file (first cluster 0, no chain).
constexpr std::uint64_t file_clusters(std::uint64_t bytes, std::uint32_t cluster_bytes) noexcept {
    return (bytes + cluster_bytes - 1) / cluster_bytes;
}

/// Entries of a subdirectory whose children need `child_entries` entries:
/// "." and ".." come first.
constexpr std::uint64_t subdirectory_entries(std::uint64_t child_entries) noexcept {
    return kDotEntries + child_entries;
}

/// Clusters of a directory (subdirectory, or the FAT32 root) holding
/// `entries` 32-byte entries: ceil(entries * 32 / cluster_bytes), at least one
/// (an empty directory still has one zero-filled cluster). FAT12/16 roots do
/// not use clusters: they have a fixed number of entries instead.
constexpr std::uint64_t directory_clusters(std::uint64_t entries, std::uint32_t cluster_bytes) noexcept {
    const std::uint64_t c = (entries * 32 + cluster_bytes - 1) / cluster_bytes;
    return c == 0 ? 1 : c;
}

}  // namespace fsimg::fat
