#include "fsimg/fs/metadata.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/exfat/metadata.hpp"
#include "fsimg/fat/metadata.hpp"
#include "fsimg/ntfs/edit.hpp"
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
            // Scrambled names: $LogFile is left out (its records hold names);
            // the names are changed on the copy (finish_metadata_copy).
            const ntfs::Volume v(volume);
            ntfs::metadata_ranges(v, options.logfile && !scramble, m.ranges, m.patches, m.problems);
            m.scramble_on_copy = scramble != nullptr;
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

std::string finish_metadata_copy(io::BlockDevice& copy, Kind kind, const MetadataMap& m) {
    if (kind != Kind::ntfs || !m.scramble_on_copy) return {};
    ntfs::EditOptions o;
    o.metadata_copy = true;
    ntfs::Editor ed(copy, o);
    const auto done = ed.scramble_names(core::NameScrambler(core::NameScrambler::random_key()));
    // $LogFile was left out (its records hold names): empty, as ntfsfix
    // leaves it, so that the copy mounts as the original does.
    (void)ed.empty_logfile();
    ed.finish();
    return fmt::format(
        "{} names in {} records made up, {} director{} index rebuilt from them, {} link "
        "target{} scrambled; $LogFile emptied (its records hold names)",
        done.names, done.records, done.indexes, done.indexes == 1 ? "y's" : "ies'", done.reparse_points,
        done.reparse_points == 1 ? "" : "s");
}

}  // namespace fsimg::fs
