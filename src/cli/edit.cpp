// fsimg cp, rm, mkdir, mv, label, attrib: changing an existing image in
// place (FAT12/16/32 and exFAT through fs/edit.hpp; fat/edit.hpp and
// exfat/edit.hpp order every write).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "cut_device.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/utf8_safe.hpp"
#include "fsimg/core/windows_names.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/fs/edit.hpp"
#include "fsimg/fs/view.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/source/file.hpp"
#include "fsimg/source/tree.hpp"
#include "mkfs_common.hpp"
#include "output.hpp"
#include "view.hpp"

namespace fsimg::cli {

namespace {

/// The most a source file that reports 0 bytes is read to (cp): procfs and
/// sysfs files hold kilobytes; the content is held in memory until copied.
constexpr std::uint64_t kMaxUnsizedBytes = 64 << 20;

/// A name or path for JSON (valid UTF-8).
std::string jtext(std::string_view s) { return core::escape_invalid_utf8(s); }

/// An image opened for changing.
struct Session {
    std::string spec;
    io::OpenedVolume opened;
    std::unique_ptr<CutDevice> cut;
    std::unique_ptr<fs::Editor> editor;
    nlohmann::json changes = nlohmann::json::array();  ///< what changed, kept only for --json
    bool json = false;                                 ///< --json: record() keeps each change
    int status = kExitOk;

    bool finished = false;
    bool change = true;  ///< false: opened read-only to show (OpenMode::change)

    Session() = default;
    Session(Session&&) = default;
    Session& operator=(Session&&) = delete;
    /// A command that stops on an error still ends the change (the writes
    /// before it left the volume consistent): finish().
    ~Session() {
        if (editor && change && !finished) {
            try {
                editor->finish();
            } catch (const std::exception&) {  // the error that stopped the command is the one reported
            }
        }
    }
    fs::Editor& ed() { return *editor; }
    /// Ends the change: FSInfo and the clean bit (FAT), PercentInUse and
    /// VolumeDirty (exFAT): fs::Editor::finish.
    void finish() {
        finished = true;
        editor->finish();  // one fsync, before the clean bit (EditOptions::barrier)
        CutDevice::report(cut.get());
    }
    /// Runs the change of one path: a usage or I/O error is reported naming
    /// the path, makes the exit status 1, and the other paths go on.
    template <typename Change>
    void each(const std::string& path, Change&& change) {
        try {
            change();
        } catch (const Error& e) {
            // A path the editor refuses before its first write (usage, no space,
            // what it does not change yet) is reported; the others are done.
            if (e.code() != ErrorCode::usage && e.code() != ErrorCode::io &&
                e.code() != ErrorCode::unsupported)
                throw;
            failed(path, e.what());
        }
    }
    /// Notes one change for the --json report (nothing without --json: a
    /// cp -r of 32,000 files kept 16 MB of them).
    void record(nlohmann::json change) {
        if (json) changes.push_back(std::move(change));
    }
    /// finish(), then with --json what changed; returns the exit status.
    int done(bool json) {
        finish();
        if (json) fmt::print("{}\n", nlohmann::json{{"image", spec}, {"changes", changes}}.dump(2));
        return status;
    }
    void failed(const std::string& path, const std::string& why) {
        fmt::print(stderr, "fsimg: error: {}: {}\n", shown(path), why);
        status = kExitFailure;
    }
};

/// "fat.chain.cross-link (/A.TXT, cluster 5: message)" for a refusal or warning.
std::string finding_text(const check::Finding& f) {
    std::string where = f.where.object;
    if (f.where.cluster) where += fmt::format("{}cluster {}", where.empty() ? "" : ", ", *f.where.cluster);
    return fmt::format("{} ({}{}{})", f.code, shown(where), where.empty() ? "" : ": ", shown(f.message));
}

/// --force-unsafe and --check, the same on every changing command.
struct Safety {
    bool force_unsafe = false;   ///< change a volume the check calls unsafe to change
    std::string check = "auto";  ///< auto, whole or touched (fs::CheckScope)
};

void add_safety_options(CLI::App* cmd, Safety& s) {
    cmd->add_flag("--force-unsafe", s.force_unsafe,
                  "Change the volume even where fsck finds damage the change relies on (cross-links, a "
                  "bitmap or FAT that gives away used clusters): files may be lost");
    cmd->add_option("--check", s.check,
                    "What to check before the first write: auto (the whole volume; a FAT volume of more "
                    "than 16,777,216 clusters only where the change touches it), whole, touched (FAT)")
        ->check(CLI::IsMember({"auto", "whole", "touched"}));
}

/// How a changing command opens its image.
struct OpenMode {
    bool change = true;  ///< false: only shows (label, attrib without changes): read-only, no check
    Safety safety;
};

Session open_session(const std::string& spec, std::string_view command, OpenMode mode) {
    Session s;
    s.spec = spec;
    s.change = mode.change;
    const auto [path, part] = io::split_image_spec(spec);
    if (io::is_gzip_file(path)) {
        throw Error(ErrorCode::usage,
                    fmt::format("{} is gzip-compressed; fsimg reads such images but changes only "
                                "uncompressed ones (gunzip it first)",
                                path));
    }
    s.opened = fs::open_volume(spec, mode.change);
    // One writer at a time: two commands changing one image at once would allocate the same clusters.
    if (mode.change) s.opened.file->lock_exclusive();
    const fs::Detection d = naming_image(spec, [&] { return fs::detect(s.opened.device()); });
    if (d.through_backup) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("{}: {}; fsimg changes only a volume whose main boot sector is "
                                "sound (see fsimg fsck)",
                                spec, d.note));
    }
    bool check_touched = false;
    std::uint64_t clusters = 0;
    if (mode.change) {
        const fs::CheckScope automatic = fs::automatic_check_scope(s.opened.device(), d.kind, clusters);
        const std::string& asked = mode.safety.check;
        if (asked == "touched" && d.kind != fs::Kind::fat)
            throw Error(ErrorCode::usage,
                        fmt::format("--check touched is for FAT volumes; {} holds {}, whose check "
                                    "before a change is always the whole volume's",
                                    spec, fs::label(d.kind)));
        check_touched = asked == "touched" || (asked == "auto" && automatic == fs::CheckScope::touched);
    }
    if (check_touched) {
        // A volume too large for the whole walk (fs::kWholeCheckMaxClusters): the editor judges
        // what the change reads as it reads it, before writing (EditOptions::check_touched).
        note(
            fmt::format("{}: checking only what this change touches, not who owns each of its {} clusters "
                        "(--check whole does; so does fsimg fsck {})",
                        spec, core::format_count(clusters), spec));
    } else if (mode.change) {
        // Before the first write, the checker's ownership walk (once per
        // command): who owns each cluster and directory slot the change
        // may touch (fs::write_safety).
        check::Findings found;
        const fs::Checked checked = fs::check_volume(s.opened.device(), found);
        const fs::WriteSafety safety = fs::write_safety(found, checked.summary);
        std::string damage;
        for (const check::Finding* f : safety.unsafe) {
            if (damage.empty()) damage = finding_text(*f);
        }
        if (damage.empty() && safety.incomplete)
            damage = "the check could not finish, so who owns each cluster is not known";
        if (safety.unsafe.size() > 1) damage += fmt::format(" and {} more", safety.unsafe.size() - 1);
        if (!safety.safe() && !mode.safety.force_unsafe) {
            throw Error(ErrorCode::refused,
                        fmt::format("{} is damaged where fsimg {} relies on it: {}; nothing was changed. "
                                    "`fsimg fsck {}` lists the damage and `fsimg fsck -y` repairs what it "
                                    "can; --force-unsafe changes the volume anyway",
                                    spec, command, damage, spec));
        }
        if (!safety.safe()) {
            warn(fmt::format("{}: changing a damaged volume (--force-unsafe): {}", spec, damage));
        } else if (!safety.elsewhere.empty()) {
            std::vector<std::string_view> codes;
            for (const check::Finding* f : safety.elsewhere) {
                if (std::find(codes.begin(), codes.end(), f->code) == codes.end()) codes.push_back(f->code);
            }
            std::string list;
            for (const auto c : codes) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
            warn(fmt::format("{}: fsck finds damage this change does not rely on ({}); see fsimg fsck {}",
                             spec, list, spec));
        }
    }
    io::BlockDevice* dev = &s.opened.device();
    s.cut = CutDevice::from_environment(*dev);
    if (s.cut) dev = s.cut.get();
    fs::EditOptions o;
    const auto epoch = core::source_date_epoch();
    o.now = epoch.value_or(static_cast<std::int64_t>(std::time(nullptr)));
    o.clamp = epoch;
    io::FileImage* file = s.opened.file.get();
    o.barrier = [file] { file->sync(); };
    o.check_touched = check_touched && !mode.safety.force_unsafe;
    s.editor = fs::open_editor(*dev, d.kind, std::move(o));
    return s;
}

/// "a/b/c" -> ("/a/b", "c"); "/" has no name.
std::pair<std::string, std::string> split_path(const std::string& path) {
    std::string p = fs::normalize_path(path);
    if (p == "/") return {"/", ""};
    const auto slash = p.rfind('/');
    return {slash == 0 ? "/" : p.substr(0, slash), p.substr(slash + 1)};
}

/// The directory at `path`, or Error(usage) naming why it is not one.
std::pair<fs::EditDir, fs::EditEntry> directory_at(fs::Editor& ed, const std::string& path) {
    const auto r = ed.lookup(path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist", shown(path)));
    if (!r->is_root && !r->is_dir)
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a directory", shown(path)));
    return {ed.directory_of(*r), *r};
}

/// The depth of a normalized image path: "/" 0, "/a/b" 2.
unsigned path_depth(std::string_view norm) {
    return norm == "/" ? 0 : static_cast<unsigned>(std::count(norm.begin(), norm.end(), '/'));
}

/// The deepest directory of a scanned tree below its node 0, in levels (0: none).
unsigned tree_height(const source::SourceTree& tree) {
    unsigned height = 0;
    std::vector<std::pair<std::uint32_t, unsigned>> todo{{0, 0}};  // (node, depth below node 0)
    while (!todo.empty()) {
        const auto [i, d] = todo.back();
        todo.pop_back();
        for (const std::uint32_t c : tree.nodes[i].children) {
            if (!tree.nodes[c].is_dir) continue;
            height = std::max(height, d + 1);
            todo.emplace_back(c, d + 1);
        }
    }
    return height;
}

/// Error(usage) when a directory would be made at `depth` (the root is 0):
/// deeper than fsck, ls -R and extract walk (check::kMaxDirectoryDepth).
void check_depth(unsigned depth, const std::string& path, std::string_view outcome = "nothing was made") {
    if (depth >= check::kMaxDirectoryDepth)
        throw Error(
            ErrorCode::usage,
            fmt::format("\"{}\" would put a directory {} levels below the root; fsimg makes at most {} "
                        "(deeper is damage to fsck, and ls -R and extract stop there); {}",
                        shown(path), depth, check::kMaxDirectoryDepth - 1, outcome));
}

/// Names Windows programs cannot open (CON, AUX.TXT...) are stored with a warning, as mkfs --from does.
void warn_device_name(const std::string& name) {
    if (core::is_windows_device_name(core::utf8_to_utf16(name)))
        warn(fmt::format("\"{}\" is a Windows device name: Windows programs cannot open it", shown(name)));
}

/// How many levels of directories lie below the directory at `path` (0: none),
/// walked through a view of the volume as it is now; the walk stops once it
/// is `limit` levels deep (the caller refuses then) and visits each directory
/// once (the volume was checked for loops first, unless --force-unsafe).
unsigned subtree_height(io::BlockDevice& device, const std::string& path, unsigned limit) {
    const auto view = fs::open_view(device);
    const auto top = view->lookup(path);
    if (!top || !top->is_dir) return 0;
    unsigned height = 0;
    std::set<std::uint64_t> seen{top->id};
    std::vector<std::pair<fs::Entry, unsigned>> todo{{*top, 0}};
    std::vector<std::string> problems;
    while (!todo.empty() && height < limit) {
        auto [dir, d] = std::move(todo.back());
        todo.pop_back();
        for (fs::Entry& e : view->list(dir, problems)) {
            if (!e.is_dir || !seen.insert(e.id).second) continue;
            height = std::max(height, d + 1);
            todo.emplace_back(std::move(e), d + 1);
        }
    }
    return height;
}

// --- mkdir ---------------------------------------------------------------------------------------

struct MkdirArgs {
    std::string image;
    std::vector<std::string> paths;
    bool parents = false;
    bool json = false;
    Safety safety;
};

int run_mkdir(const MkdirArgs& a) {
    Session s = open_session(a.image, "mkdir", {true, a.safety});
    s.json = a.json;
    for (const std::string& path : a.paths) {
        s.each(path, [&] {
            const std::string norm = fs::normalize_path(path);
            if (norm == "/") {
                if (!a.parents) s.failed(path, "the root directory exists");
                return;
            }
            check_depth(path_depth(norm), path);
            // Every component is checked before anything is made ("." and ".." are not names here).
            for (std::size_t b = 1; b <= norm.size();) {
                const std::size_t e = std::min(norm.find('/', b), norm.size());
                const std::string c = norm.substr(b, e - b);
                if (auto why = s.ed().name_problem(c))
                    throw Error(ErrorCode::usage, fmt::format("\"{}\": {}", c, *why));
                warn_device_name(c);
                b = e + 1;
            }
            // The levels that are missing, and what making them all allocates, before the first
            // write: a volume without room for every level refuses with nothing made.
            {
                fs::EditDir dir = 0;
                std::vector<std::string> missing;
                for (std::size_t pos = 1; pos <= norm.size();) {
                    const std::size_t next = std::min(norm.find('/', pos), norm.size());
                    const std::string name = norm.substr(pos, next - pos);
                    if (missing.empty()) {
                        const auto r = s.ed().find(dir, name);
                        if (r && r->is_dir) {
                            dir = s.ed().directory_of(*r);
                        } else if (!r) {
                            missing.push_back(name);
                        }
                    } else {
                        missing.push_back(name);
                    }
                    pos = next + 1;
                }
                if (!missing.empty() && (a.parents || missing.size() == 1)) {
                    const std::uint32_t first[] = {s.ed().entry_slots(missing.front())};
                    std::uint64_t need = s.ed().growth_clusters(dir, first);
                    for (std::size_t i = 0; i < missing.size(); ++i) {
                        std::vector<std::uint32_t> below;
                        if (i + 1 < missing.size()) below.push_back(s.ed().entry_slots(missing[i + 1]));
                        need += s.ed().new_directory_clusters(below);
                    }
                    s.ed().check_free(need);
                }
            }
            // Walk down, creating missing parents with -p.
            fs::EditDir dir = 0;  // the root
            std::string at;
            std::size_t pos = 1;
            while (pos <= norm.size()) {
                const std::size_t next = std::min(norm.find('/', pos), norm.size());
                const std::string name = norm.substr(pos, next - pos);
                const bool last = next == norm.size();
                at += "/" + name;
                const auto r = s.ed().find(dir, name);
                if (r) {
                    if (!r->is_dir)
                        throw Error(ErrorCode::usage,
                                    fmt::format("\"{}\" exists and is not a directory", at));
                    if (last && !a.parents) throw Error(ErrorCode::usage, fmt::format("\"{}\" exists", at));
                    dir = s.ed().directory_of(*r);
                } else if (!last && !a.parents) {
                    throw Error(ErrorCode::usage,
                                fmt::format("\"{}\" does not exist (mkdir -p makes the parents)", at));
                } else {
                    const fs::EditEntry made = s.ed().add_directory(dir, name, fs::NewEntry{});
                    dir = s.ed().directory_of(made);
                    s.record({{"action", "mkdir"}, {"path", jtext(at)}});
                }
                pos = next + 1;
            }
        });
    }
    return s.done(a.json);
}

// --- rm ------------------------------------------------------------------------------------------

struct RmArgs {
    std::string image;
    std::vector<std::string> paths;
    bool recursive = false;
    bool force = false;
    bool json = false;
    Safety safety;
};

int run_rm(const RmArgs& a) {
    const std::vector<std::string> paths = expand_paths(a.image, a.paths);
    Session s = open_session(a.image, "rm", {true, a.safety});
    s.json = a.json;
    for (const std::string& path : paths) {
        s.each(path, [&] {
            const auto [parent, name] = split_path(path);
            if (name.empty()) throw Error(ErrorCode::usage, "the root directory cannot be removed");
            const auto pr = s.ed().lookup(parent);
            std::optional<fs::EditEntry> r;
            fs::EditDir dir = 0;
            if (pr && (pr->is_root || pr->is_dir)) {
                dir = s.ed().directory_of(*pr);
                r = s.ed().find(dir, name);
            }
            if (!r) {
                if (!a.force) s.failed(path, "no such file or directory");
                return;
            }
            if (r->is_dir && !a.recursive)
                throw Error(ErrorCode::usage, "is a directory (rm -r removes it and everything below it)");
            s.ed().remove(dir, *r);
            s.record({{"action", "rm"}, {"path", jtext(fs::normalize_path(path))}, {"directory", r->is_dir}});
        });
    }
    return s.done(a.json);
}

// --- cp ------------------------------------------------------------------------------------------

struct CpArgs {
    std::string image;
    std::vector<std::string> operands;  // SRC... DEST
    bool recursive = false;
    bool force = false;
    bool preserve = false;
    bool json = false;
    Safety safety;
};

fs::NewEntry info_of(const source::TreeNode& n, bool preserve) {
    fs::NewEntry i;
    if (preserve && n.has_times) {
        i.mtime = n.mtime;
        i.mtime_ns = n.mtime_ns;
        i.btime = n.btime;
        i.btime_ns = n.btime_ns;
    }
    i.read_only = preserve && !n.is_dir && n.read_only;
    return i;
}

/// A tree of one host file (a command-line operand that is not a directory).
source::SourceTree single_file_tree(const std::string& host_path, const struct stat& st) {
    source::SourceTree t;
    t.nodes.resize(2);
    t.nodes[0].is_dir = true;
    t.nodes[0].children = {1};
    source::TreeNode& n = t.nodes[1];
    n.name = std::filesystem::path(host_path).filename().string();
    n.size = static_cast<std::uint64_t>(st.st_size);
    n.host_path = host_path;
    n.mtime = st.st_mtim.tv_sec;
    n.mtime_ns = static_cast<std::uint32_t>(st.st_mtim.tv_nsec);
    n.btime = st.st_mtim.tv_sec;
    n.atime = st.st_atim.tv_sec;
    n.has_times = true;
    n.read_only =
        (st.st_mode & 0222) == 0;  // as the tree scan decides it (not access(2): root may write anything)
    n.host_dev = static_cast<std::uint64_t>(st.st_dev);
    n.host_ino = static_cast<std::uint64_t>(st.st_ino);
    n.parent = 0;
    t.files = 1;
    t.data_bytes = n.size;
    return t;
}

void copy_children(Session& s, const CpArgs& a, const source::SourceTree& tree, source::SourceReader& reader,
                   std::uint32_t i, fs::EditDir dir, const std::string& image_path);

/// Copies node `i` of `tree` (and, for a directory, everything below it)
/// into directory `dir` as `name`.
void copy_node(Session& s, const CpArgs& a, const source::SourceTree& tree, source::SourceReader& reader,
               std::uint32_t i, fs::EditDir dir, const std::string& name, const std::string& image_path) {
    const source::TreeNode& n = tree.nodes[i];
    const auto existing = s.ed().find(dir, name);
    if (!n.is_dir) {
        const source::SourceFile f = reader.open(i);
        if (existing) {
            if (existing->is_dir)
                throw Error(ErrorCode::usage,
                            fmt::format("\"{}\" is a directory; a file is not copied over it", image_path));
            if (!a.force)
                throw Error(ErrorCode::usage, fmt::format("\"{}\" exists (cp -f replaces it)", image_path));
            s.ed().replace_file(dir, *existing, f, info_of(n, a.preserve));
            s.record({{"action", "replace"}, {"path", jtext(image_path)}, {"bytes", f.size()}});
        } else {
            s.ed().add_file(dir, name, f, info_of(n, a.preserve));
            s.record({{"action", "cp"}, {"path", jtext(image_path)}, {"bytes", f.size()}});
        }
        return;
    }
    fs::EditDir sub = 0;
    if (existing) {
        if (!existing->is_dir)
            throw Error(ErrorCode::usage, fmt::format("\"{}\" exists and is not a directory", image_path));
        sub = s.ed().directory_of(*existing);
    } else {
        sub = s.ed().directory_of(s.ed().add_directory(dir, name, info_of(n, a.preserve)));
        s.record({{"action", "mkdir"}, {"path", jtext(image_path)}});
    }
    copy_children(s, a, tree, reader, i, sub, image_path);
}

/// copy_node of each child of directory node `i` of `tree` into image
/// directory `dir` (at `image_path`) under its own name; a refused child
/// is reported and the others still copied.
void copy_children(Session& s, const CpArgs& a, const source::SourceTree& tree, source::SourceReader& reader,
                   std::uint32_t i, fs::EditDir dir, const std::string& image_path) {
    for (const std::uint32_t c : tree.nodes[i].children) {
        const std::string child_path = (image_path == "/" ? "" : image_path) + "/" + tree.nodes[c].name;
        try {
            copy_node(s, a, tree, reader, c, dir, tree.nodes[c].name, child_path);
        } catch (const Error& e) {
            if (e.code() != ErrorCode::usage) throw;  // no space, a source that changed: stop
            s.failed(child_path, e.what());
        }
    }
}

/// What a cp allocates, found before its first write: the clusters of the
/// data and the new directories, and the new entries of each existing
/// directory (their growth asked of the editor once, for all of them).
struct CpPlan {
    std::uint64_t clusters = 0;
    std::map<fs::EditDir, std::vector<std::uint32_t>> sets;
};

/// The clusters node `i` of `tree` takes when it is new, with everything below it.
std::uint64_t new_clusters(const fs::Editor& ed, const source::SourceTree& tree, std::uint32_t i) {
    std::uint64_t total = 0;
    std::vector<std::uint32_t> todo{i};
    std::vector<std::uint32_t> slots;
    while (!todo.empty()) {
        const source::TreeNode& n = tree.nodes[todo.back()];
        todo.pop_back();
        if (!n.is_dir) {
            total += ed.data_clusters(n.size);
            continue;
        }
        slots.clear();
        for (const std::uint32_t c : n.children) {
            slots.push_back(ed.entry_slots(tree.nodes[c].name));
            todo.push_back(c);
        }
        total += ed.new_directory_clusters(slots);
    }
    return total;
}

/// Adds to `plan` what copy_node allocates for node `i` of `tree` copied
/// into `dir` as `name`: a replaced file's new data (before its old data is
/// freed), a new entry, a new subtree, or the children merged into an
/// existing directory. What copy_node refuses (a file over a directory, an
/// existing file without -f) allocates nothing.
void plan_node(fs::Editor& ed, const CpArgs& a, const source::SourceTree& tree, std::uint32_t i,
               fs::EditDir dir, const std::string& name, CpPlan& plan) {
    const source::TreeNode& n = tree.nodes[i];
    const auto existing = ed.find(dir, name);
    if (!existing) {
        plan.sets[dir].push_back(ed.entry_slots(name));
        plan.clusters += new_clusters(ed, tree, i);
    } else if (!n.is_dir) {
        if (!existing->is_dir && a.force) plan.clusters += ed.data_clusters(n.size);
    } else if (existing->is_dir) {
        const fs::EditDir sub = ed.directory_of(*existing);
        for (const std::uint32_t c : n.children) plan_node(ed, a, tree, c, sub, tree.nodes[c].name, plan);
    }
}

/// One SRC of a cp, resolved before anything is written.
struct CpOperand {
    std::string src;
    fs::EditDir dir = 0;
    std::string name;
    std::string image_path;
    source::SourceTree tree;
    bool is_dir = false;
    bool contents = false;  ///< SRC/. into an existing DEST: the directory's children go into DEST itself
};

int run_cp(const CpArgs& a) {
    if (a.operands.size() < 2) throw Error(ErrorCode::usage, "cp needs SRC... DEST");
    Session s = open_session(a.image, "cp", {true, a.safety});
    s.json = a.json;
    const std::vector<std::string> sources(a.operands.begin(), a.operands.end() - 1);
    const std::string dest = fs::normalize_path(a.operands.back());
    const auto dest_record = s.ed().lookup(dest);
    const bool into_dir = dest_record && (dest_record->is_root || dest_record->is_dir);
    if (!into_dir && sources.size() > 1)
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" is not a directory (several sources need one)", dest));
    if (!into_dir && a.operands.back().size() > 1 && a.operands.back().back() == '/')
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a directory", a.operands.back()));
    // First every SRC is resolved, scanned and checked, and what the whole copy allocates is
    // planned: a copy that does not fit is refused before its first write (issue 40).
    std::vector<CpOperand> operands;
    CpPlan plan;
    for (const std::string& src : sources) {
        CpOperand op;
        op.src = src;
        try {
            // The operand's own name, also for a symbolic link (followed: its target's content is copied, as
            // cp does).
            std::string trimmed = src;
            while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
            std::string name = std::filesystem::path(trimmed).filename().string();
            // "SRC/." names the directory itself, as cp takes it: copied into an existing DEST as
            // DEST/., its children go into DEST (GNU cp's and POSIX's cp -R DIR/. DEST).
            op.contents = into_dir && name == ".";
            std::string host = src;
            struct stat st {};
            if (::lstat(src.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
                char resolved[PATH_MAX];
                if (::realpath(src.c_str(), resolved) == nullptr)
                    throw Error(ErrorCode::usage, fmt::format("{} is a symbolic link to nothing ({})", src,
                                                              std::strerror(errno)));
                host = resolved;
            }
            if (::lstat(host.c_str(), &st) != 0)
                throw Error(ErrorCode::usage, fmt::format("cannot read {}: {}", src, std::strerror(errno)));
            if (name.empty() || name == "." || name == "..") {
                char resolved[PATH_MAX];
                if (::realpath(host.c_str(), resolved) != nullptr)
                    name = std::filesystem::path(resolved).filename().string();
            }
            if (op.contents) {
                op.dir = s.ed().directory_of(*dest_record);
                op.image_path = dest;
            } else if (into_dir) {
                op.dir = s.ed().directory_of(*dest_record);
                op.image_path = (dest == "/" ? "" : dest) + "/" + name;
            } else {
                const auto [parent, leaf] = split_path(dest);
                op.dir = directory_at(s.ed(), parent).first;
                name = leaf;
                op.image_path = dest;
            }
            op.name = name;
            op.is_dir = S_ISDIR(st.st_mode);
            if (op.is_dir) {
                if (!a.recursive)
                    throw Error(ErrorCode::usage,
                                fmt::format("{} is a directory (cp -r copies directories)", src));
                op.tree =
                    source::scan_host_trees({source::TreeSource{host, "/"}}, source::SymlinkPolicy::skip);
                check_depth(path_depth(fs::normalize_path(op.image_path)) + tree_height(op.tree),
                            op.image_path);
                s.ed().check_tree(op.tree);
                for (const std::string& w : op.tree.warnings) warn(w);
                if (!op.tree.problems.empty()) {
                    std::string why;
                    for (const auto& p : op.tree.problems)
                        why += fmt::format("\n  {}: {}", shown(p.path), p.reason);
                    throw Error(ErrorCode::usage, fmt::format("{} cannot be stored on {}:{}", src,
                                                              fs::label(s.ed().kind()), why));
                }
            } else if (S_ISREG(st.st_mode)) {
                op.tree = single_file_tree(host, st);
                if (auto why = s.ed().name_problem(name)) throw Error(ErrorCode::usage, *why);
                warn_device_name(name);
            } else {
                throw Error(ErrorCode::usage, fmt::format("{} is not a regular file or directory", src));
            }
            if (op.contents && !op.is_dir)
                throw Error(ErrorCode::usage, fmt::format("{} is not a directory", src));
            CpPlan mine = plan;  // kept only when the whole operand was planned
            if (op.contents) {
                for (const std::uint32_t c : op.tree.nodes[0].children)
                    plan_node(s.ed(), a, op.tree, c, op.dir, op.tree.nodes[c].name, mine);
            } else {
                plan_node(s.ed(), a, op.tree, op.is_dir ? 0 : 1, op.dir, op.name, mine);
            }
            plan = std::move(mine);
            operands.push_back(std::move(op));
        } catch (const Error& e) {
            if (e.code() != ErrorCode::usage && e.code() != ErrorCode::io) throw;
            s.failed(op.image_path.empty() ? src : op.image_path, e.what());
        }
    }
    try {
        std::uint64_t need = plan.clusters;
        for (const auto& [dir, sets] : plan.sets) need += s.ed().growth_clusters(dir, sets);
        s.ed().check_free(need);
    } catch (const Error& e) {
        if (e.code() != ErrorCode::io) throw;
        s.failed(dest, fmt::format("{}; nothing was copied", e.what()));
        return s.done(a.json);
    }
    for (CpOperand& op : operands) {
        try {
            // A file that reports 0 bytes (procfs, sysfs, FUSE) is read to its end, as GNU cp does,
            // up to what the volume could hold and at most kMaxUnsizedBytes of memory.
            source::ReadOptions ro;
            ro.unsized_limit = std::min<std::uint64_t>(s.opened.device().size(), kMaxUnsizedBytes);
            source::SourceReader reader(op.tree, ro);
            if (op.contents)
                copy_children(s, a, op.tree, reader, 0, op.dir, op.image_path);
            else
                copy_node(s, a, op.tree, reader, op.is_dir ? 0 : 1, op.dir, op.name, op.image_path);
        } catch (const Error& e) {
            if (e.code() != ErrorCode::usage && e.code() != ErrorCode::io) throw;
            s.failed(op.image_path, e.what());
            if (e.code() == ErrorCode::io) break;  // a changed source: nothing more is tried
        }
    }
    return s.done(a.json);
}

// --- mv ------------------------------------------------------------------------------------------

struct MvArgs {
    std::string image;
    std::vector<std::string> operands;
    bool force = false;
    bool json = false;
    Safety safety;
};

int run_mv(const MvArgs& a) {
    if (a.operands.size() < 2) throw Error(ErrorCode::usage, "mv needs SRC... DEST");
    Session s = open_session(a.image, "mv", {true, a.safety});
    s.json = a.json;
    const std::vector<std::string> sources(a.operands.begin(), a.operands.end() - 1);
    const std::string dest = fs::normalize_path(a.operands.back());
    for (const std::string& src : sources) {
        s.each(src, [&] {
            const auto [sparent, sname] = split_path(src);
            if (sname.empty()) throw Error(ErrorCode::usage, "the root directory cannot be moved");
            const fs::EditDir from = directory_at(s.ed(), sparent).first;
            const auto r = s.ed().find(from, sname);
            if (!r) throw Error(ErrorCode::usage, "no such file or directory");
            const auto d = s.ed().lookup(dest);
            fs::EditDir to = 0;
            std::string name;
            if (d && (d->is_root || d->is_dir)) {
                const fs::EditDir dd = s.ed().directory_of(*d);
                // "mv a A" where a is a directory: DEST is the source itself, renamed in case.
                const auto [dparent, dname] = split_path(dest);
                if (!d->is_root && r->is_dir && dd == s.ed().directory_of(*r) &&
                    directory_at(s.ed(), dparent).first == from) {
                    to = from;
                    name = dname;
                } else {
                    to = dd;
                    name = r->name;
                }
            } else {
                const auto [dparent, dname] = split_path(dest);
                if (dname.empty()) throw Error(ErrorCode::usage, "cannot move onto the root directory");
                if (a.operands.back().size() > 1 && a.operands.back().back() == '/')
                    throw Error(ErrorCode::usage,
                                fmt::format("\"{}\" is not a directory", a.operands.back()));
                if (sources.size() > 1)
                    throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a directory", dest));
                to = directory_at(s.ed(), dparent).first;
                name = dname;
            }
            if (to == from && name == r->name) return;  // nothing to do
            if (r->is_dir && to != from) {
                // The moved directory lands one level below its new parent, its subtree with it.
                const std::string parent = d && (d->is_root || d->is_dir) ? dest : split_path(dest).first;
                const unsigned depth = path_depth(parent) + 1;
                check_depth(depth, dest, "nothing was moved");  // no walk when it is too deep itself
                check_depth(depth + subtree_height(s.opened.device(), fs::normalize_path(src),
                                                   check::kMaxDirectoryDepth - depth),
                            dest, "nothing was moved");
            }
            warn_device_name(name);
            s.ed().rename(from, *r, to, name, a.force);
            s.record({{"action", "mv"},
                      {"from", jtext(fs::normalize_path(src))},
                      {"to", jtext(to == from ? (sparent == "/" ? "" : sparent) + "/" + name : dest)}});
        });
    }
    return s.done(a.json);
}

// --- label ---------------------------------------------------------------------------------------

struct LabelArgs {
    std::string image;
    std::optional<std::string> label;
    std::optional<std::string> volume_id;
    bool json = false;
    Safety safety;
};

int run_label(const LabelArgs& a) {
    // Everything given is checked before anything is written (--volume-id as mkfs takes it).
    const bool set_id = a.volume_id.has_value();
    const bool change = a.label.has_value() || set_id;
    Session s = open_session(a.image, "label", {change, a.safety});
    s.json = a.json;
    // The serial's width is the filesystem's: 32 bits on FAT and exFAT, 64 on NTFS (as mkfs takes it).
    const unsigned bits = s.ed().volume_id_bits();
    const std::uint64_t new_id = set_id ? parse_hex_volume_id(*a.volume_id, bits) : 0;
    const auto id_text = [bits](std::uint64_t id) {
        return bits == 64 ? fmt::format("{:016X}", id) : fmt::format("{:04X}-{:04X}", id >> 16, id & 0xFFFF);
    };
    if (a.label) s.ed().check_label(*a.label);
    if (a.label) {
        s.ed().set_label(*a.label);
        if (!a.label->empty() && s.ed().windows_upper_cases_labels()) {
            bool lower = false;
            for (char c : *a.label) lower = lower || (c >= 'a' && c <= 'z');
            if (lower)
                warn(fmt::format(
                    "label \"{}\" has lower-case letters: Linux and macOS show it as stored, Windows "
                    "writes labels in upper case",
                    *a.label));
        }
        s.record({{"action", "label"}, {"label", jtext(*a.label)}});
    }
    if (set_id) {
        s.ed().set_volume_id(new_id);
        s.record({{"action", "volume_id"}, {"volume_id", id_text(new_id)}});
    }
    if (change) s.finish();
    const std::uint64_t id = s.ed().volume_id();
    const std::string label = s.ed().label();
    if (a.json) {
        nlohmann::json j{{"image", a.image}, {"label", jtext(label)}, {"volume_id", id_text(id)}};
        if (change) j["changes"] = s.changes;
        fmt::print("{}\n", j.dump(2));
    } else if (!change) {
        fmt::print("{}\n", shown(label));
    }
    return s.status;
}

// --- attrib --------------------------------------------------------------------------------------

struct AttribArgs {
    std::string image;
    std::vector<std::string> rest;  // [+|-]{r,h,s,a}... PATH...
    bool json = false;
    Safety safety;
};

std::string attrib_letters(std::uint8_t a) {
    std::string t;
    t += (a & fs::kAttrArchive) ? 'A' : '-';
    t += (a & fs::kAttrSystem) ? 'S' : '-';
    t += (a & fs::kAttrHidden) ? 'H' : '-';
    t += (a & fs::kAttrReadOnly) ? 'R' : '-';
    return t;
}

int run_attrib(const AttribArgs& a) {
    std::uint8_t set = 0, clear = 0;
    std::vector<std::string> paths;
    for (const std::string& t : a.rest) {
        // Every +x / -x word is a change wherever it stands (CLI11 hands over
        // what it takes for options apart from the rest); a path that looks
        // like one is written with its leading "/".
        if (t.size() >= 2 && (t[0] == '+' || t[0] == '-') && t[1] != '/') {
            for (std::size_t i = 1; i < t.size(); ++i) {
                std::uint8_t bit = 0;
                switch (t[i]) {
                    case 'r':
                    case 'R':
                        bit = fs::kAttrReadOnly;
                        break;
                    case 'h':
                    case 'H':
                        bit = fs::kAttrHidden;
                        break;
                    case 's':
                    case 'S':
                        bit = fs::kAttrSystem;
                        break;
                    case 'a':
                    case 'A':
                        bit = fs::kAttrArchive;
                        break;
                    default:
                        throw Error(ErrorCode::usage,
                                    fmt::format("attrib: \"{}\": attributes are r (read-only), h (hidden), s "
                                                "(system) and a (archive)",
                                                t));
                }
                (t[0] == '+' ? set : clear) |= bit;
            }
        } else {
            paths.push_back(t);
        }
    }
    if (paths.empty()) throw Error(ErrorCode::usage, "attrib needs at least one PATH");
    if (set & clear) throw Error(ErrorCode::usage, "attrib: an attribute is both set and cleared");
    paths = expand_paths(a.image, paths);
    Session s = open_session(a.image, "attrib", {(set | clear) != 0, a.safety});
    s.json = a.json;
    nlohmann::json listing = nlohmann::json::array();
    for (const std::string& path : paths) {
        s.each(path, [&] {
            const auto [parent, name] = split_path(path);
            if (name.empty()) throw Error(ErrorCode::usage, "the root directory has no attributes");
            const fs::EditDir dir = directory_at(s.ed(), parent).first;
            auto r = s.ed().find(dir, name);
            if (!r) throw Error(ErrorCode::usage, "no such file or directory");
            if (set | clear) {
                s.ed().set_attributes(dir, *r, set, clear);
                r = s.ed().find(dir, name);
                s.record({{"action", "attrib"},
                          {"path", jtext(fs::normalize_path(path))},
                          {"attributes", attrib_letters(r->attributes)}});
            } else if (a.json) {
                listing.push_back({{"path", jtext(fs::normalize_path(path))},
                                   {"attributes", attrib_letters(r->attributes)}});
            } else {
                fmt::print("{}  {}\n", attrib_letters(r->attributes), shown(fs::normalize_path(path)));
            }
        });
    }
    if (set | clear) s.finish();
    if (a.json) {
        nlohmann::json j{{"image", a.image}};
        if (set | clear)
            j["changes"] = s.changes;
        else
            j["entries"] = listing;
        fmt::print("{}\n", j.dump(2));
    }
    return s.status;
}

constexpr const char* kImageHelp = "Image file (not .gz); IMAGE@N selects partition N";

}  // namespace

Action add_mkdir(CLI::App& app) {
    auto a = std::make_shared<MkdirArgs>();
    CLI::App* cmd = app.add_subcommand("mkdir", "Make directories in a FAT, exFAT or NTFS image");
    cmd->footer("Examples:\n  fsimg mkdir card.img /DCIM\n  fsimg mkdir -p disk.img@1 /boot/overlays/extra");
    cmd->add_option("IMAGE", a->image, kImageHelp)->required();
    cmd->add_option("PATH", a->paths, "Directories to make")->required();
    cmd->add_flag("-p,--parents", a->parents, "Make missing parents; an existing directory is no error");
    cmd->add_flag("--json", a->json, "Report what changed as JSON");
    add_safety_options(cmd, a->safety);
    return [a] { return run_mkdir(*a); };
}

Action add_rm(CLI::App& app) {
    auto a = std::make_shared<RmArgs>();
    CLI::App* cmd = app.add_subcommand("rm", "Remove files and directories from a FAT, exFAT or NTFS image");
    cmd->footer("Examples:\n  fsimg rm card.img /old.log\n  fsimg rm -r -f disk.img@1 /tmp");
    cmd->add_option("IMAGE", a->image, kImageHelp)->required();
    cmd->add_option("PATH", a->paths, "Files (and with -r directories) to remove")->required();
    cmd->add_flag("-r,-R,--recursive", a->recursive, "Remove directories and everything below them");
    cmd->add_flag("-f,--force", a->force, "A path that does not exist is no error");
    cmd->add_flag("--json", a->json, "Report what changed as JSON");
    add_safety_options(cmd, a->safety);
    return [a] { return run_rm(*a); };
}

Action add_cp(CLI::App& app) {
    auto a = std::make_shared<CpArgs>();
    CLI::App* cmd =
        app.add_subcommand("cp", "Copy host files and directories into a FAT, exFAT or NTFS image");
    cmd->footer(
        "Examples:\n"
        "  fsimg cp boot.img config.txt /\n"
        "  fsimg cp -f boot.img new-config.txt /config.txt\n"
        "  SOURCE_DATE_EPOCH=0 fsimg cp -r disk.img@1 overlays /boot");
    cmd->add_option("IMAGE", a->image, kImageHelp)->required();
    cmd->add_option("SRC_DEST", a->operands,
                    "Host files or directories, then the image directory or new name")
        ->required()
        ->expected(2, -1);
    cmd->add_flag("-r,-R,--recursive", a->recursive, "Copy directories and everything below them");
    cmd->add_flag("-f,--force", a->force, "Replace existing files");
    cmd->add_flag(
        "-p,--preserve", a->preserve,
        "Keep the source's modification and creation times (else now or SOURCE_DATE_EPOCH), and read-only");
    cmd->add_flag("--json", a->json, "Report what changed as JSON");
    add_safety_options(cmd, a->safety);
    return [a] { return run_cp(*a); };
}

Action add_mv(CLI::App& app) {
    auto a = std::make_shared<MvArgs>();
    CLI::App* cmd =
        app.add_subcommand("mv", "Rename or move files and directories inside a FAT, exFAT or NTFS image");
    cmd->footer(
        "Examples:\n  fsimg mv card.img /readme.txt /README.TXT\n  fsimg mv disk.img@1 /a.txt /b.txt "
        "/archive");
    cmd->add_option("IMAGE", a->image, kImageHelp)->required();
    cmd->add_option("SRC_DEST", a->operands, "Paths in the image, then the destination directory or new name")
        ->required()
        ->expected(2, -1);
    cmd->add_flag("-f,--force", a->force, "Replace an existing file of the destination name");
    cmd->add_flag("--json", a->json, "Report what changed as JSON");
    add_safety_options(cmd, a->safety);
    return [a] { return run_mv(*a); };
}

Action add_label(CLI::App& app) {
    auto a = std::make_shared<LabelArgs>();
    CLI::App* cmd =
        app.add_subcommand("label", "Show or set the label and serial number of a FAT, exFAT or NTFS image");
    cmd->footer(
        "Examples:\n  fsimg label card.img\n  fsimg label card.img BOOT --volume-id 1234-ABCD\n  fsimg label "
        "card.img ''");
    cmd->add_option("IMAGE", a->image, kImageHelp)->required();
    cmd->add_option(
        "NEW", a->label,
        "The new label (FAT: up to 11 ASCII characters, exFAT: 11 UTF-16 units, NTFS: 128; '' removes "
        "it)");
    cmd->add_option("--volume-id", a->volume_id,
                    "The new volume serial number (8 hex digits; NTFS: up to 16)")
        ->type_name("HEX");
    cmd->add_flag("--json", a->json, "Print the label and serial (and what changed) as JSON");
    add_safety_options(cmd, a->safety);
    return [a] { return run_label(*a); };
}

Action add_attrib(CLI::App& app) {
    auto a = std::make_shared<AttribArgs>();
    CLI::App* cmd =
        app.add_subcommand("attrib", "Show or change the attributes of files in a FAT, exFAT or NTFS image");
    cmd->footer(
        "Examples:\n  fsimg attrib card.img /boot.ini\n  fsimg attrib card.img +r +h /boot.ini\n  fsimg "
        "attrib card.img -a /data/log.txt");
    cmd->add_flag("--json", a->json, "Report as JSON");
    add_safety_options(cmd, a->safety);
    cmd->add_option("IMAGE", a->image, kImageHelp)->required();
    cmd->add_option("CHANGES_PATHS", a->rest, "[+|-]{r,h,s,a}... then PATH...");
    // -a, -h, -r, -s after IMAGE are attribute changes (as mattrib has them), not options.
    cmd->set_help_flag("--help", "Print this help message and exit");
    cmd->prefix_command();
    return [a, cmd] {
        AttribArgs args = *a;
        for (const std::string& x : cmd->remaining()) {
            if (x == "--json") {
                args.json = true;
            } else {
                args.rest.push_back(x);
            }
        }
        return run_attrib(args);
    };
}

}  // namespace fsimg::cli
