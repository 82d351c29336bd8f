// NTFS compressed attributes (attribute flag 0x0001): the stream is cut into
// compression units of 2^compression_unit clusters (always 4, i.e. 16
// clusters: 64 KiB with 4 KiB clusters), each stored one of three ways
// [FLATCAP concepts/compression; NTFS-3G compress.c; TSK ntfs.c]:
// - every cluster of the unit sparse: the unit reads as zeros;
// - every cluster allocated: the unit is stored as is (compression did
//   not save a cluster);
// - some clusters allocated, the rest sparse: the allocated clusters, in
//   VCN order, hold the LZNT1 chunks (lznt1.hpp) of the unit's bytes.
// Compression exists only with clusters up to 4 KiB [formats.md §3.1:
// KB140365]. Bytes at or past the initialized size read as zeros, bytes
// past the data size are not returned.
//
// Memory: one unit's stored clusters and one unit's output (64 KiB each
// with 4 KiB clusters), whatever the stream's size.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

/// The only compression unit NTFS writes (log2 clusters) and the largest
/// cluster size compression exists for.
inline constexpr std::uint16_t kCompressionUnitLog2 = 4;
inline constexpr std::uint32_t kMaxCompressedClusterBytes = 4096;

/// How one compression unit is stored (pure: from the runs alone).
struct UnitPlan {
    enum class Kind : std::uint8_t { sparse, stored, compressed };
    Kind kind = Kind::sparse;
    /// The allocated clusters of the unit in VCN order, as (LCN, count)
    /// extents, adjacent ones merged.
    struct Extent {
        std::uint64_t lcn = 0;
        std::uint64_t clusters = 0;
        friend bool operator==(const Extent&, const Extent&) = default;
    };
    std::vector<Extent> extents;
    std::uint64_t allocated = 0;  ///< clusters in `extents`
    /// The first VCN of the unit no run maps (counted as sparse), if any.
    std::optional<std::uint64_t> first_unmapped;
};

/// Classifies the unit of `unit_clusters` clusters starting at VCN
/// `first_vcn` from `runs` (sorted by VCN, as Attribute::runs): no
/// allocated cluster = sparse, all allocated = stored, else compressed.
/// VCNs no run maps count as sparse and first_unmapped names the first.
/// At most one step per run plus one per unit.
UnitPlan plan_compression_unit(std::span<const MappedRun> runs, std::uint64_t first_vcn,
                               std::uint64_t unit_clusters);

/// Why a compressed non-resident attribute cannot be read, or nullopt when
/// it can: a compression unit other than 2^4 clusters, or clusters over
/// 4 KiB (neither Windows nor NTFS-3G writes them).
std::optional<std::string> compression_unsupported(const Volume& volume, const Attribute& attr);

/// One compression unit of a compressed attribute, read and decompressed
/// (read_compression_unit).
struct UnitRead {
    enum class Status : std::uint8_t {
        ok,          ///< `out` holds the unit's bytes
        unmapped,    ///< a VCN holding data is not mapped by the runs
        outside,     ///< a run of the unit passes the volume's last cluster
        past_image,  ///< its clusters lie past the end of a truncated image
        corrupt,     ///< its LZNT1 data does not decode
    };
    Status status = Status::ok;
    /// Not ok: what is wrong, naming the record, the attribute, the unit's
    /// first VCN (and for corrupt the volume byte of the bad chunk).
    std::string why;
    std::optional<std::uint64_t> volume_byte;  ///< corrupt: the bad chunk's byte
    /// The unit's first allocated cluster (0 for a sparse unit); outside:
    /// the run's first cluster; past_image: the first cluster past the image.
    std::uint64_t lcn = 0;
};

/// Reads unit number `unit` (VCNs unit * 16 ..) of compressed attribute `a`
/// (compression_unsupported() must be nullopt) into `out` (one unit's
/// bytes: 16 clusters), of which the first `needed` bytes are the stream's
/// (the last unit is cut at the data size): a sparse unit as zeros, a
/// stored one as it is, a compressed one decompressed (LZNT1), through
/// `scratch`. Checks each cluster against the volume and the image, so that
/// damage is a status, not an exception. Throws Error(io) from the device.
UnitRead read_compression_unit(const Volume& volume, const Attribute& a, std::uint64_t unit,
                               std::uint64_t needed, std::span<std::byte> out,
                               std::vector<std::byte>& scratch);

/// Streams the logical bytes of a compressed non-resident attribute (flag
/// 0x0001) to `sink`, one compression unit per call (the last one cut at
/// the data size; nothing for an empty stream). Throws Error(unsupported)
/// with compression_unsupported(); Error(corrupt) naming the record, the
/// attribute, the unit's first VCN and the volume byte of the bad chunk when
/// a VCN holding data is not mapped by the runs, a run leaves the volume or
/// the LZNT1 data does not decode; Error(io) from the device.
void read_compressed(const Volume& volume, const Attribute& attr,
                     const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::ntfs
