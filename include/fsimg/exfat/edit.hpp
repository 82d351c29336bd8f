// Changing an existing exFAT volume in place: new files and directories,
// removal, renaming and moving, attributes, label and serial (fsimg cp, rm,
// mkdir, mv, attrib, label), as fat/edit.hpp does for FAT.
//
// Every change keeps the volume consistent at every write, so that a process
// cut after any write leaves every file that was there intact and the change
// either absent or complete, with at most the dirty flag, clusters marked in
// the allocation bitmap that no entry set owns, or FAT entries of clusters
// no chain uses, for a checker to clean (docs/editing.md "exFAT"). The order
// is the one [EXFAT §3.1.13, §8.1] recommends (docs/formats.md §2.9):
//  1. the first change sets VolumeFlags.VolumeDirty in the main boot sector
//     (two bytes at 106; VolumeFlags is not covered by the boot checksum
//     [EXFAT §3.4], so nothing else is rewritten, and the backup boot
//     sector's copy is left alone: it is not maintained there [§3.1.13]);
//  2. file data and new directory clusters (zeroed) are written to clusters
//     free in the allocation bitmap;
//  3. the FAT chain, only when the clusters are not one contiguous run (a
//     contiguous file is NoFatChain, its FAT entries left as they are:
//     "must not be consulted" [EXFAT §7.6.2, §4.1]);
//  4. the allocation bitmap bits [EXFAT §7.1.5];
//  5. the entry set (File, Stream Extension, File Name entries, SetChecksum
//     [§6.3.3] and NameHash [§7.6.4] computed with the volume's own up-case
//     table [§7.2]) in ONE write where it lies in consecutive bytes of the
//     device; a set that has to cross into a non-adjacent cluster is only
//     placed at the directory's end (past the end-of-directory entry), its
//     later part written first, so it becomes visible with its File entry;
//  6. removing: the InUse bit of every entry of the set is cleared (0x85 ->
//     0x05, 0xC0 -> 0x40, 0xC1 -> 0x41 [§6.2.1.4]) before the set's
//     clusters are freed (bitmap bits cleared, then the FAT entries of a
//     chained allocation set to 0); replacing a file's data rewrites its set
//     (one write) after the new clusters exist and frees the old ones after;
//  7. a directory that has to grow gets its new clusters zeroed, their FAT
//     entries (the directory's whole chain written first when it was
//     NoFatChain and the new cluster is not the next one), their bitmap
//     bits, and then: the root is linked from its last cluster (the root's
//     size is its chain [§3.1.10]); a subdirectory's DataLength and
//     ValidDataLength are rewritten in its parent's entry set, one write,
//     with NoFatChain set when its clusters are still one run (a FAT-chained
//     directory grown by the next cluster becomes NoFatChain: no FAT write)
//     and cleared when it became fragmented;
//  8. finish(): PercentInUse in the main boot sector (the bitmap counted
//     when it is at most 8 MiB, else 0xFF, "not available" [§3.1.18]; not
//     in the checksum either), the barrier (fsync), then VolumeDirty cleared
//     again, only if it was clear when the editor opened the volume.
// Not atomic, as on FAT: moving an entry to another directory writes the new
// set before it removes the old one (a cut between leaves two sets naming
// the same clusters), mv -f onto a file likewise; an entry set rewritten in
// place (attributes, a replaced file, a grown directory's DataLength) that
// crosses into a non-adjacent cluster is two writes (a cut between leaves
// its SetChecksum wrong); a FAT-chained subdirectory that grows into a
// cluster that is not the next one is linked before its DataLength is raised
// (a cut between leaves its chain one cluster longer than its DataLength). The serial number (set_volume_id)
// is covered by the boot checksum: each boot region is rewritten whole in one write, the backup region first.
//
// The volume is assumed consistent (fsimg fsck first on one from
// elsewhere). TexFAT volumes (NumberOfFats 2) are refused.
//
// Cost follows the change, not the volume: FAT entries and bitmap bytes are
// read through small window caches (io/byte_cache.hpp) and written back as
// the byte ranges that changed; free clusters are searched next-fit from
// where the last allocation ended, one run when the volume has one long
// enough.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/file.hpp"

namespace fsimg::exfat {

/// How an editor stamps what it writes and when it waits for the device.
struct EditOptions {
    std::int64_t now = 0;               ///< Unix seconds: created entries, touched directories
    std::optional<std::int64_t> clamp;  ///< SOURCE_DATE_EPOCH: no timestamp is later than this
    bool local_time = false;            ///< store local time with its UtcOffset instead of UTC
    /// Called once by finish() after the last change and before VolumeDirty
    /// is cleared (the image file's fsync). May be empty.
    std::function<void()> barrier;
};

/// What a new file or directory entry set records besides its name and data.
struct NewEntryInfo {
    std::optional<std::int64_t> mtime;  ///< Unix seconds; nullopt: EditOptions::now
    std::uint32_t mtime_ns = 0;
    std::optional<std::int64_t> btime;  ///< creation; nullopt: EditOptions::now
    std::uint32_t btime_ns = 0;
    /// FileAttributes (directories get DIRECTORY added, files lose it).
    std::uint16_t attributes = kFileAttrArchive;
};

/// A directory of the volume, named by its first cluster (0: the root).
using DirId = std::uint32_t;
inline constexpr DirId kRootDir = 0;

/// Attribute bits set_attributes changes: read-only, hidden, system, archive.
inline constexpr std::uint16_t kSettableAttributes =
    kFileAttrReadOnly | kFileAttrHidden | kFileAttrSystem | kFileAttrArchive;

/// An editor of one exFAT volume on `device` (a whole image or a partition
/// window, which must outlive the editor). Not thread-safe.
class Editor {
public:
    /// Reads the boot region, the allocation bitmap entry and the up-case
    /// table. Throws Error(not_this_fs) when the device does not hold exFAT;
    /// Error(corrupt) when the main boot region is damaged (the volume would
    /// be read through the backup), the volume is longer than the device,
    /// the bitmap is missing or broken, or the up-case table is damaged
    /// (names could not be compared as the volume's readers do);
    /// Error(unsupported) for TexFAT (NumberOfFats 2).
    Editor(io::BlockDevice& device, EditOptions options);
    ~Editor();
    Editor(const Editor&) = delete;
    Editor& operator=(const Editor&) = delete;

    /// A read-only view of the volume as it is now (rebuilt after changes).
    const Volume& volume() const;
    std::uint32_t cluster_bytes() const noexcept;

    /// The record at `path` ("/", "a/b.txt", any case through the volume's
    /// up-case table); nullopt when it does not exist. Throws Error(usage)
    /// when a component on the way is a file, Error(corrupt) when a
    /// directory on the way cannot be read.
    std::optional<FileRecord> lookup(std::string_view path) const;
    /// The directory a record stands for (kRootDir for the root). The record
    /// must come from this editor (lookup, find, list, add_directory).
    /// Throws Error(usage) when it is not a directory, Error(corrupt) when
    /// it has no cluster.
    DirId directory_of(const FileRecord& dir) const;
    /// The entry sets of a directory (bad SetChecksums included).
    std::vector<FileRecord> list(DirId dir) const;
    /// The record named `name` in `dir` (compared up-cased), or nullopt.
    std::optional<FileRecord> find(DirId dir, std::string_view name) const;

    /// Why `name` (UTF-8) cannot be an entry's name (populate.hpp
    /// utf8_name_problem), or nullopt.
    static std::optional<std::string> name_problem(std::string_view name);

    /// Adds file `name` to `dir` with the content of `data`. Throws
    /// Error(usage) when the name is invalid or taken, Error(io) "no space"
    /// when the volume is full or the directory cannot grow (nothing written
    /// then, or the clusters written freed again), and the source's
    /// Error(io) when it changed as it was read.
    FileRecord add_file(DirId dir, std::string_view name, const source::SourceFile& data,
                        const NewEntryInfo& info);
    /// Replaces the data of file `existing` of `dir` (name and attributes
    /// kept, ARCHIVE set, LastModified from info).
    void replace_file(DirId dir, const FileRecord& existing, const source::SourceFile& data,
                      const NewEntryInfo& info);
    /// Adds directory `name` to `dir`: one zeroed cluster, NoFatChain.
    /// Errors as add_file.
    FileRecord add_directory(DirId dir, std::string_view name, const NewEntryInfo& info);
    /// Adds file `name` to `dir` for `clusters` consecutive clusters from
    /// `first_cluster` that are already marked in use in the allocation
    /// bitmap and that nothing owns (fsck's salvage of lost clusters,
    /// exfat/repair.hpp): NoFatChain, DataLength and ValidDataLength the
    /// clusters' bytes. Nothing is allocated but the directory's growth; the
    /// clusters are not read. Errors as add_file.
    FileRecord add_extent_file(DirId dir, std::string_view name, std::uint32_t first_cluster,
                               std::uint32_t clusters, const NewEntryInfo& info);
    /// Removes `record` from `dir`; a directory with everything below it
    /// (each directory visited once). Benign secondary allocations (vendor
    /// entries) are freed too [EXFAT §8.2]. Every allocation is read before
    /// anything is written: a broken one is Error(corrupt), nothing removed.
    void remove(DirId dir, const FileRecord& record);
    /// Renames or moves `record` from `from` to `to` as `new_name` (a
    /// case-only rename too). `replace`: an existing file of that name is
    /// replaced; a directory is refused. Moving a directory into itself or
    /// below is Error(usage).
    void rename(DirId from, const FileRecord& record, DirId to, std::string_view new_name, bool replace);
    /// Sets and clears FileAttributes bits (kSettableAttributes only).
    void set_attributes(DirId dir, const FileRecord& record, std::uint16_t set, std::uint16_t clear);

    /// The root's Volume Label entry as UTF-8; "" when there is none or it
    /// is empty [EXFAT §7.3].
    std::string label() const;
    /// Rewrites the Volume Label entry (one write; created when the root has
    /// none); "" stores CharacterCount 0, as mkfs.exfat writes. The case is
    /// kept. Throws Error(usage) as volume_label_entry_from_utf8.
    void set_label(std::string_view label);
    /// VolumeSerialNumber of the main boot sector [EXFAT §3.1.11].
    std::uint32_t volume_id() const noexcept;
    /// Sets VolumeSerialNumber in both boot regions, each rewritten with its
    /// boot checksum in one write of its 12 sectors, the backup first.
    void set_volume_id(std::uint32_t id);

    /// Touched directories' LastModified, PercentInUse, the barrier, then
    /// VolumeDirty cleared. Without it (an exception, a cut) the volume
    /// stays marked dirty.
    void finish();

    /// Clusters allocated and freed so far.
    /// Planning a change of many entries before its first write (cp): the
    /// 32-byte entries of the entry set of a new entry named `name`
    /// (exfat/cost.hpp entry_set_entries).
    static std::uint32_t entry_slots(std::string_view name);
    /// Clusters a new directory takes once it holds new entry sets of `sets`
    /// entries each, added in order (a set that fits in one cluster never
    /// crosses into the next): at least one.
    std::uint64_t new_directory_clusters(std::span<const std::uint32_t> sets) const;
    /// Clusters directory `dir` grows by to take sets of `sets` entries
    /// each after its last entry: an upper bound (unused entries before the
    /// end may take some). Throws as lookups do for a damaged directory.
    /// Writes nothing.
    std::uint64_t growth_clusters(DirId dir, std::span<const std::uint32_t> sets);
    /// Throws Error(io) "no space left on the volume" naming both counts
    /// unless `clusters` clusters are free. Writes nothing.
    void check_free(std::uint64_t clusters);

    std::uint64_t allocated_clusters() const noexcept;
    std::uint64_t freed_clusters() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace fsimg::exfat
