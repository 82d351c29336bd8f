// scan_host_trees and check_tree: reading the host trees for mkfs --from,
// and the rules every filesystem applies alike (source/tree.hpp).
#include "fsimg/source/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"

namespace fsimg::source {

namespace {

/// Closes a file descriptor on scope exit.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
};

std::string join(const std::string& dir, const std::string& name) {
    return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

const char* special_kind(mode_t mode) {
    if (S_ISFIFO(mode)) return "FIFO";
    if (S_ISSOCK(mode)) return "socket";
    if (S_ISCHR(mode)) return "character device";
    if (S_ISBLK(mode)) return "block device";
    return "special file";
}

/// What fstatat says, plus the birth time from statx where the host
/// filesystem records one.
struct HostStat {
    struct stat st {};
    std::uint32_t nlink = 1;
    bool has_btime = false;
    struct statx_timestamp btime {};
};

/// statx(2) into a HostStat; -1 with errno on failure.
int host_stat(int dirfd, const char* name, int flags, HostStat& out) {
    struct statx sx {};
    if (::statx(dirfd, name, flags, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0) return -1;
    out.st.st_mode = sx.stx_mode;
    out.st.st_size = static_cast<off_t>(sx.stx_size);
    out.st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    out.st.st_ino = sx.stx_ino;
    out.st.st_blocks = static_cast<blkcnt_t>(sx.stx_blocks);
    out.nlink = sx.stx_nlink;
    out.st.st_mtim = {static_cast<time_t>(sx.stx_mtime.tv_sec), static_cast<long>(sx.stx_mtime.tv_nsec)};
    out.st.st_atim = {static_cast<time_t>(sx.stx_atime.tv_sec), static_cast<long>(sx.stx_atime.tv_nsec)};
    out.has_btime = (sx.stx_mask & STATX_BTIME) != 0;
    out.btime = sx.stx_btime;
    return 0;
}

class Scanner {
public:
    Scanner(SymlinkPolicy symlinks, SourceTree& tree, const std::vector<std::filesystem::path>& exclude)
        : symlinks_(symlinks), tree_(tree) {
        for (const auto& p : exclude) {
            struct stat st {};
            if (::stat(p.c_str(), &st) == 0) exclude_.insert({st.st_dev, st.st_ino});
        }
    }

    /// The node for image directory `image_dir`, created (with no host
    /// content) where missing.
    std::uint32_t target_directory(const std::string& image_dir) {
        if (image_dir.empty() || image_dir.front() != '/') {
            throw Error(ErrorCode::usage,
                        fmt::format("the destination \"{}\" must be an absolute image path such as /DCIM",
                                    image_dir));
        }
        std::uint32_t node = 0;
        std::size_t pos = 1;
        while (pos <= image_dir.size()) {
            std::size_t end = image_dir.find('/', pos);
            if (end == std::string::npos) end = image_dir.size();
            const std::string part = image_dir.substr(pos, end - pos);
            pos = end + 1;
            if (part.empty()) continue;
            if (part == "." || part == "..") {
                throw Error(ErrorCode::usage,
                            fmt::format("the destination \"{}\" may not contain . or ..", image_dir));
            }
            std::uint32_t found = 0;
            for (const std::uint32_t c : tree_.nodes[node].children) {
                if (tree_.nodes[c].name == part) found = c;
            }
            if (found != 0 && !tree_.nodes[found].is_dir) {
                tree_.problems.push_back(
                    {tree_.image_path(found), "is a file in one source and a directory in another"});
                return found;
            }
            node = found != 0 ? found : add_node(node, part, true);
        }
        return node;
    }

    void scan_source(const TreeSource& src) {
        overlay_ = src.overlay;
        HostStat hs;
        if (host_stat(AT_FDCWD, src.host_dir.c_str(), 0, hs) != 0) {
            throw Error(ErrorCode::usage,
                        fmt::format("--from {}: {}", src.host_dir.string(), std::strerror(errno)));
        }
        const struct stat& st = hs.st;
        if (S_ISREG(st.st_mode)) {
            scan_file(src, hs);
            return;
        }
        if (!S_ISDIR(st.st_mode)) {
            throw Error(ErrorCode::usage, fmt::format("--from {}: not a directory or a regular file ({})",
                                                      src.host_dir.string(), special_kind(st.st_mode)));
        }
        const std::uint32_t target = target_directory(src.image_dir);
        if (!tree_.nodes[target].is_dir) return;
        const int fd = ::open(src.host_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            throw Error(ErrorCode::io, fmt::format("--from {}: cannot read it: {}", src.host_dir.string(),
                                                   std::strerror(errno)));
        }
        TreeNode& t = tree_.nodes[target];
        if (target != 0 && !t.has_times) set_times(t, hs);
        ancestors_.insert({st.st_dev, st.st_ino});
        root_real_.clear();
        if (char* real = ::realpath(src.host_dir.c_str(), nullptr)) {
            root_real_ = real;
            std::free(real);
        }
        const std::uint32_t hd =
            add_host_dir(kNoHostDir, src.host_dir.string(), src.host_dir.string(), hs, false);
        scan_dir(fd, src.host_dir.string(), target, depth_of(target), hd);
        ancestors_.erase({st.st_dev, st.st_ino});
    }

private:
    /// One --from FILE (hs: its stat, a symbolic link followed as for a directory named so): into
    /// the root under its own name; FILE:/PATH stores it as /PATH, FILE:/DIR/ into /DIR under its
    /// own name. A name another source already gave is a problem, as in a merged directory.
    void scan_file(const TreeSource& src, const HostStat& hs) {
        const std::string path = src.host_dir.string();
        std::string dest = src.image_dir;
        std::string name = src.host_dir.filename().string();
        if (!dest.empty() && dest.back() != '/') {
            const std::size_t slash = dest.rfind('/');
            name = dest.substr(slash + 1);
            dest.resize(slash + 1);
        }
        if (name.empty() || name == "." || name == "..") {
            throw Error(ErrorCode::usage, fmt::format("--from {}: \"{}\" cannot name a file in the image",
                                                      path, src.image_dir));
        }
        const std::uint32_t dir = target_directory(dest);
        if (!tree_.nodes[dir].is_dir) return;
        const struct stat& st = hs.st;
        if (exclude_.count({st.st_dev, st.st_ino}) != 0) {
            tree_.warnings.push_back(fmt::format("left out {}: it is the image being written", path));
            return;
        }
        std::optional<std::uint32_t> replaced;
        for (const std::uint32_t c : tree_.nodes[dir].children) {
            if (tree_.nodes[c].name != name) continue;
            if (!overlay_ || tree_.nodes[c].is_dir) {
                add_problem(dir, name, same_name_problem(tree_.nodes[c].is_dir, false));
                return;
            }
            replaced = c;
        }
        const std::uint32_t child = replaced ? replace_file(*replaced) : add_node(dir, name, false);
        TreeNode& n = tree_.nodes[child];
        set_times(n, hs);
        n.host_path = path;  // opened by this path (host_dir kNoHostDir), following a link as the scan did
        n.host_followed = true;
        n.size = static_cast<std::uint64_t>(st.st_size);
        n.read_only = (st.st_mode & 0222) == 0;
        n.host_dev = static_cast<std::uint64_t>(st.st_dev);
        n.host_ino = static_cast<std::uint64_t>(st.st_ino);
        n.host_links = static_cast<std::uint32_t>(hs.nlink);
        ++tree_.files;
        tree_.data_bytes += n.size;
        if (::faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) != 0) {
            add_problem(dir, name, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
            return;
        }
        take_snapshot(AT_FDCWD, path, path, child, true, n.size);  // sizes procfs and sysfs do not give
        if (!tree_.nodes[child].snapshot) {
            if (auto segs = probe_holes(AT_FDCWD, path.c_str(), st, tree_.nodes[child].size, true, path)) {
                tree_.nodes[child].has_holes = true;
                tree_.nodes[child].data_segments = std::move(*segs);
            }
        }
    }

    std::uint32_t depth_of(std::uint32_t node) const {
        std::uint32_t d = 0;
        for (; node != 0; node = tree_.nodes[node].parent) ++d;
        return d;
    }

    std::uint32_t add_node(std::uint32_t parent, const std::string& name, bool is_dir) {
        const auto index = static_cast<std::uint32_t>(tree_.nodes.size());
        TreeNode n;
        n.name = name;
        n.is_dir = is_dir;
        n.parent = parent;
        tree_.nodes.push_back(std::move(n));
        tree_.nodes[parent].children.push_back(index);
        if (is_dir) ++tree_.directories;
        return index;
    }

    /// Node `i`, a file (or stored link) an earlier source gave, emptied for
    /// --overlay to fill again as a new file of the same name: its counts
    /// given back. Returns i.
    std::uint32_t replace_file(std::uint32_t i) {
        TreeNode& old = tree_.nodes[i];
        --tree_.files;  // a stored link counts as a file too
        tree_.data_bytes -= old.size;
        TreeNode fresh;
        fresh.name = old.name;
        fresh.parent = old.parent;
        old = std::move(fresh);
        return i;
    }

    /// A name two sources give, where they cannot be merged.
    std::string same_name_problem(bool earlier_dir, bool later_dir) const {
        if (earlier_dir != later_dir)
            return "a file and a directory of this name come from two --from sources (only directories are "
                   "merged)";
        return overlay_ ? "exists in two --from sources"
                        : "exists in two --from sources (only directories are merged; --overlay lets a later "
                          "source's file replace an earlier one's)";
    }

    /// Modification, access and creation (birth, else modification) times.
    static void set_times(TreeNode& n, const HostStat& hs) {
        n.mtime = hs.st.st_mtim.tv_sec;
        n.atime = hs.st.st_atim.tv_sec;
        n.btime = hs.has_btime ? hs.btime.tv_sec : hs.st.st_mtim.tv_sec;
        n.btime_ns = static_cast<std::uint32_t>(hs.has_btime ? hs.btime.tv_nsec : hs.st.st_mtim.tv_nsec);
        n.mtime_ns = static_cast<std::uint32_t>(hs.st.st_mtim.tv_nsec);
        n.has_times = true;
    }

    std::uint32_t add_host_dir(std::uint32_t parent, const std::string& name, const std::string& path,
                               const HostStat& hs, bool followed) {
        HostDirectory d;
        d.parent = parent;
        d.name = name;
        d.path = path;
        d.dev = static_cast<std::uint64_t>(hs.st.st_dev);
        d.ino = static_cast<std::uint64_t>(hs.st.st_ino);
        d.followed = followed;
        tree_.host_dirs.push_back(std::move(d));
        return static_cast<std::uint32_t>(tree_.host_dirs.size() - 1);
    }

    static bool sizes_untrusted(int fd) {  // procfs and sysfs: st_size is 0 or 4096 whatever the file holds
        struct statfs sf {};
        return ::fstatfs(fd, &sf) == 0 && (sf.f_type == static_cast<decltype(sf.f_type)>(PROC_SUPER_MAGIC) ||
                                           sf.f_type == static_cast<decltype(sf.f_type)>(SYSFS_MAGIC));
    }
    /// TreeNode::snapshot: file `name` of `dirfd` read to its end when its
    /// size cannot be trusted (`reported` 0, or on procfs or sysfs); sets
    /// n.size to what was read. A file that cannot be opened here is left
    /// to the readability check that follows.
    void take_snapshot(int dirfd, const std::string& name, const std::string& path, std::uint32_t node,
                       bool followed, std::uint64_t reported) {
        const int fd = ::openat(dirfd, name.c_str(),
                                O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (followed ? 0 : O_NOFOLLOW));
        if (fd < 0) return;
        Fd guard(fd);
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (reported != 0 && !sizes_untrusted(fd))) return;
        auto content = std::make_shared<std::vector<std::byte>>();
        std::vector<std::byte> buf(64 * 1024);
        for (;;) {
            const ssize_t got = ::read(fd, buf.data(), buf.size());
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return;  // the copy reads it again and names the error
            if (got == 0) break;
            if (content->size() + static_cast<std::size_t>(got) > kMaxSnapshotBytes) {
                add_problem(tree_.nodes[node].parent, tree_.nodes[node].name,
                            fmt::format("{} reports {} bytes (a procfs, sysfs or FUSE file) but holds more "
                                        "than {}, the most such a file is read to: copy it to a regular "
                                        "file first",
                                        path, reported, core::format_size(kMaxSnapshotBytes)));
                return;
            }
            content->insert(content->end(), buf.begin(), buf.begin() + got);
        }
        if (content->empty() && reported == 0) return;  // an empty file
        tree_.nodes[node].size = content->size();
        tree_.nodes[node].snapshot = std::move(content);
    }

    /// Adds the entries of the open directory `dirfd` (closed here, host
    /// directory `host_dir`) below `node`.
    void scan_dir(int dirfd, const std::string& host_path, std::uint32_t node, std::uint32_t depth,
                  std::uint32_t host_dir) {
        Fd guard(dirfd);
        const bool untrusted_dir = sizes_untrusted(dirfd);
        std::vector<std::string> names;
        {
            const int dup_fd = ::dup(dirfd);
            DIR* d = dup_fd >= 0 ? ::fdopendir(dup_fd) : nullptr;
            if (d == nullptr) {
                if (dup_fd >= 0) ::close(dup_fd);
                tree_.problems.push_back({tree_.image_path(node), fmt::format("cannot list {}: {}", host_path,
                                                                              std::strerror(errno))});
                return;
            }
            errno = 0;
            while (const dirent* e = ::readdir(d)) {
                const std::string n = e->d_name;
                if (n != "." && n != "..") names.push_back(n);
            }
            const int err = errno;
            ::closedir(d);
            if (err != 0) {
                tree_.problems.push_back({tree_.image_path(node),
                                          fmt::format("cannot list {}: {}", host_path, std::strerror(err))});
                return;
            }
        }
        std::sort(names.begin(), names.end());                    // UTF-8 byte order, never readdir's
        std::unordered_map<std::string, std::uint32_t> existing;  // merging a second source
        for (const std::uint32_t c : tree_.nodes[node].children) existing.emplace(tree_.nodes[c].name, c);

        for (const std::string& name : names) {
            const std::string path = join(host_path, name);
            HostStat hs;
            const struct stat& st = hs.st;
            if (host_stat(dirfd, name.c_str(), AT_SYMLINK_NOFOLLOW, hs) != 0) {
                add_problem(node, name, fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
                continue;
            }
            const bool followed = S_ISLNK(st.st_mode);
            if (S_ISLNK(st.st_mode)) {
                if (symlinks_ == SymlinkPolicy::skip) {
                    tree_.warnings.push_back(fmt::format("skipped symbolic link {}", path));
                    continue;
                }
                if (symlinks_ == SymlinkPolicy::store) {
                    store_link(dirfd, node, name, path, hs, existing);
                    continue;
                }
                if (symlinks_ == SymlinkPolicy::error) {
                    add_problem(node, name, fmt::format("{} is a symbolic link (--symlinks error)", path));
                    continue;
                }
                if (host_stat(dirfd, name.c_str(), 0, hs) != 0) {
                    add_problem(
                        node, name,
                        fmt::format("symbolic link {} cannot be followed: {}", path, std::strerror(errno)));
                    continue;
                }
                warn_if_outside(path);
            }
            if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
                tree_.warnings.push_back(fmt::format("skipped {} {}", special_kind(st.st_mode), path));
                continue;
            }
            if (S_ISREG(st.st_mode) && exclude_.count({st.st_dev, st.st_ino}) != 0) {
                tree_.warnings.push_back(fmt::format(
                    "left out {}: it is the image being written, inside its own --from tree", path));
                continue;
            }
            const bool is_dir = S_ISDIR(st.st_mode);
            std::uint32_t child = 0;
            auto it = existing.find(name);
            std::optional<std::uint32_t> replaced;  // --overlay: a file an earlier source gave, filled again
            if (it != existing.end() && overlay_ && !is_dir && !tree_.nodes[it->second].is_dir) {
                replaced = replace_file(it->second);
                it = existing.end();
            }
            if (it != existing.end()) {
                child = it->second;
                if (!is_dir || !tree_.nodes[child].is_dir) {
                    add_problem(node, name, same_name_problem(tree_.nodes[child].is_dir, is_dir));
                    continue;
                }
            } else {
                child = replaced ? *replaced : add_node(node, name, is_dir);
                TreeNode& n = tree_.nodes[child];
                set_times(n, hs);
                n.host_path = path;
                if (!is_dir) {
                    n.size = static_cast<std::uint64_t>(st.st_size);
                    n.read_only = (st.st_mode & 0222) == 0;
                    n.host_dev = static_cast<std::uint64_t>(st.st_dev);
                    n.host_ino = static_cast<std::uint64_t>(st.st_ino);
                    n.host_links = static_cast<std::uint32_t>(hs.nlink);
                    n.host_dir = host_dir;
                    n.host_name = name;
                    n.host_followed = followed;
                    if (n.size == 0 || untrusted_dir || followed)
                        take_snapshot(dirfd, name, path, child, followed, n.size);
                    ++tree_.files;
                    tree_.data_bytes += n.size;
                }
            }
            if (!is_dir) {
                // Readable by us (effective IDs): one syscall instead of open + close.
                if (::faccessat(dirfd, name.c_str(), R_OK, AT_EACCESS) != 0) {
                    add_problem(node, name, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
                } else if (tree_.nodes[child].host_path == path && !tree_.nodes[child].snapshot) {
                    if (auto segs =
                            probe_holes(dirfd, name.c_str(), st, tree_.nodes[child].size,
                                        tree_.nodes[child].host_followed, tree_.nodes[child].host_path)) {
                        tree_.nodes[child].has_holes = true;
                        tree_.nodes[child].data_segments = std::move(*segs);
                    }
                }
                continue;
            }
            if (depth + 1 > kMaxTreeDepth) continue;  // check_source_tree reports it; do not descend
            if (!ancestors_.insert({st.st_dev, st.st_ino}).second) {
                add_problem(node, name,
                            fmt::format("{} leads back to a directory it is inside of (symlink loop)", path));
                continue;
            }
            // By descriptor, never following a link the scan did not see (followed: it did).
            const int fd =
                ::openat(dirfd, name.c_str(),
                         O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (followed ? 0 : O_NOFOLLOW));
            struct stat now {};
            if (fd < 0) {
                add_problem(node, name,
                            fmt::format("cannot read directory {}: {}", path, std::strerror(errno)));
            } else if (::fstat(fd, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
                ::close(fd);
                add_problem(node, name, fmt::format("directory {} was replaced while it was scanned", path));
            } else {
                const std::uint32_t hd = add_host_dir(host_dir, name, path, hs, followed);
                scan_dir(fd, path, child, depth + 1, hd);
            }
            ancestors_.erase({st.st_dev, st.st_ino});
        }
    }

    /// --symlinks store: a node holding the link's target (relative targets only).
    void store_link(int dirfd, std::uint32_t parent, const std::string& name, const std::string& path,
                    const HostStat& hs, const std::unordered_map<std::string, std::uint32_t>& existing) {
        std::optional<std::uint32_t> replaced;
        if (const auto it = existing.find(name); it != existing.end()) {
            if (!overlay_ || tree_.nodes[it->second].is_dir) {
                add_problem(parent, name, same_name_problem(tree_.nodes[it->second].is_dir, false));
                return;
            }
            replaced = replace_file(it->second);
        }
        std::string target(4096, '\0');
        const ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
        if (n < 0 || static_cast<std::size_t>(n) >= target.size()) {
            add_problem(parent, name,
                        fmt::format("cannot read symbolic link {}: {}", path,
                                    n < 0 ? std::strerror(errno) : "target too long"));
            return;
        }
        target.resize(static_cast<std::size_t>(n));
        if (target.empty() || target[0] == '/') {  // a drive-relative target on Windows: left out
            tree_.warnings.push_back(
                fmt::format("skipped symbolic link {}: it points to the absolute path \"{}\"; only relative "
                            "targets can be stored",
                            path, target));
            return;
        }
        const std::uint32_t c = replaced ? *replaced : add_node(parent, name, false);
        TreeNode& node = tree_.nodes[c];
        set_times(node, hs);
        node.host_path = path;
        node.symlink_target = std::move(target);
        ++tree_.files;
    }

    /// --symlinks follow: a warning when the link at `path` leads outside
    /// the --from directory being scanned (its content, /etc/passwd say,
    /// would be copied into the image unnoticed).
    void warn_if_outside(const std::string& path) {
        char* real = ::realpath(path.c_str(), nullptr);
        if (real == nullptr) return;  // the stat above succeeded; a race: the copy re-checks
        const std::string target(real);
        std::free(real);
        if (root_real_.empty()) return;
        const bool inside =
            target == root_real_ ||
            (target.size() > root_real_.size() && target.compare(0, root_real_.size(), root_real_) == 0 &&
             (root_real_.back() == '/' || target[root_real_.size()] == '/'));
        if (!inside)
            tree_.warnings.push_back(
                fmt::format("followed symbolic link {} leads outside the --from directory, to {}: its "
                            "content is copied into the image",
                            path, target));
    }

    void add_problem(std::uint32_t parent, const std::string& name, std::string reason) {
        tree_.problems.push_back({join(tree_.image_path(parent), name), std::move(reason)});
    }

    SymlinkPolicy symlinks_;
    bool overlay_ = false;  ///< the source being scanned has TreeSource::overlay
    SourceTree& tree_;
    std::string root_real_;  ///< the --from directory being scanned, symbolic links resolved
    std::set<std::pair<dev_t, ino_t>> ancestors_;
    std::set<std::pair<dev_t, ino_t>> exclude_;
};

}  // namespace

std::string SourceTree::image_path(std::uint32_t i) const {
    std::vector<const std::string*> parts;
    for (; i != 0 && i < nodes.size(); i = nodes[i].parent) parts.push_back(&nodes[i].name);
    if (parts.empty()) return "/";
    std::string path;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) path += "/" + **it;
    return path;
}

std::vector<std::string> entry_problems(const TreeRules& rules, std::string_view utf8_name, bool is_file,
                                        std::uint64_t size, std::uint32_t depth, std::size_t path_bytes,
                                        std::size_t parent_path_bytes, bool* name_refused) {
    std::vector<std::string> out;
    auto why = rules.name_problem(utf8_name);
    if (name_refused != nullptr) *name_refused = why.has_value();
    if (why) out.push_back(std::move(*why));
    if (is_file && size > rules.max_file_bytes)
        out.push_back(fmt::format("{} bytes; {}", core::format_count(size), rules.file_limit));
    if (depth == kMaxTreeDepth + 1)
        out.push_back(fmt::format("lies {} directories deep; fsimg stores at most {}", depth, kMaxTreeDepth));
    if (path_bytes > kMaxPathBytes && parent_path_bytes <= kMaxPathBytes) {
        out.push_back(fmt::format("the path is {} bytes long; fsimg stores paths of at most {} bytes",
                                  path_bytes, kMaxPathBytes));
    }
    return out;
}

void check_tree(SourceTree& tree, const TreeRules& rules) {
    const std::size_t n = tree.nodes.size();
    std::vector<std::uint32_t> depth(n, 0);
    std::vector<std::size_t> path_bytes(n, 0);
    for (std::uint32_t i = 1; i < n; ++i) {
        TreeNode& node = tree.nodes[i];
        depth[i] = depth[node.parent] + 1;
        path_bytes[i] = path_bytes[node.parent] + 1 + node.name.size();
        bool name_refused = false;
        for (std::string& why : entry_problems(rules, node.name, !node.is_dir, node.size, depth[i],
                                               path_bytes[i], path_bytes[node.parent], &name_refused))
            tree.problems.push_back({tree.image_path(i), std::move(why)});
        if (name_refused) {
            node.name16.clear();
        } else if (node.name16.empty()) {
            node.name16 = core::utf8_to_utf16(node.name);
        }
    }
    // One case-insensitive namespace per directory.
    for (std::uint32_t d = 0; d < n; ++d) {
        if (!tree.nodes[d].is_dir) continue;
        std::map<std::u16string, std::uint32_t> seen;
        for (const std::uint32_t c : tree.nodes[d].children) {
            if (tree.nodes[c].name16.empty()) continue;
            auto [it, inserted] = seen.emplace(rules.case_key(tree.nodes[c].name16), c);
            if (!inserted) {
                tree.problems.push_back(
                    {tree.image_path(c), fmt::format("differs only in letter case from \"{}\" ({})",
                                                     tree.nodes[it->second].name, rules.case_note)});
            }
        }
    }
    if (rules.reserved_name == nullptr) return;
    for (std::uint32_t i = 1; i < n; ++i) {
        const TreeNode& node = tree.nodes[i];
        if (!node.name16.empty() && rules.reserved_name(node.name16)) {
            tree.warnings.push_back(fmt::format(
                "{}: \"{}\" is a reserved device name on Windows; Windows programs cannot open it",
                tree.image_path(i), node.name));
        }
    }
}

SourceTree scan_host_trees(const std::vector<TreeSource>& sources, SymlinkPolicy symlinks,
                           const std::vector<std::filesystem::path>& exclude) {
    SourceTree tree;
    TreeNode root;
    root.is_dir = true;
    tree.nodes.push_back(std::move(root));
    Scanner scanner(symlinks, tree, exclude);
    for (const TreeSource& src : sources) scanner.scan_source(src);
    for (TreeNode& node : tree.nodes) {
        std::sort(node.children.begin(), node.children.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return tree.nodes[a].name < tree.nodes[b].name; });
    }
    return tree;
}

void sort_problems(SourceTree& tree) {
    std::stable_sort(tree.problems.begin(), tree.problems.end(),
                     [](const TreeProblem& a, const TreeProblem& b) { return a.path < b.path; });
}

}  // namespace fsimg::source
