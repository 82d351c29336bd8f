// What the NTFS editor's source files share (include/fsimg/ntfs/edit.hpp).
#pragma once

#include <cstdint>
#include <functional>

#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs::detail {

/// Each in-use record of $MFT that parses, with its number and the base
/// record that owns it (itself for a base record); a record that does not
/// parse is skipped (the check reports it). Throws Error(io).
void for_each_in_use(const Volume& v,
                     const std::function<void(std::uint64_t n, std::uint64_t owner, const MftRecord&)>& each);

}  // namespace fsimg::ntfs::detail
