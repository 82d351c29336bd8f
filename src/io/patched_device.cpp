#include "fsimg/io/patched_device.hpp"

#include <algorithm>

#include "fsimg/core/error.hpp"

namespace fsimg::io {

PatchedDevice::PatchedDevice(const BlockDevice& device, std::span<const std::byte> head)
    : device_(device), head_(head.begin(), head.end()) {}

void PatchedDevice::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    device_.read_at(offset, out);
    if (offset >= head_.size()) return;
    const std::size_t n = std::min<std::size_t>(out.size(), head_.size() - offset);
    std::copy_n(head_.begin() + static_cast<std::ptrdiff_t>(offset), n, out.begin());
}

void PatchedDevice::write_at(std::uint64_t, std::span<const std::byte>) {
    throw Error(ErrorCode::usage, "this view of the image (a boot sector read from its backup) is read-only");
}

}  // namespace fsimg::io
