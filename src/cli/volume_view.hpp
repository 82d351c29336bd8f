// What ls, cat and extract see of a volume, whatever its filesystem: the
// image is opened (IMAGE or IMAGE@N), the filesystem detected from its boot
// sector (exFAT by "EXFAT   " at byte 3, NTFS by "NTFS    ", else FAT), and
// files and directories are shown as ViewEntry. Decoding stays in the
// library (fat::Volume, exfat::Volume, ntfs::Volume and ntfs/directory.hpp);
// this only maps their records.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "fsimg/core/time.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/fat/directory.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

/// A time to set on an extracted file: the civil time as stored and, when the
/// filesystem recorded one (exFAT OffsetValid), its offset from UTC.
struct HostTime {
    core::CivilTime local;
    std::optional<int> utc_offset_minutes;
};

/// An NTFS file (MFT record) or one of its alternate data streams.
struct NtfsNode {
    std::uint64_t record = 0;
    std::u16string stream;  ///< the $DATA stream read: empty = the unnamed one
};

/// One file or directory (or, on NTFS, a symbolic link, or a file's
/// alternate data stream shown as "name:stream").
struct ViewEntry {
    std::string name;  ///< UTF-8, as stored
    bool is_dir = false;
    bool is_root = false;
    std::uint64_t size = 0;           ///< bytes (0 for directories)
    std::uint64_t first_cluster = 0;  ///< identifies a directory for loop detection (NTFS: MFT record)
    std::uint8_t attributes = 0;      ///< FAT DIR_Attr / exFAT FileAttributes low byte (same bits)
    std::string short_name;           ///< FAT 8.3 name as stored; empty on exFAT
    std::string modified, created, accessed;          ///< display texts
    std::optional<HostTime> mtime;                    ///< nullopt when the stored time is invalid
    nlohmann::json extra = nlohmann::json::object();  ///< filesystem-specific ls --json fields
    std::optional<std::string> link_target;  ///< NTFS symbolic link or junction: its target (POSIX form)
    bool is_stream = false;                  ///< NTFS alternate data stream ("file:stream")
    std::variant<fat::DirRecord, exfat::FileRecord, NtfsNode> record;
};

/// A volume opened for reading.
class VolumeView {
public:
    virtual ~VolumeView() = default;
    /// "fat", "exfat" or "ntfs".
    virtual std::string_view filesystem() const = 0;
    /// Damage found while opening that does not stop reading (an exFAT
    /// up-case table that is replaced by the recommended one), for a warning.
    virtual std::vector<std::string> open_problems() const { return {}; }
    /// The entry at PATH (case-insensitive, as the filesystem compares names),
    /// nullopt when it does not exist; throws as the volume's lookup.
    virtual std::optional<ViewEntry> lookup(std::string_view path) const = 0;
    /// A directory's files and subdirectories in stored order; entries that
    /// cannot be trusted (an exFAT set with a bad SetChecksum, a damaged set)
    /// are left out and described in `problems`. Throws Error(corrupt) when
    /// the directory cannot be read.
    virtual std::vector<ViewEntry> list(const ViewEntry& dir, std::vector<std::string>& problems) const = 0;
    /// Streams a file's bytes; throws Error(corrupt) when its data is broken.
    virtual void read(const ViewEntry& file,
                      const std::function<void(std::span<const std::byte>)>& sink) const = 0;
    /// The same, with ranges the filesystem stores as holes (NTFS sparse runs,
    /// bytes past the initialized size) given to `hole` instead of as zeros.
    virtual void read_sparse(const ViewEntry& file,
                             const std::function<void(std::span<const std::byte>)>& sink,
                             const std::function<void(std::uint64_t)>& hole) const {
        (void)hole;
        read(file, sink);
    }
};

/// Opens IMAGE or IMAGE@N and detects the filesystem; prints open_problems()
/// as warnings. Throws Error(not_this_fs)
/// when the volume is neither FAT, exFAT nor NTFS, Error(corrupt) when its
/// boot sector is unusable.
std::unique_ptr<VolumeView> open_view(const std::string& spec);

/// The NTFS view of an opened volume (src/cli/ntfs_view.cpp). Throws as
/// ntfs::Volume's constructor.
std::unique_ptr<VolumeView> make_ntfs_view(io::OpenedVolume opened);

/// The path as given, made absolute with single slashes and no trailing one.
std::string normalize_path(std::string_view path);

}  // namespace fsimg::cli
