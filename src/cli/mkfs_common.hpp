// fsimg mkfs: what the FAT, exFAT and NTFS paths share: the refusal of a
// layout, the creation time and volume ID, the partition table, and writing
// the destination.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/partition.hpp"
#include "fsimg/io/probe.hpp"

namespace fsimg::cli {

/// "-c", "4K" -> 4096. Throws Error(usage) when the size does not fit 32 bits.
std::uint32_t parse_u32_size(const std::string& text, const char* option);

/// "cannot make -t TYPE -s SIZE[ -c CLUSTER]EXTRA", the head of a layout
/// refusal. SIZE is -s as given, or the byte count when it came from the
/// existing file or device.
std::string cannot_make(std::string_view type, const std::string& size_text, std::uint64_t image_bytes,
                        const std::string& cluster, const std::string& extra = "");

/// Throws Error(usage): "PREFIX: reason" and the refusal's suggestions under
/// "what would work:" (fat, exfat and ntfs LayoutRefusal alike).
template <typename Refusal>
[[noreturn]] void refuse_layout(const std::string& prefix, const Refusal& refusal) {
    std::string msg = prefix + ": " + refusal.reason;
    if (!refusal.suggestions.empty()) {
        msg += "\n  what would work:";
        for (const auto& s : refusal.suggestions) msg += "\n    " + s;
    }
    throw Error(ErrorCode::usage, msg);
}

/// When the new metadata is stamped: SOURCE_DATE_EPOCH when set (then the
/// nanoseconds are 0, so the same inputs give the same bytes), else now.
struct CreationTime {
    std::int64_t unix_seconds = 0;
    std::uint32_t nanoseconds = 0;
    bool from_source_date_epoch = false;
};
/// Throws Error(usage) when SOURCE_DATE_EPOCH is set but not a number.
CreationTime creation_time();

/// --volume-id as a number of `bits` (32 or 64) bits: hexadecimal digits,
/// optionally after 0x; for 32 bits one dash in the middle ("1234-ABCD"),
/// for 64 any dashes. Throws Error(usage) naming `option`, the text and an
/// example.
std::uint64_t parse_hex_volume_id(const std::string& text, unsigned bits,
                                  std::string_view option = "--volume-id");
/// --volume-id for FAT and exFAT: "1234ABCD", "0x1234abcd" or "1234-ABCD".
std::uint32_t parse_volume_id(const std::string& text);

/// The FAT and exFAT volume ID: `given` (--volume-id), else derived from the
/// creation time as other mkfs tools do (fat::volume_id_from_time).
std::uint32_t volume_id_32(const std::optional<std::uint32_t>& given, const CreationTime& time);

/// The new partition's options, as given (empty: the default):
/// --partition-type (a name of io::named_partition_type, an MBR type byte
/// in hex, or a GPT type GUID), --partition-start (a size: 1M, 4K, or
/// sectors: 2048s), --disk-id (MBR: 8 hex digits; GPT: a GUID),
/// --partition-uuid (GPT), --partition-name (GPT), --bootable (MBR) and
/// --hidden-sectors (no table: BPB_HiddSec, exFAT PartitionOffset, NTFS
/// HiddenSectors, as mkfs.fat -h).
struct PartitionOptions {
    std::string type, start, disk_id, uuid, name, hidden_sectors;
    bool bootable = false;
    std::string type_option = "--partition-type ";  ///< how warnings name `type` (fsimg disk: "type=")
};

/// The type --partition-type names for a table of `ptable` (a name, an MBR
/// byte in hex, a GPT GUID: check_partition_options has checked it), or
/// `mbr_type` / GPT Basic Data when it is not given. Error(usage) for a
/// name the table kind has no type for (bios-boot on MBR).
io::PartitionType partition_type(const PartitionOptions& o, io::PartitionTableKind ptable,
                                 std::uint8_t mbr_type);

/// Refuses options that do nothing for `ptable` (or for IMAGE@N, whose
/// partition exists) with Error(usage) naming what they need, and values
/// that do not parse.
void check_partition_options(const PartitionOptions& o, io::PartitionTableKind ptable, bool in_partition);

/// An MBR type byte in hex ("0c", "0x83", "b"); nullopt unless it is 1..FF
/// (type 0 marks an unused entry).
std::optional<std::uint8_t> parse_mbr_type(std::string_view text);

/// --partition-start in sectors of `sector_size`, 0 when not given.
/// Error(usage) when it is not a whole number of sectors.
std::uint64_t partition_start_lba(const PartitionOptions& o, std::uint32_t sector_size);

/// What the boot sector's hidden-sectors field holds: --hidden-sectors when
/// given, else the partition's first sector (0 without a table).
std::uint64_t hidden_sectors(const PartitionOptions* o, const io::PartitionPlacement& place);

/// Writes an MBR or a GPT (nothing for none) holding one partition at
/// `place`, of MBR type `mbr_type` (GPT: basic data) unless --partition-type
/// says otherwise, named after the label unless --partition-name does, active
/// with --bootable. The identifiers come from `volume_id` unless --disk-id /
/// --partition-uuid give them: the MBR disk signature is the ID, the GPT
/// disk GUID and partition GUID are io::guid_from_seed(ID, 1 and 2).
void write_partition_table(io::BlockDevice& disk, io::PartitionTableKind ptable, std::uint32_t sector_size,
                           const io::PartitionPlacement& place, std::uint8_t mbr_type,
                           std::uint32_t volume_id, const std::string& label,
                           const PartitionOptions* options = nullptr);

/// Why `shown` (a file, a device or a partition whose bytes `dev` holds,
/// and whose probe found `content`) may not be overwritten without --force,
/// as io::overwrite_refusal says it; nullopt when it holds nothing worth
/// keeping. FAT, exFAT and NTFS are named by fs::describe_own, the detector
/// every command uses, where libblkid names something else (an NTFS volume
/// with a damaged sector 0 as a DOS partition table). Shared by mkfs, mkfs
/// IMAGE@N and fsimg disk. Throws Error(io).
std::optional<std::string> overwrite_refusal_of(const std::string& shown, io::Content content,
                                                const io::BlockDevice& dev, bool is_device);

/// mkfs IMAGE@N: partition N of the existing disk image IMAGE is formatted,
/// and nothing outside it changes (a new disk file is built around it and
/// renamed over IMAGE, as every mkfs writes).
struct PartitionTarget {
    std::string disk;  ///< IMAGE
    io::PartitionTable table;
    io::Partition partition;
    bool keep_type = false;  ///< --keep-type: the entry's type byte/GUID stays
    /// fsimg disk: `disk` is the new sparse disk file being built (every
    /// sector of the partition reads as zeros), written in place, not copied.
    bool in_place = false;
    PartitionOptions options;  ///< --partition-type, when given, is the type set
    std::uint64_t bytes() const noexcept { return partition.sector_count * table.sector_size; }
};

/// Opens IMAGE of "IMAGE@N" for mkfs: the partition must lie wholly in the
/// image and be no extended partition (Error(usage) naming the logical
/// ones); `sector_size` must be the table's (Error(usage)). `refusal` is set
/// as mkfs sets it for a file, from what the partition holds (any format or
/// any non-zero byte), unless `force`.
PartitionTarget open_partition_target(const std::string& disk, unsigned number, std::uint32_t sector_size,
                                      bool force, std::optional<std::string>& refusal);

/// Where the filesystem of `volume_bytes` goes: in `target`'s partition
/// when there is one, else in a new table's single partition
/// (io::place_single_partition of `image_bytes`), else at sector 0.
io::PartitionPlacement place_volume(const PartitionTarget* target, io::PartitionTableKind ptable,
                                    std::uint64_t image_bytes, std::uint32_t sector_size,
                                    const PartitionOptions* options = nullptr);

/// The partition summary of the final line (", in gpt partition 1 at
/// sector 2048"; "" for none), for a new table or `target`.
std::string partition_summary(const PartitionTarget* target, io::PartitionTableKind ptable,
                              const io::PartitionPlacement& place);

/// Where mkfs writes.
/// After a filesystem was written with no partition table: the note that
/// Windows handles unpartitioned fixed disks badly, naming `fs_fix` (what
/// to pass), where the image looks like a whole disk: not a partition
/// (IMAGE@N), not a partition image meant for a later disk
/// (--hidden-sectors), not a floppy-sized or firmware volume (at most
/// 4 MiB), and not with -q. Called only once the image is complete, so
/// never after an error.
void note_no_partition_table(io::PartitionTableKind ptable, bool in_partition, const PartitionOptions& part,
                             std::uint64_t volume_bytes, bool quiet, std::string_view fs_fix);

/// mkfs --json: what the image written as `image` (IMAGE or IMAGE@N as
/// given; with a new partition table, partition 1) holds, read back from
/// it: the filesystem's geometry, label and serial, its used and free
/// clusters and what a check of it finds, and the partition (offset, size,
/// type, PARTUUID) with the disk's identity. Printed on standard output
/// (schema docs/schemas/mkfs.schema.json). Throws Error(io) when the image
/// cannot be read back.
void print_mkfs_json(const std::string& image, io::PartitionTableKind ptable);

/// The JSON of mkfs --json's "partition" (number, offset and size in bytes,
/// type, partuuid; MBR: bootable; GPT: type_name, name) for `p` of `table`.
nlohmann::json partition_json(const io::PartitionTable& table, const io::Partition& p);
/// mkfs --json's "disk": table, and disk_signature (MBR) or disk_guid (GPT).
nlohmann::json disk_json(const io::PartitionTable& table);
/// mkfs --json's filesystem fields (filesystem, volume_bytes, cluster_bytes,
/// cluster_count, used and free clusters, files, directories, label,
/// volume_id, errors, warnings) of the opened volume, read back and checked.
/// Throws Error(io) when it cannot be read, Error(not_this_fs) when it holds
/// none of fsimg's filesystems.
nlohmann::json volume_json(io::OpenedVolume& v);

struct Destination {
    std::string image;              ///< the path given
    bool is_device = false;         ///< a block device the user allowed with --device
    std::uint64_t image_bytes = 0;  ///< size of the image (or of the device part to use)
    bool gzip = false;              ///< --gzip: IMAGE is written gzip-compressed
    /// Why the destination may not be overwritten (it holds a filesystem,
    /// a partition table or gzip data and --force was not given): decided
    /// before, thrown only when writing, so that a wrong argument is reported
    /// as such first.
    std::optional<std::string> refusal;
    /// IMAGE@N: the disk file is rebuilt with everything outside the
    /// partition as it was; `image` and `image_bytes` are not used.
    const PartitionTarget* partition = nullptr;
    std::uint8_t mbr_type = 0;  ///< the partition's new MBR type (GPT: Basic Data), unless keep_type
};

/// Calls `write(disk, device_is_zeroed)` on the destination. An image file is
/// built under a temporary name in its folder (sparse, so it reads as zeros:
/// device_is_zeroed is true) and renamed into place when `write` returns; it
/// is removed when `write` throws. With gzip, that sparse temporary image is
/// then compressed into IMAGE (itself written under a temporary name and
/// renamed into place) and removed. With dest.partition, the temporary file
/// is the size of the disk image and holds what it stores outside the
/// partition (io::copy_stored_bytes; the partition reads as zeros), the
/// disk image is locked while it is read (FileImage::lock_exclusive), and
/// the partition's type is set after `write` returns. A device is written in place
/// (device_is_zeroed false) and synced. Throws Error(refused) with
/// dest.refusal, before anything is created, when it is set.
void write_destination(const Destination& dest,
                       const std::function<void(io::BlockDevice& disk, bool device_is_zeroed)>& write);

}  // namespace fsimg::cli
