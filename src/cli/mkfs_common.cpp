// fsimg mkfs: the pieces the FAT, exFAT and NTFS paths share.
#include "mkfs_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>

#include "common.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/probe.hpp"

namespace fsimg::cli {

std::uint32_t parse_u32_size(const std::string& text, const char* option) {
    const std::uint64_t v = core::parse_size(text);
    if (v > 0xFFFFFFFFu) throw Error(ErrorCode::usage, fmt::format("{} {} is far too large", option, text));
    return static_cast<std::uint32_t>(v);
}

std::string cannot_make(std::string_view type, const std::string& size_text, std::uint64_t image_bytes,
                        const std::string& cluster, const std::string& extra) {
    return fmt::format("cannot make -t {} -s {}{}{}", type,
                       size_text.empty() ? std::to_string(image_bytes) : size_text,
                       cluster.empty() ? "" : " -c " + cluster, extra);
}

CreationTime creation_time() {
    CreationTime t;
    t.from_source_date_epoch = core::source_date_epoch().has_value();
    t.unix_seconds = core::creation_time_unix();
    if (!t.from_source_date_epoch) {
        t.nanoseconds = static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                       std::chrono::system_clock::now().time_since_epoch())
                                                       .count() %
                                                   1000000000);
    }
    return t;
}

std::uint64_t parse_hex_volume_id(const std::string& text, unsigned bits) {
    std::string hex = text;
    if (hex.size() > 2 && (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0)) hex = hex.substr(2);
    if (bits == 32) {
        if (hex.size() == 9 && hex[4] == '-') hex.erase(4, 1);
    } else {
        hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    }
    const bool ok = !hex.empty() && hex.size() <= bits / 4 && std::all_of(hex.begin(), hex.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
    });
    if (!ok) {
        throw Error(ErrorCode::usage,
                    fmt::format("--volume-id \"{}\" is not a {}-bit hexadecimal number (e.g. {})", text, bits,
                                bits == 32 ? "1234ABCD or 1234-ABCD" : "0123456789ABCDEF"));
    }
    return std::stoull(hex, nullptr, 16);
}

std::uint32_t parse_volume_id(const std::string& text) {
    return static_cast<std::uint32_t>(parse_hex_volume_id(text, 32));
}

std::uint32_t volume_id_32(const std::optional<std::uint32_t>& given, const CreationTime& time) {
    return given ? *given : fat::volume_id_from_time(time.unix_seconds, time.nanoseconds);
}

void write_partition_table(io::BlockDevice& disk, io::PartitionTableKind ptable, std::uint32_t sector_size,
                           const io::PartitionPlacement& place, std::uint8_t mbr_type,
                           std::uint32_t volume_id, const std::string& label) {
    if (ptable == io::PartitionTableKind::none) return;
    io::Partition p;
    p.index = 1;
    p.first_lba = place.first_lba;
    p.sector_count = place.sector_count;
    p.mbr_type = mbr_type;
    p.gpt_type = io::kGptBasicDataType;
    p.gpt_unique = io::guid_from_seed(volume_id, 2);
    p.name = label.empty() ? "Basic data partition" : label;
    if (ptable == io::PartitionTableKind::mbr) {
        io::write_mbr(disk, sector_size, p, volume_id);
    } else {
        io::write_gpt(disk, sector_size, p, io::guid_from_seed(volume_id, 1));
    }
}

PartitionTarget open_partition_target(const std::string& disk, unsigned number, std::uint32_t sector_size,
                                      bool force, std::optional<std::string>& refusal) {
    if (io::is_gzip_file(disk))
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" is gzip-compressed: mkfs IMAGE@N changes a disk image in place; "
                                "decompress it first",
                                disk));
    io::OpenedVolume v = io::open_disk(disk);
    io::select_partition(v, disk, number);  // no table, no such partition, extended: Error(usage)
    const io::Partition& p = *v.partition;
    if (p.image_sectors < p.sector_count)
        throw Error(ErrorCode::usage,
                    fmt::format("partition {} of \"{}\" runs past the end of the image (LBA {} + {} sectors, "
                                "the image holds {}): grow the image or fix the table first",
                                number, disk, p.first_lba, p.sector_count, p.image_sectors));
    if (sector_size != v.table.sector_size)
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" has {}-byte sectors (its {} table says so); give --sector-size {} or "
                                "leave it out",
                                disk, v.table.sector_size, io::to_string(v.table.kind), v.table.sector_size));
    if (!force) {
        io::Content content = io::probe_device(*v.window, io::ProbeOptions{true});
        const std::string first = content.signatures.empty() ? "" : content.signatures.front().type;
        const bool ours = first == "vfat" || first == "exfat" || first == "ntfs";
        if (auto own = ours ? std::nullopt : fs::describe_own(*v.window)) {
            content.kind = io::ContentKind::filesystem;
            content.description = std::move(*own);
        }
        refusal = io::overwrite_refusal(fmt::format("partition {} of {}", number, disk), content, false);
    }
    return {disk, std::move(v.table), p, false};
}

io::PartitionPlacement place_volume(const PartitionTarget* target, io::PartitionTableKind ptable,
                                    std::uint64_t image_bytes, std::uint32_t sector_size) {
    if (target) return {target->partition.first_lba, image_bytes / sector_size};
    if (ptable != io::PartitionTableKind::none)
        return io::place_single_partition(ptable, image_bytes, sector_size);
    return {0, image_bytes / sector_size};
}

std::string partition_summary(const PartitionTarget* target, io::PartitionTableKind ptable,
                              const io::PartitionPlacement& place) {
    if (target)
        return fmt::format(", in {} partition {} at sector {}", io::to_string(target->table.kind),
                           target->partition.index, place.first_lba);
    if (ptable == io::PartitionTableKind::none) return "";
    return fmt::format(", in {} partition 1 at sector {}", io::to_string(ptable), place.first_lba);
}

namespace {

void note_stale(const io::AtomicImage& image) {
    for (const auto& p : image.stale_removed())
        note(fmt::format("removed {}, a temporary image left by a process that no longer runs", p));
}

}  // namespace

void write_destination(const Destination& dest,
                       const std::function<void(io::BlockDevice& disk, bool device_is_zeroed)>& write) {
    if (dest.refusal) throw Error(ErrorCode::refused, *dest.refusal);
    if (dest.partition) {
        const PartitionTarget& t = *dest.partition;
        const auto disk = io::FileImage::open(t.disk, false);
        disk->lock_exclusive();  // no fsimg command changes it while it is copied
        // The table read before must still be the table (nothing changed it since).
        const io::PartitionTable now = io::read_partition_table(*disk);
        const bool same =
            now.kind == t.table.kind &&
            std::any_of(now.partitions.begin(), now.partitions.end(), [&](const io::Partition& p) {
                return p.index == t.partition.index && p.first_lba == t.partition.first_lba &&
                       p.sector_count == t.partition.sector_count &&
                       p.entry_offset == t.partition.entry_offset;
            });
        if (!same)
            throw Error(
                ErrorCode::refused,
                fmt::format("the partition table of \"{}\" changed while mkfs ran; nothing was written",
                            t.disk));
        io::AtomicImage out(std::filesystem::path(t.disk), disk->size());
        note_stale(out);
        const std::uint64_t offset = t.partition.first_lba * t.table.sector_size;
        io::copy_stored_bytes(*disk, out.device(), offset, t.bytes());
        write(out.device(), true);
        if (!t.keep_type)
            io::set_partition_type(out.device(), t.table, t.partition, dest.mbr_type, io::kGptBasicDataType);
        out.commit();
    } else if (dest.is_device) {
        auto dev = io::FileImage::open(dest.image, true, true);
        write(*dev, false);
        dev->sync();
    } else if (dest.gzip) {
        // Never committed: the destructor removes the uncompressed build.
        io::AtomicImage raw(std::filesystem::path(dest.image), dest.image_bytes);
        note_stale(raw);
        write(raw.device(), true);
        io::write_gzip(raw.device(), std::filesystem::path(dest.image));
    } else {
        io::AtomicImage out(std::filesystem::path(dest.image), dest.image_bytes);
        note_stale(out);
        write(out.device(), true);
        out.commit();
    }
}

}  // namespace fsimg::cli
