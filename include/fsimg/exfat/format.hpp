// Writes an empty exFAT filesystem from a Layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fsimg/exfat/layout.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat {

struct FormatOptions {
    std::uint32_t volume_serial_number = 0;  ///< VolumeSerialNumber [EXFAT §3.1.11]
    /// UTF-8 as given by the user; "" = a Volume Label entry with
    /// CharacterCount 0, as mkfs.exfat writes. (The root may also hold none
    /// [EXFAT §7.3], but then sleuthkit 4.11's fsstat loops forever and
    /// dump.exfat 1.2.0 misreads the root; see docs/exfat-defaults.md.)
    std::string label;
    /// True when the device already reads as zeros (a fresh sparse file): only
    /// the non-zero metadata is written. False (a reused device): the boot
    /// regions, the FAT region and the system clusters are zeroed first.
    bool device_is_zeroed = true;
};

/// The 12 sectors of a boot region [EXFAT §3]: boot sector (BootCode 0xF4),
/// 8 extended boot sectors (zeros + signature AA550000 at each sector's end),
/// OEM parameters (10 null parameter structures: zeros), reserved (zeros),
/// and the boot checksum sector. Main and backup regions are identical.
/// Pure: 12 * layout.bytes_per_sector bytes.
std::vector<std::byte> build_boot_region(const Layout& layout, std::uint32_t volume_serial_number);

/// The first bytes of the root directory's cluster: the Volume Label entry
/// (CharacterCount 0 for an empty label), the Allocation Bitmap and the
/// Up-case Table entries, in that order (mkfs.exfat's order; dump.exfat
/// 1.2.0 reads them by position). Throws
/// Error(usage) for an invalid label (see volume_label_entry_from_utf8).
std::vector<std::byte> build_root_entries(const Layout& layout, const std::string& label);

/// Writes the allocation bitmap's leading bits [EXFAT §7.1.5]: one set bit
/// for each of clusters 2 .. 2 + used_clusters - 1 (bytes up to the last
/// such bit; the bits after it in that byte 0), in buffers of at most 1 MiB.
/// The rest of the bitmap is not written. Used by format_volume (the system
/// objects) and exFAT populate (everything it allocated after them).
void write_allocation_bitmap(io::BlockDevice& device, const Layout& layout, std::uint64_t used_clusters);

/// Writes the main and backup boot regions, the FAT (entries 0 and 1 and the
/// chains of the bitmap, up-case table and root), the allocation bitmap (its
/// first bits set for those clusters; the rest left as holes on a zeroed
/// device), the up-case table and the root directory. Memory stays bounded
/// (buffers of at most 1 MiB) whatever the volume size.
///
/// Before writing anything it decodes the boot sector it built, validates it
/// with validate_boot_sector and checks it describes `layout`; throws
/// Error(unsupported) on any mismatch (nothing written), Error(usage) for a
/// bad label or when the device is smaller than layout.volume_bytes(),
/// Error(io) on write failures.
void format_volume(io::BlockDevice& device, const Layout& layout, const FormatOptions& options);

}  // namespace fsimg::exfat
