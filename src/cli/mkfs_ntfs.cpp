// fsimg mkfs -t ntfs.
#include "mkfs_ntfs.hpp"

#include <fmt/format.h>

#include <random>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/partition.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/structs.hpp"
#include "mkfs_common.hpp"
#include "mkfs_populate.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

constexpr std::uint8_t kMbrTypeNtfs = 0x07;  ///< formats.md §4.1

/// A serial from the creation time (reproducible under SOURCE_DATE_EPOCH),
/// mixed so that neighbouring times give unrelated serials (splitmix64).
std::uint64_t serial_from(std::uint64_t seed) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

int run_mkfs_ntfs(const NtfsMkfsRequest& a) {
    const io::PartitionTableKind ptable = io::parse_partition_table_kind(a.partition_table);
    const std::uint32_t bps = a.sector_size;
    const std::uint64_t start = a.part ? partition_start_lba(*a.part, bps) : 0;  // --partition-start

    ntfs::LayoutRequest req;
    req.bytes_per_sector = bps;
    if (!a.cluster.empty()) req.cluster_bytes = parse_u32_size(a.cluster, "-c");
    if (!a.mft_record_size.empty())
        req.mft_record_bytes = parse_u32_size(a.mft_record_size, "--mft-record-size");

    // --from: read the trees before anything is created; every problem stops here.
    std::optional<source::SourceTree> tree;
    if (a.populate != nullptr && !a.populate->from.empty()) {
        if (a.populate->rename)
            throw Error(ErrorCode::usage, "--rename is for FAT; NTFS stores the names as they are");
        if (a.populate->local_time)
            throw Error(ErrorCode::usage, "--local-time is for FAT and exFAT; NTFS stores UTC");
        tree = ntfs::scan_tree(
            {tree_sources(*a.populate), symlink_policy(*a.populate), scan_exclusions(*a.populate)});
        report_scan(*tree, "NTFS");
    }
    std::uint64_t image_bytes = a.image_bytes;
    if (a.auto_size && tree) {
        ntfs::LayoutRequest base = req;
        base.hidden_sectors = ptable == io::PartitionTableKind::none ? 0
                              : start != 0                           ? start
                                                                     : (1u << 20) / bps;
        const auto sized = ntfs::volume_bytes_for_tree(*tree, base, core::parse_size(a.populate->free));
        if (const auto* r = std::get_if<ntfs::LayoutRefusal>(&sized)) refuse_layout("-s auto", *r);
        image_bytes = image_bytes_for_volume(std::get<std::uint64_t>(sized), ptable, bps, start);
        if (a.size_only != nullptr) {
            *a.size_only = image_bytes;
            return 0;
        }
    }

    const io::PartitionPlacement place = place_volume(a.partition, ptable, image_bytes, bps, a.part);
    req.volume_bytes = place.sector_count * bps;
    req.hidden_sectors = hidden_sectors(a.part, place);
    auto planned = ntfs::plan_layout(req, ntfs::secure_sds_bytes());
    if (auto* refusal = std::get_if<ntfs::LayoutRefusal>(&planned)) {
        refuse_layout(cannot_make("ntfs", a.size_text, image_bytes, a.cluster), *refusal);
    }
    const ntfs::Layout& layout = std::get<ntfs::Layout>(planned);
    std::optional<ntfs::PopulatePlan> populate;
    if (tree) {
        auto pp = ntfs::plan_population(*tree, layout);
        if (auto* problems = std::get_if<std::vector<source::TreeProblem>>(&pp)) {
            refuse_tree(fmt::format("the --from tree does not fit this NTFS volume with {} clusters",
                                    core::format_size(layout.cluster_bytes)),
                        *problems);
        }
        populate = std::get<ntfs::PopulatePlan>(std::move(pp));
    }

    ntfs::FormatOptions fo;
    fo.label = core::utf8_to_utf16(a.label);
    if (fo.label.size() > 128) {
        throw Error(ErrorCode::usage,
                    fmt::format("-L: an NTFS label has at most 128 UTF-16 units, \"{}\" has {}", a.label,
                                fo.label.size()));
    }
    const CreationTime created = creation_time();
    fo.creation_filetime = ntfs::filetime_from_unix(created.unix_seconds, created.nanoseconds);
    if (!a.volume_id.empty()) {
        fo.volume_serial_number = parse_hex_volume_id(a.volume_id, 64);
    } else if (created.from_source_date_epoch) {
        fo.volume_serial_number = serial_from(fo.creation_filetime);
    } else {
        fo.volume_serial_number = serial_from(fo.creation_filetime ^ std::random_device{}());
    }

    if (a.explain) {
        fmt::print("NTFS {}: {} clusters of {}, {}-byte sectors, MFT records of {} bytes\n",
                   core::format_size(layout.volume_bytes()), core::format_count(layout.cluster_count),
                   core::format_size(layout.cluster_bytes), layout.bytes_per_sector, layout.mft_record_bytes);
        fmt::print("  $MFT at LCN {} ({} records), $MFTMirr at LCN {} ({} records), $LogFile {} at LCN {}\n",
                   layout.mft.lcn, layout.mft_records, layout.mftmirr.lcn, layout.mftmirr_records,
                   core::format_size(layout.logfile_bytes), layout.logfile.lcn);
        fmt::print("  MFT zone up to LCN {}; {} clusters in use\n", layout.mft_zone_end,
                   core::format_count(layout.used_clusters()));
    }
    const std::uint32_t serial32 = static_cast<std::uint32_t>(fo.volume_serial_number);

    write_destination(
        {a.image, a.is_device, image_bytes, a.gzip, a.refusal, a.partition, kMbrTypeNtfs},
        [&](io::BlockDevice& disk, bool zeroed) {
            fo.device_is_zeroed = zeroed;
            write_partition_table(disk, ptable, bps, place, kMbrTypeNtfs, serial32, a.label, a.part);
            io::SubRange volume(disk, place.first_lba * bps, req.volume_bytes);
            ntfs::format_volume(volume, layout, fo);
            if (populate) {
                const auto progress =
                    begin_progress("copying files", tree->data_bytes, core::ProgressUnit::bytes);
                ntfs::write_population(volume, layout, *tree, *populate,
                                       populate_write_options(*a.populate, created.unix_seconds,
                                                              fo.device_is_zeroed, progress.get()));
                if (progress) progress->end();
            }
        });

    if (!a.quiet) {
        fmt::print("{}: NTFS {}, {} clusters of {}, serial {:016X}{}{}{}\n", a.image,
                   core::format_size_both(layout.volume_bytes()), core::format_count(layout.cluster_count),
                   core::format_size(layout.cluster_bytes), fo.volume_serial_number,
                   a.label.empty() ? "" : fmt::format(", label \"{}\"", a.label),
                   partition_summary(a.partition, ptable, place),
                   populate ? fmt::format(", {} ({}), {}, {} MFT records, {} of {} clusters used",
                                          core::format_counted(tree->files, "file", "files"),
                                          core::format_size(tree->data_bytes),
                                          core::format_counted(tree->directories, "directory", "directories"),
                                          core::format_count(populate->mft_records),
                                          core::format_count(populate->used_clusters),
                                          core::format_count(layout.cluster_count))
                            : "");
    }
    return kExitOk;
}

}  // namespace fsimg::cli
