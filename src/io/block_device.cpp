#include "fsimg/io/block_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fsimg/core/error.hpp"

namespace fsimg::io {

namespace {

bool in_range(std::uint64_t size, std::uint64_t offset, std::uint64_t length) noexcept {
    return offset <= size && length <= size - offset;
}

/// Error(corrupt) for a read of [offset, offset+length) that passes `size`;
/// `base` is the window's offset in the image (for the absolute byte offset).
[[noreturn]] void throw_read_past_end(std::string_view what, std::uint64_t size, std::uint64_t offset,
                                      std::uint64_t length, std::uint64_t base) {
    const std::uint64_t available = offset < size ? size - offset : 0;
    throw Error(ErrorCode::corrupt,
                fmt::format("{}: reading {} bytes at offset {} passes the end ({} bytes): {} bytes missing",
                            what, length, offset, size, length - available),
                base + offset);
}

[[noreturn]] void throw_write_past_end(std::string_view what, std::uint64_t size, std::uint64_t offset,
                                       std::uint64_t length, std::uint64_t base) {
    throw Error(ErrorCode::io,
                fmt::format("{}: writing {} bytes at offset {} passes the end ({} bytes)", what, length,
                            offset, size),
                base + offset);
}

}  // namespace

void BlockDevice::zero_range(std::uint64_t offset, std::uint64_t length) {
    constexpr std::size_t kChunk = 1 << 20;
    if (!in_range(size(), offset, length)) throw_write_past_end("zeroing", size(), offset, length, 0);
    const std::vector<std::byte> zeros(static_cast<std::size_t>(std::min<std::uint64_t>(length, kChunk)));
    while (length > 0) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(length, zeros.size()));
        write_at(offset, std::span(zeros).first(n));
        offset += n;
        length -= n;
    }
}

void MemoryImage::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    if (!in_range(data_.size(), offset, out.size()))
        throw_read_past_end("memory image", data_.size(), offset, out.size(), 0);
    if (!out.empty()) std::memcpy(out.data(), data_.data() + offset, out.size());
}

void MemoryImage::write_at(std::uint64_t offset, std::span<const std::byte> in) {
    if (!in_range(data_.size(), offset, in.size()))
        throw_write_past_end("memory image", data_.size(), offset, in.size(), 0);
    if (!in.empty()) std::memcpy(data_.data() + offset, in.data(), in.size());
}

SubRange::SubRange(BlockDevice& parent, std::uint64_t offset, std::uint64_t length)
    : parent_(parent), offset_(offset), length_(length) {
    if (!in_range(parent.size(), offset, length)) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("window of {} bytes at offset {} passes the end of the image ({} bytes)",
                                length, offset, parent.size()),
                    offset);
    }
}

void SubRange::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    if (!in_range(length_, offset, out.size()))
        throw_read_past_end(fmt::format("partition at byte {}", offset_), length_, offset, out.size(),
                            offset_);
    parent_.read_at(offset_ + offset, out);
}

void SubRange::write_at(std::uint64_t offset, std::span<const std::byte> in) {
    if (!in_range(length_, offset, in.size()))
        throw_write_past_end(fmt::format("partition at byte {}", offset_), length_, offset, in.size(),
                             offset_);
    parent_.write_at(offset_ + offset, in);
}

void SubRange::zero_range(std::uint64_t offset, std::uint64_t length) {
    if (!in_range(length_, offset, length))
        throw_write_past_end(fmt::format("partition at byte {}", offset_), length_, offset, length, offset_);
    parent_.zero_range(offset_ + offset, length);
}

}  // namespace fsimg::io
