// A small greedy LZNT1 compressor for the tests (fsimg itself only
// decompresses): it makes valid chunks of any data so that decompression
// can be checked by round trips and compressed NTFS units can be built.
// Format: include/fsimg/ntfs/lznt1.hpp [MS-XCA 2.5]. Quadratic per chunk;
// for test data of a few hundred KiB at most.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fsimg::test {

/// Displacement bits of a copy token after `produced` bytes of its chunk.
inline unsigned lznt1_displacement_bits(std::size_t produced) {
    unsigned d = 4;
    while (d < 12 && (std::size_t{1} << d) < produced) ++d;
    return d;
}

/// Compresses `data` chunk by chunk (4096 bytes each); a chunk that does
/// not shrink is stored uncompressed. `max_back` caps the match search.
inline std::vector<std::byte> lznt1_compress(std::span<const std::byte> data, std::size_t max_back = 4096) {
    std::vector<std::byte> out;
    for (std::size_t base = 0; base < data.size(); base += 4096) {
        const auto blk = data.subspan(base, std::min<std::size_t>(4096, data.size() - base));
        std::vector<std::byte> body;
        std::size_t pos = 0;
        while (pos < blk.size()) {
            const std::size_t flag_at = body.size();
            body.push_back(std::byte{0});
            for (unsigned bit = 0; bit < 8 && pos < blk.size(); ++bit) {
                const unsigned lbits = 16 - lznt1_displacement_bits(pos);
                const std::size_t max_len =
                    std::min<std::size_t>((std::size_t{1} << lbits) + 2, blk.size() - pos);
                const std::size_t max_d = std::min({pos, std::size_t{1} << (16 - lbits), max_back});
                std::size_t best = 0, best_back = 0;
                for (std::size_t back = 1; back <= max_d; ++back) {
                    std::size_t len = 0;
                    while (len < max_len && blk[pos + len] == blk[pos + len - back]) ++len;
                    if (len > best) best = len, best_back = back;
                    if (best == max_len) break;
                }
                if (best >= 3) {
                    const unsigned token = static_cast<unsigned>(((best_back - 1) << lbits) | (best - 3));
                    body[flag_at] |= std::byte(1u << bit);
                    body.push_back(std::byte(token & 0xFF));
                    body.push_back(std::byte(token >> 8));
                    pos += best;
                } else {
                    body.push_back(blk[pos++]);
                }
            }
        }
        const bool raw = body.size() >= blk.size();
        const std::size_t n = raw ? blk.size() : body.size();
        const unsigned header = (raw ? 0x3000u : 0xB000u) | static_cast<unsigned>(n + 2 - 3);
        out.push_back(std::byte(header & 0xFF));
        out.push_back(std::byte(header >> 8));
        if (raw)
            out.insert(out.end(), blk.begin(), blk.end());
        else
            out.insert(out.end(), body.begin(), body.end());
    }
    return out;
}

}  // namespace fsimg::test
