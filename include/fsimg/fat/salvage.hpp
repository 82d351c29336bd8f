// Salvaging a damaged FAT file (fsimg cat --salvage, extract --salvage):
// writing what is readable of a file whose cluster chain is broken, as the
// rescue tools read it.
//
// A file's data is its chain: ceil(DIR_FileSize / cluster bytes) clusters
// from its first cluster, linked by the FAT [FATGEN "FAT Data Structure"].
// When the chain ends early (an end-of-chain mark, a link into a free
// cluster, an invalid entry, a loop), the clusters before the break are the
// file's. The rest is looked for where the file would have continued (TSK's
// icat and photorec assume the same: files are mostly written contiguously,
// and what breaks is the FAT entry, not the data):
//  1. a lost chain (allocated in the FAT, owned by no file or directory
//     the check reaches) that starts there and holds exactly the clusters
//     still missing: the cut-off tail of the file itself;
//  2. else as many consecutive clusters from there, each free or lost;
//  3. else zeros, so that the bytes after the gap stay at their offsets.
// "There" is the cluster a link to a free cluster names, else the cluster
// after the last one read (the first cluster when none was). A cluster
// that lies past the end of a truncated image reads as zeros.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat {

/// Where a stretch of a salvaged file's bytes came from.
enum class SalvageSource : std::uint8_t {
    chain,       ///< the file's own chain
    lost_chain,  ///< a lost chain of the right length that continues it
    free_run,    ///< consecutive free or lost clusters where it would continue
    zeros,       ///< nothing to read: zeros (a gap, or clusters past the image's end)
};

/// A stretch of the file, in file order.
struct SalvagePiece {
    SalvageSource source = SalvageSource::chain;
    std::uint32_t first_cluster = 0;  ///< the first cluster read (0 for zeros with no cluster)
    std::uint64_t bytes = 0;
};

/// What salvage_file() wrote.
struct Salvage {
    std::vector<SalvagePiece> pieces;
    /// How the chain is damaged ("the chain from cluster 2 ends after 19 of
    /// the 74 clusters its size needs: cluster 20 holds an end-of-chain
    /// mark"); empty when the chain was whole and every cluster readable.
    std::string damage;
    /// True when any byte came from somewhere else than the file's own chain.
    bool salvaged() const noexcept;
    /// "77,824 bytes from its chain (from cluster 2), 222,176 from the lost
    /// chain at cluster 21 that continues it".
    std::string sources() const;
};

/// Streams `file`'s DIR_FileSize bytes (at most the data area's size) to
/// `sink` as described above, in pieces of at most one cluster. `lost`: the
/// volume's lost clusters (fat::CheckOptions::lost), ascending runs; empty
/// when unknown (then only free clusters continue a file). A directory
/// record is read as a file of its chain's length is not: pass files only.
/// Throws Error(io) on read failures of the device, never Error(corrupt).
Salvage salvage_file(const Volume& v, const DirRecord& file, std::span<const ClusterRun> lost,
                     const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::fat
