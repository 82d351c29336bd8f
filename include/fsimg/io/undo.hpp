// Undo files: every block a repair overwrites, saved before it is
// overwritten, so that `fsimg undo FILE IMAGE` puts the image back exactly
// (the idea of e2fsck's -z undo file; the format is fsimg's own).
//
// Format (all integers little-endian):
//   header  "FSIMGUNDO1\0\0" (12 bytes), u64 image size in bytes;
//   records u32 "REC1", u64 image byte offset, u32 length, u32 CRC32 of the
//           bytes the repair wrote, u32 CRC32 of the saved bytes, then the
//           saved (original) bytes.
// Each record is written and fsync'ed before the write it saves for is
// made, so every write that reached the image has a whole record; a record
// cut short (the process ended while saving it) stands for a write that
// never happened and is ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "fsimg/io/block_device.hpp"

namespace fsimg::io {

/// A device whose writes first save what they overwrite to an undo file.
class UndoDevice final : public BlockDevice {
public:
    /// Creates the undo file `path` (refused with Error(refused) when it
    /// exists: an undo file is never overwritten) for the image file of
    /// `image_bytes`; `inner` is the device written (a partition window or the
    /// whole image), starting `base_offset` bytes into the image. Throws
    /// Error(io) when the file cannot be created or written.
    UndoDevice(BlockDevice& inner, std::uint64_t base_offset, std::uint64_t image_bytes,
               const std::filesystem::path& path);
    ~UndoDevice() override;
    UndoDevice(const UndoDevice&) = delete;
    UndoDevice& operator=(const UndoDevice&) = delete;

    std::uint64_t size() const override { return inner_.size(); }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
        inner_.read_at(offset, out);
    }
    /// Saves the bytes at [offset, offset + in.size()) to the undo file
    /// (fsync'ed), then writes `in`. Errors as BlockDevice::write_at.
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override;
    /// As write_at with zeros.
    void zero_range(std::uint64_t offset, std::uint64_t length) override;
    /// Records saved so far.
    std::uint64_t records() const noexcept { return records_; }

private:
    BlockDevice& inner_;
    std::uint64_t base_;
    int fd_ = -1;
    std::uint64_t records_ = 0;
};

/// What undo_image() did.
struct UndoResult {
    std::uint64_t records = 0;  ///< writes put back
    std::uint64_t bytes = 0;    ///< bytes restored
    bool cut_short = false;     ///< the file ended inside a record (ignored: its write never happened)
};

/// Puts back every block the undo file at `undo_path` saved, last write
/// first, into the image file `image` (opened read-write). Checked first,
/// before anything is written: the header, the image's size, and that every
/// saved range still holds what the repair wrote (its CRC32), so an image
/// changed since, or another image, is refused with Error(refused) naming
/// the first range that differs. Error(corrupt) for a damaged undo file,
/// Error(io) for I/O failures.
UndoResult undo_image(const std::filesystem::path& undo_path, BlockDevice& image);

}  // namespace fsimg::io
