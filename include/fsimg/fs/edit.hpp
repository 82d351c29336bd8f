// The filesystem-neutral face of the changing commands (cp, rm, mkdir, mv,
// label, attrib): one Editor interface, one adapter per filesystem over its
// own editor (fat::Editor, fat/edit.hpp; exfat::Editor, exfat/edit.hpp), so
// that the command line names no filesystem to change one. Each adapter
// keeps its filesystem's write order and its promises (docs/editing.md).
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/file.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::fs {

/// Attribute bits as FAT's DIR_Attr [FATGEN] and exFAT's FileAttributes
/// [EXFAT §7.4.4] both store them.
inline constexpr std::uint8_t kAttrReadOnly = 0x01;
inline constexpr std::uint8_t kAttrHidden = 0x02;
inline constexpr std::uint8_t kAttrSystem = 0x04;
inline constexpr std::uint8_t kAttrArchive = 0x20;

/// A file or directory of the volume being changed.
struct EditEntry {
    std::string name;  ///< UTF-8 (the long name on FAT)
    bool is_root = false;
    bool is_dir = false;
    std::uint8_t attributes = 0;  ///< kAttr* bits
    std::any record;              ///< the filesystem's own record, for its editor
};

/// A directory, as the adapter names it (0: the root).
using EditDir = std::uint64_t;

/// How an editor stamps what it writes and when it waits for the device.
struct EditOptions {
    std::int64_t now = 0;               ///< Unix seconds
    std::optional<std::int64_t> clamp;  ///< SOURCE_DATE_EPOCH
    bool local_time = false;
    std::function<void()> barrier;  ///< the image's fsync, before the clean/dirty flag is reset
    /// The editor checks what the change touches as it reads it
    /// (CheckScope::touched; fat::EditOptions::check_touched). FAT only.
    bool check_touched = false;
};

/// What a new entry records besides its name and data.
struct NewEntry {
    std::optional<std::int64_t> mtime;  ///< Unix seconds; nullopt: now
    std::uint32_t mtime_ns = 0;
    std::optional<std::int64_t> btime;
    std::uint32_t btime_ns = 0;
    bool read_only = false;
};

/// The operations every changing command uses; the filesystem's editor
/// behind them documents units, order and errors (the same Error codes:
/// usage for what the user asked wrongly, io for no space or a changed
/// source, corrupt for damage found).
class Editor {
public:
    virtual ~Editor() = default;
    virtual Kind kind() const noexcept = 0;

    virtual std::optional<EditEntry> lookup(std::string_view path) = 0;
    virtual EditDir directory_of(const EditEntry& dir) = 0;
    virtual std::optional<EditEntry> find(EditDir dir, std::string_view name) = 0;
    /// Why `name` cannot be a new entry's name, or nullopt.
    virtual std::optional<std::string> name_problem(std::string_view name) const = 0;
    /// Applies the filesystem's name rules to a scanned host tree (cp -r):
    /// appends its problems and warnings.
    virtual void check_tree(source::SourceTree& tree) const = 0;
    /// Throws Error(usage) when the filesystem cannot hold `label`.
    virtual void check_label(std::string_view label) const = 0;
    /// True when Windows upper-cases the labels it writes (FAT), so that a
    /// lower-case label is worth a warning.
    virtual bool windows_upper_cases_labels() const noexcept = 0;

    virtual EditEntry add_file(EditDir dir, std::string_view name, const source::SourceFile& data,
                               const NewEntry& info) = 0;
    virtual void replace_file(EditDir dir, const EditEntry& existing, const source::SourceFile& data,
                              const NewEntry& info) = 0;
    virtual EditEntry add_directory(EditDir dir, std::string_view name, const NewEntry& info) = 0;
    virtual void remove(EditDir dir, const EditEntry& entry) = 0;
    virtual void rename(EditDir from, const EditEntry& entry, EditDir to, std::string_view new_name,
                        bool replace) = 0;
    /// Sets and clears kAttr* bits (read-only, hidden, system, archive).
    virtual void set_attributes(EditDir dir, const EditEntry& entry, std::uint8_t set,
                                std::uint8_t clear) = 0;

    /// Planning a change of many entries before its first write (cp): the
    /// directory entries (32 bytes each) a new entry named `name` takes.
    virtual std::uint32_t entry_slots(std::string_view name) const = 0;
    /// Clusters of a file of `bytes` bytes.
    virtual std::uint64_t data_clusters(std::uint64_t bytes) const = 0;
    /// Clusters a new directory takes once it holds new entries of `sets`
    /// slots each (entry_slots), added in order.
    virtual std::uint64_t new_directory_clusters(std::span<const std::uint32_t> sets) const = 0;
    /// Clusters directory `dir` grows by to take entries of `sets` slots
    /// each: an upper bound. Error(io) when a directory that cannot grow (a
    /// FAT12/16 root) cannot take them. Writes nothing.
    virtual std::uint64_t growth_clusters(EditDir dir, std::span<const std::uint32_t> sets) = 0;
    /// Error(io) "no space left on the volume" naming both counts unless
    /// `clusters` clusters are free. Writes nothing.
    virtual void check_free(std::uint64_t clusters) = 0;

    virtual std::string label() = 0;
    virtual void set_label(std::string_view label) = 0;
    /// The serial number: 32 bits on FAT and exFAT, 64 on NTFS (volume_id_bits()).
    virtual std::uint64_t volume_id() = 0;
    virtual void set_volume_id(std::uint64_t id) = 0;
    virtual unsigned volume_id_bits() const noexcept = 0;
    /// Ends the change (the clean/dirty flag reset last).
    virtual void finish() = 0;
};

/// Whether a volume's check lets an editor change it (design.md "A writer
/// never trusts the image it changes"). An editor relies on three things the
/// checker's ownership walk proves or disproves: a cluster it allocates is
/// free by the FAT or allocation bitmap and owned by nothing reachable; a
/// cluster it frees belongs to the removed entry alone; a directory it
/// writes into owns its slots.
///  - `unsafe`: the findings that break one of them: a cross-link, a chain
///    that loops, leaves the volume, runs into a free cluster or holds a bad
///    one, a first cluster that is free or outside the volume, an exFAT
///    cluster in use but clear in the bitmap, a directory that loops, cannot
///    be read, has no cluster or lies deeper than the walk goes, a missing
///    or wrong-sized bitmap, a missing or invalid up-case table (names could
///    not be compared), a boot sector whose geometry is ambiguous or that the
///    FAT or the image does not hold (root entries on FAT32, a FAT too
///    small, a truncated image); on NTFS an MFT record that does not parse,
///    an attribute header or runlist that does not decode, a cross-linked or
///    out-of-volume run, an index that cannot be read, an unreadable $MFT or
///    $MFTMirr, a missing $VOLUME_INFORMATION; and every fatal finding;
///  - `incomplete`: the check did not finish every pass, so who owns each
///    cluster is not known;
///  - `elsewhere`: the other errors (lost clusters, names, timestamps...),
///    which the change neither relies on nor makes worse, except the flags
///    and counts every change rewrites or that a crash leaves (dirty flags,
///    FSInfo, PercentInUse, a backup boot sector that differs, NTFS's
///    $MFTMirr behind $MFT).
/// Pointers into `found`, valid while it lives.
struct WriteSafety {
    std::vector<const check::Finding*> unsafe;
    std::vector<const check::Finding*> elsewhere;
    bool incomplete = false;
    bool safe() const noexcept { return unsafe.empty() && !incomplete; }
};
WriteSafety write_safety(const check::Findings& found, const check::Summary& summary);

/// How much of a volume a changing command checks before its first write
/// (docs/editing.md "Damaged volumes" and "Large volumes").
enum class CheckScope : std::uint8_t {
    /// The checker's ownership walk over the whole volume, judged by write_safety().
    whole,
    /// Only what the change reads, as the editor reads it (EditOptions::
    /// check_touched): the directories it writes into and their parents, the
    /// chains it frees, the FAT copies where it allocates. FAT only.
    touched,
};

/// FAT volumes of more clusters than this are checked where the change
/// touches them (automatic_check_scope): the whole walk reads every FAT
/// entry and keeps two bits per cluster, 1.35 s and 135 MB for the 268
/// million clusters of a 2 TiB FAT32 of 8 KiB clusters, against 0.03 s for
/// the change itself (docs/benchmarks.md). 2^24 clusters: a 64 MiB FAT.
inline constexpr std::uint64_t kWholeCheckMaxClusters = std::uint64_t{1} << 24;

/// The scope a changing command uses unless told (--check auto): touched
/// for a FAT volume of more than kWholeCheckMaxClusters clusters, whole
/// otherwise. exFAT is always checked whole: its walk reads the allocation
/// bitmap (one bit per cluster) and the FAT only where a chain is, 0.28 s
/// for 2 TiB of 4 KiB clusters. `clusters` is set to the volume's cluster
/// count (0 when its geometry cannot be derived: then whole, which refuses
/// such a volume). Throws Error(io) when the device cannot be read.
CheckScope automatic_check_scope(const io::BlockDevice& volume, Kind kind, std::uint64_t& clusters);

/// The editor for a volume detect() found to be `kind` (a whole image or a
/// partition window, which must outlive it). Throws what the filesystem's
/// editor throws.
std::unique_ptr<Editor> open_editor(io::BlockDevice& volume, Kind kind, EditOptions options);

}  // namespace fsimg::fs
