// The slack report: per filesystem x cluster size totals from a Tally, the
// fixed overhead of a volume of a given size (from each filesystem's layout
// code: fat::plan_layout, exfat::plan_layout; ntfs::plan_layout),
// the recommendation, and the defaults of Windows and the Linux mkfs tools.
// Pure; rendering (table, JSON, CSV, SVG) returns strings, nothing is printed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/slack/analyzer.hpp"

namespace fsimg::slack {

/// A filesystem and cluster size: the layout an image SOURCE has now.
struct CurrentLayout {
    Fs fs = Fs::fat32;
    std::uint32_t cluster_bytes = 0;
};

/// A device that must read the volume (--for) and the filesystems it reads
/// (fs_bit() mask), with where the rule comes from (docs/slack.md, "--for").
struct DeviceRule {
    std::string_view name;     ///< "camera", "sdxc", ...
    std::uint8_t filesystems;  ///< fs_bit()s it reads and writes
    std::string_view source;   ///< the source, "reported:" when not from a specification or vendor manual
};

/// The rules --for knows, in the order docs/slack.md lists them.
std::span<const DeviceRule> device_rules() noexcept;

/// Parses --for's names (case-insensitive) and returns the filesystems every
/// one of them reads (the intersection). Throws Error(usage) naming an
/// unknown device and the known ones, or when no filesystem is left.
std::uint8_t filesystems_for(const std::vector<std::string>& devices);

struct ReportOptions {
    std::vector<Fs> filesystems{Fs::fat32, Fs::exfat, Fs::ntfs};
    /// Cluster sizes to show; empty = every size each filesystem allows (for
    /// the volume size when given).
    std::vector<std::uint32_t> cluster_sizes;
    std::optional<std::uint64_t> volume_bytes;  ///< --volume-size
    double tolerance = 0.01;                    ///< --tolerance, a fraction
    std::size_t top = 0;
    /// The image SOURCE's own layout (Analysis::image_layout()): its row is marked
    /// current and the recommendation says what reformatting frees.
    std::optional<CurrentLayout> current;
    /// Set when the image's filesystem has no row here (FAT12/16): named in
    /// the recommendation ("FAT16 with 4 KiB clusters").
    std::string current_other;
    /// --for: the devices named (for the recommendation's wording); empty:
    /// none named, and the recommendation says it assumes every filesystem is read.
    std::vector<std::string> devices;
};

/// One filesystem x cluster size. Byte counts are whole clusters.
struct Row {
    Fs fs = Fs::fat32;
    std::uint32_t cluster_bytes = 0;
    std::uint64_t data_clusters = 0;      ///< file data
    std::uint64_t metadata_clusters = 0;  ///< directories / INDX blocks, and NTFS $MFT growth
    std::uint64_t mft_clusters = 0;       ///< NTFS: $MFT growth (part of metadata_clusters)
    std::uint64_t data_bytes = 0;
    std::uint64_t slack_bytes = 0;  ///< data_bytes - apparent bytes of the files in clusters
    double slack_percent = 0;       ///< of the stored files' apparent bytes
    std::uint64_t metadata_bytes = 0;
    std::uint64_t total_bytes = 0;  ///< data + metadata: what the tree adds to an empty volume
    std::uint64_t over_best_bytes =
        0;  ///< cost - the best row's cost (cost: total, + overhead when sized); 0 unless complete
    std::uint64_t unstorable_files =
        0;  ///< files the filesystem cannot store (FAT32: over 4 GiB - 1, path limits...)
    std::uint64_t unstorable_bytes = 0;  ///< their apparent bytes
    /// Stores every file and, when sized, fits the volume: only such rows can
    /// be best or recommended.
    bool complete = true;
    bool current = false;  ///< the image SOURCE's own filesystem and cluster size
    // With --volume-size:
    std::optional<std::uint64_t> overhead_bytes;  ///< the empty volume's fixed overhead
    std::optional<std::uint64_t> free_bytes;      ///< what an empty volume offers the tree
    std::optional<bool> fits;
    std::optional<std::uint64_t>
        short_bytes;  ///< when it does not fit: clusters needed beyond the free ones, in bytes
    bool best = false;
    bool recommended = false;
    std::vector<TopDirectory> top;  ///< --top: largest slack first
};

/// A default choice of Windows or a mkfs tool for the volume size.
struct DefaultChoice {
    std::string tool;  ///< "Windows", "mkfs.fat", "mkfs.exfat", "mkntfs"
    Fs fs = Fs::fat32;
    std::uint32_t cluster_bytes = 0;
    std::optional<std::size_t> row;  ///< index in Report::rows when that size was computed
    std::string note;                ///< "Windows does not format FAT32 over 32 GiB"
};

struct FsSummary {
    Fs fs = Fs::fat32;
    std::uint64_t files = 0, directories = 0, apparent_bytes = 0;
    std::uint64_t resident_files = 0, resident_bytes = 0, records = 0, entry_bytes = 0;
    std::uint64_t unstorable_files = 0, unstorable_bytes = 0, unstorable_entries = 0, skipped_symlinks = 0;
    std::vector<Problem> unstorable, limit_violations;
};

struct Report {
    std::uint64_t files = 0, directories = 0, symlinks = 0, other = 0, apparent_bytes = 0;
    std::uint64_t extra_links = 0, largest_file = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> histogram;  ///< [k] = files, bytes; trimmed
    std::uint64_t unreadable_count = 0;
    std::vector<Problem> unreadable;
    std::vector<FsSummary> filesystems;
    std::optional<std::uint64_t> volume_bytes;
    double tolerance = 0.01;
    std::vector<Row> rows;                         ///< by filesystem (as requested), then cluster size
    std::optional<std::size_t> best, recommended;  ///< among complete rows only; nullopt when none is
    std::optional<std::size_t> current;            ///< the image's own row (ReportOptions::current)
    /// Slack of the current row minus slack of the recommended one (negative:
    /// the recommendation has more slack); set with current and recommended.
    std::optional<std::int64_t> freed_bytes;
    std::string reason;  ///< the recommendation in one sentence
    std::vector<DefaultChoice> defaults;
};

/// The cluster sizes `fs` allows and fsimg mkfs writes, for a volume size
/// when given (those its layout code accepts); ascending. NTFS stops at
/// 64 KiB (ntfs::kClassicMaxClusterBytes: mkfs refuses larger clusters,
/// ntfs/layout.cpp), though Windows 10 1709+ formats up to 2 MiB.
std::vector<std::uint32_t> allowed_cluster_sizes(Fs fs, std::optional<std::uint64_t> volume_bytes);

/// Checks requested cluster sizes against every requested filesystem; throws
/// Error(usage) naming the filesystem and the sizes it allows.
void validate_cluster_sizes(const ReportOptions& options);

/// Builds the report. Only complete rows (every file stored, and the tree
/// fits when sized) are candidates: the best row has the smallest cost among
/// them (its total, plus the empty volume's fixed overhead when the volume
/// size is given); the recommended row is the complete one with the largest
/// cluster size whose cost is within tolerance of the best's. No row is
/// best or recommended when none is complete. With options.current, that
/// row is marked and freed_bytes set. Throws Error(usage) as
/// validate_cluster_sizes does.
Report build_report(const Tally& tally, const ReportOptions& options);

/// Human table (fixed-width, units via core::format_size, the best row
/// marked '*', the recommended one 'R', the image's own '='; a row that
/// leaves files out shows "N files (B) not stored" for +best, one that does
/// not fit "short by B").
/// How render_table lays the text report out.
struct TextLayout {
    /// The width prose lines wrap at (at spaces; a word longer than the line
    /// stays whole) and the table's default columns aim to fit: the
    /// terminal's columns (the CLI: COLUMNS, else the terminal, else 80).
    std::size_t width = 80;
    /// Every column of table_columns() (--wide).
    bool wide = false;
    /// The columns to show, by table_columns() name, in table order
    /// (--columns); empty: those that decide (FS, cluster, slack%, total,
    /// +best and, with a volume size, overhead and fits; without one, slack
    /// instead of the volume's columns).
    std::vector<std::string> columns;
};
/// The table's column names, in the order the table shows them: FS,
/// cluster, data, slack, slack%, metadata, total, +best, overhead, free,
/// fits, unstorable.
std::span<const std::string_view> table_columns() noexcept;
/// `columns` (TextLayout::columns) as indexes into table_columns(), in table
/// order, each once; a name matches in any case, "best" names +best. Throws
/// Error(usage) naming a column table_columns() does not hold, and listing
/// them.
std::vector<std::size_t> table_column_indexes(const std::vector<std::string>& columns);
/// The human report: the tree and volume lines, the table (a marker column,
/// then the columns `layout` selects; overhead, free and fits show "-"
/// without a volume size), the legend of the columns shown, the
/// recommendation and the defaults (wrapped at layout.width), the
/// unstorable names, the size histogram and the directories with the most
/// slack. Throws Error(usage) for a column name table_columns() does not
/// hold.
std::string render_table(const Report& report, const TextLayout& layout = {});
/// JSON, schema_version 1 (docs/json.md).
std::string render_json(const Report& report);
/// CSV: a header line, then one line per row.
std::string render_csv(const Report& report);
/// SVG chart: total and slack vs cluster size (log x and y), one colour per
/// filesystem, best and recommended points marked.
std::string render_svg(const Report& report);

}  // namespace fsimg::slack
