// Pass 3: the directory tree. Every directory from the root: its entry sets
// (structure, SetChecksum, NameHash, names, duplicates after up-casing), its
// stream extensions, system entries where they belong, loops; every
// allocation claimed for its owner (check.cpp `claim`).
#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "check_internal.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/core/windows_names.hpp"
#include "fsimg/exfat/cost.hpp"

namespace fsimg::exfat::detail {

namespace {

constexpr unsigned kMaxDepth = Volume::kMaxDepth;

/// The code of each SetAnomaly::Kind, in enum order.
constexpr std::string_view kAnomalyCodes[] = {
    "exfat.set.secondary-count",   // truncated: SecondaryCount reaches past the end
    "exfat.set.secondary-count",   // secondary_count: below 2
    "exfat.set.no-stream",         // no_stream
    "exfat.set.name-length",       // name_length
    "exfat.set.secondary-count",   // not_secondary: SecondaryCount claims a non-secondary
    "exfat.set.orphan-secondary",  // orphan_secondary
    "exfat.set.unknown-critical",  // unknown_critical
};
constexpr std::size_t kAnomalyKinds = std::size(kAnomalyCodes);

struct SubDir {
    std::string path;
    std::uint32_t first_cluster = 0;
    std::vector<ClusterRun> runs;
    std::uint64_t bytes = 0;
    bool chain_broken = false;  ///< the root's chain breaks: its end is where the break is
};

/// The units below U+0080 a File Name entry may not hold [EXFAT §7.7.3]:
/// U+0000..U+001F and " * / : < > ? \ |.
constexpr std::array<bool, 0x80> kForbiddenUnits = [] {
    std::array<bool, 0x80> t{};
    for (char16_t c = 0; c < 0x80; ++c) t[c] = core::is_windows_forbidden(c);
    return t;
}();

/// A name a File Name entry may not hold [EXFAT §7.7.3]: empty, "." or
/// "..", or a unit of kForbiddenUnits. Returns the reason, or "" when valid.
std::string name_problem(std::u16string_view n) {
    if (n == u"." || n == u"..") return "\".\" and \"..\" may not be stored as names";
    for (const char16_t ch : n) {
        if (ch < kForbiddenUnits.size() && kForbiddenUnits[ch]) {
            return fmt::format("the name holds U+{:04X}, which names may not hold", unsigned(ch));
        }
    }
    return {};
}

/// For each record, whether an earlier record of the directory has the same
/// name after up-casing through `upcase` [EXFAT §7.7.3]: the second and later
/// of each name. An open-addressing table of record indexes, hashed on the
/// up-cased units: no allocation per name (a node-based set of up-cased
/// copies was the check's hot spot on large directories).
std::vector<bool> duplicate_names(const std::vector<FileRecord>& files, std::span<const char16_t> upcase) {
    const auto up = [&](char16_t c) { return c < upcase.size() ? upcase[c] : c; };
    std::size_t cap = 16;
    while (cap < 2 * files.size()) cap *= 2;
    std::vector<std::uint32_t> slot(cap, 0);  // record index + 1; 0 = empty
    std::vector<bool> dup(files.size(), false);
    for (std::size_t i = 0; i < files.size(); ++i) {
        const std::u16string& n = files[i].name16;
        std::uint32_t h = 2166136261u;  // FNV-1a over the up-cased units
        for (const char16_t c : n) h = (h ^ up(c)) * 16777619u;
        for (std::size_t s = h & (cap - 1);; s = (s + 1) & (cap - 1)) {
            if (slot[s] == 0) {
                slot[s] = static_cast<std::uint32_t>(i + 1);
                break;
            }
            const std::u16string& o = files[slot[s] - 1].name16;
            if (o.size() == n.size() && std::equal(o.begin(), o.end(), n.begin(),
                                                   [&](char16_t a, char16_t b) { return up(a) == up(b); })) {
                dup[i] = true;
                break;
            }
        }
    }
    return dup;
}

class Walker {
public:
    explicit Walker(Context& c) : c_(c), v_(*c.vol), quiet_(c.resolving) {}

    void run() {
        const std::uint32_t root = v_.root_cluster();
        Claim cl = claim(c_, "/", root, 0, false, false);
        std::uint64_t bytes = std::min<std::uint64_t>(cl.clusters * v_.cluster_bytes(), kMaxDirectoryBytes);
        if (!quiet_) {
            ++c_.summary.directories;
            if (c_.options.on_walk) c_.options.on_walk("/");
            if (cl.clusters * v_.cluster_bytes() > kMaxDirectoryBytes) {
                c_.out.add("exfat.dir.too-large", at_cluster(c_, root, "/"),
                           fmt::format("the root directory's FAT chain holds {}, more than the 256 MiB a "
                                       "directory may hold; the rest is not read",
                                       clusters_text(c_, cl.clusters)));
            }
        }
        if (c_.options.chain_fixes && !quiet_ && !cl.runs.empty()) {
            // The root has no entry set: its chain is only ended, where its link is wrong.
            ChainFix f;
            f.path = "/";
            f.code = cl.code;
            const ClusterRun& tail = cl.runs.back();
            if (cl.code == "exfat.chain.out-of-range" || cl.code == "exfat.chain.bad-cluster" ||
                cl.code == "exfat.chain.loop")
                f.end_at = tail.first + tail.count - 1;
            else if (cl.code == "exfat.chain.cross-link" && cl.shared_at != 0)
                f.end_at = nth_cluster(cl.runs, cl.shared_at - 1);
            if (f.end_at != 0) c_.options.chain_fixes->push_back(std::move(f));
        }
        std::vector<std::uint32_t> ancestors;
        walked_.enter(root, "/");
        walk(SubDir{"/", root, std::move(cl.runs), bytes, cl.broken}, true, ancestors, 0);
    }

private:
    core::VisitedDirectories walked_;  ///< every directory walked, by first cluster

    check::Location entry_at(const SubDir& d, std::uint32_t index, std::string object) const {
        check::Location l;
        l.object = std::move(object);
        std::uint64_t b = std::uint64_t(index) * kDirEntrySize;
        for (const auto& r : d.runs) {
            const std::uint64_t n = std::uint64_t(r.count) * v_.cluster_bytes();
            if (b < n) {
                l.cluster = r.first + static_cast<std::uint32_t>(b / v_.cluster_bytes());
                l.byte_offset = v_.cluster_offset(r.first) + b;
                l.sector = *l.byte_offset / c_.bps();
                break;
            }
            b -= n;
        }
        return l;
    }

    bool read_dir(const SubDir& d, std::vector<std::byte>& bytes) {
        bytes.resize(static_cast<std::size_t>(d.bytes));  // every byte kept is read below: no zero fill
        std::uint64_t at = 0;
        for (const auto& r : d.runs) {
            if (at >= d.bytes) break;
            const std::uint64_t n =
                std::min<std::uint64_t>(std::uint64_t(r.count) * v_.cluster_bytes(), d.bytes - at);
            const std::uint64_t from = v_.cluster_offset(r.first);
            if (from + n > c_.device.size()) {
                if (!quiet_) {
                    c_.walk_complete = false;
                    c_.out.add(
                        "exfat.dir.unreadable", at_cluster(c_, r.first, d.path),
                        fmt::format("the directory's clusters {}..{} lie past the end of the image ({} "
                                    "bytes); what lies below is not checked, nor counted as lost",
                                    r.first, r.first + r.count - 1, c_.device.size()));
                }
                return false;
            }
            c_.device.read_at(from, std::span<std::byte>(bytes).subspan(static_cast<std::size_t>(at),
                                                                        static_cast<std::size_t>(n)));
            at += n;
        }
        bytes.resize(static_cast<std::size_t>(at));
        return true;
    }

    /// CheckOptions::entry_fixes: `bytes` (32 per entry) written over the
    /// directory's entries from `first`.
    void push_entry_fix(const SubDir& d, std::string path, std::string_view code, std::string action,
                        std::uint32_t first, std::vector<std::byte> bytes) {
        EntryFix f{std::move(path), code, std::move(action), {}, std::move(bytes)};
        const auto n = static_cast<std::uint32_t>(f.bytes.size() / kDirEntrySize);
        for (std::uint32_t i = first; i < first + n; ++i) {
            const auto at = entry_at(d, i, d.path).byte_offset;
            if (!at) return;
            f.entries.push_back(*at);
        }
        c_.options.entry_fixes->push_back(std::move(f));
    }

    /// `n` entries of `dir` from `first`, with their InUse bit cleared
    /// [EXFAT §6.2.1.4]: every other byte kept.
    static std::vector<std::byte> not_in_use(std::span<const std::byte> dir, std::uint32_t first,
                                             std::uint32_t n) {
        std::vector<std::byte> b(dir.begin() + std::ptrdiff_t(first) * kDirEntrySize,
                                 dir.begin() + std::ptrdiff_t(first + n) * kDirEntrySize);
        for (std::size_t i = 0; i < b.size(); i += kDirEntrySize) b[i] &= ~std::byte{kEntryInUse};
        return b;
    }

    /// The name a set's File Name entries hold (entries 2.. of `set`, while
    /// they are File Name entries), up to the first U+0000; `names` receives
    /// how many File Name entries there are.
    static std::u16string stored_name(std::span<const std::byte> set, std::uint32_t& names) {
        names = 0;
        std::u16string name;
        bool ended = false;
        for (std::size_t e = 2; (e + 1) * kDirEntrySize <= set.size(); ++e) {
            if (static_cast<std::uint8_t>(set[e * kDirEntrySize]) != kEntryFileName) break;
            ++names;
            for (std::size_t u = 0; u < kNameUnitsPerEntry && !ended; ++u) {
                const auto unit = static_cast<char16_t>(
                    core::load_le16(set, e * kDirEntrySize + name_off::FileName + 2 * u));
                ended = unit == 0;
                if (!ended) name.push_back(unit);
            }
        }
        return name;
    }

    /// CheckOptions::entry_fixes for a set or entries the parser did not
    /// recognize (EntryFix says which answer is taken). Returns the entry
    /// after the last one the fix keeps in use (a SecondaryCount made larger
    /// takes in the secondaries after the set), else 0.
    std::uint32_t note_anomaly_fix(const SubDir& d, const SetAnomaly& a, std::span<const std::byte> dir) {
        const std::uint64_t total = dir.size() / kDirEntrySize;
        if (a.count == 0 || std::uint64_t(a.first) + a.count > total) return 0;
        // A set cut by the end of what a broken chain holds: the chain is the damage (and its
        // repair comes first). A walked directory's chain otherwise fits its DataLength.
        if (a.kind == SetAnomaly::Kind::truncated && std::uint64_t(a.first) + a.count >= total &&
            d.chain_broken)
            return 0;
        const std::string_view code = kAnomalyCodes[static_cast<std::size_t>(a.kind)];
        const auto type = [&](std::uint64_t i) { return static_cast<std::uint8_t>(dir[i * kDirEntrySize]); };
        const auto entries = [&](std::uint32_t n) {
            return std::vector<std::byte>(dir.begin() + std::ptrdiff_t(a.first) * kDirEntrySize,
                                          dir.begin() + std::ptrdiff_t(a.first + n) * kDirEntrySize);
        };
        if (type(a.first) == kEntryFile) {
            const std::uint16_t stored =
                core::load_le16(dir, std::size_t{a.first} * kDirEntrySize + file_off::SetChecksum);
            const auto count = static_cast<std::uint8_t>(
                dir[std::size_t{a.first} * kDirEntrySize + file_off::SecondaryCount]);
            // 1. The SecondaryCount the stored SetChecksum was computed with,
            // among the runs of in-use secondaries that follow.
            std::uint32_t avail = 0;
            while (a.first + 1 + avail < total && avail < 255 &&
                   (type(a.first + 1 + avail) & (kEntryInUse | kEntryCategorySecondary)) ==
                       (kEntryInUse | kEntryCategorySecondary))
                ++avail;
            if (avail >= 2 && type(a.first + 1) == kEntryStreamExtension) {
                for (std::uint32_t n = 2; n <= avail; ++n) {
                    if (n == count) continue;
                    std::vector<std::byte> set = entries(1 + n);
                    set[file_off::SecondaryCount] = static_cast<std::byte>(n);
                    if (entry_set_checksum(set) != stored) continue;
                    set.resize(kDirEntrySize);
                    push_entry_fix(d, d.path, code,
                                   fmt::format("File entry {}: SecondaryCount {} set to {}, the count its "
                                               "SetChecksum {:04X} was computed with",
                                               a.first, count, n, stored),
                                   a.first, std::move(set));
                    return a.first + 1 + n;
                }
            }
            // 2. A SecondaryCount reaching over entries that are no secondaries of
            // the set, which the stored SetChecksum covers as they are (the writer
            // counted them): the count made the secondaries that follow.
            if (a.kind == SetAnomaly::Kind::not_secondary && avail >= 2 && avail < count &&
                type(a.first + 1) == kEntryStreamExtension && a.first + 1u + count <= total &&
                entry_set_checksum(entries(1 + count)) == stored) {
                std::vector<std::byte> set = entries(1 + avail);
                set[file_off::SecondaryCount] = static_cast<std::byte>(avail);
                core::store_le16(set, file_off::SetChecksum, entry_set_checksum(set));
                set.resize(kDirEntrySize);
                push_entry_fix(d, d.path, code,
                               fmt::format("File entry {}: SecondaryCount {} set to {}, the secondaries that "
                                           "follow it (its SetChecksum covered the entries after them)",
                                           a.first, count, avail),
                               a.first, std::move(set));
                return 0;
            }
            // 3. The set as it stands, when its stored SetChecksum is right.
            std::uint32_t names = 0;
            std::vector<std::byte> set = entries(a.count);
            const std::u16string name = a.count == 1u + count ? stored_name(set, names) : std::u16string();
            const bool whole = count >= 2 && a.count == 1u + count &&
                               type(a.first + 1) == kEntryStreamExtension &&
                               entry_set_checksum(set) == stored && !name.empty();
            if (whole && a.kind == SetAnomaly::Kind::name_length &&
                core::div_ceil(name.size(), kNameUnitsPerEntry) == names) {
                push_name_length_fix(d, d.path + core::utf16_to_utf8_lossy(name), a.first, std::move(set),
                                     name);
                return 0;
            }
            if (whole && a.kind == SetAnomaly::Kind::unknown_critical && a.index > a.first + 1 + names) {
                // The benign secondaries after the names move up over the critical ones.
                std::vector<std::byte> out(set.begin(),
                                           set.begin() + std::ptrdiff_t(2 + names) * kDirEntrySize);
                for (std::uint32_t k = 2 + names; k <= count; ++k) {
                    if (type(a.first + k) & kEntryImportanceBenign)
                        out.insert(out.end(), set.begin() + std::ptrdiff_t(k) * kDirEntrySize,
                                   set.begin() + std::ptrdiff_t(k + 1) * kDirEntrySize);
                }
                const auto kept = static_cast<std::uint32_t>(out.size() / kDirEntrySize - 1);
                out[file_off::SecondaryCount] = static_cast<std::byte>(kept);
                core::store_le16(out, file_off::SetChecksum, entry_set_checksum(out));
                const std::vector<std::byte> tail = not_in_use(set, 1 + kept, count - kept);
                out.insert(out.end(), tail.begin(), tail.end());
                push_entry_fix(d, d.path + core::utf16_to_utf8_lossy(name), code,
                               fmt::format("{} unknown critical secondary entr{} left out of the set "
                                           "(SecondaryCount {} set to {})",
                                           count - kept, count - kept == 1 ? "y" : "ies", count, kept),
                               a.first, std::move(out));
                return 0;
            }
        }
        // 4. Entries no reader can take as a set: marked not in use.
        push_entry_fix(d, d.path, code,
                       a.count == 1
                           ? fmt::format("entry {} marked not in use", a.first)
                           : fmt::format("entries {}..{} marked not in use", a.first, a.first + a.count - 1),
                       a.first, not_in_use(dir, a.first, a.count));
        return 0;
    }

    void report_anomalies(const SubDir& d, const ParsedDirectory& pd, std::span<const std::byte> bytes) {
        if (pd.anomalies.empty()) return;
        // The clusters of a set that is not recognized are unknown: do not
        // call clusters lost (the anomaly is the finding). The second,
        // silent walk changes nothing: it may reach directories the first
        // did not (cross-linked ones), which must not change the verdict.
        if (quiet_) return;
        c_.walk_complete = false;
        if (c_.options.entry_fixes) {
            std::uint32_t kept_until = 0;  // entries a SecondaryCount fix takes back into its set
            for (const SetAnomaly& a : pd.anomalies)
                if (a.first >= kept_until) kept_until = std::max(kept_until, note_anomaly_fix(d, a, bytes));
        }
        for (std::size_t k = 0; k < kAnomalyKinds; ++k) {
            // Several kinds share a code: report each code once, for all its kinds.
            if (std::find(kAnomalyCodes, kAnomalyCodes + k, kAnomalyCodes[k]) != kAnomalyCodes + k) continue;
            std::vector<std::uint32_t> at;
            std::uint64_t n = 0;
            const SetAnomaly* first = nullptr;
            for (const auto& a : pd.anomalies) {
                if (kAnomalyCodes[static_cast<std::size_t>(a.kind)] != kAnomalyCodes[k]) continue;
                if (!first) first = &a;
                ++n;
                if (at.size() < kFirstLocations) at.push_back(a.index);
            }
            if (n == 0) continue;
            c_.out.add(kAnomalyCodes[k], entry_at(d, first->index, d.path),
                       n == 1 ? first->detail
                              : fmt::format("{} entry sets (at entries {}): {}", n, first_list(at, n),
                                            first->detail),
                       n);
        }
    }

    void check_after_end(const SubDir& d, const ParsedDirectory& pd, std::span<const std::byte> bytes) {
        if (!pd.end_marker) return;
        const std::uint64_t total = bytes.size() / kDirEntrySize;
        std::uint64_t n = 0;
        std::vector<std::uint32_t> at;
        for (std::uint64_t i = std::uint64_t(pd.entries_scanned) + 1; i < total; ++i) {
            if (!(static_cast<std::uint8_t>(bytes[i * kDirEntrySize]) & kEntryInUse)) continue;
            ++n;
            if (at.size() < kFirstLocations) at.push_back(static_cast<std::uint32_t>(i));
        }
        if (n == 0 || quiet_) return;
        c_.out.add("exfat.dir.entry-after-end", entry_at(d, at.front(), d.path),
                   fmt::format("{} in-use entr{} (at {}) after the end-of-directory entry {}; readers stop "
                               "at the end entry and do not see them",
                               n, n == 1 ? "y" : "ies", first_list(at, n), pd.entries_scanned),
                   n);
        if (!c_.options.entry_fixes) return;
        // Every end-of-directory entry (type 0x00) before the last in-use
        // entry becomes an unused entry that does not end the directory
        // (type 0x7F: InUse clear, not 0x00 [EXFAT §6.2.1]), as newer
        // fsck.exfat does (exfatprogs "support repair unused entry"): the
        // entries after it are then read, and checked by the next pass.
        std::uint64_t last = 0;
        for (std::uint64_t i = total; i-- > std::uint64_t(pd.entries_scanned);)
            if (static_cast<std::uint8_t>(bytes[i * kDirEntrySize]) & kEntryInUse) {
                last = i;
                break;
            }
        const auto first = static_cast<std::uint32_t>(pd.entries_scanned);
        std::vector<std::byte> b(bytes.begin() + std::ptrdiff_t(first) * kDirEntrySize,
                                 bytes.begin() + std::ptrdiff_t(last) * kDirEntrySize);
        std::uint64_t ends = 0;
        for (std::size_t i = 0; i < b.size(); i += kDirEntrySize)
            if (b[i] == std::byte{0}) {
                b[i] = std::byte{0x7F};
                ++ends;
            }
        push_entry_fix(
            d, d.path, "exfat.dir.entry-after-end",
            fmt::format("{} end-of-directory entr{} before entry {} made {} (type 0x7F), so that the {} "
                        "in-use entr{} after {} {} read",
                        ends, ends == 1 ? "y" : "ies", last, ends == 1 ? "an unused entry" : "unused entries",
                        n, n == 1 ? "y" : "ies", ends == 1 ? "it" : "them", n == 1 ? "is" : "are"),
            first, std::move(b));
    }

    void check_system_entries(const SubDir& d, bool is_root, const ParsedDirectory& pd,
                              std::span<const std::byte> bytes) {
        if (quiet_) return;
        unsigned bitmaps = 0, upcases = 0, labels = 0, guids = 0;
        for (const auto& e : pd.system) {
            const char* what = nullptr;
            unsigned* count = nullptr;
            unsigned allowed = 1;
            switch (e.entry_type) {
                case kEntryAllocationBitmap:
                    what = "Allocation Bitmap";
                    count = &bitmaps;
                    allowed = v_.boot_sector().number_of_fats == 2 ? 2 : 1;
                    break;
                case kEntryUpcaseTable:
                    what = "Up-case Table";
                    count = &upcases;
                    break;
                case kEntryVolumeLabel: {
                    what = "Volume Label";
                    count = &labels;
                    const auto label = decode_volume_label_entry(
                        bytes.subspan(std::size_t{e.index} * kDirEntrySize).first<kDirEntrySize>());
                    if (label.character_count > 11) {
                        c_.out.add("exfat.label.invalid", entry_at(d, e.index, "volume label"),
                                   fmt::format("the Volume Label entry's CharacterCount is {}, at most 11",
                                               label.character_count));
                    }
                    break;
                }
                case kEntryVolumeGuid:
                    what = "Volume GUID";
                    count = &guids;
                    break;
                default:
                    continue;  // other benign primaries are ignored [EXFAT §8.2]
            }
            ++*count;
            const bool outside = !is_root && e.entry_type != kEntryVolumeGuid;
            if (outside) {
                c_.out.add("exfat.dir.system-entry", entry_at(d, e.index, d.path),
                           fmt::format("a {} entry (0x{:02X}) at entry {} outside the root directory", what,
                                       e.entry_type, e.index));
            } else if (*count > allowed) {
                c_.out.add("exfat.dir.system-entry", entry_at(d, e.index, d.path),
                           fmt::format("a {} entry (0x{:02X}) at entry {}: the {} may hold {}", what,
                                       e.entry_type, e.index, is_root ? "root" : "directory", allowed));
            }
            // The one the volume uses is the first of the root (Volume::open).
            if ((outside || *count > allowed) && c_.options.entry_fixes)
                push_entry_fix(d, d.path, "exfat.dir.system-entry",
                               fmt::format("the {} entry at entry {} marked not in use", what, e.index),
                               e.index, not_in_use(bytes, e.index, e.entries));
        }
    }

    /// The DataLength the allocation bitmap supports for a set whose
    /// SetChecksum fails (its fields are then not evidence by themselves). A
    /// NoFatChain extent whose first clusters the bitmap marks and whose
    /// others it all calls free keeps the marked ones (a DataLength damaged
    /// upward claims a free tail: as exfatprogs' expected repair of its
    /// file_invalid_clus image cuts larger_file); one with a free cluster
    /// amid marked ones keeps its DataLength (a bit is damaged; it is set
    /// once the set is walked), and so does a FAT chain (its links say which
    /// clusters it has). nullopt when the bitmap marks none of the extent
    /// (nothing says whether FirstCluster, DataLength or the bitmap is
    /// wrong) or cannot be read: the set is left.
    std::optional<std::uint64_t> supported_length(const FileRecord& r) const {
        if (r.data_length == 0) return r.data_length;
        try {
            if (!r.no_fat_chain()) return r.data_length;  // the chain's links say which clusters
            const std::uint64_t cb = v_.cluster_bytes();
            const std::uint64_t n = core::div_ceil(r.data_length, cb);
            const std::uint64_t end = std::uint64_t{v_.cluster_count()} + 2;  // past the heap
            const auto marked = [&](std::uint64_t k) {
                return r.first_cluster + k < end &&
                       v_.cluster_in_use(static_cast<std::uint32_t>(r.first_cluster + k));
            };
            std::uint64_t k = 0;
            while (k < n && marked(k)) ++k;
            if (k == n) return r.data_length;
            for (std::uint64_t j = k + 1; j < n; ++j)
                if (marked(j))
                    return r.data_length;     // a free cluster amid marked ones: the bitmap is damaged
            if (k == 0) return std::nullopt;  // nothing marked: FirstCluster, DataLength or bitmap
            return k * cb;
        } catch (const Error&) {
            return std::nullopt;  // no usable bitmap, or a cluster outside the heap
        }
    }

    /// Cluster number `k` (from 0) of a chain given as runs; 0 past their end.
    static std::uint32_t nth_cluster(const std::vector<ClusterRun>& runs, std::uint64_t k) {
        for (const ClusterRun& run : runs) {
            if (k < run.count) return run.first + static_cast<std::uint32_t>(k);
            k -= run.count;
        }
        return 0;
    }

    /// CheckOptions::chain_fixes: where the chain of `r` ends after fsck -y,
    /// or the DataLength it gets.
    void note_chain_fix(const SubDir& d, const FileRecord& r, const std::string& p, const Claim& cl) {
        if (!r.checksum_ok() || r.no_fat_chain() || cl.runs.empty()) return;
        ChainFix f;
        f.path = p;
        f.code = cl.code;
        const ClusterRun& tail = cl.runs.back();
        if (cl.code == "exfat.chain.out-of-range" || cl.code == "exfat.chain.bad-cluster" ||
            cl.code == "exfat.chain.loop") {
            f.end_at = tail.first + tail.count - 1;  // the cluster whose link is wrong
        } else if (cl.code == "exfat.chain.cross-link") {
            if (cl.shared_at == 0) return;  // its first cluster is shared: it would keep nothing
            f.end_at = nth_cluster(cl.runs, cl.shared_at - 1);
        } else if (cl.code == "exfat.chain.too-long") {
            const std::uint64_t need = core::div_ceil(r.data_length, std::uint64_t{v_.cluster_bytes()});
            if (need == 0) return;  // an empty file with clusters: its FirstCluster would change
            f.end_at = nth_cluster(cl.runs, need - 1);
        } else if (cl.code == "exfat.chain.too-short") {
            f.length = cl.clusters * v_.cluster_bytes();
            for (std::uint32_t i = r.index; i < r.index + r.entries; ++i) {
                const auto at = entry_at(d, i, p).byte_offset;
                if (!at) return;
                f.entries.push_back(*at);
            }
        } else {
            return;
        }
        c_.options.chain_fixes->push_back(std::move(f));
    }

    /// CheckOptions::renames for one directory: the records whose name is
    /// invalid (name_problem) or a duplicate (`dup`), with a new name that is
    /// unique after up-casing and fits the set's File Name entries.
    void note_renames(const SubDir& d, const ParsedDirectory& pd, const std::vector<bool>& dup,
                      std::span<const std::byte> dir) {
        const std::span<const char16_t> table = v_.upcase_table();
        // The up-cased names of the directory, gathered at its first name to
        // replace: fsck -y collects renames on every walk, and nearly every
        // directory has none.
        std::optional<std::set<std::u16string>> names;
        for (std::size_t k = 0; k < pd.files.size(); ++k) {
            const FileRecord& r = pd.files[k];
            const bool invalid = !name_problem(r.name16).empty();
            if ((!invalid && !dup[k]) || !r.checksum_ok() || r.name16.empty()) continue;
            if (!names) {
                names.emplace();
                for (const FileRecord& o : pd.files) names->insert(upcase_name(o.name16, table));
            }
            std::set<std::u16string>& taken = *names;
            std::u16string base = r.name16;
            if (base == u"." || base == u"..") base.assign(base.size(), u'_');
            for (char16_t& ch : base)
                if (ch < kForbiddenUnits.size() && kForbiddenUnits[ch]) ch = u'_';
            const std::size_t entries = core::div_ceil(r.name16.size(), kNameUnitsPerEntry);
            const std::size_t dot = base.rfind(u'.');
            const std::size_t at = dot == std::u16string::npos || dot == 0 ? base.size() : dot;
            std::u16string name;
            for (unsigned n = invalid ? 0 : 1; n < 1000 && name.empty(); ++n) {
                std::u16string c = base;
                if (n != 0) c.insert(at, u"~" + core::utf8_to_utf16(std::to_string(n)));
                if (core::div_ceil(c.size(), kNameUnitsPerEntry) != entries || !name_problem(c).empty())
                    break;
                if (!taken.count(upcase_name(c, table))) name = std::move(c);
            }
            const std::uint64_t from = std::uint64_t(r.index) * kDirEntrySize,
                                n = std::uint64_t(r.entries) * kDirEntrySize;
            if (name.empty() || from + n > dir.size() || r.entries < 2 + entries) continue;
            RenameFix f;
            f.path = d.path + (r.name.empty() ? std::string("<empty name>") : r.name);
            f.new_name = core::utf16_to_utf8_lossy(name);
            f.duplicate = !invalid;
            f.set.assign(dir.begin() + std::ptrdiff_t(from), dir.begin() + std::ptrdiff_t(from + n));
            for (std::size_t e = 0; e < entries; ++e) {
                for (std::size_t u = 0; u < kNameUnitsPerEntry; ++u) {
                    const std::size_t i = e * kNameUnitsPerEntry + u;
                    core::store_le16(f.set, (2 + e) * kDirEntrySize + name_off::FileName + 2 * u,
                                     i < name.size() ? static_cast<std::uint16_t>(name[i]) : 0);
                }
            }
            f.set[kDirEntrySize + stream_off::NameLength] = static_cast<std::byte>(name.size());
            core::store_le16(f.set, kDirEntrySize + stream_off::NameHash, exfat::name_hash(name, table));
            core::store_le16(f.set, file_off::SetChecksum, entry_set_checksum(f.set));
            bool whole = true;
            for (std::uint32_t i = r.index; i < r.index + r.entries && whole; ++i) {
                const auto off = entry_at(d, i, f.path).byte_offset;
                if (off) f.entries.push_back(*off);
                whole = off.has_value();
            }
            if (!whole) continue;
            taken.insert(upcase_name(name, table));
            c_.options.renames->push_back(std::move(f));
        }
    }

    /// CheckOptions::entry_fixes for a NameLength shorter than the name the
    /// File Name entries hold: NameLength made that name's length, NameHash
    /// and SetChecksum recomputed (fsck.exfat -y's answer).
    void note_name_length_fix(const SubDir& d, const FileRecord& r, const std::string& p,
                              std::span<const std::byte> dir) {
        const std::uint64_t at = std::uint64_t(r.index) * kDirEntrySize,
                            n = std::uint64_t(r.entries) * kDirEntrySize;
        if (r.entries < 3 || at + n > dir.size()) return;
        std::vector<std::byte> set(dir.begin() + std::ptrdiff_t(at), dir.begin() + std::ptrdiff_t(at + n));
        std::uint32_t names = 0;
        const std::u16string name = stored_name(set, names);
        if (name.size() != r.units_held) return;
        push_name_length_fix(d, p, r.index, std::move(set), name);
    }

    /// An EntryFix for exfat.set.name-length: `set` (the whole set, from
    /// entry `first`) with NameLength made the length of `name`, the name its
    /// File Name entries hold, and NameHash and SetChecksum to match.
    void push_name_length_fix(const SubDir& d, std::string path, std::uint32_t first,
                              std::vector<std::byte> set, std::u16string_view name) {
        const auto was = static_cast<unsigned>(set[kDirEntrySize + stream_off::NameLength]);
        set[kDirEntrySize + stream_off::NameLength] = static_cast<std::byte>(name.size());
        core::store_le16(set, kDirEntrySize + stream_off::NameHash,
                         exfat::name_hash(name, v_.upcase_table()));
        core::store_le16(set, file_off::SetChecksum, entry_set_checksum(set));
        push_entry_fix(d, std::move(path), "exfat.set.name-length",
                       fmt::format("NameLength {} set to {}, the name \"{}\" its File Name entries hold", was,
                                   name.size(), core::escape_name(core::utf16_to_utf8_lossy(name))),
                       first, std::move(set));
    }

    /// CheckOptions::entry_fixes for exfat.stream.first-cluster: FirstCluster
    /// 0, and DataLength and ValidDataLength 0 when it had data (EntryFix).
    void note_first_cluster_fix(const SubDir& d, const FileRecord& r, const std::string& p,
                                std::span<const std::byte> dir) {
        if (!c_.options.entry_fixes) return;
        const std::uint64_t at = std::uint64_t(r.index) * kDirEntrySize,
                            n = std::uint64_t(r.entries) * kDirEntrySize;
        if (r.entries < 2 || at + n > dir.size()) return;
        std::vector<std::byte> set(dir.begin() + std::ptrdiff_t(at), dir.begin() + std::ptrdiff_t(at + n));
        core::store_le32(set, kDirEntrySize + stream_off::FirstCluster, 0);
        // No clusters, so no extent: NoFatChain cleared (fsck.exfat calls it an error on an empty file).
        set[kDirEntrySize + stream_off::GeneralSecondaryFlags] &= ~std::byte{kSecondaryNoFatChain};
        if (r.data_length != 0) {
            core::store_le64(set, kDirEntrySize + stream_off::DataLength, 0);
            core::store_le64(set, kDirEntrySize + stream_off::ValidDataLength, 0);
        }
        if (!r.name_hash_ok())
            core::store_le16(set, kDirEntrySize + stream_off::NameHash, *r.name_hash_computed);
        core::store_le16(set, file_off::SetChecksum, entry_set_checksum(set));
        push_entry_fix(d, p, "exfat.stream.first-cluster",
                       r.data_length == 0
                           ? fmt::format("FirstCluster {} set to 0 (DataLength is 0)", r.first_cluster)
                           : fmt::format("made empty: FirstCluster {} is not a cluster of the volume, so "
                                         "where its {} bytes lay is not known",
                                         r.first_cluster, r.data_length),
                       r.index, std::move(set));
    }

    /// The set's consistent SetChecksum and NameHash, for fsck's repair (CheckOptions::set_fixes).
    void note_set_fix(const SubDir& d, const FileRecord& r, const std::string& p,
                      std::span<const std::byte> dir) {
        const std::uint64_t at = std::uint64_t(r.index) * kDirEntrySize,
                            n = std::uint64_t(r.entries) * kDirEntrySize;
        if (r.entries < 2 || at + n > dir.size()) return;
        const auto file = entry_at(d, r.index, p).byte_offset,
                   stream = entry_at(d, r.index + 1, p).byte_offset;
        if (!file || !stream) return;
        const auto length = r.checksum_ok() ? std::optional(r.data_length) : supported_length(r);
        if (!length) return;
        std::vector<std::byte> set(dir.begin() + std::ptrdiff_t(at), dir.begin() + std::ptrdiff_t(at + n));
        SetFix f;
        f.path = p;
        f.file_entry = *file;
        f.stream_entry = *stream;
        if (*length != r.data_length) {
            const std::uint64_t valid = core::load_le64(set, kDirEntrySize + stream_off::ValidDataLength);
            f.data_length = std::pair(r.data_length, *length);
            f.valid_data_length = std::min(valid, *length);
            core::store_le64(set, kDirEntrySize + stream_off::DataLength, *length);
            core::store_le64(set, kDirEntrySize + stream_off::ValidDataLength, *f.valid_data_length);
        }
        if (!r.name_hash_ok()) {
            f.name_hash = *r.name_hash_computed;
            core::store_le16(set, kDirEntrySize + stream_off::NameHash, *f.name_hash);
        }
        f.set_checksum = entry_set_checksum(set);
        f.checksum_was_right = r.checksum_ok();
        c_.options.set_fixes->push_back(std::move(f));
    }

    void check_record(const SubDir& d, const FileRecord& r, const std::string& p, bool duplicate,
                      std::span<const std::byte> dir) {
        const auto loc = [&] { return entry_at(d, r.index, p); };
        if (c_.options.set_fixes && (!r.checksum_ok() || !r.name_hash_ok())) note_set_fix(d, r, p, dir);
        if (!r.checksum_ok()) {
            c_.out.add("exfat.set.checksum", loc(),
                       fmt::format("SetChecksum is {:04X}, the {} entries of the set sum to {:04X}",
                                   r.set_checksum, r.entries, r.set_checksum_computed));
        }
        if (!r.name_hash_ok()) {
            c_.out.add("exfat.set.name-hash", loc(),
                       fmt::format("NameHash is {:04X}, the up-cased name hashes to {:04X}", r.name_hash,
                                   *r.name_hash_computed));
        }
        if (r.units_held > r.name_length) {
            // Windows reads NameLength units; Linux lists the name up to its
            // U+0000 and then finds no file by that name (it compares
            // NameLength): one name for each.
            c_.out.add(
                "exfat.set.name-length", loc(),
                fmt::format("NameLength is {}, but its File Name entries hold a name of {} units (up to "
                            "the first U+0000)",
                            r.name_length, r.units_held));
            if (c_.options.entry_fixes && r.checksum_ok() && r.units_held <= 255)
                note_name_length_fix(d, r, p, dir);
        }
        if (const std::string why = name_problem(r.name16); !why.empty()) {
            c_.out.add("exfat.name.invalid", loc(), why);
        }
        if (duplicate) {
            c_.out.add("exfat.name.duplicate", loc(),
                       fmt::format("another entry of {} has the same name after up-casing", d.path));
        }
        if (r.valid_data_length > r.data_length) {
            c_.out.add("exfat.stream.valid-length", loc(),
                       fmt::format("ValidDataLength {} is larger than DataLength {}", r.valid_data_length,
                                   r.data_length));
        } else if (r.is_directory() && r.valid_data_length != r.data_length) {
            c_.out.add("exfat.stream.valid-length", loc(),
                       fmt::format("a directory's ValidDataLength {} differs from its DataLength {}",
                                   r.valid_data_length, r.data_length));
        }
    }

    void walk(const SubDir& d, bool is_root, std::vector<std::uint32_t>& ancestors, unsigned depth) {
        // One buffer for every directory (the walk is done with it before it
        // descends): no allocation and zero fill per directory.
        std::vector<std::byte>& bytes = dir_bytes_;
        if (!read_dir(d, bytes)) return;
        const ParsedDirectory pd = parse_directory(bytes, v_.upcase_table());
        report_anomalies(d, pd, bytes);
        check_after_end(d, pd, bytes);
        check_system_entries(d, is_root, pd, bytes);
        ancestors.push_back(d.first_cluster);
        std::vector<SubDir> subdirs;
        const std::vector<bool> dup =
            quiet_ ? std::vector<bool>() : duplicate_names(pd.files, v_.upcase_table());
        if (c_.options.renames && !quiet_) note_renames(d, pd, dup, bytes);
        std::string p;  // each file's path, in one buffer: no allocation per file
        // Timestamps out of range: a writer's habit, one finding per directory.
        std::uint64_t bad_times = 0;
        std::string first_bad_time;
        std::uint32_t first_bad_index = 0;
        for (std::size_t k = 0; k < pd.files.size(); ++k) {
            const FileRecord& r = pd.files[k];
            p.assign(d.path);
            p.append(r.name.empty() ? std::string_view("<empty name>") : std::string_view(r.name));
            const bool dir = r.is_directory();
            if (!quiet_) {
                ++(dir ? c_.summary.directories : c_.summary.files);
                if (c_.options.on_walk) c_.options.on_walk(dir ? p + "/" : p);
                check_record(d, r, p, dup[k], bytes);
                for (const auto& [field, t] :
                     {std::pair{"Create", &r.created}, std::pair{"LastModified", &r.modified},
                      std::pair{"LastAccessed", &r.accessed}}) {
                    const std::string why = timestamp_problem(*t);
                    if (why.empty() || bad_times++ != 0) continue;
                    first_bad_index = r.index;
                    first_bad_time =
                        fmt::format("\"{}\": {}Timestamp has {}", core::escape_name(p), field, why);
                }
            }
            for (const auto& b : r.benign) {
                if ((b.flags & kSecondaryAllocationPossible) &&
                    (b.first_cluster != 0 || b.data_length != 0)) {
                    claim(c_, fmt::format("{} (entry 0x{:02X})", p, b.entry_type), b.first_cluster,
                          b.data_length, (b.flags & kSecondaryNoFatChain) != 0);
                }
            }
            if (r.data_length == 0 && r.first_cluster != 0) {
                if (!quiet_) {
                    c_.out.add(
                        "exfat.stream.first-cluster", entry_at(d, r.index, p),
                        fmt::format("DataLength is 0 but FirstCluster is {} (must be 0 without clusters)",
                                    r.first_cluster));
                    note_first_cluster_fix(d, r, p, bytes);
                }
                continue;
            }
            if (dir && r.data_length > kMaxDirectoryBytes) {
                if (!quiet_) {
                    c_.walk_complete = false;
                    c_.out.add("exfat.dir.too-large", entry_at(d, r.index, p),
                               fmt::format("the directory's DataLength is {} bytes, more than the 256 MiB a "
                                           "directory may hold; it is not read",
                                           r.data_length));
                }
                continue;
            }
            if (dir && r.first_cluster != 0 &&
                (std::find(ancestors.begin(), ancestors.end(), r.first_cluster) != ancestors.end() ||
                 r.first_cluster == v_.root_cluster())) {
                if (!quiet_) {
                    c_.out.add(
                        "exfat.dir.loop", entry_at(d, r.index, p),
                        fmt::format(
                            "the directory's first cluster {} is that of {}, so the tree loops",
                            r.first_cluster,
                            r.first_cluster == d.first_cluster ? "the directory holding it" : "an ancestor"));
                }
                continue;
            }
            // Each directory once (a visited set, not only the ancestors). A
            // second entry set for a walked directory shares its clusters: the
            // claim reports that cross-link (one root cause, one finding), and
            // the directory is not walked again.
            const bool again = dir && r.first_cluster != 0 && !walked_.enter(r.first_cluster, p);
            Claim cl = claim(c_, p, r.first_cluster, r.data_length, r.no_fat_chain());
            if (c_.options.chain_fixes && !quiet_ && !cl.code.empty()) note_chain_fix(d, r, p, cl);
            if (cl.code == "exfat.stream.first-cluster" && !dir && !quiet_)
                note_first_cluster_fix(d, r, p, bytes);
            if (c_.options.bitmap_fixes && !r.checksum_ok()) {
                if (c_.doubtful.size() != c_.owned.size())
                    c_.doubtful = check::ClusterBitmap(c_.owned.size());
                for (const ClusterRun& run : cl.runs)
                    if (std::uint64_t(run.first) + run.count <= c_.doubtful.size())
                        c_.doubtful.set(run.first, run.count);
            }
            if (dir && !again && !cl.broken && r.data_length > 0) {
                subdirs.push_back(SubDir{p + "/", r.first_cluster, std::move(cl.runs), r.data_length});
            }
        }
        if (bad_times != 0) {
            // Valid timestamps [EXFAT §7.4.8-7.4.9]; the Linux driver and
            // fsck.exfat 1.2.0 do not judge them.
            c_.out.add(
                "exfat.set.timestamp", entry_at(d, first_bad_index, d.path),
                fmt::format("{} timestamp{} in {} {} not a valid date and time, the first {}", bad_times,
                            bad_times == 1 ? "" : "s", d.path, bad_times == 1 ? "is" : "are", first_bad_time),
                bad_times);
        }
        if (depth + 1 >= kMaxDepth && !subdirs.empty()) {
            if (!quiet_) {
                c_.walk_complete = false;
                c_.out.add(
                    "exfat.dir.too-deep", at_cluster(c_, d.first_cluster, d.path),
                    fmt::format("directories nest deeper than {} levels; the walk stops here (clusters "
                                "below are not checked, nor counted as lost)",
                                kMaxDepth));
            }
        } else {
            for (const auto& s : subdirs) walk(s, false, ancestors, depth + 1);
        }
        ancestors.pop_back();
    }

    Context& c_;
    const Volume& v_;
    bool quiet_;
    std::vector<std::byte> dir_bytes_;  ///< the directory being parsed (walk), its largest size at most
};

}  // namespace

void check_tree(Context& c) {
    Walker(c).run();
    if (c.cross_links.empty()) return;
    // Name the first owners: walk again, silently, recording who claims each
    // cross-linked cluster first (system objects are claimed before the tree).
    std::unordered_map<std::uint32_t, std::string> owners;
    for (const auto& x : c.cross_links) owners.emplace(x.cluster, std::string());
    c.resolving = true;
    c.first_owner = &owners;
    if (const auto b = c.vol->bitmap_entry()) {  // a copy: bitmap_entry() returns by value
        claim(c, "allocation bitmap", b->first_cluster, b->data_length, false);
    }
    if (c.boot.upcase)
        claim(c, "up-case table", c.boot.upcase->first_cluster, c.boot.upcase->data_length, false);
    Walker(c).run();
    c.resolving = false;
    c.first_owner = nullptr;
    for (auto& x : c.cross_links) {
        x.first = owners[x.cluster];
        check::Location loc = at_cluster(c, x.cluster, x.second);
        loc.other_owner = x.first;
        c.out.add("exfat.chain.cross-link", std::move(loc),
                  fmt::format("{} and {} share cluster {}", x.second,
                              x.first.empty() ? "another owner" : x.first, x.cluster));
    }
    if (c.cross_link_count > c.cross_links.size()) {
        c.out.add("exfat.chain.cross-link", check::Location{},
                  fmt::format("{} more cross-linked allocations are not listed one by one",
                              c.cross_link_count - c.cross_links.size()),
                  c.cross_link_count - c.cross_links.size());
    }
}

}  // namespace fsimg::exfat::detail
