// io/byte_cache.hpp: a write-back cache of a device region's bytes.
#include "fsimg/io/byte_cache.hpp"

#include <algorithm>

namespace fsimg::io {

ByteCache::ByteCache(BlockDevice& device, std::uint64_t length, std::size_t window_bytes,
                     std::size_t max_windows, Locate locate, std::vector<std::uint64_t> copies,
                     std::function<void()> written)
    : dev_(device),
      length_(length),
      window_bytes_(window_bytes),
      max_windows_(std::max<std::size_t>(1, max_windows)),
      locate_(std::move(locate)),
      copies_(std::move(copies)),
      written_(std::move(written)) {}

std::vector<std::byte>& ByteCache::window(std::uint64_t w) {
    if (auto it = windows_.find(w); it != windows_.end()) return it->second;
    if (windows_.size() >= max_windows_) {
        flush();
        windows_.clear();
    }
    const std::uint64_t at = w * window_bytes_;
    std::vector<std::byte> bytes(
        static_cast<std::size_t>(std::min<std::uint64_t>(window_bytes_, length_ - at)));
    dev_.read_at(locate_(at), bytes);
    return windows_.emplace(w, std::move(bytes)).first->second;
}

std::uint8_t ByteCache::get(std::uint64_t at) {
    return std::to_integer<std::uint8_t>(window(at / window_bytes_)[at % window_bytes_]);
}

void ByteCache::set(std::uint64_t at, std::uint8_t value) {
    const std::uint64_t w = at / window_bytes_;
    const std::size_t i = at % window_bytes_;
    window(w)[i] = std::byte{value};
    auto [it, fresh] = dirty_.try_emplace(w, i, i + 1);
    if (!fresh) {
        it->second.first = std::min(it->second.first, i);
        it->second.second = std::max(it->second.second, i + 1);
    }
}

std::uint32_t ByteCache::get_le32(std::uint64_t at) {
    return get(at) | (std::uint32_t(get(at + 1)) << 8) | (std::uint32_t(get(at + 2)) << 16) |
           (std::uint32_t(get(at + 3)) << 24);
}

void ByteCache::set_le32(std::uint64_t at, std::uint32_t value) {
    for (unsigned k = 0; k < 4; ++k) set(at + k, static_cast<std::uint8_t>(value >> (8 * k)));
}

std::size_t ByteCache::flush() {
    std::size_t writes = 0;
    if (dirty_.empty()) return writes;
    for (const std::uint64_t delta : copies_) {
        for (const auto& [w, range] : dirty_) {
            const auto& bytes = windows_.at(w);
            dev_.write_at(locate_(w * window_bytes_) + delta + range.first,
                          std::span<const std::byte>(bytes).subspan(range.first, range.second - range.first));
            ++writes;
        }
    }
    dirty_.clear();
    if (written_) written_();
    return writes;
}

}  // namespace fsimg::io
