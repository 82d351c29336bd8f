// fsimg ls: list the files of a FAT, exFAT or NTFS image.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "fat_view.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/walk.hpp"
#include "view.hpp"

namespace fsimg::cli {

namespace {

struct LsArgs {
    std::string image;
    std::string path = "/";
    bool long_format = false;
    bool recursive = false;
    bool json = false;
    bool short_names = false;
    bool deleted = false;
};

constexpr unsigned kMaxListDepth = check::kMaxDirectoryDepth;

/// The FAT attribute bits of an entry as JSON (docs/json.md "fsimg ls --json").
nlohmann::json attributes_json(std::uint8_t a) {
    return {{"read_only", bool(a & fat::kAttrReadOnly)},
            {"hidden", bool(a & fat::kAttrHidden)},
            {"system", bool(a & fat::kAttrSystem)},
            {"archive", bool(a & fat::kAttrArchive)}};
}

struct Lister {
    const LsArgs& a;
    const fs::View& v;
    nlohmann::json entries = nlohmann::json::array();
    core::VisitedDirectories visited{};
    std::set<std::uint64_t> deleted_dirs{};  ///< --deleted -R: each deleted directory listed once
    bool full_paths = false;                 ///< names shown with their path (as -R shows them)

    void show(const std::string& path, const fs::Entry& r) {
        if (a.json) {
            nlohmann::json j{{"path", path},
                             {"name", r.name},
                             {"type", r.is_dir        ? "directory"
                                      : r.link_target ? "symlink"
                                                      : "file"},
                             {"size", r.size},
                             {"first_cluster", r.id},
                             {"attributes", attributes_json(r.attributes)},
                             {"modified", r.modified},
                             {"created", r.created},
                             {"accessed", r.accessed}};
            j.update(properties_json(r));
            entries.push_back(std::move(j));
            return;
        }
        std::string name = escape_name(a.recursive || full_paths ? path : r.name);
        if (r.is_dir && !r.is_root) name += "/";
        if (!a.long_format) {
            if (a.short_names) {
                fmt::print("{:<12}  {}\n", escape_name(r.short_name), name);
            } else {
                fmt::print("{}\n", name);
            }
            return;
        }
        std::string attrs = attr_text(r.attributes);
        if (r.link_target) {
            attrs[0] = 'l';
            name += " -> " + escape_name(*r.link_target);
        }
        fmt::print("{} {:>10} {}  {}{}\n", attrs, r.is_dir ? std::string("-") : std::to_string(r.size),
                   r.modified,
                   a.short_names ? fmt::format("{:<12}  ", escape_name(r.short_name)) : std::string(), name);
    }

    /// --deleted: one deleted entry of the directory at `dir_path`.
    void show_deleted(const std::string& dir_path, const fs::DeletedEntry& r) {
        const std::string path = (dir_path == "/" ? "/" : dir_path + "/") + r.name;
        if (a.json) {
            entries.push_back({{"path", path},
                               {"name", r.name},
                               {"short_name", r.short_name},
                               {"type", r.is_dir ? "directory" : "file"},
                               {"size", r.size},
                               {"first_cluster", r.first_cluster},
                               {"attributes", attributes_json(r.attributes)},
                               {"modified", r.modified},
                               {"deleted", true},
                               {"state", r.state}});
            return;
        }
        std::string name = escape_name(a.recursive ? path : r.name);
        if (r.is_dir) name += "/";
        fmt::print("{:<11} {:>10} {}  {}{}\n", r.state, r.is_dir ? std::string("-") : std::to_string(r.size),
                   r.modified,
                   a.short_names ? fmt::format("{:<12}  ", escape_name(r.short_name)) : std::string(), name);
    }

    /// --deleted -R: what a deleted directory still holds, and below it, each deleted directory once.
    void list_deleted_in(const std::string& path, const fs::DeletedEntry& dir, unsigned depth) {
        if (depth >= kMaxListDepth || !deleted_dirs.insert(dir.id).second) return;
        for (const auto& r : v.list_deleted_in(dir)) {
            show_deleted(path, r);
            if (r.is_dir) list_deleted_in((path == "/" ? "/" : path + "/") + r.name, r, depth + 1);
        }
    }

    /// --deleted: the deleted entries of `dir`, then (-R) of each directory below it, deleted ones too.
    void list_deleted_dir(const std::string& path, const fs::Entry& dir, unsigned depth) {
        if (!visited.enter(dir.id, path)) return;
        for (const auto& r : v.list_deleted(dir)) {
            show_deleted(path, r);
            if (a.recursive && r.is_dir)
                list_deleted_in((path == "/" ? "/" : path + "/") + r.name, r, depth + 1);
        }
        if (!a.recursive || depth + 1 >= kMaxListDepth) return;
        std::vector<std::string> problems;
        for (const auto& r : v.list(dir, problems)) {
            if (!r.is_dir) continue;
            const std::string p = (path == "/" ? "/" : path + "/") + r.name;
            try {
                list_deleted_dir(p, r, depth + 1);
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
                warn(fmt::format("{}: {}", escape_name(p), e.what()));
            }
        }
    }

    void list_dir(const std::string& path, const fs::Entry& dir, unsigned depth) {
        // Each directory once: a loop or a second entry for it (a DAG) is skipped with a warning.
        if (!visited.enter(dir.id, path)) {
            warn(
                fmt::format("{}: the same directory as {} (two entries lead to it, or it loops back); "
                            "not listed again",
                            escape_name(path), escape_name(visited.first_path(dir.id))));
            return;
        }
        std::vector<std::string> problems;
        const std::vector<fs::Entry> d = v.list(dir, problems);
        for (const auto& p : problems) warn(fmt::format("{}: {}", escape_name(path), p));
        std::vector<std::pair<std::string, const fs::Entry*>> subdirs;
        for (const auto& r : d) {
            const std::string p = (path == "/" ? "/" : path + "/") + r.name;
            show(p, r);
            if (a.recursive && r.is_dir) subdirs.emplace_back(p, &r);
        }
        for (const auto& [p, r] : subdirs) {
            if (depth + 1 >= kMaxListDepth) {
                // Said, not dropped in silence (extract says it as a problem too).
                warn(fmt::format("{}: nested deeper than {} levels; its contents are not listed",
                                 escape_name(p), kMaxListDepth));
                continue;
            }
            try {
                list_dir(p, *r, depth + 1);
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
                warn(fmt::format("{}: {}", escape_name(p), e.what()));
            }
        }
    }
};

int run_ls(const LsArgs& a) {
    const auto view = open_image_view(a.image);
    if (a.short_names && !view->has_short_names()) {
        throw Error(ErrorCode::usage, fmt::format("--short-names: {} is {}, which has no short names",
                                                  a.image, fs::name(view->kind())));
    }
    Lister l{a, *view};  // entries stays an array ([] for an empty directory), never null
    // A path with wildcards that does not exist as written: the entries it
    // matches, each shown as itself (a directory too, as ls -d; with -R its
    // contents follow), in byte order.
    if (!a.deleted && core::has_wildcard(a.path) && !view->lookup(a.path)) {
        const std::vector<std::string> matched = expand_paths(*view, {a.path});
        // Matches from several directories ("/DCIM/*/*.JPG") are shown with their paths.
        const std::string norm = fs::normalize_path(a.path);
        l.full_paths = core::has_wildcard(norm.substr(0, norm.rfind('/')));
        for (const std::string& m : matched) {
            const auto e = view->lookup(m);
            if (!e)
                throw Error(ErrorCode::usage, fmt::format("\"{}\" matches nothing in {}", a.path, a.image));
            l.show(m, *e);
            if (e->is_dir && a.recursive) l.list_dir(m, *e, 0);
        }
        if (a.json) {
            nlohmann::json j{
                {"schema_version", 1}, {"image", a.image}, {"path", a.path}, {"entries", l.entries}};
            fmt::print("{}\n", j.dump(2));
        }
        return kExitOk;
    }
    const auto r = view->lookup(a.path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", a.path, a.image));
    const std::string path = fs::normalize_path(a.path);
    // Entries are shown under the names as stored ("/DCIM/100CANON/..."), whatever case PATH used.
    std::string stored = "/";
    for (std::size_t at = 1; at < path.size();) {
        const std::size_t slash = std::min(path.find('/', at), path.size());
        const std::string prefix = path.substr(0, slash);
        const auto e = view->lookup(prefix);
        stored += (stored == "/" ? "" : "/") + (e ? e->name : path.substr(at, slash - at));
        at = slash + 1;
    }
    if (a.deleted) {
        if (!r->is_dir)
            throw Error(ErrorCode::usage, fmt::format("--deleted lists a directory's deleted entries: \"{}\" "
                                                      "is a file",
                                                      a.path));
        l.list_deleted_dir(stored, *r, 0);
    } else if (r->is_dir) {
        l.list_dir(stored, *r, 0);
    } else {
        l.show(stored, *r);
    }
    if (a.json) {
        nlohmann::json j{{"schema_version", 1}, {"image", a.image}, {"path", path}, {"entries", l.entries}};
        fmt::print("{}\n", j.dump(2));
    }
    return kExitOk;
}

}  // namespace

Action add_ls(CLI::App& app) {
    auto args = std::make_shared<LsArgs>();
    CLI::App* cmd =
        app.add_subcommand("ls", "List files in a FAT, exFAT or NTFS image (names, sizes, times)");
    cmd->footer(
        "Paths match names case-insensitively (FAT: long or short names). FAT times are local times\n"
        "without a zone; exFAT times are shown with hundredths of a second and their UTC offset;\n"
        "NTFS times in UTC at 100 ns. NTFS alternate data streams are listed as name:stream,\n"
        "symbolic links as name -> target; system files ($MFT...) only when named.\n"
        "Examples:\n"
        "  fsimg ls -l card.img DCIM\n"
        "  fsimg ls -R --json disk.img@1\n"
        "  fsimg ls --deleted -R card.img");
    cmd->add_flag("-l", args->long_format, "Long format: attributes, size, modification time");
    cmd->add_flag("-R", args->recursive, "List subdirectories recursively (full paths)");
    cmd->add_flag("--short-names", args->short_names, "Also show each entry's 8.3 short name (FAT)");
    cmd->add_flag("--deleted", args->deleted,
                  "List the deleted entries still in the directory (FAT, exFAT, NTFS): state (recoverable, "
                  "reused, empty), "
                  "size, time, name");
    cmd->add_flag("--json", args->json, "Print JSON (schema in docs/json.md)");
    cmd->add_option("IMAGE", args->image, "Image file; IMAGE@N selects partition N")->required();
    cmd->add_option("PATH", args->path, "Directory or file inside the image (default /)");
    return [args] { return run_ls(*args); };
}

}  // namespace fsimg::cli
