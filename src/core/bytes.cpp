#include "fsimg/core/bytes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace fsimg::core {

namespace {

void check_field(std::size_t span_size, std::size_t offset, std::size_t width) {
    if (offset > span_size || span_size - offset < width) {
        throw FormatError(offset, fmt::format("{}-byte field at offset {} leaves a record of {} bytes", width,
                                              offset, span_size));
    }
}

template <typename T, std::size_t Width>
T load_checked(std::span<const std::byte> s, std::size_t offset) {
    check_field(s.size(), offset, Width);
    return detail::load_le<T, Width>(s.data() + offset);
}

template <typename T, std::size_t Width>
void store_checked(std::span<std::byte> s, std::size_t offset, T v) {
    check_field(s.size(), offset, Width);
    detail::store_le<T, Width>(s.data() + offset, v);
}

}  // namespace

std::uint16_t load_le16(std::span<const std::byte> s, std::size_t offset) {
    return load_checked<std::uint16_t, 2>(s, offset);
}
std::uint32_t load_le32(std::span<const std::byte> s, std::size_t offset) {
    return load_checked<std::uint32_t, 4>(s, offset);
}
std::uint64_t load_le64(std::span<const std::byte> s, std::size_t offset) {
    return load_checked<std::uint64_t, 8>(s, offset);
}
void store_le16(std::span<std::byte> s, std::size_t offset, std::uint16_t v) {
    store_checked<std::uint16_t, 2>(s, offset, v);
}
void store_le32(std::span<std::byte> s, std::size_t offset, std::uint32_t v) {
    store_checked<std::uint32_t, 4>(s, offset, v);
}
void store_le64(std::span<std::byte> s, std::size_t offset, std::uint64_t v) {
    store_checked<std::uint64_t, 8>(s, offset, v);
}

void ByteReader::need(std::size_t n, const char* what) const {
    if (n > remaining()) {
        throw FormatError(
            pos_, fmt::format("{}: needs {} bytes at offset {}, only {} left in a record of {} bytes", what,
                              n, pos_, remaining(), data_.size()));
    }
}

void ByteReader::seek(std::size_t offset, const char* what) {
    if (offset > data_.size()) {
        throw FormatError(offset, fmt::format("{}: offset {} is past the end of a record of {} bytes", what,
                                              offset, data_.size()));
    }
    pos_ = offset;
}

void ByteReader::skip(std::size_t n, const char* what) {
    need(n, what);
    pos_ += n;
}

std::uint8_t ByteReader::u8(const char* what) {
    need(1, what);
    return static_cast<std::uint8_t>(data_[pos_++]);
}

std::uint16_t ByteReader::u16(const char* what) {
    need(2, what);
    auto v = detail::load_le<std::uint16_t, 2>(data_.data() + pos_);
    pos_ += 2;
    return v;
}

std::uint32_t ByteReader::u32(const char* what) {
    need(4, what);
    auto v = detail::load_le<std::uint32_t, 4>(data_.data() + pos_);
    pos_ += 4;
    return v;
}

std::uint64_t ByteReader::u64(const char* what) {
    need(8, what);
    auto v = detail::load_le<std::uint64_t, 8>(data_.data() + pos_);
    pos_ += 8;
    return v;
}

std::span<const std::byte> ByteReader::bytes(std::size_t n, const char* what) {
    need(n, what);
    auto out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
}

void store_padded(std::span<std::byte> field, std::string_view text, char pad) {
    const std::size_t n = std::min(field.size(), text.size());
    for (std::size_t i = 0; i < n; ++i) field[i] = static_cast<std::byte>(text[i]);
    for (std::size_t i = n; i < field.size(); ++i) field[i] = static_cast<std::byte>(pad);
}

std::string load_string(std::span<const std::byte> field) {
    std::string out(field.size(), '\0');
    for (std::size_t i = 0; i < field.size(); ++i) out[i] = static_cast<char>(field[i]);
    return out;
}

bool all_zero(const std::byte* p, std::size_t n) noexcept {
    return n == 0 || (p[0] == std::byte{0} && std::memcmp(p, p + 1, n - 1) == 0);
}

}  // namespace fsimg::core
