// fsimg mkfs: create a filesystem image.
#include <fmt/format.h>
#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/partition.hpp"
#include "fsimg/io/probe.hpp"
#include "mkfs_common.hpp"
#include "mkfs_exfat.hpp"
#include "mkfs_ntfs.hpp"
#include "mkfs_populate.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

struct MkfsArgs {
    std::string type;
    std::string size;
    std::string cluster;
    std::uint32_t sector_size = 512;
    std::string label;
    std::string volume_id;
    std::string partition_table = "none";
    std::string align;  // exFAT only
    std::string mft_record_size;
    bool force = false;
    bool device = false;
    bool explain = false;
    bool quiet = false;
    bool json = false;
    bool gzip = false;
    bool keep_type = false;
    bool sector_size_given = false;
    PartitionOptions part;  // --partition-type, --partition-start, ...
    std::string image;
    PopulateArgs populate;  // --from and its options
    // fsimg disk: the new disk file being built, and the partition to fill
    // in it; `image` then only names it in the summary ("sd.img@2").
    std::string new_disk;
    unsigned new_disk_number = 0;
    // fsimg disk, size=auto: only the size of the image -s auto would make
    // (with --partition-table mbr --partition-start) is stored here.
    std::uint64_t* size_only = nullptr;
};

std::optional<fat::FatType> parse_fat_type(const std::string& t) {
    if (t == "fat12") return fat::FatType::fat12;
    if (t == "fat16") return fat::FatType::fat16;
    if (t == "fat32") return fat::FatType::fat32;
    return std::nullopt;  // "fat": choose
}

std::uint8_t mbr_type_for(fat::FatType t) {
    switch (t) {
        case fat::FatType::fat12:
            return 0x01;
        case fat::FatType::fat16:
            return 0x0E;  // FAT16 LBA
        case fat::FatType::fat32:
            return 0x0C;  // FAT32 LBA
    }
    return 0x0C;
}

/// Refuses options that would do nothing for the chosen type or mode, so a
/// typo or a misunderstanding is not silently ignored (issue 21): the
/// filesystem-specific options, the --from options without --from, --free
/// with a fixed size. Throws Error(usage).
void refuse_idle_options(const MkfsArgs& a) {
    if (!a.mft_record_size.empty() && a.type != "ntfs")
        throw Error(ErrorCode::usage, "--mft-record-size is only for -t ntfs");
    if (!a.align.empty() && a.type != "exfat") throw Error(ErrorCode::usage, "--align is only for -t exfat");
    const PopulateArgs& p = a.populate;
    if (p.from.empty()) {
        const char* idle = p.local_time       ? "--local-time"
                           : p.dot_hidden     ? "--dot-hidden"
                           : p.overlay        ? "--overlay"
                           : p.rename         ? "--rename"
                           : p.symlinks_given ? "--symlinks"
                           : p.free_given     ? "--free"
                                              : nullptr;
        if (idle != nullptr)
            throw Error(
                ErrorCode::usage,
                fmt::format("{} only applies to files copied with --from DIR; there is no --from", idle));
    } else if (p.free_given && !a.size.empty() && a.size != "auto") {
        throw Error(ErrorCode::usage,
                    fmt::format("--free is the room left when the size follows the tree (no -s, or -s auto); "
                                "with -s {} the free space is what the tree leaves",
                                a.size));
    }
}

/// IMAGE@N: the options that make a new disk refused, the partition opened.
PartitionTarget mkfs_partition_target(const MkfsArgs& a, const std::string& disk, unsigned number,
                                      std::optional<std::string>& refusal) {
    const auto refuse = [&](const char* option, const char* why) {
        throw Error(ErrorCode::usage, fmt::format("{} with {}@{}: {}", option, disk, number, why));
    };
    if (a.partition_table != "none")
        refuse("--partition-table", "IMAGE@N formats partition N of the existing table; leave it out");
    if (a.gzip) refuse("--gzip", "IMAGE@N changes an existing disk image; compress it afterwards");
    if (a.device) refuse("--device", "give the partition's own device (/dev/sdb2) instead");
    if (a.size == "auto") refuse("-s auto", "the partition has its size; leave -s out to fill it");
    if (a.populate.free_given)
        refuse("--free", "the partition has its size; the free space is what the tree leaves");
    struct stat st {};
    if (::stat(disk.c_str(), &st) != 0)
        throw Error(
            ErrorCode::usage,
            fmt::format("{} does not exist: IMAGE@N formats partition N of an existing disk image", disk));
    if (!S_ISREG(st.st_mode))
        throw Error(
            ErrorCode::refused,
            fmt::format("{} is not a regular file: IMAGE@N formats a partition of a disk image file", disk));
    std::uint32_t sector_size = a.sector_size;
    if (!a.sector_size_given) {  // the table's, 512 or 4096
        const io::OpenedVolume v = io::open_disk(disk);
        sector_size = v.table.kind == io::PartitionTableKind::none ? a.sector_size : v.table.sector_size;
    }
    PartitionTarget t = open_partition_target(disk, number, sector_size, a.force, refusal);
    check_partition_options(a.part, t.table.kind, true);
    if (a.keep_type && !a.part.type.empty())
        throw Error(ErrorCode::usage,
                    "--keep-type keeps the type; --partition-type sets one: give one of them");
    t.keep_type = a.keep_type;
    t.options = a.part;
    t.in_place = !a.new_disk.empty();
    return t;
}

int run_mkfs(MkfsArgs a) {
    refuse_idle_options(a);
    if (a.sector_size != 512 && a.sector_size != 1024 && a.sector_size != 2048 && a.sector_size != 4096) {
        throw Error(
            ErrorCode::usage,
            fmt::format("--sector-size {} is not supported; use 512, 1024, 2048 or 4096", a.sector_size));
    }
    const io::PartitionTableKind ptable = io::parse_partition_table_kind(a.partition_table);
    // IMAGE@N: partition N of an existing disk image.
    auto [disk_path, number] = a.new_disk.empty()
                                   ? io::split_image_spec(a.image)
                                   : std::pair(a.new_disk, std::optional<unsigned>(a.new_disk_number));
    if (a.keep_type && !number)
        throw Error(ErrorCode::usage,
                    "--keep-type is for IMAGE@N, formatting a partition of an existing disk");
    if (!number) check_partition_options(a.part, ptable, false);
    if (number) a.populate.image = disk_path;  // the file the trees must not contain
    std::optional<PartitionTarget> target;
    std::optional<std::string> refusal;
    std::uint64_t image_bytes = 0;
    bool auto_size = false;
    bool is_device = false;
    std::unique_ptr<io::FileImage> existing;
    if (number) {
        target = mkfs_partition_target(a, disk_path, *number, refusal);
        a.sector_size = target->table.sector_size;
        image_bytes = target->bytes();
        if (!a.size.empty()) {
            image_bytes = core::parse_size(a.size);
            if (image_bytes > target->bytes())
                throw Error(ErrorCode::usage,
                            fmt::format("-s {} is larger than partition {} of \"{}\" ({})", a.size, *number,
                                        disk_path, core::format_size_both(target->bytes())));
        }
    } else if (a.size_only != nullptr) {
        auto_size = true;  // nothing is created: no destination to look at
    } else {
        const std::filesystem::path path(a.image);

        // What is at the destination now.
        struct stat st {};
        const bool exists = ::stat(path.c_str(), &st) == 0;
        is_device = exists && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode));
        if (is_device && !a.device) {
            throw Error(ErrorCode::refused,
                        fmt::format("{} is a device; fsimg writes image files. Pass --device to format the "
                                    "device itself (everything on it is lost)",
                                    a.image));
        }
        if (exists && !is_device && !S_ISREG(st.st_mode)) {
            throw Error(ErrorCode::refused, fmt::format("{} exists and is not a regular file", a.image));
        }
        if (is_device && a.gzip) {
            throw Error(ErrorCode::usage,
                        fmt::format("--gzip writes a compressed image file; {} is a device", a.image));
        }
        // Content worth keeping refuses the write, but only once the arguments
        // have been checked (write_destination throws it): in a file anything but
        // zeros, on a device any format libblkid or fsimg recognises.
        if (is_device) {
            if (auto why = io::device_busy_reason(path)) {
                throw Error(
                    ErrorCode::refused,
                    fmt::format("{}; fsimg never formats a mounted or busy device (not even with --force)",
                                *why));
            }
        }
        if (exists) existing = io::FileImage::open(path, is_device, is_device);
        if (exists && !a.force) {
            // A device's old bytes are noise: only formats count there, so no zero test.
            refusal = overwrite_refusal_of(a.image, io::probe_path(path, io::ProbeOptions{!is_device}),
                                           *existing, is_device);
        }

        auto_size = wants_auto_size(a.populate, a.size);  // --from without -s, or -s auto
        if (auto_size) {
            // Decided from the tree below.
        } else if (!a.size.empty()) {
            image_bytes = core::parse_size(a.size);
            if (is_device && image_bytes > existing->size()) {
                throw Error(ErrorCode::usage, fmt::format("-s {} is larger than the device ({} bytes)",
                                                          a.size, existing->size()));
            }
        } else if (a.gzip) {
            throw Error(
                ErrorCode::usage,
                "--gzip needs the size of the uncompressed image: give it with -s SIZE (e.g. -s 64M)");
        } else if (exists) {
            image_bytes = existing->size();
        } else {
            throw Error(ErrorCode::usage,
                        fmt::format("{} does not exist: give its size with -s SIZE (e.g. -s 64M)", a.image));
        }
    }
    if (image_bytes % a.sector_size != 0) {
        warn(fmt::format(
            "the image size {} is not a multiple of the {}-byte sector; the last {} bytes stay unused",
            image_bytes, a.sector_size, image_bytes % a.sector_size));
    }

    if (a.type == "exfat") {
        existing.reset();
        return run_mkfs_exfat(
            {a.image, is_device, image_bytes, a.size, a.cluster, a.align, a.sector_size, a.label,
             a.volume_id.empty() ? std::nullopt : std::optional(parse_volume_id(a.volume_id)),
             a.partition_table, a.explain, a.quiet, &a.populate, auto_size, a.gzip, refusal,
             target ? &*target : nullptr, &a.part, a.size_only});
    }
    if (a.type == "ntfs") {
        existing.reset();
        return run_mkfs_ntfs({a.image, is_device, image_bytes, a.size, a.cluster, a.sector_size, a.label,
                              a.volume_id, a.mft_record_size, a.partition_table, a.explain, a.quiet, a.gzip,
                              refusal, &a.populate, auto_size, target ? &*target : nullptr, &a.part,
                              a.size_only});
    }

    // --from: read the trees before anything is created; every problem stops here.
    std::optional<fat::SourceTree> tree;
    if (!a.populate.from.empty()) tree = scan_sources(a.populate);
    if (auto_size) {
        fat::LayoutRequest base;
        base.bytes_per_sector = a.sector_size;
        base.type = parse_fat_type(a.type);
        if (!base.type)
            base.root_entry_count = fat::root_entry_count_for_tree(*tree, !a.label.empty(), a.sector_size);
        if (!a.cluster.empty()) {
            base.cluster_bytes =
                static_cast<std::uint32_t>(std::min<std::uint64_t>(core::parse_size(a.cluster), 1u << 31));
        }
        image_bytes = auto_image_bytes(a.populate, *tree, base, !a.label.empty(), ptable, a.sector_size,
                                       partition_start_lba(a.part, a.sector_size));
        if (a.size_only != nullptr) {
            *a.size_only = image_bytes;
            return kExitOk;
        }
    }

    // Where the filesystem goes.
    const PartitionTarget* in_partition = target ? &*target : nullptr;
    const io::PartitionPlacement place =
        place_volume(in_partition, ptable, image_bytes, a.sector_size, &a.part);
    fat::LayoutRequest req;
    req.volume_bytes = place.sector_count * a.sector_size;
    req.bytes_per_sector = a.sector_size;
    req.type = parse_fat_type(a.type);
    req.hidden_sectors = hidden_sectors(&a.part, place);
    if (tree && !req.type)
        req.root_entry_count = fat::root_entry_count_for_tree(*tree, !a.label.empty(), a.sector_size);
    if (!a.cluster.empty()) {
        const std::uint64_t c = core::parse_size(a.cluster);
        if (c > 0xFFFFFFFFu) throw Error(ErrorCode::usage, fmt::format("-c {} is far too large", a.cluster));
        req.cluster_bytes = static_cast<std::uint32_t>(c);
    }
    auto planned = fat::plan_layout(req);
    if (auto* refusal = std::get_if<fat::LayoutRefusal>(&planned)) {
        refuse_layout(cannot_make(a.type, a.size, image_bytes, a.cluster), *refusal);
    }
    const fat::Layout& layout = std::get<fat::Layout>(planned);
    std::optional<fat::PopulatePlan> populate;
    if (tree) populate = plan_or_refuse(*tree, layout, !a.label.empty());

    // Identity and time: reproducible with SOURCE_DATE_EPOCH and --volume-id.
    const CreationTime created = creation_time();
    const std::int64_t now = created.unix_seconds;
    const std::uint32_t volume_id = volume_id_32(
        a.volume_id.empty() ? std::nullopt : std::optional(parse_volume_id(a.volume_id)), created);

    if (a.explain) {
        for (const auto& line : fat::explain_layout(req, layout)) fmt::print("{}\n", line);
    }
    fat::FormatOptions fo;
    fo.volume_id = volume_id;
    fo.label = a.label;
    fo.timestamp_unix = now;
    fat::normalize_volume_label(a.label);  // refuse a bad label before creating anything

    existing.reset();
    write_destination(
        {a.image, is_device, image_bytes, a.gzip, refusal, in_partition, mbr_type_for(layout.type)},
        [&](io::BlockDevice& disk, bool zeroed) {
            fo.device_is_zeroed = zeroed;
            write_partition_table(disk, ptable, a.sector_size, place, mbr_type_for(layout.type), volume_id,
                                  a.label, &a.part);
            io::SubRange volume(disk, place.first_lba * a.sector_size, req.volume_bytes);
            fat::format_volume(volume, layout, fo);
            if (populate) {
                const auto progress =
                    begin_progress("copying files", tree->data_bytes, core::ProgressUnit::bytes);
                fat::write_population(
                    volume, layout, *tree, *populate,
                    populate_write_options(a.populate, now, fo.device_is_zeroed, progress.get()));
                if (progress) progress->end();
            }
        });

    note_no_partition_table(ptable, in_partition != nullptr, a.part, req.volume_bytes, a.quiet,
                            "--partition-table mbr");
    if (!a.quiet) {
        fmt::print("{}: {} {}, {} clusters of {}, serial {:04X}-{:04X}{}{}{}\n", a.image,
                   to_string(layout.type), core::format_size_both(req.volume_bytes),
                   core::format_count(layout.cluster_count), core::format_size(layout.cluster_bytes()),
                   volume_id >> 16, volume_id & 0xFFFF,
                   a.label.empty() ? "" : fmt::format(", label \"{}\"", a.label),
                   partition_summary(in_partition, ptable, place),
                   populate ? populate_summary(*tree, *populate, layout) : "");
    }
    return kExitOk;
}

/// The mkfs arguments fsimg disk gives for one partition's filesystem;
/// `shown` names it in messages.
MkfsArgs args_for(const PartitionFilesystem& fs, const std::string& shown) {
    MkfsArgs a;
    a.type = fs.type;
    a.cluster = fs.cluster;
    a.label = fs.label;
    a.volume_id = fs.volume_id;
    a.mft_record_size = fs.mft_record_size;
    a.align = fs.align;
    a.populate = fs.populate;
    a.image = shown;
    return a;
}

}  // namespace

int mkfs_in_new_disk(const std::string& disk, unsigned number, const std::string& shown,
                     const PartitionFilesystem& fs, bool quiet) {
    MkfsArgs a = args_for(fs, shown);
    a.part.type = fs.partition_type;
    a.part.type_option = "type=";
    a.force = true;  // the partition is zeros: fsimg disk checked the file it replaces
    a.quiet = quiet;
    a.new_disk = disk;
    a.new_disk_number = number;
    return run_mkfs(std::move(a));
}

std::uint64_t mkfs_auto_partition_bytes(const PartitionFilesystem& fs, std::uint64_t start_lba,
                                        const std::string& shown) {
    MkfsArgs a = args_for(fs, shown);
    a.partition_table = "mbr";
    a.part.start = fmt::format("{}s", start_lba);
    a.quiet = true;
    std::uint64_t image_bytes = 0;
    a.size_only = &image_bytes;
    // The scan's warnings are printed when the partition is made, not twice.
    struct Hush {
        bool was = output_options().quiet;
        Hush() { output_options().quiet = true; }
        ~Hush() { output_options().quiet = was; }
    } hush;
    run_mkfs(std::move(a));
    return image_bytes - start_lba * 512;
}

Action add_mkfs(CLI::App& app) {
    auto args = std::make_shared<MkfsArgs>();
    CLI::App* cmd = app.add_subcommand("mkfs", "Create a FAT12/16/32, exFAT or NTFS image file");
    cmd->footer(
        "Examples:\n"
        "  fsimg mkfs -t fat32 -s 2G disk.img\n"
        "  fsimg mkfs -t fat -s 200M -c 512 --explain small.img\n"
        "  fsimg mkfs -t fat16 -s 256M -L CAMERA --partition-table mbr card.img\n"
        "  SOURCE_DATE_EPOCH=0 fsimg mkfs -t fat32 -s 1G --volume-id 1234ABCD repro.img\n"
        "  fsimg mkfs -t exfat -s 256M --from release/ --gzip release.img.gz\n"
        "  fsimg mkfs -t fat32 --from rootfs/ --from photos:/DCIM sd.img   (size: the tree + --free)");
    cmd->add_option("-t,--type", args->type,
                    "Filesystem: fat12, fat16, fat32, fat (choose by size), exfat or ntfs")
        ->required()
        ->type_name("TYPE")
        ->check(CLI::IsMember({"fat12", "fat16", "fat32", "fat", "exfat", "ntfs"}));
    cmd->add_option("-s,--size", args->size,
                    "Image size: 512, 4K, 64M, 2G, 1T (powers of 1024) or 1GB, 256GB (powers of 1000); "
                    "default: the existing file's size")
        ->type_name("SIZE");
    cmd->add_option("-c,--cluster-size", args->cluster, "Cluster (allocation unit) size in bytes, e.g. 4K")
        ->type_name("SIZE");
    cmd->add_option("--sector-size", args->sector_size, "Logical sector size: 512, 1024, 2048 or 4096")
        ->type_name("N");
    cmd->add_option("-L,--label", args->label, "Volume label (up to 11 characters)")->type_name("LABEL");
    cmd->add_option("--volume-id", args->volume_id,
                    "Volume serial number, 8 hex digits (default: from the time)")
        ->type_name("HEX");
    cmd->add_option("--partition-table", args->partition_table, "none, mbr or gpt (one partition at 1 MiB)")
        ->check(CLI::IsMember({"none", "mbr", "gpt"}));
    cmd->add_option("--partition-type", args->part.type,
                    "With --partition-table: the partition's type: esp, linux, basic-data, fat32-lba, exfat, "
                    "ntfs, ... or an MBR byte (0c) / GPT GUID (default: from the filesystem; GPT Basic Data)")
        ->type_name("TYPE");
    cmd->add_option("--partition-start", args->part.start,
                    "With --partition-table: where the partition starts, a size (4M) or sectors (2048s); "
                    "default 1M")
        ->type_name("SIZE|Ns");
    cmd->add_option("--disk-id", args->part.disk_id,
                    "With --partition-table: the MBR disk signature (8 hex digits) or the GPT disk GUID "
                    "(default: from the volume ID)")
        ->type_name("ID");
    cmd->add_option("--partition-uuid", args->part.uuid,
                    "GPT: the partition's unique GUID, its PARTUUID (default: from the volume ID)")
        ->type_name("GUID");
    cmd->add_option("--partition-name", args->part.name, "GPT: the partition's name (default: the label)")
        ->type_name("NAME");
    cmd->add_flag("--bootable", args->part.bootable, "MBR: mark the partition active (status 0x80)");
    cmd->add_option("--hidden-sectors", args->part.hidden_sectors,
                    "No partition table: the boot sector's hidden sectors, for a partition image placed at "
                    "that sector later (mkfs.fat -h)")
        ->type_name("N");
    cmd->add_option(
           "--align", args->align,
           "exFAT: align the FAT and cluster heap to SIZE (default 1M; the heap also to the cluster)")
        ->type_name("SIZE");
    cmd->add_option("--mft-record-size", args->mft_record_size, "NTFS: MFT record size, 1024 or 4096")
        ->type_name("N");
    cmd->add_flag("--force", args->force,
                  "Overwrite a file that holds anything but zeros (a filesystem, a partition table, a disk "
                  "image, data)");
    cmd->add_flag("--keep-type", args->keep_type,
                  "IMAGE@N: leave the partition's type byte/GUID as it is (default: set to match the "
                  "filesystem)");
    cmd->add_flag("--device", args->device, "Allow formatting a block device in place");
    cmd->add_flag("--gzip", args->gzip,
                  "Write IMAGE gzip-compressed (built as a sparse temporary image, then compressed)");
    cmd->add_flag("-v,--explain", args->explain, "Print the chosen geometry and why");
    cmd->add_flag("-q,--quiet", args->quiet, "Print nothing but errors");
    cmd->add_flag(
        "--json", args->json,
        "Print what the image holds as JSON for a build log (read back from it: geometry, label, "
        "serial, used and free clusters, the check's errors, the partition's offset, size, type and "
        "PARTUUID; docs/json.md)");
    add_populate_options(cmd, args->populate);
    cmd->add_option("IMAGE", args->image,
                    "Image file to create, or IMAGE@N: format partition N of an existing disk image")
        ->required();
    auto* sector_opt = cmd->get_option("--sector-size");
    return [args, sector_opt] {
        args->sector_size_given = sector_opt->count() > 0;
        args->populate.image = args->image;
        if (args->json) args->quiet = true;  // the summary is the JSON
        const int rc = run_mkfs(*args);
        if (rc == kExitOk && args->json)
            print_mkfs_json(args->image, io::parse_partition_table_kind(args->partition_table));
        return rc;
    };
}

}  // namespace fsimg::cli
