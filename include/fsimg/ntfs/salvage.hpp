// Salvaging a damaged NTFS stream (fsimg cat --salvage, extract --salvage):
// every run that can be read, zeros for what cannot (check/salvage.hpp).
//
// A non-resident stream's bytes are its runlist's runs in VCN order, sparse
// runs and bytes past the initialized size reading as zeros [FLATCAP
// concepts/data_runs, attributes/data]. Damage is a run whose clusters lie
// outside the volume (a corrupted LCN), VCNs below the stream's size that no
// run maps, or clusters past the end of a truncated image: each such range
// is written as zeros, so that the rest keeps its offsets; NTFS has no
// chains to follow into lost clusters. A compressed stream is salvaged by
// compression unit (16 clusters): a unit whose runs cannot be read or
// whose LZNT1 data does not decode is written as zeros.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "fsimg/check/salvage.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

/// Streams stream `name` of the file (read_data's units and pieces of at
/// most 1 MiB) as described above; a resident or sound stream reads as
/// read_data reads it, with no damage. Throws Error(unsupported) for a
/// compressed stream NTFS does not write (compression_unsupported) and as
/// read_data for what cannot be read
/// at all (encrypted, other reparse points), Error(usage) when the file has
/// no such stream, Error(corrupt) when the record or its $ATTRIBUTE_LIST
/// cannot be decoded (there is no runlist to follow), Error(io) on read
/// failures.
check::Salvage salvage_data(const Volume& volume, const MftRecord& base, std::u16string_view name,
                            const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::ntfs
