#include "fsimg/check/placement.hpp"

#include <fmt/format.h>

namespace fsimg::check {

std::string device_name(const std::optional<Placement>& placement, std::uint64_t device_bytes) {
    if (!placement) return "the image";
    if (device_bytes < placement->entry_bytes)
        return fmt::format("the image's part of partition {}", placement->partition);
    return fmt::format("partition {}", placement->partition);
}

std::string partition_shortfall(const std::optional<Placement>& placement, std::uint64_t device_bytes,
                                std::uint64_t missing_bytes, std::uint32_t bytes_per_sector) {
    if (!placement || device_bytes < placement->entry_bytes || bytes_per_sector == 0) return {};
    const std::uint64_t sectors = (missing_bytes + bytes_per_sector - 1) / bytes_per_sector;
    return fmt::format(
        "; partition {} is {} sector{} of {} bytes shorter than its filesystem{}", placement->partition,
        sectors, sectors == 1 ? "" : "s", bytes_per_sector,
        placement->image_bytes_after >= missing_bytes
            ? " (the image holds the missing bytes after the partition's end: its table entry is "
              "too short, or the filesystem was made for a larger partition)"
            : "");
}

bool start_disagrees(const std::optional<Placement>& placement, std::uint64_t recorded,
                     std::uint32_t bytes_per_sector) noexcept {
    if (!placement || recorded == 0 || bytes_per_sector == 0) return false;
    // recorded < 2^64 / bytes_per_sector, else it cannot be the partition's start.
    if (recorded > placement->start_bytes / bytes_per_sector + 1) return true;
    const std::uint64_t bytes = recorded * bytes_per_sector;
    return bytes != placement->start_bytes &&
           (placement->ebr_relative_start_bytes == 0 || bytes != placement->ebr_relative_start_bytes);
}

}  // namespace fsimg::check
