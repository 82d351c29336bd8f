// gzip-compressed images: reading through a sparse temporary file, writing
// from any BlockDevice. zlib's gz* API does the (de)compression.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/io/file_image.hpp"

namespace fsimg::io {

namespace {

constexpr std::size_t kChunk = 1 << 20;       // bytes decompressed per step
constexpr std::size_t kHoleBlock = 64 << 10;  // zero blocks this large stay holes

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

bool all_zero(const std::byte* p, std::size_t n) {
    return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

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
    GzFile gz;
    gz.f = gzopen(path.c_str(), "rb");
    if (!gz.f) {
        throw Error(ErrorCode::io,
                    fmt::format("cannot open \"{}\": {}", path.string(), std::strerror(errno)));
    }
    gzbuffer(gz.f, 256 << 10);

    const char* tmpdir = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/fsimg-gunzip-XXXXXX";
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        throw Error(ErrorCode::io,
                    fmt::format("cannot create a temporary file in \"{}\" to decompress \"{}\": {}",
                                tmpl.substr(0, tmpl.rfind('/')), path.string(), std::strerror(errno)));
    }
    ::unlink(tmpl.c_str());  // anonymous from now on: nothing remains after exit
    auto image = std::unique_ptr<FileImage>(new FileImage(fd, path, 0, false));

    std::vector<std::byte> buf(kChunk);
    std::uint64_t total = 0;
    for (;;) {
        const int n = gzread(gz.f, buf.data(), static_cast<unsigned>(buf.size()));
        if (n < 0) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("\"{}\": the gzip data is damaged after {} decompressed bytes: {}",
                                    path.string(), total, gz_error(gz.f)),
                        total);
        }
        if (n == 0) break;
        // Write non-zero blocks only; zero blocks become holes via the final size.
        for (std::size_t at = 0; at < static_cast<std::size_t>(n); at += kHoleBlock) {
            const std::size_t len = std::min(kHoleBlock, static_cast<std::size_t>(n) - at);
            if (all_zero(buf.data() + at, len)) continue;
            std::size_t done = 0;
            while (done < len) {
                const ssize_t w =
                    ::pwrite(fd, buf.data() + at + done, len - done, static_cast<off_t>(total + at + done));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) {
                    throw Error(ErrorCode::io,
                                fmt::format("cannot decompress \"{}\" into a temporary file: {}",
                                            path.string(), w < 0 ? std::strerror(errno) : "short write"));
                }
                done += static_cast<std::size_t>(w);
            }
        }
        total += static_cast<std::uint64_t>(n);
    }
    // gzread returns 0 both at a clean end and at a truncated stream.
    int code = Z_OK;
    gzerror(gz.f, &code);
    if (code != Z_OK) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("\"{}\": the gzip stream ends early after {} decompressed bytes: {}",
                                path.string(), total, gz_error(gz.f)),
                    total);
    }
    if (::ftruncate(fd, static_cast<off_t>(total)) != 0) {
        throw Error(ErrorCode::io, fmt::format("cannot size the temporary file for \"{}\": {}", path.string(),
                                               std::strerror(errno)));
    }
    image->size_ = total;
    return image;
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
