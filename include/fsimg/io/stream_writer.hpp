// Streaming file data into an image: large sequential writes, all-zero
// blocks left as holes on a zeroed (sparse) device, and host files copied in
// with their exact scanned size. Used by FAT and exFAT populate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fsimg/core/progress.hpp"
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
    /// Writes out what is buffered.
    void flush();

private:
    BlockDevice& dev_;
    bool skip_zero_;
    std::vector<std::byte> buf_;
    std::uint64_t start_ = 0;
    std::size_t used_ = 0;
};

/// Streams the host file `host_path` into the writer: exactly `size` bytes,
/// then zeros up to `allocated` bytes (the end of its last cluster). Throws
/// Error(io) naming the file when it cannot be read or holds fewer than
/// `size` bytes now (it shrank after the scan). `progress` (nullable) is
/// advanced by each read's byte count.
void copy_host_file(const std::string& host_path, std::uint64_t size, std::uint64_t allocated,
                    StreamWriter& writer, core::Progress* progress = nullptr);

}  // namespace fsimg::io
