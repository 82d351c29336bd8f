// LZNT1, the LZ77 variant NTFS uses for compressed attributes (pure: bytes
// in, bytes out).
//
// Format [MS-XCA 2.5 "LZNT1 Algorithm Details", 3.3 worked example]:
// - A buffer is a series of chunks. Each starts with a 16-bit little-endian
//   header: bits 0..11 = the chunk's size in bytes, header included, minus 3
//   (so a chunk has 3..4098 bytes); bits 12..14 = signature, always 3;
//   bit 15 = 1 when the chunk body is compressed. A header of 0 (or fewer
//   than 2 bytes left) ends the buffer.
// - Chunk k (0-based) holds the output bytes [4096 k, 4096 (k + 1)). A
//   chunk that decodes to fewer than 4096 bytes leaves the rest of its
//   4096 bytes zero [NTFS-3G ntfs_decompress: the sub-block is zero-filled].
// - An uncompressed body is the output bytes themselves (1..4096).
// - A compressed body is a series of groups: a flag byte, then up to eight
//   tokens, bit 0 first. Bit clear: a literal byte. Bit set: a 16-bit
//   little-endian copy token. The body may end anywhere between tokens.
// - A copy token's split depends on U, the bytes this chunk has output so
//   far: its displacement takes D bits, the smallest D >= 4 with
//   2^D >= U (so 4 bits for U <= 16, 5 for U <= 32, ... 12 for U > 2048),
//   its length the other 16 - D. Displacement = (token >> (16 - D)) + 1,
//   length = (token & (2^(16-D) - 1)) + 3. The copy reads the output
//   `displacement` bytes back, byte by byte, so it may overlap itself.
//
// Hostile input: every header and token is checked against the input left
// in its chunk, every copy against the chunk's output so far (no reference
// before the chunk's start) and against its 4096-byte end, every chunk
// against `out`. Bad data throws FormatError whose offset is the byte of
// `in` where the bad header or token starts; nothing is read or written out
// of bounds. Time is linear in in.size() + out.size().
#pragma once

#include <cstddef>
#include <span>

namespace fsimg::ntfs::lznt1 {

/// Output bytes one chunk stands for [MS-XCA 2.5].
inline constexpr std::size_t kChunkBytes = 4096;
/// Chunk header signature, bits 12..14.
inline constexpr unsigned kSignature = 3;

/// Decompresses the chunks of `in` into `out` (chunk k at out[4096 k]).
/// Every byte of `out` no chunk writes (after a short chunk, after the
/// last chunk) is set to zero, so `out` holds the whole decoded block.
/// Decoding stops at a zero header, when fewer than 2 bytes of `in` are
/// left, or when `out` is full (chunks after that are not read).
/// Returns the output offset where the last chunk's bytes end (0 when `in`
/// holds no chunk).
///
/// Throws FormatError (offset = position in `in`) when: a header's
/// signature is not 3; a chunk passes the end of `in`; a chunk's output
/// would pass `out`; a copy token is cut by the chunk's end (1 byte left);
/// a copy reaches before the chunk's first output byte; a literal or a copy
/// would pass the chunk's 4096 bytes.
std::size_t decompress(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace fsimg::ntfs::lznt1
