// Operational errors of the fsimg library.
//
// The library never prints or exits: it throws fsimg::Error (caught once in
// src/cli) for operational problems and appends check::Findings for damage
// found inside an image.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace fsimg {

/// What kind of operational failure an Error is; the CLI maps it to an exit code.
enum class ErrorCode : std::uint8_t {
    usage,        ///< a user-supplied value is invalid (bad size string, bad option combination)
    io,           ///< the operating system refused a read, write, open, rename...
    not_this_fs,  ///< the image does not hold the filesystem (or table) we looked for
    corrupt,      ///< the image holds it, but a structure needed to go on is broken
    refused,      ///< a safety rule refused the request (existing filesystem, device, ...)
    unsupported,  ///< valid, but something fsimg does not do
};

/// An operational error: a message that names the offending value, and
/// optionally the absolute byte offset in the image it concerns.
class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message, std::optional<std::uint64_t> byte_offset = std::nullopt)
        : std::runtime_error(message), code_(code), byte_offset_(byte_offset) {}

    ErrorCode code() const noexcept { return code_; }
    std::optional<std::uint64_t> byte_offset() const noexcept { return byte_offset_; }

private:
    ErrorCode code_;
    std::optional<std::uint64_t> byte_offset_;
};

/// A structure could not be decoded: reading `what` would leave its record.
/// `offset` is relative to the start of the record being decoded.
class FormatError : public Error {
public:
    FormatError(std::uint64_t offset, const std::string& what) : Error(ErrorCode::corrupt, what, offset) {}
};

}  // namespace fsimg
