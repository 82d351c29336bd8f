// gzip-compressed images: read through a sparse temporary file filled on
// demand (FileImage::open_gzip), written from any BlockDevice. Reading uses
// zlib's inflate with the gzip wrapper (windowBits 15 + 16), which checks
// every member's CRC32 and ISIZE trailer [RFC 1952 §2.3.1] before it returns
// Z_STREAM_END; writing uses the gz* API.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/partition.hpp"

namespace fsimg::io {

namespace {

constexpr std::size_t kChunk = 1 << 20;        // bytes decompressed per step
constexpr std::size_t kHoleBlock = 64 << 10;   // zero blocks this large stay holes
constexpr std::uint64_t kHeadBytes = 1 << 20;  // decompressed at open to find the declared extent
constexpr std::uint64_t kDefaultTempLimit = 16ull << 30;

struct GzFile {
    gzFile f = nullptr;
    ~GzFile() {
        if (f) gzclose(f);
    }
};

std::string gz_error(gzFile f) {
    int code = 0;
    const char* msg = gzerror(f, &code);
    return code == Z_ERRNO ? std::strerror(errno) : (msg ? msg : "unknown zlib error");
}

/// The bytes the first sectors say the image spans, or 0 when they say
/// nothing known: a FAT, exFAT or NTFS volume's size, or the end of an MBR's
/// last partition or of a GPT (its backup header's LBA + 1).
std::uint64_t declared_extent(std::span<const std::byte> head) {
    if (head.size() < 512) return 0;
    const auto s0 = head.first<512>();
    const bool sig = s0[510] == std::byte{0x55} && s0[511] == std::byte{0xAA};
    if (std::memcmp(s0.data() + 3, "EXFAT   ", 8) == 0) {
        const unsigned shift = std::to_integer<unsigned>(s0[108]);  // BytesPerSectorShift [EXFAT §3.1.14]
        const std::uint64_t sectors = core::le64<72>(s0);           // VolumeLength
        if (shift < 9 || shift > 12 || sectors > (UINT64_MAX >> 12)) return 0;
        return sectors << shift;
    }
    if (std::memcmp(s0.data() + 3, "NTFS    ", 8) == 0) {
        const std::uint64_t bps = core::le16<0x0B>(s0);
        const std::uint64_t sectors = core::le64<0x28>(s0);  // the backup boot sector follows them
        if (bps < 256 || bps > 4096 || sectors >= (UINT64_MAX >> 12)) return 0;
        return (sectors + 1) * bps;
    }
    if (looks_like_boot_sector(s0)) {  // FAT
        const std::uint64_t bps = core::le16<0x0B>(s0);
        const std::uint64_t t16 = core::le16<0x13>(s0), t32 = core::le32<0x20>(s0);
        return bps >= 512 && bps <= 4096 ? (t16 != 0 ? t16 : t32) * bps : 0;
    }
    if (!sig) return 0;
    std::uint64_t end = 0;
    for (std::size_t i = 0; i < 4; ++i) {  // MBR partition entries at 446 [formats.md §4]
        const std::size_t e = 446 + 16 * i;
        const std::uint8_t type = std::to_integer<std::uint8_t>(s0[e + 4]);
        const std::uint64_t first = core::load_le32(s0, e + 8), count = core::load_le32(s0, e + 12);
        if (type == 0) continue;
        if (type == 0xEE) {  // GPT: the primary header at LBA 1 names the backup's LBA
            for (const std::size_t ss : {std::size_t{512}, std::size_t{4096}}) {
                if (head.size() >= 2 * ss && std::memcmp(head.data() + ss, "EFI PART", 8) == 0) {
                    end = std::max(end, (core::load_le64(head, ss + 32) + 1) * ss);
                }
            }
            continue;
        }
        end = std::max(end, (first + count) * 512);
    }
    return end;
}

/// FSIMG_GZIP_TEMP_LIMIT, else 16 GiB; never more than 90% of the free space in `dir`.
std::uint64_t temp_limit(const std::string& dir) {
    std::uint64_t limit = kDefaultTempLimit;
    if (const char* env = std::getenv("FSIMG_GZIP_TEMP_LIMIT"); env != nullptr && *env != '\0') {
        limit = core::parse_size(env);
    } else {
        struct statvfs fs {};
        if (::statvfs(dir.c_str(), &fs) == 0) {
            limit = std::min<std::uint64_t>(limit, fs.f_bavail * fs.f_frsize / 10 * 9);
        }
    }
    return limit;
}

}  // namespace

/// The decompression state of one gzip image: the source, the temporary
/// file, zlib's stream, and what has been found wrong so far.
class GzipInflater {
public:
    GzipInflater(int src, int dst, std::string name, std::string tmpdir)
        : src_(src),
          dst_(dst),
          name_(std::move(name)),
          tmpdir_(std::move(tmpdir)),
          limit_(temp_limit(tmpdir_)),
          in_(256 << 10),
          out_(kChunk) {
        if (inflateInit2(&zs_, 15 + 16) != Z_OK) throw Error(ErrorCode::io, "zlib: inflateInit2 failed");
    }
    ~GzipInflater() {
        inflateEnd(&zs_);
        ::close(src_);
    }
    GzipInflater(const GzipInflater&) = delete;
    GzipInflater& operator=(const GzipInflater&) = delete;

    /// Decompresses until `end` bytes are stored (or the data ends). With
    /// `keep` false (verify), past `end` nothing is stored and it runs to
    /// the end of the stream.
    void fill(std::uint64_t end, bool keep = true) {
        const std::lock_guard lock(mutex_);
        while ((produced_ < end || !keep) && !ended_) {
            if (keep) {
                step(UINT64_MAX, end);  // no further than asked: what is decompressed is stored
            } else {
                step(end, UINT64_MAX);  // to the end of the stream, storing nothing past `end`
            }
        }
        if (keep && produced_ < end) {
            throw Error(
                ErrorCode::corrupt,
                fmt::format("\"{}\": the gzip data ends after {} decompressed bytes; reading up to byte "
                            "{} needs {} more{}",
                            name_, produced_, end, end - produced_,
                            problems_.empty() ? "" : " (" + problems_.front() + ")"),
                produced_);
        }
    }
    std::uint64_t produced() const { return produced_; }
    bool ended() const { return ended_; }
    /// The data is damaged or cut (trailing garbage alone is not damage).
    bool damaged() const { return damaged_; }
    std::vector<std::string> problems() const {
        const std::lock_guard lock(mutex_);
        return problems_;
    }

private:
    /// One inflate call: reads input when needed, produces output up to
    /// `out_end` at most, stores the output below `store_end` (bytes past it
    /// are only counted), handles member ends.
    void step(std::uint64_t store_end, std::uint64_t out_end) {
        if (zs_.avail_in == 0) {
            const ssize_t n = ::read(src_, in_.data(), in_.size());
            if (n < 0 && errno == EINTR) return;
            if (n < 0)
                throw Error(ErrorCode::io,
                            fmt::format("cannot read \"{}\": {}", name_, std::strerror(errno)));
            if (n == 0) {
                ended_ = true;
                if (!member_done_) {
                    problems_.push_back(
                        fmt::format("the gzip stream ends early, before its trailer (CRC32 and size), after "
                                    "{} decompressed "
                                    "bytes: the file is cut",
                                    produced_));
                    damaged_ = true;
                }
                return;
            }
            compressed_read_ += static_cast<std::uint64_t>(n);
            zs_.next_in = in_.data();
            zs_.avail_in = static_cast<uInt>(n);
        }
        if (member_done_) {  // after a member: another one (gzip's concatenation), or garbage
            if (zs_.avail_in >= 2 && zs_.next_in[0] == 0x1F && zs_.next_in[1] == 0x8B) {
                inflateReset(&zs_);
                member_done_ = false;
            } else {
                trailing_garbage();
                return;
            }
        }
        const std::size_t room =
            static_cast<std::size_t>(std::min<std::uint64_t>(out_.size(), out_end - produced_));
        zs_.next_out = out_.data();
        zs_.avail_out = static_cast<uInt>(room);
        const int rc = inflate(&zs_, Z_NO_FLUSH);
        const std::size_t got = room - zs_.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            ended_ = true;
            std::string why = zs_.msg != nullptr ? zs_.msg : fmt::format("zlib error {}", rc);
            if (why == "incorrect data check") why = "the CRC32 in the trailer does not match the data";
            if (why == "incorrect length check")
                why = "the size in the trailer (ISIZE) does not match the data";
            problems_.push_back(fmt::format("the gzip data is damaged after {} decompressed bytes: {}",
                                            produced_ + got, why));
            damaged_ = true;
            store(got, store_end);
            return;
        }
        store(got, store_end);
        if (rc == Z_STREAM_END) member_done_ = true;
    }

    void trailing_garbage() {
        // Everything from here to the end of the file.
        struct stat st {};
        std::uint64_t rest = zs_.avail_in;
        if (::fstat(src_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) > compressed_read_)
            rest += static_cast<std::uint64_t>(st.st_size) - compressed_read_;
        bool zeros = true;
        for (uInt i = 0; i < zs_.avail_in && zeros; ++i) zeros = zs_.next_in[i] == 0;
        problems_.push_back(
            fmt::format("{} bytes of trailing {} after the gzip data (ignored, as gzip ignores them)",
                        core::format_count(rest), zeros ? "zeros" : "garbage"));
        zs_.avail_in = 0;
        ended_ = true;
    }

    void store(std::size_t got, std::uint64_t store_end) {
        const std::byte* p = reinterpret_cast<const std::byte*>(out_.data());
        for (std::size_t at = 0; at < got; at += kHoleBlock) {
            const std::size_t len = std::min(kHoleBlock, got - at);
            const std::uint64_t off = produced_ + at;
            if (off >= store_end || core::all_zero(p + at, len)) continue;
            const std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(len, store_end - off));
            if (stored_ + keep > limit_) {
                throw Error(
                    ErrorCode::io,
                    fmt::format("decompressing \"{}\" needs more than {} of temporary space in {} "
                                "(FSIMG_GZIP_TEMP_LIMIT); decompress it yourself (gunzip -k) and give "
                                "the image",
                                name_, core::format_size_both(limit_), tmpdir_));
            }
            std::size_t done = 0;
            while (done < keep) {
                const ssize_t w = ::pwrite(dst_, p + at + done, keep - done, static_cast<off_t>(off + done));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) {
                    throw Error(ErrorCode::io,
                                fmt::format("cannot decompress \"{}\" into a temporary file: {}", name_,
                                            w < 0 ? std::strerror(errno) : "short write"));
                }
                done += static_cast<std::size_t>(w);
            }
            stored_ += keep;
        }
        produced_ += got;
        // The temporary file reaches what was decompressed (trailing zeros are holes).
        const std::uint64_t size = std::min(produced_, store_end);
        if (size > file_size_) {
            if (::ftruncate(dst_, static_cast<off_t>(size)) != 0)
                throw Error(ErrorCode::io, fmt::format("cannot size the temporary file for \"{}\": {}", name_,
                                                       std::strerror(errno)));
            file_size_ = size;
        }
    }

    int src_;
    int dst_;  ///< owned by the FileImage
    std::string name_;
    std::string tmpdir_;
    std::uint64_t limit_;
    z_stream zs_{};
    std::vector<Bytef> in_;
    std::vector<Bytef> out_;
    std::uint64_t produced_ = 0;  ///< decompressed bytes so far
    std::uint64_t stored_ = 0;    ///< bytes written to the temporary file
    std::uint64_t file_size_ = 0;
    std::uint64_t compressed_read_ = 0;
    bool member_done_ = false;
    bool ended_ = false;
    bool damaged_ = false;
    std::vector<std::string> problems_;
    mutable std::mutex mutex_;
};

void gzip_fill(GzipInflater& inflater, std::uint64_t end) { inflater.fill(end); }

bool is_gzip_file(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    struct stat st {};
    unsigned char magic[2] = {0, 0};
    const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::pread(fd, magic, 2, 0) == 2;
    ::close(fd);
    return ok && magic[0] == 0x1F && magic[1] == 0x8B;
}

std::unique_ptr<FileImage> FileImage::open_gzip(const std::filesystem::path& path) {
    const int src = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (src < 0) {
        throw Error(ErrorCode::io,
                    fmt::format("cannot open \"{}\": {}", path.string(), std::strerror(errno)));
    }
    const char* env = std::getenv("TMPDIR");
    const std::string tmpdir = env && *env ? env : "/tmp";
    std::string tmpl = tmpdir + "/fsimg-gunzip-XXXXXX";
    const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        ::close(src);
        throw Error(ErrorCode::io,
                    fmt::format("cannot create a temporary file in \"{}\" to decompress \"{}\": {}", tmpdir,
                                path.string(), std::strerror(err)));
    }
    ::unlink(tmpl.c_str());  // anonymous from now on: nothing remains after exit
    std::shared_ptr<GzipInflater> inflater;
    try {
        inflater = std::make_shared<GzipInflater>(src, fd, path.string(), tmpdir);
    } catch (...) {
        ::close(src);
        ::close(fd);
        throw;
    }
    auto image = std::unique_ptr<FileImage>(new FileImage(fd, path, 0, false));
    // The first MiB names the extent; without one, everything is decompressed now.
    try {
        inflater->fill(kHeadBytes);
    } catch (const Error& e) {
        if (e.code() != ErrorCode::corrupt) throw;  // a shorter image: its size is what there is
    }
    std::vector<std::byte> head(static_cast<std::size_t>(std::min(kHeadBytes, inflater->produced())));
    if (!head.empty() && ::pread(fd, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()))
        throw Error(ErrorCode::io,
                    fmt::format("cannot read back \"{}\": {}", path.string(), std::strerror(errno)));
    std::uint64_t size = inflater->ended() ? inflater->produced() : declared_extent(head);
    if (size == 0) {
        try {
            inflater->fill(UINT64_MAX);
        } catch (const Error& e) {
            if (e.code() != ErrorCode::corrupt) throw;
        }
        size = inflater->produced();
    }
    if (inflater->ended() && inflater->produced() < size) size = inflater->produced();
    // Damage met while opening (a small image, or one without a declared extent) is an error at
    // once; damage further on is met by the reads that need it, or by verify_gzip().
    if (inflater->damaged())
        throw Error(ErrorCode::corrupt,
                    fmt::format("\"{}\": {}", path.string(), inflater->problems().front()),
                    inflater->produced());
    image->size_ = size;
    image->inflater_ = std::move(inflater);
    return image;
}

std::vector<std::string> FileImage::gzip_problems() const {
    return inflater_ ? inflater_->problems() : std::vector<std::string>{};
}

bool FileImage::gzip_damaged() const { return inflater_ && inflater_->damaged(); }

void FileImage::verify_gzip() const {
    if (inflater_) inflater_->fill(size_, false);
}

void write_gzip(const BlockDevice& source, const std::filesystem::path& destination) {
    AtomicImage out(destination, 0);
    const auto& tmp = out.temporary_path();
    GzFile gz;
    gz.f = gzopen(tmp.c_str(), "wb6");
    if (!gz.f) {
        throw Error(ErrorCode::io,
                    fmt::format("cannot write \"{}\": {}", tmp.string(), std::strerror(errno)));
    }
    gzbuffer(gz.f, 256 << 10);
    std::vector<std::byte> buf(kChunk);
    for (std::uint64_t at = 0; at < source.size(); at += buf.size()) {
        const std::size_t len =
            static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), source.size() - at));
        source.read_at(at, std::span<std::byte>(buf.data(), len));
        if (gzwrite(gz.f, buf.data(), static_cast<unsigned>(len)) != static_cast<int>(len)) {
            throw Error(ErrorCode::io,
                        fmt::format("cannot compress into \"{}\": {}", destination.string(), gz_error(gz.f)));
        }
    }
    const int rc = gzclose(gz.f);
    gz.f = nullptr;
    if (rc != Z_OK) {
        throw Error(ErrorCode::io,
                    fmt::format("cannot finish \"{}\": zlib error {}", destination.string(), rc));
    }
    out.commit();
}

}  // namespace fsimg::io
