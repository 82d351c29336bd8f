// LZNT1 decompression: see include/fsimg/ntfs/lznt1.hpp.
#include "fsimg/ntfs/lznt1.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "fsimg/core/error.hpp"

namespace fsimg::ntfs::lznt1 {

namespace {

/// Displacement bits of a copy token after `produced` bytes of its chunk:
/// the smallest D >= 4 with 2^D >= produced [MS-XCA 2.5, 3.3].
unsigned displacement_bits(std::size_t produced) {
    unsigned d = 4;
    while (d < 12 && (std::size_t{1} << d) < produced) ++d;
    return d;
}

/// Decodes one compressed chunk body `body` (its first byte at `in_at` in
/// the input, for errors) into `dst` (at most kChunkBytes); returns the
/// bytes output.
std::size_t decode_body(std::span<const std::byte> body, std::size_t in_at, std::span<std::byte> dst) {
    std::size_t i = 0, u = 0;
    while (i < body.size()) {
        const auto flags = static_cast<unsigned>(body[i++]);
        for (unsigned bit = 0; bit < 8 && i < body.size(); ++bit) {
            if (!(flags & (1u << bit))) {
                if (u >= dst.size())
                    throw FormatError(in_at + i, fmt::format("LZNT1: a literal at input byte {} passes the "
                                                             "chunk's {} output bytes",
                                                             in_at + i, dst.size()));
                dst[u++] = body[i++];
                continue;
            }
            if (body.size() - i < 2)
                throw FormatError(in_at + i,
                                  fmt::format("LZNT1: the copy token at input byte {} is cut by the chunk's "
                                              "end (1 of its 2 bytes)",
                                              in_at + i));
            const unsigned token = static_cast<unsigned>(body[i]) | (static_cast<unsigned>(body[i + 1]) << 8);
            const unsigned lbits = 16 - displacement_bits(u);
            const std::size_t back = (token >> lbits) + 1;
            const std::size_t length = (token & ((1u << lbits) - 1)) + 3;
            if (back > u)
                throw FormatError(in_at + i, fmt::format("LZNT1: the copy token 0x{:04X} at input byte {} "
                                                         "reaches {} bytes back, but the chunk has output {}",
                                                         token, in_at + i, back, u));
            if (length > dst.size() - u)
                throw FormatError(in_at + i,
                                  fmt::format("LZNT1: the copy token 0x{:04X} at input byte {} copies {} "
                                              "bytes at chunk offset {}, past the chunk's {} bytes",
                                              token, in_at + i, length, u, dst.size()));
            // Byte by byte: a copy may overlap the bytes it produces.
            for (std::size_t k = 0; k < length; ++k, ++u) dst[u] = dst[u - back];
            i += 2;
        }
    }
    return u;
}

}  // namespace

std::size_t decompress(std::span<const std::byte> in, std::span<std::byte> out) {
    std::size_t at = 0, chunk = 0, end = 0;
    // Each step consumes at least 3 bytes of `in` and one chunk of `out`.
    while (in.size() - at >= 2) {
        const unsigned header = static_cast<unsigned>(in[at]) | (static_cast<unsigned>(in[at + 1]) << 8);
        if (header == 0) break;
        const std::size_t base = chunk * kChunkBytes;
        if (base >= out.size()) break;
        if (((header >> 12) & 7) != kSignature)
            throw FormatError(at, fmt::format("LZNT1: chunk header 0x{:04X} at input byte {} has signature "
                                              "{}, not {}",
                                              header, at, (header >> 12) & 7, kSignature));
        const std::size_t size = (header & 0xFFF) + 3;  // header included
        if (size > in.size() - at)
            throw FormatError(at, fmt::format("LZNT1: the chunk at input byte {} has {} bytes, but only {} "
                                              "are left",
                                              at, size, in.size() - at));
        const std::span<const std::byte> body = in.subspan(at + 2, size - 2);
        const std::span<std::byte> dst = out.subspan(base, std::min(kChunkBytes, out.size() - base));
        std::size_t n = 0;
        if (header & 0x8000) {
            n = decode_body(body, at + 2, dst);
        } else {
            if (body.size() > dst.size())
                throw FormatError(at, fmt::format("LZNT1: the uncompressed chunk at input byte {} holds {} "
                                                  "bytes, more than the {} left in the output",
                                                  at, body.size(), dst.size()));
            std::copy(body.begin(), body.end(), dst.begin());
            n = body.size();
        }
        std::fill(dst.begin() + static_cast<std::ptrdiff_t>(n), dst.end(), std::byte{0});
        end = base + n;
        at += size;
        ++chunk;
    }
    const std::size_t filled = std::min(out.size(), chunk * kChunkBytes);
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(filled), out.end(), std::byte{0});
    return end;
}

}  // namespace fsimg::ntfs::lznt1
