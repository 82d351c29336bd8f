// fsimg dump of an exFAT volume: called by run_dump (dump.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// Prints the exFAT boot region (both copies, checksums), the geometry and
/// the root's system entries, as text or JSON (docs/json.md).
/// `partition_table` is dump's JSON description of the table (null when none).
int dump_exfat(const std::string& image, io::OpenedVolume& volume, bool json,
               const nlohmann::json& partition_table);

/// dump --what bitmap | dir PATH | extents PATH of an exFAT volume
/// (src/cli/dump_exfat_view.cpp); `what` is the kind and its PATH.
int dump_exfat_view(const std::vector<std::string>& what, const std::string& image,
                    const io::BlockDevice& volume, bool json);

}  // namespace fsimg::cli
