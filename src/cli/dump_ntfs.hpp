// fsimg dump of an NTFS volume: called by run_dump (dump.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/fs/detect.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/ntfs/describe.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::cli {

/// Prints the NTFS boot sector fields, any broken boot-sector rule, the
/// geometry, $MFT's runs, the backup boot sector state and $Volume's label,
/// version and flags, as text or JSON (docs/json.md).
/// `partition_table` is dump's JSON description of the table (null when none).
/// With `detection.through_backup` the fields are sector 0's, everything
/// else is read through the backup boot sector (detection.note says so).
int dump_ntfs(const std::string& image, const io::OpenedVolume& volume, const fs::Detection& detection,
              bool json, const nlohmann::json& partition_table);

/// `dump --what mft N IMAGE`: prints MFT record N (`number` as given) of the
/// NTFS volume on `reading` (fs::reading_device of `volume`): header, fixups,
/// every attribute decoded, runlists as VCN/LCN/length rows. Throws
/// Error(usage) for a bad N.
int dump_ntfs_record(const std::string& number, const std::string& image, const io::OpenedVolume& volume,
                     const io::BlockDevice& reading, bool json);

/// Index entries as JSON (offset, length, key_length, flags; the key decoded
/// as `keys` says: file reference, name and namespace, or reparse tag and
/// file reference, else in hex; child_vcn), and one text line each,
/// prefixed by `indent`, appended to `lines` (dump_ntfs.cpp).
nlohmann::json index_entries(const std::vector<ntfs::IndexEntry>& entries, ntfs::IndexKeys keys,
                             std::vector<std::string>& lines, std::string_view indent);

/// `dump --what index PATH IMAGE` and `--what extents PATH IMAGE` on NTFS
/// (dump_ntfs_view.cpp): `what` is {kind, PATH}. index: the directory's
/// $INDEX_ROOT, $INDEX_ALLOCATION runs, $BITMAP and every INDX block in use
/// with its entries, and the B+ tree walk's result (entries, depth, or the
/// damage that stopped it); extents: every attribute of the file (each
/// stream) with its sizes and runs (VCN -> LCN, length, sparse) or where it
/// is resident. Throws Error(usage) when PATH does not exist (or, for index,
/// is not a directory).
int dump_ntfs_view(const std::vector<std::string>& what, const std::string& image,
                   const io::BlockDevice& volume, bool json);

}  // namespace fsimg::cli
