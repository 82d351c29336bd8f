// render_table: the human report.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf8_safe.hpp"
#include "fsimg/slack/report.hpp"

namespace fsimg::slack {

namespace {

/// One "  path: reason" line: the path is a name from the tree or the image
/// (any bytes; escaped as ls and fsck print names: a line feed in it would
/// split the line, an ESC reach the terminal), the reason ours but it may
/// quote a name.
std::string path_line(const std::string& path, const std::string& reason) {
    return fmt::format("  {}: {}\n", core::escape_invalid_utf8(core::escape_name(path)),
                       core::escape_invalid_utf8(core::escape_controls(reason)));
}

std::string pad(const std::string& s, std::size_t w, bool right) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

/// The +best cell: the cost over the best for a complete row; what an
/// incomplete one leaves out ("15 files (77.55 GiB) not stored", "short by 3 MiB").
std::string over_best_cell(const Row& row, bool with_bytes = true) {
    if (row.unstorable_files != 0) {
        return with_bytes ? fmt::format("{} file{} ({}) not stored", core::format_count(row.unstorable_files),
                                        row.unstorable_files == 1 ? "" : "s",
                                        core::format_size(row.unstorable_bytes))
                          : fmt::format("{} file{} not stored", core::format_count(row.unstorable_files),
                                        row.unstorable_files == 1 ? "" : "s");
    }
    if (row.short_bytes) return "short by " + core::format_size(*row.short_bytes);
    return row.over_best_bytes ? "+" + core::format_size(row.over_best_bytes) : "0";
}

std::string bucket_label(std::size_t k) {
    if (k == 0) return "empty";
    const std::uint64_t lo = k == 1 ? 1 : std::uint64_t{1} << (k - 1);
    return fmt::format("{} .. < {}", core::format_size(lo),
                       k >= 64 ? std::string("16 EiB") : core::format_size(std::uint64_t{1} << k));
}

}  // namespace

std::span<const std::string_view> table_columns() noexcept {
    static constexpr std::array<std::string_view, 12> names = {"FS",       "cluster",  "data",  "slack",
                                                               "slack%",   "metadata", "total", "+best",
                                                               "overhead", "free",     "fits",  "unstorable"};
    return names;
}

namespace {

std::string lower(std::string_view v) {
    std::string l(v);
    for (char& ch : l)
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    return l;
}

std::optional<std::size_t> column_index(std::string_view name) {
    const std::span<const std::string_view> names = table_columns();
    for (std::size_t i = 0; i < names.size(); ++i)
        if (lower(names[i]) == lower(name) || (names[i] == "+best" && lower(name) == "best")) return i;
    return std::nullopt;
}

}  // namespace

std::vector<std::size_t> table_column_indexes(const std::vector<std::string>& columns) {
    std::vector<std::size_t> shown;
    for (const std::string& c : columns) {
        const auto i = column_index(c);
        if (!i) {
            std::string all;
            for (const std::string_view n : table_columns())
                all += (all.empty() ? "" : ", ") + std::string(n);
            throw Error(ErrorCode::usage, fmt::format("--columns: no column \"{}\" (columns: {})",
                                                      core::escape_controls(c), all));
        }
        if (std::find(shown.begin(), shown.end(), *i) == shown.end()) shown.push_back(*i);
    }
    std::sort(shown.begin(), shown.end());
    return shown;
}

std::string render_table(const Report& r, const TextLayout& layout) {
    const std::span<const std::string_view> names = table_columns();
    // The columns shown, as indexes into table_columns().
    std::vector<std::size_t> shown;
    if (layout.wide) {
        for (std::size_t i = 0; i < names.size(); ++i)
            if (r.volume_bytes || (names[i] != "overhead" && names[i] != "free" && names[i] != "fits"))
                shown.push_back(i);
    } else if (!layout.columns.empty()) {
        shown = table_column_indexes(layout.columns);
    } else {
        for (const std::string_view n :
             r.volume_bytes
                 ? std::vector<std::string_view>{"FS", "cluster", "slack%", "total", "+best", "overhead",
                                                 "fits"}
                 : std::vector<std::string_view>{"FS", "cluster", "slack", "slack%", "total", "+best"})
            shown.push_back(*column_index(n));
    }
    const auto has = [&](std::string_view name) {
        return std::any_of(shown.begin(), shown.end(), [&](std::size_t i) { return names[i] == name; });
    };

    std::string out;
    out += fmt::format("Tree: {}, {} apparent; {}", core::format_counted(r.files, "file", "files"),
                       core::format_size(r.apparent_bytes),
                       core::format_counted(r.directories, "directory", "directories"));
    if (r.symlinks) out += fmt::format("; {} symbolic links", core::format_count(r.symlinks));
    if (r.other) out += fmt::format("; {} devices/FIFOs/sockets skipped", core::format_count(r.other));
    if (r.extra_links) out += fmt::format("; {} extra hard-link names", core::format_count(r.extra_links));
    out += "\n";
    if (r.volume_bytes) out += fmt::format("Volume: {}\n", core::format_size_both(*r.volume_bytes));
    out += "\n";

    const auto cell = [&](const Row& row, std::string_view name) -> std::string {
        if (name == "FS") return std::string(to_string(row.fs));
        if (name == "cluster") return core::format_size(row.cluster_bytes);
        if (name == "data") return core::format_size(row.data_bytes);
        if (name == "slack") return core::format_size(row.slack_bytes);
        if (name == "slack%") return fmt::format("{:.1f}", row.slack_percent);
        if (name == "metadata") return core::format_size(row.metadata_bytes);
        if (name == "total") return core::format_size(row.total_bytes);
        // The bytes a row leaves out only with room for them (the prose says them too).
        if (name == "+best") return over_best_cell(row, layout.wide || !layout.columns.empty());
        if (name == "overhead") return row.overhead_bytes ? core::format_size(*row.overhead_bytes) : "-";
        if (name == "free") return row.free_bytes ? core::format_size(*row.free_bytes) : "-";
        if (name == "fits") return row.fits ? (*row.fits ? "yes" : "NO") : "-";
        return core::format_count(row.unstorable_files);
    };
    std::vector<std::string> head = {""};
    for (const std::size_t i : shown) head.emplace_back(names[i]);
    std::vector<std::vector<std::string>> cells;
    for (const Row& row : r.rows) {
        std::vector<std::string> c = {std::string(row.best ? "*" : "") + (row.recommended ? "R" : "") +
                                      (row.current ? "=" : "")};
        for (const std::size_t i : shown) c.push_back(cell(row, names[i]));
        cells.push_back(std::move(c));
    }
    std::vector<std::size_t> w(head.size());
    for (std::size_t i = 0; i < head.size(); ++i) {
        w[i] = head[i].size();
        for (const auto& c : cells) w[i] = std::max(w[i], c[i].size());
    }
    auto line = [&](const std::vector<std::string>& c) {
        std::string l;
        for (std::size_t i = 0; i < c.size(); ++i) {
            l += pad(c[i], w[i], i >= 2) + (i + 1 < c.size() ? "  " : "");
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out += l + "\n";
    };
    line(head);
    for (const auto& c : cells) line(c);
    // The legend: the markers, then each column shown that needs words.
    std::string legend =
        r.volume_bytes ? "* smallest total + overhead, R recommended" : "* smallest total, R recommended";
    legend += r.current ? ", = the image's own layout." : ".";
    std::vector<std::string> defined;
    if (has("data")) defined.emplace_back("data = cluster-rounded file data");
    if (has("slack") || has("slack%"))
        defined.emplace_back(has("data") ? "slack = data - apparent size"
                                         : "slack = cluster-rounded file data - apparent size");
    if (has("metadata"))
        defined.emplace_back(
            "metadata = directory clusters (FAT/exFAT) or MFT records and index blocks (NTFS) the tree adds");
    if (has("overhead")) defined.emplace_back("overhead = the empty volume's own (FATs or bitmap, MFT)");
    for (std::size_t i = 0; i < defined.size(); ++i) legend += (i == 0 ? " " : "; ") + defined[i];
    if (!defined.empty()) legend += ".";
    if (!layout.wide && shown.size() + (r.volume_bytes ? 0 : 3) < names.size())
        legend += " --wide shows every column.";
    out += "\n" + core::wrap_words(legend, layout.width);

    if (!r.reason.empty()) out += "\n" + core::wrap_words("Recommendation: " + r.reason, layout.width);
    if (!r.defaults.empty()) {
        out += "\nDefaults for this volume size:\n";
        for (const auto& d : r.defaults) {
            std::string cost;
            if (d.row && !r.rows[*d.row].complete) {
                cost = over_best_cell(r.rows[*d.row]);
            } else if (d.row) {
                const Row& row = r.rows[*d.row];
                // The same measure as "over the best": the tree plus the fixed overhead.
                cost = fmt::format("on disk {} (tree {} + overhead {}), {} over the best",
                                   core::format_size(row.total_bytes + row.overhead_bytes.value_or(0)),
                                   core::format_size(row.total_bytes),
                                   core::format_size(row.overhead_bytes.value_or(0)),
                                   core::format_size(row.over_best_bytes));
            }
            const std::string lead = fmt::format("  {:<10} {:<5} {:>8}  ", d.tool, to_string(d.fs),
                                                 d.cluster_bytes ? core::format_size(d.cluster_bytes) : "-");
            out += core::wrap_words(lead + cost + (!cost.empty() && !d.note.empty() ? "; " : "") + d.note,
                                    layout.width, lead.size());
        }
    }
    for (const auto& s : r.filesystems) {
        if (s.unstorable_entries == 0 && s.limit_violations.empty() && s.skipped_symlinks == 0) continue;
        out += fmt::format("\n{}:", to_string(s.fs));
        if (s.unstorable_entries) {
            out += fmt::format(
                " {} ({}) cannot be stored, {}", core::format_counted(s.unstorable_files, "file", "files"),
                core::format_size(s.unstorable_bytes),
                core::format_counted(s.unstorable_entries, "offending name", "offending names"));
        }
        if (s.skipped_symlinks)
            out += fmt::format(" {} skipped",
                               core::format_counted(s.skipped_symlinks, "symbolic link", "symbolic links"));
        out += "\n";
        for (const auto& p : s.unstorable) out += path_line(p.path, p.reason);
        if (s.unstorable.size() < s.unstorable_entries) {
            out += fmt::format("  ... and {} more\n",
                               core::format_count(s.unstorable_entries - s.unstorable.size()));
        }
        for (const auto& p : s.limit_violations) out += path_line(p.path, p.reason);
    }
    if (r.unreadable_count) {
        out += fmt::format("\n{} directories could not be read:\n", core::format_count(r.unreadable_count));
        for (const auto& p : r.unreadable) out += path_line(p.path, p.reason);
    }
    if (!r.histogram.empty()) {
        out += "\nFile sizes:\n";
        for (std::size_t k = 0; k < r.histogram.size(); ++k) {
            if (r.histogram[k].first == 0) continue;
            out += fmt::format(
                "  {:>22}  {:>12} {:<5}  {:>10}\n", bucket_label(k), core::format_count(r.histogram[k].first),
                r.histogram[k].first == 1 ? "file" : "files", core::format_size(r.histogram[k].second));
        }
    }
    if (r.recommended && !r.rows[*r.recommended].top.empty()) {
        const Row& row = r.rows[*r.recommended];
        out += fmt::format("\nDirectories with the most slack ({} {}):\n", to_string(row.fs),
                           core::format_size(row.cluster_bytes));
        for (const auto& d : row.top) {
            out += fmt::format("  {:>10}  {:>8} {:<5}  {}\n", core::format_size(d.slack_bytes),
                               core::format_count(d.files), d.files == 1 ? "file" : "files", d.path);
        }
    }
    return out;
}

}  // namespace fsimg::slack
