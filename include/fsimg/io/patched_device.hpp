// A read-only view of a device whose first bytes read as other bytes: a
// volume whose damaged boot sector is read as its valid backup (FAT32 sector
// 6, NTFS's last sector), without writing anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

class PatchedDevice final : public BlockDevice {
public:
    /// Reads of [0, head.size()) return `head`; everything else comes from
    /// `device`, which must outlive this. Writes throw Error(usage).
    PatchedDevice(const BlockDevice& device, std::span<const std::byte> head);
    std::uint64_t size() const override { return device_.size(); }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override;
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override;

private:
    const BlockDevice& device_;
    std::vector<std::byte> head_;
};

}  // namespace fsimg::io
