// Changing an existing FAT12/16/32 volume in place: new files and
// directories, removal, renaming and moving, attributes, label and serial
// (fsimg cp, rm, mkdir, mv, attrib, label).
//
// Every change keeps the volume consistent at every write, so that a process
// cut after any write leaves every file that was there intact and the change
// either absent or complete, with at most lost clusters, a stale FSInfo free
// count or the dirty flag for a checker to clean (docs/formats.md §1.5-1.9,
// docs/editing.md "Interrupted at any write"):
//  1. the first change clears the clean-shutdown bit of FAT[1] (FAT16/32;
//     FAT12 has none) [FATGEN "FAT[1]"; Windows and Linux fsck read it];
//  2. file data and new directory clusters are written to free clusters;
//  3. their FAT chains are written into every FAT copy (copy 1 first);
//  4. the directory entry set is written in ONE write where it lies in
//     consecutive bytes of the device; an entry set that has to cross into a
//     non-adjacent cluster is only placed at the directory's end-of-directory
//     mark (the 0x00 entry), its later part written first, so the set becomes
//     visible with its first bytes;
//  5. removing: the entries are marked deleted (0xE5) before their clusters
//     are freed; replacing a file's data rewrites its short entry (32 bytes,
//     one write) after the new chain exists and frees the old chain after;
//  6. finish(): FSInfo (free count adjusted by what was allocated and freed,
//     next-free hint), then the clean-shutdown bit set again (only if it was
//     set when the editor opened the volume).
// A rename inside one directory is one write: the old entries marked
// deleted and the new set written within one span of consecutive bytes (the
// entries between rewritten as they are). One case is not atomic: moving an
// entry to another directory (or a rename in one directory where no such
// span exists: the directory's clusters are not adjacent; and mv -f onto an
// existing file, whose short entry takes the moved file's clusters first)
// writes the new entry before it removes the old one, so a cut between the two leaves both
// names pointing at the same clusters (fsck reports a cross-link; both names
// read the file). This is the order the Linux vfat driver uses
// (fs/fat/namei_vfat.c vfat_rename).
//
// The volume is assumed consistent: the command line runs the checker's
// ownership walk first (fs::write_safety), or on a volume too large for it
// checks what the change touches (EditOptions::check_touched). Without
// either, a file cross-linked with another, or a directory reachable
// through two entries, shares clusters that removing one of them frees. A
// loop back to an ancestor is found and refused by remove().
//
// Cost follows the change, not the volume: FAT entries are read through a
// small window cache (at most kFatCacheWindows x 64 KiB) and written back as
// the byte ranges that changed; free clusters are searched next-fit from the
// FSInfo hint (FAT32) or from where the last allocation ended.
//
// Names follow populate's rules (fat/names.hpp): an 8.3 name in one case is
// a short entry alone (DIR_NTRes case bits), any other name an LFN entry set
// with a generated short name unique in its directory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/fat/directory.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/file.hpp"

namespace fsimg::fat {

/// How an editor stamps what it writes and when it waits for the device.
struct EditOptions {
    std::int64_t now = 0;               ///< Unix seconds: created entries, touched directories
    std::optional<std::int64_t> clamp;  ///< SOURCE_DATE_EPOCH: no timestamp is later than this
    bool local_time = false;            ///< store local time instead of UTC
    /// Called once by finish() after the last change and before the
    /// clean-shutdown bit is set (the image file's fsync), so that the bit
    /// never reaches the disk before the change it closes; the bit itself is
    /// left to the page cache (lost, the volume only reads as dirty). May be empty.
    std::function<void()> barrier;
    /// Checks what the change touches as the editor reads it, for a volume
    /// whose whole-volume ownership walk was skipped (fs::CheckScope::touched,
    /// docs/editing.md "Large volumes"). Error(refused), thrown before the
    /// write that would rely on it, for: a directory written into, or a
    /// chain to be freed, whose first cluster is outside the volume or free
    /// in the FAT (fat.file.start-out-of-range, fat.file.start-free), whose
    /// chain loops (fat.chain.loop), holds a link that is no cluster
    /// (fat.chain.out-of-range), a bad cluster (fat.chain.bad-cluster) or a
    /// link to a free cluster (fat.chain.free-link), each judged as the
    /// checker's claim_chain does (fat/check_tree.cpp); and a cluster to be
    /// allocated that FAT copy 1 marks free and another copy in use
    /// (fat.fat.copies-differ: which copy is right is not known). Not found
    /// this way: a cross-link with a chain the change does not read.
    bool check_touched = false;
};

/// What a new file or directory entry records besides its name and data.
struct NewEntryInfo {
    std::optional<std::int64_t> mtime;  ///< Unix seconds; nullopt: EditOptions::now
    std::optional<std::int64_t> btime;  ///< creation; nullopt: EditOptions::now
    std::uint32_t btime_ns = 0;
    std::uint8_t attributes = kAttrArchive;  ///< DIR_Attr (directories get ATTR_DIRECTORY added)
};

/// A directory of the volume, named by its first cluster (0: the root, on
/// FAT32 as on FAT12/16).
using DirId = std::uint32_t;
inline constexpr DirId kRootDir = 0;

/// An editor of one FAT volume on `device` (a whole image or a partition
/// window, which must outlive the editor). Not thread-safe.
class Editor {
public:
    /// Reads the boot region. Throws Error(not_this_fs) when the device does
    /// not hold FAT, Error(corrupt) when its geometry cannot be derived or a
    /// FAT copy lies past the end of the device.
    Editor(io::BlockDevice& device, EditOptions options);
    ~Editor();
    Editor(const Editor&) = delete;
    Editor& operator=(const Editor&) = delete;

    const Layout& layout() const noexcept;
    /// A read-only view of the volume as it is now (rebuilt after changes).
    const Volume& volume() const;

    /// The record at `path` ("/", "a/b.txt", any case, long or short names);
    /// nullopt when it does not exist. Throws as Volume::lookup.
    std::optional<DirRecord> lookup(std::string_view path) const;
    /// The directory a record stands for (its first cluster; kRootDir for the root).
    DirId directory_of(const DirRecord& dir) const;
    /// The live records of a directory (labels, "." and ".." included).
    std::vector<DirRecord> list(DirId dir) const;
    /// The record named `name` (long or short, case-insensitive) in `dir`.
    std::optional<DirRecord> find(DirId dir, std::string_view name) const;

    /// Why `name` cannot be a new entry's name (fat/names.hpp
    /// long_name_problem), or nullopt.
    static std::optional<std::string> name_problem(std::string_view name);

    /// Adds file `name` to `dir` with the content of `data` (holes written as
    /// zeros only where the cluster held data). Throws Error(usage) when the
    /// name is invalid or taken, Error(io) "no space" when the volume or the
    /// fixed root directory is full (nothing written then), and the source's
    /// Error(io) when it changed while read (the clusters written stay lost
    /// clusters until finish() is skipped: the entry is never written).
    DirRecord add_file(DirId dir, std::string_view name, const source::SourceFile& data,
                       const NewEntryInfo& info);
    /// Replaces the data of file `existing` of `dir` (its name and
    /// attributes kept, modification time set from info).
    void replace_file(DirId dir, const DirRecord& existing, const source::SourceFile& data,
                      const NewEntryInfo& info);
    /// Adds directory `name` to `dir` (one cluster: "." and ".."). Errors as add_file.
    DirRecord add_directory(DirId dir, std::string_view name, const NewEntryInfo& info);
    /// Adds file `name` to `dir` for a chain that is already in the FAT:
    /// `first_cluster` (a chain of ceil(size / cluster bytes) clusters that
    /// no entry owns, ending in end-of-chain; 0 for an empty file) and
    /// `size` bytes. Nothing is allocated but the directory's growth; the
    /// chain is not read (the caller proved it: fsck's salvage of lost
    /// chains, fat/repair.hpp). Errors as add_file.
    DirRecord add_chain_file(DirId dir, std::string_view name, std::uint32_t first_cluster,
                             std::uint32_t size, const NewEntryInfo& info);
    /// Removes `record` from `dir`; a directory with everything below it
    /// (each directory visited once: a directory reached twice is not freed
    /// twice). Throws Error(usage) for the root, ".", ".." and the label.
    void remove(DirId dir, const DirRecord& record);
    /// Renames or moves `record` from `from` to directory `to` as `new_name`.
    /// `replace`: an existing file of that name in `to` is replaced (its
    /// clusters freed); a directory of that name is refused. Moving a
    /// directory into itself or below itself is Error(usage).
    void rename(DirId from, const DirRecord& record, DirId to, std::string_view new_name, bool replace);
    /// Sets and clears DIR_Attr bits (read-only, hidden, system, archive only).
    void set_attributes(DirId dir, const DirRecord& record, std::uint8_t set, std::uint8_t clear);

    /// The label Windows shows: the root directory's volume-label entry, else
    /// BS_VolLab; "" when neither holds one ("NO NAME" counts as none).
    std::string label() const;
    /// Sets the label in the root directory's label entry (created or
    /// rewritten) and BS_VolLab of the boot sector and its FAT32 backup; ""
    /// removes the entry and writes "NO NAME". The case is kept as given
    /// (Windows upper-cases labels it writes; readers show what is stored).
    /// Throws Error(usage) for labels FAT cannot hold (fat/structs.hpp
    /// normalize_volume_label's rules: 11 ASCII bytes, no "*+,./:;<=>?[\]|).
    void set_label(std::string_view label);
    /// BS_VolID of the boot sector (and its FAT32 backup).
    std::uint32_t volume_id() const noexcept;
    void set_volume_id(std::uint32_t id);

    /// Writes FSInfo and sets the clean-shutdown bit again. Without it (an
    /// exception, a cut) the volume stays marked dirty.
    void finish();

    /// Planning a change of many entries before its first write (cp): the
    /// 32-byte entries a new entry named `name` takes (an 8.3 name in one
    /// case: 1; else 1 + ceil(UTF-16 units / 13): fat/cost.hpp name_entry_count).
    static std::uint32_t entry_slots(std::string_view name);
    /// Clusters a new directory takes once it holds new entries of `sets`
    /// entries each ("." and ".." first): at least one.
    std::uint64_t new_directory_clusters(std::span<const std::uint32_t> sets) const;
    /// Clusters directory `dir` grows by to take entries of `sets` entries
    /// each after its last entry: an upper bound (entries freed by deletion
    /// may take some of them). Throws Error(io) "no space" when a FAT12/16
    /// root, which cannot grow, cannot take them even counting its deleted
    /// entries, and as lookups do for a damaged directory. Writes nothing.
    std::uint64_t growth_clusters(DirId dir, std::span<const std::uint32_t> sets);
    /// Throws Error(io) "no space left on the volume" naming both counts
    /// unless `clusters` clusters are free (searched next-fit from where the
    /// next allocation starts, stopping once enough are found). Writes nothing.
    void check_free(std::uint64_t clusters);

    /// Clusters allocated and freed so far.
    std::uint64_t allocated_clusters() const noexcept;
    std::uint64_t freed_clusters() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace fsimg::fat
