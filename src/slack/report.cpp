// build_report: rows, fixed overhead from the layout code, recommendation,
// defaults; render_table.
#include "fsimg/slack/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <variant>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/ntfs/cost.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"

namespace fsimg::slack {

namespace {

/// An empty volume of the size: its fixed overhead and the clusters it offers.
struct EmptyVolume {
    std::uint64_t overhead_bytes = 0;
    std::uint64_t free_clusters = 0;
};

std::optional<EmptyVolume> empty_volume(Fs fs, std::uint64_t volume_bytes, std::uint32_t c) {
    if (fs == Fs::fat32) {
        fat::LayoutRequest req;
        req.volume_bytes = volume_bytes;
        req.cluster_bytes = c;
        req.type = fat::FatType::fat32;
        const auto planned = fat::plan_layout(req);
        const auto* l = std::get_if<fat::Layout>(&planned);
        if (l == nullptr || l->cluster_count < 1) return std::nullopt;
        const std::uint64_t free = l->cluster_count - 1;  // the root's first cluster
        return EmptyVolume{volume_bytes - free * c, free};
    }
    if (fs == Fs::exfat) {
        exfat::LayoutRequest req;
        req.volume_bytes = volume_bytes;
        req.cluster_bytes = c;
        const auto planned = exfat::plan_layout(req);
        const auto* l = std::get_if<exfat::Layout>(&planned);
        if (l == nullptr || l->cluster_count < l->used_clusters()) return std::nullopt;
        const std::uint64_t free = l->cluster_count - l->used_clusters();
        return EmptyVolume{volume_bytes - free * c, free};
    }
    // NTFS clusters above 64 KiB are never asked for: mkfs does not write them (allowed_cluster_sizes).
    fsimg::ntfs::LayoutRequest req;
    req.volume_bytes = volume_bytes;
    req.cluster_bytes = c;
    const auto planned = fsimg::ntfs::plan_layout(req, fsimg::ntfs::secure_sds_bytes());
    const auto* l = std::get_if<fsimg::ntfs::Layout>(&planned);
    if (l == nullptr || l->used_clusters() >= l->cluster_count) return std::nullopt;
    const std::uint64_t free = l->cluster_count - l->used_clusters();
    return EmptyVolume{volume_bytes - free * c, free};
}

/// " FAT32 leaves 15 files (77.55 GiB) out." for each filesystem whose rows
/// are not complete because of files they cannot store; empty when none.
std::string left_out_note(const std::vector<Row>& rows) {
    std::string out;
    std::optional<Fs> last;
    for (const Row& row : rows) {
        if (row.unstorable_files == 0 || row.fs == last) continue;
        last = row.fs;
        out += fmt::format(" {} leaves {} file{} ({}) out.", to_string(row.fs),
                           core::format_count(row.unstorable_files), row.unstorable_files == 1 ? "" : "s",
                           core::format_size(row.unstorable_bytes));
    }
    return out;
}

/// The reason when no row stores every file (and fits).
std::string no_complete_row(const std::vector<Row>& rows, bool sized) {
    std::string out = sized ? "No choice stores every file and fits the volume, so none is recommended."
                            : "No choice stores every file, so none is recommended.";
    return out + left_out_note(rows);
}

/// Appends what reformatting the image SOURCE as the recommendation frees
/// (slack of its current row minus slack of the recommended one).
void add_current_reason(Report& r, const ReportOptions& o) {
    if (!o.current) {
        if (!o.current_other.empty())
            r.reason += fmt::format(" The image is {}, which has no row here.", o.current_other);
        return;
    }
    const std::string now = fmt::format("{} with {} clusters", to_string(o.current->fs),
                                        core::format_size(o.current->cluster_bytes));
    if (!r.current) {
        r.reason += fmt::format(" The image is {}, which has no row here.", now);
        return;
    }
    if (!r.recommended) return;
    const Row& cur = r.rows[*r.current];
    const Row& rec = r.rows[*r.recommended];
    r.freed_bytes = static_cast<std::int64_t>(cur.slack_bytes) - static_cast<std::int64_t>(rec.slack_bytes);
    if (*r.current == *r.recommended) {
        r.reason += fmt::format(" The image is already {} (=).", now);
    } else if (*r.freed_bytes >= 0) {
        r.reason +=
            fmt::format(" The image is {} (=): reformatting as {} with {} clusters frees {} of slack.", now,
                        to_string(rec.fs), core::format_size(rec.cluster_bytes),
                        core::format_size(static_cast<std::uint64_t>(*r.freed_bytes)));
    } else {
        r.reason += fmt::format(
            " The image is {} (=): reformatting as {} with {} clusters frees no slack ({} more){}.", now,
            to_string(rec.fs), core::format_size(rec.cluster_bytes),
            core::format_size(static_cast<std::uint64_t>(-*r.freed_bytes)),
            rec.cluster_bytes > cur.cluster_bytes ? " but means fewer allocations" : "");
    }
}

std::string size_list(const std::vector<std::uint32_t>& sizes) {
    std::string s;
    for (const auto c : sizes) s += (s.empty() ? "" : ", ") + core::format_size(c);
    return s;
}

}  // namespace

std::span<const DeviceRule> device_rules() noexcept {
    constexpr std::uint8_t kFat = fs_bit(Fs::fat32), kExfat = fs_bit(Fs::exfat), kNtfs = fs_bit(Fs::ntfs);
    static constexpr std::array<DeviceRule, 10> kRules = {{
        {"camera", kExfat, "as sdxc: a camera's SDXC card slot"},
        {"sdxc", kExfat,
         "reported: SDXC cards (SD 3.0, over 32 GB to 2 TB) use exFAT (card makers' FAQs, e.g. Lexar's)"},
        {"sdhc", kFat, "reported: SDHC cards (SD 2.0, 4 GB to 32 GB) use FAT32 (card makers' FAQs)"},
        {"windows", kFat | kExfat | kNtfs, "Windows reads and writes FAT32, exFAT and NTFS"},
        {"macos", kFat | kExfat, "reported: macOS reads NTFS but does not write it"},
        {"linux", kFat | kExfat | kNtfs, "Linux: vfat, exfat (5.7+) and ntfs3 (5.15+) drivers"},
        {"tv", kFat | kExfat, "reported: TVs, consoles and car players read FAT32 and exFAT, not NTFS"},
        {"console", kFat | kExfat, "as tv"},
        {"car", kFat | kExfat, "as tv"},
        {"uefi", kFat,
         "reported: UEFI firmware reads FAT (FAT32 for the system partition, FAT12/16 on removable media)"},
    }};
    return kRules;
}

std::uint8_t filesystems_for(const std::vector<std::string>& devices) {
    std::uint8_t mask = fs_bit(Fs::fat32) | fs_bit(Fs::exfat) | fs_bit(Fs::ntfs);
    for (const auto& d : devices) {
        std::string lower = d;
        for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        const auto rules = device_rules();
        const auto it =
            std::find_if(rules.begin(), rules.end(), [&](const DeviceRule& r) { return r.name == lower; });
        if (it == rules.end()) {
            std::string known;
            for (const auto& r : rules) known += (known.empty() ? "" : ", ") + std::string(r.name);
            throw Error(ErrorCode::usage, fmt::format("--for {}: unknown device; known: {}", d, known));
        }
        mask &= it->filesystems;
    }
    if (mask == 0) {
        throw Error(
            ErrorCode::usage,
            "--for: no filesystem is read by every device named (docs/slack.md lists what each reads)");
    }
    return mask;
}

std::vector<std::uint32_t> allowed_cluster_sizes(Fs fs, std::optional<std::uint64_t> volume_bytes) {
    std::vector<std::uint32_t> out;
    const ShiftRange r = cluster_range(fs);
    for (unsigned s = r.min_shift; s <= r.max_shift; ++s) {
        const std::uint32_t c = std::uint32_t{1} << s;
        // fsimg mkfs refuses NTFS clusters above 64 KiB (ntfs/layout.cpp): no row offers them.
        if (fs == Fs::ntfs && c > fsimg::ntfs::kClassicMaxClusterBytes) break;
        if (!volume_bytes || empty_volume(fs, *volume_bytes, c)) out.push_back(c);
    }
    return out;
}

void validate_cluster_sizes(const ReportOptions& o) {
    std::vector<std::vector<std::uint32_t>> allowed;
    for (const Fs fs : o.filesystems) {
        allowed.push_back(allowed_cluster_sizes(fs, o.volume_bytes));
        if (allowed.back().empty()) {
            throw Error(ErrorCode::usage, fmt::format("{} cannot be made on a volume of {}", to_string(fs),
                                                      core::format_size_both(*o.volume_bytes)));
        }
    }
    // A size is refused when no requested filesystem allows it (the others skip it).
    for (const auto c : o.cluster_sizes) {
        bool any = false;
        for (const auto& a : allowed) any = any || std::find(a.begin(), a.end(), c) != a.end();
        if (any) continue;
        std::string msg =
            fmt::format("no requested filesystem allows {} clusters{}:", core::format_size(c),
                        o.volume_bytes ? " on a volume of " + core::format_size_both(*o.volume_bytes) : "");
        for (std::size_t i = 0; i < o.filesystems.size(); ++i) {
            msg += fmt::format(" {} allows {}{}", to_string(o.filesystems[i]), size_list(allowed[i]),
                               i + 1 < o.filesystems.size() ? ";" : "");
        }
        throw Error(ErrorCode::usage, msg);
    }
}

Report build_report(const Tally& t, const ReportOptions& o) {
    validate_cluster_sizes(o);
    Report r;
    r.files = t.files;
    r.directories = t.directories;
    r.symlinks = t.symlinks;
    r.other = t.other;
    r.apparent_bytes = t.apparent_bytes;
    r.extra_links = t.extra_links;
    r.largest_file = t.largest_file;
    std::size_t last = 0;
    for (std::size_t k = 0; k < t.histogram_files.size(); ++k) {
        if (t.histogram_files[k] != 0) last = k + 1;
    }
    for (std::size_t k = 0; k < last; ++k)
        r.histogram.emplace_back(t.histogram_files[k], t.histogram_bytes[k]);
    r.unreadable_count = t.unreadable_count;
    r.unreadable = t.unreadable;
    r.volume_bytes = o.volume_bytes;
    r.tolerance = o.tolerance;

    for (const Fs fs : o.filesystems) {
        const FsTally& f = t.fs[std::size_t(fs)];
        FsSummary s{fs,
                    f.files,
                    f.directories,
                    f.apparent_bytes,
                    f.resident_files,
                    f.resident_bytes,
                    f.records,
                    f.entry_bytes,
                    f.unstorable_files,
                    f.unstorable_bytes,
                    f.unstorable_entries,
                    f.skipped_symlinks,
                    f.unstorable,
                    f.limit_violations};
        r.filesystems.push_back(std::move(s));
        // The bytes clusters hold: not resident data, nor the holes of files stored sparse.
        const std::uint64_t dense = f.apparent_bytes - f.resident_bytes - f.sparse_bytes;
        for (const std::uint32_t c : allowed_cluster_sizes(fs, o.volume_bytes)) {
            if (!o.cluster_sizes.empty() &&
                std::find(o.cluster_sizes.begin(), o.cluster_sizes.end(), c) == o.cluster_sizes.end()) {
                continue;
            }
            const std::size_t i = core::log2_floor(c) - kMinShift;
            Row row;
            row.fs = fs;
            row.cluster_bytes = c;
            row.data_clusters = f.data_clusters[i];
            row.mft_clusters = fs == Fs::ntfs ? ntfs::mft_growth_clusters(f.records, c) : 0;
            row.metadata_clusters = f.dir_clusters[i] + row.mft_clusters;
            row.data_bytes = row.data_clusters * c;
            row.slack_bytes = row.data_bytes - (dense + f.sparse_stored[i]);
            row.slack_percent =
                f.apparent_bytes ? 100.0 * double(row.slack_bytes) / double(f.apparent_bytes) : 0;
            row.metadata_bytes = row.metadata_clusters * c;
            row.total_bytes = row.data_bytes + row.metadata_bytes;
            row.unstorable_files = f.unstorable_files;
            row.unstorable_bytes = f.unstorable_bytes;
            if (o.volume_bytes) {
                if (const auto ev = empty_volume(fs, *o.volume_bytes, c)) {
                    row.overhead_bytes = ev->overhead_bytes;
                    row.free_bytes = ev->free_clusters * c;
                    const std::uint64_t needed = row.data_clusters + row.metadata_clusters;
                    row.fits = needed <= ev->free_clusters;
                    if (!*row.fits) row.short_bytes = (needed - ev->free_clusters) * c;
                }
            }
            row.complete = row.unstorable_files == 0 && row.fits.value_or(true);
            row.current = o.current && o.current->fs == fs && o.current->cluster_bytes == c;
            if (row.current) r.current = r.rows.size();
            row.top = f.top[i];
            std::sort(row.top.begin(), row.top.end(), [](const TopDirectory& a, const TopDirectory& b) {
                return a.slack_bytes != b.slack_bytes ? a.slack_bytes > b.slack_bytes : a.path < b.path;
            });
            r.rows.push_back(std::move(row));
        }
    }
    if (r.rows.empty()) return r;

    // Best: among the rows that store every file (and fit, when sized), the
    // smallest cost: the total, plus the empty volume's fixed overhead when
    // the volume size is known (a FAT of 512-byte clusters can cost more than
    // their slack saves). A row that leaves files out is never best: it
    // would look cheap only because it stores less.
    auto cost = [](const Row& row) { return row.total_bytes + row.overhead_bytes.value_or(0); };
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
        if (r.rows[i].complete && (!best || cost(r.rows[i]) < cost(r.rows[*best]))) best = i;
    }
    if (!best) {
        r.reason = no_complete_row(r.rows, o.volume_bytes.has_value());
        add_current_reason(r, o);
    } else {
        r.best = best;
        Row& b = r.rows[*best];
        b.best = true;
        const double limit = double(cost(b)) * (1.0 + o.tolerance);
        std::size_t rec = *best;
        for (std::size_t i = 0; i < r.rows.size(); ++i) {
            const Row& row = r.rows[i];
            if (!row.complete || double(cost(row)) > limit) continue;
            const Row& cur = r.rows[rec];
            if (row.cluster_bytes > cur.cluster_bytes ||
                (row.cluster_bytes == cur.cluster_bytes && cost(row) < cost(cur))) {
                rec = i;
            }
        }
        for (Row& row : r.rows)
            row.over_best_bytes = row.complete ? cost(row) - std::min(cost(row), cost(b)) : 0;
        r.recommended = rec;
        r.rows[rec].recommended = true;
        const Row& rr = r.rows[rec];
        const std::string pct = fmt::format("{:g}%", o.tolerance * 100);
        // With a volume size the cost includes the fixed overhead: say so.
        const auto cost_text = [&](const Row& row) {
            return o.volume_bytes ? fmt::format("{} with the volume's overhead", core::format_size(cost(row)))
                                  : core::format_size(cost(row));
        };
        if (rec == *best) {
            r.reason = fmt::format(
                "{} with {} clusters has the smallest total ({}), and no larger cluster size comes "
                "within {} of it.",
                to_string(b.fs), core::format_size(b.cluster_bytes), cost_text(b), pct);
        } else {
            r.reason = fmt::format(
                "{} with {} clusters costs {}, within {} of the smallest ({} with {} clusters, {}), and "
                "larger clusters mean fewer allocations and a smaller FAT or bitmap.",
                to_string(rr.fs), core::format_size(rr.cluster_bytes), cost_text(rr), pct, to_string(b.fs),
                core::format_size(b.cluster_bytes), core::format_size(cost(b)));
        }
        r.reason += left_out_note(r.rows);
        if (!o.volume_bytes)
            r.reason +=
                " Without --volume-size the volume's own overhead (FAT or bitmap, MFT) and a card's standard "
                "layout are not counted.";
        if (o.devices.empty()) {
            r.reason += " (No --for: assumes the devices read every filesystem shown.)";
        } else {
            std::string names, fss;
            for (const auto& d : o.devices) names += (names.empty() ? "" : ",") + d;
            for (const Fs fs : o.filesystems) fss += (fss.empty() ? "" : ", ") + std::string(to_string(fs));
            r.reason += fmt::format(" (--for {}: {}, what these devices read.)", names, fss);
        }
        add_current_reason(r, o);
    }

    if (o.volume_bytes) {
        const std::uint64_t v = *o.volume_bytes;
        auto add_default = [&](std::string tool, Fs fs, std::optional<std::uint32_t> c, std::string note) {
            if (std::find(o.filesystems.begin(), o.filesystems.end(), fs) == o.filesystems.end()) return;
            DefaultChoice d{std::move(tool), fs, c.value_or(0), std::nullopt, std::move(note)};
            for (std::size_t i = 0; i < r.rows.size(); ++i) {
                if (c && r.rows[i].fs == fs && r.rows[i].cluster_bytes == *c) d.row = i;
            }
            if (c && !d.row && d.note.empty()) {
                d.note = fs == Fs::ntfs && *c > fsimg::ntfs::kClassicMaxClusterBytes
                             ? "fsimg mkfs does not write NTFS clusters above 64 KiB"
                             : "not computed (add it with -c)";
            }
            r.defaults.push_back(std::move(d));
        };
        const auto win_fat = fat::windows_default_cluster_bytes(fat::FatType::fat32, v);
        add_default("Windows", Fs::fat32, win_fat,
                    win_fat ? "" : "Windows does not format FAT32 of this size");
        const auto mf = fat::mkfs_fat_default(v);
        add_default(
            "mkfs.fat", Fs::fat32, mf.cluster_bytes,
            mf.type == fat::FatType::fat32
                ? ""
                : fmt::format("mkfs.fat makes {} at this size; shown: FAT32", fat::to_string(mf.type)));
        add_default("Windows", Fs::exfat, exfat::default_cluster_bytes(v), "");
        add_default("mkfs.exfat", Fs::exfat, exfat::mkfs_exfat_default_cluster_bytes(v), "");
        // --for camera or sdxc: the SD Association's recommended exFAT sizes, as the
        // mkfs.exfat manual quotes them (formats.md §2.11): to 32 GiB 32 KiB, 128 GiB
        // 128 KiB, 512 GiB 256 KiB, 2 TiB 512 KiB.
        const bool sd = std::any_of(o.devices.begin(), o.devices.end(), [](std::string d) {
            for (char& ch : d) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
            return d == "camera" || d == "sdxc";
        });
        if (sd) {
            constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
            const std::uint32_t c = v <= 32 * GiB     ? 32u << 10
                                    : v <= 128 * GiB  ? 128u << 10
                                    : v <= 512 * GiB  ? 256u << 10
                                    : v <= 2048 * GiB ? 512u << 10
                                                      : 0;
            if (c != 0) {
                add_default("SD Assoc.", Fs::exfat, c, "");
            } else {
                add_default("SD Assoc.", Fs::exfat, std::nullopt,
                            "no SD Association recommendation above 2 TiB (SDXC ends at 2 TB)");
            }
        }
        add_default("Windows", Fs::ntfs, fsimg::ntfs::default_cluster_bytes(v), "");
        add_default("mkntfs", Fs::ntfs, ntfs::mkntfs_default_cluster_bytes(v), "");
    }
    return r;
}

}  // namespace fsimg::slack
