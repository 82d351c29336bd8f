// What a file or device holds, named for messages: the overwrite guard of
// mkfs and of every output file, and the name of foreign content when no
// filesystem fsimg reads is found.
//
// Sources of the facts:
//  - libblkid (util-linux, Debian libblkid-dev): every filesystem, RAID/LVM
//    member, swap area, encrypted volume and partition table it knows; the
//    probe mkfs.ext4 (misc/plausible.c) and wipefs run. Nothing it knows is
//    repeated here.
//  - The container formats libblkid does not know, each by its magic as its
//    specification states it: qcow2 "QFI\xFB" at 0 (QEMU docs/interop/qcow2.txt);
//    VHD "conectix" in the footer, the last 512 bytes, or its copy at 0
//    (Microsoft VHD Image Format Specification 1.0, "Hard Disk Footer");
//    VHDX "vhdxfile" at 0 ([MS-VHDX] 2.2.1); VMDK "KDMV" at 0 (VMware Virtual
//    Disk Format 1.1, sparse extent header) or a "# Disk DescriptorFile"
//    text; gzip 1F 8B (RFC 1952); xz FD "7zXZ" 00 (xz file format 1.0.4);
//    zstd 28 B5 2F FD (RFC 8878); bzip2 "BZh" + '1'..'9' + the block magic
//    31 41 59 26 53 59 (bzip2 sources); tar "ustar" at 257 (POSIX pax).
//    And files that are no disk image, so that "not a filesystem" says what
//    they are (and mkfs will not write over one without --force): PNG 89 "PNG"
//    0D 0A 1A 0A (PNG spec 5.2), JPEG FF D8 FF (JFIF/Exif SOI), GIF "GIF87a"
//    or "GIF89a", PDF "%PDF-", ZIP "PK" 03 04 or 05 06 (APPNOTE 4.3),
//    ELF 7F "ELF", 7-Zip "7z" BC AF 27 1C, ISO base media (MP4, MOV, HEIC)
//    "ftyp" at 4, RIFF "RIFF", Ogg "OggS", SQLite "SQLite format 3" 00.
//  - Volumes fsimg itself reads through a backup copy when sector 0 is
//    damaged (docs/formats.md): the exFAT backup boot sector at sector 12,
//    the NTFS backup boot sector in the last sector, the FAT32 backup boot
//    sector at sector 6 (BPB_BkBootSec), the GPT backup header in the last
//    LBA. Each is recognised by its own signature there.
//
// Nothing here writes; reads are bounded (at most 2 MiB of signatures plus,
// for the zero test, the data up to the first non-zero byte).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

/// What kind of content a probe found.
enum class ContentKind : std::uint8_t {
    none,             ///< nothing: empty, only zeros, or only holes (the `truncate -s` habit)
    filesystem,       ///< a filesystem (ext4, btrfs, FAT, NTFS, squashfs, iso9660, ...)
    partition_table,  ///< MBR, GPT, ... (libblkid's partition probe, or a GPT backup header)
    container,        ///< a disk image or compressed/archive format: qcow2, VHD, VHDX, VMDK, gzip, xz, ...
    other,            ///< something else libblkid knows: swap, LUKS, LVM or RAID member, ...
    data,             ///< non-zero bytes of no format known here
};

/// One signature found.
struct Signature {
    ContentKind kind = ContentKind::data;
    std::string type;   ///< libblkid's TYPE or PTTYPE ("ext4", "vfat", "gpt"), or "qcow2", "xz", ...
    std::string label;  ///< the label, when the format has one and it is set (UTF-8, as libblkid gives it)
    bool through_backup = false;  ///< found only in a backup copy (sector 0 damaged)
    std::string where;            ///< for a backup: "the backup boot sector at sector 12"
};

/// What a file or device holds.
struct Content {
    ContentKind kind = ContentKind::none;  ///< of the first signature; data or none without one
    std::vector<Signature> signatures;     ///< every signature found, most important first
    std::uint64_t data_bytes = 0;          ///< bytes the host stores (not holes); for kind data
    /// A phrase for "X holds ...": "an ext4 filesystem (label rootfs)",
    /// "a GPT partition table", "qcow2 disk image data", "3.1 MiB of
    /// unrecognised data", "nothing (zeros)". Escaped: printable text only.
    std::string description;
    /// A format is recognised (kind is neither none nor data).
    bool recognised() const noexcept { return kind != ContentKind::none && kind != ContentKind::data; }
    /// Anything but zeros and holes.
    bool holds_anything() const noexcept { return kind != ContentKind::none; }
};

/// How much a probe looks at.
struct ProbeOptions {
    /// Look for a non-zero byte when no format is recognised (reads the
    /// file's data up to the first non-zero byte; holes are skipped with
    /// SEEK_DATA). False: only signatures; kind is none when none is found.
    bool test_zeros = true;
};

/// Probes the regular file or block device at `path` (opened read-only,
/// O_NONBLOCK). Throws Error(io) naming the path when it cannot be opened or
/// read; Error(usage) when it is neither a regular file nor a block device.
Content probe_path(const std::filesystem::path& path, const ProbeOptions& options = {});

/// Probes [offset, offset+size) of the open descriptor `fd` (a regular file
/// or block device; not closed). `name` names it in errors.
Content probe_descriptor(int fd, std::uint64_t offset, std::uint64_t size, const std::string& name,
                         const ProbeOptions& options = {});

/// Probes any BlockDevice: an image file (FileImage, or a SubRange of one)
/// through its descriptor; others (memory, gzip) through a sparse in-memory
/// copy of their first 8 MiB and last 1 MiB. Throws as read_at.
Content probe_device(const BlockDevice& device, const ProbeOptions& options = {});

/// Why writing over `name` (holding `content`) needs --force, or nullopt: a
/// file may be overwritten only when it holds nothing but zeros, a device
/// (whose old bytes are noise) when no format is recognised on it.
/// "NAME already holds an ext4 filesystem (label rootfs); pass --force to overwrite it".
std::optional<std::string> overwrite_refusal(const std::string& name, const Content& content, bool is_device);

/// Why the block device at `path` is in use, or nullopt: it (or one of its
/// partitions) is mounted (/proc/self/mountinfo, by device number), it has
/// holders (/sys/dev/block/MAJ:MIN/holders: device-mapper, LVM, RAID), or an
/// exclusive open fails with EBUSY (the kernel's own claim: a mount, swap,
/// another mkfs). mkfs.fat, mkfs.ext4 and wipefs refuse such a device; so
/// does mkfs --device, even with --force. Throws Error(io) when `path`
/// cannot be examined.
std::optional<std::string> device_busy_reason(const std::filesystem::path& path);

/// The container magics libblkid does not know (see the head of this file),
/// tested on the first bytes of a file and its last 512 bytes; empty when
/// none matches. Pure: exposed for tests and fuzzing.
std::vector<Signature> container_signatures(std::span<const std::byte> head, std::span<const std::byte> tail);

/// The backup copies fsimg reads when sector 0 is damaged, tested on the
/// device (see the head of this file). Only called when sector 0 holds no
/// boot sector of its own.
std::vector<Signature> backup_signatures(const BlockDevice& device);

}  // namespace fsimg::io
