#include "fsimg/fs/metadata.hpp"

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/exfat/metadata.hpp"
#include "fsimg/fat/metadata.hpp"
#include "fsimg/ntfs/metadata.hpp"

namespace fsimg::fs {

void add_range(std::vector<ByteRange>& ranges, std::uint64_t offset, std::uint64_t length,
               std::uint64_t device_bytes) {
    if (offset >= device_bytes || length == 0) return;
    ranges.push_back({offset, std::min(length, device_bytes - offset)});
}

MetadataMap metadata_map(const io::BlockDevice& volume, Kind kind, const MetadataOptions& options) {
    MetadataMap m;
    const core::NameScrambler scrambler(core::NameScrambler::random_key());
    const core::NameScrambler* scramble = options.scramble_names ? &scrambler : nullptr;
    switch (kind) {
        case Kind::fat: {
            const fat::Volume v(volume);
            fat::metadata_ranges(v, m.ranges, m.problems, scramble, &m.patches);
            break;
        }
        case Kind::exfat: {
            const exfat::Volume v(volume);
            exfat::metadata_ranges(v, m.ranges, m.problems, scramble, &m.patches);
            break;
        }
        case Kind::ntfs: {
            if (scramble)
                throw Error(ErrorCode::unsupported,
                            "--scramble-names is for FAT and exFAT volumes: NTFS keeps its names sorted in "
                            "index B+ trees, which are not rebuilt yet");
            const ntfs::Volume v(volume);
            ntfs::metadata_ranges(v, options.logfile, m.ranges, m.patches, m.problems);
            break;
        }
    }
    std::sort(m.ranges.begin(), m.ranges.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
    std::vector<ByteRange> merged;
    for (const ByteRange& r : m.ranges) {
        if (!merged.empty() && r.offset <= merged.back().offset + merged.back().length) {
            merged.back().length = std::max(merged.back().length, r.offset + r.length - merged.back().offset);
        } else {
            merged.push_back(r);
        }
    }
    m.ranges = std::move(merged);
    return m;
}

}  // namespace fsimg::fs
