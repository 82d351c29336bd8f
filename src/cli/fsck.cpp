// fsimg fsck: check a FAT, exFAT or NTFS image and report findings, repair with -a/-p/-y; exit status as
// fsck(8). fsimg undo: put back what a repair with --undo overwrote.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <ctime>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "cut_device.hpp"
#include "fsimg/check/codes.hpp"
#include "fsimg/check/exit_code.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf8_safe.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/fs/repair.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/undo.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

struct FsckArgs {
    std::vector<std::string> images;
    bool no_changes = false;
    bool yes = false;
    bool auto_a = false;
    bool preen = false;
    std::string undo;
    bool salvage = false;
    bool json = false;
    bool verbose = false;
    bool list_codes = false;
    bool verify = false;       ///< -V (fsck.fat): every repair is checked again anyway
    bool write_now = false;    ///< -w (fsck.fat): every write is made at once anyway
    bool interactive = false;  ///< -r (fsck.fat): refused, fsimg does not ask
    bool mark_bad = false;     ///< -t (fsck.fat): refused, fsimg does not test the medium
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

/// One image checked (and, with a repair level, repaired). Prints its report
/// (text) or stores it in `json`; returns its fsck(8) exit status.
int fsck_one(const FsckArgs& a, const std::string& image, std::optional<check::RepairLevel> level,
             nlohmann::json* json) {
    check::Findings findings;
    fs::Checked checked;
    std::vector<check::Repair> repairs;
    bool gzip_damaged = false;
    try {
        const auto [path, number] = io::split_image_spec(image);
        if (level && io::is_gzip_file(path)) {
            throw Error(ErrorCode::usage,
                        fmt::format("{} is gzip-compressed: a repair is written back into the "
                                    "image, so gunzip it first",
                                    path));
        }
        io::OpenedVolume v = io::open_disk(path, level.has_value());
        fs::select_partition(v, path, number);
        if (level) v.file->lock_exclusive();
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
        fs::RepairHints hints;  // what each check collects for the repair that follows it
        if (level) opt.repair_hints = &hints;
        fs::add_table_findings(v.table, findings);
        checked = naming_image(image, [&] { return fs::check_volume(v.device(), findings, opt); });
        if (progress) progress->end();
        const bool repairable =
            level && std::any_of(findings.all().begin(), findings.all().end(),
                                 [&](const check::Finding& f) { return check::repairs(f.code, *level); });
        if (repairable) {
            io::BlockDevice* dev = &v.device();
            std::unique_ptr<io::UndoDevice> undo;
            if (!a.undo.empty()) {
                undo = std::make_unique<io::UndoDevice>(*dev, v.offset(), v.file->size(), a.undo);
                dev = undo.get();
            }
            const auto cut = CutDevice::from_environment(*dev);
            if (cut) dev = cut.get();
            check::RepairOptions ro;
            ro.level = *level;
            ro.salvage = a.salvage;
            ro.clamp = core::source_date_epoch();
            ro.now = ro.clamp.value_or(static_cast<std::int64_t>(std::time(nullptr)));
            io::FileImage* file = v.file.get();
            ro.barrier = [file] { file->sync(); };
            // Passes until one makes nothing or leaves nothing it can repair,
            // at most eight: a pass repairs what the image showed when it
            // began, and a repair can show the next pass more (a boot sector
            // rewritten from its valid twin leaves the dirty flag for errors
            // that were only the old sector's; a chain ended where it broke
            // leaves lost clusters and a size longer than the chain; a set
            // whose SetChecksum is made right is walked, its chain checked,
            // only then).
            for (int pass = 0; pass < 8; ++pass) {
                auto made = fs::repair_volume(*dev, checked, findings, ro, &hints);
                file->sync();
                repairs.insert(repairs.end(), made.begin(), made.end());
                // What is left, checked again from the bytes now on the image.
                check::Findings after;
                fs::add_table_findings(v.table, after);
                fs::CheckOptions quiet;
                quiet.placement = opt.placement;
                quiet.repair_hints = &hints;
                checked = fs::check_volume(v.device(), after, quiet);
                findings = std::move(after);
                if (made.empty() ||
                    std::none_of(findings.all().begin(), findings.all().end(),
                                 [&](const check::Finding& f) { return check::repairs(f.code, *level); }))
                    break;
            }
            CutDevice::report(cut.get());
        } else if (level) {
            CutDevice::report(nullptr);
        }
        // A gzip image: the rest of the stream is decompressed (not kept) so that every
        // CRC32/ISIZE trailer is checked; damage makes the check unreliable (exit 8).
        if (v.file && v.file->is_gzip()) {
            v.file->verify_gzip();
            for (const auto& p : v.file->gzip_problems()) {
                fmt::print(stderr, "fsimg: {}: {}: {}\n", v.file->gzip_damaged() ? "error" : "warning", image,
                           p);
            }
            gzip_damaged = v.file->gzip_damaged();
        }
    } catch (const Error& e) {
        fmt::print(stderr, "fsimg: error: {}{}\n", a.images.size() > 1 ? image + ": " : "",
                   core::escape_controls(e.what()));
        return e.code() == ErrorCode::usage ? check::kFsckUsage : check::kFsckOperational;
    }
    const check::Summary& s = checked.summary;
    const fs::Kind kind = checked.detection.kind;
    const int rc = check::fsck_exit_for(findings) | (gzip_damaged ? check::kFsckOperational : 0) |
                   (repairs.empty() ? 0 : check::kFsckCorrected);
    const auto errors = findings.count(check::Severity::error) + findings.count(check::Severity::fatal);
    const auto warnings = findings.count(check::Severity::warning);
    if (json != nullptr) {
        nlohmann::json& j = *json;
        j["schema_version"] = 1;
        j["image"] = image;
        j["filesystem"] = std::string(fs::name(kind));
        // The FAT type, FAT volumes only (docs/json.md): null for exFAT and NTFS.
        j["fat_type"] = kind == fs::Kind::fat && !s.type.empty() ? nlohmann::json(s.type) : nlohmann::json();
        j["mode"] = !level ? "check" : *level == check::RepairLevel::preen ? "preen" : "repair";
        j["status"] = errors == 0 && !gzip_damaged ? (repairs.empty() ? "clean" : "repaired") : "errors";
        j["exit_code"] = rc;
        j["repairs"] = nlohmann::json::array();
        for (const auto& r : repairs)
            j["repairs"].push_back({{"code", r.code}, {"done", core::escape_invalid_utf8(r.done)}});
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
        return rc;
    }
    // -q: the findings and repairs only (the exit status tells clean from damaged).
    const bool quiet = output_options().quiet;
    if (!quiet && !s.type.empty()) {
        fmt::print("{}: {}, {} clusters of {}\n", image, s.type, core::format_count(s.cluster_count),
                   core::format_size(s.cluster_bytes));
    }
    for (const auto& r : repairs) fmt::print("repaired {}: {}\n", r.code, shown(r.done));
    for (const auto& f : findings.all()) {
        fmt::print("{} {}: {}: {}\n", check::to_string(f.severity), f.code, shown(location_text(f.where)),
                   shown(f.message));
    }
    if (quiet) return rc;
    if (s.complete) {
        fmt::print("{}, {}; clusters: {} used, {} free, {} bad, {} lost\n",
                   core::format_counted(s.files, "file", "files"),
                   core::format_counted(s.directories, "directory", "directories"),
                   core::format_count(s.used_clusters), core::format_count(s.free_clusters),
                   core::format_count(s.bad_clusters), core::format_count(s.lost_clusters));
    } else {
        fmt::print("the check could not complete\n");
    }
    const std::string fixed =
        repairs.empty() ? std::string()
                        : fmt::format("{} repair{} made; ", repairs.size(), repairs.size() == 1 ? "" : "s");
    if (errors == 0) {
        fmt::print(
            "{}: {}clean{}\n", image, fixed,
            warnings ? fmt::format(" ({} warning{})", warnings, warnings == 1 ? "" : "s") : std::string());
    } else {
        fmt::print("{}: {}{} error{}, {} warning{}{}\n", image, fixed, errors, errors == 1 ? "" : "s",
                   warnings, warnings == 1 ? "" : "s",
                   !level ? "; nothing was changed" : "; left as they are (not repairable in this mode)");
    }
    return rc;
}

int run_fsck(const FsckArgs& a) {
    if (a.list_codes) {
        for (const auto& c : check::all_codes()) {
            fmt::print("{}\t{}\t{}\n", c.code, check::to_string(c.severity), c.meaning);
        }
        return check::kFsckClean;
    }
    if (a.images.empty()) {
        fmt::print(stderr, "fsimg: error: fsck needs an IMAGE\n");
        return check::kFsckUsage;
    }
    if (a.interactive) {
        fmt::print(
            stderr,
            "fsimg: error: -r (fsck.fat's interactive repair): fsimg fsck does not ask; use -y to repair "
            "everything it can, -p for the safe repairs only, -n (the default) to check\n");
        return check::kFsckUsage;
    }
    if (a.mark_bad) {
        fmt::print(stderr,
                   "fsimg: error: -t (fsck.fat's test for bad clusters): fsimg works on image files, whose "
                   "clusters read back what was written; there is nothing to test\n");
        return check::kFsckUsage;
    }
    const int modes = int(a.no_changes) + int(a.yes) + int(a.auto_a || a.preen);
    if (modes > 1) {
        fmt::print(stderr, "fsimg: error: -n, -y and -a/-p exclude each other: choose one\n");
        return check::kFsckUsage;
    }
    std::optional<check::RepairLevel> level;
    if (a.yes) level = check::RepairLevel::all;
    if (a.auto_a || a.preen) level = check::RepairLevel::preen;
    if (!a.undo.empty() && !level) {
        fmt::print(stderr,
                   "fsimg: error: --undo saves what a repair overwrites: give it with -y, -a or -p\n");
        return check::kFsckUsage;
    }
    if (a.salvage && !a.yes) {
        fmt::print(stderr,
                   "fsimg: error: --salvage saves lost chains as files instead of freeing them: "
                   "give it with -y\n");
        return check::kFsckUsage;
    }
    if (!a.undo.empty() && a.images.size() > 1) {
        fmt::print(stderr, "fsimg: error: --undo FILE takes one IMAGE (one undo file per image)\n");
        return check::kFsckUsage;
    }
    // Exit statuses OR-ed over the images, as fsck(8) does.
    int rc = 0;
    nlohmann::json all = nlohmann::json::array();
    for (const std::string& image : a.images) {
        nlohmann::json j;
        rc |= fsck_one(a, image, level, a.json ? &j : nullptr);
        if (a.json && !j.is_null()) all.push_back(std::move(j));
    }
    // One image: its object (docs/schemas/fsck.schema.json); several: an array of them.
    if (a.json) fmt::print("{}\n", (a.images.size() == 1 && !all.empty() ? all.front() : all).dump(2));
    return rc;
}

}  // namespace

Action add_fsck(CLI::App& app) {
    auto args = std::make_shared<FsckArgs>();
    CLI::App* cmd = app.add_subcommand(
        "fsck",
        "Check a FAT12/16/32, exFAT or NTFS image and report what is wrong; repair with -a, -p or -y");
    cmd->footer(
        "Exit status (fsck(8), OR-ed over the images): 0 clean, 1 errors corrected, 4 errors left "
        "uncorrected,\n"
        "8 operational error, 16 usage error.\n"
        "Finding codes: docs/fsck-codes.md. Examples:\n"
        "  fsimg fsck card.img\n"
        "  fsimg fsck --json disk.img@1\n"
        "  fsimg fsck -p --undo card.undo card.img\n"
        "  fsimg fsck -y --salvage card.img");
    cmd->add_flag("-n,--no-changes", args->no_changes, "Check only, never write (the default)");
    cmd->add_flag("-y,--yes", args->yes, "Repair everything fsimg can repair (docs/fsck.md \"Repair\")");
    cmd->add_flag("-a", args->auto_a,
                  "Preen: repair only what is safe without a question (flags, counts, a copy "
                  "from a valid twin); exit 4 when more is wrong");
    cmd->add_flag("-p", args->preen, "The same as -a (fsck(8) and systemd-fsck pass either)");
    cmd->add_option(
           "--undo", args->undo,
           "With -y/-a/-p: first save every block the repair overwrites to FILE (new); fsimg undo FILE "
           "IMAGE puts them back")
        ->type_name("FILE");
    cmd->add_flag("-f,--salvage", args->salvage,
                  "With -y: save lost clusters as files instead of freeing them: FAT chains as "
                  "/FOUND.000/FILE0000.CHK... (chkdsk), exFAT runs as /LOST+FOUND/FILE0000000.CHK... "
                  "(fsck.exfat -s); NTFS lost clusters are left");
    cmd->add_flag("--json", args->json, "Print findings and a summary as JSON (schema in docs/json.md)");
    cmd->add_flag("-v,-l,--verbose", args->verbose, "Print every path the walk visits (-l: as fsck.fat -l)");
    cmd->add_flag("-V", args->verify,
                  "Accepted for fsck.fat's -V (check again after the repair): fsimg always does, and says "
                  "\"clean\" or what is left");
    cmd->add_flag("-w", args->write_now,
                  "Accepted for fsck.fat's -w (write at once): every repair write is made at once, in its "
                  "order");
    cmd->add_flag("-r", args->interactive, "fsck.fat's interactive repair: refused (use -y or -p)");
    cmd->add_flag("-t", args->mark_bad, "fsck.fat's bad-cluster test: refused (an image has no bad media)");
    cmd->add_flag("--list-codes", args->list_codes, "Print every finding code, its severity and meaning");
    cmd->add_option("IMAGE", args->images, "Image files; IMAGE@N selects partition N");
    return [args] { return run_fsck(*args); };
}

Action add_undo(CLI::App& app) {
    struct UndoArgs {
        std::string file;
        std::string image;
    };
    auto args = std::make_shared<UndoArgs>();
    CLI::App* cmd =
        app.add_subcommand("undo", "Put back what a repair (fsck -y/-a/-p --undo FILE) overwrote");
    cmd->footer(
        "Checks first that the image still holds what the repair wrote, then restores every saved block,\n"
        "last write first. Exit status: 0 done, 1 failed, 2 usage, 3 refused (nothing written). Examples:\n"
        "  fsimg undo card.undo card.img   (after fsimg fsck -p --undo card.undo card.img)");
    cmd->add_option("FILE", args->file, "The undo file fsck --undo wrote")->required();
    cmd->add_option("IMAGE", args->image,
                    "The image it was made for, IMAGE or IMAGE@N as fsck was given it (the undo file holds "
                    "offsets in the whole image file)")
        ->required();
    return [args] {
        // The saved offsets are the image file's: IMAGE@N names the same file.
        const auto [path, part] = io::split_image_spec(args->image);
        (void)part;
        auto image = io::FileImage::open(path, true);
        image->lock_exclusive();
        const io::UndoResult r = io::undo_image(args->file, *image);
        image->sync();
        if (r.cut_short)
            warn(
                "the undo file ends inside a record: the repair was cut off there, its last write never "
                "happened");
        if (!output_options().quiet)
            fmt::print("{}: {} block{} put back ({})\n", args->image, r.records, r.records == 1 ? "" : "s",
                       core::format_size(r.bytes));
        return kExitOk;
    };
}

}  // namespace fsimg::cli
