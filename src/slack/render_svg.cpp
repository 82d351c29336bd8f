// render_svg: total and slack vs cluster size, log-log, one colour per
// filesystem; the best and recommended configurations marked.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fsimg/core/units.hpp"
#include "fsimg/slack/report.hpp"

namespace fsimg::slack {

namespace {

const char* colour(Fs fs) {
    switch (fs) {
        case Fs::fat32:
            return "#1f77b4";
        case Fs::exfat:
            return "#d62728";
        case Fs::ntfs:
            return "#2ca02c";
    }
    return "#000";
}

std::string esc(const std::string& s) {
    std::string o;
    for (const char c : s) {
        if (c == '&')
            o += "&amp;";
        else if (c == '<')
            o += "&lt;";
        else if (c == '>')
            o += "&gt;";
        else
            o += c;
    }
    return o;
}

}  // namespace

std::string render_svg(const Report& r) {
    constexpr double W = 960, H = 600, L = 100, R = 200, T = 70, B = 70;
    const double pw = W - L - R, ph = H - T - B;
    unsigned xmin = 25, xmax = 9;
    double ymax = 1, ymin = 0;
    for (const Row& row : r.rows) {
        const unsigned s = core::log2_floor(row.cluster_bytes);
        xmin = std::min(xmin, s);
        xmax = std::max(xmax, s);
        ymax = std::max(ymax, double(row.total_bytes));
    }
    ymax = std::max(ymax, double(r.apparent_bytes));
    // y from a power of two at or below the smallest positive value shown.
    double lo = ymax;
    for (const Row& row : r.rows) {
        if (row.total_bytes > 0) lo = std::min(lo, double(row.total_bytes));
        if (row.slack_bytes > 0) lo = std::min(lo, double(row.slack_bytes));
    }
    if (r.apparent_bytes > 0) lo = std::min(lo, double(r.apparent_bytes));
    const int ylo = int(std::floor(std::log2(std::max(lo, 1.0))));
    const int yhi = std::max(ylo + 1, int(std::ceil(std::log2(ymax))));
    ymin = ylo;
    if (xmax <= xmin) xmax = xmin + 1;
    auto X = [&](double shift) { return L + (shift - xmin) / double(xmax - xmin) * pw; };
    auto Y = [&](double bytes) {
        const double v = bytes <= 0 ? ymin : std::max(ymin, std::log2(bytes));
        return T + ph - (v - ymin) / double(yhi - ymin) * ph;
    };

    std::string s = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"13\">\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        W, H);
    s += fmt::format(
        "<text x=\"{}\" y=\"28\" font-size=\"18\" font-weight=\"bold\">Space used by the tree vs "
        "cluster size</text>\n",
        L);
    s += fmt::format("<text x=\"{}\" y=\"50\" fill=\"#444\">{}, {} apparent, {}{}</text>\n", L,
                     core::format_counted(r.files, "file", "files"), esc(core::format_size(r.apparent_bytes)),
                     core::format_counted(r.directories, "directory", "directories"),
                     r.volume_bytes ? "; volume " + esc(core::format_size(*r.volume_bytes)) : "");
    // Grid and axes.
    for (unsigned x = xmin; x <= xmax; ++x) {
        const double px = X(x);
        s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n",
                         px, T, T + ph);
        if ((xmax - xmin) > 10 && (x - xmin) % 2 != 0) continue;  // every other label when dense
        s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px, T + ph + 20,
                         esc(core::format_size(std::uint64_t{1} << x)));
    }
    const int ystep = (yhi - ylo) > 12 ? 2 : 1;
    for (int y = ylo; y <= yhi; y += ystep) {
        const double py = Y(std::ldexp(1.0, y));
        s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n",
                         L, py, L + pw);
        s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", L - 8, py + 4,
                         esc(core::format_size(std::uint64_t{1} << std::clamp(y, 0, 63))));
    }
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
                     L, T, pw, ph);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">cluster size (log scale)</text>\n",
                     L + pw / 2, H - 22);
    s += fmt::format(
        "<text transform=\"translate(24 {:.1f}) rotate(-90)\" text-anchor=\"middle\">bytes on disk "
        "(log scale)</text>\n",
        T + ph / 2);
    if (r.apparent_bytes > 0) {
        const double py = Y(double(r.apparent_bytes));
        s += fmt::format(
            "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#777\" "
            "stroke-dasharray=\"2 4\"/>\n",
            L, py, L + pw);
        s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\">apparent size</text>\n", L + 6, py - 5);
    }
    // Series.
    std::vector<Fs> seen;
    for (const Row& row : r.rows) {
        if (std::find(seen.begin(), seen.end(), row.fs) == seen.end()) seen.push_back(row.fs);
    }
    for (const Fs& fs : seen) {
        std::string total, slack;
        for (const Row& row : r.rows) {
            if (row.fs != fs) continue;
            const double px = X(core::log2_floor(row.cluster_bytes));
            total += fmt::format("{}{:.1f},{:.1f}", total.empty() ? "" : " ", px, Y(double(row.total_bytes)));
            slack += fmt::format("{}{:.1f},{:.1f}", slack.empty() ? "" : " ", px, Y(double(row.slack_bytes)));
        }
        // Lines drawn first are wider, so coinciding series stay visible.
        const double width = 5.0 - 1.5 * double(&fs - seen.data());
        s += fmt::format(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" "
            "stroke-opacity=\"0.85\"/>\n",
            total, colour(fs), width);
        s += fmt::format(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"6 4\"/>\n",
            slack, colour(fs));
        for (const Row& row : r.rows) {
            if (row.fs != fs) continue;
            s += fmt::format(
                "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} {}: total {}, "
                "slack {}</title></circle>\n",
                X(core::log2_floor(row.cluster_bytes)), Y(double(row.total_bytes)), colour(fs), to_string(fs),
                esc(core::format_size(row.cluster_bytes)), esc(core::format_size(row.total_bytes)),
                esc(core::format_size(row.slack_bytes)));
        }
    }
    auto mark = [&](const Row& row, const char* label, double dy) {
        const double px = X(core::log2_floor(row.cluster_bytes)), py = Y(double(row.total_bytes));
        s += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"8\" fill=\"none\" stroke=\"black\" "
            "stroke-width=\"2\"/>\n",
            px, py);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\">{} ({} {}, {})</text>\n",
                         px + 10, py + dy, label, to_string(row.fs),
                         esc(core::format_size(row.cluster_bytes)), esc(core::format_size(row.total_bytes)));
    };
    if (r.best) mark(r.rows[*r.best], "best", -12);
    if (r.recommended && r.recommended != r.best) mark(r.rows[*r.recommended], "recommended", 22);
    // Legend.
    double ly = T + 10;
    const double lx = L + pw + 20;
    for (const Fs fs : seen) {
        s += fmt::format(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2.5\"/>"
            "<text x=\"{4}\" y=\"{5}\">{6} total</text>\n",
            lx, ly, lx + 30, colour(fs), lx + 38, ly + 4, to_string(fs));
        ly += 22;
        s += fmt::format(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"6 4\"/><text x=\"{4}\" y=\"{5}\">{6} slack</text>\n",
            lx, ly, lx + 30, colour(fs), lx + 38, ly + 4, to_string(fs));
        ly += 30;
    }
    s +=
        fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#444\" font-size=\"11\">total = data + metadata</text>\n",
                    lx, ly + 6);
    s +=
        fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#444\" font-size=\"11\">slack = data - apparent</text>\n",
                    lx, ly + 22);
    s += "</svg>\n";
    return s;
}

}  // namespace fsimg::slack
