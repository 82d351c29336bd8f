// Salvaging a damaged FAT file (fsimg cat --salvage, extract --salvage):
// what is readable of a file whose cluster chain is broken, the rest looked
// for where the file would have continued (check/salvage.hpp).
//
// A file's data is its chain: ceil(DIR_FileSize / cluster bytes) clusters
// from its first cluster, linked by the FAT [FATGEN "FAT Data Structure"].
// When the chain ends early (an end-of-chain mark, a link into a free
// cluster, an invalid entry, a bad-cluster mark, a loop), the clusters
// before the break are the file's; it would have continued at the cluster a
// link into a free cluster names, else at the one after the last cluster
// read (the first cluster when none was). Free means FAT entry 0 in FAT 1.
#pragma once

#include <functional>
#include <span>

#include "fsimg/check/salvage.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat {

/// Streams `file`'s DIR_FileSize bytes (at most the data area's size) to
/// `sink` as check::salvage_stream does. `lost`: the volume's lost clusters
/// (fat::CheckOptions::lost), ascending runs; empty when unknown (then only
/// free clusters continue a file). For files (a directory's entry has no
/// size). Throws Error(io) on read failures of the device, never
/// Error(corrupt).
check::Salvage salvage_file(const Volume& v, const DirRecord& file, std::span<const ClusterRun> lost,
                            const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::fat
