// fsimg dump: show the boot region of an image (and its partition table).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common.hpp"
#include "dump_exfat.hpp"
#include "dump_ntfs.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/fs/metadata.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

namespace {

struct DumpArgs {
    std::string image;
    bool json = false;
    std::string what = "boot";          ///< --what boot|fat|dir|extents
    std::vector<std::string> operands;  ///< [PATH] IMAGE
    std::string metadata_image;         ///< --metadata-image OUT
    bool force = false;                 ///< --force: OUT may be replaced
    bool no_logfile = false;            ///< --no-logfile (NTFS)
    bool scramble_names = false;        ///< --scramble-names
};

/// --metadata-image OUT: a sparse copy of IMAGE (its size, the partition
/// table's sectors, the volume's metadata at their offsets), file data left
/// as holes (fs/metadata.hpp). Written under a temporary name and renamed
/// into place; OUT is replaced only with --force, and never when it is IMAGE.
int write_metadata_image(const DumpArgs& a, io::OpenedVolume& v, const std::string& path,
                         const io::BlockDevice& reading, fs::Kind kind) {
    const std::filesystem::path out(a.metadata_image);
    struct stat ost {
    }, ist{};
    if (::lstat(out.c_str(), &ost) == 0) {
        if (::stat(path.c_str(), &ist) == 0 && ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino)
            throw Error(ErrorCode::refused,
                        fmt::format("{} is the image being read; never replaced", a.metadata_image));
        if (!a.force)
            throw Error(ErrorCode::refused, fmt::format("{} exists already (--force replaces it)",
                                                        escape_name(a.metadata_image)));
        if (!S_ISREG(ost.st_mode))
            throw Error(ErrorCode::refused,
                        fmt::format("{} exists and is not a regular file", escape_name(a.metadata_image)));
    }
    fs::MetadataOptions o;
    o.logfile = !a.no_logfile;
    o.scramble_names = a.scramble_names;
    const fs::MetadataMap m = fs::metadata_map(reading, kind, o);
    const std::uint64_t size = v.file->size(), base = v.offset();
    io::AtomicImage img(out, size);
    std::vector<std::byte> buf(1u << 20);
    const auto copy = [&](const io::BlockDevice& from, std::uint64_t at, std::uint64_t to, std::uint64_t n) {
        while (n > 0) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf.size()));
            from.read_at(at, std::span(buf).first(k));
            img.device().write_at(to, std::span<const std::byte>(buf).first(k));
            at += k;
            to += k;
            n -= k;
        }
    };
    std::uint64_t table_bytes = 0;
    if (v.table.kind != io::PartitionTableKind::none) {
        // Sector 0 and the GPT header and entries (LBA 1..33), and the GPT's backup at the end.
        table_bytes = std::min<std::uint64_t>(size, 34 * 512);
        copy(*v.file, 0, 0, table_bytes);
        if (v.table.kind == io::PartitionTableKind::gpt && size >= 2 * 34 * 512) {
            copy(*v.file, size - 33 * 512, size - 33 * 512, 33 * 512);
            table_bytes += 33 * 512;
        }
    }
    std::uint64_t bytes = 0;
    for (const fs::ByteRange& r : m.ranges) {
        copy(v.device(), r.offset, base + r.offset, r.length);
        bytes += r.length;
    }
    for (const fs::Patch& p : m.patches) img.device().write_at(base + p.offset, p.bytes);
    std::string finished;
    if (m.scramble_on_copy) {
        io::SubRange copy(img.device(), base, reading.size());
        finished = fs::finish_metadata_copy(copy, kind, m);
    }
    img.commit();
    for (const std::string& p : m.problems) warn(fmt::format("{}: left out: {}", escape_name(a.image), p));
    note(fmt::format(
        "wrote {}: {} bytes of {} metadata in {} ({}) at their offsets{}, of a {}-byte image; file "
        "data left out (holes){}",
        escape_name(a.metadata_image), core::format_count(bytes), fs::label(kind),
        core::format_counted(m.ranges.size(), "range", "ranges"), core::format_size(bytes),
        table_bytes ? fmt::format(" and the partition table's {} bytes", table_bytes) : std::string(),
        core::format_count(size),
        !finished.empty()  ? "; " + finished
        : a.scramble_names ? std::string("; names scrambled")
                           : std::string()));
    return m.problems.empty() ? kExitOk : kExitFailure;
}

std::string rstrip(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
    return s;
}

nlohmann::json partition_json(const io::OpenedVolume& v) {
    nlohmann::json t;
    t["kind"] = std::string(io::to_string(v.table.kind));
    t["sector_size"] = v.table.sector_size;
    if (v.table.kind == io::PartitionTableKind::gpt) t["disk_guid"] = io::format_guid(v.table.gpt_disk_guid);
    if (v.table.kind == io::PartitionTableKind::mbr) t["disk_signature"] = v.table.mbr_disk_signature;
    t["partitions"] = nlohmann::json::array();
    for (const auto& p : v.table.partitions) {
        nlohmann::json j{{"index", p.index}, {"first_lba", p.first_lba}, {"sector_count", p.sector_count}};
        if (v.table.kind == io::PartitionTableKind::gpt) {
            j["type_guid"] = io::format_guid(p.gpt_type);
            j["unique_guid"] = io::format_guid(p.gpt_unique);
            j["name"] = p.name;
        } else {
            j["type"] = p.mbr_type;
            j["bootable"] = p.bootable;
            j["role"] = io::is_extended_type(p.mbr_type) ? "extended" : p.index >= 5 ? "logical" : "primary";
            if (p.index >= 5) j["ebr_lba"] = p.ebr_lba;
        }
        t["partitions"].push_back(j);
    }
    t["problems"] = nlohmann::json::array();
    for (const auto& problem : v.table.problems) t["problems"].push_back(problem.message);
    if (v.partition) t["selected"] = v.partition->index;
    return t;
}

/// The partition table as sfdisk -l and mmls list it: one line per entry, the
/// selected one starred, then any problem of the EBR chain as a line "  problem: ...".
/// `with_content`: each partition's line also says what it holds (dump of a
/// disk without @N, where the user chooses one).
void print_partition_table(const io::OpenedVolume& v, bool with_content = false) {
    fmt::print("Partition table:  {}, {}-byte sectors, {} partition(s)\n", io::to_string(v.table.kind),
               v.table.sector_size, v.table.partitions.size());
    if (v.table.kind == io::PartitionTableKind::gpt) {
        fmt::print("  disk GUID       {}\n", io::format_guid(v.table.gpt_disk_guid));
    } else {
        fmt::print("  disk signature  {:08X}\n", v.table.mbr_disk_signature);
    }
    for (const auto& p : v.table.partitions) {
        const std::string type =
            v.table.kind == io::PartitionTableKind::gpt
                ? fmt::format("type {} \"{}\"", io::format_guid(p.gpt_type), shown(p.name))
                : fmt::format("type 0x{:02X}{}{}", p.mbr_type, p.bootable ? " active" : "",
                              io::is_extended_type(p.mbr_type) ? " extended"
                              : p.index >= 5 ? fmt::format(" logical, EBR at LBA {}", p.ebr_lba)
                                             : std::string());
        fmt::print(
            "  #{} {} start LBA {}, {} sectors ({}), {}{}\n", p.index,
            v.partition && v.partition->index == p.index ? "*" : " ", p.first_lba, p.sector_count,
            core::format_size(p.sector_count * v.table.sector_size), type,
            with_content && !(v.table.kind == io::PartitionTableKind::mbr && io::is_extended_type(p.mbr_type))
                ? ": " + fs::partition_content(v, p)
                : std::string());
    }
    for (const auto& problem : v.table.problems) fmt::print("  problem: {}\n", problem.message);
}

nlohmann::json dump_json(const std::string& image, const io::OpenedVolume& v, const fat::BootRegion& r) {
    nlohmann::json j;
    j["schema_version"] = 1;
    j["image"] = image;
    j["filesystem"] = "fat";
    j["volume_offset"] = v.offset();
    j["volume_device_bytes"] = r.device_bytes;
    if (v.table.kind != io::PartitionTableKind::none) j["partition_table"] = partition_json(v);
    nlohmann::json bs = nlohmann::json::object();
    for (const auto& f : fat::boot_fields(r.boot)) {
        if (f.is_text) {
            bs[f.name] = f.text;
        } else {
            bs[f.name] = f.number;
        }
    }
    j["boot_sector"] = bs;
    if (r.layout) {
        const fat::Layout& l = *r.layout;
        j["geometry"] = {
            {"fat_type", std::string(fat::to_string(l.type))},
            {"bytes_per_sector", l.bytes_per_sector},
            {"sectors_per_cluster", l.sectors_per_cluster},
            {"cluster_bytes", l.cluster_bytes()},
            {"cluster_count", l.cluster_count},
            {"fat_size_sectors", l.fat_size_sectors},
            {"num_fats", l.num_fats},
            {"first_fat_sector", l.first_fat_sector},
            {"root_dir_sectors", l.root_dir_sectors},
            {"first_root_dir_sector", l.first_root_dir_sector},
            {"first_data_sector", l.first_data_sector},
            {"total_sectors", l.total_sectors},
            {"volume_bytes", l.volume_bytes()},
        };
    } else {
        j["geometry"] = nullptr;
        j["geometry_problem"] = *r.problem;
    }
    if (r.fsinfo) {
        j["fsinfo"] = {{"lead_signature", r.fsinfo->lead_signature},
                       {"struct_signature", r.fsinfo->struct_signature},
                       {"free_count", r.fsinfo->free_count},
                       {"next_free", r.fsinfo->next_free},
                       {"trail_signature", r.fsinfo->trail_signature}};
    }
    if (r.backup) {
        j["backup_boot_sector"] = {{"sector", r.boot.backup_boot_sector}, {"identical", r.backup_identical}};
    }
    j["label"] = {{"boot_sector", rstrip(fat::oem_text(r.boot.volume_label))},
                  {"root_directory",
                   r.root_label ? nlohmann::json(rstrip(fat::oem_text(*r.root_label))) : nlohmann::json()}};
    return j;
}

void print_text(const std::string& image, const io::OpenedVolume& v, const fat::BootRegion& r) {
    fmt::print("Image:            {}\n", image);
    if (v.table.kind != io::PartitionTableKind::none) print_partition_table(v);
    fmt::print("Volume offset:    {} bytes\n", v.offset());
    fmt::print("\nBoot sector\n");
    for (const auto& f : fat::boot_fields(r.boot)) {
        if (f.is_text) {
            fmt::print("  0x{:03X}  {:<16} \"{}\"\n", f.offset, f.name, shown(f.text));
        } else if (f.name == "BPB_Media" || f.name == "Signature_word" || f.name == "BS_VolID" ||
                   f.name == "BS_DrvNum" || f.name == "BS_BootSig" || f.name == "BPB_ExtFlags") {
            fmt::print("  0x{:03X}  {:<16} 0x{:0{}X}\n", f.offset, f.name, f.number, f.width * 2);
        } else {
            fmt::print("  0x{:03X}  {:<16} {}\n", f.offset, f.name, f.number);
        }
    }
    fmt::print("\nGeometry\n");
    if (!r.layout) {
        fmt::print("  not derivable: {}\n", *r.problem);
    } else {
        const fat::Layout& l = *r.layout;
        fmt::print("  FAT type          {} ({} BPB, {} clusters)\n", fat::to_string(l.type),
                   r.boot.is_fat32_shape ? "FAT32-shaped" : "FAT12/16-shaped",
                   core::format_count(l.cluster_count));
        fmt::print("  sector size       {} bytes\n", l.bytes_per_sector);
        fmt::print("  cluster size      {} ({} sectors)\n", core::format_size(l.cluster_bytes()),
                   l.sectors_per_cluster);
        fmt::print("  cluster count     {} (clusters 2..{})\n", core::format_count(l.cluster_count),
                   std::uint64_t(l.cluster_count) + 1);
        fmt::print("  FAT size          {} sectors x {} FATs, first FAT at sector {}\n", l.fat_size_sectors,
                   l.num_fats, l.first_fat_sector);
        if (l.type == fat::FatType::fat32) {
            fmt::print("  root directory    cluster {}\n", l.root_cluster);
        } else {
            fmt::print("  root directory    sectors {}..{} ({} entries)\n", l.first_root_dir_sector,
                       l.first_root_dir_sector + l.root_dir_sectors - 1, l.root_entry_count);
        }
        fmt::print("  first data sector {} (byte {})\n", l.first_data_sector,
                   l.first_data_sector * l.bytes_per_sector);
        fmt::print("  volume size       {} sectors ({})\n", l.total_sectors,
                   core::format_size(l.volume_bytes()));
        if (l.volume_bytes() > r.device_bytes) {
            fmt::print(
                "  WARNING           the volume claims {} bytes but only {} are present ({} missing)\n",
                l.volume_bytes(), r.device_bytes, l.volume_bytes() - r.device_bytes);
        }
    }
    if (r.fsinfo) {
        fmt::print("\nFSInfo (sector {})\n", r.boot.fsinfo_sector);
        fmt::print("  signatures        {:08X} {:08X} {:08X}\n", r.fsinfo->lead_signature,
                   r.fsinfo->struct_signature, r.fsinfo->trail_signature);
        fmt::print("  free clusters     {}\n", r.fsinfo->free_count == fat::kFsInfoUnknown
                                                   ? "unknown"
                                                   : core::format_count(r.fsinfo->free_count));
        fmt::print("  next free         {}\n", r.fsinfo->next_free == fat::kFsInfoUnknown
                                                   ? "unknown"
                                                   : std::to_string(r.fsinfo->next_free));
    }
    if (r.backup) {
        fmt::print("\nBackup boot sector (sector {}): {}\n", r.boot.backup_boot_sector,
                   r.backup_identical ? "identical to sector 0" : "DIFFERS from sector 0");
    }
    fmt::print("\nLabel\n  boot sector       \"{}\"\n  root directory    {}\n",
               escape_name(rstrip(fat::oem_text(r.boot.volume_label))),
               r.root_label ? fmt::format("\"{}\"", escape_name(rstrip(fat::oem_text(*r.root_label))))
                            : std::string("none"));
}

int run_dump(DumpArgs a) {
    // "--what dir PATH IMAGE": PATH is the operand before IMAGE.
    a.image = a.operands.back();
    if (a.what == "boot" && a.operands.size() != 1)
        throw Error(ErrorCode::usage, "dump --what boot takes only IMAGE");
    if (!a.metadata_image.empty() && (a.what != "boot" || a.json))
        throw Error(ErrorCode::usage, "--metadata-image writes an image; it takes no --what or --json");
    if (a.what == "mft" && a.operands.size() != 2)
        throw Error(ErrorCode::usage, "dump --what mft takes a record number and IMAGE");
    // dump IMAGE of a disk with several partitions (or none) lists the table.
    // The image is opened (a .gz decompressed) once, then its partition selected.
    const auto [path, number] = io::split_image_spec(a.image);
    io::OpenedVolume v = io::open_disk(path);
    if (a.what == "boot" && a.metadata_image.empty() && !number &&
        v.table.kind != io::PartitionTableKind::none && v.table.partitions.size() != 1) {
        if (a.json) {
            const nlohmann::json j{{"schema_version", 1},
                                   {"image", a.image},
                                   {"filesystem", nullptr},
                                   {"image_bytes", v.file->size()},
                                   {"partition_table", partition_json(v)}};
            fmt::print("{}\n", j.dump(2));
        } else {
            fmt::print("Image:            {} ({} bytes)\n", escape_name(a.image), v.file->size());
            print_partition_table(v, true);
            fmt::print("Choose a partition with {}@N.\n", escape_name(a.image));
        }
        return kExitOk;
    }
    io::select_partition(v, path, number);
    const fs::Detection d = naming_image(a.image, [&] { return fs::detect(v.device()); });
    const auto dev = fs::reading_device(v.device(), d);
    if (!a.metadata_image.empty()) return write_metadata_image(a, v, path, *dev, d.kind);
    for (const std::string_view only : {"mft", "index"}) {
        if (a.what == only && d.kind != fs::Kind::ntfs)
            throw Error(ErrorCode::usage, fmt::format("--what {} is for NTFS images; {} holds {}", only,
                                                      a.image, fs::label(d.kind)));
    }
    const nlohmann::json table =
        v.table.kind != io::PartitionTableKind::none ? partition_json(v) : nlohmann::json();
    // dump of an NTFS boot sector shows sector 0 and the backup standing in itself.
    if (!d.note.empty() && !(d.kind == fs::Kind::ntfs && a.what == "boot"))
        warn(fmt::format("{}: {}", a.image, d.note));
    std::vector<std::string> what{a.what};
    if (a.operands.size() == 2) what.push_back(a.operands.front());
    switch (d.kind) {
        case fs::Kind::ntfs:
            if (a.what == "boot") return dump_ntfs(a.image, v, d, a.json, table);
            if (a.what == "mft") return dump_ntfs_record(a.operands.front(), a.image, v, *dev, a.json);
            return dump_ntfs_view(what, a.image, *dev, a.json);
        case fs::Kind::exfat:
            if (a.what == "boot") return dump_exfat(a.image, v, a.json, table);
            return dump_exfat_view(what, a.image, *dev, a.json);
        case fs::Kind::fat:
            break;
    }
    if (a.what != "boot") return dump_fat_view(what, a.image, *dev, a.json);
    const fat::BootRegion r = fat::read_boot_region(*dev);
    if (a.json) {
        fmt::print("{}\n", dump_json(a.image, v, r).dump(2));
    } else {
        print_text(a.image, v, r);
    }
    return kExitOk;
}

}  // namespace

Action add_dump(CLI::App& app) {
    auto args = std::make_shared<DumpArgs>();
    CLI::App* cmd = app.add_subcommand("dump",
                                       "Show the on-disk structures of an image: boot region, FAT, bitmap, "
                                       "directory entries, NTFS MFT records and indexes");
    cmd->footer(
        "Examples:\n"
        "  fsimg dump disk.img\n"
        "  fsimg dump --json card.img@1\n"
        "  fsimg dump --metadata-image card-meta.img card.img");
    cmd->add_flag("--json", args->json, "Print JSON (schema in docs/json.md)");
    cmd->add_option(
           "--what", args->what,
           "What to show: boot (default), fat (FAT summary and chains), bitmap (exFAT allocation "
           "bitmap), dir PATH (raw directory "
           "entries of PATH), extents PATH (the cluster runs of file PATH; NTFS: of every stream), mft N "
           "(NTFS: MFT record N decoded), index PATH (NTFS: a directory's $I30, or $R of /$Extend/$Reparse: "
           "root and INDX blocks)")
        ->check(CLI::IsMember({"boot", "fat", "bitmap", "dir", "extents", "mft", "index"}));
    cmd->add_option(
           "[PATH] IMAGE", args->operands,
           "Image file (IMAGE@N selects partition N), after the PATH that --what dir|extents|index needs "
           "or the record number that --what mft needs")
        ->required()
        ->expected(1, 2);
    cmd->add_option(
           "--metadata-image", args->metadata_image,
           "Write OUT: a sparse copy of IMAGE holding only the filesystem's metadata (boot "
           "region, FATs or bitmap, directories; NTFS: MFT, indexes, system files) at their offsets, "
           "file data left as holes, for a bug report")
        ->type_name("OUT");
    cmd->add_flag("--force", args->force,
                  "With --metadata-image: replace OUT when it exists (a regular file)")
        ->needs("--metadata-image");
    cmd->add_flag("--no-logfile", args->no_logfile, "With --metadata-image: leave NTFS's $LogFile out")
        ->needs("--metadata-image");
    cmd->add_flag(
           "--scramble-names", args->scramble_names,
           "With --metadata-image: replace every file and directory name with a made-up one of the same "
           "length and extension (a new random key each run; NTFS: the indexes rebuilt from them, "
           "$LogFile emptied)")
        ->needs("--metadata-image");
    return [args] { return run_dump(*args); };
}

}  // namespace fsimg::cli
