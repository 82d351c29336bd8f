// fsimg mkfs -t exfat: called by run_mkfs (mkfs.cpp) after its safety checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fsimg::cli {

/// What run_mkfs has already checked and worked out for an exFAT request.
struct ExfatMkfsRequest {
    std::string image;              ///< destination path
    bool is_device = false;         ///< a block device the user allowed with --device
    std::uint64_t image_bytes = 0;  ///< size of the image (or of the device part to use)
    std::string size_text;          ///< -s as given ("" when taken from the file/device)
    std::string cluster;            ///< -c as given, "" = default
    std::string align;              ///< --align as given, "" = default
    std::uint32_t sector_size = 512;
    std::string label;
    std::optional<std::uint32_t> volume_id;  ///< --volume-id, parsed
    std::string partition_table = "none";
    bool explain = false;
    bool quiet = false;
};

/// Plans, formats and (for image files) atomically creates the image; prints
/// the summary line. Returns the exit code; throws fsimg::Error.
int run_mkfs_exfat(const ExfatMkfsRequest& request);

}  // namespace fsimg::cli
