// The metadata ranges of a FAT volume (fs/metadata.hpp).
#pragma once

#include <string>
#include <vector>

#include "fsimg/fat/volume.hpp"
#include "fsimg/fs/metadata.hpp"

namespace fsimg::fat {

/// Appends to `ranges` everything before cluster 2 (reserved sectors, FATs,
/// the FAT12/16 root) and the clusters of every directory reached from the
/// root (live entries, and those the Linux driver reads after an end
/// marker), each directory once, at most check::kMaxDirectoryDepth deep; a
/// directory that cannot be read is described in `problems`. Throws
/// Error(io).
void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges, std::vector<std::string>& problems);

}  // namespace fsimg::fat
