// What ls, cat, extract and slack see of a volume, whatever its filesystem:
// open_view() detects the filesystem (fs/detect.hpp) and returns a View
// whose entries are files and directories as the filesystem's own listing
// rule shows them (one rule per filesystem, in its adapter):
//  - FAT: every file and directory entry with its long name (volume labels,
//    "." and ".." left out);
//  - exFAT: every File entry set whose SetChecksum holds (a set that does not
//    is left out and described as a problem);
//  - NTFS: one entry per name a directory's $I30 index holds, except DOS-only
//    names (the short twin of a Win32 name) and system files (MFT records
//    below kFirstNonSystemRecord), which ntfs-3g hides too; each named $DATA
//    stream after its file as "name:stream"; symbolic links and junctions
//    with their target; an index entry whose record is free or has another
//    sequence number (a stale entry) left out as a problem.
// Decoding stays in each filesystem's reader (fat::Volume, exfat::Volume,
// ntfs::Volume and ntfs/directory.hpp); problems are returned, never printed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fsimg/core/time.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/fat/deleted.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/ntfs/deleted.hpp"

namespace fsimg::fs {

/// A time to set on an extracted file: the civil time as stored and, when the
/// filesystem recorded one (exFAT OffsetValid; NTFS, which stores UTC), its
/// offset from UTC.
struct HostTime {
    core::CivilTime local;
    std::optional<int> utc_offset_minutes;
};

/// A filesystem-specific fact about an entry, for ls --json (docs/json.md):
/// "short_name", "valid_data_length", "mft_record", "reparse_tag", ...
struct Property {
    std::string key;
    std::variant<bool, std::uint64_t, std::string> value;
};

/// An NTFS file (MFT record) or one of its alternate data streams.
struct NtfsNode {
    std::uint64_t record = 0;
    std::u16string stream;  ///< the $DATA stream read: empty = the unnamed one
};

/// One file or directory (or, on NTFS, a symbolic link, or a file's
/// alternate data stream shown as "name:stream").
struct Entry {
    std::string name;  ///< UTF-8, as stored (not escaped)
    bool is_dir = false;
    bool is_root = false;
    bool is_stream = false;                   ///< NTFS alternate data stream ("file:stream")
    std::uint64_t size = 0;                   ///< bytes (0 for directories; a link: its target's length)
    std::uint64_t id = 0;                     ///< identifies a directory (first cluster; NTFS: MFT record)
    std::uint32_t links = 1;                  ///< names the file has (NTFS hard links; 1 elsewhere)
    std::uint8_t attributes = 0;              ///< FAT DIR_Attr bits (exFAT and NTFS map onto the same bits)
    std::string short_name;                   ///< the 8.3 name as stored; empty where the filesystem has none
    std::string modified, created, accessed;  ///< display texts in the filesystem's precision
    std::optional<HostTime> mtime;            ///< nullopt when the stored time is invalid
    std::optional<std::string> link_target;   ///< a symbolic link or junction: its target (POSIX form)
    std::vector<Property> properties;         ///< filesystem-specific facts, for --json
    /// The filesystem's own record, for the View that made the entry.
    std::variant<fat::DirRecord, exfat::FileRecord, NtfsNode> native;
};

/// A deleted file or directory its directory still describes (ls --deleted).
struct DeletedEntry {
    std::string name;        ///< UTF-8: the long name when it survives, else the short name with "?" first
    std::string short_name;  ///< the 8.3 name, its first character "?" unless the long name proves it
    bool is_dir = false;
    std::uint8_t attributes = 0;      ///< FAT DIR_Attr bits
    std::uint64_t size = 0;           ///< bytes, as the entry still says
    std::uint64_t first_cluster = 0;  ///< where its data began
    std::uint64_t id = 0;           ///< identifies a deleted directory: its first cluster (NTFS: MFT record)
    std::string modified;           ///< display text
    std::optional<HostTime> mtime;  ///< nullopt when the stored time is invalid
    /// "recoverable" (every cluster its data would take is free: it reads as
    /// it was unless something was written there and freed again), "reused"
    /// (some are in use again: the data is gone), "empty" (nothing to read).
    std::string state;
    std::variant<std::monostate, fat::DeletedRecord, exfat::FileRecord, ntfs::DeletedRecord> native;
};

/// What View::read_salvaged() wrote of a file.
struct SalvageReport {
    /// Some bytes came from elsewhere than the file's own data (a lost
    /// chain or free clusters that continue it) or are zeros for what could
    /// not be read.
    bool salvaged = false;
    std::string damage;   ///< what is wrong with the file's data; empty when it read whole
    std::string sources;  ///< where its bytes came from, for the user
};

/// A volume opened for reading.
class View {
public:
    virtual ~View() = default;
    Kind kind() const noexcept { return detection_.kind; }
    const Detection& detection() const noexcept { return detection_; }
    /// True when entries carry 8.3 short names (FAT).
    virtual bool has_short_names() const noexcept { return false; }
    /// The cluster size in bytes, as the volume's reader decoded it from the
    /// boot sector (FAT BPB_BytsPerSec x BPB_SecPerClus, exFAT
    /// 2^(BytesPerSectorShift + SectorsPerClusterShift), NTFS bytes per
    /// sector x sectors per cluster; docs/formats.md).
    virtual std::uint32_t cluster_bytes() const noexcept = 0;
    /// "FAT12", "FAT16" or "FAT32" (from the cluster count, as the FAT
    /// specification decides the type), "exFAT" or "NTFS".
    virtual std::string_view type_name() const noexcept = 0;
    /// Damage found while opening that does not stop reading (a boot sector
    /// read through its backup, an exFAT up-case table replaced by the
    /// recommended one), for one warning each.
    virtual std::vector<std::string> open_problems() const = 0;
    /// The entry at PATH (case-insensitive, as the filesystem compares names;
    /// NTFS also "file:stream"), nullopt when it does not exist; throws as the
    /// volume's lookup (Error(usage) when a component is a file).
    virtual std::optional<Entry> lookup(std::string_view path) const = 0;
    /// A directory's entries in stored order; entries that cannot be trusted
    /// are left out and described in `problems` (their names escaped).
    /// Throws Error(corrupt) when the directory cannot be read.
    virtual std::vector<Entry> list(const Entry& dir, std::vector<std::string>& problems) const = 0;
    /// Streams a file's bytes; throws Error(corrupt) when its data is broken,
    /// Error(unsupported) for what is not read (an NTFS link's own content,
    /// an encrypted stream).
    virtual void read(const Entry& file,
                      const std::function<void(std::span<const std::byte>)>& sink) const = 0;
    /// The same, with ranges the filesystem stores as holes (NTFS sparse runs,
    /// bytes past the initialized size) given to `hole` as a byte count
    /// instead of as zeros; filesystems without holes stream everything.
    virtual void read_sparse(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink,
                             const std::function<void(std::uint64_t)>& hole) const {
        (void)hole;
        read(file, sink);
    }
    /// The deleted entries of directory `dir` in stored order (FAT: the
    /// entries marked 0xE5, fat/deleted.hpp; exFAT: the sets with InUse
    /// clear, exfat/deleted.hpp; NTFS: the records not in use whose
    /// $FILE_NAME names `dir`, its record number and sequence number, in
    /// record order, ntfs/deleted.hpp: all of $MFT read once per view).
    /// Throws Error(corrupt) as list().
    virtual std::vector<DeletedEntry> list_deleted(const Entry& dir) const;
    /// Streams a deleted file's bytes (fat::read_deleted,
    /// exfat::read_deleted, ntfs::read_deleted). Throws Error(refused) when
    /// its clusters are in use again.
    virtual void read_deleted(const DeletedEntry& file,
                              const std::function<void(std::span<const std::byte>)>& sink) const;
    /// The deleted entries a deleted directory still holds (FAT:
    /// fat::deleted_directory_entries, exFAT: exfat::deleted_directory_entries,
    /// while the directory is recoverable; NTFS: the records not in use whose
    /// $FILE_NAME names its record, its sequence number or the one before,
    /// which freeing the record added). Empty for a file or a directory whose
    /// clusters were reused.
    virtual std::vector<DeletedEntry> list_deleted_in(const DeletedEntry& dir) const;

    /// Streams what is readable of a file whose data may be damaged (cat and
    /// extract --salvage) as fat::salvage_file and exfat::salvage_file read
    /// it (check/salvage.hpp), the volume's lost clusters found by one check
    /// of the whole volume on the first call; a sound file streams as read()
    /// does. Throws Error(unsupported) on NTFS (not salvaged yet), Error(io)
    /// on read failures.
    virtual SalvageReport read_salvaged(const Entry& file,
                                        const std::function<void(std::span<const std::byte>)>& sink) const;

protected:
    explicit View(Detection d) : detection_(std::move(d)) {}

private:
    Detection detection_;
};

/// The view of the volume on `device` (a whole image or a partition window,
/// which must outlive the view). Throws as detect(), and Error(corrupt) when
/// the filesystem's reader refuses the volume (underivable geometry, an
/// unreadable $MFT).
std::unique_ptr<View> open_view(const io::BlockDevice& device);
/// The same over an opened image, which the view keeps.
std::unique_ptr<View> open_view(io::OpenedVolume volume);
/// Opens IMAGE or IMAGE@N (io::open_volume, read-only; .gz allowed) and its view.
std::unique_ptr<View> open_view(std::string_view spec);

/// The path as given, made absolute with single slashes and no trailing one.
std::string normalize_path(std::string_view path);

/// The paths an image path with wildcards names (core::wildcard_match in
/// each component that has one, letters in either case as Windows folds
/// them (through its up-case table, ntfs::upcase_table()); a FAT entry
/// matches by its long or its short
/// name; NTFS alternate data streams never match), in byte order, each
/// normalized; a component without wildcards is taken as it is. A path
/// that exists as written is itself, wildcards or not ("photo [1].jpg").
/// Empty when nothing matches. Directories that cannot be listed add to
/// `problems`. Each directory a pattern reaches is listed once; the result
/// is bounded by the entries listed.
std::vector<std::string> expand_wildcards(const View& view, std::string_view pattern,
                                          std::vector<std::string>& problems);

}  // namespace fsimg::fs
