// Salvaging a damaged file (fsimg cat --salvage, extract --salvage): the
// filesystem-neutral part. A filesystem reader (fat/salvage.hpp,
// exfat/salvage.hpp) follows the file's own allocation as far as it holds
// and says what it found; this part writes those clusters and looks for
// the rest where the file would have continued, as the rescue tools do
// (TSK's icat and photorec: files are mostly written in one run, and what
// breaks is the allocation's metadata, not the data):
//  1. a lost chain (allocated, owned by nothing the check reaches) that
//     starts there and holds exactly the clusters still missing: the
//     cut-off tail of the file itself;
//  2. else as many consecutive clusters from there, each free or lost;
//  3. else zeros, so that the bytes after the gap keep their offsets.
// A cluster that lies past the end of a truncated image reads as zeros.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"

namespace fsimg::check {

/// Where a stretch of a salvaged file's bytes came from.
enum class SalvageSource : std::uint8_t {
    chain,        ///< the file's own allocation (chain or extent)
    lost_chain,   ///< a lost chain of the right length that continues it
    free_run,     ///< consecutive free or lost clusters where it would continue
    zeros,        ///< nothing to read: zeros (a gap, or clusters past the image's end)
    unmapped,     ///< NTFS: VCNs the runlist does not map: zeros
    outside,      ///< NTFS: a run whose clusters lie outside the volume: zeros
    undecodable,  ///< NTFS: a compression unit whose LZNT1 data does not decompress: zeros
};

/// A stretch of the file, in file order.
struct SalvagePiece {
    SalvageSource source = SalvageSource::chain;
    /// The first cluster read; for zeros, the first cluster past the
    /// image's end, or 0 for a gap nothing continued.
    std::uint64_t first_cluster = 0;
    std::uint64_t bytes = 0;
};

/// What a salvage wrote.
struct Salvage {
    std::vector<SalvagePiece> pieces;
    /// What is wrong with the file's allocation ("the chain from cluster 2
    /// ends after 19 of the 74 clusters its size needs: cluster 20 holds an
    /// end-of-chain mark"); empty when it was whole and every cluster readable.
    std::string damage;
    /// True when any byte came from elsewhere than the file's own allocation.
    bool salvaged() const noexcept;
    /// "77,824 bytes from its chain at cluster 2, 222,176 bytes from the lost
    /// chain at cluster 21".
    std::string sources() const;
};

/// A run of consecutive clusters.
struct SalvageRun {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
};

/// What the filesystem knows of the file and its volume.
struct SalvageInput {
    std::uint64_t cluster_bytes = 0;
    /// Bytes to write: the file's size, at most the volume's data area.
    std::uint64_t bytes = 0;
    /// Bytes from the start that are read; the rest of `bytes` is written as
    /// zeros without reading (exFAT ValidDataLength [EXFAT §7.6.4]).
    std::uint64_t read_bytes = 0;
    /// The file's own clusters in order, as far as its allocation holds.
    std::vector<SalvageRun> own;
    /// When `own` falls short: what broke (SalvageInput::damage goes first
    /// into Salvage::damage) and the cluster the file would continue at.
    std::string damage;
    std::optional<std::uint64_t> next;
    /// Cluster n is a cluster of the volume.
    std::function<bool(std::uint64_t)> is_cluster;
    /// Cluster n is lost (allocated, owned by nothing).
    std::function<bool(std::uint64_t)> lost;
    /// Cluster n is free or lost.
    std::function<bool(std::uint64_t)> unowned;
    /// The chain from lost cluster n when it holds exactly `count` clusters
    /// and ends there, each of them lost; nullopt otherwise (or when the
    /// filesystem has no chains to follow).
    std::function<std::optional<std::vector<SalvageRun>>(std::uint64_t n, std::uint64_t count)> lost_chain;
    /// Byte offset of cluster n on the device.
    std::function<std::uint64_t(std::uint64_t)> cluster_offset;
    std::uint64_t device_bytes = 0;
    /// Reads `out.size()` bytes at a device offset (throws Error(io)).
    std::function<void(std::uint64_t, std::span<std::byte>)> read_at;
};

// ---- for the filesystems' readers (fat::Volume, exfat::Volume: their
// ClusterRun, Chain and ChainEnd have the same members)

/// True when cluster n lies in one of the ascending runs.
template <class Run>
bool in_runs(std::span<const Run> runs, std::uint64_t n) {
    std::size_t lo = 0, hi = runs.size();  // the first run starting after n
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (runs[mid].first <= n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && n - runs[lo - 1].first < runs[lo - 1].count;
}

/// v.follow_chain(start, max), a FAT entry that cannot be read (past the
/// image's end) ending the chain as invalid. Throws Error(io).
template <class Volume>
auto chain_or_invalid(const Volume& v, std::uint32_t start, std::uint64_t max) {
    try {
        return v.follow_chain(start, max);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        decltype(v.follow_chain(start, max)) c;
        c.end = decltype(c.end)::invalid;
        c.stop_value = start;
        return c;
    }
}

/// SalvageInput::lost_chain over a volume and its lost runs: the chain from
/// n when it holds exactly `count` clusters up to its end-of-chain mark,
/// each of them lost.
template <class Volume, class Run>
std::optional<std::vector<SalvageRun>> exact_lost_chain(const Volume& v, std::span<const Run> lost,
                                                        std::uint64_t n, std::uint64_t count) {
    const auto t = chain_or_invalid(v, static_cast<std::uint32_t>(n), count + 1);
    if (t.clusters != count || t.end != decltype(t.end)::end_of_chain) return std::nullopt;
    std::vector<SalvageRun> runs;
    for (const auto& r : t.runs) {
        for (std::uint32_t i = 0; i < r.count; ++i)
            if (!in_runs(lost, std::uint64_t{r.first} + i)) return std::nullopt;
        runs.push_back({r.first, r.count});
    }
    return runs;
}

/// The parts of SalvageInput a volume answers alone: cluster_bytes,
/// is_cluster, cluster_offset, device_bytes, read_at (`v` must outlive `in`).
template <class Volume>
void describe_volume(SalvageInput& in, const Volume& v) {
    in.cluster_bytes = v.cluster_bytes();
    in.is_cluster = [&v](std::uint64_t n) { return v.is_cluster(n); };
    in.cluster_offset = [&v](std::uint64_t n) { return v.cluster_offset(static_cast<std::uint32_t>(n)); };
    in.device_bytes = v.device().size();
    in.read_at = [&v](std::uint64_t at, std::span<std::byte> out) { v.device().read_at(at, out); };
}

/// Streams the file described by `in` to `sink` in pieces of at most one
/// cluster, as the header says. Throws what read_at throws.
Salvage salvage_stream(const SalvageInput& in, const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::check
