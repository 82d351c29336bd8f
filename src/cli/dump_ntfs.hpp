// fsimg dump of an NTFS volume: called by run_dump (dump.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// Prints the NTFS boot sector fields, any broken boot-sector rule, the
/// geometry, $MFT's runs, the backup boot sector state and $Volume's label,
/// version and flags, as text or JSON (docs/json.md).
/// `partition_table` is dump's JSON description of the table (null when none).
int dump_ntfs(const std::string& image, io::OpenedVolume& volume, bool json,
              const nlohmann::json& partition_table);

/// `dump --what mft N IMAGE`: operands are {N, IMAGE}. Prints MFT record N:
/// header, fixups, every attribute decoded, runlists as VCN/LCN/length rows.
/// Throws Error(usage) for a bad N or a non-NTFS image.
int dump_ntfs_record(const std::vector<std::string>& operands, bool json);

}  // namespace fsimg::cli
