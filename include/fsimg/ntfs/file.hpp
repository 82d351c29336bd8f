// One file's attributes gathered across MFT records: a base record whose
// $ATTRIBUTE_LIST names attribute extents in other (extension) records has
// them loaded and merged, so that a fragmented $DATA or $INDEX_ALLOCATION
// reads as one Attribute with every run. Volume::follow_mft_extents does the
// same for $MFT itself while the volume opens; this is the general form for
// any file once the volume is open.
//
// Facts: docs/formats.md §3.5 (attribute headers), §3.6
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
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/ntfs/structs.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

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

/// One $DATA stream of a file: the unnamed one (name empty) or an alternate
/// data stream (formats.md §3.5: named $DATA attributes).
struct StreamInfo {
    std::u16string name;
    std::uint64_t size = 0;            ///< data size (logical bytes)
    std::uint64_t allocated_size = 0;  ///< clusters' bytes (non-resident), the value's size (resident)
    bool resident = false;
    std::uint16_t flags = 0;  ///< attribute flags: 0x0001 compressed, 0x4000 encrypted, 0x8000 sparse
};
/// Every $DATA stream of the file (unnamed first, then the named ones in
/// stored order), through load_attribute. Throws as load_attribute.
std::vector<StreamInfo> data_streams(const Volume& volume, const MftRecord& base);

/// Why a stream's bytes cannot be read, or nullopt when they can:
/// compressed (attribute flag 0x0001) in a form NTFS does not write
/// (compression_unsupported(): clusters over 4 KiB, a unit other than 16
/// clusters; ordinary compressed streams are read, compression.hpp),
/// encrypted (flag 0x4000, or $STANDARD_INFORMATION
/// attribute 0x4000: EFS), or a reparse point other than a symbolic link or
/// junction (its data lives elsewhere: e.g. WOF-compressed files
/// 0x80000017, deduplicated files 0x80000013) [FLATCAP attributes/data,
/// reparse_point; MS-FSCC 2.1.2.1 reparse tags].
std::optional<std::string> unreadable_reason(const Volume& volume, const MftRecord& base,
                                             const Attribute& data);

/// Streams stream `name` of the file to `sink` in chunks of at most 1 MiB
/// (sparse runs and bytes past the initialized size as zeros); a compressed
/// non-resident stream is decompressed one compression unit (64 KiB with
/// 4 KiB clusters) per chunk (read_compressed). Throws Error(unsupported)
/// with unreadable_reason(), Error(usage) when the file has no such stream,
/// Error(corrupt) as Volume::read_stream and read_compressed.
void read_data(const Volume& volume, const MftRecord& base, std::u16string_view name,
               const std::function<void(std::span<const std::byte>)>& sink);
/// The same, but the bytes of sparse runs and those at or past the
/// initialized size are not produced as zeros: `hole(bytes)` is called for
/// each such range instead, in order among the data. So a 1 TiB sparse file
/// costs its runs, not a terabyte of zeros (extract writes holes). Compressed
/// streams go through read_compressed (zeros as data).
void read_data_sparse(const Volume& volume, const MftRecord& base, std::u16string_view name,
                      const std::function<void(std::span<const std::byte>)>& sink,
                      const std::function<void(std::uint64_t bytes)>& hole);

/// Reparse tags [MS-FSCC 2.1.2.1].
inline constexpr std::uint32_t kReparseTagSymlink = 0xA000000C;
inline constexpr std::uint32_t kReparseTagMountPoint = 0xA0000003;

/// A symbolic link or junction as stored in $REPARSE_POINT [MS-FSCC 2.1.2.4
/// symbolic link, 2.1.2.5 mount point reparse data buffer]: tag, data
/// length (u16), reserved; then substitute name offset/length, print name
/// offset/length (u16 each, bytes, from the path buffer), symlinks a u32
/// flags (1 = relative), then the path buffer (UTF-16LE).
struct ReparseLink {
    std::uint32_t tag = 0;
    std::u16string substitute_name;  ///< e.g. "\??\C:\dir" or "..\a" as stored
    std::u16string print_name;
    bool relative = false;  ///< symlink flag 1 (SYMLINK_FLAG_RELATIVE)
    /// The target as a POSIX path: a relative target with '\' turned into
    /// '/'; an absolute one as stored with the "\??\" prefix dropped and
    /// '\' turned into '/' (e.g. "C:/dir": it does not resolve on Linux).
    /// Absolute targets that name no drive stay absolute, never relative:
    /// "\??\UNC\srv\share" is "//srv/share" (the POSIX spelling of a UNC
    /// path) and "\??\Volume{GUID}\dir" (a volume GUID path) is
    /// "/??/Volume{GUID}/dir" [MS-FSCC 2.1.2.4; Win32 file namespaces].
    std::string posix_target() const;
};
/// The tag of a $REPARSE_POINT value; nullopt below 8 bytes.
std::optional<std::uint32_t> reparse_tag(std::span<const std::byte> value);
/// Decodes a symlink or mount-point reparse value; nullopt for other tags.
/// Throws FormatError when a name passes the value.
std::optional<ReparseLink> decode_reparse_link(std::span<const std::byte> value);

/// The target of an Interix symbolic link, the form ntfs-3g creates for
/// `ln -s` (and Services for Unix, cifs "sfu"): a file with the system
/// attribute (0x0004) whose unnamed $DATA is "IntxLNK" 0x01 followed by the
/// target in UTF-16LE without a terminator, at most 8 + 2 * 4095 bytes
/// [NTFS-3G; Linux cifs sfu symlinks]. nullopt for any other file; never
/// throws for damage (a file it cannot read is no link).
std::optional<std::string> interix_link_target(const Volume& volume, const MftRecord& base);

}  // namespace fsimg::ntfs
