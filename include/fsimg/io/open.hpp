// Opening IMAGE or IMAGE@N the way every read command does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fsimg/io/block_device.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/partition.hpp"

namespace fsimg::io {

/// An opened image and the window onto the filesystem inside it.
struct OpenedVolume {
    std::unique_ptr<FileImage> file;
    std::unique_ptr<SubRange> window;    ///< set when a partition was selected
    PartitionTable table;                ///< kind none for a bare filesystem
    std::optional<Partition> partition;  ///< the selected partition
    BlockDevice& device() { return window ? static_cast<BlockDevice&>(*window) : *file; }
    std::uint64_t offset() const { return window ? window->offset_in_parent() : 0; }
};

/// Splits "disk.img@2" into ("disk.img", 2). A trailing "@N" only counts when
/// N is all digits and "disk.img@2" itself does not exist as a file.
std::pair<std::string, std::optional<unsigned>> split_image_spec(std::string_view spec);

/// Opens the image file `path` (no @N; gzip-compressed only when not
/// writable, see FileImage::open_gzip) with its partition table, selecting no
/// partition. Errors as FileImage::open and read_partition_table.
OpenedVolume open_disk(std::string_view path, bool writable = false);

/// One partition for a message: "2 (LBA 43008, 43 MiB, type 0x07)" (MBR) or
/// "1 (LBA 2048, 256 MiB, type esp, \"EFI system\")" (GPT: the type's name, else its
/// GUID, and the partition's name when it has one).
std::string describe_partition(const PartitionTable& table, const Partition& p);

/// Selects partition `number` of a disk opened by open_disk (`path` names it
/// in errors), by the rules of open_volume; the extended partition of an MBR
/// is Error(usage) naming its logical partitions.
void select_partition(OpenedVolume& v, std::string_view path, std::optional<unsigned> number);

/// Opens IMAGE or IMAGE@N (IMAGE may be gzip-compressed when not writable;
/// see FileImage::open_gzip): without @N a bare filesystem is used as is and a
/// table with exactly one partition opens that partition; several partitions
/// and no @N is Error(usage) listing them; @N out of range is Error(usage).
OpenedVolume open_volume(std::string_view spec, bool writable = false);

}  // namespace fsimg::io
