// Deleted files of a FAT directory: what is left of them and whether their
// data can still be read (fsimg ls --deleted, cat --deleted).
//
// Deleting a file marks its directory entries deleted (byte 0 of each set
// to 0xE5, the short name's first character lost) and frees its chain (FAT
// entries 0); the entry keeps the first cluster, the size and the times
// [FATGEN "FAT Directory Structure": DIR_Name[0] == 0xE5]. What the chain
// was is gone, so the data is read as the undelete tools read it (TSK's
// icat, photorec): ceil(size / cluster bytes) consecutive clusters from the
// first one, trusted only while all of them are still free.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat {

/// One deleted entry of a directory.
struct DeletedRecord {
    std::uint32_t index = 0;  ///< the short entry's index in the directory
    DirEntry entry;           ///< the short entry as stored (name[0] is 0xE5)
    /// "NAME.EXT" with the lost first character "?", or the character the
    /// long name's LDIR_Chksum proves when a long name was found.
    std::string short_name;
    /// The long name, when deleted long-name entries stand right before the
    /// short entry with one checksum, the character it gives for DIR_Name[0]
    /// is one a short name may hold, and they hold a whole name (TSK reads
    /// them the same way); else short_name.
    std::string name;
    bool has_long_name = false;
    bool is_directory() const noexcept { return (entry.attr & kAttrDirectory) != 0; }
};

/// The deleted short entries of a directory's bytes (up to the end marker,
/// at most kMaxDirEntries), in order. Deleted long-name entries are read for
/// the names only; a deleted volume label is left out. Never throws.
std::vector<DeletedRecord> parse_deleted(std::span<const std::byte> bytes);

/// The entries a deleted directory still holds: those of its first cluster,
/// when that cluster is still free and its "." entry names it (else the
/// cluster was reused: none), and, its chain being gone, those of the
/// clusters after it taken as undelete tools take a file's: consecutive,
/// while no end marker (an entry starting 0x00) was met, each free and
/// reading as directory entries (not opening with ".", every entry before
/// an end marker deleted, a long-name entry with an ordinal 1..20, or a
/// short entry with printable name bytes and no attribute bit above 0x3F). Every entry there belongs to a
/// deleted directory: the ones marked deleted (parse_deleted) and the ones still marked in use, which a tool
/// that deleted the directory alone left (decoded as parse_directory decodes them, their names whole); "."
/// and ".." left out. Throws Error(io).
std::vector<DeletedRecord> deleted_directory_entries(const Volume& v, const DeletedRecord& dir);

/// What can still be read of a deleted entry's data.
enum class DeletedState : std::uint8_t {
    empty,        ///< size 0 (a file) or no first cluster: nothing to read
    recoverable,  ///< every cluster it would take is a cluster of the volume and free in FAT 1
    reused,       ///< some of them are in use again (or lie outside the volume)
};
std::string_view to_string(DeletedState s) noexcept;
/// Whether a deleted file in state `s` is read (every filesystem's
/// read_deleted): false for `empty` (nothing to read), true for
/// `recoverable`; throws Error(refused) "the clusters of deleted WHAT are in
/// use again, or lie outside the volume: its data is gone" for `reused`.
bool readable(DeletedState s, std::string_view what);

/// The clusters a deleted file's data would take (ceil(size / cluster
/// bytes), one for a directory, from its first cluster) and their state.
/// Throws Error(io) when FAT 1 cannot be read.
DeletedState deleted_state(const Volume& v, const DeletedRecord& r);

/// Streams a deleted file's `size` bytes from its consecutive clusters, in
/// pieces of at most 1 MiB. Throws Error(refused) naming the state unless it
/// is recoverable (an empty file streams nothing), Error(io) on read errors.
void read_deleted(const Volume& v, const DeletedRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink);

}  // namespace fsimg::fat
