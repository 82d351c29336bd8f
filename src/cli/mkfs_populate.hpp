// mkfs --from: the command-line side of populating a FAT image (options,
// printing warnings and refusals, -s auto). The work is in fat/populate.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/io/partition.hpp"
#include "fsimg/source/tree.hpp"
#include "mkfs_common.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace fsimg::cli {

struct PopulateArgs {
    std::vector<std::string> from;  ///< DIR or DIR:/dest, repeatable
    bool local_time = false;
    bool dot_hidden = false;
    bool rename = false;
    bool overlay = false;  ///< --overlay: a later --from source's files replace an earlier one's
    std::string symlinks = "skip";
    std::string free = "1M";      ///< -s auto: free space to leave
    bool symlinks_given = false;  ///< --symlinks was on the command line
    bool free_given = false;      ///< --free was on the command line
    std::string image;            ///< the image being written: left out of the trees when inside one
    std::vector<std::string>
        also_exclude;  ///< more files left out of the trees (fsimg disk: the image replaced)
};

/// fsimg disk: the filesystem of one partition of the disk being built, as
/// `fsimg mkfs` options would give it (empty: mkfs's default).
struct PartitionFilesystem {
    std::string type;  ///< fat12, fat16, fat32, fat, exfat or ntfs
    std::string cluster, label, volume_id, mft_record_size, align;
    std::string partition_type;  ///< the type= given; empty: the filesystem's
    PopulateArgs populate;       ///< from= and the populate options
};

/// Makes `fs` in partition `number` of `disk`, a new sparse disk file that
/// fsimg disk is building (its table written, the partition reading as
/// zeros), exactly as `fsimg mkfs -t TYPE ... DISK@N` would, but in place:
/// no copy of the disk, no overwrite guard. `shown` names the partition in
/// the summary line ("sd.img@2"); `quiet` prints none. Sets the partition's
/// type to the filesystem's unless fs.partition_type gives one. Throws as
/// mkfs does (Error(usage) for a layout or tree that does not fit).
int mkfs_in_new_disk(const std::string& disk, unsigned number, const std::string& shown,
                     const PartitionFilesystem& fs, bool quiet);

/// fsimg disk, size=auto: the bytes a partition starting at sector
/// `start_lba` (512-byte sectors) needs to hold fs's trees plus
/// fs.populate.free, ending on a 1 MiB boundary: what `mkfs -t TYPE -s auto
/// --partition-table mbr --partition-start START` makes that partition.
/// Scans the trees (warnings not printed: mkfs_in_new_disk prints them);
/// creates nothing. Throws as mkfs -s auto does (a tree no layout holds, a
/// tree that cannot be read: Error(usage)).
std::uint64_t mkfs_auto_partition_bytes(const PartitionFilesystem& fs, std::uint64_t start_lba,
                                        const std::string& shown);

/// Adds --from, --local-time, --dot-hidden, --symlinks, --free to mkfs.
void add_populate_options(CLI::App* cmd, PopulateArgs& args);

/// True when the image size is to be computed from the tree: --from with no
/// -s or with -s auto. Throws Error(usage) for -s auto without --from.
bool wants_auto_size(const PopulateArgs& args, const std::string& size);

/// The --from arguments as sources ("DIR" or "DIR:/dest") and the
/// --symlinks policy, as the scanners take them.
std::vector<source::TreeSource> tree_sources(const PopulateArgs& args);
source::SymlinkPolicy symlink_policy(const PopulateArgs& args);
/// The host paths the scan leaves out: the image being written.
std::vector<std::filesystem::path> scan_exclusions(const PopulateArgs& args);

/// Throws Error(usage): the headline, the problem count, "nothing was
/// written", then one line per problem (control characters shown as \xNN).
[[noreturn]] void refuse_tree(const std::string& headline, const std::vector<source::TreeProblem>& problems);

/// Prints a scanned tree's warnings and renames; refuses (refuse_tree) when
/// it has problems, naming the filesystem ("FAT", "exFAT").
void report_scan(const source::SourceTree& tree, const std::string& fs_name);

/// Reads the trees with the FAT rules, prints their warnings, and throws
/// Error(usage) listing every problem when there is one (nothing has been
/// written then).
fat::SourceTree scan_sources(const PopulateArgs& args);

/// -s auto: the image size (partition table included) that holds the tree
/// plus --free. `base` is the layout request without volume_bytes.
std::uint64_t auto_image_bytes(const PopulateArgs& args, const fat::SourceTree& tree,
                               const fat::LayoutRequest& base, bool has_label, io::PartitionTableKind ptable,
                               std::uint32_t sector_size, std::uint64_t start_lba = 0);

/// The image size (partition table included: the partition starts at 1 MiB,
/// or at sector `start_lba` (--partition-start), and ends on a 1 MiB
/// boundary; GPT keeps its backup in the last MiB) for a volume of `volume`
/// bytes.
std::uint64_t image_bytes_for_volume(std::uint64_t volume, io::PartitionTableKind ptable,
                                     std::uint32_t sector_size, std::uint64_t start_lba = 0);

/// Plans the tree on the layout; throws Error(usage) listing every problem.
fat::PopulatePlan plan_or_refuse(const fat::SourceTree& tree, const fat::Layout& layout, bool has_label);

/// Write options from the arguments and the environment (SOURCE_DATE_EPOCH).
fat::WriteOptions populate_write_options(const PopulateArgs& args, std::int64_t now, bool device_is_zeroed,
                                         core::Progress* progress);

/// ", 3,000 files, 60 directories, 12,345 of 65,000 clusters used".
std::string populate_summary(const fat::SourceTree& tree, const fat::PopulatePlan& plan,
                             const fat::Layout& layout);

}  // namespace fsimg::cli
