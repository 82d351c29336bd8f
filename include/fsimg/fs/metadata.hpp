// A metadata-only copy of a volume (fsimg dump --metadata-image): the byte
// ranges that hold the filesystem's own structures, so that an image can be
// shared for a bug report without the files' contents (e2image and
// ntfsclone --metadata do this for one filesystem each).
//  - FAT: the reserved sectors, both FATs and the FAT12/16 root directory
//    (everything before cluster 2), and the clusters of every directory the
//    walk from the root reaches [FATGEN "FAT Directory Structure"];
//  - exFAT: the main and backup boot regions, the FATs, the allocation
//    bitmap, the up-case table and the clusters of every directory
//    [EXFAT §3, §4, §7.1, §7.2];
//  - NTFS: the boot sector and its backup, every MFT record ($MFT's $DATA,
//    and $MFTMirr), and every non-resident attribute that is not file data:
//    index blocks, $BITMAPs, attribute lists, reparse points, and the system
//    files' streams ($Bitmap, $AttrDef, $UpCase, $Secure, $Boot, $LogFile
//    unless left out; not $BadClus:$Bad) [FLATCAP files/*]. A file's
//    resident $DATA (its content, kept in the record when small) is zeroed
//    in the copy, as ntfsclone --metadata does: patches over the records.
// A directory walk visits each directory once, at most
// check::kMaxDirectoryDepth deep; what cannot be read is left out and said.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fsimg/fs/detect.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fs {

/// A byte range of the volume.
struct ByteRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct MetadataOptions {
    bool logfile = true;  ///< NTFS: include $LogFile's $DATA
    /// Replace every file and directory name with a made-up one of the same
    /// length and extension (core::NameScrambler, a random key per call;
    /// fat::scramble_names, exfat::scramble_names as patches; NTFS on the
    /// copy by finish_metadata_copy, $LogFile then emptied: it holds names).
    bool scramble_names = false;
};

/// Bytes written over a copied range: an NTFS record whose resident file
/// data is zeroed.
struct Patch {
    std::uint64_t offset = 0;
    std::vector<std::byte> bytes;
};

/// What a metadata copy holds.
struct MetadataMap {
    std::vector<ByteRange> ranges;      ///< ascending, merged, inside the device
    std::vector<Patch> patches;         ///< written after the ranges, each inside one
    std::vector<std::string> problems;  ///< what could not be read and is left out
    /// NTFS --scramble-names: the names are changed on the copy once it is
    /// written (finish_metadata_copy), as its indexes must be rebuilt.
    bool scramble_on_copy = false;
};

/// Adds [offset, offset + length) to `ranges` clipped to `device_bytes`
/// (unsorted; metadata_map sorts and merges).
void add_range(std::vector<ByteRange>& ranges, std::uint64_t offset, std::uint64_t length,
               std::uint64_t device_bytes);

/// The metadata of the volume on `volume`, which detect() found to be
/// `kind`. Throws Error(corrupt) when the filesystem's reader refuses the
/// volume, Error(io) on read failures.
MetadataMap metadata_map(const io::BlockDevice& volume, Kind kind, const MetadataOptions& options = {});

/// What the copy needs once `m`'s ranges and patches are written to it
/// (`copy`: the copied volume, the same size as the original): for NTFS
/// with scramble_on_copy, every name made up and the indexes rebuilt from
/// them (ntfs::Editor::scramble_names, a random key) and $LogFile emptied
/// (every byte 0xFF, as ntfsfix leaves it). Returns a note of
/// what was done ("" when nothing). Throws Error(unsupported) when a name
/// would be left (the copy must then not be kept), Error(io).
std::string finish_metadata_copy(io::BlockDevice& copy, Kind kind, const MetadataMap& m);

}  // namespace fsimg::fs
