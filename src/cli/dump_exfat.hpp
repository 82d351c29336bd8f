// fsimg dump of an exFAT volume: called by run_dump (dump.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// True when the volume's sector 0 says "EXFAT   " at byte 3.
bool is_exfat_volume(io::BlockDevice& device);

/// Prints the exFAT boot region (both copies, checksums), the geometry and
/// the root's system entries, as text or JSON (docs/json.md).
/// `partition_table` is dump's JSON description of the table (null when none).
int dump_exfat(const std::string& image, io::OpenedVolume& volume, bool json,
               const nlohmann::json& partition_table);

/// dump --what bitmap | dir PATH | extents PATH of an exFAT volume
/// (src/cli/dump_exfat_view.cpp); `what` is the kind and its PATH.
int dump_exfat_view(const std::vector<std::string>& what, const std::string& image, bool json);

}  // namespace fsimg::cli
