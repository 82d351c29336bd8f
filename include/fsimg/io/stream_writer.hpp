// Streaming file data into an image: large sequential writes, all-zero
// blocks left as holes on a zeroed (sparse) device. Used by every populate
// (source/file.hpp copies host files through it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

/// Gathers writes to ascending, mostly adjacent offsets into large writes
/// (8 MiB buffer). With skip_zero (the device reads as zeros: a fresh sparse
/// image), 64 KiB blocks that are all zero are not written. Call flush()
/// at the end; write errors are the device's Error(io).
class StreamWriter {
public:
    StreamWriter(BlockDevice& dev, bool skip_zero);

    /// Continues at byte `offset` of the device (flushes when not adjacent).
    void seek(std::uint64_t offset);
    /// Room for up to `n` more bytes (at least one; flushes when full).
    std::span<std::byte> reserve(std::size_t n);
    /// Keeps `n` bytes of what reserve() returned.
    void commit(std::size_t n) { used_ += n; }
    void append(std::span<const std::byte> data);
    void append_zeros(std::uint64_t n);
    /// `n` bytes that read as zeros: skipped on a zeroed device (they stay
    /// holes; no buffer is filled), written as zeros otherwise.
    void append_hole(std::uint64_t n);
    /// Writes out what is buffered.
    void flush();

private:
    BlockDevice& dev_;
    bool skip_zero_;
    std::vector<std::byte> buf_;
    std::uint64_t start_ = 0;
    std::size_t used_ = 0;
};

}  // namespace fsimg::io
