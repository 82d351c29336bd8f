// fsimg mkfs: the pieces the FAT, exFAT and NTFS paths share.
#include "mkfs_common.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <filesystem>

#include "common.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/fs/edit.hpp"
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

std::uint64_t parse_hex_volume_id(const std::string& text, unsigned bits, std::string_view option) {
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
                    fmt::format("{} \"{}\" is not a {}-bit hexadecimal number (e.g. {})", option, text, bits,
                                bits == 32 ? "1234ABCD or 1234-ABCD" : "0123456789ABCDEF"));
    }
    return std::stoull(hex, nullptr, 16);
}

namespace {
/// Decimal digits as a number; nullopt when empty, not all digits, or past
/// 64 bits.
std::optional<std::uint64_t> parse_decimal(std::string_view digits) {
    std::uint64_t v = 0;
    if (digits.empty()) return std::nullopt;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
    return v;
}
}  // namespace

std::optional<std::uint8_t> parse_mbr_type(std::string_view text) {
    if (text.size() > 2 && (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")) text.remove_prefix(2);
    if (text.empty() || text.size() > 2) return std::nullopt;
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
    if (ec != std::errc{} || end != text.data() + text.size() || v == 0) return std::nullopt;
    return static_cast<std::uint8_t>(v);
}

std::uint32_t parse_volume_id(const std::string& text) {
    return static_cast<std::uint32_t>(parse_hex_volume_id(text, 32));
}

std::uint32_t volume_id_32(const std::optional<std::uint32_t>& given, const CreationTime& time) {
    return given ? *given : fat::volume_id_from_time(time.unix_seconds, time.nanoseconds);
}

void check_partition_options(const PartitionOptions& o, io::PartitionTableKind ptable, bool in_partition) {
    const char* table_only = !o.type.empty() && !in_partition ? "--partition-type"
                             : !o.start.empty()               ? "--partition-start"
                             : !o.disk_id.empty()             ? "--disk-id"
                             : !o.uuid.empty()                ? "--partition-uuid"
                             : !o.name.empty()                ? "--partition-name"
                             : o.bootable                     ? "--bootable"
                                                              : nullptr;
    if (table_only && in_partition)
        throw Error(ErrorCode::usage,
                    fmt::format("{} is for the partition a new table gets; IMAGE@N formats a partition that "
                                "exists (sfdisk/sgdisk change its entry)",
                                table_only));
    if (table_only && ptable == io::PartitionTableKind::none)
        throw Error(
            ErrorCode::usage,
            fmt::format("{} needs --partition-table mbr or gpt; there is no partition table", table_only));
    if (!o.hidden_sectors.empty() && (ptable != io::PartitionTableKind::none || in_partition))
        throw Error(
            ErrorCode::usage,
            "--hidden-sectors is for an image without a partition table (a partition image for a later "
            "disk); in a table the hidden sectors are the partition's start");
    const bool gpt = ptable == io::PartitionTableKind::gpt;
    if (!o.uuid.empty() && !gpt)
        throw Error(ErrorCode::usage, "--partition-uuid is for GPT; MBR entries have none");
    if (!o.name.empty() && !gpt)
        throw Error(ErrorCode::usage, "--partition-name is for GPT; MBR entries have none");
    if (o.bootable && gpt)
        throw Error(ErrorCode::usage,
                    "--bootable sets the MBR active flag; a GPT partition has none (BIOS boot from GPT uses "
                    "the protective MBR)");
    if (!o.uuid.empty() && !io::parse_guid(o.uuid))
        throw Error(ErrorCode::usage,
                    fmt::format("--partition-uuid {}: not a GUID (8-4-4-4-12 hex digits)", o.uuid));
    if (!o.disk_id.empty()) {
        if (gpt && !io::parse_guid(o.disk_id))
            throw Error(
                ErrorCode::usage,
                fmt::format("--disk-id {}: a GPT disk ID is a GUID (8-4-4-4-12 hex digits)", o.disk_id));
        if (!gpt) parse_hex_volume_id(o.disk_id, 32, "--disk-id");
    }
    if (!o.name.empty() && core::utf8_to_utf16(o.name).size() > 36)
        throw Error(
            ErrorCode::usage,
            fmt::format("--partition-name \"{}\" is longer than the 36 UTF-16 units a GPT entry holds",
                        o.name));
    if (!o.type.empty() && !io::named_partition_type(o.type)) {
        const bool ok = gpt ? io::parse_guid(o.type).has_value() : parse_mbr_type(o.type).has_value();
        if (!ok)
            throw Error(
                ErrorCode::usage,
                fmt::format("--partition-type {}: give a name ({}) or {}", o.type, io::partition_type_names(),
                            gpt ? "a GPT type GUID" : "an MBR type byte in hex (0c, 0x83)"));
    }
    if (!o.hidden_sectors.empty() && !parse_decimal(o.hidden_sectors))
        throw Error(ErrorCode::usage,
                    fmt::format("--hidden-sectors {}: give a number of sectors", o.hidden_sectors));
}

std::uint64_t partition_start_lba(const PartitionOptions& o, std::uint32_t sector_size) {
    if (o.start.empty()) return 0;
    std::uint64_t lba = 0;
    if (o.start.back() == 's') {
        const auto v = parse_decimal(std::string_view(o.start).substr(0, o.start.size() - 1));
        if (!v)
            throw Error(ErrorCode::usage,
                        fmt::format("--partition-start {}: give a size (1M) or sectors (2048s)", o.start));
        lba = *v;
    } else {
        const std::uint64_t bytes = core::parse_size(o.start);
        if (bytes % sector_size != 0)
            throw Error(ErrorCode::usage,
                        fmt::format("--partition-start {} is not a whole number of {}-byte sectors", o.start,
                                    sector_size));
        lba = bytes / sector_size;
    }
    if (lba == 0)
        throw Error(ErrorCode::usage,
                    fmt::format("--partition-start {}: sector 0 holds the partition table", o.start));
    return lba;
}

std::uint64_t hidden_sectors(const PartitionOptions* o, const io::PartitionPlacement& place) {
    if (o && !o->hidden_sectors.empty()) {
        const auto v = parse_decimal(o->hidden_sectors);
        if (!v || *v > 0xFFFFFFFFu)
            throw Error(ErrorCode::usage, fmt::format("--hidden-sectors {} is not a 32-bit number of sectors",
                                                      o->hidden_sectors));
        return *v;
    }
    return place.first_lba;
}

namespace {

/// A warning when a type given with --partition-type is not one Windows or
/// UEFI firmware reads the filesystem from (MBR 01/04/06/0B/0C/0E, EF (EFI
/// System) or GPT Basic Data / EFI System for FAT; MBR 07 or GPT Basic Data
/// for exFAT and NTFS, whose
/// default type `fs_mbr_type` is 07). Linux reads any type; the choice may
/// be deliberate (a Linux-only /boot), so it is said, not refused.
void warn_unsuitable_type(const std::string& option, const std::string& given, const io::PartitionType& t,
                          bool gpt, std::uint8_t fs_mbr_type) {
    const bool fat = fs_mbr_type != 0x07;
    const auto esp = io::named_partition_type("esp");
    bool ok = false;
    if (gpt) {
        ok = t.gpt == io::kGptBasicDataType || (fat && esp && t.gpt == esp->gpt);
    } else if (fat) {
        for (const std::uint8_t m : {0x01, 0x04, 0x06, 0x0B, 0x0C, 0x0E, 0xEF}) ok = ok || t.mbr == m;
    } else {
        ok = t.mbr == 0x07;
    }
    if (ok) return;
    warn(
        fat ? fmt::format(
                  "{}{} does not suit FAT: Windows and UEFI read FAT only from MBR types "
                  "01, 04, 06, 0B, 0C, 0E and EF and GPT Basic Data and EFI System partitions (Linux reads "
                  "any type)",
                  option, given)
            : fmt::format(
                  "{}{} does not suit exFAT or NTFS: Windows mounts them only from MBR type "
                  "07 and GPT Basic Data partitions, and UEFI firmware reads an EFI System Partition only as "
                  "FAT (Linux reads any type)",
                  option, given));
}

}  // namespace

io::PartitionType partition_type(const PartitionOptions& o, io::PartitionTableKind ptable,
                                 std::uint8_t mbr_type) {
    const bool gpt = ptable == io::PartitionTableKind::gpt;
    if (o.type.empty()) return {mbr_type, io::kGptBasicDataType};
    io::PartitionType t;
    if (const auto named = io::named_partition_type(o.type)) {
        if (!gpt && named->mbr == 0)
            throw Error(ErrorCode::usage,
                        fmt::format("--partition-type {} is a GPT type; an MBR has none", o.type));
        if (gpt && named->gpt == io::Guid{})
            throw Error(ErrorCode::usage,
                        fmt::format("--partition-type {} is an MBR type; a GPT has none", o.type));
        t = *named;
    } else if (gpt) {
        t = {0, *io::parse_guid(o.type)};
    } else {
        t = {*parse_mbr_type(o.type), {}};
    }
    warn_unsuitable_type(o.type_option, o.type, t, gpt, mbr_type);
    return t;
}

void write_partition_table(io::BlockDevice& disk, io::PartitionTableKind ptable, std::uint32_t sector_size,
                           const io::PartitionPlacement& place, std::uint8_t mbr_type,
                           std::uint32_t volume_id, const std::string& label,
                           const PartitionOptions* options) {
    if (ptable == io::PartitionTableKind::none) return;
    const PartitionOptions none;
    const PartitionOptions& o = options ? *options : none;
    io::Partition p;
    p.index = 1;
    p.first_lba = place.first_lba;
    p.sector_count = place.sector_count;
    const io::PartitionType type = partition_type(o, ptable, mbr_type);
    p.mbr_type = type.mbr;
    p.gpt_type = type.gpt;
    p.gpt_unique = o.uuid.empty() ? io::guid_from_seed(volume_id, 2) : *io::parse_guid(o.uuid);
    p.name = !o.name.empty() ? o.name : label.empty() ? "Basic data partition" : label;
    p.bootable = o.bootable;
    if (ptable == io::PartitionTableKind::mbr) {
        io::write_mbr(disk, sector_size, p,
                      o.disk_id.empty()
                          ? volume_id
                          : static_cast<std::uint32_t>(parse_hex_volume_id(o.disk_id, 32, "--disk-id")));
    } else {
        io::write_gpt(disk, sector_size, p,
                      o.disk_id.empty() ? io::guid_from_seed(volume_id, 1) : *io::parse_guid(o.disk_id));
    }
}

std::optional<std::string> overwrite_refusal_of(const std::string& shown, io::Content content,
                                                const io::BlockDevice& dev, bool is_device) {
    const std::string first = content.signatures.empty() ? "" : content.signatures.front().type;
    const bool ours = first == "vfat" || first == "exfat" || first == "ntfs";
    if (auto own = ours ? std::nullopt : fs::describe_own(dev)) {
        content.kind = io::ContentKind::filesystem;
        content.description = std::move(*own);
    }
    return io::overwrite_refusal(shown, content, is_device);
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
    // A partition that shares sectors with another (or holds an EBR) cannot
    // be formatted without destroying what the other holds: refused, even
    // with --force, as the table itself is wrong.
    if (const auto others = io::partition_overlaps(v.table, p); !others.empty()) {
        std::string list;
        for (const auto& o : others) list += (list.empty() ? "" : ", ") + o;
        throw Error(
            ErrorCode::refused,
            fmt::format("partition {} of \"{}\" (LBA {}..{}) overlaps {}: formatting it would overwrite "
                        "them; fix the partition table first (sfdisk --verify lists the overlap); "
                        "nothing was written",
                        number, disk, p.first_lba, p.first_lba + p.sector_count - 1, list));
    }
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
    if (!force)
        refusal = overwrite_refusal_of(fmt::format("partition {} of {}", number, disk),
                                       io::probe_device(*v.window, io::ProbeOptions{true}), *v.window, false);
    return {disk, std::move(v.table), p, false, false, {}};
}

io::PartitionPlacement place_volume(const PartitionTarget* target, io::PartitionTableKind ptable,
                                    std::uint64_t image_bytes, std::uint32_t sector_size,
                                    const PartitionOptions* options) {
    if (target) return {target->partition.first_lba, image_bytes / sector_size};
    if (ptable != io::PartitionTableKind::none)
        return io::place_single_partition(ptable, image_bytes, sector_size,
                                          options ? partition_start_lba(*options, sector_size) : 0);
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
    if (dest.partition && dest.partition->in_place) {
        const PartitionTarget& t = *dest.partition;
        const auto disk = io::FileImage::open(t.disk, true);
        write(*disk, true);
        if (!t.keep_type) {
            const io::PartitionType type = partition_type(t.options, t.table.kind, dest.mbr_type);
            io::set_partition_type(*disk, t.table, t.partition, type.mbr, type.gpt);
        }
    } else if (dest.partition) {
        const PartitionTarget& t = *dest.partition;
        // The file itself, not a link to it: the rebuilt disk is renamed over
        // the real file, so a symbolic link stays a link to the changed disk.
        std::error_code ec;
        const std::filesystem::path real = std::filesystem::canonical(t.disk, ec);
        if (ec)
            throw Error(ErrorCode::io,
                        fmt::format("cannot resolve \"{}\": {}; nothing was written", t.disk, ec.message()));
        const auto disk = io::FileImage::open(real.string(), false);
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
        io::AtomicImage out(real, disk->size());
        note_stale(out);
        const std::uint64_t offset = t.partition.first_lba * t.table.sector_size;
        io::copy_stored_bytes(*disk, out.device(), offset, t.bytes());
        write(out.device(), true);
        if (!t.keep_type) {
            const io::PartitionType type = partition_type(t.options, t.table.kind, dest.mbr_type);
            io::set_partition_type(out.device(), t.table, t.partition, type.mbr, type.gpt);
        }
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

void note_no_partition_table(io::PartitionTableKind ptable, bool in_partition, const PartitionOptions& part,
                             std::uint64_t volume_bytes, bool quiet, std::string_view fs_fix) {
    constexpr std::uint64_t kFloppyOrFirmware = 4u << 20;
    if (ptable != io::PartitionTableKind::none || in_partition || quiet || !part.hidden_sectors.empty() ||
        volume_bytes <= kFloppyOrFirmware)
        return;
    note(fmt::format(
        "no partition table: Windows handles unpartitioned fixed disks badly{}; use {} for images "
        "meant for Windows",
        fs_fix == "--partition-table mbr or gpt" ? " (and writes into the exFAT boot sector)" : "", fs_fix));
}

nlohmann::json partition_json(const io::PartitionTable& table, const io::Partition& p) {
    const bool gpt = table.kind == io::PartitionTableKind::gpt;
    std::string guid = gpt ? io::format_guid(p.gpt_unique) : std::string();
    std::transform(guid.begin(), guid.end(), guid.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    nlohmann::json part{
        {"number", p.index},
        {"offset", p.first_lba * table.sector_size},
        {"size", p.sector_count * table.sector_size},
        {"type", gpt ? io::format_guid(p.gpt_type) : fmt::format("0x{:02X}", p.mbr_type)},
        // The PARTUUID Linux gives it (root=PARTUUID=... on a kernel command line).
        {"partuuid", gpt ? guid : fmt::format("{:08x}-{:02x}", table.mbr_disk_signature, p.index)},
    };
    if (gpt) {
        const auto name = io::gpt_type_name(p.gpt_type);
        part["type_name"] = name ? nlohmann::json(std::string(*name)) : nlohmann::json(nullptr);
        part["name"] = core::escape_invalid_utf8(p.name);
    } else {
        part["bootable"] = p.bootable;
    }
    return part;
}

nlohmann::json disk_json(const io::PartitionTable& table) {
    return table.kind == io::PartitionTableKind::gpt
               ? nlohmann::json{{"table", "gpt"}, {"disk_guid", io::format_guid(table.gpt_disk_guid)}}
               : nlohmann::json{{"table", "mbr"},
                                {"disk_signature", fmt::format("{:08x}", table.mbr_disk_signature)}};
}

nlohmann::json volume_json(io::OpenedVolume& v) {
    check::Findings found;
    fs::CheckOptions o;
    o.placement = fs::placement_of(v);
    const fs::Checked c = fs::check_volume(v.device(), found, o);
    const auto ed = fs::open_editor(v.device(), c.detection.kind, {});
    const std::uint64_t id = ed->volume_id();
    const check::Summary& s = c.summary;
    return nlohmann::json{
        {"filesystem", s.type},
        {"volume_bytes", v.device().size()},
        {"cluster_bytes", s.cluster_bytes},
        {"cluster_count", s.cluster_count},
        {"used_clusters", s.used_clusters},
        {"free_clusters", s.free_clusters},
        {"files", s.files},
        {"directories", s.directories},
        {"label", core::escape_invalid_utf8(ed->label())},
        {"volume_id", ed->volume_id_bits() == 64 ? fmt::format("{:016X}", id)
                                                 : fmt::format("{:04X}-{:04X}", id >> 16, id & 0xFFFF)},
        {"errors", found.count(check::Severity::error) + found.count(check::Severity::fatal)},
        {"warnings", found.count(check::Severity::warning)},
    };
}

void print_mkfs_json(const std::string& image, io::PartitionTableKind ptable) {
    const auto [path, number] = io::split_image_spec(image);
    const std::string spec = number || ptable == io::PartitionTableKind::none ? image : image + "@1";
    io::OpenedVolume v = io::open_volume(spec);
    nlohmann::json j{{"schema_version", 1}, {"image", core::escape_invalid_utf8(path)}};
    j.update(volume_json(v));
    j["partition"] = nullptr;
    j["disk"] = nullptr;
    if (v.table.kind != io::PartitionTableKind::none && v.partition) {
        j["partition"] = partition_json(v.table, *v.partition);
        j["disk"] = disk_json(v.table);
    }
    fmt::print("{}\n", j.dump(2));
}

}  // namespace fsimg::cli
