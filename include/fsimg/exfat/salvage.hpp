// Salvaging a damaged exFAT file (fsimg cat --salvage, extract --salvage):
// what is readable of a file whose allocation is broken, the rest looked
// for where the file would have continued (check/salvage.hpp).
//
// A file's data is ceil(DataLength / cluster bytes) clusters from
// FirstCluster: consecutive when NoFatChain is set, else linked by the FAT
// [EXFAT §7.6.5, §4.1]; only the bytes up to ValidDataLength are read, the
// rest are zeros [EXFAT §7.6.4]. A NoFatChain extent is read as far as the
// cluster heap goes (clusters past the image's end as zeros); a FAT chain
// that ends early (an end-of-chain mark, a bad-cluster mark, an invalid
// value, a loop) is continued at the cluster after the last one read (the
// first cluster when none was). Free means clear in the allocation bitmap
// [EXFAT §7.1.5].
#pragma once

#include <functional>
#include <span>

#include "fsimg/check/salvage.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/volume.hpp"

namespace fsimg::exfat {

/// Streams `file`'s DataLength bytes (at most the cluster heap's size) to
/// `sink` as check::salvage_stream does. `lost`: the volume's lost clusters
/// (exfat::CheckOptions::lost), ascending runs; empty when unknown (then
/// only free clusters continue a file). For files. Throws Error(io) on read
/// failures of the device, never Error(corrupt).
check::Salvage salvage_file(const Volume& v, const FileRecord& file, std::span<const ClusterRun> lost,
                            const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::exfat
