// Little-endian loads and stores over byte spans.
//
// Fixed-size records take std::span<const std::byte, N>; the field offset is
// a template argument so that a field outside the record fails to compile.
// Variable-size records go through ByteReader, which checks every read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fsimg/core/error.hpp"

namespace fsimg::core {

namespace detail {
template <typename T, std::size_t Width>
constexpr T load_le(const std::byte* p) noexcept {
    T v = 0;
    for (std::size_t i = 0; i < Width; ++i) v |= static_cast<T>(static_cast<std::uint8_t>(p[i])) << (8 * i);
    return v;
}
template <typename T, std::size_t Width>
constexpr void store_le(std::byte* p, T v) noexcept {
    for (std::size_t i = 0; i < Width; ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
}  // namespace detail

/// Loads an unsigned little-endian value of 1, 2, 4 or 8 bytes at byte offset Off.
/// Little-endian loads from a raw pointer, for hot loops whose caller has
/// checked the bounds once for the whole buffer.
constexpr std::uint16_t load_le16_at(const std::byte* p) noexcept {
    return detail::load_le<std::uint16_t, 2>(p);
}
constexpr std::uint32_t load_le32_at(const std::byte* p) noexcept {
    return detail::load_le<std::uint32_t, 4>(p);
}

template <std::size_t Off, std::size_t N>
constexpr std::uint8_t le8(std::span<const std::byte, N> s) noexcept {
    static_assert(Off + 1 <= N, "field outside the record");
    return static_cast<std::uint8_t>(s[Off]);
}
template <std::size_t Off, std::size_t N>
constexpr std::uint16_t le16(std::span<const std::byte, N> s) noexcept {
    static_assert(Off + 2 <= N, "field outside the record");
    return detail::load_le<std::uint16_t, 2>(s.data() + Off);
}
template <std::size_t Off, std::size_t N>
constexpr std::uint32_t le32(std::span<const std::byte, N> s) noexcept {
    static_assert(Off + 4 <= N, "field outside the record");
    return detail::load_le<std::uint32_t, 4>(s.data() + Off);
}
template <std::size_t Off, std::size_t N>
constexpr std::uint64_t le64(std::span<const std::byte, N> s) noexcept {
    static_assert(Off + 8 <= N, "field outside the record");
    return detail::load_le<std::uint64_t, 8>(s.data() + Off);
}

/// Stores an unsigned little-endian value at byte offset Off.
template <std::size_t Off, std::size_t N>
constexpr void store8(std::span<std::byte, N> s, std::uint8_t v) noexcept {
    static_assert(Off + 1 <= N, "field outside the record");
    s[Off] = static_cast<std::byte>(v);
}
template <std::size_t Off, std::size_t N>
constexpr void store16(std::span<std::byte, N> s, std::uint16_t v) noexcept {
    static_assert(Off + 2 <= N, "field outside the record");
    detail::store_le<std::uint16_t, 2>(s.data() + Off, v);
}
template <std::size_t Off, std::size_t N>
constexpr void store32(std::span<std::byte, N> s, std::uint32_t v) noexcept {
    static_assert(Off + 4 <= N, "field outside the record");
    detail::store_le<std::uint32_t, 4>(s.data() + Off, v);
}
template <std::size_t Off, std::size_t N>
constexpr void store64(std::span<std::byte, N> s, std::uint64_t v) noexcept {
    static_assert(Off + 8 <= N, "field outside the record");
    detail::store_le<std::uint64_t, 8>(s.data() + Off, v);
}

/// Run-time-offset variants for dynamic spans; throw FormatError(offset) when
/// the field would leave the span.
std::uint16_t load_le16(std::span<const std::byte> s, std::size_t offset);
std::uint32_t load_le32(std::span<const std::byte> s, std::size_t offset);
std::uint64_t load_le64(std::span<const std::byte> s, std::size_t offset);
void store_le16(std::span<std::byte> s, std::size_t offset, std::uint16_t v);
void store_le32(std::span<std::byte> s, std::size_t offset, std::uint32_t v);
void store_le64(std::span<std::byte> s, std::size_t offset, std::uint64_t v);

/// A bounds-checked cursor over a variable-size record. Every read past the
/// end throws FormatError{offset, what}.
class ByteReader {
public:
    explicit ByteReader(std::span<const std::byte> data) noexcept : data_(data) {}

    std::size_t position() const noexcept { return pos_; }
    std::size_t remaining() const noexcept { return data_.size() - pos_; }
    /// Moves to an absolute offset within the record (may equal size()).
    void seek(std::size_t offset, const char* what);
    void skip(std::size_t n, const char* what);
    std::uint8_t u8(const char* what);
    std::uint16_t u16(const char* what);
    std::uint32_t u32(const char* what);
    std::uint64_t u64(const char* what);
    /// The next n bytes as a sub-span (no copy).
    std::span<const std::byte> bytes(std::size_t n, const char* what);

private:
    void need(std::size_t n, const char* what) const;
    std::span<const std::byte> data_;
    std::size_t pos_ = 0;
};

/// Copies an ASCII string into a fixed field, padding with `pad`; truncates.
void store_padded(std::span<std::byte> field, std::string_view text, char pad = ' ');
/// Reads a fixed ASCII field as a string (bytes as-is, no trimming).
std::string load_string(std::span<const std::byte> field);

/// Whether the `n` bytes at `p` are all zero (true for n == 0).
bool all_zero(const std::byte* p, std::size_t n) noexcept;

}  // namespace fsimg::core
