// Which filesystem a volume holds: the one detector every command uses.
//
// The face of the filesystem-neutral layer (docs/architecture.md) is four
// verbs over one adapter per filesystem (src/fs/adapters.hpp, the opener
// table, in the manner of The Sleuth Kit's fs_open table): detect (here),
// open_view (fs/view.hpp), check_volume (fs/check.hpp) and make_image
// (fs/make.hpp). Nothing above it names a filesystem to read one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fsimg/io/block_device.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::fs {

/// The filesystems fsimg reads, checks and makes.
enum class Kind : std::uint8_t { fat, exfat, ntfs };
inline constexpr std::size_t kKindCount = 3;
/// "fat", "exfat", "ntfs": the "filesystem" member of every --json output.
std::string_view name(Kind kind) noexcept;
/// "FAT", "exFAT", "NTFS": for messages.
std::string_view label(Kind kind) noexcept;

/// How a probe recognised its filesystem, strongest last.
enum class Certainty : std::uint8_t {
    /// Sector 0 has only the FAT jump (EB xx 90 or E9); its BPB gives no
    /// geometry and no backup boot sector is valid: a damaged FAT volume.
    weak = 1,
    /// Sector 0 is not the filesystem's, a valid backup boot sector is
    /// (FAT32 sector 6, exFAT's backup boot region at sector 12, NTFS's last
    /// sector): a volume whose main boot sector is damaged.
    backup = 2,
    /// Sector 0 carries the filesystem's signature: "EXFAT   " or
    /// "NTFS    " at byte 3, or a FAT jump and a BPB whose geometry derives.
    signature = 3,
};

/// What detect() found.
struct Detection {
    Kind kind = Kind::fat;
    Certainty certainty = Certainty::signature;
    /// The readers must take the boot sector from its backup: sector 0 is
    /// damaged (FAT, NTFS) and `backup_offset` holds a valid copy. exFAT
    /// readers fall back to the backup boot region themselves (false there).
    bool through_backup = false;
    std::uint64_t backup_offset = 0;  ///< bytes into the volume, when through_backup
    /// What the readers warn about once: why sector 0 is not used and where
    /// the backup stands; empty unless through_backup.
    std::string note;
};

/// Tries every filesystem's probe (the opener table) on the volume (a whole
/// image or a partition window) and returns the strongest match. Reads at
/// most a few sectors per filesystem. Throws Error(corrupt) when two
/// filesystems match equally strongly (two valid backup boot sectors of
/// different filesystems: nothing says which to trust), Error(not_this_fs)
/// when none matches, its message naming what the volume holds instead
/// (foreign_content), Error(io) when the device cannot be read.
Detection detect(const io::BlockDevice& volume);

/// detect() without the refusal: nullopt when no filesystem matches.
/// Throws Error(corrupt) for two equal matches and Error(io) as detect().
std::optional<Detection> probe(const io::BlockDevice& volume);

/// The device a filesystem's own reader (fat::Volume, ntfs::Volume, ...) is
/// given for `volume`: the volume itself, or with d.through_backup a
/// read-only view of it whose sector 0 reads as the backup boot sector. The
/// result refers to `volume`, which must outlive it. Throws Error(io).
std::shared_ptr<const io::BlockDevice> reading_device(const io::BlockDevice& volume, const Detection& d);

/// When probe() finds one of fsimg's filesystems (a weak FAT match aside),
/// what it is for the overwrite guard: "an NTFS filesystem", "a FAT
/// filesystem, readable through its backup boot sector at byte 3072";
/// nullopt otherwise, also for two equal matches (io::probe_device names
/// that content). Throws Error(io).
std::optional<std::string> describe_own(const io::BlockDevice& volume);

/// What a volume that is none of fsimg's filesystems holds, for messages:
/// "it holds an ext4 filesystem (label rootfs)", "it holds only zeros",
/// "sector 0 does not start with a FAT boot sector jump (...)". Other
/// formats are named by the mkfs overwrite guard's probe (io::probe_device:
/// libblkid and the container magics). Throws Error(io).
std::string foreign_content(const io::BlockDevice& volume);

/// What partition `p` of the disk `v` (io::open_disk) holds, for messages
/// and listings: "an exFAT filesystem", "an ext4 filesystem (label rootfs)",
/// "nothing but zeros", "an extended partition", "outside the image"
/// (describe_own, else io::probe_device's description). Reads the
/// partition's first sectors only. Throws Error(io).
std::string partition_content(const io::OpenedVolume& v, const io::Partition& p);

/// io::select_partition, but a disk with several partitions and no @N is
/// refused (Error(usage)) naming what each partition holds, so that the user
/// can choose: "1 (LBA 2048, 19.53 MiB, type 0x0C): a FAT filesystem; 2
/// (...): an ext4 filesystem" (describe_own, else io::probe_device's
/// description). Other errors as io::select_partition; Error(io) when a
/// partition cannot be read.
void select_partition(io::OpenedVolume& v, std::string_view path, std::optional<unsigned> number);

/// io::open_volume with select_partition above: IMAGE or IMAGE@N.
io::OpenedVolume open_volume(std::string_view spec, bool writable = false);

}  // namespace fsimg::fs
