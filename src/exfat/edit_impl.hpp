// exfat::Editor's state and the steps its operations are made of: the
// FAT and bitmap caches, allocation, directories (cached, grown, entry sets
// placed and rewritten), in the write order exfat/edit.hpp documents.
// Private to src/exfat/edit.cpp.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
#include "fsimg/core/walk.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/edit.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/io/byte_cache.hpp"
#include "stamp.hpp"

namespace fsimg::exfat {

struct Editor::Impl {
    static constexpr std::size_t kFatWindow = 65536;
    static constexpr std::size_t kMaxWindows = 64;                  // 4 MiB of FAT, as much of the bitmap
    static constexpr std::uint64_t kMaxCountedBitmap = 8ull << 20;  // PercentInUse recounted up to this
    static bool in_use(std::uint8_t type) noexcept { return (type & kEntryInUse) != 0; }

    io::BlockDevice& dev;
    EditOptions opt;
    Stamper stamper;
    BootSector boot;  ///< the main boot sector as read
    std::uint32_t bps = 0, cb = 0, count = 0, root = 0;
    std::uint64_t heap = 0;
    std::vector<char16_t> upcase;
    std::vector<ClusterRun> bitmap_runs;
    std::unique_ptr<io::ByteCache> fat, bitmap;
    mutable std::unique_ptr<Volume> vol;

    bool began = false, was_clean = false;
    std::uint64_t allocated = 0, freed = 0;
    std::uint32_t hint = 2;

    /// Where a subdirectory's entry set is, and what it says of its allocation.
    struct Where {
        DirId parent = kRootDir;
        std::uint32_t index = 0;
        std::uint64_t data_length = 0;
        bool no_fat_chain = false;
    };
    mutable std::map<DirId, Where> where;

    struct CachedDir {
        std::vector<std::uint32_t> clusters;
        std::vector<std::byte> bytes;  ///< clusters.size() * cb
        std::uint32_t end = 0;         ///< the end-of-directory entry, or the entry count
        /// The entries before `end` whose InUse bit is clear: where sets may
        /// be reused, kept as the directory changes, so that adding a set
        /// looks at these, not at every entry (N sets cost O(N), not O(N^2)).
        std::set<std::uint32_t> unused;
        bool indexed = false;
        /// Up-cased name -> (File entry index, entries of the set).
        std::unordered_map<std::u16string, std::pair<std::uint32_t, std::uint32_t>> names;
        std::uint32_t total() const { return static_cast<std::uint32_t>(bytes.size() / kDirEntrySize); }
        std::uint8_t type(std::uint32_t i) const {
            return std::to_integer<std::uint8_t>(bytes[std::size_t(i) * kDirEntrySize]);
        }
    };
    mutable std::map<DirId, CachedDir> dirs;
    std::set<DirId> touched;

    Impl(io::BlockDevice& d, EditOptions o) : dev(d), opt(std::move(o)), stamper(opt.clamp, opt.local_time) {
        BootRegion br = read_boot_region(dev);
        if (br.use_backup || !br.usable()) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("the main boot region is damaged ({}); fsimg changes only a volume "
                                    "whose main boot region is sound (see fsimg fsck)",
                                    br.use_backup ? br.main_damage : br.problems.front().message));
        }
        boot = br.main.boot;
        if (boot.number_of_fats != 1) {
            throw Error(
                ErrorCode::unsupported,
                fmt::format("NumberOfFats is {}: fsimg does not change TexFAT volumes", boot.number_of_fats));
        }
        bps = br.bytes_per_sector;
        if (br.missing_bytes != 0) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("the volume claims {} bytes more than the image holds; fsimg does not "
                                    "change a truncated volume",
                                    br.missing_bytes));
        }
        vol = std::make_unique<Volume>(dev, std::move(br));
        if (vol->upcase_problem()) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("the up-case table cannot be used ({}); names could not be compared as "
                                    "the volume's readers compare them (see fsimg fsck)",
                                    *vol->upcase_problem()));
        }
        cb = vol->cluster_bytes();
        count = vol->cluster_count();
        root = vol->root_cluster();
        heap = vol->cluster_offset(2);
        upcase.assign(vol->upcase_table().begin(), vol->upcase_table().end());
        const auto be = vol->bitmap_entry();
        if (!be) throw Error(ErrorCode::corrupt, "the root directory has no Allocation Bitmap entry");
        const std::uint64_t bitmap_bytes = core::div_ceil(std::uint64_t{count}, 8);
        if (be->data_length < bitmap_bytes)
            throw Error(ErrorCode::corrupt,
                        fmt::format("the Allocation Bitmap holds {} bytes, ClusterCount {} needs {}",
                                    be->data_length, count, bitmap_bytes));
        bitmap_runs = vol->allocation(be->first_cluster, bitmap_bytes, false, "the allocation bitmap");
        const std::uint64_t fat_at = std::uint64_t(boot.fat_offset) * bps;
        const std::uint64_t fat_bytes = (std::uint64_t(count) + 2) * kFatEntrySize;
        if (fat_at + fat_bytes > dev.size())
            throw Error(ErrorCode::corrupt, "the FAT lies past the end of the image");
        fat = std::make_unique<io::ByteCache>(
            dev, fat_bytes, kFatWindow, kMaxWindows, [fat_at](std::uint64_t at) { return fat_at + at; },
            std::vector<std::uint64_t>{0}, [this] { vol.reset(); });
        const std::size_t bw = std::min<std::size_t>(cb, kFatWindow);
        bitmap = std::make_unique<io::ByteCache>(
            dev, bitmap_bytes, bw, kMaxWindows,
            [this](std::uint64_t at) {
                std::uint64_t k = at / cb;
                for (const auto& r : bitmap_runs) {
                    if (k < r.count) return vol_offset(r.first + static_cast<std::uint32_t>(k)) + at % cb;
                    k -= r.count;
                }
                return ~std::uint64_t{0};  // not reached: the runs cover the bitmap
            },
            std::vector<std::uint64_t>{0}, [this] { vol.reset(); });
    }

    std::uint64_t vol_offset(std::uint32_t c) const { return heap + std::uint64_t(c - 2) * cb; }
    std::uint32_t last() const { return count + 1; }
    bool is_cluster(std::uint64_t c) const { return c >= 2 && c <= last(); }
    const Volume& volume() const {
        if (!vol) vol = std::make_unique<Volume>(dev);
        return *vol;
    }
    void flush_fat() { fat->flush(); }
    void flush_bitmap() { bitmap->flush(); }

    // --- begin / allocation ---------------------------------------------------------------------
    void write_flags(std::uint16_t flags) {
        std::array<std::byte, 2> b{};
        core::store_le16(b, 0, flags);
        dev.write_at(off::VolumeFlags, b);
        boot.volume_flags = flags;
        vol.reset();
    }
    void begin() {
        if (began) return;
        began = true;
        was_clean = (boot.volume_flags & kVolumeFlagVolumeDirty) == 0;
        if (was_clean) write_flags(boot.volume_flags | kVolumeFlagVolumeDirty);
    }

    bool bit(std::uint32_t c) { return (bitmap->get((c - 2) / 8) >> ((c - 2) % 8)) & 1; }
    void set_bit(std::uint32_t c, bool v) {
        const std::uint64_t at = (c - 2) / 8;
        const auto mask = static_cast<std::uint8_t>(1u << ((c - 2) % 8));
        const std::uint8_t b = bitmap->get(at);
        bitmap->set(at, v ? (b | mask) : (b & ~mask));
    }
    /// n free clusters: one run when the volume has one that long (next-fit
    /// from `near`), else the first free ones found from there. Nothing is
    /// written. Error(io) when fewer than n are free.
    std::vector<ClusterRun> find_free(std::uint64_t n, std::uint32_t near) {
        std::uint64_t free_seen = 0;
        std::vector<ClusterRun> out = core::find_free_runs<ClusterRun>(
            n, near, 2, last(), [this](std::uint32_t c) { return !bit(c); },
            [this](std::uint32_t c) {  // a byte of the bitmap with every bit set: 8 clusters in use
                return (c - 2) % 8 == 0 && bitmap->get((c - 2) / 8) == 0xFF ? std::uint64_t{8}
                                                                            : std::uint64_t{0};
            },
            free_seen);
        if (n != 0 && out.empty())
            throw Error(ErrorCode::io,
                        fmt::format("no space left on the volume: {} clusters of {} bytes are needed, {} are "
                                    "free",
                                    n, cb, free_seen));
        return out;
    }
    /// FAT entries linking the runs into one chain ending in end-of-chain (flushed).
    void write_chain(const std::vector<ClusterRun>& runs) {
        core::chain_links(runs, kFatEndOfChain, [this](std::uint32_t c, std::uint32_t next) {
            fat->set_le32(std::uint64_t(c) * kFatEntrySize, next);
        });
        flush_fat();
    }
    /// Sets or clears the bitmap bits of the runs (flushed).
    void mark(const std::vector<ClusterRun>& runs, bool used) {
        for (const auto& r : runs) {
            for (std::uint32_t i = 0; i < r.count; ++i) set_bit(r.first + i, used);
            (used ? allocated : freed) += r.count;
        }
        flush_bitmap();
        if (used && !runs.empty()) {
            const ClusterRun& b = runs.back();
            hint = b.first + b.count <= last() ? b.first + b.count : 2;
        }
    }
    /// The clusters of an allocation through the FAT cache: `need` clusters
    /// from `first` (one run when no_fat_chain). Error(corrupt) naming
    /// `what` when they leave the heap or the chain is short, loops or is broken.
    std::vector<ClusterRun> runs_of(std::uint32_t first, std::uint64_t need, bool no_fat_chain,
                                    std::string_view what) {
        std::vector<ClusterRun> out;
        if (need == 0) return out;
        if (need > count || !is_cluster(first) || (no_fat_chain && first + need - 1 > last()))
            throw Error(ErrorCode::corrupt,
                        fmt::format("{}: {} clusters from cluster {} leave the cluster heap; run fsimg fsck",
                                    what, need, first));
        if (no_fat_chain) return {ClusterRun{first, static_cast<std::uint32_t>(need)}};
        core::VisitedClusters seen(std::uint64_t(last()) + 1);
        std::uint32_t c = first;
        for (std::uint64_t k = 0; k < need; ++k) {
            if (!is_cluster(c) || seen.visit(c))
                throw Error(ErrorCode::corrupt,
                            fmt::format("{}: its FAT chain from cluster {} is broken or loops after {} of {} "
                                        "clusters; run fsimg fsck",
                                        what, first, k, need));
            if (!out.empty() && out.back().first + out.back().count == c) {
                ++out.back().count;
            } else {
                out.push_back(ClusterRun{c, 1});
            }
            if (k + 1 < need) c = fat->get_le32(std::uint64_t(c) * kFatEntrySize);
        }
        return out;
    }
    /// Frees allocations: bitmap bits first, then the FAT entries of chained ones set to 0.
    void free_runs(const std::vector<std::pair<std::vector<ClusterRun>, bool>>& allocs) {
        std::vector<ClusterRun> all;
        for (const auto& [runs, chained] : allocs) all.insert(all.end(), runs.begin(), runs.end());
        mark(all, false);
        for (const auto& [runs, chained] : allocs) {
            if (!chained) continue;
            for (const auto& r : runs)
                for (std::uint32_t i = 0; i < r.count; ++i)
                    fat->set_le32(std::uint64_t(r.first + i) * kFatEntrySize, 0);
        }
        flush_fat();
    }

    // --- directories ----------------------------------------------------------------------------
    CachedDir& dir(DirId d) {
        if (auto it = dirs.find(d); it != dirs.end()) return it->second;
        CachedDir c;
        const std::uint64_t max = kMaxDirectoryBytes / cb + 1;
        if (d == kRootDir) {
            core::VisitedClusters seen(std::uint64_t(last()) + 1);
            for (std::uint32_t x = root; c.clusters.size() < max;) {
                if (seen.visit(x))
                    throw Error(ErrorCode::corrupt, "the root directory's FAT chain loops; run fsimg fsck");
                c.clusters.push_back(x);
                const std::uint32_t v = fat->get_le32(std::uint64_t(x) * kFatEntrySize);
                if (!is_cluster(v)) break;  // end of chain (a broken link ends it too, as readers do)
                x = v;
            }
        } else {
            const auto w = where.find(d);
            if (w == where.end())
                throw Error(ErrorCode::usage,
                            fmt::format("internal error: directory at cluster {} was not found through the "
                                        "editor",
                                        d));
            if (w->second.data_length > kMaxDirectoryBytes || w->second.data_length % cb != 0)
                throw Error(
                    ErrorCode::corrupt,
                    fmt::format("the directory at cluster {} has DataLength {}, not a multiple of the "
                                "cluster size up to 256 MiB; run fsimg fsck",
                                d, w->second.data_length));
            for (const auto& r : runs_of(d, w->second.data_length / cb, w->second.no_fat_chain,
                                         fmt::format("the directory at cluster {}", d)))
                for (std::uint32_t i = 0; i < r.count; ++i) c.clusters.push_back(r.first + i);
        }
        c.bytes.resize(c.clusters.size() * cb);
        for (std::size_t k = 0; k < c.clusters.size();) {  // runs of adjacent clusters in one read
            std::size_t n = 1;
            while (k + n < c.clusters.size() && c.clusters[k + n] == c.clusters[k] + n) ++n;
            if (vol_offset(c.clusters[k]) + n * cb > dev.size())
                throw Error(
                    ErrorCode::corrupt,
                    fmt::format("directory cluster {} lies past the end of the image", c.clusters[k]));
            dev.read_at(vol_offset(c.clusters[k]), std::span(c.bytes).subspan(k * cb, n * cb));
            k += n;
        }
        c.end = 0;
        while (c.end < c.total() && c.type(c.end) != kEntryEndOfDirectory) ++c.end;
        for (std::uint32_t i = 0; i < c.end; ++i)
            if (!in_use(c.type(i))) c.unused.insert(c.unused.end(), i);
        return dirs.emplace(d, std::move(c)).first->second;
    }
    std::u16string key_of(std::u16string_view name) const { return upcase_name(name, upcase); }
    /// Registers a directory record reached in d (its set's place and allocation).
    void reached(DirId d, const FileRecord& r) const {
        if (r.is_directory() && r.first_cluster != 0)
            where[r.first_cluster] = Where{d, r.index, r.data_length, r.no_fat_chain()};
    }
    CachedDir& indexed(DirId d) {
        CachedDir& c = dir(d);
        if (c.indexed) return c;
        c.names.clear();
        for (const FileRecord& r :
             parse_directory(std::span(c.bytes).first(std::size_t(c.end) * kDirEntrySize), upcase).files)
            c.names.try_emplace(key_of(r.name16), r.index, r.entries);
        c.indexed = true;
        return c;
    }
    FileRecord record_of(DirId d, std::uint32_t index, std::uint32_t entries) {
        const CachedDir& c = dir(d);
        const ParsedDirectory p =
            parse_directory(std::span(c.bytes).subspan(std::size_t(index) * kDirEntrySize,
                                                       std::size_t(entries) * kDirEntrySize),
                            upcase);
        if (p.files.empty())
            throw Error(ErrorCode::corrupt, fmt::format("no entry set at index {} of the directory", index));
        FileRecord r = p.files.front();
        r.index += index;
        for (auto& b : r.benign) b.index += index;
        reached(d, r);
        return r;
    }
    /// The set whose File entry is entry i of d (Error(corrupt) when there is none).
    FileRecord record_at(DirId d, std::uint32_t i) {
        const CachedDir& c = dir(d);
        if (i >= c.end || c.type(i) != kEntryFile)
            throw Error(ErrorCode::corrupt, fmt::format("no File entry at index {} of the directory", i));
        const std::uint32_t n =
            1 + std::to_integer<std::uint8_t>(c.bytes[std::size_t(i) * kDirEntrySize + 1]);
        return record_of(d, i, std::min(n, c.total() - i));
    }
    std::optional<FileRecord> find_in(DirId d, std::u16string_view name16) {
        CachedDir& c = indexed(d);
        const auto it = c.names.find(key_of(name16));
        if (it == c.names.end()) return std::nullopt;
        return record_of(d, it->second.first, it->second.second);
    }

    std::uint64_t entry_offset(const CachedDir& c, std::uint32_t i) const {
        const std::uint32_t per = cb / kDirEntrySize;
        return vol_offset(c.clusters.at(i / per)) + std::uint64_t(i % per) * kDirEntrySize;
    }
    bool consecutive(const CachedDir& c, std::uint32_t first, std::uint32_t n) const {
        if (n <= 1) return true;
        const std::uint32_t per = cb / kDirEntrySize;
        for (std::uint32_t k = first / per; k < (first + n - 1) / per; ++k)
            if (c.clusters[k + 1] != c.clusters[k] + 1) return false;
        return true;
    }
    /// Writes whole entries at entry `first` of d and into its cached copy:
    /// one write per run of consecutive device bytes, the last run first (a
    /// set placed past the end becomes visible with its File entry), or
    /// with `first_run_first` the first (a removal: the File entry goes first).
    void write_dir(DirId d, std::uint32_t first, std::span<const std::byte> bytes,
                   bool first_run_first = false) {
        CachedDir& c = dir(d);
        const auto n = static_cast<std::uint32_t>(bytes.size() / kDirEntrySize);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> segments;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!segments.empty() &&
                entry_offset(c, first + i) == entry_offset(c, first + i - 1) + kDirEntrySize) {
                ++segments.back().second;
            } else {
                segments.emplace_back(first + i, 1);
            }
        }
        if (!first_run_first) std::reverse(segments.begin(), segments.end());
        for (const auto& [s, k] : segments)
            dev.write_at(entry_offset(c, s), bytes.subspan(std::size_t(s - first) * kDirEntrySize,
                                                           std::size_t(k) * kDirEntrySize));
        const std::uint32_t old_end = c.end;
        std::copy(bytes.begin(), bytes.end(), c.bytes.begin() + std::ptrdiff_t(first) * kDirEntrySize);
        c.end = std::min(c.end, first);
        while (c.end < c.total() && c.type(c.end) != kEntryEndOfDirectory) ++c.end;
        // The unused entries: those written, those the end moved over, none at or past the end.
        c.unused.erase(c.unused.lower_bound(first), c.unused.lower_bound(first + n));
        c.unused.erase(c.unused.lower_bound(c.end), c.unused.end());
        for (std::uint32_t i = first; i < first + n && i < c.end; ++i)
            if (!in_use(c.type(i))) c.unused.insert(i);
        for (std::uint32_t i = std::max(old_end, first + n); i < c.end; ++i)
            if (!in_use(c.type(i))) c.unused.insert(i);
        vol.reset();
    }
    std::vector<std::byte> set_bytes(DirId d, const FileRecord& r) {
        const CachedDir& c = dir(d);
        const auto b = c.bytes.begin() + std::ptrdiff_t(r.index) * kDirEntrySize;
        return {b, b + std::ptrdiff_t(r.entries) * kDirEntrySize};
    }
    static void seal(std::span<std::byte> set) {
        core::store_le16(set, file_off::SetChecksum, entry_set_checksum(set));
    }
    /// Rewrites record r's set after `change` (SetChecksum recomputed).
    template <typename Change>
    void patch_set(DirId d, const FileRecord& r, Change&& change) {
        std::vector<std::byte> set = set_bytes(d, r);
        change(std::span<std::byte>(set));
        seal(set);
        write_dir(d, r.index, set);
    }
    /// Marks a set's entries unused (InUse cleared), the File entry first.
    void delete_entries(DirId d, const FileRecord& r) {
        std::vector<std::byte> set = set_bytes(d, r);
        for (std::size_t i = 0; i < set.size(); i += kDirEntrySize) set[i] &= std::byte{0x7F};
        write_dir(d, r.index, set, true);
        dir(d).indexed = false;
        touched.insert(d);
    }

    /// Adds `more` zeroed clusters to directory d (see the header, step 7).
    void grow(DirId d, std::uint32_t more) {
        CachedDir& c = dir(d);
        const std::uint32_t tail = c.clusters.back();
        const auto runs = find_free(more, tail + 1);
        for (const auto& r : runs) dev.zero_range(vol_offset(r.first), std::uint64_t(r.count) * cb);
        std::vector<ClusterRun> added = runs;
        if (d == kRootDir) {
            write_chain(runs);
            mark(runs, true);
            fat->set_le32(std::uint64_t(tail) * kFatEntrySize, runs.front().first);
            flush_fat();
        } else {
            Where& w = where.at(d);
            // One run right after the last cluster of a directory whose clusters are one run: it
            // stays (or, FAT-chained, becomes) NoFatChain, and the parent's set is the one write
            // that makes the new cluster part of it. Otherwise it is (or becomes) FAT-chained.
            bool one_run = true;
            for (std::size_t k = 1; k < c.clusters.size() && one_run; ++k)
                one_run = c.clusters[k] == c.clusters[k - 1] + 1;
            const bool contiguous = one_run && runs.size() == 1 && runs.front().first == tail + 1;
            if (!contiguous) {
                if (w.no_fat_chain) {  // the whole chain, old clusters first: readers do not look at it yet
                    std::vector<ClusterRun> all{
                        ClusterRun{c.clusters.front(), static_cast<std::uint32_t>(c.clusters.size())}};
                    all.insert(all.end(), runs.begin(), runs.end());
                    write_chain(all);
                } else {
                    write_chain(runs);
                }
            }
            mark(runs, true);
            if (!contiguous && !w.no_fat_chain) {
                fat->set_le32(std::uint64_t(tail) * kFatEntrySize, runs.front().first);
                flush_fat();
            }
            const std::uint64_t length = std::uint64_t(c.clusters.size() + more) * cb;
            const FileRecord self = record_at(w.parent, w.index);
            patch_set(w.parent, self, [&](std::span<std::byte> set) {
                auto stream = set.subspan(kDirEntrySize).first<kDirEntrySize>();
                core::store64<stream_off::DataLength>(stream, length);
                core::store64<stream_off::ValidDataLength>(stream, length);
                const auto flags = std::to_integer<std::uint8_t>(stream[stream_off::GeneralSecondaryFlags]);
                core::store8<stream_off::GeneralSecondaryFlags>(
                    stream, static_cast<std::uint8_t>(contiguous ? flags | kSecondaryNoFatChain
                                                                 : flags & ~kSecondaryNoFatChain));
            });
            w.data_length = length;
            w.no_fat_chain = contiguous;
        }
        CachedDir& again = dir(d);
        for (const auto& r : added)
            for (std::uint32_t i = 0; i < r.count; ++i) again.clusters.push_back(r.first + i);
        again.bytes.resize(again.clusters.size() * cb, std::byte{0});
    }
    /// Where `need` new entries go in d: a run of unused entries before the
    /// end that lies in consecutive bytes, else at the end. A set that would
    /// cross from there into a non-adjacent cluster starts at the next
    /// cluster instead, the entries before it written first as unused
    /// (0x05, a File entry with InUse clear [EXFAT §6.2.1.4]), so that the
    /// set itself is one write (unless it is longer than a cluster: 512-byte
    /// clusters and names over 210 units; then it is written at the end,
    /// its later part first). d is grown when the entries after the end are
    /// too few; an entry after the new set that is not an end-of-directory
    /// entry is zeroed first. Returns the first index.
    /// Where make_room puts `need` entries, decided without writing: a run
    /// of unused entries before the end (`reuse`), else after `pad` unused
    /// ones at the end, with `grow` clusters added. Throws Error(io) when the
    /// directory cannot take them (256 MiB of entries).
    struct Room {
        std::uint32_t at = 0;
        std::uint32_t pad = 0;
        std::uint32_t grow = 0;
        bool reuse = false;
    };
    Room plan_room(DirId d, std::uint32_t need) {
        const std::uint32_t per = cb / kDirEntrySize;
        CachedDir& c = dir(d);
        for (auto it = c.unused.begin(); it != c.unused.end();) {  // runs of unused entries before the end
            const std::uint32_t i = *it;
            std::uint32_t j = i;
            while (it != c.unused.end() && *it == j) {
                ++j;
                ++it;
            }
            for (std::uint32_t s = i; s + need <= j; ++s)
                if (consecutive(c, s, need)) return {s, 0, 0, true};
        }
        Room r;
        // Crossing a cluster boundary: the next cluster, when the set fits in one.
        if (need <= per && c.end % per + need > per) r.pad = per - c.end % per;
        if (c.total() - c.end < r.pad + need) {
            r.grow = (r.pad + need - (c.total() - c.end) + per - 1) / per;
            if ((std::uint64_t(c.clusters.size()) + r.grow) * cb > kMaxDirectoryBytes)
                throw Error(ErrorCode::io,
                            "no space left in the directory: an exFAT directory holds at "
                            "most 256 MiB of entries");
        }
        return r;
    }
    /// The clusters a change needs, found before its first write: `data`
    /// clusters for a file and the growth of directory d for `entries` new
    /// entries. Throws Error(io) (nothing written) when the volume or the
    /// directory has no room.
    void plan_space(DirId d, std::uint64_t data, std::uint32_t entries) {
        const Room r = plan_room(d, entries);
        if (data + r.grow != 0) (void)find_free(data + r.grow, hint);
    }
    std::uint32_t make_room(DirId d, std::uint32_t need) {
        const Room r = plan_room(d, need);
        if (r.reuse) return r.at;
        std::uint32_t pad = r.pad;
        if (r.grow != 0) grow(d, r.grow);
        CachedDir& c = dir(d);
        if (pad != 0 && consecutive(c, c.end, pad + need)) pad = 0;  // the new cluster is the next one
        const std::uint32_t at = c.end + pad;
        if (at + need < c.total() && c.type(at + need) != kEntryEndOfDirectory) {
            const std::array<std::byte, kDirEntrySize> zero{};
            write_dir(d, at + need, zero);
        }
        if (pad != 0) {
            std::vector<std::byte> unused(std::size_t(pad) * kDirEntrySize);
            for (std::size_t i = 0; i < unused.size(); i += kDirEntrySize)
                unused[i] = std::byte{kEntryFile & ~kEntryInUse};
            write_dir(d, c.end, unused);
        }
        return at;
    }
    /// Writes whole entries where make_room puts them; returns the first index.
    std::uint32_t add_raw(DirId d, std::span<const std::byte> entries) {
        const std::uint32_t at = make_room(d, static_cast<std::uint32_t>(entries.size() / kDirEntrySize));
        write_dir(d, at, entries);
        return at;
    }
    FileRecord add_entries(DirId d, std::span<const std::byte> set) {
        const auto need = static_cast<std::uint32_t>(set.size() / kDirEntrySize);
        const std::uint32_t at = add_raw(d, set);
        const FileRecord r = record_of(d, at, need);
        CachedDir& c = dir(d);
        if (c.indexed) c.names.try_emplace(key_of(r.name16), r.index, r.entries);
        touched.insert(d);
        return r;
    }
    /// A rename inside d as ONE write (the FAT editor's rename_in_one_write):
    /// the old set marked unused and the new one written within one span of
    /// consecutive bytes. False when there is no such span.
    bool rename_in_one_write(DirId d, const FileRecord& r, std::span<const std::byte> set) {
        CachedDir& c = dir(d);
        std::vector<std::byte> bytes = c.bytes;
        for (std::uint32_t i = r.index; i < r.index + r.entries; ++i)
            bytes[std::size_t(i) * kDirEntrySize] &= std::byte{0x7F};
        const auto span = core::place_in_one_span(
            bytes, c.end, r.index, r.index + r.entries, set, [](std::uint8_t b) { return !in_use(b); },
            [&](std::uint32_t lo, std::uint32_t n) { return consecutive(c, lo, n); });
        if (!span) return false;
        write_dir(
            d, span->lo,
            std::span<const std::byte>(bytes).subspan(std::size_t(span->lo) * kDirEntrySize,
                                                      std::size_t(span->hi - span->lo) * kDirEntrySize));
        c.indexed = false;
        touched.insert(d);
        if (r.is_directory() && r.first_cluster != 0) where[r.first_cluster].index = span->at;
        return true;
    }

    /// The entry set for `name` with the fields of `info` (the name checked, NameHash from the volume's
    /// table).
    std::vector<std::byte> new_set(DirId d, std::string_view name, FileEntrySetInfo info,
                                   const FileRecord* self) {
        if (auto why = utf8_name_problem(name))
            throw Error(ErrorCode::usage, fmt::format("\"{}\": {}", name, *why));
        const std::u16string name16 = core::utf8_to_utf16(name);
        CachedDir& c = indexed(d);
        if (const auto it = c.names.find(key_of(name16));
            it != c.names.end() && !(self && it->second.first == self->index)) {
            const FileRecord other = record_of(d, it->second.first, it->second.second);
            throw Error(ErrorCode::usage, fmt::format("\"{}\" already exists (as \"{}\")", name, other.name));
        }
        info.name = name16;
        info.upcase = upcase;
        return encode_file_entry_set(info);
    }
    /// The fields of an existing record, for its set rebuilt under another name.
    static FileEntrySetInfo info_of(const FileRecord& r) {
        FileEntrySetInfo i;
        i.attributes = r.attributes;
        i.created = r.created;
        i.modified = r.modified;
        i.accessed = r.accessed;
        i.secondary_flags = r.secondary_flags;
        i.first_cluster = r.first_cluster;
        i.valid_data_length = r.valid_data_length;
        i.data_length = r.data_length;
        return i;
    }
    /// A renamed set: the new name's set with r's benign secondaries (vendor entries) appended.
    std::vector<std::byte> renamed_set(DirId to, const FileRecord& r, std::string_view name, DirId from) {
        std::vector<std::byte> set = new_set(to, name, info_of(r), from == to ? &r : nullptr);
        if (r.benign.empty()) return set;
        const std::vector<std::byte> old = set_bytes(from, r);
        for (const BenignSecondary& b : r.benign) {
            const auto at = old.begin() + std::ptrdiff_t(b.index - r.index) * kDirEntrySize;
            set.insert(set.end(), at, at + kDirEntrySize);
        }
        const std::size_t secondaries = set.size() / kDirEntrySize - 1;
        if (secondaries > 255)
            throw Error(ErrorCode::usage, "the renamed entry set would pass 255 secondary entries");
        set[file_off::SecondaryCount] = static_cast<std::byte>(secondaries);
        seal(set);
        return set;
    }
    FileEntrySetInfo stamped(const NewEntryInfo& info, std::uint16_t attributes) const {
        FileEntrySetInfo e;
        e.attributes = attributes;
        stamper.apply(e, info.mtime.value_or(opt.now), info.mtime ? info.mtime_ns : 0,
                      info.btime.value_or(opt.now), info.btime ? info.btime_ns : 0);
        return e;
    }

    /// Allocates and writes a file's data (data, FAT chain when fragmented, bitmap).
    struct Alloc {
        std::vector<ClusterRun> runs;
        std::uint8_t flags = kSecondaryAllocationPossible;
        std::uint32_t first() const { return runs.empty() ? 0 : runs.front().first; }
    };
    Alloc store_data(const source::SourceFile& data) {
        Alloc a;
        const std::uint64_t n = core::div_ceil(data.size(), std::uint64_t{cb});
        if (n == 0) {
            data.finish();
            return a;
        }
        a.runs = find_free(n, hint);
        std::vector<source::DeviceExtent> extents;
        for (const auto& r : a.runs) extents.push_back({vol_offset(r.first), std::uint64_t(r.count) * cb});
        source::write_into_extents(data, extents, dev);
        if (a.runs.size() > 1) {
            write_chain(a.runs);
        } else {
            a.flags |= kSecondaryNoFatChain;
        }
        mark(a.runs, true);
        return a;
    }
    void unstore(const Alloc& a) { free_runs({{a.runs, a.runs.size() > 1}}); }

    /// Every allocation of record r (and, for a directory, of everything
    /// below it; each directory once), read before anything is written.
    void collect(const FileRecord& r, std::vector<std::pair<std::vector<ClusterRun>, bool>>& out,
                 std::unordered_set<std::uint32_t>& dirs_seen) {
        const std::string what = fmt::format("\"{}\"", r.name);
        out.emplace_back(runs_of(r.first_cluster, core::div_ceil(r.data_length, std::uint64_t{cb}),
                                 r.no_fat_chain(), what),
                         !r.no_fat_chain());
        for (const BenignSecondary& b : r.benign)
            if ((b.flags & kSecondaryAllocationPossible) && b.first_cluster != 0)
                out.emplace_back(runs_of(b.first_cluster, core::div_ceil(b.data_length, std::uint64_t{cb}),
                                         (b.flags & kSecondaryNoFatChain) != 0, what),
                                 (b.flags & kSecondaryNoFatChain) == 0);
        if (!r.is_directory() || r.first_cluster == 0 || !dirs_seen.insert(r.first_cluster).second) return;
        if (dirs_seen.size() > (1u << 22))
            throw Error(ErrorCode::corrupt, "too many directories below; run fsimg fsck");
        for (const FileRecord& child : volume().read_directory(r).files) collect(child, out, dirs_seen);
    }

    /// LastModified of each changed subdirectory, in its parent's set.
    void touch_changed() {
        const EntryTimestamp t = stamper.stamp(opt.now, 0);
        for (const DirId d : touched) {
            const auto w = where.find(d);
            if (d == kRootDir || w == where.end() || dirs.count(w->second.parent) == 0) continue;
            const FileRecord r = record_at(w->second.parent, w->second.index);
            if (r.first_cluster != d ||
                (r.modified.timestamp == t.timestamp && r.modified.increment_10ms == t.increment_10ms))
                continue;
            patch_set(w->second.parent, r, [&](std::span<std::byte> set) {
                auto f = set.first<kDirEntrySize>();
                core::store32<file_off::LastModifiedTimestamp>(f, t.timestamp);
                core::store8<file_off::LastModified10msIncrement>(f, t.increment_10ms);
                core::store8<file_off::LastModifiedUtcOffset>(f, t.utc_offset);
                core::store32<file_off::LastAccessedTimestamp>(f, t.timestamp);
                core::store8<file_off::LastAccessedUtcOffset>(f, t.utc_offset);
            });
        }
        touched.clear();
    }
};

}  // namespace fsimg::exfat
