// fsimg mkfs -t exfat.
#include "mkfs_exfat.hpp"

#include <fmt/format.h>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/partition.hpp"
#include "mkfs_common.hpp"
#include "mkfs_populate.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

constexpr std::uint8_t kMbrTypeExfat = 0x07;  ///< formats.md §4.1, [EXFAT §10.2]

}  // namespace

int run_mkfs_exfat(const ExfatMkfsRequest& a) {
    const io::PartitionTableKind ptable = io::parse_partition_table_kind(a.partition_table);
    const std::uint32_t bps = a.sector_size;
    const std::uint64_t start = a.part ? partition_start_lba(*a.part, bps) : 0;  // --partition-start

    exfat::LayoutRequest req;
    req.bytes_per_sector = bps;
    if (!a.cluster.empty()) req.cluster_bytes = parse_u32_size(a.cluster, "-c");
    if (!a.align.empty()) req.align_bytes = parse_u32_size(a.align, "--align");

    // --from: read the trees before anything is created; every problem stops here.
    std::optional<source::SourceTree> tree;
    if (a.populate != nullptr && !a.populate->from.empty()) {
        if (a.populate->rename)
            throw Error(ErrorCode::usage, "--rename is for FAT; exFAT stores the names as they are");
        tree = exfat::scan_tree(
            {tree_sources(*a.populate), symlink_policy(*a.populate), scan_exclusions(*a.populate)});
        report_scan(*tree, "exFAT");
    }
    std::uint64_t image_bytes = a.image_bytes;
    if (a.auto_size && tree) {
        exfat::LayoutRequest base = req;
        base.partition_offset = ptable == io::PartitionTableKind::none ? 0
                                : start != 0                           ? start
                                                                       : (1u << 20) / bps;
        const auto sized = exfat::volume_bytes_for_tree(*tree, base, core::parse_size(a.populate->free));
        if (const auto* r = std::get_if<exfat::LayoutRefusal>(&sized)) refuse_layout("-s auto", *r);
        image_bytes = image_bytes_for_volume(std::get<std::uint64_t>(sized), ptable, bps, start);
        if (a.size_only != nullptr) {
            *a.size_only = image_bytes;
            return 0;
        }
    }

    const io::PartitionPlacement place = place_volume(a.partition, ptable, image_bytes, bps, a.part);
    req.volume_bytes = place.sector_count * bps;
    req.partition_offset = hidden_sectors(a.part, place);
    auto planned = exfat::plan_layout(req);
    if (auto* refusal = std::get_if<exfat::LayoutRefusal>(&planned)) {
        refuse_layout(cannot_make("exfat", a.size_text, image_bytes, a.cluster,
                                  a.align.empty() ? "" : " --align " + a.align),
                      *refusal);
    }
    const exfat::Layout& layout = std::get<exfat::Layout>(planned);
    std::optional<exfat::PopulatePlan> populate;
    if (tree) {
        auto pp = exfat::plan_population(*tree, layout);
        if (auto* problems = std::get_if<std::vector<source::TreeProblem>>(&pp)) {
            refuse_tree(fmt::format("the --from tree does not fit this exFAT volume with {} clusters",
                                    core::format_size(layout.cluster_bytes())),
                        *problems);
        }
        populate = std::get<exfat::PopulatePlan>(std::move(pp));
    }

    exfat::FormatOptions fo;
    fo.label = a.label;
    exfat::volume_label_entry_from_utf8(a.label);  // refuse a bad label before creating anything

    // Identity: reproducible with SOURCE_DATE_EPOCH and --volume-id. The spec
    // asks for a serial combined from the format date and time [EXFAT §3.1.11].
    const CreationTime created = creation_time();
    const std::int64_t now = created.unix_seconds;
    fo.volume_serial_number = volume_id_32(a.volume_id, created);

    if (a.explain) {
        for (const auto& line : exfat::explain_layout(req, layout)) fmt::print("{}\n", line);
    }
    write_destination(
        {a.image, a.is_device, image_bytes, a.gzip, a.refusal, a.partition, kMbrTypeExfat},
        [&](io::BlockDevice& disk, bool zeroed) {
            fo.device_is_zeroed = zeroed;
            write_partition_table(disk, ptable, bps, place, kMbrTypeExfat, fo.volume_serial_number, a.label,
                                  a.part);
            io::SubRange volume(disk, place.first_lba * bps, req.volume_bytes);
            exfat::format_volume(volume, layout, fo);
            if (populate) {
                const auto progress =
                    begin_progress("copying files", tree->data_bytes, core::ProgressUnit::bytes);
                exfat::write_population(
                    volume, layout, *tree, *populate,
                    populate_write_options(*a.populate, now, fo.device_is_zeroed, progress.get()));
                if (progress) progress->end();
            }
        });

    note_no_partition_table(ptable, a.partition != nullptr, a.part ? *a.part : PartitionOptions{},
                            layout.volume_bytes(), a.quiet, "--partition-table mbr or gpt");
    if (!a.quiet) {
        fmt::print("{}: exFAT {}, {} clusters of {}, serial {:04X}-{:04X}{}{}{}\n", a.image,
                   core::format_size_both(layout.volume_bytes()), core::format_count(layout.cluster_count),
                   core::format_size(layout.cluster_bytes()), fo.volume_serial_number >> 16,
                   fo.volume_serial_number & 0xFFFF,
                   a.label.empty() ? "" : fmt::format(", label \"{}\"", a.label),
                   partition_summary(a.partition, ptable, place),
                   populate ? fmt::format(", {} ({}), {}, {} of {} clusters used",
                                          core::format_counted(tree->files, "file", "files"),
                                          core::format_size(tree->data_bytes),
                                          core::format_counted(tree->directories, "directory", "directories"),
                                          core::format_count(populate->used_clusters),
                                          core::format_count(layout.cluster_count))
                            : "");
    }
    return kExitOk;
}

}  // namespace fsimg::cli
