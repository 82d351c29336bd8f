// The slack analyzer's single pass: every file and directory of a tree is
// charged, once, to every filesystem x cluster size (a few integer operations
// per configuration), using each filesystem's own cost functions:
// fat/cost.hpp (the functions FAT populate allocates with), exfat/cost.hpp,
// ntfs/cost.hpp. Pure: no I/O. Sources (slack/sources.hpp) feed it one
// directory at a time; memory is proportional to the directories in flight.
//
// What "cost" means (formats.md §5): the clusters a tree adds to a freshly
// formatted empty volume. The FAT32 and exFAT roots' first cluster and
// NTFS's initial $MFT and root INDX block belong to the empty volume
// (fixed overhead, slack/report.hpp), not to the tree.
//
// Policies (docs/slack.md):
//  - a name a filesystem refuses, a file too large for it, a FAT path too deep
//    or too long (fat/populate.hpp limits), or a name that collides with an
//    earlier one (case-insensitively on FAT and exFAT; the first in the
//    source's order wins) makes the entry "unstorable" there; everything
//    below a refused directory is unstorable too and costs nothing;
//  - hard links: FAT and exFAT store every name as a separate file (data
//    charged per name); NTFS charges one MFT record and the data once, and an
//    index entry per name;
//  - symbolic links are never followed: FAT and exFAT skip them (as mkfs
//    --from does by default); NTFS (ntfs-3g) stores them as reparse points:
//    one MFT record and an index entry, data resident;
//  - devices, FIFOs and sockets are skipped everywhere (counted).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "fsimg/ntfs/cost.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::slack {

enum class Fs : std::uint8_t { fat32, exfat, ntfs };
inline constexpr std::size_t kFsCount = 3;
/// "FAT32", "exFAT", "NTFS".
std::string_view to_string(Fs fs) noexcept;
/// "fat32" (or "fat"), "exfat", "ntfs", case-insensitive; nullopt otherwise.
std::optional<Fs> parse_fs(std::string_view text) noexcept;
constexpr std::uint8_t fs_bit(Fs fs) noexcept { return std::uint8_t(1u << unsigned(fs)); }

/// Cluster sizes are powers of two 2^9 (512 B) .. 2^25 (32 MiB); per-config
/// arrays are indexed by shift - kMinShift.
inline constexpr unsigned kMinShift = 9;
inline constexpr unsigned kMaxShift = 25;
inline constexpr std::size_t kShiftCount = kMaxShift - kMinShift + 1;

/// The cluster sizes a filesystem allows (as log2 bytes): FAT32 512 B..64 KiB
/// (fat::kMaxClusterBytes), exFAT 512 B..32 MiB, NTFS 512 B..2 MiB.
struct ShiftRange {
    unsigned min_shift = kMinShift;
    unsigned max_shift = kMaxShift;
};
ShiftRange cluster_range(Fs fs) noexcept;

enum class EntryKind : std::uint8_t { file, directory, symlink, other };

/// One offender: an image-style path ("/a/b.txt") and why.
struct Problem {
    std::string path;
    std::string reason;
};

/// One directory and the slack of the files directly in it, for --top.
struct TopDirectory {
    std::string path;
    std::uint64_t slack_bytes = 0;
    std::uint64_t files = 0;
};

/// Everything one filesystem accumulates. Cluster counts per shift index.
struct FsTally {
    std::array<std::uint64_t, kShiftCount> data_clusters{};  ///< file data (non-resident on NTFS)
    std::array<std::uint64_t, kShiftCount>
        dir_clusters{};                ///< FAT/exFAT directory clusters, NTFS INDX clusters
    std::uint64_t files = 0;           ///< stored files (names; NTFS: hard-linked files once)
    std::uint64_t directories = 0;     ///< stored directories, the root excluded
    std::uint64_t names = 0;           ///< directory entries written (files, directories, NTFS symlinks)
    std::uint64_t apparent_bytes = 0;  ///< sizes of the stored files (NTFS: hard links once)
    std::uint64_t resident_files = 0;  ///< NTFS: files whose data stays in the MFT record
    std::uint64_t resident_bytes = 0;
    /// NTFS: the sizes of the files stored sparse (holes take no cluster:
    /// ntfs::sparse_data_vcns), and per cluster size the bytes of those files
    /// that lie in their allocated clusters (at most the clusters' bytes), so
    /// that slack counts only what clusters hold.
    std::uint64_t sparse_bytes = 0;
    std::array<std::uint64_t, kShiftCount> sparse_stored{};
    std::uint64_t records = 0;      ///< NTFS: MFT records the tree adds
    std::uint64_t entry_bytes = 0;  ///< directory entry bytes (FAT entries, exFAT sets, NTFS index entries)
    std::uint64_t unstorable_files = 0;  ///< files not stored (refused, or below a refused directory)
    std::uint64_t unstorable_bytes = 0;
    std::uint64_t unstorable_entries = 0;  ///< offenders (each listed in unstorable, capped)
    std::uint64_t skipped_symlinks = 0;
    std::vector<Problem> unstorable;        ///< the first offenders by path (at most max_examples)
    std::vector<Problem> limit_violations;  ///< directories over the filesystem's entry/size limit
    std::array<std::vector<TopDirectory>, kShiftCount> top;  ///< --top: min-heaps by slack
};

/// The whole pass. merge() combines per-thread tallies; the result does not
/// depend on thread scheduling (example lists keep the smallest paths).
struct Tally {
    std::array<FsTally, kFsCount> fs;
    std::uint64_t files = 0;        ///< regular file names seen
    std::uint64_t directories = 0;  ///< directories seen, the root excluded
    std::uint64_t symlinks = 0;
    std::uint64_t other = 0;           ///< devices, FIFOs, sockets (skipped)
    std::uint64_t apparent_bytes = 0;  ///< sum of file sizes, per name
    std::uint64_t extra_links = 0;     ///< names of hard-linked files beyond the first
    std::uint64_t largest_file = 0;
    /// File sizes: [0] empty files, [k] sizes in [2^(k-1), 2^k).
    std::array<std::uint64_t, 65> histogram_files{};
    std::array<std::uint64_t, 65> histogram_bytes{};
    std::uint64_t unreadable_count = 0;
    std::vector<Problem> unreadable;  ///< directories that could not be listed (capped)

    void merge(Tally&& other, std::size_t max_examples, std::size_t top);
};

struct AnalyzerOptions {
    std::uint8_t fs_mask = 0x7;     ///< fs_bit() of each filesystem to compute
    std::size_t top = 0;            ///< --top N: keep the N directories with the most slack
    std::size_t max_examples = 10;  ///< offenders kept per list
};

/// A directory being charged: its path, depth (root 0), and the filesystems
/// on which it is not stored (refused itself or below a refused directory).
struct DirContext {
    std::string path = "/";  ///< "/" or "/a/b"
    std::uint32_t depth = 0;
    std::size_t path_bytes = 0;  ///< bytes of "/a/b" as fat/populate counts them (root 0)
    std::size_t name_units = 0;  ///< UTF-16 units of the directory's own name (NTFS index root room)
    std::size_t dos_units = 0;   ///< UTF-16 units of its NTFS DOS name (0: none)
    std::uint8_t excluded = 0;   ///< fs_bit()s
    bool is_root() const noexcept { return depth == 0; }
    /// The context of a child directory `name` with exclusion mask
    /// `excluded` and NTFS DOS name `dos_name` (DirAccumulator::ntfs_dos_names).
    DirContext child(std::string_view name, std::uint8_t child_excluded,
                     std::u16string_view dos_name = {}) const;
};

/// One entry of a directory listing, for DirAccumulator::ntfs_dos_names.
struct ListedEntry {
    std::string_view name;
    EntryKind kind = EntryKind::file;
    bool linked = false;  ///< a file with more than one host link
};

/// Charges one directory: add() every child (in the source's order: sorted
/// for host trees and images, listing order for --from-list), then finish().
class DirAccumulator {
public:
    DirAccumulator(const AnalyzerOptions& options, DirContext context);
    /// Charges a child. `first_link` is false for the second and later names
    /// of a hard-linked file. Returns the filesystems on which the child is
    /// not stored (for a directory: pass it to DirContext::child).
    /// `linked`: the file has more than one host link (st_nlink > 1): NTFS
    /// populate keeps such a file's data out of the record (unless empty).
    /// `dos_name`: the child's NTFS DOS name from ntfs_dos_names over the
    /// whole listing (nullopt: the name is planned alone, for listings that
    /// arrive one line at a time; exact unless a sibling differs only in
    /// case or five siblings share a basis shorter than six characters).
    /// `data`: a file with holes (source::TreeNode::has_holes): its data
    /// segments, which NTFS stores sparse (ntfs::sparse_data_vcns: only the
    /// compression units holding data get clusters); nullptr for a file
    /// without holes. FAT and exFAT allocate every cluster.
    std::uint8_t add(Tally& tally, std::string_view name, EntryKind kind, std::uint64_t size,
                     bool first_link = true, bool linked = false,
                     std::optional<std::u16string_view> dos_name = std::nullopt,
                     const std::vector<source::Segment>* data = nullptr);
    /// The DOS names NTFS populate gives the entries of one directory
    /// listing, in the listing's (sorted) order: ntfs::plan_directory_names
    /// over the names populate stores (valid UTF-8, at most 255 UTF-16 units,
    /// files and directories; symbolic links are skipped as populate's
    /// default), each linked file's name POSIX, the root's system files
    /// reserved. One per entry; empty for none.
    static std::vector<std::u16string> ntfs_dos_names(std::span<const ListedEntry> listing, bool root);
    /// Charges the directory's own clusters (and offers it to --top).
    void finish(Tally& tally);
    const DirContext& context() const noexcept { return ctx_; }

private:
    void unstorable(Tally& t, Fs fs, std::string_view name, std::string reason);

    const AnalyzerOptions* opt_;
    DirContext ctx_;
    std::array<std::uint64_t, kFsCount> entries_{};  ///< FAT/exFAT: 32-byte entries; NTFS: index bytes
    std::array<std::unordered_set<std::u16string>, kFsCount>
        case_keys_;  ///< names seen, under each rules.case_key
    /// NTFS: the names' index entries, sorted at finish() in collation order
    /// for the directory's $I30 B-tree (ntfs::index_blocks).
    std::vector<std::pair<std::u16string, std::uint32_t>> ntfs_entries_;
    std::array<std::array<std::uint64_t, kShiftCount>, kFsCount> slack_{};
    std::uint64_t files_ = 0;
};

/// Adds a problem to a capped list, keeping the smallest paths.
void add_example(std::vector<Problem>& list, Problem p, std::size_t max_examples);

}  // namespace fsimg::slack
