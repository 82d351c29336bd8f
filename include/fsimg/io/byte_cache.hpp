// A write-back cache of the bytes of one region of a device (a FAT, an
// allocation bitmap): read in aligned windows, changed in memory, written
// back as the byte ranges that changed. The editors (fat/edit.hpp,
// exfat/edit.hpp) keep their allocation tables here, so that the cost of a
// change follows the change, not the size of the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

class ByteCache {
public:
    /// Where region byte `at` (a multiple of the window size) lies on the
    /// device; the window's bytes from there are consecutive on the device.
    using Locate = std::function<std::uint64_t(std::uint64_t at)>;

    /// A region of `length` bytes, read in windows of `window_bytes` (a
    /// power of two), at most `max_windows` of them held (more: the changes
    /// are written back and the windows dropped). Changes are written to
    /// every copy: `copies` holds the bytes added to the device offset for
    /// each ({0} for one copy, {0, F} for a FAT and its second copy F bytes
    /// on), each copy complete before the next. Reads come from copy 0.
    /// `written` (may be empty) is called after every flush that wrote,
    /// also one forced by a full cache (readers of the device drop their
    /// own caches then).
    ByteCache(BlockDevice& device, std::uint64_t length, std::size_t window_bytes, std::size_t max_windows,
              Locate locate, std::vector<std::uint64_t> copies = {0}, std::function<void()> written = {});

    std::uint64_t length() const noexcept { return length_; }
    /// Byte `at` of the region (at < length()). Throws what the device's
    /// read throws.
    std::uint8_t get(std::uint64_t at);
    /// Changes byte `at` in memory; flush() writes it.
    void set(std::uint64_t at, std::uint8_t value);
    /// Little-endian 32-bit value at `at` (the four bytes inside the region).
    std::uint32_t get_le32(std::uint64_t at);
    void set_le32(std::uint64_t at, std::uint32_t value);

    /// Writes every changed byte range into every copy, one write per
    /// window that changed and copy. Returns the writes made.
    std::size_t flush();
    bool changed() const noexcept { return !dirty_.empty(); }

private:
    std::vector<std::byte>& window(std::uint64_t w);

    BlockDevice& dev_;
    std::uint64_t length_;
    std::size_t window_bytes_;
    std::size_t max_windows_;
    Locate locate_;
    std::map<std::uint64_t, std::vector<std::byte>> windows_;             ///< by window number
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> dirty_;  ///< window -> [lo, hi)
    std::vector<std::uint64_t> copies_;
    std::function<void()> written_;
};

}  // namespace fsimg::io
