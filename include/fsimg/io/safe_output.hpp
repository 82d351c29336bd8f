// Output files that never destroy what the user did not ask to destroy: the
// checks before any command writes a file (slack -o and --chart, dump
// outputs, ...) and the atomic write itself.
//
// An output path may be a new path, or an existing regular file that holds
// no recognised format (io/probe.hpp: a filesystem, a partition table, a
// disk image or compressed data, also one readable only through a backup):
// an earlier report is replaced, an image never. It is never a device, a
// FIFO, a socket or a directory, and never one of the command's inputs
// (the same device and inode: a hard link or another spelling included).
// The write goes to a temporary in the same folder (AtomicImage: removed on
// failure and on every terminating signal) renamed into place, so the old
// file stays whole until the new one is.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fsimg::io {

/// Throws Error(refused) when `path` may not be written as described above,
/// naming `option` ("--chart") and the reason: "is a FIFO", "is the image
/// being read (INPUT)", "holds an ext4 filesystem". Throws Error(usage) when
/// its folder does not exist or is not writable. `inputs` are the command's
/// input files; those that do not exist are ignored.
void check_output_path(const std::filesystem::path& path, std::span<const std::filesystem::path> inputs,
                       std::string_view option);

/// Writes `bytes` to `path` through a temporary file in the same folder
/// renamed into place (mode and owner of a replaced file kept). Throws
/// Error(io) on failure; the old file is then unchanged.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// True when `a` and `b` exist and are the same file (device and inode).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace fsimg::io
