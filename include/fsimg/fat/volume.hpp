// Read-only view of an existing FAT volume: boot region, FAT entries, chains,
// directories, files. An image is hostile input: every offset is checked
// against the device, every chain walk is bounded (cluster count steps, cycle
// detection), memory is bounded by what the image holds (design.md).
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
#include "fsimg/fat/structs.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fat {

/// The first basic rule a boot sector breaks that makes its geometry
/// underivable (bytes per sector, sectors per cluster, reserved sectors,
/// FAT count, FAT size, total sectors, regions within the total), as a message
/// naming the field and its value; nullopt when the geometry can be derived.
std::optional<std::string> geometry_problem(const BootSector& bs);

/// What the boot region of a FAT volume says.
struct BootRegion {
    BootSector boot;                        ///< sector 0
    std::optional<Layout> layout;           ///< when geometry_problem() is nullopt
    std::optional<std::string> problem;     ///< why layout is missing
    std::optional<FsInfo> fsinfo;           ///< FAT32, when BPB_FSInfo is inside the reserved region
    std::optional<BootSector> backup;       ///< FAT32, when BPB_BkBootSec is inside the reserved region
    bool backup_identical = false;          ///< the backup's 512 bytes equal sector 0's
    std::optional<std::string> root_label;  ///< the root directory's volume-label entry (11 chars, as stored)
    std::uint64_t device_bytes = 0;         ///< size of the device the volume was read from
};

/// True when BS_jmpBoot is a jump as the FAT specification allows it: EB xx
/// 90 or E9 xx xx [FATGEN "Boot Sector and BPB"].
bool has_boot_jump(const BootSector& bs) noexcept;

/// A valid FAT32 backup boot sector and the byte offset it was found at.
struct BackupBootSector {
    std::array<std::byte, kBootSectorSize> sector{};
    std::uint64_t offset = 0;
};
/// The FAT32 backup boot sector, for a volume whose sector 0 is damaged: the
/// sector BPB_BkBootSec names, which FATGEN recommends be 6 and every
/// formatter makes 6 (so it is looked for there, sector 0 being untrusted),
/// for sector sizes of 512, 1024, 2048 and 4096 bytes. Accepted when it has
/// a jump, the 55 AA signature, a FAT32-shaped BPB whose geometry derives
/// (geometry_problem), BPB_BytsPerSec equal to the size it was found with and
/// BPB_BkBootSec 6. Reads at most 4 sectors; nullopt when none is found.
std::optional<BackupBootSector> find_backup_boot_sector(const io::BlockDevice& device);

/// Why `sector` cannot stand as the boot sector of the volume on `device`, as
/// a message naming the rule; nullopt when it can. The rules: a jump (EB xx 90
/// or E9) [FATGEN "Boot Sector and BPB": BS_jmpBoot], the signature 55 AA at
/// bytes 510-511 [FATGEN: "Signature_word"], not an exFAT or NTFS name, a
/// derivable geometry (geometry_problem), and that geometry proven against
/// the volume: the volume it describes fits in `device`, and the low byte of
/// FAT[0] in the first FAT it locates is BPB_Media [FATGEN "FAT Data
/// Structure": FAT[0] holds the media byte]. A repair copies a boot sector
/// over its twin only when this holds for the source (design.md: repair
/// never trusts the wrong copy). Reads one byte of `device`; throws only
/// Error(io).
std::optional<std::string> boot_copy_problem(BootSpan sector, const io::BlockDevice& device);

/// Reads sector 0 (and FSInfo, backup boot sector, the first root directory
/// sector or cluster) with every offset checked against the device.
/// Throws Error(not_this_fs) when sector 0 is not a FAT boot sector (no jump
/// instruction, or "EXFAT   "/"NTFS    " OEM names), Error(corrupt) when the
/// device is shorter than one sector.
BootRegion read_boot_region(const io::BlockDevice& device);

/// One BPB field for dump: its spec name, byte offset, width and value.
struct BootField {
    std::string name;          ///< "BPB_BytsPerSec"
    std::size_t offset = 0;    ///< byte offset in the boot sector
    std::size_t width = 0;     ///< bytes
    std::uint64_t number = 0;  ///< value, for numeric fields
    std::string text;          ///< value, for string fields (as stored)
    bool is_text = false;
};
/// Every field of the boot sector in on-disk order, for the shape it has.
std::vector<BootField> boot_fields(const BootSector& bs);

/// What a FAT entry value means [FATGEN "FAT Data Structure"; formats.md §1.5].
enum class EntryKind : std::uint8_t {
    free,     ///< 0
    next,     ///< a link to cluster 2..max_cluster
    bad,      ///< FF7 / FFF7 / 0FFFFFF7
    end,      ///< FF8.. / FFF8.. / 0FFFFFF8.. (end of chain)
    invalid,  ///< 1, a cluster number past the volume, or a reserved value (FF0..FF6)
};

/// A run of consecutive clusters of a chain.
struct ClusterRun {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
};

/// How a chain walk ended.
enum class ChainEnd : std::uint8_t {
    end_of_chain,  ///< an end-of-chain entry (the normal end)
    limit,         ///< the caller's step limit was reached
    free,          ///< a link led into a free cluster (not included)
    bad,           ///< a cluster of the chain is marked bad (included)
    invalid,       ///< an entry holds an invalid value (the cluster holding it is included)
    loop,          ///< the chain returns to a cluster it already visited
};

struct Chain {
    std::vector<ClusterRun> runs;
    std::uint64_t clusters = 0;  ///< total clusters in runs
    ChainEnd end = ChainEnd::end_of_chain;
    std::uint32_t stop_value = 0;  ///< the entry value that ended the walk (for invalid/free)
};

/// A read-only FAT volume over a BlockDevice (partition window or whole image).
/// Keeps a small cache of FAT windows (at most kFatCacheWindows x 64 KiB), so
/// memory does not grow with the volume.
class Volume {
public:
    static constexpr std::size_t kFatCacheWindows = 16;
    static constexpr std::size_t kFatWindowBytes = 65536;

    /// Reads the boot region. Throws Error(not_this_fs) when it is not FAT,
    /// Error(corrupt) naming the BPB field when the geometry is underivable.
    explicit Volume(const io::BlockDevice& device);
    Volume(const io::BlockDevice& device, BootRegion boot);
    ~Volume();
    Volume(const Volume&) = delete;
    Volume& operator=(const Volume&) = delete;

    const io::BlockDevice& device() const noexcept { return device_; }
    const BootRegion& boot() const noexcept { return boot_; }
    const Layout& layout() const noexcept { return *boot_.layout; }
    FatType type() const noexcept { return layout().type; }
    std::uint32_t cluster_bytes() const noexcept { return layout().cluster_bytes(); }
    /// Entries the FAT describes: cluster_count + 2, lowered to what one FAT
    /// copy can hold (drivers clamp the same way, formats.md §1.3).
    std::uint32_t entry_count() const noexcept { return entry_count_; }
    /// Highest valid cluster number (entry_count() - 1).
    std::uint32_t max_cluster() const noexcept { return entry_count_ - 1; }
    bool is_cluster(std::uint64_t n) const noexcept { return n >= 2 && n <= max_cluster(); }
    /// The first cluster of the root directory (FAT32), 0 for the fixed FAT12/16 root.
    std::uint32_t root_cluster() const noexcept {
        return type() == FatType::fat32 ? layout().root_cluster : 0;
    }

    /// Entry n of FAT copy `copy` (0-based). FAT32 values are the low 28 bits.
    /// Throws Error(corrupt) when n >= entry_count() or the entry lies past the
    /// end of the device, Error(io) on read failure.
    std::uint32_t fat_entry(std::uint32_t n, unsigned copy = 0) const;
    /// Decodes entries [first, first + out.size()) of one FAT copy into `out`,
    /// reading the device directly (for streaming passes). Same throws.
    void read_fat_entries(unsigned copy, std::uint32_t first, std::span<std::uint32_t> out) const;
    /// Entries of the first FAT copy that lie inside the device (<= entry_count()).
    std::uint32_t readable_entries() const noexcept;
    /// True when FAT copy `copy` lies entirely inside the device.
    bool fat_copy_readable(unsigned copy) const noexcept;
    EntryKind classify(std::uint32_t value) const noexcept;

    /// Byte offset of cluster n in the device; n must satisfy is_cluster().
    std::uint64_t cluster_offset(std::uint32_t n) const noexcept { return layout().cluster_offset(n); }
    /// Reads whole cluster n. Throws Error(corrupt) when n is not a cluster or
    /// the cluster lies past the end of the device.
    void read_cluster(std::uint32_t n, std::span<std::byte> out) const;

    /// Follows the chain from `start` for at most `max_clusters` clusters (and
    /// never more than the volume has), detecting loops exactly (a set of the
    /// visited clusters; past 65,536 clusters one bit per FAT entry inside the image). An invalid `start`
    /// gives an empty chain ending `invalid`; a free start gives an empty chain ending `free`.
    Chain follow_chain(std::uint32_t start, std::uint64_t max_clusters) const;

    /// Reads a directory's entries: the fixed root region (FAT12/16) when
    /// first_cluster is 0, else the chain, at most kMaxDirEntries entries.
    /// Throws Error(corrupt) naming the cluster when the chain loops or its
    /// first cluster is free or invalid, or a cluster lies past the end of the
    /// device; a chain broken later (free, invalid, bad link) yields the
    /// entries of the clusters before the break.
    ParsedDirectory read_directory(std::uint32_t first_cluster) const;
    /// The raw bytes read_directory parses (same limits and throws).
    std::vector<std::byte> read_directory_bytes(std::uint32_t first_cluster) const;

    /// A synthetic record for the root directory (kind directory, name "/").
    DirRecord root_record() const;
    /// The record for a path inside the volume ("/", "DCIM/a.jpg", "/dcim/A~1.JPG"):
    /// components matched case-insensitively against long or short names, "."
    /// and ".." are not allowed. nullopt when a component does not exist; throws
    /// Error(usage) when a non-final component is a file or the path is
    /// malformed, Error(corrupt) when a directory on the way is unreadable.
    std::optional<DirRecord> lookup(std::string_view path) const;

    /// The first cluster of a record's data (DIR_FstClusHI:LO; the root's
    /// cluster for the root record).
    std::uint32_t first_cluster(const DirRecord& r) const noexcept;
    /// Streams a file's bytes (DIR_FileSize of them) to `sink` one cluster at a
    /// time. Throws Error(corrupt) naming the file's first cluster when the
    /// chain is shorter than the size needs, broken, or leaves the device.
    void read_file(const DirRecord& file, const std::function<void(std::span<const std::byte>)>& sink) const;

private:
    std::span<const std::byte> fat_window(unsigned copy, std::uint64_t index) const;

    const io::BlockDevice& device_;
    BootRegion boot_;
    std::uint32_t entry_count_ = 0;
    struct Cache;
    std::unique_ptr<Cache> cache_;
    mutable std::vector<std::byte> fat_bytes_;  ///< read_fat_entries' buffer, kept between calls
};

}  // namespace fsimg::fat
