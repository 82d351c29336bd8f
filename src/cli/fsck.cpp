// fsimg fsck: check a FAT, exFAT or NTFS image (read-only) and report findings; exit status as fsck(8).
#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common.hpp"
#include "fsimg/check/codes.hpp"
#include "fsimg/check/exit_code.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf8_safe.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/io/open.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

struct FsckArgs {
    std::string image;
    bool no_changes = false;
    bool yes = false;
    bool json = false;
    bool verbose = false;
    bool list_codes = false;
};

std::string location_text(const check::Location& l) {
    std::string s = l.object;
    std::string extra;
    if (l.cluster) extra = fmt::format("cluster {}", *l.cluster);
    if (l.sector) extra += fmt::format("{}sector {}", extra.empty() ? "" : ", ", *l.sector);
    if (!extra.empty()) s += (s.empty() ? "" : " ") + ("(" + extra + ")");
    return s;
}

nlohmann::json finding_json(const check::Finding& f) {
    nlohmann::json loc = nlohmann::json::object();
    if (f.where.byte_offset) loc["byte_offset"] = *f.where.byte_offset;
    if (f.where.sector) loc["sector"] = *f.where.sector;
    if (f.where.cluster) loc["cluster"] = *f.where.cluster;
    if (!f.where.object.empty()) loc["object"] = core::escape_invalid_utf8(f.where.object);
    if (!f.where.other_owner.empty()) loc["other_owner"] = core::escape_invalid_utf8(f.where.other_owner);
    return {{"severity", std::string(check::to_string(f.severity))},
            {"code", std::string(f.code)},
            {"location", loc},
            {"message", core::escape_invalid_utf8(f.message)},
            {"count", f.count}};
}

int run_fsck(const FsckArgs& a) {
    if (a.list_codes) {
        for (const auto& c : check::all_codes()) {
            fmt::print("{}\t{}\t{}\n", c.code, check::to_string(c.severity), c.meaning);
        }
        return check::kFsckClean;
    }
    if (a.image.empty()) {
        fmt::print(stderr, "fsimg: error: fsck needs an IMAGE\n");
        return check::kFsckUsage;
    }
    if (a.yes) {
        fmt::print(stderr, "fsimg: error: repair (-y) is not available yet; run with -n to check\n");
        return check::kFsckUsage;
    }
    check::Findings findings;
    fs::Checked checked;
    bool gzip_damaged = false;
    try {
        io::OpenedVolume v = io::open_volume(a.image);
        fs::add_table_findings(v.table, findings);
        // -v prints each path; the progress line counts them ("walking directories", no total).
        const bool print_paths = a.verbose && !a.json;
        if (print_paths) fmt::print("Walking the directory tree:\n");
        const auto progress = print_paths ? nullptr : make_progress();
        fs::CheckOptions opt;
        if (print_paths || progress) {
            opt.on_walk = [print_paths, p = progress.get(), walking = false](std::string_view path) mutable {
                if (print_paths) fmt::print("  {}\n", path);
                if (!p) return;
                if (!walking) p->begin("walking directories", 0, core::ProgressUnit::items);
                walking = true;
                p->advance(1);
            };
        }
        opt.progress = progress.get();
        opt.placement = fs::placement_of(v);
        checked = fs::check_volume(v.device(), findings, opt);
        if (progress) progress->end();
        // A gzip image: the rest of the stream is decompressed (not kept) so that every
        // CRC32/ISIZE trailer is checked; damage makes the check unreliable (exit 8).
        if (v.file && v.file->is_gzip()) {
            v.file->verify_gzip();
            for (const auto& p : v.file->gzip_problems()) {
                fmt::print(stderr, "fsimg: {}: {}: {}\n", v.file->gzip_damaged() ? "error" : "warning",
                           a.image, p);
            }
            gzip_damaged = v.file->gzip_damaged();
        }
    } catch (const Error& e) {
        fmt::print(stderr, "fsimg: error: {}\n", core::escape_controls(e.what()));
        return e.code() == ErrorCode::usage ? check::kFsckUsage : check::kFsckOperational;
    }
    const check::Summary& s = checked.summary;
    const fs::Kind kind = checked.detection.kind;
    const int rc = check::fsck_exit_for(findings) | (gzip_damaged ? check::kFsckOperational : 0);
    const auto errors = findings.count(check::Severity::error) + findings.count(check::Severity::fatal);
    const auto warnings = findings.count(check::Severity::warning);
    if (a.json) {
        nlohmann::json j;
        j["schema_version"] = 1;
        j["image"] = a.image;
        j["filesystem"] = std::string(fs::name(kind));
        // The FAT type, FAT volumes only (docs/json.md): null for exFAT and NTFS.
        j["fat_type"] = kind == fs::Kind::fat && !s.type.empty() ? nlohmann::json(s.type) : nlohmann::json();
        j["status"] = rc == 0 ? "clean" : "errors";
        j["exit_code"] = rc;
        j["findings"] = nlohmann::json::array();
        for (const auto& f : findings.all()) j["findings"].push_back(finding_json(f));
        j["summary"] = {{"errors", errors},
                        {"warnings", warnings},
                        {"notes", findings.count(check::Severity::info)},
                        {"complete", s.complete},
                        {"cluster_count", s.cluster_count},
                        {"cluster_bytes", s.cluster_bytes},
                        {"files", s.files},
                        {"directories", s.directories},
                        {"used_clusters", s.used_clusters},
                        {"free_clusters", s.free_clusters},
                        {"bad_clusters", s.bad_clusters},
                        {"lost_clusters", s.lost_clusters}};
        fmt::print("{}\n", j.dump(2));
        return rc;
    }
    // -q: the findings only (the exit status tells clean from damaged).
    const bool quiet = output_options().quiet;
    if (!quiet && !s.type.empty()) {
        fmt::print("{}: {}, {} clusters of {}\n", a.image, s.type, core::format_count(s.cluster_count),
                   core::format_size(s.cluster_bytes));
    }
    for (const auto& f : findings.all()) {
        fmt::print("{} {}: {}: {}\n", check::to_string(f.severity), f.code, shown(location_text(f.where)),
                   shown(f.message));
    }
    if (quiet) return rc;
    if (s.complete) {
        fmt::print("{} files, {} directories; clusters: {} used, {} free, {} bad, {} lost\n",
                   core::format_count(s.files), core::format_count(s.directories),
                   core::format_count(s.used_clusters), core::format_count(s.free_clusters),
                   core::format_count(s.bad_clusters), core::format_count(s.lost_clusters));
    } else {
        fmt::print("the check could not complete\n");
    }
    if (rc == 0) {
        fmt::print(
            "{}: clean{}\n", a.image,
            warnings ? fmt::format(" ({} warning{})", warnings, warnings == 1 ? "" : "s") : std::string());
    } else {
        fmt::print("{}: {} error{}, {} warning{}; nothing was changed\n", a.image, errors,
                   errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
    }
    return rc;
}

}  // namespace

Action add_fsck(CLI::App& app) {
    auto args = std::make_shared<FsckArgs>();
    CLI::App* cmd = app.add_subcommand(
        "fsck", "Check a FAT12/16/32, exFAT or NTFS image (read-only) and report what is wrong");
    cmd->footer(
        "Exit status (fsck(8)): 0 clean, 4 errors left uncorrected, 8 operational error, 16 usage error.\n"
        "Finding codes: docs/fsck-codes.md. Examples:\n"
        "  fsimg fsck card.img\n"
        "  fsimg fsck --json disk.img@1");
    cmd->add_flag("-n,--no-changes", args->no_changes, "Check only, never write (the default)");
    cmd->add_flag("-y,--yes", args->yes, "Repair (not available yet)");
    cmd->add_flag("--json", args->json, "Print findings and a summary as JSON (schema in docs/json.md)");
    cmd->add_flag("-v,--verbose", args->verbose, "Print every path the walk visits");
    cmd->add_flag("--list-codes", args->list_codes, "Print every finding code, its severity and meaning");
    cmd->add_option("IMAGE", args->image, "Image file; IMAGE@N selects partition N");
    return [args] { return run_fsck(*args); };
}

}  // namespace fsimg::cli
