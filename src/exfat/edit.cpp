// exfat/edit.hpp: changing an existing exFAT volume, every write ordered so
// that a cut after it leaves the volume consistent (see the header).
#include "fsimg/exfat/edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/cluster_runs.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/io/byte_cache.hpp"
#include "stamp.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::size_t kFatWindow = 65536;
constexpr std::size_t kMaxWindows = 64;                  // 4 MiB of FAT, as much of the bitmap
constexpr std::uint64_t kMaxCountedBitmap = 8ull << 20;  // PercentInUse recounted up to this bitmap size

bool in_use(std::uint8_t type) noexcept { return (type & kEntryInUse) != 0; }

}  // namespace

struct Editor::Impl {
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
        std::copy(bytes.begin(), bytes.end(), c.bytes.begin() + std::ptrdiff_t(first) * kDirEntrySize);
        c.end = std::min(c.end, first);
        while (c.end < c.total() && c.type(c.end) != kEntryEndOfDirectory) ++c.end;
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
    std::uint32_t make_room(DirId d, std::uint32_t need) {
        const std::uint32_t per = cb / kDirEntrySize;
        std::uint32_t pad = 0;
        {
            CachedDir& c = dir(d);
            for (std::uint32_t i = 0; i < c.end;) {
                if (in_use(c.type(i))) {
                    ++i;
                    continue;
                }
                std::uint32_t j = i;
                while (j < c.end && !in_use(c.type(j))) ++j;
                for (std::uint32_t s = i; s + need <= j; ++s)
                    if (consecutive(c, s, need)) return s;
                i = j;
            }
            // Crossing a cluster boundary: the next cluster, when the set fits in one.
            if (need <= per && c.end % per + need > per) pad = per - c.end % per;
            if (c.total() - c.end < pad + need) {
                const std::uint32_t more = (pad + need - (c.total() - c.end) + per - 1) / per;
                if ((std::uint64_t(c.clusters.size()) + more) * cb > kMaxDirectoryBytes)
                    throw Error(ErrorCode::io,
                                "no space left in the directory: an exFAT directory holds at "
                                "most 256 MiB of entries");
                grow(d, more);
            }
        }
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
        const std::uint32_t total = c.total(), end = c.end;
        auto type = [&](std::uint32_t i) {
            return std::to_integer<std::uint8_t>(bytes[std::size_t(i) * kDirEntrySize]);
        };
        for (std::uint32_t i = r.index; i < r.index + r.entries; ++i)
            bytes[std::size_t(i) * kDirEntrySize] &= std::byte{0x7F};
        const auto need = static_cast<std::uint32_t>(set.size() / kDirEntrySize);
        for (std::uint32_t s = 0; s <= end && s + need <= total; ++s) {
            bool free = true;
            for (std::uint32_t k = s; k < s + need && free; ++k) free = k >= end || !in_use(type(k));
            if (!free) continue;
            const bool terminator = s + need > end && s + need < total && type(s + need) != 0;
            const std::uint32_t lo = std::min(s, r.index);
            const std::uint32_t hi = std::max(s + need + (terminator ? 1u : 0u), r.index + r.entries);
            if (!consecutive(c, lo, hi - lo)) continue;
            std::copy(set.begin(), set.end(), bytes.begin() + std::ptrdiff_t(s) * kDirEntrySize);
            if (terminator)
                std::fill_n(bytes.begin() + std::ptrdiff_t(s + need) * kDirEntrySize, kDirEntrySize,
                            std::byte{0});
            write_dir(d, lo,
                      std::span<const std::byte>(bytes).subspan(std::size_t(lo) * kDirEntrySize,
                                                                std::size_t(hi - lo) * kDirEntrySize));
            c.indexed = false;
            touched.insert(d);
            if (r.is_directory() && r.first_cluster != 0) where[r.first_cluster].index = s;
            return true;
        }
        return false;
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

Editor::Editor(io::BlockDevice& device, EditOptions options)
    : impl_(std::make_unique<Impl>(device, std::move(options))) {}
Editor::~Editor() = default;

const Volume& Editor::volume() const { return impl_->volume(); }
std::uint32_t Editor::cluster_bytes() const noexcept { return impl_->cb; }
std::uint64_t Editor::allocated_clusters() const noexcept { return impl_->allocated; }
std::uint64_t Editor::freed_clusters() const noexcept { return impl_->freed; }

std::optional<FileRecord> Editor::lookup(std::string_view path) const {
    FileRecord cur = volume().root_record();
    DirId d = kRootDir;
    std::string walked;
    for (const std::string_view comp : core::path_components(path)) {
        if (!cur.is_directory())
            throw Error(ErrorCode::usage, fmt::format("path \"{}\": \"{}\" is a file, not a directory", path,
                                                      walked.empty() ? "/" : walked));
        if (!cur.is_root) d = directory_of(cur);
        if (!core::is_valid_utf8(comp))
            throw Error(ErrorCode::usage, fmt::format("path \"{}\" is not valid UTF-8", path));
        auto next = impl_->find_in(d, core::utf8_to_utf16(comp));
        if (!next) return std::nullopt;
        cur = std::move(*next);
        walked += "/" + cur.name;
    }
    return cur;
}

DirId Editor::directory_of(const FileRecord& dir) const {
    if (dir.is_root) return kRootDir;
    if (!dir.is_directory())
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a directory", dir.name));
    if (!impl_->is_cluster(dir.first_cluster) || dir.first_cluster == impl_->root)
        throw Error(ErrorCode::corrupt,
                    fmt::format("directory \"{}\" has no valid first cluster ({}); run fsimg fsck", dir.name,
                                dir.first_cluster));
    return dir.first_cluster;
}

std::vector<FileRecord> Editor::list(DirId dir) const {
    const auto& c = impl_->dir(dir);
    auto files =
        parse_directory(std::span(c.bytes).first(std::size_t(c.end) * kDirEntrySize), impl_->upcase).files;
    for (const FileRecord& r : files) impl_->reached(dir, r);
    return files;
}

std::optional<FileRecord> Editor::find(DirId dir, std::string_view name) const {
    if (!core::is_valid_utf8(name)) return std::nullopt;
    return impl_->find_in(dir, core::utf8_to_utf16(name));
}

std::optional<std::string> Editor::name_problem(std::string_view name) { return utf8_name_problem(name); }

FileRecord Editor::add_file(DirId dir, std::string_view name, const source::SourceFile& data,
                            const NewEntryInfo& info) {
    Impl& m = *impl_;
    FileEntrySetInfo e = m.stamped(info, static_cast<std::uint16_t>(info.attributes & ~kFileAttrDirectory));
    (void)m.new_set(dir, name, e, nullptr);  // name checks before anything is written
    m.begin();
    const Impl::Alloc a = m.store_data(data);
    e.first_cluster = a.first();
    e.secondary_flags = a.flags;
    e.data_length = e.valid_data_length = data.size();
    try {
        return m.add_entries(dir, m.new_set(dir, name, e, nullptr));
    } catch (...) {
        m.unstore(a);  // the directory could not take the set: its clusters are not left marked
        throw;
    }
}

void Editor::replace_file(DirId dir, const FileRecord& existing, const source::SourceFile& data,
                          const NewEntryInfo& info) {
    Impl& m = *impl_;
    if (existing.is_directory())
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a file", existing.name));
    std::vector<std::pair<std::vector<ClusterRun>, bool>> old;
    old.emplace_back(
        m.runs_of(existing.first_cluster, core::div_ceil(existing.data_length, std::uint64_t{m.cb}),
                  existing.no_fat_chain(), fmt::format("\"{}\"", existing.name)),
        !existing.no_fat_chain());
    m.begin();
    const Impl::Alloc a = m.store_data(data);
    const FileEntrySetInfo t = m.stamped(info, existing.attributes);
    m.patch_set(dir, existing, [&](std::span<std::byte> set) {
        auto f = set.first<kDirEntrySize>();
        core::store16<file_off::FileAttributes>(
            f, static_cast<std::uint16_t>(existing.attributes | kFileAttrArchive));
        core::store32<file_off::LastModifiedTimestamp>(f, t.modified.timestamp);
        core::store8<file_off::LastModified10msIncrement>(f, t.modified.increment_10ms);
        core::store8<file_off::LastModifiedUtcOffset>(f, t.modified.utc_offset);
        core::store32<file_off::LastAccessedTimestamp>(f, t.accessed.timestamp);
        core::store8<file_off::LastAccessedUtcOffset>(f, t.accessed.utc_offset);
        auto s = set.subspan(kDirEntrySize).first<kDirEntrySize>();
        core::store8<stream_off::GeneralSecondaryFlags>(s, a.flags);
        core::store32<stream_off::FirstCluster>(s, a.first());
        core::store64<stream_off::DataLength>(s, data.size());
        core::store64<stream_off::ValidDataLength>(s, data.size());
    });
    m.free_runs(old);
    m.touched.insert(dir);
}

FileRecord Editor::add_directory(DirId dir, std::string_view name, const NewEntryInfo& info) {
    Impl& m = *impl_;
    FileEntrySetInfo e = m.stamped(
        info, static_cast<std::uint16_t>((info.attributes & kSettableAttributes & ~kFileAttrArchive) |
                                         kFileAttrDirectory));
    (void)m.new_set(dir, name, e, nullptr);
    m.begin();
    const auto runs = m.find_free(1, m.hint);
    m.dev.zero_range(m.vol_offset(runs.front().first),
                     m.cb);  // an empty directory: all end-of-directory entries
    m.mark(runs, true);
    e.first_cluster = runs.front().first;
    e.secondary_flags = kSecondaryAllocationPossible | kSecondaryNoFatChain;
    e.data_length = e.valid_data_length = m.cb;
    try {
        return m.add_entries(dir, m.new_set(dir, name, e, nullptr));
    } catch (...) {
        m.free_runs({{runs, false}});
        throw;
    }
}

void Editor::remove(DirId dir, const FileRecord& r) {
    Impl& m = *impl_;
    if (r.is_root) throw Error(ErrorCode::usage, "the root directory cannot be removed");
    std::vector<std::pair<std::vector<ClusterRun>, bool>> allocs;
    std::unordered_set<std::uint32_t> seen;
    m.collect(r, allocs, seen);  // before any write: a broken subtree refuses
    // A directory below that is the one holding the set or one of its
    // ancestors (a loop in a damaged image) would free directories outside.
    std::unordered_set<DirId> up;
    for (DirId d = dir; d != kRootDir && up.insert(d).second;) {
        if (seen.count(d) != 0)
            throw Error(ErrorCode::corrupt,
                        fmt::format("\"{}\" holds a directory leading back to a directory above it (a loop); "
                                    "nothing was removed: run fsimg fsck",
                                    r.name));
        const auto w = m.where.find(d);
        d = w == m.where.end() ? kRootDir : w->second.parent;
    }
    m.begin();
    m.delete_entries(dir, r);
    m.free_runs(allocs);
    for (const std::uint32_t c : seen) {  // freed directories are no longer cached or touched
        m.dirs.erase(c);
        m.where.erase(c);
        m.touched.erase(c);
    }
}

void Editor::rename(DirId from, const FileRecord& r, DirId to, std::string_view new_name, bool replace) {
    Impl& m = *impl_;
    if (r.is_root) throw Error(ErrorCode::usage, "the root directory cannot be renamed");
    const bool is_dir = r.is_directory();
    if (is_dir) {  // not into itself or below itself
        std::unordered_set<DirId> seen;
        for (DirId d = to; d != kRootDir && seen.insert(d).second;) {
            if (d == r.first_cluster)
                throw Error(ErrorCode::usage, fmt::format("cannot move \"{}\" into itself", r.name));
            const auto w = m.where.find(d);
            d = w == m.where.end() ? kRootDir : w->second.parent;
        }
    }
    std::optional<FileRecord> target = find(to, new_name);
    if (target && from == to && target->index == r.index) target.reset();  // a case-only rename
    if (target) {
        if (!replace) throw Error(ErrorCode::usage, fmt::format("\"{}\" already exists", target->name));
        if (target->is_directory())
            throw Error(ErrorCode::usage,
                        fmt::format("\"{}\" exists and is a directory; it is not replaced", target->name));
        if (is_dir)
            throw Error(ErrorCode::usage,
                        fmt::format("\"{}\" is a directory; it does not replace the file \"{}\"", r.name,
                                    target->name));
        std::vector<std::pair<std::vector<ClusterRun>, bool>> old;
        std::unordered_set<std::uint32_t> none;
        m.collect(*target, old, none);
        // The target's set takes the source's data, then the source goes, then the old data.
        m.begin();
        m.patch_set(to, *target, [&](std::span<std::byte> set) {
            auto f = set.first<kDirEntrySize>();
            core::store16<file_off::FileAttributes>(f, r.attributes);
            core::store32<file_off::LastModifiedTimestamp>(f, r.modified.timestamp);
            core::store8<file_off::LastModified10msIncrement>(f, r.modified.increment_10ms);
            core::store8<file_off::LastModifiedUtcOffset>(f, r.modified.utc_offset);
            auto s = set.subspan(kDirEntrySize).first<kDirEntrySize>();
            core::store8<stream_off::GeneralSecondaryFlags>(s, r.secondary_flags);
            core::store32<stream_off::FirstCluster>(s, r.first_cluster);
            core::store64<stream_off::DataLength>(s, r.data_length);
            core::store64<stream_off::ValidDataLength>(s, r.valid_data_length);
        });
        m.delete_entries(from, m.record_of(from, r.index, r.entries));
        m.free_runs(old);
        m.touched.insert(to);
        return;
    }
    const std::vector<std::byte> set = m.renamed_set(to, r, new_name, from);
    m.begin();
    if (from == to && m.rename_in_one_write(from, r, set)) return;
    const FileRecord made = m.add_entries(to, set);
    m.delete_entries(from, m.record_of(from, r.index, r.entries));
    if (is_dir && r.first_cluster != 0) m.reached(to, made);
}

void Editor::set_attributes(DirId dir, const FileRecord& r, std::uint16_t set, std::uint16_t clear) {
    Impl& m = *impl_;
    if (r.is_root) throw Error(ErrorCode::usage, "the root directory has no attributes to change");
    const auto attr = static_cast<std::uint16_t>((r.attributes | (set & kSettableAttributes)) &
                                                 ~(clear & kSettableAttributes));
    if (attr == r.attributes) return;
    m.begin();
    m.patch_set(dir, r, [&](std::span<std::byte> s) {
        core::store16<file_off::FileAttributes>(s.first<kDirEntrySize>(), attr);
    });
}

std::string Editor::label() const {
    const auto& c = impl_->dir(kRootDir);
    for (std::uint32_t i = 0; i < c.end; ++i)
        if (c.type(i) == kEntryVolumeLabel)
            return label_text(decode_volume_label_entry(std::span<const std::byte>(c.bytes)
                                                            .subspan(std::size_t(i) * kDirEntrySize)
                                                            .first<kDirEntrySize>()));
    return {};
}

void Editor::set_label(std::string_view label) {
    Impl& m = *impl_;
    const VolumeLabelEntry e = volume_label_entry_from_utf8(label);  // throws Error(usage)
    std::array<std::byte, kDirEntrySize> b{};
    encode_volume_label_entry(e, b);
    const auto& c = m.dir(kRootDir);
    for (std::uint32_t i = 0; i < c.end; ++i) {
        if (c.type(i) != kEntryVolumeLabel) continue;
        m.begin();
        m.write_dir(kRootDir, i, b);
        return;
    }
    if (label.empty()) return;
    m.begin();
    (void)m.add_raw(kRootDir, b);
}

std::uint32_t Editor::volume_id() const noexcept { return impl_->boot.volume_serial_number; }

void Editor::set_volume_id(std::uint32_t id) {
    Impl& m = *impl_;
    m.begin();
    for (const std::uint64_t first : {std::uint64_t{kBackupBootRegionSector}, std::uint64_t{0}}) {
        std::vector<std::byte> region(std::size_t{kBootRegionSectors} * m.bps);
        m.dev.read_at(first * m.bps, region);
        core::store_le32(region, off::VolumeSerialNumber, id);
        encode_checksum_sector(boot_checksum(std::span(region).first(std::size_t{kChecksumSector} * m.bps)),
                               std::span(region).subspan(std::size_t{kChecksumSector} * m.bps, m.bps));
        m.dev.write_at(first * m.bps, region);
    }
    m.boot.volume_serial_number = id;
    m.vol.reset();
}

void Editor::finish() {
    Impl& m = *impl_;
    if (!m.began) return;
    m.touch_changed();
    m.flush_fat();
    m.flush_bitmap();
    std::uint8_t percent = kPercentInUseUnknown;
    if (m.bitmap->length() <= kMaxCountedBitmap && m.count != 0)
        percent = static_cast<std::uint8_t>(m.volume().used_clusters() * 100 / m.count);
    if (percent != m.boot.percent_in_use) {
        const std::array<std::byte, 1> b{std::byte{percent}};
        m.dev.write_at(off::PercentInUse, b);
        m.boot.percent_in_use = percent;
        m.vol.reset();
    }
    if (m.opt.barrier) m.opt.barrier();  // the change is durable before the flag that closes it
    if (m.was_clean) m.write_flags(static_cast<std::uint16_t>(m.boot.volume_flags & ~kVolumeFlagVolumeDirty));
    m.began = false;
    m.was_clean = false;
    m.allocated = m.freed = 0;
}

}  // namespace fsimg::exfat
