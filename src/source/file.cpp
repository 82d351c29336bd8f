// source/file.hpp: re-opening scanned files race-free, their data segments,
// and copying them into an image.
#include "fsimg/source/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fsimg/core/error.hpp"

namespace fsimg::source {

namespace {

constexpr std::size_t kMaxOpenDirectories = 32;  ///< directory descriptors kept between opens
constexpr std::size_t kCopyChunk = 1u << 20;     ///< bytes read per pread

/// A source that changed under the copy: the file is not copied. What else
/// was written is the caller's to say (mkfs writes no image at all; cp keeps
/// the files it added before this one), so the message claims only this.
[[noreturn]] void changed(const std::string& path, const std::string& what) {
    throw Error(ErrorCode::io,
                fmt::format("{} {}; it was not copied (run again once it is stable)", path, what));
}

const char* kind_of(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "a special file";
}

/// openat with EINTR retried; the errno of a failure is kept.
int open_at(int dirfd, const char* name, int flags) {
    int fd = -1;
    do {
        fd = ::openat(dirfd, name, flags);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

/// Why opening `name` in `dirfd` (shown as `path`) failed, in the words of a
/// race: a symbolic link swapped in (ELOOP under O_NOFOLLOW, or ENOTDIR when
/// a directory was asked for: lstat tells), a file removed (ENOENT).
[[noreturn]] void open_failed(int dirfd, const char* name, const std::string& path, int err, bool nofollow) {
    struct stat st {};
    const bool link = ::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
    if (nofollow && (err == ELOOP || (err == ENOTDIR && link)))
        changed(path, "was replaced by a symbolic link after the scan (mkfs never follows it)");
    if (err == ENOENT) changed(path, "was removed after the scan");
    if (err == ENOTDIR) changed(path, "was replaced by something that is not a directory after the scan");
    throw Error(ErrorCode::io, fmt::format("cannot read {}: {}", path, std::strerror(err)));
}

}  // namespace

// ---------------------------------------------------------------------------
// SourceFile

SourceFile::SourceFile(int fd, std::string path, std::uint64_t size, std::int64_t mtime_s,
                       std::int64_t mtime_ns)
    : fd_(fd), path_(std::move(path)), size_(size), mtime_s_(mtime_s), mtime_ns_(mtime_ns) {}

SourceFile::SourceFile(SourceFile&& o) noexcept
    : fd_(o.fd_),
      snapshot_(o.snapshot_),
      content_(std::move(o.content_)),
      path_(std::move(o.path_)),
      size_(o.size_),
      mtime_s_(o.mtime_s_),
      mtime_ns_(o.mtime_ns_) {
    o.fd_ = -1;
}

SourceFile& SourceFile::operator=(SourceFile&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
        snapshot_ = o.snapshot_;
        content_ = std::move(o.content_);
        path_ = std::move(o.path_);
        size_ = o.size_;
        mtime_s_ = o.mtime_s_;
        mtime_ns_ = o.mtime_ns_;
    }
    return *this;
}

SourceFile::~SourceFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::vector<Segment> find_data_segments(int fd, std::uint64_t size, const std::string& path,
                                        std::size_t max_segments) {
    std::vector<Segment> out;
    std::uint64_t at = 0;
    while (at < size) {
        const off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;                     // holes from here to the end of the file
            if (errno == EINVAL || errno == EOPNOTSUPP) {  // the host cannot tell: all data
                out.assign(1, Segment{0, size});
                return out;
            }
            throw Error(ErrorCode::io,
                        fmt::format("cannot find the data of {}: {}", path, std::strerror(errno)));
        }
        const auto begin = static_cast<std::uint64_t>(data);
        if (begin >= size) break;
        const off_t hole = ::lseek(fd, data, SEEK_HOLE);
        std::uint64_t end =
            hole > data ? std::min<std::uint64_t>(size, static_cast<std::uint64_t>(hole)) : size;
        if (!out.empty() && out.back().offset + out.back().length == begin) {
            out.back().length += end - begin;
        } else if (out.size() + 1 >= std::max<std::size_t>(max_segments, 1)) {  // the rest counts as data
            end = size;
            out.push_back({begin, end - begin});
        } else {
            out.push_back({begin, end - begin});
        }
        at = end;
    }
    return out;
}

std::optional<std::vector<Segment>> probe_holes(int dirfd, const char* name, const struct stat& st,
                                                std::uint64_t size, bool follow, const std::string& path) {
    if (size == 0 || static_cast<std::uint64_t>(st.st_blocks) * 512 >= size) return std::nullopt;
    const int fd =
        ::openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0) return std::nullopt;
    std::optional<std::vector<Segment>> out;
    struct stat now {};
    if (::fstat(fd, &now) == 0 && S_ISREG(now.st_mode) && now.st_dev == st.st_dev &&
        now.st_ino == st.st_ino && static_cast<std::uint64_t>(now.st_size) == size) {
        try {
            std::vector<Segment> segs = find_data_segments(fd, size, path, kMaxScannedSegments);
            if (!(segs.size() == 1 && segs[0] == Segment{0, size})) out = std::move(segs);
        } catch (const Error&) {  // all data
        }
    }
    ::close(fd);
    return out;
}

std::vector<Segment> SourceFile::segments() const {
    if (snapshot_) return size_ == 0 ? std::vector<Segment>{} : std::vector<Segment>{Segment{0, size_}};
    return find_data_segments(fd_, size_, path_);
}

void SourceFile::read_unsized(std::uint64_t limit) {
    std::vector<std::byte> buf(64 * 1024);
    std::vector<std::byte> out;
    for (;;) {
        const ssize_t n = ::read(fd_, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw Error(ErrorCode::io, fmt::format("cannot read {}: {}", path_, std::strerror(errno)));
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > limit)
            throw Error(
                ErrorCode::io,
                fmt::format("{} reports 0 bytes (a procfs, sysfs or FUSE file) but holds more than {} "
                            "bytes, the most such a file is read to: copy it to a regular file first",
                            path_, limit));
        out.insert(out.end(), buf.begin(), buf.begin() + n);
    }
    size_ = out.size();
    content_ = std::move(out);
    snapshot_ = true;
}

void SourceFile::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    if (snapshot_) {
        if (offset > size_ || out.size() > size_ - offset)
            throw Error(ErrorCode::io, fmt::format("cannot read {}: bytes {}..{} are past its {} bytes",
                                                   path_, offset, offset + out.size(), size_));
        std::copy_n(content_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
        return;
    }
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n =
            ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw Error(ErrorCode::io, fmt::format("cannot read {}: {}", path_, std::strerror(errno)));
        if (n == 0) {
            changed(path_, fmt::format("changed as it was read: it shrank to {} bytes ({} when scanned)",
                                       offset + done, size_));
        }
        done += static_cast<std::size_t>(n);
    }
}

std::vector<std::byte> SourceFile::read_all() const {
    std::vector<std::byte> out(static_cast<std::size_t>(size_));
    read_at(0, out);
    finish();
    return out;
}

void SourceFile::finish() const {
    if (snapshot_) return;  // copied as read at the open: a procfs file changes at will
    std::byte extra{};
    ssize_t n = 0;
    do {
        n = ::pread(fd_, &extra, 1, static_cast<off_t>(size_));
    } while (n < 0 && errno == EINTR);
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
        throw Error(ErrorCode::io, fmt::format("cannot stat {}: {}", path_, std::strerror(errno)));
    if (n > 0 && size_ == 0 && st.st_size == 0) {
        throw Error(
            ErrorCode::io,
            fmt::format("{} reports 0 bytes but holds data (a procfs, sysfs or FUSE file): mkfs --from "
                        "needs every size when it plans; copy it to a regular file first, or add it "
                        "with fsimg cp, which reads such a file to its end",
                        path_));
    }
    if (n > 0 || static_cast<std::uint64_t>(st.st_size) > size_) {
        changed(path_, fmt::format("changed as it was read: it grew past the {} bytes scanned ({} bytes now)",
                                   size_, static_cast<std::uint64_t>(st.st_size)));
    }
    if (static_cast<std::uint64_t>(st.st_size) != size_) {
        changed(path_, fmt::format("changed as it was read: it is {} bytes now, {} when scanned",
                                   static_cast<std::uint64_t>(st.st_size), size_));
    }
    if (st.st_mtim.tv_sec != mtime_s_ || st.st_mtim.tv_nsec != mtime_ns_) {
        changed(path_, "changed as it was read: it was modified during the copy");
    }
}

// ---------------------------------------------------------------------------
// SourceReader

SourceReader::SourceReader(const SourceTree& tree, ReadOptions options)
    : tree_(tree), options_(std::move(options)) {}

SourceReader::~SourceReader() {
    for (const auto& [index, fd] : dir_fds_) ::close(fd);
}

int SourceReader::directory(std::uint32_t index) {
    if (auto it = dir_fds_.find(index); it != dir_fds_.end()) {
        dir_used_[index] = ++clock_;
        return it->second;
    }
    const HostDirectory& d = tree_.host_dirs.at(index);
    int fd = -1;
    const bool nofollow = d.parent != kNoHostDir && !d.followed;
    const int flags =
        O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0);
    const int parent =
        d.parent == kNoHostDir ? AT_FDCWD : directory(d.parent);  // a root: as the user named it
    fd = open_at(parent, d.name.c_str(), flags);
    if (fd < 0) open_failed(parent, d.name.c_str(), d.path, errno, nofollow);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_dev) != d.dev ||
        static_cast<std::uint64_t>(st.st_ino) != d.ino) {
        ::close(fd);
        changed(d.path, "was replaced by another directory after the scan");
    }
    // Keep the most recently used few; the parents were used just before.
    if (dir_fds_.size() >= kMaxOpenDirectories) {
        auto oldest = std::min_element(dir_used_.begin(), dir_used_.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
        ::close(dir_fds_.at(oldest->first));
        dir_fds_.erase(oldest->first);
        dir_used_.erase(oldest);
    }
    dir_fds_.emplace(index, fd);
    dir_used_[index] = ++clock_;
    return fd;
}

SourceFile SourceReader::open(std::uint32_t index) {
    if (first_open_) {
        first_open_ = false;
        if (options_.before_first_open) options_.before_first_open();
    }
    const TreeNode& n = tree_.nodes.at(index);
    if (n.snapshot) {  // read to its end at the scan (a procfs, sysfs or FUSE file): copied as read then
        SourceFile f(-1, n.host_path, n.snapshot->size(), n.mtime, n.mtime_ns);
        f.content_ = *n.snapshot;
        f.snapshot_ = true;
        return f;
    }
    const bool nofollow = !n.host_followed;
    const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0);
    const int dirfd = n.host_dir != kNoHostDir ? directory(n.host_dir) : AT_FDCWD;
    const std::string& name = n.host_dir != kNoHostDir ? n.host_name : n.host_path;
    const int fd = open_at(dirfd, name.c_str(), flags);
    if (fd < 0) open_failed(dirfd, name.c_str(), n.host_path, errno, nofollow);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw Error(ErrorCode::io, fmt::format("cannot stat {}: {}", n.host_path, std::strerror(err)));
    }
    auto refuse = [&](const std::string& what) {
        ::close(fd);
        changed(n.host_path, what);
    };
    if (!S_ISREG(st.st_mode))
        refuse(fmt::format("was a regular file when scanned and is now {}", kind_of(st.st_mode)));
    if ((n.host_dev != 0 || n.host_ino != 0) && (static_cast<std::uint64_t>(st.st_dev) != n.host_dev ||
                                                 static_cast<std::uint64_t>(st.st_ino) != n.host_ino))
        refuse("was replaced by another file after the scan");
    if (static_cast<std::uint64_t>(st.st_size) != n.size)
        refuse(fmt::format("changed after the scan: it is {} bytes now, {} when scanned",
                           static_cast<std::uint64_t>(st.st_size), n.size));
    // Plain blocking reads from here (a regular file never blocks; the flag only kept a FIFO from hanging).
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    SourceFile f(fd, n.host_path, n.size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (n.size == 0 && options_.unsized_limit != 0) f.read_unsized(options_.unsized_limit);
    return f;
}

// ---------------------------------------------------------------------------
// Copying

void copy_range(const SourceFile& file, std::uint64_t from, std::uint64_t length, io::StreamWriter& w,
                core::Progress* progress) {
    const std::uint64_t end =
        std::min(file.size(), from + std::min(length, file.size() - std::min(from, file.size())));
    std::uint64_t at = std::min(from, end);
    for (const Segment& s : file.segments()) {
        const std::uint64_t b = std::max(s.offset, at), e = std::min(s.offset + s.length, end);
        if (b >= e) continue;
        if (b > at) {
            w.append_hole(b - at);
            core::advance(progress, b - at);
        }
        for (std::uint64_t p = b; p < e;) {
            auto room = w.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(e - p, kCopyChunk)));
            file.read_at(p, room);
            w.commit(room.size());
            core::advance(progress, room.size());
            p += room.size();
        }
        at = e;
    }
    if (end > at) {
        w.append_hole(end - at);
        core::advance(progress, end - at);
    }
}

void copy_file(const SourceFile& file, std::uint64_t allocated, io::StreamWriter& w,
               core::Progress* progress) {
    copy_range(file, 0, file.size(), w, progress);
    file.finish();
    if (allocated > file.size()) w.append_zeros(allocated - file.size());
}

void write_into_extents(const SourceFile& data, std::span<const DeviceExtent> extents, io::BlockDevice& dev) {
    constexpr std::uint64_t kPiece = 1 << 20;
    const std::vector<Segment> segments = data.segments();
    std::vector<std::byte> buf;
    std::uint64_t file_off = 0;
    for (const DeviceExtent& x : extents) {
        const std::uint64_t stop = file_off + x.bytes;
        for (std::uint64_t at = file_off; at < stop; at += kPiece) {
            const std::uint64_t end = std::min<std::uint64_t>(stop, at + kPiece);
            buf.assign(static_cast<std::size_t>(end - at), std::byte{0});
            bool any = false;
            for (const Segment& s : segments) {
                const std::uint64_t s0 = std::max(s.offset, at), s1 = std::min(s.offset + s.length, end);
                if (s1 <= s0) continue;
                data.read_at(s0, std::span(buf).subspan(static_cast<std::size_t>(s0 - at),
                                                        static_cast<std::size_t>(s1 - s0)));
                any = true;
            }
            if (any) {
                dev.write_at(x.device_offset + (at - file_off), buf);
            } else {
                dev.zero_range(x.device_offset + (at - file_off), end - at);
            }
        }
        file_off = stop;
    }
    data.finish();
}

}  // namespace fsimg::source
