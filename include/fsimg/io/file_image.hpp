// Image files on the host filesystem: read-only opening, and atomic creation.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

class GzipInflater;  // src/io/gzip_image.cpp

/// An existing regular file opened for positioned I/O.
/// Reads beyond the end of the file throw Error(corrupt) naming how many bytes
/// are missing (a truncated image), never return garbage.
class FileImage final : public BlockDevice {
public:
    /// Opens `path` read-only (writable=false) or read-write.
    /// Throws Error(io) naming the path and the OS reason.
    /// Block devices open read-only without asking (reading changes nothing); writing one
    /// needs allow_device and an exclusive claim (O_EXCL; Error(refused) when it is busy).
    /// Character devices are refused with Error(refused) unless allow_device.
    static std::unique_ptr<FileImage> open(const std::filesystem::path& path, bool writable,
                                           bool allow_device = false);
    /// Opens a gzip-compressed image read-only, decompressed lazily: only as
    /// far as reads reach, into an anonymous sparse temporary file in $TMPDIR
    /// (or /tmp), unlinked at once so nothing remains after exit; all-zero
    /// 64 KiB blocks stay holes. size() is the extent the first sectors
    /// declare (a partition table's last partition or GPT backup, a FAT,
    /// exFAT or NTFS volume's size) when they declare one, else the whole
    /// decompressed size (then all of it is decompressed at once). So `dump`
    /// of a gzip bomb decompresses its first MiB, not its gigabytes.
    /// Temporary space is capped by FSIMG_GZIP_TEMP_LIMIT (a size: 512M, 8G;
    /// default 16 GiB, never more than 90% of the free space in $TMPDIR):
    /// Error(io) names the cap when a read would pass it. The CRC32 and ISIZE
    /// trailer of every member is checked as the stream is consumed, and
    /// bytes after the last member are trailing garbage: see gzip_problems()
    /// and verify_gzip(). path() reports the original name. Throws Error(io)
    /// on read/write failures and Error(corrupt) naming the decompressed
    /// offset when the data is damaged or ends before a read's range.
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
    /// Takes an exclusive advisory lock (flock) for a command that changes
    /// the image, so that two such commands never change one image at once;
    /// Error(refused) naming the path when another process holds it.
    void lock_exclusive();
    /// A gzip image (open_gzip): what is wrong with the compressed file as far
    /// as it was decompressed ("the CRC32 in the trailer is ..., the data's is
    /// ...", "the stream ends before its trailer", "N bytes of trailing
    /// garbage after the gzip data"); empty for other images.
    std::vector<std::string> gzip_problems() const;
    /// A gzip image: decompresses the rest of the stream without keeping it
    /// (past size() nothing is stored), so that every trailer is checked;
    /// then gzip_problems() is complete. Does nothing for other images.
    void verify_gzip() const;
    bool is_gzip() const noexcept { return inflater_ != nullptr; }
    /// A gzip image whose data is damaged or cut as far as it was decompressed
    /// (trailing garbage alone is not damage).
    bool gzip_damaged() const;
    const std::filesystem::path& path() const noexcept { return path_; }
    /// The open descriptor (for probing and identity checks); owned by this object.
    int descriptor() const noexcept { return fd_; }

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
    /// The last data run SEEK_DATA/SEEK_HOLE found, [begin, end): reads inside
    /// it skip the two lseeks, which cost a millisecond each on tmpfs for a
    /// large file (the kernel walks its pages). Writes only turn holes into
    /// data, so a cached run stays data; a stale or torn pair only costs a
    /// probe (pread reads a hole as zeros anyway).
    mutable std::atomic<std::uint64_t> data_begin_{0}, data_end_{0};
    /// open_gzip: fills the temporary file on demand (src/io/gzip_image.cpp).
    std::shared_ptr<GzipInflater> inflater_;
};

/// True when the file starts with the gzip magic bytes 1F 8B.
bool is_gzip_file(const std::filesystem::path& path);

/// Compresses `source` (all of it) into a new gzip file at `destination`,
/// atomically (temporary file + rename, removed on failure). Holes are read
/// as zeros, so the time is proportional to the image's size.
/// Throws Error(io) on failure.
void write_gzip(const BlockDevice& source, const std::filesystem::path& destination);

/// Copies the bytes `source` stores into `target` (at least source.size()
/// bytes long, reading as zeros) at the same offsets, except those in
/// [skip_offset, skip_offset + skip_bytes): only the source's data segments
/// are read (lseek SEEK_DATA/SEEK_HOLE; everything where the host cannot
/// tell holes), and 64 KiB blocks of zeros are not written, so a sparse
/// source gives a sparse copy and the time follows what it stores. mkfs
/// IMAGE@N builds the new disk this way around the partition it formats.
/// Throws as read_at and write_at.
void copy_stored_bytes(const FileImage& source, BlockDevice& target, std::uint64_t skip_offset,
                       std::uint64_t skip_bytes);

/// Registers a temporary file for removal by the cleanup signals (those
/// AtomicImage names) while the object lives; release() once the file was
/// renamed into place or removed. For temporaries made with openat (extract
/// --force), which AtomicImage does not create. `absolute_path` must stay
/// valid after a chdir (an absolute path); longer than PATH_MAX or with the
/// table full, only the owner's own error paths remove the file.
class SignalCleanup {
public:
    explicit SignalCleanup(const std::string& absolute_path);
    ~SignalCleanup();
    SignalCleanup(const SignalCleanup&) = delete;
    SignalCleanup& operator=(const SignalCleanup&) = delete;
    void release() noexcept;

private:
    int slot_ = -1;
};

/// ".NAME.fsimg-PID-" for this process: the prefix of every temporary made
/// for NAME (AtomicImage, extract), so that stale ones can be told apart.
std::string temporary_prefix(const std::string& name);

/// Builds a new image under a temporary name in the destination's folder and
/// renames it into place on commit(). Until then the destination is untouched;
/// if commit() is never reached (exception, ENOSPC, EACCES) the destructor
/// removes the temporary file, and every signal whose default action ends the
/// process (INT, TERM, HUP, QUIT, PIPE, ALRM, USR1, USR2, XCPU, XFSZ, VTALRM,
/// PROF) removes it too before the process dies.
///
/// The temporary is ".NAME.fsimg-PID-XXXXXX" (PID the creating process), so
/// that a later run for the same NAME removes those whose process is gone
/// (SIGKILL, a crash): see stale_removed(). A replaced file keeps its mode
/// and, where the process may set it (root), its owner; a new one gets 0666
/// less the umask.
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
    /// Stale temporaries of dead processes removed when this one was made (for a note).
    const std::vector<std::string>& stale_removed() const noexcept { return stale_removed_; }
    /// fsyncs the file and renames it over the destination (mode 0644 less umask).
    void commit();

private:
    std::filesystem::path destination_;
    std::filesystem::path temp_path_;
    std::unique_ptr<FileImage> image_;
    int slot_ = -1;  ///< entry in the signal-cleanup registry, -1 when none
    bool committed_ = false;
    std::vector<std::string> stale_removed_;
    std::optional<std::uint32_t> keep_mode_;  ///< the replaced file's mode bits
    std::optional<std::uint32_t> keep_uid_, keep_gid_;
};

}  // namespace fsimg::io
