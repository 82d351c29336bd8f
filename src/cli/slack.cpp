// fsimg slack: what a tree costs on each filesystem x cluster size.
// Parsing and printing only; the work is in slack/.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/safe_output.hpp"
#include "fsimg/slack/report.hpp"
#include "fsimg/slack/sources.hpp"
#include "fsimg/slack/verify.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

struct SlackArgs {
    std::vector<std::string> sources;
    std::vector<std::string> lists;
    std::vector<std::string> types{"fat32", "exfat", "ntfs"};
    std::vector<std::string> clusters;
    std::vector<std::string> devices;  ///< --for
    std::string volume_size;
    std::string tolerance = "1%";
    std::string chart;
    std::string output;
    std::size_t top = 0;
    unsigned threads = 0;
    bool json = false;
    bool csv = false;
    bool wide = false;
    std::vector<std::string> columns;
    bool verify = false;
};

double parse_tolerance(std::string t) {
    if (!t.empty() && t.back() == '%') t.pop_back();
    try {
        std::size_t pos = 0;
        const double v = std::stod(t, &pos);
        if (pos == t.size() && v >= 0 && v <= 100) return v / 100.0;
    } catch (const std::exception&) {
    }
    throw Error(ErrorCode::usage,
                fmt::format("--tolerance \"{}\": expected a percentage such as 1% or 0.5", t));
}

slack::ReportOptions report_options(const SlackArgs& a) {
    slack::ReportOptions o;
    o.filesystems.clear();
    for (const auto& t : a.types) {
        const auto fs = slack::parse_fs(t);
        if (!fs) throw Error(ErrorCode::usage, fmt::format("-t {}: expected fat32, exfat or ntfs", t));
        if (std::find(o.filesystems.begin(), o.filesystems.end(), *fs) == o.filesystems.end()) {
            o.filesystems.push_back(*fs);
        }
    }
    if (!a.devices.empty()) {
        // --for: only the filesystems every named device reads (docs/slack.md lists each rule's source).
        const std::uint8_t mask = slack::filesystems_for(a.devices);
        std::erase_if(o.filesystems, [&](slack::Fs fs) { return (mask & slack::fs_bit(fs)) == 0; });
        if (o.filesystems.empty()) {
            throw Error(ErrorCode::usage,
                        "-t and --for leave no filesystem: the devices named read none of those");
        }
        o.devices = a.devices;
    }
    for (const auto& c : a.clusters) {
        if (c == "all") continue;
        const std::uint64_t v = core::parse_size(c);
        if (!core::is_power_of_two(v) || v < 512 || v > (32u << 20)) {
            throw Error(ErrorCode::usage,
                        fmt::format("-c {}: a cluster size is a power of two from 512 B to 32 MiB", c));
        }
        o.cluster_sizes.push_back(static_cast<std::uint32_t>(v));
    }
    if (!a.volume_size.empty()) {
        o.volume_bytes = core::parse_size(a.volume_size);
        if (*o.volume_bytes < (1u << 20)) {
            throw Error(ErrorCode::usage, fmt::format("--volume-size {}: at least 1 MiB", a.volume_size));
        }
    }
    o.tolerance = parse_tolerance(a.tolerance);
    o.top = a.top;
    slack::validate_cluster_sizes(o);
    return o;
}

int run(const SlackArgs& a) {
    if (a.sources.empty() && a.lists.empty()) {
        throw Error(ErrorCode::usage,
                    "give a SOURCE (directory or FAT, exFAT or NTFS image) or --from-list FILE");
    }
    if (a.json && a.csv) throw Error(ErrorCode::usage, "--json and --csv exclude each other");
    if ((a.json || a.csv) && (a.wide || !a.columns.empty()))
        throw Error(ErrorCode::usage,
                    "--wide and --columns shape the table; --json and --csv give every field");
    (void)slack::table_column_indexes(a.columns);  // a name it does not know: refused before the walk
    slack::ReportOptions ro = report_options(a);
    // Outputs replace only what holds no filesystem, never an input image,
    // a device or a FIFO (io/safe_output.hpp).
    std::vector<std::filesystem::path> inputs;
    for (const auto& src : a.sources) inputs.emplace_back(io::split_image_spec(src).first);
    for (const auto& l : a.lists) inputs.emplace_back(l);
    if (!a.chart.empty()) io::check_output_path(a.chart, inputs, "--chart");
    if (!a.output.empty()) io::check_output_path(a.output, inputs, "--output");
    if (!a.chart.empty() && !a.output.empty() && (a.chart == a.output || io::same_file(a.chart, a.output)))
        throw Error(ErrorCode::usage, fmt::format("--chart and --output both name {}", a.chart));
    if (a.verify) {
        if (a.sources.size() != 1 || !a.lists.empty() || !std::filesystem::is_directory(a.sources[0])) {
            throw Error(ErrorCode::usage, "--verify needs exactly one directory SOURCE");
        }
    }
    for (const auto& l : a.lists) {
        if (l != "-" && !std::filesystem::is_regular_file(l) && !std::filesystem::is_fifo(l)) {
            throw Error(ErrorCode::usage, fmt::format("--from-list {}: no such file", l));
        }
    }

    slack::SourceOptions so;
    so.analyzer.top = a.top;
    so.threads = a.threads;
    so.analyzer.fs_mask = 0;
    for (const auto fs : ro.filesystems) so.analyzer.fs_mask |= slack::fs_bit(fs);
    // The walk reports files seen so far (a listing: lines read); the progress line counts them.
    const auto progress = begin_progress("reading the tree (files)", 0, core::ProgressUnit::items);
    std::uint64_t reported = 0;
    if (progress) {
        so.progress = [p = progress.get(), &reported](std::uint64_t seen) {
            if (seen > reported) p->advance(seen - reported);
            reported = std::max(reported, seen);
        };
    }
    slack::Analysis analysis(so);
    for (const auto& s : a.sources) {
        struct stat st {};
        if (::stat(s.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            analysis.add_directory(s);
        } else if (const auto base = io::split_image_spec(s).first; ::stat(base.c_str(), &st) != 0) {
            throw Error(ErrorCode::usage, fmt::format("{}: {}", s, std::strerror(errno)));
        } else {
            analysis.add_image(s);
        }
    }
    for (const auto& l : a.lists) {
        if (l == "-") {
            analysis.add_list(std::cin, "stdin");
        } else {
            std::ifstream in(l);
            if (!in)
                throw Error(ErrorCode::usage, fmt::format("--from-list {}: {}", l, std::strerror(errno)));
            analysis.add_list(in, l);
        }
    }
    const slack::Tally tally = analysis.finish();
    // One image as the only source: its own row is marked, and the recommendation says what reformatting
    // frees.
    if (a.sources.size() == 1 && a.lists.empty() && !std::filesystem::is_directory(a.sources[0])) {
        ro.current = analysis.image_layout(ro.current_other);
    }
    if (progress) {
        if (tally.files > reported) progress->advance(tally.files - reported);
        progress->end();
    }
    const slack::Report report = slack::build_report(tally, ro);

    std::vector<slack::VerifyResult> verified;
    if (a.verify) {
        const char* tmp = std::getenv("TMPDIR");
        for (const slack::Fs fs : {slack::Fs::fat32, slack::Fs::exfat, slack::Fs::ntfs}) {
            std::vector<std::uint32_t> sizes;
            std::vector<std::uint64_t> predicted;
            for (const auto& row : report.rows) {
                if (row.fs != fs) continue;
                sizes.push_back(row.cluster_bytes);
                predicted.push_back(row.data_clusters + row.metadata_clusters);
            }
            if (sizes.empty()) continue;
            auto v = (fs == slack::Fs::fat32   ? slack::verify_fat
                      : fs == slack::Fs::exfat ? slack::verify_exfat
                                               : slack::verify_ntfs)(a.sources[0], sizes, predicted,
                                                                     ro.volume_bytes, tmp ? tmp : "/tmp");
            verified.insert(verified.end(), v.begin(), v.end());
        }
    }

    std::string text;
    if (a.json) {
        auto j = nlohmann::json::parse(slack::render_json(report));
        if (a.verify) {
            nlohmann::json v = nlohmann::json::array();
            for (const auto& r : verified) {
                v.push_back({{"filesystem", r.filesystem},
                             {"cluster_bytes", r.cluster_bytes},
                             {"volume_bytes", r.volume_bytes},
                             {"predicted_clusters", r.predicted},
                             {"planned_clusters", r.planned},
                             {"actual_clusters", r.actual},
                             {"equal", r.equal()}});
            }
            j["verify"] = v;
        }
        text = j.dump(2) + "\n";
    } else if (a.csv) {
        text = slack::render_csv(report);
    } else {
        slack::TextLayout layout;
        layout.width = output_columns(a.output.empty());
        layout.wide = a.wide;
        layout.columns = a.columns;
        text = slack::render_table(report, layout);
        if (a.verify) {
            text += "\nVerify (images built with populate, clusters the tree uses):\n";
            text += fmt::format("  {:<6}  {:>8}  {:>10}  {:>12}  {:>12}  {}\n", "fs", "cluster", "volume",
                                "predicted", "actual", "result");
            for (const auto& r : verified) {
                text += fmt::format("  {:<6}  {:>8}  {:>10}  {:>12}  {:>12}  {}\n", r.filesystem,
                                    core::format_size(r.cluster_bytes), core::format_size(r.volume_bytes),
                                    core::format_count(r.predicted), core::format_count(r.actual),
                                    r.equal() ? "EQUAL" : fmt::format("DIFFERENT (planned {})", r.planned));
            }
            if (!verified.empty() && verified.front().pruned) {
                text +=
                    fmt::format("  ({} entries the filesystem cannot store were left out of the images)\n",
                                core::format_count(verified.front().pruned));
            }
        }
    }
    if (!a.chart.empty()) io::write_file_atomically(a.chart, slack::render_svg(report));
    if (!a.output.empty()) {
        io::write_file_atomically(a.output, text);
    } else {
        fmt::print("{}", text);
    }
    for (const auto& r : verified) {
        if (!r.equal()) {
            fmt::print(stderr, "fsimg: error: --verify: {} {} clusters: predicted {}, the image uses {}\n",
                       r.filesystem, core::format_size(r.cluster_bytes), r.predicted, r.actual);
            return kExitFailure;
        }
    }
    return kExitOk;
}

}  // namespace

Action add_slack(CLI::App& app) {
    auto args = std::make_shared<SlackArgs>();
    CLI::App* cmd = app.add_subcommand(
        "slack",
        "What a file tree costs on FAT32, exFAT and NTFS for every cluster size, and which to choose");
    cmd->footer(
        "Examples:\n"
        "  fsimg slack ~/Pictures --volume-size 128G\n"
        "  fsimg slack -t fat32,exfat -c 4K,32K,128K --chart slack.svg rootfs/\n"
        "  find rootfs -type f -printf '%s\\t%P\\n' | fsimg slack --from-list - --json");
    cmd->add_option("SOURCE", args->sources, "A directory, or a FAT, exFAT or NTFS image (IMAGE or IMAGE@N)");
    cmd->add_option("--from-list", args->lists,
                    "A listing of SIZE<TAB>PATH lines (find DIR -type f -printf '%s\\t%P\\n'); - reads stdin")
        ->type_name("FILE")
        ->allow_extra_args(false);
    cmd->add_option("-t,--type", args->types, "Filesystems: fat32, exfat, ntfs (default all)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("LIST");
    cmd->add_option("--for", args->devices,
                    "Devices that must read the volume: camera, sdxc, sdhc, windows, macos, linux, tv, "
                    "console, car, uefi (only the filesystems all of them read)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("DEVICE[,DEVICE...]");
    cmd->add_option("-c,--cluster", args->clusters, "Cluster sizes, e.g. 4K,32K,1M, or all (default)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("LIST");
    cmd->add_option("--volume-size", args->volume_size,
                    "Volume size: fixed overhead, whether the tree fits, the tools' defaults")
        ->type_name("SIZE");
    cmd->add_option("--tolerance", args->tolerance,
                    "Recommend the largest cluster within this of the smallest total (default 1%)")
        ->type_name("PERCENT");
    cmd->add_flag("--json", args->json, "JSON output (docs/json.md)");
    cmd->add_flag("--csv", args->csv, "CSV output, one row per filesystem x cluster size");
    cmd->add_flag("--wide", args->wide,
                  "Show every column of the table (by default the ones that decide, to fit 80 columns)");
    cmd->add_option("--columns", args->columns,
                    "The table's columns, e.g. FS,cluster,data,total (names as in --wide's header)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("COLS")
        ->excludes("--wide");
    cmd->add_option("-o,--output", args->output, "Write the table, JSON or CSV to FILE (atomically)")
        ->type_name("FILE");
    cmd->add_option("--chart", args->chart, "Write an SVG chart of total and slack vs cluster size")
        ->type_name("FILE.svg");
    cmd->add_option("--top", args->top, "Show the N directories with the most slack")
        ->type_name("N")
        ->check(CLI::Validator(
            [](std::string& v) {
                return v.empty() || v[0] == '-' ? std::string("N is a count: 0 or more") : std::string();
            },
            "N"));
    cmd->add_flag(
        "--verify", args->verify,
        "Build the FAT32 and exFAT images for real (sparse temporary files) and compare used clusters");
    cmd->add_option("--threads", args->threads, "Walker threads (default: one per core)")->type_name("N");
    return [cmd, args] { return run(*args); };
}

}  // namespace fsimg::cli
