// fsimg ls: list the files of a FAT image.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"

namespace fsimg::cli {

namespace {

struct LsArgs {
    std::string image;
    std::string path = "/";
    bool long_format = false;
    bool recursive = false;
    bool json = false;
    bool short_names = false;
};

constexpr unsigned kMaxDepth = 256;

struct Lister {
    const LsArgs& a;
    const fat::Volume& v;
    nlohmann::json entries = nlohmann::json::array();
    std::vector<std::uint32_t> ancestors;

    void show(const std::string& path, const fat::DirRecord& r) {
        const bool dir = r.kind == fat::RecordKind::directory;
        if (a.json) {
            const auto& e = r.entry;
            entries.push_back({{"path", path},
                               {"name", r.name},
                               {"short_name", r.short_name_raw},
                               {"type", dir ? "directory" : "file"},
                               {"size", e.file_size},
                               {"first_cluster", v.first_cluster(r)},
                               {"attributes",
                                {{"read_only", bool(e.attr & fat::kAttrReadOnly)},
                                 {"hidden", bool(e.attr & fat::kAttrHidden)},
                                 {"system", bool(e.attr & fat::kAttrSystem)},
                                 {"archive", bool(e.attr & fat::kAttrArchive)}}},
                               {"modified", fat_time_text(e.wrt_date, e.wrt_time)},
                               {"created", fat_time_text(e.crt_date, e.crt_time)},
                               {"accessed", fat_time_text(e.lst_acc_date, 0, false)}});
            return;
        }
        std::string name = escape_name(a.recursive ? path : r.name);
        if (dir && !r.is_root) name += "/";
        if (!a.long_format) {
            if (a.short_names) {
                fmt::print("{:<12}  {}\n", escape_name(r.short_name_raw), name);
            } else {
                fmt::print("{}\n", name);
            }
            return;
        }
        fmt::print("{} {:>10} {}  {}{}\n", attr_text(r.entry.attr),
                   dir ? std::string("-") : std::to_string(r.entry.file_size),
                   fat_time_text(r.entry.wrt_date, r.entry.wrt_time),
                   a.short_names ? fmt::format("{:<12}  ", escape_name(r.short_name_raw)) : std::string(),
                   name);
    }

    void list_dir(const std::string& path, const fat::DirRecord& dir, unsigned depth) {
        const std::uint32_t cl = v.first_cluster(dir);
        for (auto c : ancestors) {
            if (c == cl) {
                warn(fmt::format("{}: the directory loops back to an ancestor; not listed again",
                                 escape_name(path)));
                return;
            }
        }
        const fat::ParsedDirectory d = v.read_directory(cl);
        ancestors.push_back(cl);
        std::vector<std::pair<std::string, fat::DirRecord>> subdirs;
        for (const auto& r : d.records) {
            if (r.kind != fat::RecordKind::file && r.kind != fat::RecordKind::directory) continue;
            const std::string p = (path == "/" ? "/" : path + "/") + r.name;
            show(p, r);
            if (a.recursive && r.kind == fat::RecordKind::directory) subdirs.emplace_back(p, r);
        }
        if (depth + 1 < kMaxDepth) {
            for (const auto& [p, r] : subdirs) {
                try {
                    list_dir(p, r, depth + 1);
                } catch (const Error& e) {
                    if (e.code() == ErrorCode::io) throw;
                    warn(fmt::format("{}: {}", escape_name(p), e.what()));
                }
            }
        }
        ancestors.pop_back();
    }
};

int run_ls(const LsArgs& a) {
    FatImage img = open_fat(a.image);
    const fat::Volume& v = *img.volume;
    const auto r = v.lookup(a.path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", a.path, a.image));
    Lister l{a, v, {}, {}};
    std::string path = "/";
    for (const char ch : a.path) {
        if (ch != '/' || path.back() != '/') path.push_back(ch);
    }
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    if (r->kind == fat::RecordKind::directory) {
        l.list_dir(path, *r, 0);
    } else {
        l.show(path, *r);
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
    CLI::App* cmd = app.add_subcommand("ls", "List files in a FAT image (long names, sizes, times)");
    cmd->footer(
        "Paths match long or short names case-insensitively. Times are FAT local times (no zone).\n"
        "Examples:\n"
        "  fsimg ls -l card.img DCIM\n"
        "  fsimg ls -R --json disk.img@1");
    cmd->add_flag("-l", args->long_format, "Long format: attributes, size, modification time");
    cmd->add_flag("-R", args->recursive, "List subdirectories recursively (full paths)");
    cmd->add_flag("--short-names", args->short_names, "Also show each entry's 8.3 short name");
    cmd->add_flag("--json", args->json, "Print JSON (schema in docs/json.md)");
    cmd->add_option("IMAGE", args->image, "Image file; IMAGE@N selects partition N")->required();
    cmd->add_option("PATH", args->path, "Directory or file inside the image (default /)");
    return [args] { return run_ls(*args); };
}

}  // namespace fsimg::cli
