// Deleted files of an exFAT directory (fsimg ls --deleted, cat --deleted).
//
// Deleting a file clears the InUse bit (bit 7) of the EntryType of every
// entry of its set (0x85 File -> 0x05, 0xC0 Stream Extension -> 0x40, 0xC1
// File Name -> 0x41) and clears its clusters in the allocation bitmap; the
// name, FirstCluster, DataLength and the NoFatChain flag stay, and so does
// a FAT chain (the bitmap, not the FAT, says what is free) [EXFAT §6.2
// "InUse", §7.1]. A set whose entries, InUse set again, still sum to their
// SetChecksum is read back whole.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/fat/deleted.hpp"

namespace fsimg::exfat {

/// The deleted entry sets of a directory's bytes (up to the end-of-directory
/// entry), in order: each set of a deleted File entry whose SecondaryCount
/// deleted secondaries follow it and whose SetChecksum holds with InUse set
/// again, decoded as parse_directory decodes a live one (`upcase` for the
/// NameHash). Never throws.
std::vector<FileRecord> parse_deleted(std::span<const std::byte> bytes,
                                      std::span<const char16_t> upcase = {});

/// What can still be read of a deleted file's data: `empty` (DataLength 0
/// or no FirstCluster), `recoverable` (the ceil(DataLength / cluster bytes)
/// clusters it took, each a cluster of the heap, all free in the allocation
/// bitmap: its FAT chain when one of that length still links them (the
/// Linux driver leaves it), else, for NoFatChain and where the chain was
/// zeroed (fsimg's editor zeroes freed entries), those clusters in a row from
/// FirstCluster, as FAT undelete tools read), `reused` otherwise. The states of
/// fat/deleted.hpp. Throws Error(corrupt) without a usable bitmap.
fat::DeletedState deleted_state(const Volume& v, const FileRecord& r);

/// The entry sets a deleted directory still holds: its DataLength bytes
/// (at most 256 MiB [EXFAT §6.2]) read as read_deleted reads a file, while
/// deleted_state() is recoverable (else none): the sets with InUse clear
/// (parse_deleted) and those still in use whose SetChecksum holds (every set
/// of a deleted directory is deleted), in order. Throws Error(io).
std::vector<FileRecord> deleted_directory_entries(const Volume& v, const FileRecord& dir);

/// Streams a deleted file's DataLength bytes from the clusters
/// deleted_state() judged, one cluster at a time (bytes past ValidDataLength
/// as zeros). Throws Error(refused) unless recoverable.
void read_deleted(const Volume& v, const FileRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::exfat
