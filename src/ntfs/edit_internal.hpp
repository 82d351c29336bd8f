// What the NTFS editor's source files share (include/fsimg/ntfs/edit.hpp).
#pragma once

#include <cstdint>
#include <functional>

#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs::detail {

// Attribute bytes besides the entries [FLATCAP concepts/attribute_header,
// attributes/index_root], formats.md §3.5, §3.8: $INDEX_ROOT "$I30" is a
// 24-byte resident header, the 8-byte name, the 16-byte root header and the
// 16-byte node header; $INDEX_ALLOCATION "$I30" a 64-byte non-resident
// header, the name and the runlist; $BITMAP "$I30" 24 + 8 and the value.
inline constexpr std::int64_t kRootFixed = 24 + 8 + 16 + 16;
inline constexpr std::int64_t kAllocationFixed = 64 + 8;
inline constexpr std::int64_t kBitmapFixed = 24 + 8;
/// An end entry without and with a sub-node VCN [FLATCAP concepts/index_entry].
inline constexpr std::int64_t kEndEntry = 16, kEndEntryWithChild = 24;
/// MFT record header fields [FLATCAP concepts/file_record].
inline constexpr std::size_t kBytesInUse = 0x18;
inline constexpr std::size_t kAttrInstance = 0x0E;  ///< in an attribute header
inline constexpr std::size_t kNodeFlags =
    0x18 + 0x0C;  ///< an INDX block's node header flags: 0x01 has sub-nodes

/// $INDEX_ROOT, $INDEX_ALLOCATION or $BITMAP named "$I30": a directory's index.
inline bool is_i30(const Attribute& a) {
    return (a.kind() == AttrType::index_root || a.kind() == AttrType::index_allocation ||
            a.kind() == AttrType::bitmap) &&
           a.name == u"$I30";
}

/// Each in-use record of $MFT that parses, with its number and the base
/// record that owns it (itself for a base record); a record that does not
/// parse is skipped (the check reports it). Throws Error(io).
void for_each_in_use(const Volume& v,
                     const std::function<void(std::uint64_t n, std::uint64_t owner, const MftRecord&)>& each);

}  // namespace fsimg::ntfs::detail
