// Changing an existing NTFS volume in place, the first part: its label and
// serial number and the attributes of its files (fsimg label, fsimg attrib).
// New files, removal and renaming (cp, rm, mkdir, mv) are not written yet
// (issue 22): nothing here allocates or frees a cluster or an MFT record.
//
// Every change is a rewrite of structures that already exist, in this
// order, so that a process cut after any write leaves every file intact and
// the change absent or complete, with at most the dirty flag set or
// $MFTMirr's copy of one record behind $MFT's (both of which Windows' chkdsk
// settles; fsimg fsck -y copies the mirror):
//  1. the first change sets VOLUME_IS_DIRTY (0x0001) in $Volume's
//     $VOLUME_INFORMATION flags (record 3) [FLATCAP attributes/
//     volume_information], formats.md §3.9;
//  2. each MFT record changed is written whole, with a new update sequence
//     number and its fixups applied [FLATCAP concepts/fixup], formats.md
//     §3.4, to $MFT and then, for the records $MFTMirr holds (its data size
//     over the record size: records 0..3 on every volume mkntfs and Windows
//     make), to $MFTMirr;
//  3. attributes: $STANDARD_INFORMATION's file attributes (value offset
//     0x20) first, then the copy in the key of every $I30 index entry that
//     names the file (a $FILE_NAME value, file attributes at 0x38), as
//     ntfs-3g keeps them [NTFS-3G inode.c ntfs_inode_sync_file_name]; an
//     entry in $INDEX_ROOT is a rewrite of the parent's record, one in an
//     INDX block a rewrite of that block (new update sequence number,
//     fixups applied). The $FILE_NAME attributes in the file's own record
//     keep the values they were created with, as Windows and ntfs-3g leave
//     them;
//  4. the label is $Volume's resident $VOLUME_NAME (type 0x60, UTF-16LE, at
//     most 256 bytes by $AttrDef, no terminator), resized in place, the
//     attributes after it moved, or added after $SECURITY_DESCRIPTOR when
//     the record has none, as ntfslabel does; an empty label is a value of
//     length 0, as mkntfs writes it;
//  5. the serial number is the boot sector's 64-bit field at 0x48: sector 0
//     first, then the backup boot sector (the sector after the volume's
//     total sectors), each one write [FLATCAP files/boot];
//  6. finish(): the barrier (fsync), then VOLUME_IS_DIRTY cleared again,
//     only if it was clear when the editor opened the volume.
// The dirty flag is in the record the label lives in: a label change is
// three writes of record 3 (and three of its mirror).
//
// The editor refuses (Error(refused)) a volume whose $LogFile holds
// transactions Windows has not applied (logfile_state()): Windows would
// replay them over the change at its next mount, as ntfs-3g refuses to
// mount such a volume read-write.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fsimg/check/repair.hpp"
#include "fsimg/core/scramble.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "fsimg/source/file.hpp"

namespace fsimg::ntfs {

/// Longest label: $AttrDef gives $VOLUME_NAME at most 256 bytes, 128 UTF-16
/// units (mkntfs and ntfslabel keep to it; Windows' own tools to 32).
inline constexpr std::size_t kMaxLabelUnits = 128;

/// $VOLUME_INFORMATION's dirty flag [FLATCAP attributes/volume_information].
inline constexpr std::uint16_t kVolumeIsDirty = 0x0001;

/// The file attribute bits fsimg attrib changes: read-only 0x01, hidden
/// 0x02, system 0x04, archive 0x20 [FLATCAP attributes/standard_information].
inline constexpr std::uint32_t kSettableAttributes = 0x27;

/// What $LogFile says about the volume's last shutdown [NTFS-3G logfile.c
/// ntfs_check_logfile, ntfs_is_logfile_clean; FLATCAP files/logfile].
enum class LogFileState : std::uint8_t {
    empty,    ///< its first page is all 0xFF: nothing logged (mkntfs, ntfs-3g after a mount)
    clean,    ///< the newest restart area has no client in use or says the volume is clean
    unclean,  ///< transactions Windows would replay (an unclean shutdown, hibernation, fast startup)
    unknown,  ///< no valid restart page, or $LogFile unreadable
};
/// Reads $LogFile's restart pages (record 2's $DATA, pages at 0 and at the
/// system page size it gives; "RSTR" or "CHKD", fixups checked; the restart
/// area at the page's offset 0x18: current LSN at 0, client in-use list at
/// 0x0C (0xFFFF: none), flags at 0x0E (0x0002: clean)). The page with the
/// larger current LSN decides. Never throws for damage (unknown); throws
/// Error(io) from the device.
LogFileState logfile_state(const Volume& volume);

/// A file or directory the editor found.
struct FileEntry {
    std::uint64_t record = 0;
    std::string name;  ///< UTF-8, as the index entry names it ("/" for the root)
    bool is_root = false;
    bool is_directory = false;
    std::uint32_t attributes = 0;  ///< $STANDARD_INFORMATION's file attributes
};

struct EditOptions {
    /// The image's fsync, before the dirty flag is cleared.
    std::function<void()> barrier;
    /// Unix seconds stamped on a directory remove() changes; `clamp`
    /// (SOURCE_DATE_EPOCH): no stamp later than it.
    std::int64_t now = 0;
    std::optional<std::int64_t> clamp;
    /// The volume is a metadata copy being made (dump --metadata-image): a
    /// $LogFile Windows would replay, or none, does not make begin() refuse.
    bool metadata_copy = false;
};

/// The editor of one NTFS volume: a whole image or a partition window,
/// which must outlive it.
class Editor {
public:
    /// Opens the volume (Volume's errors) and reads $Volume (record 3) and its
    /// $VOLUME_INFORMATION (Error(corrupt) when either is missing or does not
    /// decode). Writes nothing.
    Editor(io::BlockDevice& device, EditOptions options);

    /// The file at an absolute path (resolve_path's rules), nullopt when absent.
    std::optional<FileEntry> lookup(std::string_view path);
    /// The entry named `name` in directory record `dir`, nullopt when absent.
    std::optional<FileEntry> find(std::uint64_t dir, std::string_view name);

    /// Sets and clears kSettableAttributes bits of a file or directory
    /// (`set` and `clear` outside them: Error(usage)): its
    /// $STANDARD_INFORMATION, then every $I30 entry naming it in the parent
    /// directories its $FILE_NAMEs give. No write when nothing changes.
    /// Throws Error(corrupt) when the record has no resident
    /// $STANDARD_INFORMATION, or an index entry lies outside its node.
    void set_attributes(const FileEntry& file, std::uint32_t set, std::uint32_t clear);

    /// Removes `file`, named in directory record `dir`; a directory with
    /// everything below it (one name only of a file that has others:
    /// remove_link). In this order, after the dirty flag: the index
    /// entries naming it in `dir` (its Win32 and DOS names: the parent's
    /// record when they lie in $INDEX_ROOT, resized in place, else their
    /// INDX block, one write per node; when one is a separator, an entry
    /// with a sub-node, or the last entry of its INDX block, the index is
    /// rewritten without them instead: plan_index, apply_index), then the
    /// entries of the reparse points removed in $Extend/$Reparse:$R (key:
    /// tag and file reference [FLATCAP files/reparse]; in place only), then
    /// every record removed, those
    /// below a directory before it (in-use flag cleared, sequence number
    /// raised [FLATCAP concepts/file_reference]; a file with an
    /// $ATTRIBUTE_LIST: its base record, then the extension records the list
    /// names, each of which must be in use and name the base, record and
    /// sequence number, else Error(corrupt) before any write
    /// [FLATCAP attributes/attribute_list]),
    /// then their bits in $MFT's $BITMAP, then the bits of their clusters in
    /// $Bitmap, and last the directory's modification and MFT change times
    /// ($STANDARD_INFORMATION 0x08, 0x10: EditOptions::now, clamped), as
    /// ntfs-3g stamps a directory an entry left. A cut after the entries
    /// leaves records no index names (orphans,
    /// which chkdsk recovers) and bits set that nothing owns (lost), never a
    /// file that was there damaged. Everything is planned before the first
    /// write; Error(unsupported), nothing written, for what this editor does
    /// not change yet: a record with an object id ($ObjId:$O), a reparse point whose $R entry is a separator
    /// or the last of its INDX block, a file below a removed directory with a name outside it (hard links), a
    /// system file (records 0..15), and plan_index's refusals where the index must be rewritten. Error(usage)
    /// for the root.
    void remove(std::uint64_t dir, const FileEntry& file);

    /// Makes directory `name` (UTF-8, 1..255 UTF-16 units: populate's
    /// utf8_name_problem; a name Win32 cannot hold is a POSIX name) in directory
    /// record `dir`, its times `mtime` (Unix seconds; clamped as
    /// EditOptions::clamp) and returns it. Its names are those Windows gives
    /// with 8.3 names on (plan_directory_names against the names `dir`
    /// holds: a Win32 name and its DOS name, a Win32&DOS name, or POSIX).
    /// Its record is the first one from 24 on that $MFT's $BITMAP marks
    /// free and that is not in use (records 16..23 are kept for $MFT's own
    /// extensions [FLATCAP files/mft]), with the sequence number it has (1
    /// for a record never used): $STANDARD_INFORMATION (the security id of
    /// `dir`'s, else a copy of `dir`'s $SECURITY_DESCRIPTOR), its
    /// $FILE_NAMEs, an empty $INDEX_ROOT:$I30. Planned before the first
    /// write, then in this order after the dirty flag: the record, its bit
    /// in $MFT's $BITMAP, the new names into `dir`'s index (in place where
    /// their leaves have room: plan_insert, apply_insert; else the index
    /// rewritten: plan_index, apply_index), `dir`'s modification and MFT change
    /// times. A cut leaves at most a record no index names, which fsck -y
    /// puts back into `dir`, and bits nothing owns. Error(usage) for a name
    /// that exists (in any letter case) or is invalid; Error(unsupported)
    /// when $MFT is full and cannot grow (grow_mft) and for plan_index's
    /// refusals. Growing $MFT is a change of its own, made before the
    /// directory's.
    FileEntry make_directory(std::uint64_t dir, std::string_view name, std::int64_t mtime);
    /// What a new file's record says of it besides its data.
    struct NewFile {
        std::int64_t mtime = 0;  ///< Unix seconds (clamped as EditOptions::clamp)
        std::uint32_t mtime_ns = 0;
        std::optional<std::int64_t> btime;  ///< creation; nullopt: mtime
        std::uint32_t btime_ns = 0;
        bool read_only = false;  ///< FILE_ATTRIBUTE_READONLY (0x01) beside ARCHIVE (0x20)
    };
    /// Adds file `name` to directory record `dir` (names and record as
    /// make_directory), its unnamed $DATA the bytes of `data`: resident
    /// while the value fits the record, else in clusters $Bitmap marks free
    /// (one run where one is free, else the first free runs; the last
    /// cluster's tail zeroed), written before anything points to them. In
    /// this order after the dirty flag: the data, the check that `data` did
    /// not change while read (SourceFile::finish, Error(io)), the clusters'
    /// $Bitmap bits, the record, its $MFT bit, the new names into `dir`'s
    /// index (as make_directory), `dir`'s times. Everything planned before the first
    /// write; errors as make_directory's, and Error(io) "no space" when the
    /// volume has fewer free clusters than the data needs.
    FileEntry add_file(std::uint64_t dir, std::string_view name, const source::SourceFile& data,
                       const NewFile& info);
    /// Replaces the data of file `file` (not a directory, no $ATTRIBUTE_LIST
    /// or reparse point: Error(unsupported)) with the bytes of `data`, in
    /// its own record: the new data into free clusters (or resident), their
    /// bits, then the record with its new $DATA, times, read-only bit and
    /// $FILE_NAME sizes, then every index entry naming it (its sizes and
    /// times, as ntfs-3g keeps them), then the old clusters' bits cleared.
    /// A cut leaves the old data or the new, at worst with index entries
    /// whose sizes fsck -p corrects and clusters nothing owns.
    void replace_file(const FileEntry& file, const source::SourceFile& data, const NewFile& info);
    /// Renames or moves `file` (named in directory record `from`) to
    /// directory record `to` as `name` (populate's name rules; its names
    /// those Windows gives with 8.3 names on, against `to`'s other names: a
    /// case-only rename keeps the record's DOS alias rules). `replace`: an
    /// existing file of that name in `to` is removed first (remove()); a
    /// directory of that name, or one without `replace`, is Error(usage), as
    /// is moving a directory into itself or below itself. Planned before the
    /// first write; then, after the dirty flag: `to`'s index rewritten with
    /// the new names (copy on write), the record's $FILE_NAMEs replaced (the
    /// parent reference, name and namespace; times and sizes kept), `from`'s
    /// index rewritten without the old names (when it is another
    /// directory), both directories' times. A cut leaves the file reachable
    /// under its old or new name, or both, which fsck -y settles from the
    /// record's names. Error(unsupported) for what remove() refuses as a
    /// file (hard links, $ATTRIBUTE_LIST, system files) and plan_index's
    /// refusals.
    void rename(std::uint64_t from, const FileEntry& file, std::uint64_t to, std::string_view name,
                bool replace);
    /// Clusters $Bitmap marks free (bits past the last cluster not counted).
    std::uint64_t free_clusters() const;
    /// $VOLUME_NAME as UTF-8 ("" when absent or empty).
    std::string label() const;
    /// Throws Error(usage) for a label that is not UTF-8 or longer than
    /// kMaxLabelUnits UTF-16 units.
    static void check_label(std::string_view label);
    /// Replaces the label (check_label first). Throws Error(unsupported)
    /// when record 3 has no room for it.
    void set_label(std::string_view label);

    /// The boot sector's 64-bit serial number.
    std::uint64_t serial() const noexcept { return serial_; }
    void set_serial(std::uint64_t serial);

    /// Ends the change: barrier, then the dirty flag cleared (when it was
    /// clear at open). Nothing when nothing was written.
    void finish();

    /// $VOLUME_INFORMATION's flags as read at open (0x0001: dirty).
    std::uint16_t volume_flags() const noexcept { return volume_flags_; }
    /// For fsck's repair (ntfs/repair.hpp): rewrites $VOLUME_INFORMATION's
    /// flags in record 3 ($MFT, then $MFTMirr) at once, outside the dirty
    /// protocol and without the $LogFile check. Throws Error(corrupt) when
    /// record 3 has no resident $VOLUME_INFORMATION.
    void write_volume_flags(std::uint16_t flags);

    /// For fsck -y's repair of ntfs.logfile.*: every byte of $LogFile's
    /// $DATA (record 2, non-resident) set to 0xFF, the restart pages (the
    /// first two system pages) first, in writes of at most 1 MiB, as ntfsfix
    /// empties it [NTFS-3G logfile.c ntfs_empty_logfile]: the transactions
    /// Windows had not applied are discarded. The caller sets the dirty flag
    /// first, so that a cut leaves it set. Returns the bytes written; throws
    /// Error(corrupt) when $LogFile has no non-resident $DATA.
    std::uint64_t empty_logfile();

    /// For fsck's repair of ntfs.index.sizes: every $I30 entry naming an
    /// in-use file (record 16 on, not a directory, outside $Extend's tree,
    /// as the checker judges them) whose data size (0x30 of its $FILE_NAME
    /// key) differs from the file's unnamed $DATA gets that data size and
    /// its allocated size (0x28: the resident value's length rounded up to
    /// 8, the compressed size of a compressed or sparse stream, else the
    /// allocated size), as ntfs-3g writes them [NTFS-3G inode.c
    /// ntfs_inode_sync_file_name]. Each INDX block or directory record is
    /// rewritten once with all its entries (a cut leaves each whole). A
    /// directory whose index cannot be walked, and a file whose record
    /// cannot be read, are left. Returns the entries changed; throws
    /// Error(io).
    std::uint64_t repair_index_sizes();
    /// For fsck -y's repair of a directory's $I30 index (ntfs.index.corrupt,
    /// bitmap, stale-entry, missing-entry, extra-entry, entry-mismatch,
    /// order): the index of each in-use directory whose entries are not
    /// exactly its children's names in $UpCase collation order, whose walk
    /// fails with Error(corrupt) (for_each_index_entry's damage: a block that
    /// does not decode, a sub-node outside the allocation or free in the
    /// index $BITMAP, a loop), or whose $BITMAP:$I30 marks other blocks than
    /// the walk reached, is rebuilt from them, as chkdsk rebuilds an index
    /// [FLATCAP concepts/index_record]. A child is a name: a resident
    /// $FILE_NAME of an in-use record (or of its extension records) whose
    /// parent reference gives the directory's record and sequence number; its
    /// entry keys that $FILE_NAME, with the data and allocated sizes of the
    /// file's unnamed $DATA as repair_index_sizes gives them. Each rebuild
    /// is rewrite_index's (below). A directory whose index cannot be
    /// rewritten (plan_index's refusals and errors: no resident
    /// $INDEX_ROOT, one whose block size is not valid) is left and named in
    /// `left`. Returns the directories rebuilt; throws
    /// Error(io), and Error(refused) as begin() does.
    std::uint64_t rebuild_indexes(std::vector<std::string>* left = nullptr);
    /// For fsck -y's repair of ntfs.attrlist.missing, ntfs.attrlist.decode
    /// and ntfs.attrlist.entry: the $ATTRIBUTE_LIST of an in-use base record
    /// from 16 on that has one or that in-use extension records name as
    /// their base (record and sequence number) is rebuilt from what those
    /// records hold, as NTFS keeps it [FLATCAP attributes/attribute_list]:
    /// an entry per attribute of the base (but the list) and of each such
    /// extension record (type, name, starting VCN: 0 for a resident one, the
    /// record's reference, the instance), in the order of type, name
    /// ($UpCase collation) and starting VCN. Only when the records agree:
    /// each attribute but $FILE_NAME once, or non-resident pieces whose VCNs
    /// run from 0 without a gap or an overlap; a list that already says
    /// exactly that is kept. Written into the clusters of a non-resident
    /// list when they hold it (its sizes set in the base after the bytes),
    /// else resident in the base when it fits there (a list missing or
    /// resident); a base where neither holds it (a new non-resident list is
    /// not made), or whose records disagree, is left and named in `left`.
    /// An extension record of such a base that holds no attribute owns
    /// nothing: it is marked not in use (record header 0x16), then its bit
    /// in $MFT's $BITMAP cleared. After the dirty flag.
    /// Returns the lists rebuilt and the records freed; throws Error(io),
    /// and Error(refused) as begin() does.
    struct ListRepairs {
        std::uint64_t lists = 0, freed = 0, merged = 0;
    };
    ListRepairs rebuild_attribute_lists(std::vector<std::string>* left = nullptr);

    /// For fsck -y's repair of ntfs.reparse.missing-entry, stale-entry and
    /// corrupt: $Extend/$Reparse's view index $R rebuilt from the reparse
    /// points the records in use hold, one entry per file (key: its reparse
    /// tag, the first 4 bytes of its $REPARSE_POINT, and its file reference;
    /// no data), in COLLATION_NTOFS_ULONGS order [NTFS-3G reparse.c
    /// set_reparse_index; FLATCAP files/reparse], as $INDEX_ROOT:$R of
    /// $Reparse's record (found by name in $Extend's index), written whole
    /// after the dirty flag. Returns the entries written, nullopt when it is
    /// left (named in `left`): no $Reparse, an $R that has an
    /// $INDEX_ALLOCATION or an $ATTRIBUTE_LIST, entries that do not fit the
    /// record, or a reparse point whose tag cannot be read. Throws Error(io),
    /// and what begin() throws.
    std::optional<std::uint64_t> rebuild_reparse_index(std::vector<std::string>* left = nullptr);
    /// What relink_orphans did: records put back into the directory whose
    /// index names them, records linked into `found_dir` ("found.000").
    struct Relinked {
        std::uint64_t back = 0, found = 0;
        /// Of those, directories taken out of a cycle of parent references
        /// (put back where an index names them, or into found_dir).
        std::uint64_t cycle_back = 0, cycle_found = 0;
        std::string found_dir;
    };
    /// For fsck -y's repair of ntfs.tree.orphan, ntfs.filename.parent and
    /// ntfs.filename.parent-sequence where a record has no directory to go
    /// back to: an in-use base record from 16 on, with a $FILE_NAME, none of
    /// whose $FILE_NAMEs names an in-use directory of that sequence number
    /// (the directory was freed or its record reused, or the reference
    /// broke); and the lowest record of each cycle of directories whose
    /// names lead back into the cycle without reaching the root (a parent
    /// reference that broke into the directory's own subtree). It goes back into an in-use directory whose
    /// index names it (record and sequence number) and that reaches the root through its names; else, with
    /// `to_found`, into the directory found.000 of the root (chkdsk's convention; found.001 .. found.999 when
    /// the name is taken by a file), made first (make_directory, its times `mtime`) when missing. The record
    /// gets one name there, its first name outside the DOS namespace (its times, flags and sizes kept; a
    /// directory's subtree goes with it) with a DOS name as Windows gives one (plan_directory_names); a name
    /// the directory already holds in any letter case gets " (record N)" before its extension. The record is
    /// written whole (link count: its names), after the dirty flag; its index entry is not made here:
    /// rebuild_indexes, run after, enters it, so a cut leaves records whose name gives a directory in use,
    /// which fsck -y puts back. A record with an $ATTRIBUTE_LIST, or whose names do not fit its record, is
    /// left and named in `left`. Throws Error(io), Error(refused) as begin() does and when found.000 ..
    /// found.999 are all files, and make_directory's errors.
    Relinked relink_orphans(bool to_found, std::int64_t mtime, std::vector<std::string>* left = nullptr);

    /// What restore_file_names did: records given back the names index
    /// entries held, records named in `found_dir` ("found.000"), records
    /// that held nothing marked not in use, records left because nothing
    /// names them and `to_found` was false.
    struct NamesRestored {
        std::uint64_t restored = 0, found = 0, freed = 0, unnamed = 0;
        std::string found_dir;
    };
    /// For fsck -y's repair of ntfs.filename.missing: an in-use base record
    /// from 16 on of which no record (the base, or an extension record naming
    /// it) holds a $FILE_NAME gets back the $FILE_NAMEs the index entries
    /// naming it (record and sequence number) hold, each entry's key being
    /// the file's $FILE_NAME value [FLATCAP concepts/index_record]: parent
    /// reference the directory holding the entry. With `to_found`, one no
    /// entry names that holds nothing (no cluster, no $ATTRIBUTE_LIST, no
    /// data byte; a directory with no index entry that no $FILE_NAME gives
    /// as parent) is marked not in use (header 0x16, then its $MFT bit),
    /// and any other gets a name in found.000 of the root (found_directory,
    /// made with times `mtime` when missing), file0000.chk or dir0000.chk,
    /// the first such name free in any letter case (chkdsk's names for what
    /// it recovers without a name), with a DOS name where Windows gives one,
    /// times and flags from its $STANDARD_INFORMATION; its index entry is
    /// made by rebuild_indexes, run after. Every name: sizes those of the
    /// record's unnamed $DATA (as rebuild_indexes writes them), the
    /// directory bit as the record header says. Into the base (link count:
    /// its names) when it has no $ATTRIBUTE_LIST, else into the first
    /// extension record of the file with room, then the lists rebuilt
    /// (rebuild_attribute_lists). Each record written once, after the dirty
    /// flag. A record with no room is left and named in `left`. Throws
    /// Error(io), Error(refused) as begin() and found_directory do, and
    /// make_directory's errors.
    NamesRestored restore_file_names(bool to_found, std::int64_t mtime,
                                     std::vector<std::string>* left = nullptr);
    /// The directory found.000 of the root, or the first of found.001 ..
    /// found.999 that is not a file, made (make_directory, times `mtime`)
    /// when missing; `name` is set to its name. Throws Error(refused) when
    /// all are files, and make_directory's errors.
    FileEntry found_directory(std::int64_t mtime, std::string& name);

    /// What scramble_names changed.
    struct Scrambled {
        std::uint64_t names = 0, records = 0, indexes = 0, reparse_points = 0;
    };
    /// For dump --metadata-image --scramble-names on NTFS, on the copy (never
    /// a user's volume): every $FILE_NAME of an in-use record from 16 on
    /// (but the entries of $Extend) gets a made-up name of the same length
    /// (core::NameScrambler: extension kept; upper case for a DOS or
    /// Win32-and-DOS name), unique in its directory in any letter case;
    /// each record written once with the names in place. Then every
    /// directory whose entries changed has its $I30 index rebuilt from the
    /// new names (rebuild_indexes: entries sorted in $UpCase collation
    /// [formats.md §3.8], so an index that was damaged is rebuilt too), and
    /// the clusters of the old INDX blocks that are then free are zeroed
    /// (they held the real names). The substitute and print names of a
    /// resident symbolic-link or junction reparse point are scrambled alike
    /// (their length kept). Throws Error(unsupported) when a directory's
    /// index cannot be rebuilt (its real names would stay in the copy),
    /// Error(io), and what begin() throws but for $LogFile.
    Scrambled scramble_names(const core::NameScrambler& scramble);

    /// What repair_attribute_order changed: records rewritten, attributes
    /// left out of them.
    struct OrderRepairs {
        std::uint64_t records = 0, dropped = 0;
    };
    /// For fsck -y's repair of ntfs.attr.order: an in-use record whose
    /// attributes are not in ascending type order [FLATCAP
    /// concepts/file_record] is rewritten with those of a type no NTFS
    /// version defines (defined_attribute_type: a type code overwritten)
    /// left out and the others in ascending type order, each as it was
    /// (their order by name kept). A left-out non-resident attribute's
    /// clusters are then owned by nothing (ntfs.bitmap.lost, freed by the
    /// next pass). Each record written once, whole, after the dirty flag.
    /// Throws Error(io), and what begin() throws.
    OrderRepairs repair_attribute_order();

    /// What repair_record_headers changed: records whose link count, and
    /// records whose attribute instances, were set right.
    struct HeaderRepairs {
        std::uint64_t link_counts = 0, instances = 0;
    };
    /// For fsck's repair of ntfs.record.link-count and ntfs.attr.instance
    /// (MFT record header fields [FLATCAP concepts/file_record]: 0x12 the
    /// hard link count, 0x28 the next attribute instance; 0x0E of an
    /// attribute header its instance): an in-use base record whose link count
    /// is neither the number of its $FILE_NAMEs outside the DOS namespace
    /// (mkntfs and ntfs-3g) nor of all of them (chkdsk) gets the first; a
    /// record with an attribute instance repeated gets new ones for the
    /// repeats, from its next instance on (not in a file with an
    /// $ATTRIBUTE_LIST or in an extension record, whose list entries name
    /// attributes by instance: left), and a next instance past every
    /// instance in use. Each record written once, whole (with its $MFTMirr
    /// copy), after the dirty flag (begin()). Throws Error(io), and
    /// Error(refused) as begin() does.
    HeaderRepairs repair_record_headers();

    /// What repair_corrupt_records did: records marked not in use, records
    /// rewritten without the attributes that did not decode (and how many
    /// attributes those were), records whose attributes all decode given the
    /// bytes in use where they end.
    struct CorruptRepairs {
        std::uint64_t freed = 0, rewritten = 0, dropped = 0, resized = 0;
    };
    /// For fsck -y's repair of a record marked in use that cannot be read
    /// (ntfs.record.baad, signature, usa, fixup, first-attribute,
    /// bytes-in-use, ntfs.attr.header, ntfs.run.decode: the records the check
    /// gives in CheckOptions::corrupt_records), as chkdsk deletes a corrupt
    /// attribute record or a corrupt file record segment: each record of
    /// `records` from 16 on (a system file's record 0..15 is left and named in
    /// `left`) whose signature, update sequence array, fixups and first
    /// attribute offset are sound is rewritten with the attributes that
    /// decode (salvage_mft_record: an attribute that does not is left out, one
    /// whose length is invalid with every later one, bytes in use set where
    /// the attributes end); any other is formatted as a free record (header
    /// 0x16 clear, no attribute) with the next sequence number (that at 0x10
    /// plus one, 0 skipped), then its bit in $MFT's $BITMAP cleared. What a
    /// record held is not kept: the index entries naming a freed record are
    /// stale (rebuild_indexes), the clusters a left-out attribute owned lost
    /// (freed by the bitmap repair unless --salvage), its children orphans
    /// (relink_orphans). Each record written once, after the dirty flag.
    /// Throws Error(io), and Error(refused) as begin() does.
    CorruptRepairs repair_corrupt_records(std::span<const std::uint64_t> records,
                                          std::vector<std::string>* left = nullptr);

    /// What repair_record_fields set right (records per field).
    struct FieldRepairs {
        std::uint64_t bytes_allocated = 0, numbers = 0, sequences = 0, flags = 0, bases = 0;
        std::uint64_t orphans = 0;   ///< extension records whose base is gone, freed
        std::uint64_t std_info = 0;  ///< base records given a $STANDARD_INFORMATION
        std::uint64_t data = 0;      ///< files given an empty unnamed $DATA
    };
    /// For fsck's repair of MFT record header fields that have one right
    /// value [FLATCAP concepts/file_record], in each in-use record that
    /// parses: 0x1C bytes allocated made the boot sector's record size
    /// (ntfs.record.bytes-allocated) and 0x2C the record number made its
    /// number when the header has that field (update sequence array at 0x30
    /// or later: ntfs.record.number), at `preen` too; with `all`: 0x10 a
    /// sequence number 0 on a record from 16 on made 1 (ntfs.record.sequence,
    /// where sequence numbers start), 0x16 flags with bits outside 0x000F made
    /// what the record holds (ntfs.record.flags: in use; on a base record
    /// "directory" when it holds $INDEX_ROOT:$I30, "view index" (0x08) when it
    /// holds another $INDEX_ROOT, 0x04 kept when a $FILE_NAME's parent is
    /// $Extend, each kept as it was in a record with an $ATTRIBUTE_LIST, whose
    /// index may lie in an extension; an extension record keeps the low four
    /// bits), and 0x20 the base reference cleared in a system file's record
    /// 0..15 and in a record that holds $STANDARD_INFORMATION (which only a
    /// base record holds [FLATCAP attributes/attribute_list]) whose base is
    /// not an in-use base record of that sequence number (ntfs.record.base);
    /// an extension record from 16 on whose base is no such record is an
    /// orphan nothing reaches: formatted as a free record (the next sequence
    /// number), then its $MFT bit cleared, as chkdsk deletes an orphan file
    /// record segment (what it held is not kept). With `all`, a base record
    /// from 16 on with neither $STANDARD_INFORMATION nor $ATTRIBUTE_LIST
    /// (ntfs.attr.missing-std-info) gets a 72-byte one: the four times and
    /// the file attributes (but directory and view index) of its first
    /// $FILE_NAME outside the DOS namespace, the security id of that name's
    /// directory, a new instance; left when it has no $FILE_NAME or no room.
    /// With `all`, a file's base record from 16 on without an unnamed $DATA
    /// (ntfs.attr.missing-data: not a directory, view index or reparse
    /// point, no $ATTRIBUTE_LIST, no extension record naming it) gets an
    /// empty resident one (with_unnamed_data), as chkdsk inserts one.
    /// Each record written once, whole (with its $MFTMirr copy), after the
    /// dirty flag. Throws Error(io), and Error(refused) as begin() does.
    FieldRepairs repair_record_fields(bool all);
    /// For fsck -y's repair of ntfs.attr.sizes: in each in-use base record
    /// without an $ATTRIBUTE_LIST (the record holds the whole runlist), every
    /// non-resident attribute starting at VCN 0 whose runlist maps exactly
    /// VCNs 0..last gets the allocated size of those clusters, a data size
    /// no larger (bytes past the clusters do not exist) and an initialized
    /// size no larger than that (non-resident header fields 0x28, 0x30,
    /// 0x38 [FLATCAP concepts/attribute_header]); an attribute whose
    /// runlist does not cover its VCNs is left. Each record written once,
    /// after the dirty flag. Returns the attributes changed; throws
    /// Error(io), and Error(refused) as begin() does.
    std::uint64_t repair_attribute_sizes();

private:
    /// For repair_corrupt_records: record `n` (`plain`, fixups removed, as
    /// salvage_mft_record made it), when it is a file's base record without an
    /// unnamed $DATA or an $ATTRIBUTE_LIST, gets an empty resident one (a
    /// new instance), as every reader needs one to open the file (ntfs-3g:
    /// ENOENT; The Sleuth Kit: "Attribute 128 not found"); unchanged when
    /// it has no room.
    void with_unnamed_data(std::uint64_t n, std::vector<std::byte>& plain) const;
    struct Record {
        std::vector<std::byte> bytes;  ///< fixups removed
        MftRecord parsed;
    };
    Record read_record(std::uint64_t number) const;
    void write_record(std::uint64_t number, std::vector<std::byte> plain);
    void write_stream(const Attribute& attr, std::uint64_t offset, std::span<const std::byte> bytes);
    void begin();
    void set_volume_flags(std::uint16_t flags);
    /// One $I30 entry to be written: the file it names and its key (a
    /// $FILE_NAME value) [FLATCAP concepts/index_entry].
    struct IndexKey {
        FileReference file;
        std::vector<std::byte> key;
        std::u16string name;
    };
    /// Record `r`'s bytes (fixups removed) with the attributes `drop` names
    /// left out and `fresh` (type code, attribute bytes with their instance
    /// ids set) put in type order before the first kept attribute of a
    /// higher type [FLATCAP concepts/file_record], the end marker, bytes in
    /// use and `next_instance` set, the rest zeroed; nullopt when they do not
    /// fit its allocated size.
    static std::optional<std::vector<std::byte>> rebuilt_record(
        const Record& r, const std::function<bool(const Attribute&)>& drop,
        const std::vector<std::pair<std::uint32_t, std::vector<std::byte>>>& fresh,
        std::uint16_t next_instance);
    /// Record `r` with its $FILE_NAMEs replaced by `values` ($FILE_NAME
    /// values, in the order they are stored), which take the old ones'
    /// instance ids and then new ones from the next instance, and its link
    /// count set to their number (rebuilt_record); nullopt when they do not fit.
    /// For rebuild_attribute_lists: base record `base` (no $ATTRIBUTE_LIST)
    /// takes the attributes of its extension records `extensions` that it
    /// does not hold already (byte for byte, the instance aside), each with a
    /// new instance, in type order, its link count its $FILE_NAMEs; then
    /// each extension record is marked not in use (record, then $MFT bit).
    /// False, writing nothing, when they do not fit, an extension cannot be
    /// read, or one holds a later piece or a second copy of an attribute
    /// (a $FILE_NAME aside) or one that would sort before the base's of
    /// its type [FLATCAP concepts/file_record].
    /// With `held_only`, also false when the base lacks any of them (then
    /// only a cut of an earlier merge, which left them in both, is
    /// finished); false when they hold nothing.
    bool merge_extensions(const Record& base, const std::vector<std::uint64_t>& extensions, bool held_only);
    static std::optional<std::vector<std::byte>> renamed_record(
        const Record& r, const std::vector<std::vector<std::byte>>& values);
    /// A planned rewrite of one directory's $I30 index (plan_index).
    struct IndexRewrite {
        std::uint64_t dir = 0;
        std::vector<std::byte> record;               ///< the directory's record, fixups removed
        Attribute allocation;                        ///< the new $INDEX_ALLOCATION (its runs), when blocks
        std::vector<std::vector<std::byte>> blocks;  ///< INDX blocks, fixups applied, block b at b * size
        std::uint32_t block_bytes = 0;
        std::vector<check::BitmapFix> allocate;  ///< $Bitmap bits of the new blocks' clusters
        std::vector<check::BitmapFix> release;   ///< $Bitmap bits of the old $INDEX_ALLOCATION
        std::vector<Extent> extents;             ///< the new blocks' clusters
    };
    /// Plans directory record `dir`'s $I30 index as a new B+ tree of
    /// `entries` (sorted here: $UpCase collation, then the raw units), grown
    /// as ntfs-3g grows one (index_plan.hpp grow_index) in the room the
    /// record has: the entries stay in $INDEX_ROOT while the record keeps
    /// kIndexRootReserve bytes free, else they go to INDX blocks in clusters
    /// $Bitmap marks free (one contiguous run where one is free, else the
    /// first free runs), never the blocks the index has now. Writes nothing.
    /// Error(unsupported) when the directory has an $ATTRIBUTE_LIST or a
    /// non-resident $BITMAP:$I30, the record has no room for the new
    /// attributes, or the volume no free clusters; Error(corrupt) when the
    /// record is not an in-use directory with a resident $INDEX_ROOT:$I30.
    IndexRewrite plan_index(std::uint64_t dir, std::vector<IndexKey> entries,
                            const std::vector<Extent>& taken = {}) const;
    /// Index entries of directory record `dir` to remove: where each lies
    /// (the node header offsets in $INDEX_ROOT, and per INDX block), or the
    /// index rewritten without them when one is a separator (an entry with
    /// a sub-node) or would leave its INDX block empty.
    struct EntryRemoval {
        std::uint64_t dir = 0;
        const IndexSpec* index = &kI30Index;  ///< which index of `dir`
        bool any = false;                     ///< an entry was chosen
        std::vector<std::uint32_t> in_root;
        std::map<std::uint64_t, std::vector<std::uint32_t>> in_blocks;
        std::optional<IndexRewrite> rewrite;
    };
    /// Plans removing the entries of record `dir`'s index `index` ($I30, or
    /// a view index such as $Reparse's $R) for which `removed` is true;
    /// writes nothing. Throws as plan_index for a rewrite; a view index that
    /// would need one is Error(unsupported).
    EntryRemoval plan_entry_removal(std::uint64_t dir, const std::function<bool(const IndexEntry&)>& removed,
                                    const IndexSpec& index = kI30Index);
    /// The record of $Extend's file `name` ("$Reparse", "$ObjId"), by its
    /// entry in $Extend's $I30; nullopt when there is none.
    std::optional<std::uint64_t> extend_file(std::u16string_view name) const;
    /// Writes a plan_entry_removal: the record's $INDEX_ROOT resized in
    /// place, each INDX block once, or the index rewrite (apply_index).
    void apply_entry_removal(const EntryRemoval& plan);
    /// remove() of one name of a file that keeps another (a hard link): the
    /// index entries of that name in `dir` (and of its Win32 or DOS twin
    /// there), then the record without those $FILE_NAMEs and its link count
    /// the names left outside the DOS namespace, then the directory's times.
    /// False, writing nothing, when the file has no other name, is a
    /// directory or a system file, has an $ATTRIBUTE_LIST, or no $FILE_NAME
    /// in `dir` has the name.
    bool remove_link(std::uint64_t dir, const FileEntry& file);
    /// Free clusters for `need` clusters, none in `taken` (clusters this
    /// change already plans to use): the first free run of `need` in
    /// $Bitmap, else the first free runs that hold them. Error(io) "no
    /// space" when the volume has not got them.
    std::vector<Extent> free_extents(std::uint64_t need, const std::vector<Extent>& taken = {}) const;
    /// Index nodes with new entries put in place: the directory's record
    /// (its $INDEX_ROOT grown) or INDX blocks (fixups removed).
    struct IndexInsert {
        std::optional<std::vector<std::byte>> record;
        std::vector<std::pair<std::uint64_t, std::vector<std::byte>>> blocks;  ///< block number, bytes
    };
    /// Plans `keys` into directory record `dir`'s index in place: each goes
    /// to the leaf the B+ tree walk in collation order reaches, before the
    /// first entry that collates after it [FLATCAP concepts/index_record];
    /// nullopt when a leaf has no room for them (an INDX block past its
    /// allocated length, an $INDEX_ROOT whose record would keep fewer than
    /// kIndexRootReserve bytes free), when the index cannot be walked, or
    /// the directory has an $ATTRIBUTE_LIST: then plan_index rewrites it.
    /// Writes nothing.
    std::optional<IndexInsert> plan_insert(std::uint64_t dir, std::vector<IndexKey> keys) const;
    /// Index nodes split to take new entries, copy on write (plan_split).
    struct IndexSplit {
        std::vector<std::byte> record;  ///< the directory's record, fixups removed
        Attribute allocation;           ///< $INDEX_ALLOCATION:$I30 with the runs the new blocks need
        std::uint32_t block_bytes = 0;
        /// The new and rewritten nodes: block number (a block free in the
        /// index's $BITMAP now, or past its end), bytes with fixups applied.
        std::vector<std::pair<std::uint64_t, std::vector<std::byte>>> blocks;
        std::vector<check::BitmapFix> allocate;  ///< $Bitmap bits of the clusters the index grows by
        std::vector<Extent> extents;             ///< those clusters
        std::uint64_t zero_from = 0;             ///< blocks the index grows by beyond the new nodes:
        std::uint64_t zero_blocks = 0;           ///< zeroed, free in its $BITMAP
    };
    /// Plans `keys` into directory record `dir`'s $I30 B+ tree when a leaf
    /// on their way has no room (plan_insert's nullopt): each key goes to
    /// its leaf as there; a node past its room splits at the entry where
    /// half its bytes lie, that entry going up to the parent with the first
    /// half as its sub-node (as ntfs-3g's ntfs_ib_split, which splits at
    /// half the entries); a full $INDEX_ROOT moves its entries to a new
    /// block below it (ntfs_ir_reparent). Copy on write: every node changed
    /// goes to a block free in the index's $BITMAP now (else past its end,
    /// $INDEX_ALLOCATION growing by clusters $Bitmap marks free, none in
    /// `taken`, those right after its last run first; an eighth more blocks
    /// than it needs, zeroed, for the next splits), so the old tree
    /// stays whole until the record's one write switches to the new one;
    /// the blocks it no longer uses stay in $INDEX_ALLOCATION, free in its
    /// $BITMAP. Cost: the nodes on the keys' paths, not the directory.
    /// nullopt (plan_index rewrites the index) when the directory has no
    /// $INDEX_ALLOCATION yet, an $ATTRIBUTE_LIST or a non-resident
    /// $BITMAP:$I30, a node does not decode or is reached twice, or the
    /// record has no room for the grown runlist and $BITMAP. Writes nothing.
    std::optional<IndexSplit> plan_split(std::uint64_t dir, std::vector<IndexKey> keys,
                                         const std::vector<Extent>& taken) const;
    /// Writes a plan_split after the dirty flag (begin()): the blocks, the
    /// $Bitmap bits of new clusters, then the record. A cut before the
    /// record write leaves the old tree whole (at most clusters marked in
    /// use with no owner: lost), after it the new one.
    void apply_split(std::uint64_t dir, const IndexSplit& plan);
    /// New names planned into a directory's index: in place, split, or a rewrite.
    struct NameChange {
        std::optional<IndexInsert> in_place;
        std::optional<IndexSplit> split;
        std::optional<IndexRewrite> rewrite;
    };
    /// Plans names `added` into directory record `dir`: plan_insert, else
    /// plan_split, else plan_index over its keys and them (their new blocks
    /// not in `taken`).
    NameChange plan_names(std::uint64_t dir, const std::vector<IndexKey>& added,
                          const std::vector<Extent>& taken);
    /// Writes a planned insertion (after begin()): each INDX block, then the
    /// record; each node in one write, whole.
    void apply_insert(std::uint64_t dir, const IndexInsert& plan);
    /// Writes a planned rewrite, after the dirty flag (begin()), copy on
    /// write: the new INDX blocks into their free clusters, their $Bitmap
    /// bits set, the directory's record ($INDEX_ROOT, $INDEX_ALLOCATION,
    /// $BITMAP:$I30: the switch from the old tree to the new in one record
    /// write), then the old blocks' bits cleared. A cut before the record
    /// write leaves the old index whole, after it the new one; at most the
    /// clusters of one of them are marked in use with no owner (lost).
    void apply_index(const IndexRewrite& plan);
    /// The allocated and data sizes an index entry gives for a file whose
    /// unnamed $DATA is `data`: the value's length rounded up to 8 for a
    /// resident one, else the compressed size of a compressed or sparse
    /// stream or the allocated size, and the data size, as ntfs-3g writes
    /// them [NTFS-3G inode.c ntfs_inode_sync_file_name].
    static std::pair<std::uint64_t, std::uint64_t> entry_sizes(const Attribute& data) noexcept;
    /// A record planned for a new file or directory: its number, its bytes
    /// (fixups removed), and the index keys of its names.
    struct NewRecord {
        std::uint64_t number = 0;
        std::vector<std::byte> bytes;
        std::vector<IndexKey> keys;
    };
    /// Plans the record of new file or directory `name` in `dir` (whose index
    /// keys are `siblings`): its names (plan_directory_names), a free record
    /// (take_record, which may grow $MFT), $STANDARD_INFORMATION `si` with the parent's security
    /// (id, else a copy of its $SECURITY_DESCRIPTOR), a $FILE_NAME per name
    /// made from `fn` (parent, name and namespace set here), then what
    /// `tail` gives for the bytes the record has left. Error(usage) for an
    /// invalid name or one `dir` holds in any case.
    NewRecord plan_record(std::uint64_t dir, std::string_view name, const std::vector<IndexKey>& siblings,
                          FileName fn, StandardInformation si, std::uint16_t flags,
                          const std::function<std::vector<std::vector<std::byte>>(std::uint32_t)>& tail);
    /// The second half of make_directory and add_file, after begin() (and
    /// the data): the new record, its $MFT bit, the planned names, `dir`'s
    /// times. Returns the new entry.
    FileEntry link_record(std::uint64_t dir, std::string_view name, NewRecord rec, const NameChange& names);
    /// New data planned: resident bytes, or the clusters it is written to.
    struct NewData {
        std::uint64_t size = 0;
        std::optional<std::vector<std::byte>> resident;
        std::vector<Extent> extents;
        std::vector<check::BitmapFix> allocate;  ///< the extents' $Bitmap bits
    };
    /// Plans `data` as $DATA: resident when its bytes fit in `room` (a
    /// record's bytes left), else in free clusters (free_extents).
    NewData plan_data(const source::SourceFile& data, std::uint32_t room) const;
    /// The unnamed $DATA attribute of planned data.
    std::vector<std::byte> data_attribute(const NewData& d) const;
    /// Copies non-resident planned data into its clusters (1 MiB at a time,
    /// the last cluster's tail zeroed), then SourceFile::finish, then sets
    /// the clusters' $Bitmap bits (resident data: SourceFile::finish only).
    void write_data(const NewData& d, const source::SourceFile& data);
    /// A resident $DATA stream planned out of its record into clusters, to
    /// make room in the record.
    struct DataOut {
        Record record;                 ///< the record with that stream non-resident (parsed again)
        std::vector<std::byte> value;  ///< the stream's bytes, for the clusters
        std::vector<Extent> extents;
        std::vector<check::BitmapFix> allocate;  ///< the extents' $Bitmap bits
    };
    /// Plans the longest resident $DATA stream (unnamed or named; one with
    /// attribute flags, compressed, encrypted or sparse, is left) of record
    /// `r` into free clusters (free_extents): the same name, instance and
    /// position among the attributes, non-resident with one runlist from VCN
    /// 0 and its sizes the value's length [FLATCAP concepts/attribute_header],
    /// as Windows and ntfs-3g move a resident attribute out when a record
    /// fills [NTFS-3G attrib.c ntfs_attr_make_non_resident]. nullopt when
    /// no such stream would free a byte or the volume has not the clusters
    /// for it (a repair then leaves the record, never fails on it). Writes
    /// nothing.
    std::optional<DataOut> plan_data_out(const Record& r) const;
    /// Writes planned data out: the value into its clusters (the last
    /// cluster's tail zeroed), then their $Bitmap bits; the caller then
    /// writes the record (a cut before that leaves the clusters lost).
    void write_data_out(const DataOut& d);
    /// Calls `patch` with the key of every $I30 entry naming record `file`
    /// in the directories its $FILE_NAMEs (in `r`) give, each directory
    /// record and INDX block written once.
    void patch_entries(std::uint64_t file, const MftRecord& r,
                       const std::function<void(std::span<std::byte>)>& patch);
    /// The first record from 24 (or after the last one this editor took) on
    /// that $MFT's $BITMAP marks free and that is not in use, with the
    /// sequence number its next use takes; when there is none, $MFT is grown
    /// (grow_mft) and the first new record taken.
    std::pair<std::uint64_t, std::uint16_t> take_record();
    /// Grows $MFT by max(16 records, one cluster) as ntfs-3g does [NTFS-3G
    /// mft.c ntfs_mft_data_extend_allocation]: clusters $Bitmap marks free
    /// (the last run extended when the next clusters are free), after the
    /// dirty flag in this order: the new records formatted (not in use), the
    /// new bytes of $MFT's $BITMAP zeroed (in new clusters when it needs
    /// them), those clusters' $Bitmap bits, then record 0 with the longer
    /// $DATA and $BITMAP ($MFT, then $MFTMirr). A cut leaves at most
    /// clusters nothing owns. Error(unsupported) when $MFT has an
    /// $ATTRIBUTE_LIST or record 0 no room for the longer runlist.
    void grow_mft();
    /// The entries of directory record `dir`'s $I30 index, as IndexKeys.
    /// Kept while this editor changes nothing else in the index (keys_):
    /// copying many files into one directory reads its index once.
    const std::vector<IndexKey>& index_keys(std::uint64_t dir) const;
    /// The names of directory record `dir`, whose index keys are
    /// `siblings` (index_keys(dir)), for plan_directory_names one name at a
    /// time (DirectoryNames): built once per directory, kept with keys_.
    const DirectoryNames& names_in(std::uint64_t dir, const std::vector<IndexKey>& siblings) const;
    /// $MFT's $BITMAP bit of `record` set (`in_use`) or cleared: the byte
    /// rewritten in its clusters, or record 0 rewritten when the bitmap is resident.
    void mark_record(std::uint64_t record, bool in_use = true);
    /// Stamps directory record `dir`'s $STANDARD_INFORMATION modification
    /// and MFT change times with EditOptions::now (clamped), as ntfs-3g
    /// stamps a directory whose entries changed.
    void stamp_directory(std::uint64_t dir);
    /// $Bitmap's bytes for setting (`set`) or clearing the bits of `runs`
    /// (pairs of first LCN and length), in ascending order. Error(corrupt)
    /// when $Bitmap does not map one of them.
    std::vector<check::BitmapFix> cluster_bits(
        const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs, bool set) const;
    FileEntry entry_of(std::uint64_t record, std::string name) const;

    io::BlockDevice& dev_;
    EditOptions options_;
    Volume vol_;
    UpcaseTable upcase_;
    std::optional<Attribute> mirror_;
    std::uint64_t mirror_records_ = 0;
    std::uint64_t serial_ = 0;
    std::uint16_t volume_flags_ = 0;  ///< as read at open
    bool begun_ = false;
    std::uint64_t next_record_ = 24;  ///< where take_record looks first
    /// Directories' index keys as index_keys read them, with the entries
    /// add_file and make_directory put in since; dropped for a directory
    /// whose index any other change touches.
    struct DirectoryKeys {
        std::vector<IndexKey> keys;
        /// UpcaseTable::hash of each name -> its position in `keys`: a name
        /// looked up in O(1), not by a scan of the directory.
        std::unordered_multimap<std::uint64_t, std::size_t> folded;
        void add(const UpcaseTable& upcase, IndexKey k);
    };
    mutable std::map<std::uint64_t, DirectoryKeys> keys_;
    /// The keys of directory `dir` (index_keys) equal to `name` but for
    /// case: the exact name first when there is one; empty when none.
    std::vector<const IndexKey*> keys_named(std::uint64_t dir, std::u16string_view name) const;
    /// The names of each directory in keys_, for planning one more
    /// (names_in); dropped with its keys_.
    mutable std::map<std::uint64_t, DirectoryNames> namers_;
};

}  // namespace fsimg::ntfs
