// Writes an empty NTFS volume from a Layout, and the pure builders of the
// system files' contents ($AttrDef, $Secure streams and indexes, $Quota).
//
// What is written and why: formats.md §3.2-3.9 and docs/ntfs-notes.md (every
// intended difference from mkntfs).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/layout.hpp"

namespace fsimg::ntfs {

/// The standard $AttrDef table of NTFS 3.x: 15 definitions of 160 bytes
/// (name, type, display rule, collation, flags, minimum and maximum size)
/// padded with zeros to kAttrDefBytes. Identical to mkntfs' table (formats.md §3.2).
std::vector<std::byte> build_attrdef();

/// Security ids of the descriptors format writes into $Secure (ids start at
/// 0x100, formats.md §3.9).
inline constexpr std::uint32_t kSecurityIdSystem = 0x100;    ///< read-only system files
inline constexpr std::uint32_t kSecurityIdSystemRw = 0x101;  ///< $Volume, $Secure, $Extend and children
inline constexpr std::uint32_t kSecurityIdRoot = 0x102;      ///< root directory, inherited by new files

/// The self-relative security descriptor for a security id above.
std::vector<std::byte> security_descriptor(std::uint32_t security_id);
/// NTFS security descriptor hash: for every 32-bit little-endian word,
/// hash = rotl(hash, 3) + word [FLATCAP files/secure; checked against mkntfs].
std::uint32_t security_hash(std::span<const std::byte> descriptor) noexcept;

/// $Secure contents: the $SDS stream (entries 16-aligned, the first 256 KiB
/// block mirrored at +256 KiB) and the sorted entries of the $SDH and $SII
/// index roots (each ending with an end entry).
struct SecureStreams {
    std::vector<std::byte> sds;
    std::vector<std::byte> sdh_entries;
    std::vector<std::byte> sii_entries;
};
SecureStreams build_secure_streams();
/// The $SDS data size build_secure_streams() produces (for plan_layout).
std::uint64_t secure_sds_bytes();

struct FormatOptions {
    std::uint64_t volume_serial_number = 0;
    std::u16string label;                 ///< at most 128 UTF-16 units
    std::uint64_t creation_filetime = 0;  ///< stamped on every system file (100 ns since 1601)
    /// True when the device reads as zeros (a fresh sparse file): only the
    /// non-zero metadata is written. False: every system file's clusters and
    /// the records are written in full.
    bool device_is_zeroed = true;
};

/// Writes the boot sector and its backup (last sector), every $MFT record
/// (0..15 and 24..26 in use, the rest free and formatted), $MFTMirr,
/// $LogFile (0xFF-filled, "empty" to every driver, as mkntfs leaves it), $AttrDef, the root index block,
/// $Bitmap, $UpCase and $Secure:$SDS. Memory stays bounded (the $Bitmap is written from its set bytes only).
/// Before writing, decodes the boot sector it built and checks it describes `layout`; throws
/// Error(unsupported) on mismatch, Error(usage) for a bad label or a device smaller than the layout,
/// Error(io) on write failures.
void format_volume(io::BlockDevice& device, const Layout& layout, const FormatOptions& options);

}  // namespace fsimg::ntfs
