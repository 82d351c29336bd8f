// Read-only view of an exFAT image: the boot region and the root directory's
// system entries (what `dump` shows), and Volume: FAT entries and chains, the
// allocation bitmap, the up-case table, directories (entry sets decoded by
// exfat/directory.hpp), path lookup and file data. An image is hostile input:
// every offset is checked against the device before reading, every chain walk
// is bounded and detects loops, memory is bounded by what the image holds.
//
// Facts: docs/formats.md §2.1-2.7 [EXFAT §2-4, §6-7].
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/check/summary.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat {

/// One boot region (main at sector 0, backup at sector 12) as read.
struct BootRegionCopy {
    BootSector boot;
    std::uint32_t checksum_computed = 0;  ///< boot_checksum of sectors 0..10
    std::uint32_t checksum_stored = 0;    ///< first word of sector 11
    bool checksum_ok = false;             ///< every word of sector 11 equals checksum_computed
    unsigned extended_signatures_ok = 0;  ///< of the 8 extended boot sectors
    /// Sector 9: "null" (all zero: ten null parameter structures), "0xFF" (what
    /// exfatprogs before 1.2.8 wrote), or "parameters" (anything else).
    std::string oem_parameters;
};

struct BootRegion {
    /// 2^BytesPerSectorShift of the boot sector in use, or 512 when the
    /// main one's shift is out of 9..12 and no whole backup says otherwise.
    std::uint32_t bytes_per_sector = 512;
    BootRegionCopy main;
    std::optional<BootRegionCopy> backup;  ///< when the device holds 24 sectors
    /// The backup's 12 sectors equal the main's, VolumeFlags and PercentInUse aside.
    bool backup_identical = false;
    std::vector<BootProblem> problems;  ///< validate_boot_sector(main.boot)
    /// The main region is damaged (its checksum is wrong or its boot sector
    /// breaks a rule of validate_boot_sector) and the backup is whole (its
    /// checksum right, every rule kept, its BytesPerSectorShift the sector
    /// size both regions were read with): the volume is read through the
    /// backup, as [EXFAT §3.1] lets implementations do.
    bool use_backup = false;
    /// Why the main region is not used ("BootSignature is 0000, must be
    /// AA55 [exfat.boot.signature]"); empty unless use_backup.
    std::string main_damage;
    /// The boot sector the geometry comes from: the main one, or with
    /// use_backup the backup's, whose VolumeFlags and PercentInUse are then
    /// taken from the main sector while that still says "EXFAT   " (they
    /// are kept current only there, stale in the backup: formats.md §2.2).
    BootSector active;
    /// A boot sector fit to read the volume through: the main one keeps
    /// every rule (its checksum may be wrong), or use_backup.
    bool usable() const noexcept { return problems.empty() || use_backup; }
    std::uint64_t device_bytes = 0;
    /// Volume bytes beyond the device (a truncated image); 0 when it fits.
    std::uint64_t missing_bytes = 0;

    // The root directory's system entries, from any cluster of its FAT chain (read only
    // when usable() and the cluster lies inside the device).
    std::optional<VolumeLabelEntry> label;
    std::optional<AllocationBitmapEntry> bitmap;
    std::optional<UpcaseTableEntry> upcase;
    /// TableChecksum recomputed over the up-case table's bytes, following its
    /// FAT chain (bounded: at most 128 KiB + one cluster, every link checked).
    std::optional<std::uint32_t> upcase_checksum_computed;
    std::optional<std::string> root_problem;  ///< why the root entries could not be read
};

/// Reads both boot regions and the root's system entries; falls back to the
/// backup region when the main one is damaged (BootRegion::use_backup),
/// looking for it at sector 12 of each sector size 512..4096 when the main
/// boot sector's BytesPerSectorShift cannot be trusted. Throws
/// Error(not_this_fs) when sector 0 does not say "EXFAT   " at byte 3 and no
/// whole backup region stands in for it (see probe), Error(corrupt) when the
/// device is shorter than one boot region. Memory is bounded (a few boot
/// regions, at most 64 KiB of root, 128 KiB of up-case table) whatever the
/// fields say.
BootRegion read_boot_region(const io::BlockDevice& device);

/// True when the device holds an exFAT volume: sector 0 says "EXFAT   " at
/// byte 3 [EXFAT §3.1.2], or sector 0 is not a FAT or NTFS boot sector (its
/// bytes 11-12, BytesPerSector there and MustBeZero in exFAT, are not 512,
/// 1024, 2048 or 4096) and a whole backup boot region (FileSystemName
/// right, BytesPerSectorShift naming the sector size it was found with,
/// checksum right, every rule of validate_boot_sector kept) stands at sector
/// 12 for a sector size of 512, 1024, 2048 or 4096 bytes. Reads at most 13
/// bytes, or one boot region per sector size; throws only Error(io).
bool probe(const io::BlockDevice& device);

/// "the main boot region (sectors 0..11) is damaged (WHY); reading through
/// the backup boot region (sectors 12..23)"; empty unless region.use_backup.
std::string backup_note(const BootRegion& region);

class Volume;
/// What every reader warns about once when it opens an exFAT volume: a main
/// boot region the backup stands in for (backup_note), an up-case table
/// replaced by the recommended one. Empty when neither.
std::vector<std::string> reading_problems(const Volume& volume);

/// One boot-sector field for dump: its spec name, byte offset, width, value.
struct BootField {
    std::string name;          ///< "BytesPerSectorShift"
    std::size_t offset = 0;    ///< byte offset in the boot sector
    std::size_t width = 0;     ///< bytes
    std::uint64_t number = 0;  ///< value, for numeric fields
    std::string text;          ///< value, for JumpBoot/FileSystemName/MustBeZero
    bool is_text = false;
};
/// Every field of Table 4 in on-disk order (BootCode and ExcessSpace left out).
std::vector<BootField> boot_fields(const BootSector& bs);

/// A volume label entry as UTF-8 (CharacterCount clamped to 11; unpaired
/// surrogates become U+FFFD).
std::string label_text(const VolumeLabelEntry& entry);

/// What a FAT entry value means [EXFAT §4.1; formats.md §2.4].
enum class EntryKind : std::uint8_t {
    next,     ///< a link to cluster 2..ClusterCount+1
    bad,      ///< 0xFFFFFFF7
    end,      ///< 0xFFFFFFFF, the only end of chain
    invalid,  ///< 0, 1, a cluster number past the heap, 0xFFFFFFF8..0xFFFFFFFE
};

/// A run of consecutive clusters.
struct ClusterRun {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
};

/// How a chain walk ended.
enum class ChainEnd : std::uint8_t {
    end_of_chain,  ///< 0xFFFFFFFF (the normal end)
    limit,         ///< the caller's cluster limit was reached
    bad,           ///< a link is the bad-cluster mark
    invalid,       ///< an entry holds an invalid value (the cluster holding it is included)
    loop,          ///< the chain returns to a cluster it already visited
};

struct Chain {
    std::vector<ClusterRun> runs;
    std::uint64_t clusters = 0;  ///< total clusters in runs
    ChainEnd end = ChainEnd::end_of_chain;
    std::uint32_t stop_value = 0;  ///< the entry value that ended the walk (bad, invalid, loop)
};

/// A read-only exFAT volume over a BlockDevice (partition window or whole
/// image). Keeps a small cache of FAT and bitmap windows (at most
/// kCacheWindows x 64 KiB) and the expanded up-case table (128 KiB), so memory
/// does not grow with the volume.
class Volume {
public:
    static constexpr std::size_t kCacheWindows = 16;
    static constexpr std::size_t kWindowBytes = 65536;
    /// Deepest directory nesting a walk follows (as fat::Volume's users do).
    static constexpr unsigned kMaxDepth = check::kMaxDirectoryDepth;

    /// Reads the boot region and the root's system entries, and loads the
    /// up-case table. A damaged main boot region with a whole backup is read
    /// through the backup (boot().use_backup says so). Throws
    /// Error(not_this_fs) when it is not exFAT, Error(corrupt) naming the
    /// first broken boot-sector rule (validate_boot_sector) when no whole
    /// backup stands in, or when the root directory's first cluster is
    /// outside the image. A missing or damaged up-case table is not an error:
    /// the spec's recommended table is used instead and upcase_problem() says why.
    explicit Volume(const io::BlockDevice& device);
    /// The same from `boot`, which read_boot_region(device) returned (the
    /// checker has read it already: not read twice).
    Volume(const io::BlockDevice& device, BootRegion boot);
    ~Volume();
    Volume(const Volume&) = delete;
    Volume& operator=(const Volume&) = delete;

    const io::BlockDevice& device() const noexcept { return device_; }
    const BootRegion& boot() const noexcept { return boot_; }
    /// The boot sector in use (BootRegion::active: the backup's when the main one is damaged).
    const BootSector& boot_sector() const noexcept { return boot_.active; }
    std::uint32_t bytes_per_sector() const noexcept { return boot_.bytes_per_sector; }
    std::uint32_t cluster_bytes() const noexcept { return cluster_bytes_; }
    std::uint32_t cluster_count() const noexcept { return boot_sector().cluster_count; }
    /// Highest cluster number: ClusterCount + 1.
    std::uint32_t max_cluster() const noexcept { return cluster_count() + 1; }
    bool is_cluster(std::uint64_t n) const noexcept { return n >= 2 && n <= max_cluster(); }
    std::uint32_t root_cluster() const noexcept { return boot_sector().first_cluster_of_root_directory; }
    /// Byte offset of cluster n in the device; n must satisfy is_cluster().
    std::uint64_t cluster_offset(std::uint32_t n) const noexcept {
        return heap_offset_ + std::uint64_t(n - 2) * cluster_bytes_;
    }

    /// FatEntry[n] of the active FAT (VolumeFlags ActiveFat picks the second
    /// of two). Throws Error(corrupt) when n > max_cluster() or the entry lies
    /// past the end of the device.
    std::uint32_t fat_entry(std::uint32_t n) const;
    EntryKind classify(std::uint32_t value) const noexcept;
    /// Follows the FAT chain from `start` for at most `max_clusters` clusters
    /// (never more than the volume has), detecting loops exactly. An invalid
    /// start gives an empty chain ending `invalid`.
    Chain follow_chain(std::uint32_t start, std::uint64_t max_clusters) const;
    /// The clusters holding `data_length` bytes from `first_cluster`: one run
    /// when `no_fat_chain`, else the FAT chain. Throws Error(corrupt) naming
    /// `what` when the run leaves the cluster heap, the chain is shorter than
    /// the length needs (broken, looping, bad) or a cluster lies past the end
    /// of the device. 0 bytes -> no runs.
    std::vector<ClusterRun> allocation(std::uint32_t first_cluster, std::uint64_t data_length,
                                       bool no_fat_chain, std::string_view what) const;

    /// Reads whole cluster n (out.size() <= cluster_bytes()). Throws
    /// Error(corrupt) when n is not a cluster or lies past the end of the device.
    void read_cluster(std::uint32_t n, std::span<std::byte> out) const;

    /// The Allocation Bitmap entry (0x81) of the root: the first one, or with
    /// two FATs and ActiveFat set, the one whose BitmapFlags bit 0 is set.
    std::optional<AllocationBitmapEntry> bitmap_entry() const noexcept { return bitmap_; }
    /// Bit n-2 of the allocation bitmap: true = cluster n is in use [EXFAT
    /// §7.1.5]. Throws Error(corrupt) when there is no usable bitmap (missing,
    /// shorter than ClusterCount bits, outside the heap or the device) or n
    /// is not a cluster.
    bool cluster_in_use(std::uint32_t n) const;
    /// The runs of clusters marked in use, in order; stops after `max_runs`
    /// runs (`complete` false then). Same throws as cluster_in_use.
    std::vector<ClusterRun> used_runs(std::size_t max_runs, bool* complete = nullptr) const;
    /// Clusters marked in use (bits set among the first ClusterCount).
    std::uint64_t used_clusters() const;

    /// The expanded up-case table (65,536 mappings) names are compared with.
    std::span<const char16_t> upcase_table() const noexcept { return upcase_map_; }
    /// Why the volume's own up-case table is not used (missing entry, broken
    /// chain, bad TableChecksum, does not expand), or nullopt when it is.
    const std::optional<std::string>& upcase_problem() const noexcept { return upcase_problem_; }

    /// A synthetic record for the root directory (directory, name "/").
    FileRecord root_record() const;
    /// The raw bytes of a directory: the root's FAT chain (up to 256 MiB), or
    /// a subdirectory's DataLength bytes (NoFatChain run or FAT chain).
    /// A DataLength of 0 reads as an empty directory. Throws Error(corrupt)
    /// naming the directory when it is not a directory, its DataLength is over
    /// 256 MiB [EXFAT §6.2], or its clusters are outside the heap, broken,
    /// looping or past the end of the device (the root: a chain broken by a
    /// bad or invalid link yields the clusters before the break).
    std::vector<std::byte> read_directory_bytes(const FileRecord& dir) const;
    /// read_directory_bytes parsed with the volume's up-case table.
    ParsedDirectory read_directory(const FileRecord& dir) const;

    /// The record for a path inside the volume ("/", "DCIM/a.jpg",
    /// "/dcim/A.JPG"): components compared after up-casing through the
    /// volume's table; sets with a bad SetChecksum are not matched; "." and
    /// ".." are not allowed. nullopt when a component does not exist; throws
    /// Error(usage) when a non-final component is a file or the path is
    /// malformed, Error(corrupt) when a directory on the way is unreadable.
    std::optional<FileRecord> lookup(std::string_view path) const;

    /// Streams a file's DataLength bytes to `sink` in pieces of at most 1 MiB:
    /// the clusters up to ValidDataLength (clamped to DataLength), then zeros
    /// [EXFAT §7.6.4]. Throws Error(corrupt) naming the file when its
    /// allocation is broken (see allocation()), Error(io) on read failures.
    void read_file(const FileRecord& file, const std::function<void(std::span<const std::byte>)>& sink) const;

    /// The allocation bitmap's clusters, in order (computed once): its byte
    /// i lies at byte i - (bytes of the runs before) of the run holding it,
    /// bit k of byte i for cluster 8i + k + 2 [EXFAT §7.1.5]; throws as
    /// cluster_in_use.
    const std::vector<ClusterRun>& bitmap_runs() const;

private:
    /// The cached 64 KiB-aligned window of the device holding byte `abs`
    /// (shorter, or empty, where the device ends).
    std::span<const std::byte> window(std::uint64_t abs) const;
    /// Calls `chunk(first_byte, bytes)` over the bitmap's ceil(ClusterCount/8) bytes in order.
    void scan_bitmap(const std::function<void(std::uint64_t, std::span<const std::byte>)>& chunk) const;
    void load_upcase_table();

    const io::BlockDevice& device_;
    BootRegion boot_;
    std::uint32_t cluster_bytes_ = 0;
    std::uint64_t heap_offset_ = 0;
    std::uint64_t fat_offset_ = 0;  ///< byte offset of the active FAT
    std::optional<AllocationBitmapEntry> bitmap_;
    std::vector<char16_t> upcase_;          ///< a table of the volume's own, expanded
    std::span<const char16_t> upcase_map_;  ///< upcase_, or recommended_upcase_map()
    std::optional<std::string> upcase_problem_;
    struct Cache;
    std::unique_ptr<Cache> cache_;
};

}  // namespace fsimg::exfat
