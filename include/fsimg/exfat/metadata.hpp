// The metadata ranges of an exFAT volume (fs/metadata.hpp).
#pragma once

#include <string>
#include <vector>

#include "fsimg/exfat/volume.hpp"
#include "fsimg/fs/metadata.hpp"

namespace fsimg::exfat {

/// Appends to `ranges` the main and backup boot regions (24 sectors), the
/// FATs (NumberOfFats x FatLength sectors at FatOffset), the allocation
/// bitmap's and the up-case table's clusters, and the clusters of every
/// directory reached from the root, each once, at most
/// check::kMaxDirectoryDepth deep; what cannot be read is described in
/// `problems`. Throws Error(io).
void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges, std::vector<std::string>& problems);

}  // namespace fsimg::exfat
