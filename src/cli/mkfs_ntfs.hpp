// fsimg mkfs -t ntfs: called by run_mkfs (mkfs.cpp) after its safety checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fsimg::cli {

struct PopulateArgs;      // mkfs_populate.hpp
struct PartitionTarget;   // mkfs_common.hpp
struct PartitionOptions;  // mkfs_common.hpp

/// What run_mkfs has already checked and worked out for an NTFS request.
struct NtfsMkfsRequest {
    std::string image;              ///< destination path
    bool is_device = false;         ///< a block device the user allowed with --device
    std::uint64_t image_bytes = 0;  ///< size of the image (or of the device part to use)
    std::string size_text;          ///< -s as given ("" when taken from the file/device)
    std::string cluster;            ///< -c as given, "" = default
    std::uint32_t sector_size = 512;
    std::string label;
    std::string volume_id;        ///< --volume-id as given (up to 16 hex digits), "" = from the time
    std::string mft_record_size;  ///< --mft-record-size as given, "" = default
    std::string partition_table = "none";
    bool explain = false;
    bool quiet = false;
    bool gzip = false;                       ///< --gzip: write IMAGE gzip-compressed
    std::optional<std::string> refusal;      ///< Destination::refusal
    const PopulateArgs* populate = nullptr;  ///< --from and its options (none: nullptr or empty from)
    bool auto_size = false;  ///< -s auto (or --from without -s): the image is sized to the tree
    const PartitionTarget* partition = nullptr;  ///< IMAGE@N: the partition formatted in place
    const PartitionOptions* part = nullptr;      ///< the new partition's options (--partition-type, ...)
    /// When set (with auto_size): only the image size -s auto gives is
    /// stored here; nothing is created or printed.
    std::uint64_t* size_only = nullptr;
};

/// Plans, formats, populates (--from: scanned and planned before anything is
/// created; every problem refused up front) and (for image files)
/// atomically creates the image; prints the summary line. Returns the exit code; throws fsimg::Error.
int run_mkfs_ntfs(const NtfsMkfsRequest& request);

}  // namespace fsimg::cli
