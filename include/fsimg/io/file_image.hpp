// Image files on the host filesystem: read-only opening, and atomic creation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

/// An existing regular file opened for positioned I/O.
/// Reads beyond the end of the file throw Error(corrupt) naming how many bytes
/// are missing (a truncated image), never return garbage.
class FileImage final : public BlockDevice {
public:
    /// Opens `path` read-only (writable=false) or read-write.
    /// Throws Error(io) naming the path and the OS reason.
    /// Refuses block and character devices with Error(refused) unless allow_device.
    static std::unique_ptr<FileImage> open(const std::filesystem::path& path, bool writable,
                                           bool allow_device = false);
    /// Opens a gzip-compressed image read-only: it is decompressed, streaming
    /// (1 MiB at a time, memory bounded), into an anonymous sparse temporary
    /// file in $TMPDIR (or /tmp) that is unlinked at once, so nothing remains
    /// after exit; all-zero 64 KiB blocks stay holes. path() reports the
    /// original name. Throws Error(io) on read/write failures (e.g. no room
    /// for the decompressed image) and Error(corrupt) naming the
    /// decompressed offset when the gzip stream is damaged or truncated.
    static std::unique_ptr<FileImage> open_gzip(const std::filesystem::path& path);
    ~FileImage() override;
    FileImage(const FileImage&) = delete;
    FileImage& operator=(const FileImage&) = delete;

    std::uint64_t size() const override { return size_; }
    /// Reads of 256 KiB or more skip the file's holes (lseek SEEK_DATA /
    /// SEEK_HOLE): they are zeros, and reading them would make the kernel
    /// fill page-cache pages with zeros (an empty 2 TiB FAT32's FATs are
    /// 512 MiB of holes). Errors as BlockDevice::read_at.
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override;
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override;
    /// Punches a hole (FALLOC_FL_PUNCH_HOLE) where the host filesystem supports
    /// it, otherwise writes zeros.
    void zero_range(std::uint64_t offset, std::uint64_t length) override;
    /// fsync(2); throws Error(io) on failure.
    void sync();
    const std::filesystem::path& path() const noexcept { return path_; }

private:
    friend class AtomicImage;
    FileImage(int fd, std::filesystem::path path, std::uint64_t size, bool writable);
    int fd_;
    std::filesystem::path path_;
    std::uint64_t size_;
    bool writable_;
    /// Start writeback of large writes at once (sync_file_range), so that the
    /// fsync before an AtomicImage's rename waits for less.
    bool early_writeback_ = false;
    /// lseek SEEK_DATA works here (cleared on the first EINVAL/ENOSYS-like failure).
    mutable bool seek_holes_ = true;
};

/// True when the file starts with the gzip magic bytes 1F 8B.
bool is_gzip_file(const std::filesystem::path& path);

/// Compresses `source` (all of it) into a new gzip file at `destination`,
/// atomically (temporary file + rename, removed on failure). Holes are read
/// as zeros, so the time is proportional to the image's size.
/// Throws Error(io) on failure.
void write_gzip(const BlockDevice& source, const std::filesystem::path& destination);

/// Builds a new image under a temporary name in the destination's folder and
/// renames it into place on commit(). Until then the destination is untouched;
/// if commit() is never reached (exception, ENOSPC, EACCES) the destructor
/// removes the temporary file, and SIGINT/SIGTERM/SIGHUP remove it too before
/// the process dies.
///
/// The temporary file is created with ftruncate to `size` bytes, so it is
/// sparse: only what is written occupies disk.
class AtomicImage {
public:
    /// Throws Error(io) naming the folder when the temporary file cannot be created.
    AtomicImage(const std::filesystem::path& destination, std::uint64_t size);
    ~AtomicImage();
    AtomicImage(const AtomicImage&) = delete;
    AtomicImage& operator=(const AtomicImage&) = delete;

    BlockDevice& device() noexcept { return *image_; }
    const std::filesystem::path& temporary_path() const noexcept { return temp_path_; }
    /// fsyncs the file and renames it over the destination (mode 0644 less umask).
    void commit();

private:
    std::filesystem::path destination_;
    std::filesystem::path temp_path_;
    std::unique_ptr<FileImage> image_;
    int slot_ = -1;  ///< entry in the signal-cleanup registry, -1 when none
    bool committed_ = false;
};

}  // namespace fsimg::io
