// fsimg dump of an exFAT volume: called by run_dump (dump.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// True when the volume holds exFAT: sector 0 says "EXFAT   " at byte 3, or a
/// whole backup boot region stands in for a damaged one (exfat::probe).
bool is_exfat_volume(io::BlockDevice& device);

/// What the readers warn about once when they open an exFAT volume: a main
/// boot region the backup stands in for, an up-case table replaced by the
/// recommended one. Empty when neither.
std::vector<std::string> exfat_open_problems(const exfat::Volume& v);

/// Prints the exFAT boot region (both copies, checksums), the geometry and
/// the root's system entries, as text or JSON (docs/json.md).
/// `partition_table` is dump's JSON description of the table (null when none).
int dump_exfat(const std::string& image, io::OpenedVolume& volume, bool json,
               const nlohmann::json& partition_table);

/// dump --what bitmap | dir PATH | extents PATH of an exFAT volume
/// (src/cli/dump_exfat_view.cpp); `what` is the kind and its PATH.
int dump_exfat_view(const std::vector<std::string>& what, const std::string& image, bool json);

}  // namespace fsimg::cli
