#include "fsimg/io/file_image.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"

namespace fsimg::io {

/// src/io/gzip_image.cpp: decompresses until `end` bytes are in the temporary file.
void gzip_fill(GzipInflater& inflater, std::uint64_t end);

namespace {

std::string os_reason(int err) { return std::strerror(err); }

[[noreturn]] void throw_io(const std::string& what, const std::filesystem::path& path, int err) {
    throw Error(ErrorCode::io, fmt::format("{} \"{}\": {}", what, path.string(), os_reason(err)));
}

// ---------------------------------------------------------------------------
// Temporary files removed by every signal whose default action ends the process.
//
// The handler may only touch async-signal-safe state: a fixed table of
// fixed-size path buffers whose `state` is an atomic lock-free int.

constexpr std::size_t kMaxTempFiles = 64;
/// Writes of at least this size start their writeback at once (AtomicImage).
constexpr std::size_t kEarlyWritebackBytes = 1u << 20;
enum SlotState : int { kFree = 0, kWriting = 1, kLive = 2 };

struct TempSlot {
    std::atomic<int> state{kFree};
    pid_t owner = 0;  ///< only the creating process removes the file (not a forked child)
    char path[PATH_MAX] = {};
};
static_assert(std::atomic<int>::is_always_lock_free);

TempSlot g_temp_slots[kMaxTempFiles];
/// The signals whose default action terminates the process (signal(7)), but
/// SIGKILL and SIGSTOP, which cannot be caught, and the ones raised by a
/// fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP), where
/// touching the table may not be safe: a stale file left by those is
/// removed by the next run (remove_stale_temporaries).
constexpr int kCleanupSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,   SIGALRM,
                                   SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};
constexpr std::size_t kCleanupSignalCount = std::size(kCleanupSignals);
struct sigaction g_previous[kCleanupSignalCount];

void cleanup_handler(int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    const pid_t self = getpid();
    for (auto& slot : g_temp_slots) {
        if (slot.state.load(std::memory_order_acquire) == kLive && slot.owner == self) unlink(slot.path);
    }
    for (std::size_t i = 0; i < kCleanupSignalCount; ++i) {
        if (kCleanupSignals[i] != sig) continue;
        const struct sigaction& prev = g_previous[i];
        // sa_handler and sa_sigaction share storage: test for SIG_DFL/SIG_IGN first.
        if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
            if ((prev.sa_flags & SA_SIGINFO) != 0) {
                prev.sa_sigaction(sig, info, context);
            } else {
                prev.sa_handler(sig);
            }
        } else {
            // Default action: reset and re-raise; the signal is blocked inside this
            // handler, so it is delivered (and kills us) as soon as we return.
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            sigemptyset(&dfl.sa_mask);
            sigaction(sig, &dfl, nullptr);
            raise(sig);
        }
    }
    errno = saved_errno;
}

/// Installs cleanup_handler for the cleanup signals unless it is already the
/// current handler (someone may have replaced it since) or the signal is
/// ignored (e.g. SIGHUP under nohup). The replaced handler is chained to.
/// Call with the cleanup signals blocked.
void install_cleanup_handlers() {
    // Once per process: asking for each signal's handler again for every
    // temporary file was a tenth of extract's time on 3,000 small files
    // (12 rt_sigaction calls a file; issue 41).
    // The process that installed them: a child made by fork (a test
    // harness) installs its own.
    static std::atomic<pid_t> installed_by{0};
    const pid_t self = ::getpid();
    if (installed_by.load(std::memory_order_acquire) == self) return;
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    for (std::size_t i = 0; i < kCleanupSignalCount; ++i) {
        struct sigaction current {};
        if (sigaction(kCleanupSignals[i], nullptr, &current) != 0) continue;
        if (current.sa_handler == SIG_IGN) continue;
        if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == cleanup_handler) continue;
        g_previous[i] = current;
        struct sigaction act {};
        act.sa_sigaction = cleanup_handler;
        act.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&act.sa_mask);
        for (int s : kCleanupSignals) sigaddset(&act.sa_mask, s);
        sigaction(kCleanupSignals[i], &act, nullptr);
    }
    installed_by.store(self, std::memory_order_release);
}

/// Blocks the cleanup signals in this thread for its lifetime.
class SignalBlock {
public:
    SignalBlock() {
        sigset_t set;
        sigemptyset(&set);
        for (int s : kCleanupSignals) sigaddset(&set, s);
        pthread_sigmask(SIG_BLOCK, &set, &old_);
    }
    ~SignalBlock() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    SignalBlock(const SignalBlock&) = delete;
    SignalBlock& operator=(const SignalBlock&) = delete;

private:
    sigset_t old_;
};

/// Registers a live temporary path; returns the slot index or -1 when the
/// table is full or the path too long (then only the destructor removes it).
int register_temp(const std::string& path) {
    if (path.size() >= PATH_MAX) return -1;
    for (std::size_t i = 0; i < kMaxTempFiles; ++i) {
        int expected = kFree;
        if (!g_temp_slots[i].state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel))
            continue;
        std::memcpy(g_temp_slots[i].path, path.c_str(), path.size() + 1);
        g_temp_slots[i].owner = getpid();
        g_temp_slots[i].state.store(kLive, std::memory_order_release);
        return static_cast<int>(i);
    }
    return -1;
}

void unregister_temp(int slot) {
    if (slot < 0) return;
    g_temp_slots[slot].state.store(kFree, std::memory_order_release);
}

/// ".NAME.fsimg-PID-": the prefix of every temporary made for NAME by process PID.
std::string temp_prefix(const std::string& name) { return "." + name + ".fsimg-"; }

/// Removes temporaries ".NAME.fsimg-PID-XXXXXX" in `folder` whose process is
/// gone (kill(PID, 0) fails with ESRCH: killed by SIGKILL or a fault), and
/// returns their paths. Only regular files; a live or foreign PID keeps its file.
std::vector<std::string> remove_stale(const std::filesystem::path& folder, const std::string& name) {
    std::vector<std::string> removed;
    const std::string prefix = temp_prefix(name);
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string entry = it->path().filename().string();
        if (entry.rfind(prefix, 0) != 0) continue;
        const std::string rest = entry.substr(prefix.size());  // "PID-XXXXXX"
        const std::size_t dash = rest.find('-');
        if (dash == 0 || dash == std::string::npos || rest.size() - dash - 1 != 6) continue;
        if (!std::all_of(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(dash),
                         [](char c) { return c >= '0' && c <= '9'; }) ||
            dash > 9)
            continue;
        const auto pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
        if (pid <= 0 || pid == getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (::unlink(it->path().c_str()) == 0) removed.push_back(it->path().string());
    }
    return removed;
}

/// The process umask without changing it (Linux /proc), else 022.
mode_t current_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Umask:", 0) != 0) continue;
        try {
            return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8) & 0777);
        } catch (const std::exception&) {
            break;
        }
    }
    return 022;
}

}  // namespace

// ---------------------------------------------------------------------------
// SignalCleanup

SignalCleanup::SignalCleanup(const std::string& absolute_path) {
    SignalBlock block;
    install_cleanup_handlers();
    slot_ = register_temp(absolute_path);
}

SignalCleanup::~SignalCleanup() { release(); }

void SignalCleanup::release() noexcept {
    unregister_temp(slot_);
    slot_ = -1;
}

std::string temporary_prefix(const std::string& name) {
    return temp_prefix(name) + std::to_string(getpid()) + "-";
}

// ---------------------------------------------------------------------------
// FileImage

FileImage::FileImage(int fd, std::filesystem::path path, std::uint64_t size, bool writable)
    : fd_(fd), path_(std::move(path)), size_(size), writable_(writable) {}

FileImage::~FileImage() {
    if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<FileImage> FileImage::open(const std::filesystem::path& path, bool writable,
                                           bool allow_device) {
    // O_NONBLOCK so that opening a FIFO does not hang before we can refuse it.
    const int flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    int fd = -1;
    do {
        fd = ::open(path.c_str(), flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) throw_io(writable ? "cannot open for writing" : "cannot open", path, errno);

    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw_io("cannot stat", path, err);
    }
    std::uint64_t size = 0;
    if (S_ISREG(st.st_mode)) {
        size = static_cast<std::uint64_t>(st.st_size);
    } else if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) {
        // Reading a block device changes nothing: every reading command accepts
        // one. Writing needs the caller's allow_device (mkfs --device), and an
        // exclusive claim (O_EXCL: EBUSY while mounted or in use).
        const bool readable_block = S_ISBLK(st.st_mode) && !writable;
        if (!allow_device && !readable_block) {
            ::close(fd);
            throw Error(
                ErrorCode::refused,
                S_ISBLK(st.st_mode)
                    ? fmt::format("\"{}\" is a block device; only mkfs --device writes to one", path.string())
                    : fmt::format("\"{}\" is a character device, not an image file or a block device",
                                  path.string()));
        }
        if (writable && S_ISBLK(st.st_mode)) {
            ::close(fd);
            do {
                fd = ::open(path.c_str(), flags | O_EXCL);
            } while (fd < 0 && errno == EINTR);
            if (fd < 0 && errno == EBUSY)
                throw Error(
                    ErrorCode::refused,
                    fmt::format("\"{}\" is in use (mounted or held); it is not written", path.string()));
            if (fd < 0) throw_io("cannot open for writing", path, errno);
        }
        const off_t end = ::lseek(fd, 0, SEEK_END);
        if (end < 0) {
            const int err = errno;
            ::close(fd);
            throw_io("cannot find the size of device", path, err);
        }
        size = static_cast<std::uint64_t>(end);
    } else {
        ::close(fd);
        // Writing there is a refusal; reading it is a failure to open an image.
        throw Error(
            writable ? ErrorCode::refused : ErrorCode::io,
            fmt::format("\"{}\" is not a regular file (directory, FIFO or socket); give an image file",
                        path.string()));
    }
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return std::unique_ptr<FileImage>(new FileImage(fd, path, size, writable));
}

void FileImage::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    if (offset > size_ || out.size() > size_ - offset) {
        const std::uint64_t available = offset < size_ ? size_ - offset : 0;
        throw Error(
            ErrorCode::corrupt,
            fmt::format("\"{}\" is truncated: reading {} bytes at offset {} needs {} bytes past its end "
                        "({} bytes)",
                        path_.string(), out.size(), offset, out.size() - available, size_),
            offset);
    }
    if (inflater_) gzip_fill(*inflater_, offset + out.size());  // a gzip image: decompress as far as needed
    constexpr std::size_t kHoleProbeBytes = 256 * 1024;         // smaller reads: one pread beats two lseeks
    std::size_t done = 0;
    while (done < out.size()) {
        std::size_t want = out.size() - done;
        const std::uint64_t here = offset + done;
        if (const std::uint64_t end = data_end_.load(std::memory_order_relaxed);
            seek_holes_ && want >= kHoleProbeBytes && here >= data_begin_.load(std::memory_order_relaxed) &&
            here < end) {
            want = static_cast<std::size_t>(std::min<std::uint64_t>(want, end - here));  // known data
        } else if (seek_holes_ && want >= kHoleProbeBytes) {
            const auto at = static_cast<off_t>(offset + done);
            const off_t data = ::lseek(fd_, at, SEEK_DATA);
            if (data < 0 && errno == ENXIO) {  // only holes from here to the end of the file
                std::memset(out.data() + done, 0, want);
                return;
            }
            if (data < 0) {
                seek_holes_ = false;  // not supported here: plain reads from now on
            } else if (data > at) {   // a hole first: zeros, then continue at the data
                const std::size_t zeros = static_cast<std::size_t>(std::min<std::uint64_t>(want, data - at));
                std::memset(out.data() + done, 0, zeros);
                done += zeros;
                continue;
            } else if (const off_t hole = ::lseek(fd_, at, SEEK_HOLE); hole > at) {
                want = static_cast<std::size_t>(std::min<std::uint64_t>(want, hole - at));  // the data run
                data_begin_.store(static_cast<std::uint64_t>(at), std::memory_order_relaxed);
                data_end_.store(static_cast<std::uint64_t>(hole), std::memory_order_relaxed);
            }
        }
        const ssize_t n = ::pread(fd_, out.data() + done, want, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(ErrorCode::io,
                        fmt::format("cannot read {} bytes at offset {} of \"{}\": {}", out.size() - done,
                                    offset + done, path_.string(), os_reason(errno)),
                        offset + done);
        }
        if (n == 0) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("\"{}\" ended early (was it truncated while open?): {} bytes missing at "
                                    "offset {}",
                                    path_.string(), out.size() - done, offset + done),
                        offset + done);
        }
        done += static_cast<std::size_t>(n);
    }
}

void FileImage::write_at(std::uint64_t offset, std::span<const std::byte> in) {
    if (!writable_) {
        throw Error(ErrorCode::io,
                    fmt::format("\"{}\" is opened read-only; cannot write {} bytes at offset {}",
                                path_.string(), in.size(), offset),
                    offset);
    }
    if (offset > size_ || in.size() > size_ - offset) {
        throw Error(ErrorCode::io,
                    fmt::format("writing {} bytes at offset {} passes the end of \"{}\" ({} bytes)",
                                in.size(), offset, path_.string(), size_),
                    offset);
    }
    std::size_t done = 0;
    while (done < in.size()) {
        const ssize_t n =
            ::pwrite(fd_, in.data() + done, in.size() - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(ErrorCode::io,
                        fmt::format("cannot write {} bytes at offset {} of \"{}\": {}", in.size() - done,
                                    offset + done, path_.string(), os_reason(errno)),
                        offset + done);
        }
        if (n == 0) {
            throw Error(ErrorCode::io,
                        fmt::format("cannot write at offset {} of \"{}\": no progress", offset + done,
                                    path_.string()),
                        offset + done);
        }
        done += static_cast<std::size_t>(n);
    }
    // A hint only: errors, if any, are reported by the fsync in AtomicImage::commit().
    if (early_writeback_ && in.size() >= kEarlyWritebackBytes) {
        (void)::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(in.size()),
                                SYNC_FILE_RANGE_WRITE);
    }
}

void FileImage::zero_range(std::uint64_t offset, std::uint64_t length) {
    if (!writable_ || offset > size_ || length > size_ - offset) {
        BlockDevice::zero_range(offset, length);  // throws the same errors as write_at
        return;
    }
    if (length == 0) return;
    int rc = 0;
    do {
        rc = ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                         static_cast<off_t>(length));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) BlockDevice::zero_range(offset, length);  // no hole punching here: write zeros
}

void FileImage::lock_exclusive() {
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        throw Error(errno == EWOULDBLOCK ? ErrorCode::refused : ErrorCode::io,
                    fmt::format("{} is being changed by another process (it holds a lock on the file): {}",
                                path_.string(), std::strerror(errno)));
    }
}

void FileImage::sync() {
    if (::fsync(fd_) != 0) throw_io("cannot flush", path_, errno);
}

// ---------------------------------------------------------------------------
// AtomicImage

AtomicImage::AtomicImage(const std::filesystem::path& destination, std::uint64_t size)
    : destination_(destination) {
    std::filesystem::path folder = destination.parent_path();
    if (folder.empty()) folder = ".";
    const std::string name = destination.filename().string();
    if (name.empty() || name == "." || name == "..") {
        throw Error(ErrorCode::usage, fmt::format("\"{}\" does not name a file", destination.string()));
    }
    std::error_code ec;
    if (std::filesystem::is_directory(destination, ec)) {
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" is a directory; give the path of the image file to create",
                                destination.string()));
    }
    if (size > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) {
        throw Error(ErrorCode::usage, fmt::format("image size {} bytes is too large for a file", size));
    }
    stale_removed_ = remove_stale(folder, name);
    // What is replaced keeps its mode and owner (mkfs --force, extract --force).
    struct stat old {};
    if (::stat(destination.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
        keep_mode_ = old.st_mode & 07777;
        keep_uid_ = old.st_uid;
        keep_gid_ = old.st_gid;
    }
    std::string templ = (folder / (temp_prefix(name) + std::to_string(getpid()) + "-XXXXXX")).string();
    int fd = -1;
    {
        SignalBlock block;
        install_cleanup_handlers();
        fd = ::mkostemp(templ.data(), O_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            throw Error(ErrorCode::io, fmt::format("cannot create a temporary file in folder \"{}\": {}",
                                                   folder.string(), os_reason(err)));
        }
        // Absolute, so that the signal handler still finds it after a chdir().
        std::error_code abs_ec;
        const std::filesystem::path absolute = std::filesystem::absolute(templ, abs_ec);
        slot_ = register_temp(abs_ec ? templ : absolute.string());
    }
    temp_path_ = templ;
    try {
        if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
            const int err = errno;
            throw Error(ErrorCode::io, fmt::format("cannot size the temporary file \"{}\" to {} bytes: {}",
                                                   templ, size, os_reason(err)));
        }
        image_.reset(new FileImage(fd, temp_path_, size, true));
        image_->early_writeback_ = true;
    } catch (...) {
        if (!image_) ::close(fd);
        ::unlink(templ.c_str());
        unregister_temp(slot_);
        throw;
    }
}

AtomicImage::~AtomicImage() {
    if (committed_) return;
    image_.reset();
    ::unlink(temp_path_.c_str());
    unregister_temp(slot_);
}

void AtomicImage::commit() {
    if (committed_) return;
    image_->sync();
    const mode_t mode = keep_mode_ ? static_cast<mode_t>(*keep_mode_) : (0666 & ~current_umask());
    // The owner first: fchown clears set-user-ID bits, which fchmod then restores.
    if (keep_uid_ && (*keep_uid_ != ::geteuid() || *keep_gid_ != ::getegid())) {
        // Only root may give a file away; others keep their own ownership (as install(1) does).
        if (::fchown(image_->fd_, static_cast<uid_t>(*keep_uid_), static_cast<gid_t>(*keep_gid_)) != 0 &&
            errno != EPERM)
            throw_io("cannot set the owner of", temp_path_, errno);
    }
    if (::fchmod(image_->fd_, mode) != 0) throw_io("cannot set the mode of", temp_path_, errno);
    {
        SignalBlock block;
        if (::rename(temp_path_.c_str(), destination_.c_str()) != 0) {
            const int err = errno;
            throw Error(ErrorCode::io, fmt::format("cannot rename \"{}\" to \"{}\": {}", temp_path_.string(),
                                                   destination_.string(), os_reason(err)));
        }
        unregister_temp(slot_);
        slot_ = -1;
        committed_ = true;
    }
    image_->path_ = destination_;
    // Make the rename durable; a failure here does not undo the commit.
    std::filesystem::path folder = destination_.parent_path();
    if (folder.empty()) folder = ".";
    const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
}

void copy_stored_bytes(const FileImage& source, BlockDevice& target, std::uint64_t skip_offset,
                       std::uint64_t skip_bytes) {
    constexpr std::size_t kBlock = 64 * 1024;
    std::vector<std::byte> buf(16 * kBlock);
    const std::uint64_t end = source.size();
    const std::uint64_t skip_end =
        skip_bytes > end - std::min(end, skip_offset) ? end : skip_offset + skip_bytes;
    const int fd = source.descriptor();
    bool seek = true;
    std::uint64_t at = 0;
    while (at < end) {
        if (at >= skip_offset && at < skip_end) {
            at = skip_end;
            continue;
        }
        std::uint64_t stop = at < skip_offset ? std::min(skip_offset, end) : end;
        if (seek) {
            const off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
            if (data < 0 && errno == ENXIO) return;  // holes to the end
            if (data < 0) {
                seek = false;
            } else if (static_cast<std::uint64_t>(data) > at) {
                at = static_cast<std::uint64_t>(data);
                continue;
            } else if (const off_t hole = ::lseek(fd, data, SEEK_HOLE); hole > data) {
                stop = std::min<std::uint64_t>(stop, static_cast<std::uint64_t>(hole));
            }
        }
        while (at < stop) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), stop - at));
            const auto chunk = std::span(buf).first(n);
            source.read_at(at, chunk);
            for (std::size_t b = 0; b < n; b += kBlock) {
                const auto block = chunk.subspan(b, std::min(kBlock, n - b));
                const bool zero = block.front() == std::byte{0} &&
                                  std::memcmp(block.data(), block.data() + 1, block.size() - 1) == 0;
                if (!zero) target.write_at(at + b, block);
            }
            at += n;
        }
    }
}

}  // namespace fsimg::io
