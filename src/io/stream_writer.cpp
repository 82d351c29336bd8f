#include "fsimg/io/stream_writer.hpp"
#include "fsimg/core/bytes.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fsimg/core/error.hpp"

namespace fsimg::io {

namespace {

constexpr std::size_t kStreamBuffer = 8u << 20;  ///< bytes gathered before one write
constexpr std::size_t kZeroBlock = 64u << 10;    ///< all-zero blocks of this size may stay holes

}  // namespace

StreamWriter::StreamWriter(BlockDevice& dev, bool skip_zero)
    : dev_(dev), skip_zero_(skip_zero), buf_(kStreamBuffer) {}

void StreamWriter::seek(std::uint64_t offset) {
    if (offset != start_ + used_) {
        flush();
        start_ = offset;
    }
}

std::span<std::byte> StreamWriter::reserve(std::size_t n) {
    if (used_ == buf_.size()) flush();
    return std::span<std::byte>(buf_).subspan(used_, std::min(n, buf_.size() - used_));
}

void StreamWriter::append(std::span<const std::byte> data) {
    while (!data.empty()) {
        auto room = reserve(data.size());
        std::copy_n(data.begin(), room.size(), room.begin());
        commit(room.size());
        data = data.subspan(room.size());
    }
}

void StreamWriter::append_zeros(std::uint64_t n) {
    while (n > 0) {
        auto room = reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n, buf_.size())));
        std::fill(room.begin(), room.end(), std::byte{0});
        commit(room.size());
        n -= room.size();
    }
}

void StreamWriter::append_hole(std::uint64_t n) {
    if (!skip_zero_) return append_zeros(n);
    flush();
    start_ += n;
}

void StreamWriter::flush() {
    const std::byte* p = buf_.data();
    if (!skip_zero_) {
        if (used_ > 0) dev_.write_at(start_, std::span<const std::byte>(p, used_));
    } else {
        // Write maximal runs of blocks that are not all zero.
        std::size_t run_begin = 0, pos = 0;
        while (pos < used_) {
            const std::size_t len = std::min(kZeroBlock, used_ - pos);
            if (core::all_zero(p + pos, len)) {
                if (pos > run_begin)
                    dev_.write_at(start_ + run_begin,
                                  std::span<const std::byte>(p + run_begin, pos - run_begin));
                run_begin = pos + len;
            }
            pos += len;
        }
        if (used_ > run_begin) {
            dev_.write_at(start_ + run_begin, std::span<const std::byte>(p + run_begin, used_ - run_begin));
        }
    }
    start_ += used_;
    used_ = 0;
}

}  // namespace fsimg::io
