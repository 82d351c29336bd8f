// The metadata ranges of an exFAT volume (fs/metadata.hpp).
#pragma once

#include <string>
#include <vector>

#include "fsimg/core/scramble.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/fs/metadata.hpp"

namespace fsimg::exfat {

/// Appends to `ranges` the main and backup boot regions (24 sectors), the
/// FATs (NumberOfFats x FatLength sectors at FatOffset), the allocation
/// bitmap's and the up-case table's clusters, and the clusters of every
/// directory reached from the root, each once, at most
/// check::kMaxDirectoryDepth deep; what cannot be read is described in
/// `problems`. With `scramble`, each directory's bytes with
/// scramble_names() applied are appended to `patches`. Throws Error(io).
void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges, std::vector<std::string>& problems,
                     const core::NameScrambler* scramble = nullptr,
                     std::vector<fs::Patch>* patches = nullptr);

/// Replaces the name of every File entry set in a directory's bytes with a
/// made-up one of the same length and extension (NameScrambler), unique in
/// the directory through `upcase`; a set whose SetChecksum held gets its
/// NameHash (when it held) and SetChecksum computed again, one whose
/// checksum was wrong keeps it wrong. A deleted set whose checksum still
/// holds (parse_deleted) gets a made-up name and its checksum computed again
/// as it was (with InUse set), so it stays a deleted file to list and read;
/// the units of other deleted File Name entries are replaced in place. `salt` tells directories apart [EXFAT
/// §6.3.3, §7.6.4, §7.7].
void scramble_names(std::span<std::byte> bytes, std::span<const char16_t> upcase,
                    const core::NameScrambler& scramble, std::uint64_t salt);

}  // namespace fsimg::exfat
