// fat/edit.hpp: changing an existing FAT volume, every write ordered so
// that a cut after it leaves the volume consistent (see the header).
#include "fsimg/fat/edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/cluster_runs.hpp"
#include "fsimg/core/entry_span.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/cost.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/io/byte_cache.hpp"
#include "stamp.hpp"

namespace fsimg::fat {

namespace {

constexpr std::size_t kWindowBytes = 65536;
constexpr std::size_t kMaxWindows = 64;  // 4 MiB of FAT at most (io/byte_cache.hpp)
constexpr std::uint8_t kDeleted = 0xE5;
constexpr std::uint8_t kSettableAttributes = kAttrReadOnly | kAttrHidden | kAttrSystem | kAttrArchive;

std::uint32_t clean_bit(FatType t) noexcept {
    return t == FatType::fat16 ? 0x8000u : t == FatType::fat32 ? 0x08000000u : 0u;
}

}  // namespace

// Named, not anonymous: Editor::Impl holds one (-Wsubobject-linkage in a unity build).
namespace edit_detail {

/// Where a directory's entries lie on the device.
struct DirPlace {
    bool fixed = false;                   ///< the FAT12/16 root region
    std::uint64_t fixed_offset = 0;       ///< its byte offset
    std::vector<std::uint32_t> clusters;  ///< the chain, in order (not fixed)
    std::uint32_t entries = 0;            ///< entries the region or chain holds
};

}  // namespace edit_detail
using edit_detail::DirPlace;

struct Editor::Impl {
    io::BlockDevice& dev;
    EditOptions opt;
    Layout L;
    BootSector boot;
    Stamper stamper;
    mutable std::unique_ptr<Volume> vol;

    std::unique_ptr<io::ByteCache> fat;  ///< FAT copy 0, written into every copy
    bool began = false;
    bool was_clean = false;
    std::uint64_t allocated = 0;
    std::uint64_t freed = 0;
    std::uint32_t hint = 2;
    std::uint32_t last = 0;  ///< the highest cluster number (Volume::max_cluster)

    Impl(io::BlockDevice& d, EditOptions o) : dev(d), opt(std::move(o)), stamper(opt.clamp, opt.local_time) {
        const BootRegion br = read_boot_region(dev);
        if (!br.layout) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("the boot sector's geometry cannot be derived ({}); fsimg does not "
                                    "change such a volume",
                                    br.problem.value_or("unknown")));
        }
        L = *br.layout;
        boot = br.boot;
        const std::uint64_t fat_end = L.first_fat_sector * L.bytes_per_sector + L.num_fats * L.fat_bytes();
        if (fat_end > dev.size() || L.volume_bytes() > dev.size()) {
            throw Error(
                ErrorCode::corrupt,
                fmt::format("the volume claims {} bytes but the image holds {}; fsimg does not change "
                            "a truncated volume",
                            std::max(fat_end, L.volume_bytes()), dev.size()));
        }
        last = Volume(dev, br).max_cluster();
        std::vector<std::uint64_t> copies;
        for (unsigned c = 0; c < L.num_fats; ++c) copies.push_back(std::uint64_t(c) * L.fat_bytes());
        fat = std::make_unique<io::ByteCache>(
            dev, L.fat_bytes(), kWindowBytes, kMaxWindows,
            [this](std::uint64_t at) { return fat_base(0) + at; }, std::move(copies),
            [this] { vol.reset(); });
        // Every path is looked up from the root: its chain is judged first.
        if (L.type == FatType::fat32) guard_chain(L.root_cluster, "the root directory");
        if (L.type == FatType::fat32 && br.fsinfo && br.fsinfo->next_free >= 2 &&
            br.fsinfo->next_free <= L.cluster_count + 1)
            hint = br.fsinfo->next_free;
    }

    const Volume& volume() const {
        if (!vol) vol = std::make_unique<Volume>(dev);
        return *vol;
    }
    std::uint32_t max_cluster() const { return last; }
    std::uint64_t fat_base(unsigned copy) const {
        return L.first_fat_sector * L.bytes_per_sector + std::uint64_t(copy) * L.fat_bytes();
    }

    // --- FAT entries through the window cache ---------------------------------------------------
    std::uint8_t byte_at(std::uint64_t off) { return fat->get(off); }
    void set_byte(std::uint64_t off, std::uint8_t b) { fat->set(off, b); }
    std::uint32_t entry(std::uint32_t n) {
        switch (L.type) {
            case FatType::fat12: {
                const std::uint64_t o = n + n / 2;
                const std::uint32_t v = byte_at(o) | (std::uint32_t(byte_at(o + 1)) << 8);
                return (n & 1) ? v >> 4 : v & 0xFFF;
            }
            case FatType::fat16:
                return byte_at(2ull * n) | (std::uint32_t(byte_at(2ull * n + 1)) << 8);
            default: {
                const std::uint64_t o = 4ull * n;
                return (byte_at(o) | (std::uint32_t(byte_at(o + 1)) << 8) |
                        (std::uint32_t(byte_at(o + 2)) << 16) | (std::uint32_t(byte_at(o + 3)) << 24)) &
                       kFat32Mask;
            }
        }
    }
    void set_entry(std::uint32_t n, std::uint32_t v) {
        switch (L.type) {
            case FatType::fat12: {
                const std::uint64_t o = n + n / 2;
                if (n & 1) {
                    set_byte(o, static_cast<std::uint8_t>((byte_at(o) & 0x0F) | ((v << 4) & 0xF0)));
                    set_byte(o + 1, static_cast<std::uint8_t>(v >> 4));
                } else {
                    set_byte(o, static_cast<std::uint8_t>(v));
                    set_byte(o + 1, static_cast<std::uint8_t>((byte_at(o + 1) & 0xF0) | ((v >> 8) & 0x0F)));
                }
                break;
            }
            case FatType::fat16:
                set_byte(2ull * n, static_cast<std::uint8_t>(v));
                set_byte(2ull * n + 1, static_cast<std::uint8_t>(v >> 8));
                break;
            default: {
                const std::uint64_t o = 4ull * n;
                set_byte(o, static_cast<std::uint8_t>(v));
                set_byte(o + 1, static_cast<std::uint8_t>(v >> 8));
                set_byte(o + 2, static_cast<std::uint8_t>(v >> 16));
                // The top 4 bits are reserved: kept as they are [FATGEN].
                set_byte(o + 3, static_cast<std::uint8_t>((byte_at(o + 3) & 0xF0) | ((v >> 24) & 0x0F)));
            }
        }
    }
    /// Writes every changed byte range into every FAT copy, copy 1 first.
    void flush_fat() { fat->flush(); }

    // --- check_touched (EditOptions) ------------------------------------------------------------
    [[noreturn]] static void refuse_touched(std::string_view code, const std::string& what) {
        throw Error(
            ErrorCode::refused,
            fmt::format("{} ({}); found by the check of what this change touches, before anything "
                        "relying on it was written. `fsimg fsck` lists the damage and `fsimg fsck -y` "
                        "repairs what it can; --force-unsafe changes the volume anyway",
                        what, code));
    }
    /// check_touched: the chain from `first` judged as the checker's
    /// claim_chain judges one chain (fat/check_tree.cpp), to its end. Loops
    /// are found by Brent's cycle detection: no memory per cluster, at most
    /// about twice the chain's length in FAT reads.
    void guard_chain(std::uint32_t first, std::string_view what) {
        if (!opt.check_touched) return;
        if (first < 2 || first > last)
            refuse_touched("fat.file.start-out-of-range",
                           fmt::format("{} starts at cluster {}, outside the volume's clusters 2..{}", what,
                                       first, last));
        if (entry(first) == 0)
            refuse_touched("fat.file.start-free",
                           fmt::format("{} starts at cluster {}, which is free in the FAT", what, first));
        const std::uint32_t eoc_min = end_of_chain(L.type) & ~7u, bad = bad_cluster(L.type);
        std::uint32_t tortoise = first, cur = first;
        std::uint64_t power = 1, lam = 0;
        for (std::uint64_t n = 1;; ++n) {
            const std::uint32_t next = entry(cur);
            if (next >= eoc_min) return;
            if (next == bad)
                refuse_touched("fat.chain.bad-cluster",
                               fmt::format("{}: cluster {} (number {} of its chain) is marked bad in the FAT",
                                           what, cur, n));
            if (next < 2 || next > last)
                refuse_touched("fat.chain.out-of-range",
                               fmt::format("{}: FAT entry {} (number {} of its chain) holds 0x{:X}, not a "
                                           "cluster (2..{}) or an end-of-chain mark",
                                           what, cur, n, next, last));
            if (next == tortoise)
                refuse_touched("fat.chain.loop",
                               fmt::format("{}: its chain loops back to cluster {}", what, next));
            if (entry(next) == 0)
                refuse_touched("fat.chain.free-link",
                               fmt::format("{}: FAT entry {} (number {} of its chain) links to cluster {}, "
                                           "which is free",
                                           what, cur, n, next));
            if (++lam == power) {
                tortoise = next;
                power *= 2;
                lam = 0;
            }
            cur = next;
        }
    }
    /// check_touched: every other FAT copy marks the clusters of `runs` free
    /// too (the allocator read copy 1 through the cache).
    void guard_free(const std::vector<ClusterRun>& runs) {
        if (!opt.check_touched || L.num_fats < 2) return;
        constexpr std::uint32_t kStep = 65536;  // entries per read
        std::vector<std::byte> buf;
        for (const ClusterRun& r : runs) {
            for (std::uint32_t lo = r.first; lo < r.first + r.count;
                 lo += std::min(kStep, r.first + r.count - lo)) {
                const std::uint32_t n_here = std::min(kStep, r.first + r.count - lo);
                for (unsigned copy = 1; copy < L.num_fats; ++copy) {
                    const Layout::FatWindow w = L.fat_window(copy, lo, n_here);
                    buf.resize(w.bytes);
                    dev.read_at(w.offset, buf);
                    for (std::uint32_t n = lo; n < lo + n_here; ++n) {
                        if (const std::uint32_t v = get_fat_entry(buf, L.type, n - w.window_first); v != 0)
                            refuse_touched(
                                "fat.fat.copies-differ",
                                fmt::format("cluster {} is free in FAT copy 1 but FAT copy {} holds "
                                            "0x{:X} for it, so whether a file owns it is not known",
                                            n, copy + 1, v));
                    }
                }
            }
        }
    }

    // --- begin / finish -----------------------------------------------------------------------
    void begin() {
        if (began) return;
        began = true;
        const std::uint32_t bit = clean_bit(L.type);
        if (bit == 0) return;
        const std::uint32_t fat1 = entry(1);
        was_clean = (fat1 & bit) != 0;
        if (was_clean) {
            set_entry(1, fat1 & ~bit);
            flush_fat();
        }
    }

    // --- allocation ---------------------------------------------------------------------------
    /// n free clusters, one run if the volume has one that long (next-fit
    /// from `near`), else the first free ones found. Nothing is written.
    /// Throws Error(io) when the volume has fewer than n free clusters.
    std::vector<ClusterRun> find_free(std::uint64_t n, std::uint32_t near) {
        std::uint64_t free_seen = 0;
        std::vector<ClusterRun> out = core::find_free_runs<ClusterRun>(
            n, near, 2, max_cluster(), [this](std::uint32_t c) { return entry(c) == 0; },
            [](std::uint32_t) { return std::uint64_t{0}; }, free_seen);
        if (n != 0 && out.empty()) {
            throw Error(
                ErrorCode::io,
                fmt::format("no space left on the volume: {} clusters of {} bytes are needed, {} are free", n,
                            L.cluster_bytes(), free_seen));
        }
        guard_free(out);
        return out;
    }
    /// Links the runs into one chain ending in end-of-chain (FAT cache only).
    void set_chain(const std::vector<ClusterRun>& runs) {
        core::chain_links(runs, end_of_chain(L.type),
                          [this](std::uint32_t c, std::uint32_t next) { set_entry(c, next); });
        for (const auto& r : runs) allocated += r.count;
        if (!runs.empty()) {
            const ClusterRun& back = runs.back();
            hint = back.first + back.count <= max_cluster() ? back.first + back.count : 2;
        }
    }
    /// Frees a chain (FAT cache only; the caller flushes), following it
    /// through the cache: each entry is zeroed as it is passed, so a loop
    /// or a second chain joining this one ends the walk.
    void free_chain(std::uint32_t first_cluster) {
        const std::uint32_t last = max_cluster();
        std::uint32_t c = first_cluster;
        for (std::uint64_t steps = 0; c >= 2 && c <= last && steps <= last; ++steps) {
            const std::uint32_t v = entry(c);
            if (v == 0 || v == bad_cluster(L.type)) break;  // never free a bad cluster
            set_entry(c, 0);
            ++freed;
            c = v;
        }
    }

    // --- directories --------------------------------------------------------------------------
    //
    // Each directory touched is read once into `dirs` (its place on the device, its entries and an
    // index of its names) and every write to it goes through write_dir(), which updates the copy:
    // adding N files to a directory costs N writes, not N reads of a growing directory.

    struct CachedDir {
        DirPlace place;
        std::vector<std::byte> bytes;  ///< place.entries entries
        std::uint32_t end = 0;         ///< the end-of-directory mark (the first 0x00 entry), or entries
        /// No deleted (E5) entry lies before this index: where the search for
        /// a reusable run starts, so that adding N entries to a directory
        /// without deleted ones costs O(N), not O(N^2).
        std::uint32_t first_deleted = 0;
        bool indexed = false;
        /// Case-fold keys of every live file and directory name, long and short -> (first_index, index).
        std::unordered_map<std::u16string, std::pair<std::uint32_t, std::uint32_t>> names;
        std::unordered_set<std::string> short_names;  ///< DIR_Name of every live short entry
    };
    mutable std::map<DirId, CachedDir> dirs;
    std::set<DirId> touched;

    /// The clusters of a chain, through the FAT cache: at most `max` of them;
    /// Error(corrupt) when it loops or its first cluster is not one.
    std::vector<std::uint32_t> chain(std::uint32_t first, std::uint64_t max) {
        guard_chain(first, fmt::format("the directory at cluster {}", first));
        std::vector<std::uint32_t> out;
        std::unordered_set<std::uint32_t> seen;
        const std::uint32_t eoc_min = end_of_chain(L.type) & ~7u;
        for (std::uint32_t c = first; c >= 2 && c <= last && out.size() < max;) {
            if (!seen.insert(c).second)
                throw Error(
                    ErrorCode::corrupt,
                    fmt::format("the directory at cluster {} has a cluster chain that loops; run fsimg fsck",
                                first));
            out.push_back(c);
            const std::uint32_t v = entry(c);
            if (v >= eoc_min || v < 2 || v > last) break;  // end of chain (a broken link ends it too)
            c = v;
        }
        if (out.empty())
            throw Error(
                ErrorCode::corrupt,
                fmt::format("the directory at cluster {} has no valid first cluster; run fsimg fsck", first));
        return out;
    }
    DirPlace place_of(DirId d) {
        DirPlace p;
        if (d == kRootDir && L.type != FatType::fat32) {
            p.fixed = true;
            p.fixed_offset = L.first_root_dir_sector * L.bytes_per_sector;
            p.entries = L.root_entry_count;
            return p;
        }
        p.clusters = chain(d == kRootDir ? L.root_cluster : d,
                           core::div_ceil(std::uint64_t(kMaxDirEntries) * kDirEntrySize, L.cluster_bytes()));
        p.entries = static_cast<std::uint32_t>(p.clusters.size() * (L.cluster_bytes() / kDirEntrySize));
        return p;
    }
    static std::uint32_t end_mark(const std::vector<std::byte>& bytes, std::uint32_t from = 0) {
        const auto n = static_cast<std::uint32_t>(bytes.size() / kDirEntrySize);
        std::uint32_t i = from;
        while (i < n && bytes[std::size_t(i) * kDirEntrySize] != std::byte{0}) ++i;
        return i;
    }
    CachedDir& dir(DirId d) {
        if (auto it = dirs.find(d); it != dirs.end()) return it->second;
        CachedDir c;
        c.place = place_of(d);
        c.bytes.resize(std::size_t(c.place.entries) * kDirEntrySize);
        if (c.place.fixed) {
            dev.read_at(c.place.fixed_offset, c.bytes);
        } else {
            const std::size_t cb = L.cluster_bytes();
            for (std::size_t k = 0; k < c.place.clusters.size();) {  // runs of adjacent clusters in one read
                std::size_t n = 1;
                while (k + n < c.place.clusters.size() && c.place.clusters[k + n] == c.place.clusters[k] + n)
                    ++n;
                dev.read_at(L.cluster_offset(c.place.clusters[k]),
                            std::span(c.bytes).subspan(k * cb, n * cb));
                k += n;
            }
        }
        c.end = end_mark(c.bytes);
        c.first_deleted = c.end;
        for (std::uint32_t i = 0; i < c.end; ++i)
            if (std::to_integer<std::uint8_t>(c.bytes[std::size_t(i) * kDirEntrySize]) == kDeleted) {
                c.first_deleted = i;
                break;
            }
        return dirs.emplace(d, std::move(c)).first->second;
    }
    static std::u16string key_of(std::string_view utf8) { return case_fold_key(core::utf8_to_utf16(utf8)); }
    CachedDir& indexed(DirId d) {
        CachedDir& c = dir(d);
        if (c.indexed) return c;
        c.names.clear();
        c.short_names.clear();
        for (const DirRecord& r :
             parse_directory(std::span(c.bytes).first(std::size_t(c.end) * kDirEntrySize)).records)
            add_to_index(c, r);
        c.indexed = true;
        return c;
    }
    static void add_to_index(CachedDir& c, const DirRecord& r) {
        if (r.kind == RecordKind::volume_label) return;
        c.short_names.insert(std::string(r.entry.name.begin(), r.entry.name.end()));
        if (r.kind != RecordKind::file && r.kind != RecordKind::directory) return;
        const std::pair<std::uint32_t, std::uint32_t> at{r.first_index, r.index};
        if (r.has_long_name) c.names.try_emplace(case_fold_key(r.long_name), at);
        c.names.try_emplace(key_of(r.short_name_raw), at);
    }
    /// The record whose entries are [first, index] of directory d.
    DirRecord record_of(DirId d, std::uint32_t first, std::uint32_t index) {
        const CachedDir& c = dir(d);
        const auto slice = std::span(c.bytes).subspan(std::size_t(first) * kDirEntrySize,
                                                      std::size_t(index - first + 1) * kDirEntrySize);
        ParsedDirectory p = parse_directory(slice);
        if (p.records.empty())
            throw Error(ErrorCode::corrupt,
                        fmt::format("no entry at index {} of the directory at cluster {}", index, d));
        DirRecord r = p.records.back();
        r.first_index += first;
        r.index += first;
        return r;
    }
    std::optional<DirRecord> find_in(DirId d, std::string_view name) {
        CachedDir& c = indexed(d);
        const auto it = c.names.find(key_of(name));
        if (it == c.names.end()) return std::nullopt;
        return record_of(d, it->second.first, it->second.second);
    }

    std::uint64_t entry_offset(const DirPlace& p, std::uint32_t i) const {
        if (p.fixed) return p.fixed_offset + std::uint64_t(i) * kDirEntrySize;
        const std::uint32_t per = L.cluster_bytes() / kDirEntrySize;
        return L.cluster_offset(p.clusters.at(i / per)) + std::uint64_t(i % per) * kDirEntrySize;
    }
    /// Entries [first, first+count) lie in consecutive device bytes.
    bool consecutive(const DirPlace& p, std::uint32_t first, std::uint32_t count) const {
        if (p.fixed || count <= 1) return true;
        const std::uint32_t per = L.cluster_bytes() / kDirEntrySize;
        for (std::uint32_t k = first / per; k < (first + count - 1) / per; ++k)
            if (p.clusters[k + 1] != p.clusters[k] + 1) return false;
        return true;
    }
    /// Writes `bytes` (whole entries) at entry `first` of directory d and
    /// into its cached copy: one write per run of consecutive device bytes,
    /// the last run first (so a set placed at the end-of-directory mark
    /// becomes visible with its first bytes, written last).
    void write_dir(DirId d, std::uint32_t first, std::span<const std::byte> bytes) {
        CachedDir& c = dir(d);
        const auto count = static_cast<std::uint32_t>(bytes.size() / kDirEntrySize);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> segments;  // (first entry, count)
        for (std::uint32_t i = 0; i < count; ++i) {
            if (!segments.empty() &&
                entry_offset(c.place, first + i) == entry_offset(c.place, first + i - 1) + kDirEntrySize) {
                ++segments.back().second;
            } else {
                segments.emplace_back(first + i, 1);
            }
        }
        for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
            dev.write_at(entry_offset(c.place, it->first),
                         bytes.subspan(std::size_t(it->first - first) * kDirEntrySize,
                                       std::size_t(it->second) * kDirEntrySize));
        }
        const bool none_deleted = c.first_deleted >= c.end;  // no deleted entry before the mark
        std::copy(bytes.begin(), bytes.end(), c.bytes.begin() + std::ptrdiff_t(first) * kDirEntrySize);
        c.end = end_mark(c.bytes, std::min(c.end, first));  // only zero entries are written past the mark
        bool deleted = false;
        for (std::uint32_t i = 0; i < count && first + i < c.first_deleted; ++i)
            if (std::to_integer<std::uint8_t>(bytes[std::size_t(i) * kDirEntrySize]) == kDeleted) {
                c.first_deleted = first + i;
                deleted = true;
                break;
            }
        if (none_deleted && !deleted) c.first_deleted = c.end;  // still none: entries appended at the mark
        vol.reset();
    }

    /// Where `need` new entries go in directory d, decided without writing:
    /// a run of deleted entries before the end-of-directory mark that lies
    /// in consecutive bytes (`reuse`), else at the mark, with `grow` clusters
    /// added when the entries after it are too few. Throws Error(io) when the
    /// directory cannot take them (a full FAT12/16 root, 65,536 entries).
    struct Room {
        std::uint32_t at = 0;
        std::uint32_t grow = 0;
        bool reuse = false;
    };
    Room plan_room(DirId d, std::uint32_t need) {
        CachedDir& c = dir(d);
        auto first_byte = [&](std::uint32_t i) {
            return std::to_integer<std::uint8_t>(c.bytes[std::size_t(i) * kDirEntrySize]);
        };
        const std::uint32_t total = c.place.entries, end = c.end;
        for (std::uint32_t i = std::min(c.first_deleted, end); i < end;) {  // deleted entries before the mark
            if (first_byte(i) != kDeleted) {
                ++i;
                continue;
            }
            std::uint32_t j = i;
            while (j < end && first_byte(j) == kDeleted) ++j;
            for (std::uint32_t s = i; s + need <= j; ++s)
                if (consecutive(c.place, s, need)) return {s, 0, true};
            i = j;
        }
        if (total - end >= need) return {end, 0, false};
        if (c.place.fixed) {
            throw Error(ErrorCode::io,
                        fmt::format("no space left in the root directory: a {} root holds {} entries and "
                                    "{} are in use (FAT32 has no such limit)",
                                    L.type == FatType::fat12 ? "FAT12" : "FAT16", L.root_entry_count,
                                    used_entries(c)));
        }
        const std::uint32_t per = L.cluster_bytes() / kDirEntrySize;
        const std::uint32_t more = (need - (total - end) + per - 1) / per;
        if (std::uint64_t(total) + std::uint64_t(more) * per > kMaxDirEntries) {
            throw Error(ErrorCode::io, fmt::format("no space left in the directory: a FAT directory holds "
                                                   "at most {} entries",
                                                   kMaxDirEntries));
        }
        return {end, more, false};
    }
    /// Entries of a directory in use: neither free (00) nor deleted (E5) before the mark.
    std::uint32_t used_entries(CachedDir& c) const {
        std::uint32_t n = 0;
        for (std::uint32_t i = 0; i < c.end; ++i)
            if (std::to_integer<std::uint8_t>(c.bytes[std::size_t(i) * kDirEntrySize]) != kDeleted) ++n;
        return n;
    }
    /// The clusters a change needs, found before its first write: `data`
    /// clusters for a file and the growth of directory d for `entries` new
    /// entries. Throws Error(io) (nothing written) when the volume or the
    /// directory has no room.
    void plan_space(DirId d, std::uint64_t data, std::uint32_t entries) {
        const Room r = plan_room(d, entries);
        if (data + r.grow != 0) (void)find_free(data + r.grow, hint);
    }

    /// Where `need` new entries go in directory d (plan_room), the directory
    /// grown first when needed; writes the zero entry after the new ones when
    /// one is needed. Returns the first entry index.
    std::uint32_t make_room(DirId d, std::uint32_t need) {
        const Room r = plan_room(d, need);
        if (r.reuse) return r.at;
        CachedDir& c = dir(d);
        const std::uint32_t end = r.at;
        if (r.grow != 0) {
            grow(d, r.grow);
        } else if (end + need < c.place.entries &&
                   std::to_integer<std::uint8_t>(c.bytes[std::size_t(end + need) * kDirEntrySize]) != 0) {
            // Bytes past the mark that are not zero would become entries once the mark moves.
            const std::array<std::byte, kDirEntrySize> zero{};
            write_dir(d, end + need, zero);
        }
        return end;
    }
    /// Adds `more` zeroed clusters to a directory's chain: clusters zeroed,
    /// their chain written, then linked from the last cluster.
    void grow(DirId d, std::uint32_t more) {
        CachedDir& c = dir(d);
        const std::uint32_t last_cluster = c.place.clusters.back();
        const auto runs = find_free(more, last_cluster + 1);
        for (const auto& r : runs)
            dev.zero_range(L.cluster_offset(r.first), std::uint64_t(r.count) * L.cluster_bytes());
        set_chain(runs);
        flush_fat();
        set_entry(last_cluster, runs.front().first);
        flush_fat();
        for (const auto& r : runs)
            for (std::uint32_t i = 0; i < r.count; ++i) c.place.clusters.push_back(r.first + i);
        c.place.entries =
            static_cast<std::uint32_t>(c.place.clusters.size() * (L.cluster_bytes() / kDirEntrySize));
        c.bytes.resize(std::size_t(c.place.entries) * kDirEntrySize, std::byte{0});
    }

    /// The entry set (LFN entries, then the short entry) for `name` in
    /// directory d, with short entry fields from `base`. `self`: the record
    /// being renamed (its own names do not collide).
    std::vector<std::byte> entry_set(DirId d, std::string_view name, DirEntry base, const DirRecord* self) {
        if (auto why = long_name_problem(name))
            throw Error(ErrorCode::usage, fmt::format("\"{}\": {}", name, *why));
        const std::u16string name16 = core::utf8_to_utf16(name);
        CachedDir& c = indexed(d);
        if (const auto it = c.names.find(case_fold_key(name16));
            it != c.names.end() && !(self && it->second.second == self->index)) {
            const DirRecord other = record_of(d, it->second.first, it->second.second);
            throw Error(ErrorCode::usage, fmt::format("\"{}\" already exists (as \"{}\")", name, other.name));
        }
        const std::string own =
            self ? std::string(self->entry.name.begin(), self->entry.name.end()) : std::string();
        auto taken = [&](const ShortName& n) {
            const std::string k(n.begin(), n.end());
            return c.short_names.count(k) != 0 && k != own;
        };
        bool lfn = true;
        if (auto plain = plain_short_name(name16); plain && !taken(plain->name)) {
            base.name = plain->name;
            base.nt_res = plain->nt_case;
            lfn = false;
        } else {
            // Against the directory's index (one lookup per candidate): copying every
            // short name into an allocator per new file made cp -r of N names O(N^2).
            base.name = generate_short_name(name16, taken);
            base.nt_res = 0;
        }
        const std::uint32_t lfns = lfn ? lfn_entry_count(name16.size()) : 0;
        std::vector<std::byte> out(std::size_t(lfns + 1) * kDirEntrySize);
        if (lfn)
            encode_lfn_entries(name16, lfn_checksum(base.name),
                               std::span(out).first(std::size_t(lfns) * kDirEntrySize));
        encode_dir_entry(base,
                         std::span(out).subspan(std::size_t(lfns) * kDirEntrySize).first<kDirEntrySize>());
        return out;
    }
    /// Writes an entry set into directory d; returns its record.
    DirRecord add_entries(DirId d, std::span<const std::byte> set) {
        const auto need = static_cast<std::uint32_t>(set.size() / kDirEntrySize);
        const std::uint32_t at = make_room(d, need);
        write_dir(d, at, set);
        const DirRecord r = record_of(d, at, at + need - 1);
        CachedDir& c = dir(d);
        if (c.indexed) add_to_index(c, r);
        touched.insert(d);
        return r;
    }
    /// Marks a record's entries deleted.
    void delete_entries(DirId d, const DirRecord& r) {
        CachedDir& c = dir(d);
        std::vector<std::byte> set(c.bytes.begin() + std::ptrdiff_t(r.first_index) * kDirEntrySize,
                                   c.bytes.begin() + std::ptrdiff_t(r.index + 1) * kDirEntrySize);
        for (std::size_t i = 0; i < set.size(); i += kDirEntrySize) set[i] = std::byte{kDeleted};
        write_dir(d, r.first_index, set);  // the short entry's run first: the name goes at once
        c.indexed = false;
        touched.insert(d);
    }
    /// A rename inside one directory as ONE write: the old entries marked
    /// deleted and the new set written within one span of consecutive device
    /// bytes (the entries in between rewritten as they are). False when no
    /// such span exists; the caller then writes the new set and deletes the
    /// old one after it.
    bool rename_in_one_write(DirId d, const DirRecord& r, std::span<const std::byte> set) {
        CachedDir& c = dir(d);
        std::vector<std::byte> bytes = c.bytes;
        const std::uint32_t total = c.place.entries;
        if (r.index >= total) return false;
        for (std::uint32_t i = r.first_index; i <= r.index; ++i)
            bytes[std::size_t(i) * kDirEntrySize] = std::byte{kDeleted};
        const auto span = core::place_in_one_span(
            bytes, c.end, r.first_index, r.index + 1, set, [](std::uint8_t b) { return b == kDeleted; },
            [&](std::uint32_t lo, std::uint32_t n) { return consecutive(c.place, lo, n); });
        if (!span) return false;
        write_dir(
            d, span->lo,
            std::span<const std::byte>(bytes).subspan(std::size_t(span->lo) * kDirEntrySize,
                                                      std::size_t(span->hi - span->lo) * kDirEntrySize));
        c.indexed = false;
        touched.insert(d);
        return true;
    }
    /// Rewrites the short entry of record r of directory d.
    void rewrite_short_entry(DirId d, const DirRecord& r, const DirEntry& e) {
        std::array<std::byte, kDirEntrySize> b{};
        encode_dir_entry(e, b);
        write_dir(d, r.index, b);
        dir(d).indexed = false;
    }
    DirEntry stamped(const NewEntryInfo& info, std::uint8_t attr) const {
        DirEntry e;
        e.attr = attr;
        stamper.apply(e, info.mtime.value_or(opt.now), info.btime.value_or(opt.now),
                      info.btime ? info.btime_ns : 0);
        return e;
    }
    /// The parent of directory d (its ".." entry; kRootDir for the root and
    /// for directories in the root).
    DirId parent_of(DirId d) {
        if (d == kRootDir) return kRootDir;
        const CachedDir& c = dir(d);
        if (c.bytes.size() < 2 * kDirEntrySize) return kRootDir;
        const DirEntry dd =
            decode_dir_entry(std::span(c.bytes).subspan(kDirEntrySize).first<kDirEntrySize>());
        if (dd.name[0] != '.' || dd.name[1] != '.') return kRootDir;
        const std::uint32_t p = dd.first_cluster;
        return (L.type == FatType::fat32 && p == L.root_cluster) || p < 2 || p > last ? kRootDir : p;
    }
    /// Reads directory d and its parent (whose entry for d finish() stamps)
    /// before the first write, so that check_touched judges both first.
    void prepare(DirId d) {
        (void)dir(d);
        if (d != kRootDir) (void)dir(parent_of(d));
    }
    /// Sets the modification time of each changed directory's entry in its parent.
    void touch_changed() {
        const FatTimestamp t = stamper.stamp(opt.now);
        for (const DirId d : touched) {
            if (d == kRootDir) continue;
            const DirId parent = parent_of(d);
            CachedDir& c = dir(parent);
            for (std::uint32_t i = 0; i < c.end; ++i) {
                const auto raw = std::span<const std::byte>(c.bytes)
                                     .subspan(std::size_t(i) * kDirEntrySize)
                                     .first<kDirEntrySize>();
                const DirEntry e = decode_dir_entry(raw);
                if (e.name[0] == kDeleted || e.attr == kAttrLongName || !(e.attr & kAttrDirectory) ||
                    e.first_cluster != d || e.name[0] == '.')
                    continue;
                if (e.wrt_date == t.date && e.wrt_time == t.time) break;
                DirEntry n = e;
                n.wrt_date = t.date;
                n.wrt_time = t.time;
                n.lst_acc_date = t.date;
                std::array<std::byte, kDirEntrySize> b{};
                encode_dir_entry(n, b);
                write_dir(parent, i, b);
                break;
            }
        }
        touched.clear();
    }

    /// Writes a file's bytes into the runs, holes and the last cluster's tail
    /// as zeros (source::write_into_extents).
    void write_data(const std::vector<ClusterRun>& runs, const source::SourceFile& data) {
        std::vector<source::DeviceExtent> extents;
        for (const auto& run : runs)
            extents.push_back({L.cluster_offset(run.first), std::uint64_t(run.count) * L.cluster_bytes()});
        source::write_into_extents(data, extents, dev);
    }
    /// Allocates and writes a file's data and its chain (flushed); returns the
    /// first cluster (0 for an empty file).
    std::uint32_t store_data(const source::SourceFile& data) {
        if (data.size() > 0xFFFFFFFFull) {
            throw Error(ErrorCode::usage,
                        fmt::format("{} is {} bytes; a FAT file holds at most 4,294,967,295 bytes",
                                    data.path(), data.size()));
        }
        const std::uint64_t n = core::div_ceil(data.size(), std::uint64_t(L.cluster_bytes()));
        if (n == 0) {
            data.finish();  // an empty file is still checked: it did not grow while copied
            return 0;
        }
        const auto runs = find_free(n, hint);
        write_data(runs, data);
        set_chain(runs);
        flush_fat();
        return runs.front().first;
    }

    void collect_below(std::uint32_t first_cluster, std::vector<std::uint32_t>& chains,
                       std::unordered_set<std::uint32_t>& seen) const {
        std::vector<std::uint32_t> stack{first_cluster};
        while (!stack.empty()) {
            const std::uint32_t d = stack.back();
            stack.pop_back();
            for (const DirRecord& r : volume().read_directory(d).records) {
                if (r.kind == RecordKind::file) {
                    if (r.entry.first_cluster != 0) chains.push_back(r.entry.first_cluster);
                } else if (r.kind == RecordKind::directory) {
                    const std::uint32_t c = r.entry.first_cluster;
                    if (volume().is_cluster(c) && seen.insert(c).second) {
                        chains.push_back(c);
                        stack.push_back(c);
                    }
                }
            }
        }
    }
};

Editor::Editor(io::BlockDevice& device, EditOptions options)
    : impl_(std::make_unique<Impl>(device, std::move(options))) {}
Editor::~Editor() = default;

const Layout& Editor::layout() const noexcept { return impl_->L; }
const Volume& Editor::volume() const { return impl_->volume(); }
std::uint64_t Editor::allocated_clusters() const noexcept { return impl_->allocated; }
std::uint64_t Editor::freed_clusters() const noexcept { return impl_->freed; }

std::optional<DirRecord> Editor::lookup(std::string_view path) const { return volume().lookup(path); }

DirId Editor::directory_of(const DirRecord& dir) const {
    if (dir.is_root) return kRootDir;
    if (dir.kind != RecordKind::directory)
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a directory", dir.name));
    const std::uint32_t c = dir.entry.first_cluster;
    if (impl_->L.type == FatType::fat32 && c == impl_->L.root_cluster) return kRootDir;
    if (c < 2 || c > impl_->last)
        throw Error(
            ErrorCode::corrupt,
            fmt::format("directory \"{}\" has no valid first cluster ({}); run fsimg fsck", dir.name, c));
    return c;
}

std::vector<DirRecord> Editor::list(DirId dir) const {
    const auto& c = impl_->dir(dir);
    return parse_directory(std::span(c.bytes).first(std::size_t(c.end) * kDirEntrySize)).records;
}

std::optional<DirRecord> Editor::find(DirId dir, std::string_view name) const {
    return impl_->find_in(dir, name);
}

std::optional<std::string> Editor::name_problem(std::string_view name) { return long_name_problem(name); }

std::uint32_t Editor::entry_slots(std::string_view name) {
    return name_entry_count(core::utf8_to_utf16(name));
}

std::uint64_t Editor::new_directory_clusters(std::span<const std::uint32_t> sets) const {
    std::uint64_t entries = subdirectory_entries(0);
    for (const std::uint32_t n : sets) entries += n;
    return directory_clusters(entries, impl_->L.cluster_bytes());
}

std::uint64_t Editor::growth_clusters(DirId dir, std::span<const std::uint32_t> sets) {
    Impl& m = *impl_;
    auto& c = m.dir(dir);
    std::uint64_t need = 0;
    for (const std::uint32_t n : sets) need += n;
    const std::uint64_t room = c.place.entries - c.end;
    if (need <= room) return 0;
    if (c.place.fixed) {
        std::uint64_t deleted = 0;
        for (std::uint32_t i = 0; i < c.end; ++i)
            if (std::to_integer<std::uint8_t>(c.bytes[std::size_t(i) * kDirEntrySize]) == kDeleted) ++deleted;
        if (need > room + deleted)
            throw Error(ErrorCode::io,
                        fmt::format("no space left in the root directory: a {} root holds {} entries, {} are "
                                    "in use and the copy needs {} more",
                                    m.L.type == FatType::fat12 ? "FAT12" : "FAT16", m.L.root_entry_count,
                                    m.used_entries(c), need));
        return 0;
    }
    const std::uint64_t per = m.L.cluster_bytes() / kDirEntrySize;
    return core::div_ceil(need - room, per);
}

void Editor::check_free(std::uint64_t clusters) {
    if (clusters != 0) (void)impl_->find_free(clusters, impl_->hint);
}

DirRecord Editor::add_file(DirId dir, std::string_view name, const source::SourceFile& data,
                           const NewEntryInfo& info) {
    Impl& m = *impl_;
    DirEntry e = m.stamped(info, static_cast<std::uint8_t>(info.attributes & ~kAttrDirectory));
    // Name checks, and the clusters for the data and the directory's growth, before anything is written.
    const auto set = m.entry_set(dir, name, e, nullptr);
    m.plan_space(dir, core::div_ceil(data.size(), std::uint64_t(m.L.cluster_bytes())),
                 static_cast<std::uint32_t>(set.size() / kDirEntrySize));
    m.prepare(dir);
    m.begin();
    const std::uint32_t first = m.store_data(data);
    e.first_cluster = first;
    e.file_size = static_cast<std::uint32_t>(data.size());
    try {
        return m.add_entries(dir, m.entry_set(dir, name, e, nullptr));
    } catch (...) {
        if (first != 0) {  // the directory could not take the entry: its clusters are not left lost
            m.free_chain(first);
            m.flush_fat();
        }
        throw;
    }
}

DirRecord Editor::add_chain_file(DirId dir, std::string_view name, std::uint32_t first_cluster,
                                 std::uint32_t size, const NewEntryInfo& info) {
    Impl& m = *impl_;
    DirEntry e = m.stamped(info, static_cast<std::uint8_t>(info.attributes & ~kAttrDirectory));
    const auto set = m.entry_set(dir, name, e, nullptr);
    m.plan_space(dir, 0, static_cast<std::uint32_t>(set.size() / kDirEntrySize));
    m.prepare(dir);
    m.begin();
    e.first_cluster = first_cluster;
    e.file_size = size;
    return m.add_entries(dir, m.entry_set(dir, name, e, nullptr));
}

void Editor::replace_file(DirId dir, const DirRecord& existing, const source::SourceFile& data,
                          const NewEntryInfo& info) {
    Impl& m = *impl_;
    if (existing.kind != RecordKind::file)
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a file", existing.name));
    // Before anything is written: the directory, the chain to be freed, and room for the new data
    // (written before the old is freed).
    m.prepare(dir);
    if (existing.entry.first_cluster != 0)
        m.guard_chain(existing.entry.first_cluster, fmt::format("\"{}\"", existing.name));
    if (data.size() <= 0xFFFFFFFFull)
        (void)m.find_free(core::div_ceil(data.size(), std::uint64_t(m.L.cluster_bytes())), m.hint);
    m.begin();
    const std::uint32_t first = m.store_data(data);
    DirEntry e = existing.entry;
    const DirEntry t = m.stamped(info, e.attr);
    e.wrt_date = t.wrt_date;
    e.wrt_time = t.wrt_time;
    e.lst_acc_date = t.lst_acc_date;
    e.attr |= kAttrArchive;
    e.first_cluster = first;
    e.file_size = static_cast<std::uint32_t>(data.size());
    m.rewrite_short_entry(dir, existing, e);
    if (existing.entry.first_cluster != 0) {
        m.free_chain(existing.entry.first_cluster);
        m.flush_fat();
    }
    m.touched.insert(dir);
}

DirRecord Editor::add_directory(DirId dir, std::string_view name, const NewEntryInfo& info) {
    Impl& m = *impl_;
    DirEntry e = m.stamped(
        info,
        static_cast<std::uint8_t>((info.attributes & kSettableAttributes & ~kAttrArchive) | kAttrDirectory));
    const auto set = m.entry_set(dir, name, e, nullptr);
    m.plan_space(dir, 1,
                 static_cast<std::uint32_t>(set.size() / kDirEntrySize));  // before anything is written
    m.prepare(dir);
    m.begin();
    const auto runs = m.find_free(1, m.hint);
    const std::uint32_t c = runs.front().first;
    // The new directory's cluster: "." and ".." (".." of a directory in the root is 0 [FATGEN]).
    std::vector<std::byte> cluster(m.L.cluster_bytes());
    DirEntry dot = e;
    dot.name.fill(' ');
    dot.name[0] = '.';
    dot.nt_res = 0;
    dot.first_cluster = c;
    encode_dir_entry(dot, std::span(cluster).first<kDirEntrySize>());
    DirEntry dotdot = dot;
    dotdot.name[1] = '.';
    dotdot.first_cluster = dir;
    encode_dir_entry(dotdot, std::span(cluster).subspan(kDirEntrySize).first<kDirEntrySize>());
    m.dev.write_at(m.L.cluster_offset(c), cluster);
    m.set_chain(runs);
    m.flush_fat();
    e.first_cluster = c;
    try {
        return m.add_entries(dir, m.entry_set(dir, name, e, nullptr));
    } catch (...) {
        m.free_chain(c);
        m.flush_fat();
        throw;
    }
}

void Editor::remove(DirId dir, const DirRecord& r) {
    Impl& m = *impl_;
    if (r.is_root || (r.kind != RecordKind::file && r.kind != RecordKind::directory))
        throw Error(ErrorCode::usage, fmt::format("\"{}\" cannot be removed", r.name));
    std::vector<std::uint32_t> chains;
    const std::uint32_t first = r.entry.first_cluster;
    if (r.kind == RecordKind::directory && first >= 2 && first <= m.last) {
        std::unordered_set<std::uint32_t> seen{first};
        chains.push_back(first);
        m.collect_below(first, chains, seen);  // before any write: a broken subtree refuses
        // A directory below that is the one holding the entry or one of its ancestors (a loop in a
        // damaged image) would free directories outside what is removed.
        std::unordered_set<DirId> up;
        for (DirId d = dir; up.insert(d).second && d != kRootDir; d = m.parent_of(d)) {
            if (seen.count(d) != 0)
                throw Error(
                    ErrorCode::corrupt,
                    fmt::format("\"{}\" holds a directory entry leading back to a directory above it (a "
                                "loop); nothing was removed: run fsimg fsck",
                                r.name));
        }
    } else if (first != 0) {
        chains.push_back(first);
    }
    m.prepare(dir);
    for (const std::uint32_t c : chains)
        m.guard_chain(c, fmt::format("\"{}\" (or an entry below it)", r.name));
    m.begin();
    m.delete_entries(dir, r);
    std::unordered_set<std::uint32_t> done;
    for (const std::uint32_t c : chains)
        if (done.insert(c).second) m.free_chain(c);
    m.flush_fat();
    for (const std::uint32_t c : chains) {  // freed directories are no longer cached or touched
        m.dirs.erase(c);
        m.touched.erase(c);
    }
}

void Editor::rename(DirId from, const DirRecord& r, DirId to, std::string_view new_name, bool replace) {
    Impl& m = *impl_;
    if (r.is_root || (r.kind != RecordKind::file && r.kind != RecordKind::directory))
        throw Error(ErrorCode::usage, fmt::format("\"{}\" cannot be renamed", r.name));
    const bool is_dir = r.kind == RecordKind::directory;
    if (is_dir) {  // not into itself or below itself
        std::unordered_set<DirId> seen;
        for (DirId d = to; d != kRootDir && seen.insert(d).second; d = m.parent_of(d)) {
            if (d == r.entry.first_cluster)
                throw Error(ErrorCode::usage, fmt::format("cannot move \"{}\" into itself", r.name));
        }
    }
    std::optional<DirRecord> target = find(to, new_name);
    if (target && from == to && target->index == r.index) target.reset();  // a case-only rename
    if (target) {
        if (!replace) throw Error(ErrorCode::usage, fmt::format("\"{}\" already exists", target->name));
        if (target->kind != RecordKind::file)
            throw Error(ErrorCode::usage,
                        fmt::format("\"{}\" exists and is a directory; it is not replaced", target->name));
        if (is_dir)
            throw Error(ErrorCode::usage,
                        fmt::format("\"{}\" is a directory; it does not replace the file \"{}\"", r.name,
                                    target->name));
        // The target's short entry takes the source's data, then the source goes, then the old data.
        m.prepare(to);
        m.prepare(from);
        if (target->entry.first_cluster != 0 && target->entry.first_cluster != r.entry.first_cluster)
            m.guard_chain(target->entry.first_cluster, fmt::format("\"{}\"", target->name));
        m.begin();
        DirEntry e = target->entry;
        e.first_cluster = r.entry.first_cluster;
        e.file_size = r.entry.file_size;
        e.attr = r.entry.attr;
        e.wrt_date = r.entry.wrt_date;
        e.wrt_time = r.entry.wrt_time;
        m.rewrite_short_entry(to, *target, e);
        m.delete_entries(from, m.record_of(from, r.first_index, r.index));
        if (target->entry.first_cluster != 0 && target->entry.first_cluster != r.entry.first_cluster) {
            m.free_chain(target->entry.first_cluster);
            m.flush_fat();
        }
        m.touched.insert(to);
        return;
    }
    const std::vector<std::byte> set = m.entry_set(to, new_name, r.entry, from == to ? &r : nullptr);
    m.prepare(to);
    m.prepare(from);
    if (is_dir && from != to) m.prepare(r.entry.first_cluster);  // its ".." is rewritten
    m.begin();
    if (from == to && m.rename_in_one_write(from, r, set)) return;
    m.add_entries(to, set);
    if (is_dir && from != to) {  // ".." names the new parent
        const std::uint32_t c = r.entry.first_cluster;
        const DirRecord dd = m.record_of(c, 1, 1);
        if (dd.kind == RecordKind::dotdot) {
            DirEntry e = dd.entry;
            e.first_cluster = to;
            m.rewrite_short_entry(c, dd, e);
        }
    }
    m.delete_entries(from, m.record_of(from, r.first_index, r.index));
}

void Editor::set_attributes(DirId dir, const DirRecord& r, std::uint8_t set, std::uint8_t clear) {
    Impl& m = *impl_;
    if (r.is_root || (r.kind != RecordKind::file && r.kind != RecordKind::directory))
        throw Error(ErrorCode::usage, fmt::format("\"{}\" has no attributes to change", r.name));
    DirEntry e = r.entry;
    const auto attr =
        static_cast<std::uint8_t>((e.attr | (set & kSettableAttributes)) & ~(clear & kSettableAttributes));
    if (attr == e.attr) return;
    e.attr = attr;
    m.prepare(dir);
    m.begin();
    m.rewrite_short_entry(dir, r, e);
}

namespace {
/// The 11-byte label field: validated as normalize_volume_label does, case kept, space padded.
std::string label_field(std::string_view label) {
    (void)normalize_volume_label(label);  // throws for what FAT labels cannot hold
    std::string out(label);
    out.resize(11, ' ');
    return out;
}
std::string trim_label(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
    return s;
}
}  // namespace

std::string Editor::label() const {
    for (const DirRecord& r : list(kRootDir)) {
        if (r.kind == RecordKind::volume_label) {
            const std::string raw(r.entry.name.begin(), r.entry.name.end());
            const std::string t = trim_label(oem_text(raw));
            return t == "NO NAME" ? std::string() : t;
        }
    }
    if (impl_->boot.boot_signature != 0x29) return {};
    const std::string t = trim_label(oem_text(impl_->boot.volume_label));
    return t == "NO NAME" ? std::string() : t;
}

void Editor::set_label(std::string_view label) {
    Impl& m = *impl_;
    const std::string field = label.empty() ? std::string("NO NAME    ") : label_field(label);
    std::optional<DirRecord> entry;
    for (const DirRecord& r : list(kRootDir)) {
        if (r.kind == RecordKind::volume_label) {
            entry = r;
            break;
        }
    }
    if (!label.empty() && !entry)
        m.plan_space(kRootDir, 0, 1);  // room for the new entry, before the first write
    m.begin();
    if (label.empty()) {
        if (entry) m.delete_entries(kRootDir, *entry);
    } else if (entry) {
        DirEntry e = entry->entry;
        std::copy(field.begin(), field.end(), e.name.begin());
        m.rewrite_short_entry(kRootDir, *entry, e);
    } else {
        DirEntry e = m.stamped(NewEntryInfo{}, kAttrVolumeId);
        std::copy(field.begin(), field.end(), e.name.begin());
        std::array<std::byte, kDirEntrySize> b{};
        encode_dir_entry(e, b);
        m.add_entries(kRootDir, b);
    }
    if (m.boot.boot_signature == 0x29) {
        const std::size_t off = m.L.type == FatType::fat32 ? off::VolLab32 : off::VolLab16;
        const auto bytes = std::as_bytes(std::span(field.data(), 11));
        m.dev.write_at(off, bytes);
        if (m.L.type == FatType::fat32 && m.L.backup_boot_sector != 0)
            m.dev.write_at(std::uint64_t(m.L.backup_boot_sector) * m.L.bytes_per_sector + off, bytes);
        m.boot.volume_label = field;
    }
    m.vol.reset();
}

std::uint32_t Editor::volume_id() const noexcept { return impl_->boot.volume_id; }

void Editor::set_volume_id(std::uint32_t id) {
    Impl& m = *impl_;
    if (m.boot.boot_signature != 0x29) {
        throw Error(ErrorCode::unsupported,
                    "the boot sector has no extended boot signature (0x29), so it holds no "
                    "volume serial number");
    }
    m.begin();
    const std::size_t off = m.L.type == FatType::fat32 ? off::VolID32 : off::VolID16;
    std::array<std::byte, 4> b{};
    core::store_le32(b, 0, id);
    m.dev.write_at(off, b);
    if (m.L.type == FatType::fat32 && m.L.backup_boot_sector != 0)
        m.dev.write_at(std::uint64_t(m.L.backup_boot_sector) * m.L.bytes_per_sector + off, b);
    m.boot.volume_id = id;
    m.vol.reset();
}

void Editor::finish() {
    Impl& m = *impl_;
    if (!m.began) return;
    m.touch_changed();
    m.flush_fat();
    if (m.L.type == FatType::fat32 && m.L.fsinfo_sector != 0 && m.L.fsinfo_sector != 0xFFFF &&
        m.L.fsinfo_sector < m.L.reserved_sectors) {
        std::vector<std::uint64_t> sectors{m.L.fsinfo_sector};
        if (m.L.backup_boot_sector != 0 && m.L.backup_boot_sector + m.L.fsinfo_sector < m.L.reserved_sectors)
            sectors.push_back(m.L.backup_boot_sector + m.L.fsinfo_sector);
        for (const std::uint64_t s : sectors) {
            std::array<std::byte, kBootSectorSize> sector{};
            m.dev.read_at(s * m.L.bytes_per_sector, sector);
            FsInfo info = decode_fsinfo(sector);
            if (info.lead_signature != kFsInfoLeadSig || info.struct_signature != kFsInfoStrucSig) continue;
            if (info.free_count != kFsInfoUnknown) {
                const std::int64_t v =
                    std::int64_t(info.free_count) + std::int64_t(m.freed) - std::int64_t(m.allocated);
                info.free_count = v < 0 || v > std::int64_t(m.L.cluster_count)
                                      ? kFsInfoUnknown
                                      : static_cast<std::uint32_t>(v);
            }
            info.next_free = m.hint;
            encode_fsinfo(info, sector);
            m.dev.write_at(s * m.L.bytes_per_sector, sector);
        }
    }
    if (m.opt.barrier) m.opt.barrier();  // the change is durable before the bit that closes it
    if (m.was_clean) {
        m.set_entry(1, m.entry(1) | clean_bit(m.L.type));
        m.flush_fat();
    }
    m.began = false;
    m.was_clean = false;
    m.allocated = m.freed = 0;
}

}  // namespace fsimg::fat
