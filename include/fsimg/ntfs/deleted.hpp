// Deleted files of an NTFS volume: the MFT records no longer in use whose
// name and data are still there (fsimg ls --deleted, cat --deleted,
// extract --deleted).
//
// Deleting a file clears the in-use flag (0x0001) of its FILE record and
// its bit in $MFT's $BITMAP, frees its clusters in $Bitmap and removes its
// entry from the parent's $I30 index; the record keeps its attributes until
// it is reused [FLATCAP concepts/file_record; ntfs-3g ntfs_mft_record_free
// does the same and also increments the sequence number]. So the record
// still says the name and the parent ($FILE_NAME) and where the data was
// (the $DATA runlist, or the data itself when resident). It is trusted only
// while it decodes (fixups, attributes) and, for non-resident data, while
// every cluster of its runs lies inside the volume and is free in $Bitmap
// (TSK's fls -d and icat read deleted NTFS files the same way).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fsimg/fat/deleted.hpp"
#include "fsimg/ntfs/structs.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

/// A record not in use that still names a file or directory.
struct DeletedRecord {
    std::uint64_t number = 0;  ///< the MFT record
    FileReference parent;      ///< from its $FILE_NAME (the Win32 or POSIX one when there are several)
    std::u16string name;       ///< that $FILE_NAME's name
    bool is_directory = false;
    std::uint64_t size = 0;                  ///< the unnamed $DATA's size (0 for a directory)
    std::uint64_t modified = 0;              ///< FILETIME, $STANDARD_INFORMATION's (else $FILE_NAME's)
    std::uint32_t file_attributes = 0;       ///< $STANDARD_INFORMATION's
    std::optional<std::uint64_t> first_lcn;  ///< the first run's LCN (non-resident data)
};

/// Every record below $MFT's record count that is not in use, decodes, is a
/// base record (no extension records) and holds a $FILE_NAME other than a
/// DOS-only one, in record order; records 0..15 (the system files) left
/// out. Reads each record once. Throws Error(io) on read failures; records
/// that do not decode are skipped.
std::vector<DeletedRecord> deleted_records(const Volume& v);

/// What can still be read of a deleted file: `empty` (size 0 or a
/// directory), `recoverable` (resident data, or every cluster of its runs
/// inside the volume and free in $Bitmap), `reused` (else; also when the
/// record no longer decodes, or when $Bitmap cannot be read).
fat::DeletedState deleted_state(const Volume& v, const DeletedRecord& r);

/// Streams a deleted file's unnamed $DATA (sparse runs and bytes past the
/// initialized size as zeros) in pieces of at most 1 MiB. Throws
/// Error(refused) unless deleted_state() is recoverable or empty,
/// Error(io) on read errors.
void read_deleted(const Volume& v, const DeletedRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::ntfs
