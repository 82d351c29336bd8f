// fsimg extract: copy a subtree of a FAT, exFAT or NTFS image into a host
// directory.
//
// Safety: every file and directory is created relative to its parent's
// directory descriptor (openat/mkdirat), names holding '/' or NUL and the
// names "." and ".." are refused, nothing is followed through a symbolic link
// (O_NOFOLLOW), and existing files are only replaced with --force. So nothing
// is written outside OUTDIR.
//
// Nothing existing is rewritten in place: --force writes a new file next to
// the target and renames it over only when the copy succeeded (a damaged
// image keeps the user's file; a hard link to a file outside OUTDIR is never
// written through: the target becomes a new inode), and the image being read
// is never replaced (device and inode compared). Output is bounded by what
// the image holds: each directory is extracted once (a visited set: a DAG of
// directories is not multiplied), files sharing one cluster chain
// (cross-linked) are written once and the others refused with a warning
// (--force-crosslinked copies them), NTFS hard links become host hard links,
// and all-zero runs are written as holes (lseek), so a sparse file stays sparse. NTFS symbolic links are
// created only when their target stays inside OUTDIR by its very spelling (link_target_problem), so that no
// link made here leads out of it either.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "fat_view.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"
#include "output.hpp"
#include "view.hpp"

namespace fsimg::cli {

namespace {

struct ExtractArgs {
    std::string image;
    std::string path = "/";
    std::string outdir;
    bool force = false;
    bool force_crosslinked = false;
    bool salvage = false;
    bool partial = false;  ///< --partial: salvaged files written as NAME.partial
    bool deleted = false;  ///< --deleted: the recoverable deleted files instead of the live ones
    bool utc = false;
    bool verbose = false;
    std::string streams = "files";  ///< NTFS alternate data streams: "files" (name:stream) or "skip"
};

constexpr unsigned kMaxExtractDepth = check::kMaxDirectoryDepth;

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

std::string errno_text() { return std::strerror(errno); }

bool all_zero(std::span<const std::byte> s) {
    return s.empty() || (s[0] == std::byte{0} && std::memcmp(s.data(), s.data() + 1, s.size() - 1) == 0);
}

/// Writes a file's bytes, all-zero pieces of at least 4 KiB as holes (lseek),
/// and gives it its size at the end (ftruncate), so runs of zeros stay holes.
class HoleWriter {
public:
    HoleWriter(int fd, const std::string& path) : fd_(fd), path_(path) {}
    void write(std::span<const std::byte> s) {
        // Runs of non-zero 4 KiB blocks in one pwrite each; all-zero blocks skipped.
        constexpr std::size_t kBlock = 4096;
        std::size_t run = 0, pos = 0;
        while (pos < s.size()) {
            const std::size_t n = std::min(s.size() - pos, kBlock);
            if (n == kBlock && all_zero(s.subspan(pos, n))) {
                if (pos > run) put(s.subspan(run, pos - run));
                at_ += n;
                run = pos + n;
            }
            pos += n;
        }
        if (s.size() > run) put(s.subspan(run));
    }
    /// `n` bytes the image stores as a hole: never written.
    void skip(std::uint64_t n) { at_ += n; }
    void finish() {
        // The file is new: only a hole at its end needs the size set.
        if (at_ != written_end_ && ::ftruncate(fd_, static_cast<off_t>(at_)) != 0) host_error("size", errno);
    }

private:
    void put(std::span<const std::byte> s) {
        std::size_t done = 0;
        while (done < s.size()) {
            const ssize_t n = ::pwrite(fd_, s.data() + done, s.size() - done, static_cast<off_t>(at_ + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) host_error("write", n < 0 ? errno : ENOSPC);
            done += static_cast<std::size_t>(n);
        }
        at_ += s.size();
        written_end_ = at_;
    }
    // A file larger than the host filesystem allows (EFBIG: ext4 with 4 KiB
    // blocks stops 4 KiB short of 16 TiB) concerns this file only, so the
    // others are still extracted; any other failure (ENOSPC, EIO) stops.
    [[noreturn]] void host_error(const char* what, int err) const {
        if (err == EFBIG)
            throw Error(ErrorCode::unsupported,
                        fmt::format("{} bytes are more than the host filesystem holds in one file", at_));
        throw Error(ErrorCode::io, fmt::format("cannot {} {}: {}", what, path_, std::strerror(err)));
    }
    int fd_;
    const std::string& path_;
    std::uint64_t at_ = 0;
    std::uint64_t written_end_ = 0;  ///< the end of the last pwrite
};

struct Extractor {
    const ExtractArgs& a;
    const fs::View& v;
    int out_fd = -1;           ///< OUTDIR (hard links are made relative to it)
    std::string outdir_abs{};  ///< OUTDIR, absolute (for the signal cleanup of temporaries)
    dev_t image_dev = 0;       ///< the image being read: never an output
    ino_t image_ino = 0;
    std::vector<std::string> problems{};
    std::uint64_t files = 0, dirs = 0, bytes = 0, links = 0, links_skipped = 0, streams = 0,
                  streams_skipped = 0, hard_links = 0, crosslinked = 0, dags = 0, salvaged = 0,
                  deleted_reused = 0, crosslinked_written = 0;
    std::set<std::uint64_t> deleted_dirs{};  ///< --deleted: each deleted directory written once
    /// What the volume's check finds cross-linked (a directory's extract):
    /// FAT and exFAT files by path, NTFS files by MFT record.
    std::set<std::string> crossed_paths{};
    std::set<std::uint64_t> crossed_records{};
    core::VisitedDirectories visited{};
    /// Data already written, by identity (first cluster or MFT record, and
    /// stream): the OUTDIR-relative path it went to.
    std::map<std::pair<std::uint64_t, std::string>, std::string> written{};
    core::Progress* progress = nullptr;  ///< advanced by the bytes written (nullable)

    void problem(const std::string& path, const std::string& what) {
        problems.push_back(fmt::format("{}: {}", escape_name(path), what));
        warn(problems.back());
    }

    // Names the host cannot hold: empty, ".", "..", with '/' or NUL, over NAME_MAX bytes.
    static std::string host_name_problem(const std::string& n) {
        if (n.empty()) return "the name is empty";
        if (n == "." || n == "..") return fmt::format("the name \"{}\" cannot be created", n);
        if (n.find('/') != std::string::npos) return "the name holds '/', which a host name cannot";
        if (n.find('\0') != std::string::npos) return "the name holds a NUL character";
        if (n.size() > 255) return fmt::format("the name is {} bytes, more than the host's 255", n.size());
        return {};
    }

    // exFAT times with a UTC offset are exact; others (FAT, exFAT without
    // OffsetValid) are local time, or UTC with --utc.
    timespec to_host_time(const std::optional<fs::HostTime>& t) const {
        timespec ts{};
        if (!t) {
            ts.tv_nsec = UTIME_OMIT;
            return ts;
        }
        std::tm tm{};
        tm.tm_year = t->local.year - 1900;
        tm.tm_mon = int(t->local.month) - 1;
        tm.tm_mday = int(t->local.day);
        tm.tm_hour = int(t->local.hour);
        tm.tm_min = int(t->local.minute);
        tm.tm_sec = int(t->local.second);
        tm.tm_isdst = -1;
        if (t->utc_offset_minutes) {
            ts.tv_sec = timegm(&tm) - std::time_t{*t->utc_offset_minutes} * 60;
        } else {
            ts.tv_sec = a.utc ? timegm(&tm) : std::mktime(&tm);
        }
        ts.tv_nsec = t->local.nanosecond;
        return ts;
    }

    void set_times(int dirfd, const std::string& name, const fs::Entry& r, const std::string& path) {
        const timespec m = to_host_time(r.mtime);
        const timespec times[2] = {m, m};
        if (::utimensat(dirfd, name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
            problem(path, "cannot set the modification time: " + errno_text());
        }
    }

    /// The identity of a file's data: FAT/exFAT its first cluster, NTFS its
    /// record (and stream); nullopt for empty files, which share nothing.
    std::optional<std::pair<std::uint64_t, std::string>> data_key(const fs::Entry& r) const {
        if (r.size == 0 || r.id == 0) return std::nullopt;
        const std::size_t colon = r.is_stream ? r.name.rfind(':') : std::string::npos;
        return std::pair{r.id, colon == std::string::npos ? std::string() : r.name.substr(colon)};
    }

    /// Writes file `r` as `name` under dirfd; with `deleted`, that deleted file's data (read_deleted).
    void extract_file(int dirfd, const std::string& name, const std::string& path, const std::string& rel,
                      const fs::Entry& r, const fs::DeletedEntry* deleted = nullptr) {
        struct stat st {};
        const bool exists = ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (exists) {
            if (!a.force) return problem(path, "exists already (use --force to replace it)");
            if (!S_ISREG(st.st_mode))
                return problem(path, "exists and is not a regular file (a symbolic link is never followed)");
            if (st.st_dev == image_dev && st.st_ino == image_ino)
                return problem(path, "is the image being read; never replaced");
        }
        const auto key = data_key(r);
        if (key) {
            if (auto it = written.find(*key); it != written.end()) {
                if (v.kind() == fs::Kind::ntfs) {  // one record, several names: a hard link
                    if (exists && ::unlinkat(dirfd, name.c_str(), 0) != 0)
                        return problem(path, "cannot replace it: " + errno_text());
                    if (::linkat(out_fd, it->second.c_str(), dirfd, name.c_str(), 0) == 0) {
                        ++hard_links;
                        if (a.verbose) fmt::print("{} (hard link)\n", escape_name(path));
                        return;
                    }
                } else if (!a.force_crosslinked && !a.salvage) {
                    // Skipped: a problem (exit 1), on every filesystem alike.
                    ++crosslinked;
                    return problem(path,
                                   fmt::format("shares its clusters with /{} (cross-linked); not written "
                                               "again (--force-crosslinked writes it)",
                                               escape_name(it->second)));
                }
            }
        }
        // A new file is created as such (O_EXCL); an existing one is replaced by
        // a new file renamed over it once complete.
        std::string tmp;
        int fd = -1;
        if (!exists) {
            fd = ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        } else {
            const std::string prefix = io::temporary_prefix(name.size() > 200 ? name.substr(0, 200) : name);
            for (unsigned n = 0; n < 100 && fd < 0; ++n) {
                tmp = fmt::format("{}{:06}", prefix, (::getpid() * 7919u + n * 104729u) % 1000000u);
                fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              st.st_mode & 07777);
                if (fd < 0 && errno != EEXIST) break;
            }
        }
        if (fd < 0) return problem(path, "cannot create: " + errno_text());
        const std::string& created = exists ? tmp : name;
        io::SignalCleanup cleanup(
            outdir_abs + "/" +
            (rel.rfind('/') == std::string::npos ? std::string() : rel.substr(0, rel.rfind('/') + 1)) +
            created);
        Fd out(fd);
        std::string final_name = name;  // NAME.partial for a salvaged file with --partial
        bool was_salvaged = false;
        try {
            HoleWriter hw(out.get(), path);
            const auto data = [&](std::span<const std::byte> s) {
                hw.write(s);
                core::advance(progress, s.size());
            };
            if (deleted) {
                v.read_deleted(*deleted, data);
            } else if (a.salvage) {
                const fs::SalvageReport s = v.read_salvaged(r, data);
                if (s.salvaged || !s.damage.empty()) {
                    was_salvaged = true;
                    if (a.partial) final_name = name + ".partial";
                    problem(path,
                            fmt::format("damaged: {}; salvaged {}{}", s.damage, s.sources,
                                        a.partial ? fmt::format(" (written as {})", escape_name(final_name))
                                                  : std::string()));
                }
            } else {
                v.read_sparse(r, data, [&](std::uint64_t n) {
                    hw.skip(n);
                    core::advance(progress, n);
                });
            }
            hw.finish();
            if (final_name != name) {
                // NAME.partial: replaced only with --force, and only when it is a regular file.
                struct stat pst {};
                if (::fstatat(dirfd, final_name.c_str(), &pst, AT_SYMLINK_NOFOLLOW) == 0 &&
                    (!a.force || !S_ISREG(pst.st_mode)))
                    throw Error(
                        ErrorCode::refused,
                        fmt::format("{} exists already{}", escape_name(final_name),
                                    a.force ? " and is not a regular file" : " (use --force to replace it)"));
                if (::renameat(dirfd, created.c_str(), dirfd, final_name.c_str()) != 0)
                    throw Error(ErrorCode::io, fmt::format("cannot rename the salvaged {} to {}: {}", path,
                                                           escape_name(final_name), errno_text()));
            } else if (exists && ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) {
                throw Error(ErrorCode::io,
                            fmt::format("cannot rename the new {} into place: {}", path, errno_text()));
            }
        } catch (const Error& e) {
            ::unlinkat(dirfd, created.c_str(), 0);
            if (e.code() == ErrorCode::io) throw;
            return problem(path, fmt::format("not extracted{}: {}",
                                             exists ? " (the existing file is kept)" : "", e.what()));
        }
        cleanup.release();
        if (was_salvaged) ++salvaged;
        // Written as read, but one of two files sharing clusters holds the other's data there.
        if (!deleted && !a.salvage &&
            (v.kind() == fs::Kind::ntfs ? crossed_records.count(r.id) != 0
                                        : crossed_paths.count(path) != 0)) {
            ++crosslinked_written;
            problem(
                path,
                "shares clusters with another file (cross-linked; fsimg fsck names both): written as read, "
                "part of it may be the other file's data");
        }
        if (key) written.emplace(*key, rel + final_name.substr(name.size()));
        ++(r.is_stream ? streams : files);
        bytes += r.size;
        if (a.verbose) fmt::print("{}\n", escape_name(path));
        set_times(dirfd, final_name, r, path);
    }

    // Creates (or reuses) directory `name` under dirfd and returns its descriptor, or -1.
    int open_subdir(int dirfd, const std::string& name, const std::string& path) {
        if (::mkdirat(dirfd, name.c_str(), 0755) != 0 && errno != EEXIST) {
            problem(path, "cannot create the directory: " + errno_text());
            return -1;
        }
        const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) problem(path, "exists and is not a directory (a symbolic link is never followed)");
        return fd;
    }

    /// A directory reached through a second entry (a DAG) or looping back: skipped, with a warning.
    void reached_again(const std::string& path, std::uint64_t id) {
        ++dags;
        warn(
            fmt::format("{}: the same directory as {} (two entries lead to it, or it loops back); not "
                        "extracted again",
                        escape_name(path), escape_name(visited.first_path(id))));
    }

    void extract_dir(int dirfd, const std::string& path, const std::string& rel, const fs::Entry& dir,
                     unsigned depth) {
        const std::uint64_t cl = dir.id;
        if (!visited.enter(cl, path)) return reached_again(path, cl);
        if (depth >= kMaxExtractDepth)
            return problem(path, fmt::format("nested deeper than {} levels", kMaxExtractDepth));
        std::vector<fs::Entry> d;
        std::vector<std::string> skipped;
        try {
            d = v.list(dir, skipped);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return problem(path, fmt::format("cannot read the directory: {}", e.what()));
        }
        for (const auto& s : skipped) problem(path, s);
        for (const auto& r : d) {
            const std::string p = (path == "/" ? "/" : path + "/") + r.name;
            extract_entry(dirfd, r, p, rel.empty() ? r.name : rel + "/" + r.name, depth);
        }
    }

    /// A directory of OUTDIR made only when something is written into it (--deleted).
    struct LazyDir {
        std::function<int()> parent;  ///< the parent's descriptor (made on demand), or -1
        std::string name, path;       ///< empty name: the parent itself
        Extractor* x = nullptr;
        std::optional<Fd> fd{};
        int get() {
            if (name.empty()) return parent();
            if (!fd) {
                const int p = parent();
                fd.emplace(p < 0 ? -1 : x->open_subdir(p, name, path));
                if (fd->get() >= 0) ++x->dirs;
            }
            return fd->get();
        }
    };

    /// --deleted: the deleted files of `gone` (entries of the directory at `path`) that can still be
    /// read, and what the deleted directories among them still hold, below them.
    void write_deleted(LazyDir& out, const std::string& path, const std::string& rel,
                       const std::vector<fs::DeletedEntry>& gone, unsigned depth) {
        std::map<std::string, unsigned> names;  // a name deleted twice: NAME, NAME~2, ...
        const std::string prefix = path == "/" ? "/" : path + "/";
        for (const fs::DeletedEntry& d : gone) {
            if (d.state == "reused") {
                if (!d.is_dir) ++deleted_reused;
                continue;
            }
            const unsigned n = ++names[d.name];
            const std::string name = n == 1 ? d.name : fmt::format("{}~{}", d.name, n);
            const std::string p = prefix + name, r = rel.empty() ? name : rel + "/" + name;
            if (auto why = host_name_problem(name); !why.empty()) {
                problem(p, "skipped: " + why);
                continue;
            }
            if (d.is_dir) {
                if (depth + 1 >= kMaxExtractDepth || !deleted_dirs.insert(d.id).second) continue;
                const auto inside = v.list_deleted_in(d);
                if (inside.empty()) continue;
                LazyDir sub{[&out] { return out.get(); }, name, p, this};
                write_deleted(sub, p, r, inside, depth + 1);
                continue;
            }
            const int fd = out.get();
            if (fd < 0) return;
            fs::Entry e;
            e.name = name;
            e.size = d.size;
            e.mtime = d.mtime;
            extract_file(fd, name, p, r, e, &d);
        }
    }

    /// --deleted: the deleted files of `dir` that can still be read (ls --deleted's "recoverable" and
    /// "empty"), then those of the live directories below it, each where its directory would be.
    /// Deleted directories are not followed (their chains are gone); files whose clusters are in use
    /// again are counted, not written.
    void extract_deleted_dir(LazyDir& out, const std::string& path, const std::string& rel,
                             const fs::Entry& dir, unsigned depth) {
        if (!visited.enter(dir.id, path)) return reached_again(path, dir.id);
        if (depth >= kMaxExtractDepth)
            return problem(path, fmt::format("nested deeper than {} levels", kMaxExtractDepth));
        std::vector<fs::DeletedEntry> gone;
        std::vector<fs::Entry> live;
        std::vector<std::string> skipped;
        try {
            gone = v.list_deleted(dir);
            live = v.list(dir, skipped);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return problem(path, fmt::format("cannot read the directory: {}", e.what()));
        }
        write_deleted(out, path, rel, gone, depth);
        const std::string prefix = path == "/" ? "/" : path + "/";
        for (const fs::Entry& r : live) {
            if (!r.is_dir || r.link_target) continue;
            if (auto why = host_name_problem(r.name); !why.empty()) continue;  // nothing can be written there
            LazyDir sub{[&out] { return out.get(); }, r.name, prefix + r.name, this};
            extract_deleted_dir(sub, prefix + r.name, rel.empty() ? r.name : rel + "/" + r.name, r,
                                depth + 1);
        }
    }

    // Why a symbolic link target could lead outside OUTDIR, for a link whose
    // directory lies `depth` levels below OUTDIR; empty when it cannot. Only
    // "../" * k (k <= depth) followed by plain names is accepted: the leading
    // ".." climb real directories this run created, the names below descend
    // through entries that are themselves inside (links included, by the same
    // rule), and a ".." after a name is refused because that name may be a
    // link, where ".." would not undo it.
    static std::string link_target_problem(const std::string& t, unsigned depth) {
        if (t.empty()) return "the target is empty";
        if (t.front() == '/') return "the target is an absolute path";
        if (t.find('\0') != std::string::npos) return "the target holds a NUL character";
        unsigned up = 0;
        bool named = false;
        for (std::size_t at = 0; at <= t.size();) {
            const std::size_t slash = std::min(t.find('/', at), t.size());
            const std::string c = t.substr(at, slash - at);
            at = slash + 1;
            if (c.empty() || c == ".") continue;
            if (c == "..") {
                if (named) return "the target climbs (\"..\") after a name";
                if (++up > depth) return "the target climbs above the output directory";
                continue;
            }
            if (!named && c.size() == 2 && c[1] == ':')
                return "the target names a drive (an absolute Windows path)";
            named = true;
        }
        return {};
    }

    void extract_link(int dirfd, const std::string& name, const std::string& path, const fs::Entry& r,
                      unsigned depth) {
        const std::string& target = *r.link_target;
        if (auto why = link_target_problem(target, depth); !why.empty()) {
            // A warning, not a failure: Windows volumes hold junctions to
            // absolute paths ("C:/Users") that only mean something there.
            ++links_skipped;
            warn(fmt::format("{}: symbolic link to \"{}\" skipped: {}", escape_name(path),
                             escape_name(target), why));
            return;
        }
        if (::symlinkat(target.c_str(), dirfd, name.c_str()) != 0) {
            if (errno != EEXIST) return problem(path, "cannot create the symbolic link: " + errno_text());
            if (!a.force) return problem(path, "exists already (use --force to replace it)");
            struct stat st {};
            if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
                return problem(path, "exists and is not a regular file or symbolic link");
            if (::unlinkat(dirfd, name.c_str(), 0) != 0 ||
                ::symlinkat(target.c_str(), dirfd, name.c_str()) != 0)
                return problem(path, "cannot replace it with the symbolic link: " + errno_text());
        }
        ++links;
        if (a.verbose) fmt::print("{} -> {}\n", escape_name(path), escape_name(target));
        set_times(dirfd, name, r, path);
    }

    void extract_entry(int dirfd, const fs::Entry& r, const std::string& path, const std::string& rel,
                       unsigned depth) {
        if (auto why = host_name_problem(r.name); !why.empty()) return problem(path, "skipped: " + why);
        if (r.is_stream && a.streams == "skip") {
            ++streams_skipped;
            return;
        }
        if (r.link_target) return extract_link(dirfd, r.name, path, r, depth);
        if (!r.is_dir) return extract_file(dirfd, r.name, path, rel, r);
        // A directory already extracted through another entry: not even created again.
        if (!visited.first_path(r.id).empty()) return reached_again(path, r.id);
        const Fd sub(open_subdir(dirfd, r.name, path));
        if (sub.get() < 0) return;
        ++dirs;
        if (a.verbose) fmt::print("{}/\n", escape_name(path));
        extract_dir(sub.get(), path, rel, r, depth + 1);
        set_times(dirfd, r.name, r, path);
    }
};

int run_extract(const ExtractArgs& a) {
    const auto view = open_image_view(a.image);
    const fs::View& v = *view;
    // A path with wildcards that does not exist as written: each entry it matches, in byte order.
    std::vector<std::string> matched;
    if (!a.deleted && core::has_wildcard(a.path) && !v.lookup(a.path)) matched = expand_paths(v, {a.path});
    const auto r = v.lookup(matched.empty() ? a.path : matched.front());
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", a.path, a.image));
    std::error_code ec;
    std::filesystem::create_directories(a.outdir, ec);
    const Fd out(::open(a.outdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (out.get() < 0) {
        throw Error(ErrorCode::io,
                    fmt::format("cannot open the output directory {}: {}", a.outdir, errno_text()));
    }
    const auto progress = begin_progress("extracting", 0, core::ProgressUnit::bytes);
    Extractor x{a, v, out.get()};
    // A directory's extract: the check's cross-links, so that a file whose
    // clusters another shares is reported (a file alone is read as it is).
    if (!a.deleted && !a.salvage && (r->is_dir || !matched.empty())) {
        io::OpenedVolume checked = fs::open_volume(a.image);
        check::Findings found;
        (void)fs::check_volume(checked.device(), found);
        for (const check::Finding& f : found.all()) {
            if (!f.code.ends_with("cross-link")) continue;
            for (const std::string* o : {&f.where.object, &f.where.other_owner}) {
                if (o->starts_with("/")) x.crossed_paths.insert(*o);
                constexpr std::string_view mft = "MFT record ";
                std::uint64_t rec = 0;
                if (o->starts_with(mft) &&
                    std::from_chars(o->data() + mft.size(), o->data() + o->size(), rec).ec == std::errc{})
                    x.crossed_records.insert(rec);
            }
        }
    }
    x.progress = progress.get();
    std::error_code abs_ec;
    x.outdir_abs = std::filesystem::absolute(a.outdir, abs_ec).string();
    struct stat ist {};
    if (::stat(io::split_image_spec(a.image).first.c_str(), &ist) == 0) {
        x.image_dev = ist.st_dev;
        x.image_ino = ist.st_ino;
    }
    if (a.deleted) {
        if (!r->is_dir)
            throw Error(
                ErrorCode::usage,
                fmt::format("\"{}\" is not a directory: extract --deleted takes the directory whose deleted "
                            "files it writes (one deleted file: fsimg cat --deleted)",
                            a.path));
        std::string path = fs::normalize_path(a.path);
        Extractor::LazyDir top{[&out] { return out.get(); }, "", "/", &x};
        Extractor::LazyDir named{[&top] { return top.get(); }, r->name, path, &x};
        x.extract_deleted_dir(r->is_root ? top : named, r->is_root ? "/" : path, r->is_root ? "" : r->name,
                              *r, 0);
    } else if (!matched.empty()) {
        for (const std::string& m : matched) {
            const auto e = v.lookup(m);
            if (e) x.extract_entry(out.get(), *e, m, e->name, 0);
        }
    } else if (r->is_root) {
        x.extract_dir(out.get(), "/", "", *r, 0);
    } else {
        std::string path = fs::normalize_path(a.path);
        path = path.substr(0, path.rfind('/') + 1) + r->name;  // the stored spelling
        x.extract_entry(out.get(), *r, path, r->name, 0);
    }
    if (progress) progress->end();
    std::string more;
    if (x.links) more += fmt::format(", {} symbolic links", x.links);
    if (x.links_skipped) more += fmt::format(", {} symbolic links skipped", x.links_skipped);
    if (x.streams) more += fmt::format(", {} alternate data streams as name:stream files", x.streams);
    if (x.streams_skipped) more += fmt::format(", {} alternate data streams skipped", x.streams_skipped);
    if (x.hard_links) more += fmt::format(", {} hard links", x.hard_links);
    if (x.crosslinked) more += fmt::format(", {} cross-linked files not written again", x.crosslinked);
    if (x.crosslinked_written)
        more +=
            fmt::format(", {} cross-linked", core::format_counted(x.crosslinked_written, "file", "files"));
    if (x.dags) more += fmt::format(", {} directories reached twice not extracted again", x.dags);
    if (x.deleted_reused)
        more += fmt::format(", {} left out (their clusters are in use again)",
                            core::format_counted(x.deleted_reused, "deleted file", "deleted files"));
    if (x.salvaged)
        more +=
            fmt::format(", {} salvaged", core::format_counted(x.salvaged, "damaged file", "damaged files"));
    note(fmt::format(
        "extracted {} and {}{} ({} bytes) into {}{}", core::format_counted(x.files, "file", "files"),
        core::format_counted(x.dirs, "directory", "directories"), more, x.bytes, a.outdir,
        x.problems.empty() ? ""
                           : fmt::format("; {} (see above)",
                                         core::format_counted(x.problems.size(), "problem", "problems"))));
    return x.problems.empty() ? kExitOk : kExitFailure;
}

}  // namespace

Action add_extract(CLI::App& app) {
    auto args = std::make_shared<ExtractArgs>();
    CLI::App* cmd =
        app.add_subcommand("extract", "Copy files out of a FAT, exFAT or NTFS image into a directory");
    cmd->footer(
        "Never writes outside OUTDIR: no '..', no absolute names, no symbolic links followed.\n"
        "Modification times are set from the stored times: exFAT times with a UTC offset exactly,\n"
        "FAT times (and exFAT times without an offset) as local time (--utc: as UTC); NTFS times are UTC.\n"
        "NTFS: alternate data streams become name:stream files (--streams skip leaves them out);\n"
        "symbolic links are created when their target stays inside OUTDIR, else skipped with a warning;\n"
        "compressed files are decompressed; encrypted ones are refused one by one (the others are\n"
        "extracted, exit 1).\n"
        "Examples:\n"
        "  fsimg extract card.img -C out/\n"
        "  fsimg extract disk.img@1 DCIM -C photos/ --force\n"
        "  fsimg extract --salvage card.img -C rescued/");
    cmd->add_option("IMAGE", args->image, "Image file; IMAGE@N selects partition N")->required();
    cmd->add_option("PATH", args->path, "Directory or file inside the image (default: everything)");
    cmd->add_option("-C,--directory", args->outdir, "Output directory (created if missing)")
        ->type_name("OUTDIR")
        ->required();
    cmd->add_flag("--force", args->force,
                  "Replace existing regular files (by a new file renamed over each, once it is complete)");
    cmd->add_flag("--force-crosslinked", args->force_crosslinked,
                  "Write every file that shares its clusters with one already written (a damaged image)");
    cmd->add_flag(
        "--salvage", args->salvage,
        "Write what is readable of files whose allocation is broken: their own clusters, then (FAT, exFAT) "
        "the lost chain or free clusters that continue them; zeros for the rest; each named in a warning, "
        "exit 1; cross-linked files are written to each owner");
    cmd->add_flag(
           "--deleted", args->deleted,
           "Write the deleted files of PATH, a directory, and of the live directories below "
           "it that can still be read (their clusters free: ls --deleted's recoverable), each where its "
           "directory is; a name deleted twice gets ~2, ~3")
        ->excludes("--salvage");
    cmd->add_flag("--partial", args->partial,
                  "With --salvage: write each salvaged file as NAME.partial (NAME itself is not written)")
        ->needs("--salvage");
    cmd->add_flag("--utc", args->utc, "Read times stored without a zone as UTC instead of local time");
    cmd->add_flag("-v,--verbose", args->verbose, "Print each path extracted");
    cmd->add_option("--streams", args->streams,
                    "NTFS alternate data streams: files (as name:stream, the default) or skip")
        ->check(CLI::IsMember({"files", "skip"}));
    return [args] { return run_extract(*args); };
}

}  // namespace fsimg::cli
