// Reading the files of a scanned source tree race-free, and their data
// segments (what populate copies).
//
// The scan (source/tree.hpp) and the copy are apart in time: a file may be
// swapped for a symbolic link (which would copy its target, perhaps a
// root-only secret), for a FIFO (which would hang the copy) or grow or shrink
// in between or while it is read. So every file is re-opened relative to its
// directory's descriptor, every directory from its --from root down with
// O_NOFOLLOW, each checked against the identity (device, inode) and type the
// scan recorded; files with O_NOFOLLOW | O_NONBLOCK, then fstat compared
// with the scan (type, device, inode, size); after the copy, nothing past
// the scanned size and fstat's size and modification time as at the open.
// Anything that changed is Error(io) naming the file and what changed (GNU
// tar's "file changed as we read it"); mkfs then renames nothing into place.
//
// Holes are found with lseek(SEEK_DATA / SEEK_HOLE), which sees data still
// in delayed allocation; FIEMAP without FIEMAP_FLAG_SYNC does not (it
// reports a freshly written file as one hole), so it is never used.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fsimg/core/progress.hpp"
#include "fsimg/io/stream_writer.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::source {

/// One source file opened by SourceReader::open. Move-only; closes on destruction.
class SourceFile {
public:
    SourceFile(SourceFile&& other) noexcept;
    SourceFile& operator=(SourceFile&& other) noexcept;
    SourceFile(const SourceFile&) = delete;
    SourceFile& operator=(const SourceFile&) = delete;
    ~SourceFile();

    /// The size the scan recorded, in bytes: what is copied (for a file
    /// read to its end at the open, ReadOptions::unsized_limit, what was read).
    std::uint64_t size() const noexcept { return size_; }
    /// The host path, for messages.
    const std::string& path() const noexcept { return path_; }
    /// The data segments inside [0, size()), in order (lseek SEEK_DATA /
    /// SEEK_HOLE); one segment [0, size()) where the host filesystem cannot
    /// tell holes. Throws Error(io) naming the file when lseek fails otherwise.
    std::vector<Segment> segments() const;
    /// Reads exactly out.size() bytes at `offset` (within size()). Throws
    /// Error(io) naming the file when it cannot be read or ends early ("it
    /// shrank").
    void read_at(std::uint64_t offset, std::span<std::byte> out) const;
    /// All size() bytes (small files: NTFS resident data).
    std::vector<std::byte> read_all() const;
    /// The checks after a copy: no byte past size() (the file grew), and
    /// fstat's size and modification time equal those at the open. Throws
    /// Error(io) "PATH changed as it was read: ..." naming what changed.
    void finish() const;

private:
    friend class SourceReader;
    SourceFile(int fd, std::string path, std::uint64_t size, std::int64_t mtime_s, std::int64_t mtime_ns);
    /// Reads the file to its end (at most `limit` bytes) into `content_`:
    /// the copy of a file that reports 0 bytes (ReadOptions::unsized_limit).
    void read_unsized(std::uint64_t limit);
    int fd_ = -1;
    bool snapshot_ = false;           ///< content_ is what is copied (read at the open)
    std::vector<std::byte> content_;  ///< when snapshot_
    std::string path_;
    std::uint64_t size_ = 0;
    std::int64_t mtime_s_ = 0;   ///< at the open
    std::int64_t mtime_ns_ = 0;  ///< at the open
};

/// Opens the files of one scanned tree (scan_host_trees). Keeps a few
/// directory descriptors open (the most recently used, bounded), re-opening
/// the others from their --from root.
class SourceReader {
public:
    explicit SourceReader(const SourceTree& tree, ReadOptions options = {});
    ~SourceReader();
    SourceReader(const SourceReader&) = delete;
    SourceReader& operator=(const SourceReader&) = delete;

    /// Opens file node `node` of the tree as described at the head of this
    /// file. Nodes not made by a scan (no host directory recorded; tests,
    /// synthetic trees) are opened by host_path with the same flags and
    /// checks. Throws Error(io) naming the file and what changed: "was
    /// replaced by a symbolic link", "is now a FIFO", "was replaced by
    /// another file", "is N bytes now, M when scanned"; or why it cannot be
    /// opened.
    SourceFile open(std::uint32_t node);

private:
    int directory(std::uint32_t host_dir);
    const SourceTree& tree_;
    ReadOptions options_;
    bool first_open_ = true;
    std::unordered_map<std::uint32_t, int> dir_fds_;             ///< host_dirs index -> descriptor
    std::unordered_map<std::uint32_t, std::uint64_t> dir_used_;  ///< last use, for eviction
    std::uint64_t clock_ = 0;
};

/// Streams bytes [from, from+length) of `file` (clipped to its size) into
/// the writer at its current position: data segments read, holes passed
/// with StreamWriter::append_hole (skipped on a zeroed device). Advances
/// `progress` (nullable) by the bytes covered, holes included.
void copy_range(const SourceFile& file, std::uint64_t from, std::uint64_t length, io::StreamWriter& writer,
                core::Progress* progress);

/// Streams the whole file, then zeros up to `allocated` bytes (the end of its
/// last cluster), then SourceFile::finish(). Errors as copy_range and finish.
void copy_file(const SourceFile& file, std::uint64_t allocated, io::StreamWriter& writer,
               core::Progress* progress);

/// `bytes` consecutive bytes of the device at `device_offset`: one piece of
/// a file's allocation (a run of clusters).
struct DeviceExtent {
    std::uint64_t device_offset = 0;
    std::uint64_t bytes = 0;
};

/// Writes the file into `extents` (its allocation, in file order; together
/// at least size() bytes) and zeros the rest of them, so no old bytes are
/// left past the end. The device is cut into pieces of at most 1 MiB, each
/// written once: its data segments read into a zeroed buffer (a small file
/// is one write), a piece without data made zero with zero_range (holes
/// punched). Then SourceFile::finish(). Throws the source's Error(io) (a
/// file that cannot be read or changed as it was read) and the device's.
/// The changing editors use it (fat/edit.hpp, exfat/edit.hpp).
void write_into_extents(const SourceFile& file, std::span<const DeviceExtent> extents,
                        io::BlockDevice& device);

}  // namespace fsimg::source
