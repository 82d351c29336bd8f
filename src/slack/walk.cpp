// Analysis: the parallel host-directory walk, and finish().
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "fsimg/core/error.hpp"
#include "sources_internal.hpp"

namespace fsimg::slack {

namespace {

/// An open directory descriptor shared by the queued children that still
/// need it for openat; closed when the last one has opened its directory.
struct DirFd {
    int fd = -1;
    explicit DirFd(int f) : fd(f) {}
    ~DirFd() {
        if (fd >= 0) ::close(fd);
    }
    DirFd(const DirFd&) = delete;
    DirFd& operator=(const DirFd&) = delete;
};

struct Work {
    std::shared_ptr<DirFd> parent;
    std::string name;
    DirContext ctx;
};

struct Child {
    std::string name;
    EntryKind kind = EntryKind::other;
    std::uint64_t size = 0;
    bool first_link = true;
    bool linked = false;                    ///< st_nlink > 1
    bool has_holes = false;                 ///< source::TreeNode::has_holes
    std::vector<source::Segment> segments;  ///< then its data segments
};

EntryKind kind_of(mode_t m) {
    if (S_ISREG(m)) return EntryKind::file;
    if (S_ISDIR(m)) return EntryKind::directory;
    if (S_ISLNK(m)) return EntryKind::symlink;
    return EntryKind::other;
}

/// Walks host directories with a LIFO work queue and N threads.
class Walker {
public:
    Walker(Analysis::Impl& impl) : impl_(impl) {}

    /// Lists directory `fd` (taking ownership), charges its children into
    /// `acc` and queues its subdirectories.
    void list(Tally& t, DirAccumulator& acc, int fd) {
        auto self = std::make_shared<DirFd>(fd);
        std::vector<Child> children;
        const int dup_fd = ::dup(fd);
        DIR* d = dup_fd >= 0 ? ::fdopendir(dup_fd) : nullptr;
        if (d == nullptr) {
            if (dup_fd >= 0) ::close(dup_fd);
            unreadable(t, acc.context().path, errno);
            return;
        }
        errno = 0;
        while (const dirent* e = ::readdir(d)) {
            const char* n = e->d_name;
            if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
            Child c;
            c.name = n;
            switch (e->d_type) {
                case DT_DIR:
                    c.kind = EntryKind::directory;
                    break;
                case DT_LNK:
                    c.kind = EntryKind::symlink;
                    break;
                case DT_REG:
                case DT_UNKNOWN: {
                    struct stat st {};
                    if (::fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished
                    c.kind = kind_of(st.st_mode);
                    if (c.kind == EntryKind::file) {
                        c.size = static_cast<std::uint64_t>(st.st_size);
                        if (st.st_nlink > 1) {
                            c.linked = true;
                            c.first_link = first_link(st.st_dev, st.st_ino);
                        }
                        if (auto segs = source::probe_holes(fd, n, st, c.size, false, n)) {
                            c.has_holes = true;
                            c.segments = std::move(*segs);
                        }
                    }
                    break;
                }
                default:
                    c.kind = EntryKind::other;
            }
            children.push_back(std::move(c));
            errno = 0;
        }
        const int err = errno;
        ::closedir(d);
        if (err != 0) unreadable(t, acc.context().path, err);
        std::sort(children.begin(), children.end(),
                  [](const Child& a, const Child& b) { return a.name < b.name; });
        std::vector<ListedEntry> listing;
        listing.reserve(children.size());
        for (const Child& c : children) listing.push_back({c.name, c.kind, c.linked});
        const std::vector<std::u16string> dos =
            DirAccumulator::ntfs_dos_names(listing, acc.context().is_root());
        std::vector<Work> subdirs;
        for (std::size_t k = 0; k < children.size(); ++k) {
            const Child& c = children[k];
            const std::uint8_t ex = acc.add(t, c.name, c.kind, c.size, c.first_link, c.linked, dos[k],
                                            c.has_holes ? &c.segments : nullptr);
            if (c.kind == EntryKind::directory) {
                subdirs.push_back({self, c.name, acc.context().child(c.name, ex, dos[k])});
            }
        }
        files_seen_ += children.size();
        push(std::move(subdirs));
    }

    void run(unsigned threads) {
        std::vector<std::thread> pool;
        for (unsigned i = 0; i < threads; ++i) pool.emplace_back([this] { worker(); });
        for (auto& th : pool) th.join();
    }

private:
    bool first_link(dev_t dev, ino_t ino) {
        std::lock_guard lock(links_mutex_);
        return links_.insert({dev, ino}).second;
    }

    void unreadable(Tally& t, const std::string& path, int err) {
        ++t.unreadable_count;
        add_example(t.unreadable, {path, fmt::format("cannot list it: {}", std::strerror(err))},
                    impl_.opt.analyzer.max_examples);
    }

    void push(std::vector<Work>&& w) {
        if (w.empty()) return;
        {
            std::lock_guard lock(mutex_);
            // Reverse, so that the LIFO pops them in name order.
            for (auto it = w.rbegin(); it != w.rend(); ++it) queue_.push_back(std::move(*it));
        }
        cv_.notify_all();
    }

    void worker() {
        Tally t;
        for (;;) {
            Work w;
            {
                std::unique_lock lock(mutex_);
                cv_.wait(lock, [&] { return !queue_.empty() || busy_ == 0; });
                if (queue_.empty()) break;
                w = std::move(queue_.back());
                queue_.pop_back();
                ++busy_;
            }
            process(t, std::move(w));
            {
                std::lock_guard lock(mutex_);
                --busy_;
            }
            cv_.notify_all();
            if (impl_.opt.progress && (++ticks_ % 256) == 0) {
                std::lock_guard lock(progress_mutex_);
                impl_.opt.progress(files_seen_.load());
            }
        }
        impl_.merge(std::move(t));
    }

    void process(Tally& t, Work w) {
        const int fd =
            ::openat(w.parent->fd, w.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        const int err = errno;
        w.parent.reset();
        DirAccumulator acc(impl_.opt.analyzer, std::move(w.ctx));
        if (fd < 0) {
            unreadable(t, acc.context().path, err);
        } else {
            list(t, acc, fd);
        }
        acc.finish(t);
    }

    Analysis::Impl& impl_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Work> queue_;
    unsigned busy_ = 0;
    std::mutex links_mutex_;
    std::set<std::pair<dev_t, ino_t>> links_;
    std::mutex progress_mutex_;
    std::atomic<std::uint64_t> files_seen_{0};
    std::atomic<std::uint64_t> ticks_{0};
};

}  // namespace

Analysis::Analysis(SourceOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Analysis::~Analysis() = default;

void Analysis::add_directory(const std::filesystem::path& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        throw Error(ErrorCode::usage, fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    }
    if (!S_ISDIR(st.st_mode)) {
        throw Error(ErrorCode::usage, fmt::format("{}: not a directory", dir.string()));
    }
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        throw Error(ErrorCode::usage,
                    fmt::format("{}: cannot read it: {}", dir.string(), std::strerror(errno)));
    }
    Walker walker(*impl_);
    walker.list(impl_->tally, impl_->root, fd);  // the top level joins the shared root
    const unsigned threads =
        impl_->opt.threads != 0 ? impl_->opt.threads : std::max(1u, std::thread::hardware_concurrency());
    walker.run(threads);
}

Tally Analysis::finish() {
    if (!impl_->finished) {
        impl_->root.finish(impl_->tally);
        impl_->finished = true;
    }
    return std::move(impl_->tally);
}

}  // namespace fsimg::slack
