// The image seam: every filesystem reads and writes through BlockDevice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace fsimg::io {

/// A byte-addressed, fixed-size store (an image file, a partition inside one,
/// or memory). Offsets and sizes are in bytes.
class BlockDevice {
public:
    virtual ~BlockDevice() = default;
    /// Size in bytes.
    virtual std::uint64_t size() const = 0;
    /// Reads exactly out.size() bytes at `offset`. Throws fsimg::Error
    /// (ErrorCode::corrupt naming the offset and the missing byte count) when
    /// the range passes the end, ErrorCode::io when the OS read fails.
    virtual void read_at(std::uint64_t offset, std::span<std::byte> out) const = 0;
    /// Writes all of `in` at `offset`. Throws fsimg::Error(io) on failure or
    /// when the range passes the end of a fixed-size device.
    virtual void write_at(std::uint64_t offset, std::span<const std::byte> in) = 0;
    /// Makes [offset, offset+length) read as zeros. Implementations that can
    /// punch holes do so (sparse files); the default writes zeros in chunks.
    virtual void zero_range(std::uint64_t offset, std::uint64_t length);
};

/// An in-memory device for tests and fuzzing.
class MemoryImage final : public BlockDevice {
public:
    explicit MemoryImage(std::uint64_t size) : data_(size) {}
    explicit MemoryImage(std::vector<std::byte> data) : data_(std::move(data)) {}
    std::uint64_t size() const override { return data_.size(); }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override;
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override;
    const std::vector<std::byte>& bytes() const noexcept { return data_; }

private:
    std::vector<std::byte> data_;
};

/// A window [offset, offset+length) of another device: a partition.
/// Reads and writes are bounds-checked against the window.
class SubRange final : public BlockDevice {
public:
    SubRange(BlockDevice& parent, std::uint64_t offset, std::uint64_t length);
    std::uint64_t size() const override { return length_; }
    std::uint64_t offset_in_parent() const noexcept { return offset_; }
    const BlockDevice& parent() const noexcept { return parent_; }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override;
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override;
    void zero_range(std::uint64_t offset, std::uint64_t length) override;

private:
    BlockDevice& parent_;
    std::uint64_t offset_;
    std::uint64_t length_;
};

}  // namespace fsimg::io
