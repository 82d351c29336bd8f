// MBR and GPT partition tables: writing one partition, reading any table.
//
// Facts: docs/formats.md §4 (MBR layout; GPT per the UEFI spec,
// checked against sgdisk/sfdisk output).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

enum class PartitionTableKind : std::uint8_t { none, mbr, gpt };

/// "none" | "mbr" | "gpt"; throws Error(usage) naming the value otherwise.
PartitionTableKind parse_partition_table_kind(std::string_view text);
std::string_view to_string(PartitionTableKind kind) noexcept;

/// A GUID in its on-disk byte order (first three fields little-endian).
using Guid = std::array<std::uint8_t, 16>;
/// "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7" form (upper-case hex).
std::string format_guid(const Guid& guid);
/// Microsoft Basic Data partition type (FAT, exFAT and NTFS alike).
extern const Guid kGptBasicDataType;
/// Derives a version-4-shaped GUID deterministically from a seed (e.g. the
/// volume ID) and a salt distinguishing the disk GUID from a partition GUID.
Guid guid_from_seed(std::uint64_t seed, std::uint32_t salt) noexcept;

struct Partition {
    unsigned index = 0;              ///< 1-based, as IMAGE@N names it
    std::uint64_t first_lba = 0;     ///< in sectors of the table's sector size
    std::uint64_t sector_count = 0;  ///< in sectors
    std::uint8_t mbr_type = 0;       ///< MBR type byte (0xEE for the GPT protective entry)
    Guid gpt_type{};                 ///< GPT only
    Guid gpt_unique{};               ///< GPT only
    std::string name;                ///< GPT partition name (UTF-8), empty for MBR
    bool bootable = false;           ///< MBR status 0x80
    std::uint64_t ebr_lba = 0;  ///< MBR logical partitions (index >= 5): LBA of the EBR that holds it, else 0
    /// Sectors of the partition the image holds: sector_count, fewer when the
    /// image ends inside the partition (Linux truncates such a partition to
    /// the end of the disk, block/partitions/core.c), 0 when the entry starts
    /// at LBA 0 or past the image's end (nothing of it can be read).
    std::uint64_t image_sectors = 0;
    /// Byte offset in the disk image of the entry describing it: its 16-byte
    /// MBR entry (sector 0, or its EBR for a logical partition), or its
    /// 128-byte entry in the GPT entry array the table was read from.
    std::uint64_t entry_offset = 0;
};

/// True for the MBR types of an extended partition: 0x05 (CHS), 0x0F (LBA),
/// 0x85 (Linux extended), as Linux's block/partitions/msdos.c recognises.
bool is_extended_type(std::uint8_t type) noexcept;

/// A problem of the partition table, with the fsck code it is reported under
/// (docs/fsck-codes.md):
/// - "part.ebr.chain": the EBR chain walk ended early (a loop, a link outside
///   the extended partition or the disk, an EBR without 55 AA, more than
///   1024 EBRs);
/// - "part.ebr.logical-outside": a logical partition runs past its extended
///   partition;
/// - "part.entry.outside": an entry starts at LBA 0 (on the table itself) or
///   at or past the end of the image: nothing of it can be read;
/// - "part.entry.past-image": an entry ends past the end of the image (the
///   image is cut short, or the entry is too long); the part inside is read;
/// - "part.gpt.past-image": the GPT header describes a disk larger than the
///   image (its backup header and last usable LBA lie past the image's end):
///   the image is cut short; entries it cuts are named here, not again.
struct PartitionProblem {
    std::string code;
    std::string message;
    std::uint64_t byte_offset = 0;  ///< in the disk image: the table sector or entry concerned
};

struct PartitionTable {
    PartitionTableKind kind = PartitionTableKind::none;
    std::uint32_t sector_size = 512;       ///< bytes; GPT found at LBA 1 of this size
    std::uint32_t mbr_disk_signature = 0;  ///< MBR offset 440
    Guid gpt_disk_guid{};
    std::vector<Partition> partitions;  ///< used entries, in table order; MBR logical partitions (5..) last
    std::vector<PartitionProblem> problems;  ///< what is wrong with the table (PartitionProblem codes)
};

/// What else lies on the sectors of `p`, one phrase each ("partition 2
/// (LBA 2048..4095)", "the EBR of partition 6 (LBA 8191)"): every other
/// entry of `table` whose LBA range meets p's (an MBR extended partition
/// that holds p as one of its logical partitions excepted, and the logical
/// partitions and EBRs inside p when p is that extended partition),
/// and every EBR sector that lies inside p. Formatting p would overwrite each
/// of them; sfdisk --verify and gdisk report such tables as overlapping,
/// while Linux accepts them (block/partitions/msdos.c). Empty for a sound
/// table. Pure; sectors in the table's sector size.
std::vector<std::string> partition_overlaps(const PartitionTable& table, const Partition& p);

/// Where a single partition goes in a disk of `disk_bytes`: first LBA at
/// `first_lba` (0: at 1 MiB, as partitioning tools place it), last sector
/// before the GPT backup structures for GPT (last usable LBA = N - 34 at
/// 512-byte sectors), the rest of the disk for MBR; the end is rounded down
/// to a 1 MiB boundary when that leaves at least 1 MiB. Throws Error(usage)
/// when the disk is too small (names the minimum), when `first_lba` lies on
/// the table (MBR: LBA 0; GPT: before its first usable LBA, 34 at 512-byte
/// sectors) or, for MBR, when the partition would pass 2^32 sectors.
struct PartitionPlacement {
    std::uint64_t first_lba = 0;
    std::uint64_t sector_count = 0;
};
PartitionPlacement place_single_partition(PartitionTableKind kind, std::uint64_t disk_bytes,
                                          std::uint32_t sector_size, std::uint64_t first_lba = 0);

/// The sectors a table of `kind` needs after its last partition: the GPT
/// backup array and header (33 at 512-byte sectors), none for MBR.
std::uint64_t table_tail_sectors(PartitionTableKind kind, std::uint32_t sector_size) noexcept;

/// A partition type by the names users know (and systemd-repart's Type=
/// names where they exist): "esp", "linux", "linux-swap", "basic-data",
/// "fat12", "fat16", "fat16-lba", "fat32", "fat32-lba", "exfat", "ntfs",
/// "bios-boot" (GPT only). Each has its MBR type byte (0 when it has none)
/// and its GPT type GUID (zero when it has none). nullopt for another name.
/// Facts: docs/formats.md §4 (the MBR types of the Linux and Windows
/// partitioners; the GPT GUIDs of the UEFI spec and the Discoverable
/// Partitions Specification).
struct PartitionType {
    std::uint8_t mbr = 0;
    Guid gpt{};
};
std::optional<PartitionType> named_partition_type(std::string_view name) noexcept;
/// The first name named_partition_type() knows for GPT type `guid` ("esp",
/// "linux", "basic-data", ...); nullopt for another type.
std::optional<std::string_view> gpt_type_name(const Guid& guid) noexcept;
/// The names named_partition_type() knows, for messages.
std::string_view partition_type_names() noexcept;

/// "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" (either case, braces allowed) in
/// on-disk byte order; nullopt when it is not 32 hex digits in 8-4-4-4-12.
std::optional<Guid> parse_guid(std::string_view text) noexcept;

/// Writes an MBR with one primary partition (sector 0 only).
void write_mbr(BlockDevice& disk, std::uint32_t sector_size, const Partition& partition,
               std::uint32_t disk_signature);

/// Writes an MBR holding `partitions`: those numbered 1..4 (Partition::index)
/// in their slots of sector 0, one of them at most an extended partition
/// (is_extended_type), and the logical partitions 5, 6, ... each behind its
/// EBR at Partition::ebr_lba inside it, chained in number order (EBR entry 0:
/// the partition relative to its EBR; entry 1: type 0x05, the next EBR
/// relative to the extended partition's start, as Linux's msdos.c and
/// sfdisk read and write them; docs/formats.md §4). The EBRs are written
/// first and sector 0 last. Throws Error(usage) naming the partition for an
/// entry off the disk or past 2^32 - 1 sectors, a number given twice, a
/// logical partition without an extended one, numbered with a gap, outside
/// it or before the one it follows; Error(io) on write failures.
void write_mbr(BlockDevice& disk, std::uint32_t sector_size, std::span<const Partition> partitions,
               std::uint32_t disk_signature);

/// Writes a protective MBR, primary GPT header + 128-entry array at LBA 1..,
/// backup array and header at the end of the disk, with CRC32s (zlib).
/// The partition's name defaults to "fsimg", its unique GUID to one derived
/// from `disk_guid`.
void write_gpt(BlockDevice& disk, std::uint32_t sector_size, const Partition& partition,
               const Guid& disk_guid);

/// The same with `partitions` in the entries their Partition::index names
/// (1..128), each with its type (zero: Basic Data), unique GUID and name as
/// given (an empty name stays empty). Throws Error(usage) for a number out of
/// range or given twice, a partition outside the usable LBAs, two that
/// overlap, a name over 36 UTF-16 units; Error(io) on write failures.
void write_gpt(BlockDevice& disk, std::uint32_t sector_size, std::span<const Partition> partitions,
               const Guid& disk_guid);

/// Reads the partition table of `disk`. Returns kind none when sector 0 holds
/// a filesystem boot sector (FAT BPB, "EXFAT   ", "NTFS    ") or no 55AA
/// signature. Validates GPT header and entry-array CRC32s (falls back to the
/// backup header when the primary is bad; throws Error(corrupt) when neither
/// is valid) and each GPT entry against the header's usable LBAs (throws
/// Error(corrupt) naming the entry). What an image cut short or an entry
/// too long looks like is not an error here: every partition is listed with
/// the sectors the image holds of it (Partition::image_sectors) and the
/// disagreement recorded in PartitionTable::problems, so that the other
/// partitions stay readable. A GPT header whose disk is larger than the image
/// is used when it is otherwise valid (part.gpt.past-image).
/// An MBR extended partition (is_extended_type) stays listed under its own
/// number, and its logical partitions follow as 5, 6, ... (Linux numbering):
/// the EBR chain walk visits each EBR once, at most 1024, and records where
/// it stopped early in PartitionTable::problems instead of throwing.
/// Memory is bounded: the entry array is read only when count*size fits the disk.
PartitionTable read_partition_table(const BlockDevice& disk);

/// Sets the type of `partition` (as read_partition_table(disk) returned it
/// in `table`) in place, changing nothing else: for MBR the type byte of its
/// entry (sector 0, or the EBR of a logical partition); for GPT the type GUID
/// of its entry in the backup array, that array's CRC32 and the backup
/// header's CRC32, then the same in the primary (so that a write cut
/// between them leaves one valid header: UEFI §5.3.2 has firmware fall back
/// to the other). A GPT header that does not validate is left alone; none
/// validating, or an entry at another place than the table said, is
/// Error(corrupt). Returns false when the type already was that (nothing
/// written). Throws Error(io) on write failures.
bool set_partition_type(BlockDevice& disk, const PartitionTable& table, const Partition& partition,
                        std::uint8_t mbr_type, const Guid& gpt_type);

/// True when the 512 bytes look like a FAT, exFAT or NTFS boot sector.
bool looks_like_boot_sector(std::span<const std::byte> sector0) noexcept;

}  // namespace fsimg::io
