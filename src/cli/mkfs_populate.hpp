// mkfs --from: the command-line side of populating a FAT image (options,
// printing warnings and refusals, -s auto). The work is in fat/populate.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/io/partition.hpp"

namespace fsimg::cli {

struct PopulateArgs {
    std::vector<std::string> from;  ///< DIR or DIR:/dest, repeatable
    bool local_time = false;
    bool dot_hidden = false;
    bool rename = false;
    std::string symlinks = "skip";
    std::string free = "1M";  ///< -s auto: free space to leave
};

/// Adds --from, --local-time, --dot-hidden, --symlinks, --free to mkfs.
void add_populate_options(CLI::App* cmd, PopulateArgs& args);

/// True when the image size is to be computed from the tree: --from with no
/// -s or with -s auto. Throws Error(usage) for -s auto without --from.
bool wants_auto_size(const PopulateArgs& args, const std::string& size);

/// Reads the trees, prints their warnings, and throws Error(usage) listing
/// every problem when there is one (nothing has been written then).
fat::SourceTree scan_sources(const PopulateArgs& args);

/// -s auto: the image size (partition table included) that holds the tree
/// plus --free. `base` is the layout request without volume_bytes.
std::uint64_t auto_image_bytes(const PopulateArgs& args, const fat::SourceTree& tree,
                               const fat::LayoutRequest& base, bool has_label, io::PartitionTableKind ptable,
                               std::uint32_t sector_size);

/// Plans the tree on the layout; throws Error(usage) listing every problem.
fat::PopulatePlan plan_or_refuse(const fat::SourceTree& tree, const fat::Layout& layout, bool has_label);

/// Write options from the arguments and the environment (SOURCE_DATE_EPOCH).
fat::WriteOptions populate_write_options(const PopulateArgs& args, std::int64_t now, bool device_is_zeroed);

/// ", 3,000 files, 60 directories, 12,345 of 65,000 clusters used".
std::string populate_summary(const fat::SourceTree& tree, const fat::PopulatePlan& plan,
                             const fat::Layout& layout);

}  // namespace fsimg::cli
