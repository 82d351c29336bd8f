// One file's attributes gathered across MFT records: a base record whose
// $ATTRIBUTE_LIST names attribute extents in other (extension) records has
// them loaded and merged, so that a fragmented $DATA or $INDEX_ALLOCATION
// reads as one Attribute with every run. Volume::follow_mft_extents does the
// same for $MFT itself while the volume opens; this is the general form for
// any file once the volume is open.
//
// Facts: ../shared/docs/formats.md §3.5 (attribute headers), §3.6
// (runlists); the attribute list [FLATCAP attributes/attribute_list]: one
// entry per attribute extent, naming its type, name, starting VCN and the
// record holding it; an extension record's header names its base record
// (the base reference at 0x20) [FLATCAP concepts/file_record].
//
// Hostile input: the list is read only up to kMaxAttributeListBytes, every
// extension record is read once per list entry (so at most list / 24
// records), each extent must begin at the VCN where the runs so far end
// (the merged runs only grow, the walk ends), and an extension must name
// the base record as its base.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fsimg/ntfs/structs.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

/// Largest $ATTRIBUTE_LIST read (bytes). A list this long names over 10,000
/// extents; a longer one is refused rather than allocated.
inline constexpr std::uint64_t kMaxAttributeListBytes = 256 * 1024;

/// The attribute of `type` and `name` (exact UTF-16 units) of the file whose
/// base record is `base`, or nullopt when the file has none. Without an
/// $ATTRIBUTE_LIST this is a copy of base.find(type, name). With one, every
/// extent the list names (in the base record or in extension records) is
/// read; for a non-resident attribute the extents' runs are appended in VCN
/// order to the first extent (VCN 0, which holds the sizes) and last_vcn is
/// the last extent's. A resident attribute named in the list is returned
/// from the record holding it.
///
/// Throws Error(corrupt) naming the base record when: the list is longer
/// than kMaxAttributeListBytes or does not decode; a named record is past
/// $MFT, not in use, does not name `base` as its base record or holds no
/// such attribute starting at the named VCN; the extents do not start at
/// VCN 0 or one does not start where the runs so far end (a gap, an overlap,
/// a loop); a run leaves the volume (Volume::check_runs). Errors from
/// Volume::read_record and read_stream pass through.
std::optional<Attribute> load_attribute(const Volume& volume, const MftRecord& base, AttrType type,
                                        std::u16string_view name = u"");

/// Every (type, name) pair of the file, as the base record and its
/// $ATTRIBUTE_LIST (when present) name them, each once, in the list's order
/// (type, then name). Throws as load_attribute when the list is damaged.
struct AttributeKey {
    std::uint32_t type = 0;
    std::u16string name;
    friend bool operator==(const AttributeKey&, const AttributeKey&) = default;
};
std::vector<AttributeKey> list_attributes(const Volume& volume, const MftRecord& base);

}  // namespace fsimg::ntfs
