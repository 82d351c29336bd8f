// Pass 2: the FATs. Streams every copy in chunks: copies identical, FAT[0]
// holds the media byte, FAT[1] volume flags; records which clusters some
// entry links to (for counting lost chains in pass 4).
#include <algorithm>
#include <optional>
#include <vector>

#include "check_internal.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat::detail {

namespace {

/// BS_Reserved1's dirty bit (Windows NT; the Linux driver sets it while
/// mounted, fs/fat/inode.c fat_set_state) and FAT[1]'s clean-shutdown bit
/// (`fat1`, when it is cleared too) say the same thing: an unclean unmount,
/// reported once. fsck.fat 4.2 says "Dirty bit is set" once for both.
void report_dirty(Context& c, std::optional<std::uint32_t> fat1) {
    const BootSector& bs = c.boot.boot;
    if (!(bs.reserved1 & 0x01)) return;
    const Layout& l = c.layout();
    c.out.add("fat.boot.dirty", at_sector(0, l.bytes_per_sector, "boot sector BS_Reserved1"),
              fat1 ? fmt::format("BS_Reserved1 is 0x{:02X} and FAT[1] is 0x{:X}: the dirty bit (0x01) is set "
                                 "and the clean-shutdown bit 0x{:X} is cleared, the volume was not unmounted "
                                 "cleanly",
                                 bs.reserved1, *fat1, l.type == FatType::fat16 ? 0x8000 : 0x08000000)
                   : fmt::format("BS_Reserved1 is 0x{:02X}: the dirty bit (0x01) is set, the volume was not "
                                 "unmounted cleanly",
                                 bs.reserved1));
}

void check_reserved_entries(Context& c, std::uint32_t fat0, std::uint32_t fat1) {
    const Layout& l = c.layout();
    const auto loc = [&](std::uint32_t n) {
        check::Location where =
            at_sector(l.first_fat_sector, l.bytes_per_sector, fmt::format("FAT 1 entry {}", n));
        *where.byte_offset += n * fat_entry_bits(l.type) / 8;
        return where;
    };
    if ((fat0 & 0xFF) != l.media) {
        c.out.add("fat.fat.media", loc(0),
                  fmt::format("FAT[0] is 0x{:X}: its low byte 0x{:02X} should be the media byte 0x{:02X} "
                              "(BPB_Media)",
                              fat0, fat0 & 0xFF, l.media));
    }
    if (l.type == FatType::fat12) {
        report_dirty(c, std::nullopt);
        return;
    }
    const std::uint32_t clean = l.type == FatType::fat16 ? 0x8000 : 0x08000000;
    const std::uint32_t no_error = l.type == FatType::fat16 ? 0x4000 : 0x04000000;
    if (!(fat1 & clean) && !(c.boot.boot.reserved1 & 0x01)) {
        c.out.add(
            "fat.fat.dirty", loc(1),
            fmt::format("FAT[1] is 0x{:X}: the clean-shutdown bit 0x{:X} is cleared, the volume was not "
                        "unmounted cleanly",
                        fat1, clean));
    } else {
        report_dirty(c, (fat1 & clean) != 0 ? std::nullopt : std::optional<std::uint32_t>(fat1));
    }
    if (!(fat1 & no_error)) {
        c.out.add(
            "fat.fat.hard-error", loc(1),
            fmt::format("FAT[1] is 0x{:X}: the no-hard-error bit 0x{:X} is cleared, a driver met a disk "
                        "error on this volume",
                        fat1, no_error));
    }
}

}  // namespace

bool check_fats(Context& c) {
    Volume& v = *c.vol;
    const Layout& l = c.layout();
    if (!v.fat_copy_readable(0)) {
        // The first FAT must be readable to check anything else; truncation is
        // the cause and has been reported.
        if (!c.truncated) {
            c.out.add("fat.boot.image-truncated", at_sector(l.first_fat_sector, l.bytes_per_sector, "FAT 1"),
                      "the first FAT lies past the end of the image");
        }
        report_dirty(c, std::nullopt);
        return false;
    }
    const std::uint32_t entries = v.entry_count();
    c.linked = Bitmap(entries);
    c.owned = Bitmap(entries);
    c.walking = Bitmap(entries);
    c.allocated = Bitmap(entries);
    const bool mirrored = !(l.type == FatType::fat32 && (c.boot.boot.ext_flags & 0x80));
    std::vector<unsigned> others;
    for (unsigned k = 1; k < l.num_fats && mirrored; ++k) {
        if (v.fat_copy_readable(k)) others.push_back(k);
    }
    std::vector<std::uint64_t> differing(l.num_fats, 0);
    std::vector<std::vector<std::uint32_t>> first_diffs(l.num_fats);
    std::vector<std::uint32_t> chunk, other;
    std::uint32_t fat0 = 0, fat1 = 0;
    const std::uint32_t flag_bits = l.type == FatType::fat16   ? 0xC000u
                                    : l.type == FatType::fat32 ? 0x0C000000u
                                                               : 0u;  // clean-shutdown, no-hard-error
    std::uint32_t fat1_cleared = 0;  // flag bits FAT 1 has set and another copy has cleared
    core::Progress* progress = c.options.progress;
    if (progress) progress->begin("checking the FATs", entries, core::ProgressUnit::items);
    for (std::uint32_t base = 0; base < entries; base += kFatChunkEntries) {
        const std::uint32_t n = std::min<std::uint32_t>(kFatChunkEntries, entries - base);
        core::advance(progress, n);
        chunk.resize(n);
        v.read_fat_entries(0, base, chunk);
        if (base == 0) {
            fat0 = chunk[0];
            fat1 = chunk[1];
        }
        for (std::uint32_t i = base < 2 ? 2 - base : 0; i < n; ++i) {
            if (chunk[i] == 0) {  // free: most entries of most volumes, decided without classify()
                ++c.summary.free_clusters;
                continue;
            }
            switch (v.classify(chunk[i])) {
                case EntryKind::bad:
                    ++c.summary.bad_clusters;
                    break;
                case EntryKind::next:
                    c.linked.set(chunk[i]);
                    c.allocated.set(base + i);
                    break;
                default:  // end of chain, or a value that is no cluster (reported with the chain)
                    c.allocated.set(base + i);
                    break;
            }
        }
        for (unsigned k : others) {
            other.resize(n);
            v.read_fat_entries(k, base, other);
            if (std::equal(chunk.begin(), chunk.end(), other.begin())) continue;
            for (std::uint32_t i = 0; i < n; ++i) {
                if (chunk[i] == other[i]) continue;
                // FAT[1]'s flag bits differing between copies: a driver or a
                // repair cut between writing one copy and the next. The
                // volume is dirty (a copy says so); the FATs do not differ.
                if (base + i == 1 && ((chunk[i] ^ other[i]) & ~flag_bits) == 0) {
                    fat1_cleared |= (chunk[i] & ~other[i]) & flag_bits;
                    continue;
                }
                if (differing[k]++ < kFirstLocations) first_diffs[k].push_back(base + i);
            }
        }
    }
    if (progress) progress->end();
    check_reserved_entries(c, fat0, fat1 & ~fat1_cleared);
    for (unsigned k : others) {
        if (differing[k] == 0) continue;
        std::string list;
        for (std::uint32_t e : first_diffs[k]) list += (list.empty() ? "" : ", ") + std::to_string(e);
        check::Location where = at_sector(l.first_fat_sector + std::uint64_t(k) * l.fat_size_sectors,
                                          l.bytes_per_sector, fmt::format("FAT {}", k + 1));
        where.cluster = first_diffs[k].front();
        c.out.add("fat.fat.copies-differ", where,
                  fmt::format("FAT {} differs from FAT 1 in {} entr{} (first: {}{})", k + 1,
                              core::format_count(differing[k]), differing[k] == 1 ? "y" : "ies", list,
                              differing[k] > first_diffs[k].size() ? ", ..." : ""),
                  differing[k]);
    }
    return true;
}

}  // namespace fsimg::fat::detail
