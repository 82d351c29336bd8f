// io/safe_output.hpp: checking an output path, writing it atomically.
#include "fsimg/io/safe_output.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fsimg/core/error.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/probe.hpp"

namespace fsimg::io {

namespace {

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a regular file";
}

}  // namespace

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
    struct stat sa {
    }, sb{};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

void check_output_path(const std::filesystem::path& path, std::span<const std::filesystem::path> inputs,
                       std::string_view option) {
    const std::string shown = path.string();
    const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
    if (::access(folder.c_str(), W_OK) != 0) {
        throw Error(ErrorCode::usage, fmt::format("{} {}: cannot write in {}: {}", option, shown,
                                                  folder.string(), std::strerror(errno)));
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return;  // a new file (or a dangling link: renamed over, never followed)
        throw Error(ErrorCode::io, fmt::format("{} {}: {}", option, shown, std::strerror(errno)));
    }
    if (!S_ISREG(st.st_mode)) {
        throw Error(ErrorCode::refused,
                    fmt::format("{} {}: is {}; give a new file name", option, shown, kind_of(st.st_mode)));
    }
    for (const auto& in : inputs) {
        if (same_file(path, in)) {
            throw Error(ErrorCode::refused,
                        fmt::format("{} {}: is the input {} (the same file); give another file name", option,
                                    shown, in.string()));
        }
    }
    const Content c = probe_path(path, ProbeOptions{false});
    if (c.recognised()) {
        throw Error(
            ErrorCode::refused,
            fmt::format("{} {}: already holds {}; an output never replaces that; give another file name",
                        option, shown, c.description));
    }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
    AtomicImage out(path, bytes.size());
    out.device().write_at(0, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    out.commit();
}

}  // namespace fsimg::io
