#include "fsimg/fat/repair.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "fsimg/check/codes.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/edit.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat {

namespace {

std::uint32_t clean_bit(FatType t) noexcept {
    return t == FatType::fat16 ? 0x8000u : t == FatType::fat32 ? 0x08000000u : 0u;
}

/// FAT[1] of every copy: read, changed by `change`, written back (FAT 1 first).
template <class F>
void rewrite_fat1(io::BlockDevice& dev, const Layout& l, F change) {
    const std::size_t width = l.type == FatType::fat32 ? 4 : 2;
    for (std::uint32_t k = 0; k < l.num_fats; ++k) {
        const std::uint64_t at =
            (l.first_fat_sector + std::uint64_t(k) * l.fat_size_sectors) * l.bytes_per_sector +
            width;  // entry 1
        std::array<std::byte, 4> b{};
        dev.read_at(at, std::span(b).first(width));
        std::uint32_t v = width == 4 ? core::load_le32(b, 0) : core::load_le16(b, 0);
        const std::uint32_t nv = change(v);
        if (nv == v) continue;
        if (width == 4) {
            core::store_le32(b, 0, nv);
        } else {
            core::store_le16(b, 0, static_cast<std::uint16_t>(nv));
        }
        dev.write_at(at, std::span(b).first(width));
    }
}

/// True when a finding leaves in doubt who owns a cluster: a chain or
/// directory the walk could not follow whole, a start outside the chains,
/// or anything fatal. Lost clusters could then belong to what is broken,
/// and FAT 1 is not proven by the tree: neither is repaired.
bool ownership_in_doubt(const check::Findings& found) {
    for (const check::Finding& f : found.all()) {
        const std::string_view c = f.code;
        if (f.severity == check::Severity::fatal) return true;
        if ((c.starts_with("fat.chain.") && c != "fat.chain.lost" && c != "fat.chain.too-long" &&
             c != "fat.chain.too-short") ||
            c.starts_with("fat.dir.") || c.starts_with("fat.file.start") || c == "fat.boot.root-cluster")
            return true;
    }
    return false;
}

constexpr std::uint32_t kEntriesPerStep = 65536;

std::uint64_t fat_offset(const Layout& l, unsigned copy) {
    return (l.first_fat_sector + std::uint64_t(copy) * l.fat_size_sectors) * l.bytes_per_sector;
}

/// FAT entry n of FAT 1.
std::uint32_t read_entry(const io::BlockDevice& dev, const Layout& l, std::uint32_t n) {
    const Layout::FatWindow w = l.fat_window(0, n, 1);
    std::array<std::byte, 8> b{};
    dev.read_at(w.offset, std::span(b).first(w.bytes));
    return get_fat_entry(b, l.type, n - w.window_first);
}

/// Sets the FAT entries of `runs` to `value` (0: free) in every FAT copy,
/// FAT 1 first; FAT32's reserved top 4 bits are kept [FATGEN].
void set_entries(io::BlockDevice& dev, const Layout& l, const std::vector<ClusterRun>& runs,
                 std::uint32_t value) {
    std::vector<std::byte> buf;
    for (unsigned k = 0; k < l.num_fats; ++k) {
        for (const ClusterRun& r : runs) {
            const std::uint64_t end = std::uint64_t(r.first) + r.count;
            for (std::uint64_t lo = r.first; lo < end; lo += kEntriesPerStep) {
                const auto count =
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(end - lo, kEntriesPerStep));
                const Layout::FatWindow w = l.fat_window(k, static_cast<std::uint32_t>(lo), count);
                buf.resize(w.bytes);
                dev.read_at(w.offset, buf);
                for (std::uint64_t n = lo; n < lo + count; ++n)
                    set_fat_entry(buf, l.type, static_cast<std::uint32_t>(n - w.window_first), value);
                dev.write_at(w.offset, buf);
            }
        }
    }
}

/// Rewrites every other FAT copy from FAT 1 where it differs (64 KiB at a
/// time, only the pieces that differ); FAT[1]'s flag bits are left to the
/// dirty-flag repair. Returns the bytes rewritten.
std::uint64_t copy_first_fat(io::BlockDevice& dev, const Layout& l) {
    constexpr std::uint64_t kPiece = 65536;
    std::vector<std::byte> a(kPiece), b(kPiece);
    std::uint64_t written = 0;
    for (unsigned k = 1; k < l.num_fats; ++k) {
        for (std::uint64_t at = 0; at < l.fat_bytes(); at += kPiece) {
            const std::uint64_t n = std::min(kPiece, l.fat_bytes() - at);
            dev.read_at(fat_offset(l, 0) + at, std::span(a).first(n));
            dev.read_at(fat_offset(l, k) + at, std::span(b).first(n));
            if (std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin())) continue;
            if (at == 0) {  // FAT[0] and FAT[1] as this copy has them: the flags are the dirty repair's
                std::copy_n(b.begin(), std::min(l.fat_window(k, 0, 2).bytes, n), a.begin());
            }
            dev.write_at(fat_offset(l, k) + at, std::span(a).first(n));
            written += n;
        }
    }
    return written;
}

/// One lost chain as --salvage saves it: `clusters` clusters from `first`,
/// whose last, `last`, gets end-of-chain when `end` is set (its FAT entry
/// links to what is not this chain: a free or bad cluster, no cluster, a
/// cluster of another chain or of a file, or back into the chain).
struct LostChain {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    std::uint32_t clusters = 0;
    bool end = false;
};

/// The lost clusters (`lost`: check_volume's runs, all allocated in FAT 1)
/// as chains, by their FAT 1 links: a chain starts at a lost cluster no
/// other lost cluster links to (ascending), follows links while they reach
/// lost clusters not yet taken, and is cut before `max` clusters (a FAT file
/// holds at most 4 GiB - 1 bytes) and where two chains join (the second ends
/// before the shared tail). Lost clusters left after that lie on loops: each
/// loop is cut before the cluster it started from. Each lost cluster is in
/// exactly one chain. Memory follows the number of lost clusters.
std::vector<LostChain> lost_chains(const io::BlockDevice& dev, const Layout& l, std::vector<ClusterRun> lost,
                                   std::uint32_t max) {
    std::sort(lost.begin(), lost.end(),
              [](const ClusterRun& a, const ClusterRun& b) { return a.first < b.first; });
    std::vector<std::uint32_t> clusters;
    for (const ClusterRun& r : lost)
        for (std::uint32_t i = 0; i < r.count; ++i) clusters.push_back(r.first + i);
    auto index_of = [&](std::uint32_t c) -> std::optional<std::size_t> {
        const auto it = std::lower_bound(clusters.begin(), clusters.end(), c);
        if (it == clusters.end() || *it != c) return std::nullopt;
        return static_cast<std::size_t>(it - clusters.begin());
    };
    std::vector<std::uint32_t> next(clusters.size());
    std::vector<bool> linked(clusters.size()), taken(clusters.size());
    for (std::size_t i = 0; i < clusters.size(); ++i) {
        next[i] = read_entry(dev, l, clusters[i]);
        if (const auto j = index_of(next[i]); j && *j != i) linked[*j] = true;
    }
    const std::uint32_t eoc_min = end_of_chain(l.type) & ~7u;
    std::vector<LostChain> chains;
    std::vector<std::size_t> rest;  // where a chain cut at `max` goes on
    auto walk = [&](std::size_t i) {
        LostChain c{clusters[i], clusters[i], 1, false};
        taken[i] = true;
        for (;;) {
            const std::uint32_t n = next[i];
            const auto j = index_of(n);
            if (!j || taken[*j] || c.clusters >= max) {
                c.end = n < eoc_min;
                if (j && !taken[*j]) rest.push_back(*j);
                break;
            }
            i = *j;
            taken[i] = true;
            c.last = clusters[i];
            ++c.clusters;
        }
        chains.push_back(c);
    };
    auto start = [&](std::size_t i) {
        walk(i);
        while (!rest.empty()) {
            const std::size_t k = rest.back();
            rest.pop_back();
            if (!taken[k]) walk(k);
        }
    };
    for (std::size_t i = 0; i < clusters.size(); ++i)
        if (!linked[i] && !taken[i]) start(i);
    for (std::size_t i = 0; i < clusters.size(); ++i)  // loops: cut before where the walk began
        if (!taken[i]) start(i);
    return chains;
}

constexpr std::size_t kFilesPerFound = 10000;  // FILE0000.CHK .. FILE9999.CHK

/// Saves `chains` as files: end-of-chain written where a chain's last link
/// goes elsewhere (every FAT; the chains stay lost until their entries
/// exist), then each directory of `dirs` made in the root and its files'
/// entries written (fat/edit.hpp's order: a cut leaves lost chains, never
/// an entry without its chain); FSInfo's free count less the directory
/// clusters taken (Editor::finish).
void save_chains(io::BlockDevice& dev, const Layout& l, const std::vector<LostChain>& chains,
                 const std::vector<std::string>& dirs, const check::RepairOptions& options,
                 std::vector<check::Repair>& done) {
    std::vector<ClusterRun> ends;
    for (const LostChain& c : chains)
        if (c.end) ends.push_back(ClusterRun{c.last, 1});
    set_entries(dev, l, ends, end_of_chain(l.type));
    EditOptions eo;
    eo.now = options.now;
    eo.clamp = options.clamp;
    Editor ed(dev, eo);
    std::size_t k = 0;
    std::uint64_t clusters = 0;
    for (const std::string& name : dirs) {
        const DirId dir = ed.directory_of(ed.add_directory(kRootDir, name, NewEntryInfo{}));
        for (std::size_t f = 0; f < kFilesPerFound && k < chains.size(); ++f, ++k) {
            ed.add_chain_file(dir, fmt::format("FILE{:04}.CHK", f), chains[k].first,
                              chains[k].clusters * l.cluster_bytes(), NewEntryInfo{});
            clusters += chains[k].clusters;
        }
    }
    ed.finish();
    const std::size_t last_dir = dirs.size() - 1;
    const std::size_t last_file = (chains.size() - 1) % kFilesPerFound;
    done.push_back(
        {"fat.chain.lost",
         fmt::format(
             "{} lost chain{} ({} cluster{}, {}) saved as file{} /{}/FILE0000.CHK{} (--salvage, "
             "chkdsk's convention): {} clusters whole{}",
             core::format_count(chains.size()), chains.size() == 1 ? "" : "s", core::format_count(clusters),
             clusters == 1 ? "" : "s", core::format_size(clusters * l.cluster_bytes()),
             chains.size() == 1 ? "" : "s", dirs[0],
             chains.size() == 1 ? "" : fmt::format(" .. /{}/FILE{:04}.CHK", dirs[last_dir], last_file),
             chains.size() == 1 ? "the file holds the chain's" : "each file holds its chain's",
             ends.empty() ? ""
                          : fmt::format("; {} chain{} ended where {} link went elsewhere", ends.size(),
                                        ends.size() == 1 ? "" : "s", ends.size() == 1 ? "its" : "their"))});
}

/// Writes each LabelFix: its label entries marked deleted (0xE5, and
/// DIR_Attr 0 as fsck.fat writes it, so that an old tool that reads
/// ATTR_VOLUME_ID before the mark does not take it for a label; one 32-byte
/// write each, an entry that is no longer a live label left), and
/// BS_VolLab "NO NAME    " in sector 0 and, on FAT32, in the backup boot
/// sector at `backup_at` (0: none) when BS_BootSig is 0x29.
void remove_labels(io::BlockDevice& dev, const Layout& l, const std::vector<LabelFix>& fixes,
                   std::uint64_t backup_at, std::vector<check::Repair>& done) {
    for (const LabelFix& f : fixes) {
        std::vector<std::string> removed;
        for (const std::uint64_t at : f.entries) {
            std::array<std::byte, kDirEntrySize> e{};
            dev.read_at(at, e);
            const auto first = std::to_integer<std::uint8_t>(e[0]);
            const auto attr = std::to_integer<std::uint8_t>(e[dir_off::Attr]);
            if (first == 0x00 || first == kDirEntryDeleted || (attr & 0x3F) == kAttrLongName ||
                !(attr & kAttrVolumeId))
                continue;
            std::string name;
            for (std::size_t i = 0; i < 11; ++i)
                name += static_cast<char>(std::to_integer<std::uint8_t>(e[i]));
            removed.push_back(core::escape_controls(name.substr(0, name.find_last_not_of(' ') + 1)));
            e[0] = std::byte{kDirEntryDeleted};
            e[dir_off::Attr] = std::byte{0};
            dev.write_at(at, e);
        }
        bool boot = false;
        const bool no_name = f.boot_label == "NO NAME    ";
        if (f.boot_label.size() == 11) {
            const bool fat32 = l.type == FatType::fat32;
            const std::size_t sig = fat32 ? off::BootSig32 : off::BootSig16;
            const std::size_t lab = fat32 ? off::VolLab32 : off::VolLab16;
            std::array<std::byte, 11> name{};
            for (std::size_t i = 0; i < 11; ++i) name[i] = static_cast<std::byte>(f.boot_label[i]);
            for (const std::uint64_t base : {std::uint64_t{0}, fat32 ? backup_at : 0}) {
                if (base == 0 && boot) continue;  // the backup: only when there is one
                std::array<std::byte, 1> s{};
                dev.read_at(base + sig, s);
                if (std::to_integer<std::uint8_t>(s[0]) != 0x29) continue;
                dev.write_at(base + lab, name);
                boot = true;
            }
        }
        if (removed.empty() && !boot) continue;
        std::string what;
        for (const std::string& n : removed) what += fmt::format("{}\"{}\"", what.empty() ? "" : ", ", n);
        done.push_back(
            {std::string(f.code),
             fmt::format(
                 "{}{}{}{}",
                 removed.empty() ? ""
                                 : fmt::format("volume-label entr{} {} marked deleted",
                                               removed.size() == 1 ? "y" : "ies", what),
                 !removed.empty() && boot ? "; " : "",
                 !boot     ? std::string()
                 : no_name ? std::string("the boot sector's label set to \"NO NAME\" (no label)")
                           : fmt::format("the boot sector's label set to \"{}\", the root "
                                         "directory's, which Windows and Linux show",
                                         core::escape_controls(
                                             f.boot_label.substr(0, f.boot_label.find_last_not_of(' ') + 1))),
                 f.code == "fat.label.invalid" || f.code == "fat.label.mismatch" ? ", as fsck.fat -a does"
                 : f.code == "fat.label.duplicate" ? ": the root's first label, the one Windows and Linux "
                                                     "show, is kept (fsck.fat -a leaves them)"
                                                   : ": labels belong in the root; readers skip them there "
                                                     "(fsck.fat -a leaves them)")});
    }
}

/// Marks each LfnFix's entries deleted: 0xE5 and the other 31 bytes zeroed,
/// one 32-byte write per entry, the bytes fsck.fat -a writes. Zeroed, not
/// kept: 7-Zip still takes a long name from deleted long-name entries that
/// stand before a short entry, so kept bytes would leave the readers
/// disagreeing. An entry that is no longer a live long-name entry
/// (attribute 0x0F) is left. One repair reported per code.
void delete_lfn_entries(io::BlockDevice& dev, const std::vector<LfnFix>& fixes,
                        std::vector<check::Repair>& done) {
    std::map<std::string_view, std::pair<std::uint64_t, std::uint64_t>> counts;  // code: sets, entries
    for (const LfnFix& f : fixes) {
        std::uint64_t n = 0;
        for (const std::uint64_t at : f.entries) {
            std::array<std::byte, kDirEntrySize> e{};
            dev.read_at(at, e);
            const auto first = std::to_integer<std::uint8_t>(e[0]);
            if (first == 0x00 || first == kDirEntryDeleted ||
                (std::to_integer<std::uint8_t>(e[dir_off::Attr]) & 0x3F) != kAttrLongName)
                continue;
            std::array<std::byte, kDirEntrySize> cleared{};
            cleared[0] = std::byte{kDirEntryDeleted};
            dev.write_at(at, cleared);
            ++n;
        }
        if (n == 0) continue;
        ++counts[f.code].first;
        counts[f.code].second += n;
    }
    for (const auto& [code, c] : counts) {
        const char* what = code == "fat.lfn.orphan"     ? "with no short entry after them"
                           : code == "fat.lfn.checksum" ? "whose checksum names another short entry"
                                                        : "out of sequence";
        done.push_back({std::string(code),
                        fmt::format("{} set{} of long-name entries {} marked deleted ({} entr{}): readers "
                                    "skip them, so every name shown stays as it was",
                                    core::format_count(c.first), c.first == 1 ? "" : "s", what,
                                    core::format_count(c.second), c.second == 1 ? "y" : "ies")});
    }
}

/// Writes a NameFix: the new DIR_Name into the short entry and its checksum
/// into LDIR_Chksum of each LFN entry [FATGEN "Checksum Generation"], one
/// write per run of adjacent entries (one write in all unless the entries
/// cross into a cluster that does not follow), the short entry's run last.
void rename_short_entry(io::BlockDevice& dev, const NameFix& f, std::vector<check::Repair>& done) {
    const std::uint8_t sum = lfn_checksum(f.name);
    std::size_t i = 0;
    while (i < f.entries.size()) {
        std::size_t j = i + 1;
        while (j < f.entries.size() && f.entries[j] == f.entries[j - 1] + kDirEntrySize) ++j;
        std::vector<std::byte> b((j - i) * kDirEntrySize);
        dev.read_at(f.entries[i], b);
        for (std::size_t k = i; k < j; ++k) {
            const std::size_t at = (k - i) * kDirEntrySize;
            if (k + 1 == f.entries.size()) {
                for (std::size_t n = 0; n < f.name.size(); ++n) b[at + n] = std::byte{f.name[n]};
            } else {
                b[at + lfn_off::Chksum] = std::byte{sum};
            }
        }
        dev.write_at(f.entries[i], b);
        i = j;
    }
    done.push_back({f.duplicate ? "fat.name.duplicate" : "fat.name.invalid-short",
                    fmt::format("{}: the short name \"{}\"{} replaced by \"{}\"{}", core::escape_name(f.path),
                                core::escape_name(f.old_name),
                                f.duplicate ? ", which an earlier entry has," : "", short_name_dotted(f.name),
                                f.from_long_name ? ", made from the long name as Windows makes one (the "
                                                   "long name is kept)"
                                                 : ", as fsck.fat names it")});
}

/// Writes a DotFix: entries 0..slots-1 read, "." and ".." first with their
/// clusters set (DIR_FstClusHI and LO), the rest after them in order; one write.
void put_dot_entries(io::BlockDevice& dev, const DotFix& f, std::vector<check::Repair>& done) {
    std::vector<std::byte> b(std::size_t{f.slots} * kDirEntrySize), out;
    dev.read_at(f.offset, b);
    out.reserve(b.size());
    const auto entry = [&](std::uint32_t i) {
        return std::span<const std::byte>(b).subspan(std::size_t{i} * kDirEntrySize, kDirEntrySize);
    };
    for (const auto& [i, cluster] :
         {std::pair{f.dot, f.dot_cluster}, std::pair{f.dotdot, f.dotdot_cluster}}) {
        const std::size_t at = out.size();
        out.insert(out.end(), entry(i).begin(), entry(i).end());
        core::store_le16(out, at + dir_off::FstClusHI, static_cast<std::uint16_t>(cluster >> 16));
        core::store_le16(out, at + dir_off::FstClusLO, static_cast<std::uint16_t>(cluster & 0xFFFF));
    }
    for (std::uint32_t i = 0; i < f.slots; ++i)
        if (i != f.dot && i != f.dotdot) out.insert(out.end(), entry(i).begin(), entry(i).end());
    dev.write_at(f.offset, out);
    const std::string what = fmt::format(
        "{}: \".\" (cluster {}) and \"..\" (cluster {}{}) {}", core::escape_name(f.path), f.dot_cluster,
        f.dotdot_cluster, f.dotdot_cluster == 0 ? ", the root" : "",
        f.moved ? fmt::format("moved to entries 0 and 1 (they were {} and {}), the entries before them "
                              "after them (fsck.fat writes new ones there and deletes these)",
                              f.dot, f.dotdot)
                : std::string("written with their right clusters, as fsck.fat does"));
    if (f.dot_wrong) done.push_back({"fat.dir.dot", what});
    if (f.dotdot_wrong)
        done.push_back(
            {"fat.dir.dotdot", f.dot_wrong ? std::string("put in entry 1 with \".\" (above)") : what});
}

/// Which boot sector stands after the repair, decided before the first write.
enum class BootFix : std::uint8_t {
    none,
    restore_main,  ///< sector 0 rewritten from the backup boot sector (sector 0 does not validate; the backup
                   ///< does)
    refresh_backup,  ///< the backup rewritten from sector 0 (which validates)
    signature,       ///< -y: 55 AA written, when it is all sector 0 lacks and no valid backup exists
};

}  // namespace

std::vector<check::Repair> repair_volume(io::BlockDevice& dev, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options,
                                         const CollectedFixes* collected) {
    if (dev.size() < kBootSectorSize)
        throw Error(ErrorCode::corrupt, "the image is shorter than one boot sector: nothing can be repaired");
    const check::RepairPlan plan = check::plan_repairs(found, options.level);
    const std::set<std::string_view>& codes = plan.codes;
    bool errors_left = plan.errors_left;
    std::vector<check::Repair> done;

    // 0. Which copy of the boot sector is valid: a copy is a source only when
    // it validates against the volume (boot_copy_problem), so that no repair
    // ever writes a damaged sector over a good one.
    std::array<std::byte, kBootSectorSize> s0{};
    dev.read_at(0, s0);
    const std::optional<std::string> p0 = boot_copy_problem(s0, dev);
    std::optional<std::array<std::byte, kBootSectorSize>> backup;
    std::uint64_t backup_at = 0;
    if (!p0) {
        const BootSector b0 = decode_boot_sector(s0);
        const std::uint64_t at = std::uint64_t(b0.backup_boot_sector) * b0.bytes_per_sector;
        if (b0.is_fat32_shape && b0.backup_boot_sector != 0 && b0.backup_boot_sector < b0.reserved_sectors &&
            at + kBootSectorSize <= dev.size()) {
            backup.emplace();
            dev.read_at(at, *backup);
            backup_at = at;
        }
    } else if (auto b =
                   find_backup_boot_sector(dev)) {  // sector 0 untrusted: the backup where formatters put it
        backup = b->sector;
        backup_at = b->offset;
    }
    const std::optional<std::string> pb = backup
                                              ? boot_copy_problem(*backup, dev)
                                              : std::optional<std::string>("there is no backup boot sector");
    const bool main_bad = codes.count("fat.boot.signature") || codes.count("fat.boot.main-damaged");
    const bool differs = codes.count("fat.boot.backup-differs") != 0;
    BootFix fix = BootFix::none;
    std::array<std::byte, kBootSectorSize> standing = s0;  // the boot sector the volume has after the repair
    if (p0 && !pb && (main_bad || differs)) {
        fix = BootFix::restore_main;
        standing = *backup;
    } else if (!p0 && backup && differs) {
        fix = BootFix::refresh_backup;
    } else if (p0 && codes.count("fat.boot.signature") && options.level == check::RepairLevel::all) {
        std::array<std::byte, kBootSectorSize> signed0 = s0;
        signed0[off::Signature] = std::byte{0x55};
        signed0[off::Signature + 1] = std::byte{0xAA};
        if (!boot_copy_problem(signed0, dev)) {
            fix = BootFix::signature;
            standing = signed0;
        }
    }
    if ((main_bad || differs) && fix == BootFix::none) errors_left = true;  // both copies left as they are
    const BootSector bs = decode_boot_sector(standing);
    if (geometry_problem(bs))
        throw Error(ErrorCode::corrupt, "the boot sector gives no geometry: nothing can be repaired");
    const Layout l = layout_from_boot_sector(bs);
    const bool has_fsinfo = bs.is_fat32_shape && bs.fsinfo_sector != 0 &&
                            bs.fsinfo_sector < l.reserved_sectors &&
                            (std::uint64_t(bs.fsinfo_sector) + 1) * l.bytes_per_sector <= dev.size();

    // -y: lost clusters freed, and FAT copies made equal to FAT 1, only when
    // the walk proved FAT 1 against the tree through the boot sector that
    // stands (no chain or directory damage, a complete check).
    // Chains longer than their files are cut to the size (the rest freed)
    // and sizes larger than their chains cut to the chain, as fsck.fat does.
    std::vector<ClusterRun> lost;
    std::vector<ChainTrim> trims;
    std::vector<SizeTrim> sizes;
    std::vector<ChainCut> cuts;
    bool copies = false;
    // Chains that break end where they break, as fsck.fat does ("Assuming
    // EOF"): what follows becomes lost clusters, freed by the next pass once
    // nothing else is in doubt. Not while the FAT copies differ (which one
    // is right is not known) or the check did not finish.
    constexpr std::array<std::string_view, 7> kCutCodes = {
        "fat.chain.bad-cluster",  "fat.chain.cross-link", "fat.chain.free-link",        "fat.chain.loop",
        "fat.chain.out-of-range", "fat.file.start-free",  "fat.file.start-out-of-range"};
    std::vector<std::string_view> cut_codes;
    for (const std::string_view c : kCutCodes)
        if (codes.count(c)) cut_codes.push_back(c);
    if (!cut_codes.empty()) {
        const bool fatal = std::any_of(found.all().begin(), found.all().end(), [](const check::Finding& f) {
            return f.severity == check::Severity::fatal;
        });
        if (fix != BootFix::restore_main && fix != BootFix::signature && summary.complete && !fatal &&
            !codes.count("fat.fat.copies-differ") &&
            std::none_of(found.all().begin(), found.all().end(),
                         [](const check::Finding& f) { return f.code == "fat.fat.copies-differ"; })) {
            if (collected) {
                cuts = collected->cuts;
            } else {
                check::Findings scratch;
                CheckOptions o;
                o.cuts = &cuts;
                (void)check_volume(dev, scratch, o);
            }
        }
        errors_left = true;  // what the cuts leave (lost clusters, sizes) is for the next pass
    }
    const bool want_lost = codes.count("fat.chain.lost") != 0;
    const bool want_copies = codes.count("fat.fat.copies-differ") != 0;
    const bool want_trims = codes.count("fat.chain.too-long") != 0;
    const bool want_sizes = codes.count("fat.chain.too-short") != 0;
    if (want_lost || want_copies || want_trims || want_sizes) {
        const bool proven = fix != BootFix::restore_main && fix != BootFix::signature && summary.complete &&
                            !ownership_in_doubt(found);
        if (proven && (want_lost || want_trims || want_sizes) && collected) {
            if (want_lost) lost = collected->lost;
            if (want_trims) trims = collected->trims;
            if (want_sizes) sizes = collected->sizes;
        } else if (proven && (want_lost || want_trims || want_sizes)) {
            check::Findings scratch;
            CheckOptions o;
            if (want_lost) o.lost = &lost;
            if (want_trims) o.trims = &trims;
            if (want_sizes) o.sizes = &sizes;
            (void)check_volume(dev, scratch, o);
        }
        copies = proven && want_copies;
        if ((want_lost && lost.empty()) || (want_copies && !copies) || (want_trims && trims.empty()) ||
            (want_sizes && sizes.empty()))
            errors_left = true;
    }
    // -y --salvage: the lost chains saved as files FILEnnnn.CHK in new
    // directories /FOUND.nnn (chkdsk's convention, 10,000 files in each)
    // instead of freed; names and room found before the first write, so that
    // a volume without them is left untouched.
    std::vector<LostChain> chains;
    std::vector<std::string> found_dirs;
    if (options.salvage && !lost.empty()) {
        chains = lost_chains(dev, l, lost, 0xFFFFFFFFu / l.cluster_bytes());
        const std::size_t dirs = (chains.size() + kFilesPerFound - 1) / kFilesPerFound;
        try {
            Editor probe(dev, EditOptions{});
            for (unsigned n = 0; n < 1000 && found_dirs.size() < dirs; ++n) {
                std::string name = fmt::format("FOUND.{:03}", n);
                if (!probe.find(kRootDir, name)) found_dirs.push_back(std::move(name));
            }
            if (found_dirs.size() < dirs)
                throw Error(ErrorCode::refused, "FOUND.000 to FOUND.999 are all taken in the root directory");
            std::uint64_t need = probe.growth_clusters(kRootDir, std::vector<std::uint32_t>(dirs, 1));
            for (std::size_t d = 0; d < dirs; ++d) {
                const std::size_t files = std::min(kFilesPerFound, chains.size() - d * kFilesPerFound);
                need += probe.new_directory_clusters(std::vector<std::uint32_t>(files, 1));
            }
            probe.check_free(need);
        } catch (const Error& e) {
            throw Error(
                e.code(),
                fmt::format("--salvage cannot save the {} lost chain{} as files: {}; nothing was "
                            "written (fsck -y without --salvage frees them)",
                            core::format_count(chains.size()), chains.size() == 1 ? "" : "s", e.what()));
        }
        lost.clear();  // saved, not freed
    }
    // -y: entries rewritten where they stand: invalid and duplicate short names (rename_short_entry
    // below), "." and ".." (put_dot_entries), long-name entries that name nothing
    // (delete_lfn_entries), volume labels (remove_labels). One check pass collects every kind wanted;
    // none through a boot sector that is being replaced: the entries were found through it.
    std::vector<NameFix> names;
    std::vector<DotFix> dots;
    std::vector<LfnFix> lfns;
    std::vector<LabelFix> labels;
    constexpr std::array<std::string_view, 3> kLfnCodes = {"fat.lfn.orphan", "fat.lfn.checksum",
                                                           "fat.lfn.sequence"};
    constexpr std::array<std::string_view, 4> kLabelCodes = {"fat.label.invalid", "fat.label.duplicate",
                                                             "fat.label.outside-root", "fat.label.mismatch"};
    const auto any_code = [&](const auto& list) {
        return std::any_of(list.begin(), list.end(), [&](std::string_view c) { return codes.count(c) != 0; });
    };
    const bool want_invalid = codes.count("fat.name.invalid-short") != 0;
    const bool want_duplicate = codes.count("fat.name.duplicate") != 0;
    const bool want_names = want_invalid || want_duplicate;
    const bool want_dots = codes.count("fat.dir.dot") || codes.count("fat.dir.dotdot");
    const bool want_lfns = any_code(kLfnCodes);
    const bool want_labels = any_code(kLabelCodes);
    if ((want_names || want_dots || want_lfns || want_labels) &&
        (fix == BootFix::none || fix == BootFix::refresh_backup)) {
        if (collected) {
            if (want_names) names = collected->names;
            if (want_dots) dots = collected->dots;
            if (want_lfns) lfns = collected->lfns;
            if (want_labels) labels = collected->labels;
        } else {
            check::Findings scratch;
            CheckOptions o;
            if (want_names) o.names = &names;
            if (want_dots) o.dots = &dots;
            if (want_lfns) o.lfn_fixes = &lfns;
            if (want_labels) o.label_fixes = &labels;
            (void)check_volume(dev, scratch, o);
        }
    }
    // Errors are left where fewer fixes were found than the findings stand for.
    const auto fixes_left = [&](const auto& fixes, const auto& list) {
        for (const std::string_view code : list) {
            std::uint64_t wanted = 0, fixed = 0;
            for (const check::Finding& f : found.all())
                if (f.code == code) wanted += f.count;
            for (const auto& f : fixes) fixed += f.code == code;
            if (fixed < wanted) return true;
        }
        return false;
    };
    if (want_names) {
        std::erase_if(names, [&](const NameFix& f) { return f.duplicate ? !want_duplicate : !want_invalid; });
        if (check::names_left(found, names, "fat.name.invalid-short", "fat.name.duplicate"))
            errors_left = true;
    }
    if (want_dots) {
        std::set<std::string_view> wanted, fixed;
        for (const check::Finding& f : found.all())
            if (f.code == "fat.dir.dot" || f.code == "fat.dir.dotdot") wanted.insert(f.where.object);
        for (const DotFix& f : dots) fixed.insert(f.path);
        if (!std::includes(fixed.begin(), fixed.end(), wanted.begin(), wanted.end())) errors_left = true;
    }
    std::erase_if(lfns, [&](const LfnFix& f) { return !codes.count(f.code); });
    if (want_lfns && fixes_left(lfns, kLfnCodes)) errors_left = true;
    std::erase_if(labels, [&](const LabelFix& f) { return !codes.count(f.code); });
    if (want_labels && fixes_left(labels, kLabelCodes)) errors_left = true;
    // What each trim frees, read before the first write: the chain after its kept clusters.
    const std::uint32_t eoc = end_of_chain(l.type);
    const std::uint32_t eoc_min = eoc & ~7u;
    const std::uint32_t last = l.cluster_count + 1;
    std::vector<std::vector<ClusterRun>> excess(trims.size());
    std::uint64_t trimmed = 0;
    for (std::size_t i = 0; i < trims.size(); ++i) {
        std::uint32_t c = trims[i].first;
        for (std::uint64_t k = 1; k < trims[i].keep; ++k) c = read_entry(dev, l, c);
        std::uint32_t next = trims[i].keep == 0 ? c : read_entry(dev, l, c);
        for (std::uint64_t steps = 0; next >= 2 && next <= last && steps <= last; ++steps) {
            auto& runs = excess[i];
            if (!runs.empty() && runs.back().first + runs.back().count == next) {
                ++runs.back().count;
            } else {
                runs.push_back(ClusterRun{next, 1});
            }
            const std::uint32_t v = read_entry(dev, l, next);
            if (v >= eoc_min) break;
            next = v;
        }
        if (trims[i].keep != 0) trims[i].first = c;  // from here: the last cluster kept
        for (const ClusterRun& r : excess[i]) trimmed += r.count;
    }
    std::uint64_t freed = trimmed;
    for (const ClusterRun& r : lost) freed += r.count;

    const bool dirty = codes.count("fat.boot.dirty") || codes.count("fat.fat.dirty");
    const bool fsinfo_fix = has_fsinfo && (codes.count("fat.fsinfo.free-count") ||
                                           codes.count("fat.fsinfo.next-free") || freed != 0);
    // FAT[0]: the media byte of the boot sector that stands, the other bits set [FATGEN "FAT[0]"], in
    // every FAT; what fsck.fat -a writes. Only for a media byte the specification allows.
    const bool media_ok = bs.media == 0xF0 || bs.media >= 0xF8;
    const bool media_fix = codes.count("fat.fat.media") != 0 && media_ok;
    if (codes.count("fat.fat.media") && !media_ok) errors_left = true;
    const bool other = fix != BootFix::none || fsinfo_fix || copies || freed != 0 || !chains.empty() ||
                       !trims.empty() || !sizes.empty() || !cuts.empty() || media_fix || !names.empty() ||
                       !dots.empty() || !lfns.empty() || !labels.empty();
    const std::uint32_t bit = clean_bit(l.type);
    // 1. Marked dirty before the first repair (a volume that is not already).
    bool marked = false;
    if (other && !dirty && bit != 0) {
        rewrite_fat1(dev, l, [bit](std::uint32_t v) { return v & ~bit; });
        marked = true;
    }
    // 2. The boot sector from the copy that validates.
    const std::uint64_t backup_sector = backup_at / l.bytes_per_sector;
    if (fix == BootFix::restore_main) {
        dev.write_at(0, standing);
        const char* code = codes.count("fat.boot.main-damaged") ? "fat.boot.main-damaged"
                           : codes.count("fat.boot.signature")  ? "fat.boot.signature"
                                                                : "fat.boot.backup-differs";
        done.push_back({code, fmt::format("sector 0 rewritten from the backup boot sector (sector {}), which "
                                          "validates; sector 0 did not: {}",
                                          backup_sector, *p0)});
    } else if (fix == BootFix::signature) {
        dev.write_at(off::Signature, std::span(standing).subspan(off::Signature, 2));
        done.push_back({"fat.boot.signature",
                        "the signature 55 AA written at bytes 510-511 of sector 0, whose BPB is otherwise "
                        "valid and agrees with the FAT (no valid backup boot sector to copy)"});
    } else if (fix == BootFix::refresh_backup) {
        // Sector 0 as it is, but for the dirty bit, which the backup does not carry.
        std::array<std::byte, kBootSectorSize> copy = s0;
        copy[off::Reserved1_32] =
            static_cast<std::byte>(static_cast<std::uint8_t>(copy[off::Reserved1_32]) & ~0x01u);
        dev.write_at(backup_at, copy);
        done.push_back(
            {"fat.boot.backup-differs",
             pb ? fmt::format("the backup boot sector (sector {}) rewritten from sector 0, which "
                              "validates; the backup did not: {}",
                              backup_sector, *pb)
                : fmt::format("the backup boot sector (sector {}) rewritten from sector 0", backup_sector)});
    }
    if (media_fix) {
        const std::uint32_t fat0 = fat0_value(l.type, bs.media);
        set_entries(dev, l, {ClusterRun{0, 1}}, fat0);
        done.push_back(
            {"fat.fat.media", fmt::format("FAT[0] set to 0x{:X} in every FAT: the media byte 0x{:02X} "
                                          "of the boot sector, as fsck.fat -a writes it",
                                          fat0, bs.media)});
    }
    // 3. The FAT copies from FAT 1, then the lost clusters freed in every copy.
    if (copies) {
        const std::uint64_t bytes = copy_first_fat(dev, l);
        done.push_back(
            {"fat.fat.copies-differ",
             fmt::format("the other FAT cop{} rewritten from FAT 1 where {} differed ({} bytes): FAT 1 "
                         "is the copy drivers read, and every chain in it was found whole",
                         l.num_fats > 2 ? "ies" : "y", l.num_fats > 2 ? "they" : "it",
                         core::format_count(bytes))});
    }
    if (!cuts.empty()) {
        for (const ChainCut& c : cuts) {
            if (c.last != 0) {
                set_entries(dev, l, {ClusterRun{c.last, 1}}, eoc);
            } else {  // the start itself is not a cluster of the file: it has none now
                std::array<std::byte, 32> e{};
                dev.read_at(c.entry_offset, e);
                core::store_le16(e, dir_off::FstClusHI, 0);
                core::store_le16(e, dir_off::FstClusLO, 0);
                dev.write_at(c.entry_offset, e);
            }
        }
        for (const std::string_view code : cut_codes) {
            const auto n = static_cast<std::size_t>(
                std::count_if(cuts.begin(), cuts.end(), [&](const ChainCut& c) { return c.code == code; }));
            if (n == 0) continue;
            const bool cross = code == "fat.chain.cross-link";
            done.push_back(
                {std::string(code),
                 fmt::format(
                     "{} chain{} ended {}, as fsck.fat does{}", n, n == 1 ? "" : "s",
                     cross ? "before the clusters it shares with a file or directory walked first"
                           : "where it breaks (the last good cluster made end-of-chain; a start that is "
                             "no cluster of the file set to 0)",
                     cross ? " (the first owner keeps them)" : "")});
        }
    }
    if (!trims.empty()) {
        for (std::size_t i = 0; i < trims.size(); ++i) {
            if (trims[i].keep == 0) {  // an empty file: its entry gets first cluster 0 first
                std::array<std::byte, 32> e{};
                dev.read_at(trims[i].entry_offset, e);
                core::store_le16(e, dir_off::FstClusHI, 0);
                core::store_le16(e, dir_off::FstClusLO, 0);
                dev.write_at(trims[i].entry_offset, e);
            } else {
                set_entries(dev, l, {ClusterRun{trims[i].first, 1}}, eoc);
            }
            set_entries(dev, l, excess[i], 0);
        }
        done.push_back({"fat.chain.too-long",
                        fmt::format("{} file{} cut to the clusters {} size{} need{} ({} cluster{} freed), as "
                                    "fsck.fat does",
                                    trims.size(), trims.size() == 1 ? "'s chain" : "s' chains",
                                    trims.size() == 1 ? "its" : "their", trims.size() == 1 ? "" : "s",
                                    trims.size() == 1 ? "s" : "", core::format_count(trimmed),
                                    trimmed == 1 ? "" : "s")});
    }
    if (!sizes.empty()) {
        for (const SizeTrim& t : sizes) {
            std::array<std::byte, 4> b{};
            core::store_le32(b, 0, t.size);
            dev.write_at(t.entry_offset + dir_off::FileSize, b);
        }
        done.push_back(
            {"fat.chain.too-short",
             fmt::format("{} file{} cut to the bytes {} chain{} hold{}, as fsck.fat does", sizes.size(),
                         sizes.size() == 1 ? "'s size" : "s' sizes", sizes.size() == 1 ? "its" : "their",
                         sizes.size() == 1 ? "" : "s", sizes.size() == 1 ? "s" : "")});
    }
    for (const NameFix& f : names) rename_short_entry(dev, f, done);
    for (const DotFix& f : dots) put_dot_entries(dev, f, done);
    if (!lfns.empty()) delete_lfn_entries(dev, lfns, done);
    if (!labels.empty()) remove_labels(dev, l, labels, backup && !p0 ? backup_at : 0, done);
    if (freed != trimmed) {
        set_entries(dev, l, lost, 0);
        done.push_back({"fat.chain.lost",
                        fmt::format("{} lost cluster{} freed in {} run{} ({}): their FAT entries set to 0 in "
                                    "every FAT; what they held is not kept",
                                    core::format_count(freed - trimmed), freed - trimmed == 1 ? "" : "s",
                                    core::format_count(lost.size()), lost.size() == 1 ? "" : "s",
                                    core::format_size((freed - trimmed) * l.cluster_bytes()))});
    }
    // 4. FSInfo.
    if (fsinfo_fix) {
        std::array<std::byte, kBootSectorSize> s{};
        const std::uint64_t at = std::uint64_t(l.fsinfo_sector) * l.bytes_per_sector;
        dev.read_at(at, s);
        FsInfo fi = decode_fsinfo(s);
        const std::uint64_t free_now = summary.free_clusters + freed;
        if (codes.count("fat.fsinfo.free-count")) {
            done.push_back({"fat.fsinfo.free-count",
                            fmt::format("FSInfo's free count set to {} (it said {})",
                                        core::format_count(free_now), core::format_count(fi.free_count))});
            fi.free_count = static_cast<std::uint32_t>(free_now);
        } else if (freed != 0 && fi.free_count != kFsInfoUnknown) {
            fi.free_count = static_cast<std::uint32_t>(free_now);  // with the clusters just freed
        }
        if (codes.count("fat.fsinfo.next-free")) {
            done.push_back({"fat.fsinfo.next-free",
                            fmt::format("FSInfo's next-free hint set to 0xFFFFFFFF, no hint (it said {})",
                                        fi.next_free)});
            fi.next_free = kFsInfoUnknown;
        }
        encode_fsinfo(fi, s);
        dev.write_at(at, s);
    }
    // 4b. The lost chains saved as files (the editor takes FSInfo's free count down by the
    // directory clusters it allocates).
    if (!chains.empty()) save_chains(dev, l, chains, found_dirs, options, done);
    // 5. Clean last, after a barrier; only when nothing wrong is left.
    if ((dirty || marked) && !errors_left) {
        if (options.barrier) options.barrier();
        if (bit != 0) rewrite_fat1(dev, l, [bit](std::uint32_t v) { return v | bit; });
        const std::size_t r1 = l.type == FatType::fat32 ? off::Reserved1_32 : off::Reserved1_16;
        std::array<std::byte, 1> b{};
        dev.read_at(r1, b);
        if (static_cast<std::uint8_t>(b[0]) & 0x01) {
            b[0] = static_cast<std::byte>(static_cast<std::uint8_t>(b[0]) & ~0x01u);
            dev.write_at(r1, b);
        }
        if (dirty)
            done.push_back(
                {codes.count("fat.fat.dirty") ? "fat.fat.dirty" : "fat.boot.dirty",
                 "the volume marked clean (FAT[1]'s clean-shutdown bit set, BS_Reserved1's dirty bit "
                 "cleared)"});
    }
    return done;
}

}  // namespace fsimg::fat
