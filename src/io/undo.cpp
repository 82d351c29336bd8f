#include "fsimg/io/undo.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"

namespace fsimg::io {

namespace {

constexpr char kMagic[12] = {'F', 'S', 'I', 'M', 'G', 'U', 'N', 'D', 'O', '1', '\0', '\0'};
constexpr std::uint32_t kRecordTag = 0x31434552;  // "REC1"
constexpr std::size_t kHeaderBytes = 12 + 8;
constexpr std::size_t kRecordHeadBytes = 4 + 8 + 4 + 4 + 4;
constexpr std::uint32_t kMaxRecordBytes = 64u
                                          << 20;  // a repair writes sectors and FAT windows, never this much

std::uint32_t crc_of(std::span<const std::byte> b) {
    uLong crc = crc32(0L, Z_NULL, 0);
    std::size_t at = 0;
    while (at < b.size()) {
        const auto n = static_cast<uInt>(std::min<std::size_t>(b.size() - at, 1u << 30));
        crc = crc32(crc, reinterpret_cast<const Bytef*>(b.data() + at), n);
        at += n;
    }
    return static_cast<std::uint32_t>(crc);
}

void write_all(int fd, std::span<const std::byte> b, const std::filesystem::path& path) {
    std::size_t at = 0;
    while (at < b.size()) {
        const ssize_t n = ::write(fd, b.data() + at, b.size() - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw Error(ErrorCode::io, fmt::format("{}: cannot write the undo file: {}", path.string(),
                                                   std::strerror(errno)));
        at += static_cast<std::size_t>(n);
    }
}

}  // namespace

UndoDevice::UndoDevice(BlockDevice& inner, std::uint64_t base_offset, std::uint64_t image_bytes,
                       const std::filesystem::path& path)
    : inner_(inner), base_(base_offset) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) {
        throw Error(
            errno == EEXIST ? ErrorCode::refused : ErrorCode::io,
            fmt::format("{}: cannot create the undo file: {}{}", path.string(), std::strerror(errno),
                        errno == EEXIST ? " (an undo file is never overwritten: choose a new name)" : ""));
    }
    std::vector<std::byte> h(kHeaderBytes);
    std::memcpy(h.data(), kMagic, sizeof kMagic);
    core::store_le64(h, 12, image_bytes);
    try {
        write_all(fd_, h, path);
        if (::fsync(fd_) != 0)
            throw Error(ErrorCode::io, fmt::format("{}: fsync: {}", path.string(), std::strerror(errno)));
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

UndoDevice::~UndoDevice() {
    if (fd_ >= 0) ::close(fd_);
}

void UndoDevice::write_at(std::uint64_t offset, std::span<const std::byte> in) {
    if (in.empty()) return;
    if (in.size() > kMaxRecordBytes) {
        // Split: each part saved before it is written.
        for (std::size_t at = 0; at < in.size(); at += kMaxRecordBytes)
            write_at(offset + at, in.subspan(at, std::min<std::size_t>(kMaxRecordBytes, in.size() - at)));
        return;
    }
    std::vector<std::byte> rec(kRecordHeadBytes + in.size());
    const auto saved = std::span(rec).subspan(kRecordHeadBytes);
    inner_.read_at(offset, saved);
    core::store_le32(rec, 0, kRecordTag);
    core::store_le64(rec, 4, base_ + offset);
    core::store_le32(rec, 12, static_cast<std::uint32_t>(in.size()));
    core::store_le32(rec, 16, crc_of(in));
    core::store_le32(rec, 20, crc_of(saved));
    write_all(fd_, rec, "undo file");
    if (::fsync(fd_) != 0)
        throw Error(ErrorCode::io, fmt::format("undo file: fsync: {}", std::strerror(errno)));
    ++records_;
    inner_.write_at(offset, in);
}

void UndoDevice::zero_range(std::uint64_t offset, std::uint64_t length) {
    const std::vector<std::byte> zeros(std::min<std::uint64_t>(length, kMaxRecordBytes));
    for (std::uint64_t at = 0; at < length; at += zeros.size())
        write_at(offset + at, std::span(zeros).first(std::min<std::uint64_t>(zeros.size(), length - at)));
}

UndoResult undo_image(const std::filesystem::path& undo_path, BlockDevice& image) {
    std::ifstream f(undo_path, std::ios::binary);
    if (!f) throw Error(ErrorCode::io, fmt::format("{}: cannot open the undo file", undo_path.string()));
    std::vector<std::byte> h(kHeaderBytes);
    f.read(reinterpret_cast<char*>(h.data()), static_cast<std::streamsize>(h.size()));
    if (f.gcount() != static_cast<std::streamsize>(h.size()) ||
        std::memcmp(h.data(), kMagic, sizeof kMagic) != 0)
        throw Error(ErrorCode::corrupt, fmt::format("{} is not an fsimg undo file", undo_path.string()));
    const std::uint64_t image_bytes = core::load_le64(h, 12);
    if (image_bytes != image.size()) {
        throw Error(ErrorCode::refused,
                    fmt::format("{} was made for an image of {} bytes; this one holds {}: not the same image",
                                undo_path.string(), image_bytes, image.size()));
    }
    struct Record {
        std::uint64_t offset;
        std::uint32_t new_crc;
        std::vector<std::byte> saved;
    };
    std::vector<Record> records;
    UndoResult result;
    while (true) {
        std::vector<std::byte> head(kRecordHeadBytes);
        f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
        if (f.gcount() == 0) break;
        if (f.gcount() != static_cast<std::streamsize>(head.size())) {
            result.cut_short = true;
            break;
        }
        const std::uint32_t length = core::load_le32(head, 12);
        if (core::load_le32(head, 0) != kRecordTag || length == 0 || length > kMaxRecordBytes)
            throw Error(ErrorCode::corrupt,
                        fmt::format("{}: record {} is damaged", undo_path.string(), records.size() + 1));
        Record r{core::load_le64(head, 4), core::load_le32(head, 16), std::vector<std::byte>(length)};
        f.read(reinterpret_cast<char*>(r.saved.data()), length);
        if (f.gcount() != static_cast<std::streamsize>(length)) {
            result.cut_short = true;
            break;
        }
        if (crc_of(r.saved) != core::load_le32(head, 20))
            throw Error(ErrorCode::corrupt,
                        fmt::format("{}: record {} fails its CRC32", undo_path.string(), records.size() + 1));
        if (r.offset > image.size() || length > image.size() - r.offset) {
            throw Error(ErrorCode::corrupt, fmt::format("{}: record {} lies outside the image",
                                                        undo_path.string(), records.size() + 1));
        }
        records.push_back(std::move(r));
    }
    // The check, before anything is written: undone last write first, each
    // range must hold what its write put there. Bytes already put back in
    // this pass are read from `restored` (writes may overlap).
    std::vector<const Record*> restored;  // in the order put back: later ones win
    auto current = [&](std::uint64_t offset, std::size_t length) {
        std::vector<std::byte> b(length);
        image.read_at(offset, b);
        for (const Record* r : restored) {
            const std::uint64_t lo = std::max(offset, r->offset);
            const std::uint64_t hi = std::min(offset + length, r->offset + r->saved.size());
            for (std::uint64_t x = lo; x < hi; ++x) b[x - offset] = r->saved[x - r->offset];
        }
        return b;
    };
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
        if (crc_of(current(it->offset, it->saved.size())) != it->new_crc) {
            throw Error(
                ErrorCode::refused,
                fmt::format("bytes {}..{} of the image no longer hold what the repair wrote: the image "
                            "was changed since, or it is not the image {} was made for; nothing was "
                            "put back",
                            it->offset, it->offset + it->saved.size() - 1, undo_path.string()));
        }
        restored.push_back(&*it);
    }
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
        image.write_at(it->offset, it->saved);
        ++result.records;
        result.bytes += it->saved.size();
    }
    return result;
}

}  // namespace fsimg::io
