// The metadata ranges of a FAT volume (fs/metadata.hpp).
#pragma once

#include <string>
#include <vector>

#include "fsimg/core/scramble.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/fs/metadata.hpp"

namespace fsimg::fat {

/// Appends to `ranges` everything before cluster 2 (reserved sectors, FATs,
/// the FAT12/16 root) and the clusters of every directory reached from the
/// root (live entries, and those the Linux driver reads after an end
/// marker), each directory once, at most check::kMaxDirectoryDepth deep; a
/// directory that cannot be read is described in `problems`. With
/// `scramble`, each directory's bytes with scramble_names() applied are
/// appended to `patches`. Throws Error(io).
void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges, std::vector<std::string>& problems,
                     const core::NameScrambler* scramble = nullptr,
                     std::vector<fs::Patch>* patches = nullptr);

/// Replaces the names in a directory's bytes (a multiple of 32) with made-up
/// ones: each file's and directory's short name (base letters and digits,
/// the extension kept) and long name (NameScrambler: same length and
/// extension), unique in the directory against each other's short and long
/// names (ASCII case folded), the long-name entries written again with the
/// new short name's checksum; the characters of every other long-name entry
/// (orphans, deleted) and of deleted short entries replaced in place, so
/// that a checksum or sequence that was wrong stays wrong. "." and "..",
/// the volume label and free entries are kept. `salt` tells directories
/// apart [FATGEN "FAT Long Directory Entries"].
void scramble_names(std::span<std::byte> bytes, const core::NameScrambler& scramble, std::uint64_t salt);

}  // namespace fsimg::fat
