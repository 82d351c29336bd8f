#include "fsimg/exfat/repair.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <set>
#include <span>
#include <string>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/exfat/edit.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/exfat/volume.hpp"

namespace fsimg::exfat {

namespace {

/// What --salvage saves: the runs of consecutive lost clusters, the file
/// name of each, and the directory they go in.
struct Salvage {
    std::vector<ClusterRun> runs;
    std::vector<std::string> names;
    bool new_directory = false;  ///< /LOST+FOUND is made (else it exists)
};

constexpr std::string_view kLostFound = "LOST+FOUND";

/// The lost clusters of `lost_bits` (bitmap bytes at volume offsets, their
/// `clear` bits the lost clusters [EXFAT §7.1.5: bit n-2 is cluster n]) as
/// runs, with a free name for each in /LOST+FOUND and the room checked.
/// Throws Error (nothing written) when /LOST+FOUND is a file or the volume
/// has no room for the directory's entries.
Salvage plan_salvage(io::BlockDevice& dev, const std::vector<BitmapFix>& lost_bits) {
    Salvage out;
    const Volume vol(dev);
    const std::uint64_t cb = vol.cluster_bytes();
    std::vector<std::uint32_t> clusters;
    for (const BitmapFix& f : lost_bits) {
        std::uint64_t base = 0;  // bitmap byte index where the run holding f.offset starts
        for (const ClusterRun& r : vol.bitmap_runs()) {
            const std::uint64_t at = vol.cluster_offset(r.first), bytes = std::uint64_t(r.count) * cb;
            if (f.offset >= at && f.offset < at + bytes) {
                const std::uint64_t index = base + (f.offset - at);
                for (unsigned k = 0; k < 8; ++k)
                    if ((f.clear >> k) & 1) clusters.push_back(static_cast<std::uint32_t>(index * 8 + k + 2));
                break;
            }
            base += bytes;
        }
    }
    std::sort(clusters.begin(), clusters.end());
    for (const std::uint32_t c : clusters) {
        if (!out.runs.empty() && out.runs.back().first + out.runs.back().count == c) {
            ++out.runs.back().count;
        } else {
            out.runs.push_back(ClusterRun{c, 1});
        }
    }
    try {
        Editor probe(dev, EditOptions{});
        const auto existing = probe.find(kRootDir, kLostFound);
        if (existing && !existing->is_directory())
            throw Error(ErrorCode::refused, "/LOST+FOUND is a file, not a directory");
        out.new_directory = !existing;
        const DirId dir = existing ? probe.directory_of(*existing) : kRootDir;
        std::vector<std::uint32_t> sets;
        for (std::uint64_t n = 0; out.names.size() < out.runs.size() && n <= 9999999; ++n) {
            std::string name = fmt::format("FILE{:07}.CHK", n);
            if (existing && probe.find(dir, name)) continue;
            sets.push_back(Editor::entry_slots(name));
            out.names.push_back(std::move(name));
        }
        if (out.names.size() < out.runs.size())
            throw Error(ErrorCode::refused,
                        "FILE0000000.CHK to FILE9999999.CHK are all taken in /LOST+FOUND");
        const std::uint32_t lf_set = Editor::entry_slots(kLostFound);
        const std::uint64_t need = existing ? probe.growth_clusters(dir, sets)
                                            : probe.growth_clusters(kRootDir, std::span(&lf_set, 1)) +
                                                  probe.new_directory_clusters(sets);
        probe.check_free(need);
    } catch (const Error& e) {
        throw Error(e.code(), fmt::format("--salvage cannot save the {} run{} of lost clusters as files: {}; "
                                          "nothing was written (fsck -y without --salvage frees them)",
                                          core::format_count(out.runs.size()),
                                          out.runs.size() == 1 ? "" : "s", e.what()));
    }
    return out;
}

/// Writes what plan_salvage planned through the editor (its order: the
/// directory's cluster, then entries; the lost clusters stay marked in use
/// throughout, so a cut leaves them lost, never free under a file).
void save_runs(io::BlockDevice& dev, const Salvage& plan, const check::RepairOptions& options,
               std::vector<check::Repair>& done) {
    EditOptions eo;
    eo.now = options.now;
    eo.clamp = options.clamp;
    Editor ed(dev, eo);
    DirId dir = kRootDir;
    if (plan.new_directory) {
        dir = ed.directory_of(ed.add_directory(kRootDir, kLostFound, NewEntryInfo{}));
    } else if (const auto lf = ed.find(kRootDir, kLostFound)) {
        dir = ed.directory_of(*lf);
    }
    std::uint64_t clusters = 0;
    for (std::size_t i = 0; i < plan.runs.size(); ++i) {
        ed.add_extent_file(dir, plan.names[i], plan.runs[i].first, plan.runs[i].count, NewEntryInfo{});
        clusters += plan.runs[i].count;
    }
    ed.finish();
    const std::size_t n = plan.runs.size();
    done.push_back(
        {"exfat.bitmap.lost",
         fmt::format(
             "{} run{} of lost clusters ({} cluster{}, {}) saved as file{} /LOST+FOUND/{}{} (--salvage, "
             "as fsck.exfat -s): {} the run's clusters whole, NoFatChain",
             core::format_count(n), n == 1 ? "" : "s", core::format_count(clusters), clusters == 1 ? "" : "s",
             core::format_size(clusters * ed.cluster_bytes()), n == 1 ? "" : "s", plan.names.front(),
             n == 1 ? "" : fmt::format(" .. /LOST+FOUND/{}", plan.names.back()),
             n == 1 ? "the file holds" : "each file holds")});
}

/// Keeps the set fixes a repair at `level` may write: a NameHash wrong under a
/// right SetChecksum (the set was written whole, its hash by another up-case
/// rule: preen and -y; left when another error names the same path), or a
/// wrong SetChecksum (-y only: the entries are taken as they are, as
/// exfatprogs' expected repair of its file_invalid_clus image keeps them,
/// also when another error names the file or the bitmap calls its clusters
/// free: the next pass, reading the set, repairs those), and every NameHash
/// when the up-case table is in doubt. Returns false when a checksum or hash
/// finding is left unrepaired.
bool keep_set_fixes(std::vector<SetFix>& fixes, const check::Findings& found, check::RepairLevel level,
                    bool upcase_doubt, const std::vector<EntryFix>& entry_fixes) {
    std::set<std::string_view> other, wrong;
    for (const check::Finding& f : found.all()) {
        const bool set_code = f.code == "exfat.set.checksum" || f.code == "exfat.set.name-hash";
        if (set_code) {
            wrong.insert(f.where.object);
        } else if (f.severity == check::Severity::error || f.severity == check::Severity::fatal) {
            other.insert(f.where.object);
        }
    }
    std::erase_if(fixes, [&](const SetFix& f) {
        return (f.checksum_was_right && other.count(f.path)) || (upcase_doubt && f.name_hash) ||
               (!f.checksum_was_right && level != check::RepairLevel::all);
    });
    std::set<std::string> fixed;  // copies: the erase below moves the fixes' paths
    for (const SetFix& f : fixes) fixed.insert(f.path);
    // An entry fix writes its set whole, with the SetChecksum and NameHash that fit it.
    for (const EntryFix& f : entry_fixes) {
        if (f.code == "exfat.stream.first-cluster") {
            fixed.insert(f.path);
            std::erase_if(fixes, [&](const SetFix& s) { return s.path == f.path; });
        }
    }
    return std::all_of(wrong.begin(), wrong.end(),
                       [&](std::string_view p) { return fixed.count(std::string(p)) != 0; });
}

/// The codes entry fixes answer (EntryFix).
constexpr std::array<std::string_view, 8> kEntryCodes = {
    "exfat.set.secondary-count",  "exfat.set.no-stream",        "exfat.set.name-length",
    "exfat.set.orphan-secondary", "exfat.set.unknown-critical", "exfat.dir.system-entry",
    "exfat.stream.first-cluster", "exfat.dir.entry-after-end"};

/// Writes an entry fix: each run of adjacent entries in one write, the run
/// holding the first entry (a set's File entry, whose SetChecksum covers
/// the others) last.
void write_entries(io::BlockDevice& dev, const std::vector<std::uint64_t>& entries,
                   std::span<const std::byte> bytes) {
    std::vector<std::pair<std::size_t, std::size_t>> pieces;  // [first, last] entry indexes
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i != 0 && entries[i] == entries[i - 1] + kDirEntrySize) {
            pieces.back().second = i;
        } else {
            pieces.emplace_back(i, i);
        }
    }
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it)
        dev.write_at(entries[it->first],
                     bytes.subspan(it->first * kDirEntrySize, (it->second - it->first + 1) * kDirEntrySize));
}

}  // namespace

std::vector<check::Repair> repair_volume(io::BlockDevice& dev, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options,
                                         const CollectedFixes* collected, bool* walk_kept) {
    std::vector<check::Repair> done;
    if (walk_kept) *walk_kept = false;
    std::array<std::byte, 512> s{};
    if (dev.size() < s.size()) return done;
    const check::RepairPlan plan = check::plan_repairs(found, options.level);
    const std::set<std::string_view>& codes = plan.codes;
    bool errors_left = plan.errors_left;
    // 0. The boot regions, each 12 sectors: a copy is a source only when it
    // is whole (its checksum right, every rule of validate_boot_sector kept:
    // read_boot_region's use_backup), so no repair writes a damaged region
    // over a good one [EXFAT §3.1: the backup region].
    const auto main_bad = [&] {
        for (const char* c : {"exfat.boot.checksum", "exfat.boot.main-zeroed", "exfat.boot.signature",
                              "exfat.boot.jump_boot"})
            if (codes.count(c)) return c;
        return static_cast<const char*>(nullptr);
    }();
    const bool backup_bad =
        codes.count("exfat.boot.backup-checksum") || codes.count("exfat.boot.backup-differs");
    if (main_bad || backup_bad) {
        std::optional<BootRegion> br;
        try {
            br.emplace(read_boot_region(dev));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
        const std::uint64_t region = br ? 12ull * br->bytes_per_sector : 0;
        if (br && br->use_backup && main_bad && dev.size() >= 2 * region) {
            std::vector<std::byte> backup(region);
            dev.read_at(region, backup);
            dev.write_at(0, backup);
            done.push_back(
                {main_bad, fmt::format("the main boot region (sectors 0..11) rewritten from the backup "
                                       "boot region (sectors 12..23), which is whole; the main one was "
                                       "not: {}",
                                       br->main_damage)});
        } else if (br && !br->use_backup && br->problems.empty() && br->main.checksum_ok && backup_bad &&
                   dev.size() >= 2 * region) {
            // The main region as it is, VolumeDirty cleared: the flag is kept
            // current in the main region only (outside the checksum).
            std::vector<std::byte> main(region);
            dev.read_at(0, main);
            std::uint16_t f = core::load_le16(main, off::VolumeFlags);
            core::store_le16(main, off::VolumeFlags, static_cast<std::uint16_t>(f & ~kVolumeFlagVolumeDirty));
            dev.write_at(region, main);
            done.push_back(
                {codes.count("exfat.boot.backup-checksum") ? "exfat.boot.backup-checksum"
                                                           : "exfat.boot.backup-differs",
                 "the backup boot region (sectors 12..23) rewritten from the main one, which is whole"});
        } else {
            errors_left = true;  // neither copy is whole: both are left as they are
        }
    }
    dev.read_at(0, s);
    if (std::memcmp(s.data() + off::FileSystemName, "EXFAT   ", 8) != 0) return done;
    const bool dirty = codes.count("exfat.boot.dirty") != 0;
    // The allocation bitmap from the walk: clusters owned but marked free are
    // marked (preen: nothing is given up, and a writer trusting the bitmap
    // would overwrite them); lost clusters are cleared (-y: what they held is
    // not kept) only when nothing leaves their owner in doubt.
    const bool want_set = codes.count("exfat.bitmap.free-in-use") != 0;
    const bool want_clear = codes.count("exfat.bitmap.lost") != 0;
    // Entry sets whose NameHash or SetChecksum is wrong (set_repairs below).
    const bool want_sets = codes.count("exfat.set.name-hash") || codes.count("exfat.set.checksum");
    bool fatal = !summary.complete, doubt = false, upcase_doubt = false;
    for (const check::Finding& f : found.all()) {
        const std::string_view c = f.code;
        if (f.severity == check::Severity::fatal) fatal = true;
        if (c.starts_with("exfat.chain.") || c.starts_with("exfat.dir.") || c.starts_with("exfat.stream.") ||
            c == "exfat.bitmap.length" || c == "exfat.bitmap.missing")
            doubt = true;
        if (c.starts_with("exfat.upcase.")) upcase_doubt = true;
    }
    std::vector<BitmapFix> fixes;
    std::vector<SetFix> set_fixes;
    // Chains that break or do not fit their DataLength (-y): ended, or the
    // DataLength cut, as fsck.fat does on FAT (chain_fixes below). Not on a
    // TexFAT volume (two FATs), nor while a cross-link leaves it open whose
    // clusters a chain's length counts; breaks are ended regardless.
    constexpr std::array<std::string_view, 6> kChainCodes = {
        "exfat.chain.out-of-range", "exfat.chain.bad-cluster", "exfat.chain.loop",
        "exfat.chain.too-long",     "exfat.chain.too-short",   "exfat.chain.cross-link"};
    const bool want_chains = std::any_of(kChainCodes.begin(), kChainCodes.end(),
                                         [&](std::string_view c) { return codes.count(c) != 0; });
    // The FAT is found through sector 0 (read after any boot-region repair
    // above): not while a boot region was found damaged in this pass (the
    // next pass, after the rewrite, ends the chains).
    const bool no_chain_fixes =
        static_cast<std::uint8_t>(s[off::NumberOfFats]) != 1 || main_bad || backup_bad;
    const bool cross = found.has("exfat.chain.cross-link");
    std::vector<ChainFix> chain_fixes;
    // Names that are invalid or repeat an earlier one of the directory (-y).
    const bool want_renames =
        (codes.count("exfat.name.invalid") || codes.count("exfat.name.duplicate")) && !upcase_doubt;
    std::vector<RenameFix> renames;
    // Broken or misplaced entry sets and entries, FirstCluster without data (-y).
    const bool want_entries =
        !no_chain_fixes && std::any_of(kEntryCodes.begin(), kEntryCodes.end(),
                                       [&](std::string_view c) { return codes.count(c) != 0; });
    std::vector<EntryFix> entry_fixes;
    if ((want_set || want_clear || want_sets || want_renames || want_entries ||
         (want_chains && summary.complete && !no_chain_fixes)) &&
        !fatal) {
        // What the check collected, unless a boot region was rewritten
        // above: then the walk reads the volume as it is now.
        CollectedFixes walked;
        if (collected == nullptr || main_bad || backup_bad) {
            check::Findings scratch;
            CheckOptions o;
            walked.collect_with(o);
            (void)check_volume(dev, scratch, o);
            collected = &walked;
        }
        if (want_set || want_clear) fixes = collected->bitmap;
        if (want_sets) set_fixes = collected->sets;
        if (want_chains && summary.complete && !no_chain_fixes) chain_fixes = collected->chains;
        if (want_renames) renames = collected->renames;
        if (want_entries) entry_fixes = collected->entries;
    }
    std::erase_if(entry_fixes, [&](const EntryFix& f) { return !codes.count(f.code); });
    for (const std::string_view c : kEntryCodes) {
        if (!codes.count(c)) continue;
        std::uint64_t wanted = 0;  // one fix per entry; per directory for entries after the end
        for (const check::Finding& f : found.all())
            if (f.code == c) wanted += c == "exfat.dir.entry-after-end" ? 1 : f.count;
        if (std::uint64_t(std::count_if(entry_fixes.begin(), entry_fixes.end(),
                                        [&](const EntryFix& f) { return f.code == c; })) < wanted)
            errors_left = true;
    }
    // What a set left out of the tree owned is lost, and what one taken back
    // in holds is checked: the next pass sees both.
    if (!entry_fixes.empty()) errors_left = true;
    std::uint64_t set_bits = 0, cleared_bits = 0;
    std::vector<BitmapFix> lost_bits;  // --salvage: the lost clusters' bits, kept set
    if (want_set || want_clear) {
        for (BitmapFix& f : fixes) {
            if (!want_set) f.set = 0;
            if (!want_clear || doubt) f.clear = 0;
            if (options.salvage && f.clear != 0) {
                lost_bits.push_back({f.offset, 0, f.clear});
                f.clear = 0;
            }
            set_bits += static_cast<unsigned>(std::popcount(f.set));
            cleared_bits += static_cast<unsigned>(std::popcount(f.clear));
        }
        std::erase_if(fixes, [](const BitmapFix& f) { return (f.set | f.clear) == 0; });
        // Bits left clear: clusters only a set whose checksum fails claims (check_summary).
        std::uint64_t free_in_use = 0;
        for (const check::Finding& f : found.all())
            if (f.code == "exfat.bitmap.free-in-use") free_in_use += f.count;
        if ((want_set && set_bits < free_in_use) || (want_clear && cleared_bits == 0 && lost_bits.empty()))
            errors_left = true;
    }
    // -y --salvage: each run of consecutive lost clusters saved as a file
    // FILEnnnnnnn.CHK in /LOST+FOUND (fsck.exfat -s's convention; the
    // directory made when there is none), NoFatChain over the run; names and
    // room found before the first write.
    Salvage salvage;
    if (!lost_bits.empty()) salvage = plan_salvage(dev, lost_bits);
    if (want_sets) {
        if (!keep_set_fixes(set_fixes, found, options.level, upcase_doubt, entry_fixes)) errors_left = true;
    }
    const bool bitmap_changes = !fixes.empty();
    std::erase_if(chain_fixes, [&](const ChainFix& f) {
        return !codes.count(f.code) ||
               (cross && (f.code == "exfat.chain.too-long" || f.code == "exfat.chain.too-short"));
    });
    if (want_chains) {
        const auto wanted =
            std::count_if(found.all().begin(), found.all().end(), [&](const check::Finding& f) {
                return std::find(kChainCodes.begin(), kChainCodes.end(), f.code) != kChainCodes.end();
            });
        // A cut leaves lost clusters behind, for the next pass.
        if (static_cast<std::size_t>(wanted) > chain_fixes.size() ||
            std::any_of(chain_fixes.begin(), chain_fixes.end(),
                        [](const ChainFix& f) { return f.end_at != 0; }))
            errors_left = true;
    }
    // A set another repair of this pass writes is renamed in the next one
    // (the rename writes the whole set as the check read it).
    std::erase_if(renames, [&](const RenameFix& f) {
        return std::any_of(set_fixes.begin(), set_fixes.end(),
                           [&](const SetFix& s) { return s.path == f.path; }) ||
               std::any_of(entry_fixes.begin(), entry_fixes.end(),
                           [&](const EntryFix& e) { return e.path == f.path; }) ||
               std::any_of(chain_fixes.begin(), chain_fixes.end(),
                           [&](const ChainFix& c) { return c.path == f.path && c.length; }) ||
               !codes.count(f.duplicate ? "exfat.name.duplicate" : "exfat.name.invalid");
    });
    if (check::names_left(found, renames, "exfat.name.invalid", "exfat.name.duplicate")) errors_left = true;
    // A chain fix of a set an entry fix writes whole waits for the next pass.
    std::erase_if(chain_fixes, [&](const ChainFix& c) {
        return c.length && std::any_of(entry_fixes.begin(), entry_fixes.end(),
                                       [&](const EntryFix& e) { return e.path == c.path; });
    });
    const bool sets_change =
        !set_fixes.empty() || !chain_fixes.empty() || !renames.empty() || !entry_fixes.empty();
    // Nothing below writes what a walk of the tree reads, but for these.
    if (walk_kept) *walk_kept = !sets_change && salvage.runs.empty() && !main_bad && !backup_bad;
    const bool percent = codes.count("exfat.boot.percent_in_use") ||
                         codes.count("exfat.bitmap.percent-in-use") || bitmap_changes;
    std::uint16_t flags = core::load_le16(s, off::VolumeFlags);
    auto write_flags = [&](std::uint16_t v) {
        std::array<std::byte, 2> b{};
        core::store_le16(b, 0, v);
        dev.write_at(off::VolumeFlags, b);
        flags = v;
    };
    // 1. VolumeDirty set before the first repair.
    bool marked = false;
    if ((percent || sets_change || !salvage.runs.empty()) && !dirty) {
        write_flags(flags | kVolumeFlagVolumeDirty);
        marked = true;
    }
    // The bitmap bytes, each read, changed and written back (runs of adjacent bytes together).
    check::apply_bitmap_fixes(dev, fixes);
    if (set_bits != 0)
        done.push_back(
            {"exfat.bitmap.free-in-use",
             fmt::format("{} cluster{} owned by files, directories or system objects marked in use "
                         "in the allocation bitmap",
                         core::format_count(set_bits), set_bits == 1 ? "" : "s")});
    if (cleared_bits != 0)
        done.push_back(
            {"exfat.bitmap.lost",
             fmt::format("{} lost cluster{} marked free in the allocation bitmap; what {} held is not kept",
                         core::format_count(cleared_bits), cleared_bits == 1 ? "" : "s",
                         cleared_bits == 1 ? "it" : "they")});
    // The entry sets: NameHash first, then the SetChecksum that covers it, so
    // that a cut between the two leaves a set whose checksum is wrong, as it
    // was (or, with only its NameHash wrong before, one finding for another).
    for (const SetFix& f : set_fixes) {
        std::array<std::byte, 2> b{};
        if (f.data_length) {
            std::array<std::byte, 8> v{};
            core::store_le64(v, 0, *f.valid_data_length);
            dev.write_at(f.stream_entry + stream_off::ValidDataLength, v);
            core::store_le64(v, 0, f.data_length->second);
            dev.write_at(f.stream_entry + stream_off::DataLength, v);
        }
        if (f.name_hash) {
            core::store_le16(b, 0, *f.name_hash);
            dev.write_at(f.stream_entry + stream_off::NameHash, b);
            done.push_back({"exfat.set.name-hash",
                            fmt::format("{}: NameHash set to {:04X}, the hash of its up-cased name{}",
                                        core::escape_name(f.path), *f.name_hash,
                                        f.checksum_was_right ? " (SetChecksum recomputed with it)" : "")});
        }
        core::store_le16(b, 0, f.set_checksum);
        dev.write_at(f.file_entry + file_off::SetChecksum, b);
        if (!f.checksum_was_right && !f.data_length)
            done.push_back({"exfat.set.checksum", fmt::format("{}: SetChecksum set to {:04X}, what the set's "
                                                              "entries sum to",
                                                              core::escape_name(f.path), f.set_checksum)});
        else if (!f.checksum_was_right)
            done.push_back(
                {"exfat.set.checksum",
                 fmt::format(
                     "{}: DataLength cut from {} to {} bytes, the clusters of its extent the allocation "
                     "bitmap marks (the rest is free: the DataLength was damaged, not the bitmap), "
                     "and SetChecksum set to {:04X}, what the set's entries then sum to",
                     core::escape_name(f.path), f.data_length->first, f.data_length->second,
                     f.set_checksum)});
    }
    // The chains: an end-of-chain mark, or a DataLength (ValidDataLength no
    // larger) with the SetChecksum that covers it, the Stream Extension and
    // File entries in one write when they are adjacent (they nearly always
    // are), the stream first otherwise.
    const std::uint64_t fat_at = std::uint64_t(core::load_le32(s, off::FatOffset))
                                 << static_cast<unsigned>(s[off::BytesPerSectorShift]);
    for (const ChainFix& f : chain_fixes) {
        if (f.end_at != 0) {
            std::array<std::byte, 4> b{};
            core::store_le32(b, 0, kFatEndOfChain);
            dev.write_at(fat_at + std::uint64_t(f.end_at) * 4, b);
            done.push_back(
                {std::string(f.code),
                 fmt::format("{}: the chain ended at cluster {} ({}); the clusters after it are "
                             "freed by the next pass",
                             core::escape_name(f.path), f.end_at,
                             f.code == "exfat.chain.too-long"     ? "the last its DataLength needs"
                             : f.code == "exfat.chain.cross-link" ? "before the clusters it shares with "
                                                                    "a file or directory walked first"
                                                                  : "where its link was wrong")});
        }
        if (!f.length || f.entries.size() < 2) continue;
        std::vector<std::byte> set(f.entries.size() * kDirEntrySize);
        for (std::size_t i = 0; i < f.entries.size(); ++i)
            dev.read_at(f.entries[i], std::span(set).subspan(i * kDirEntrySize, kDirEntrySize));
        const std::uint64_t old = core::load_le64(set, kDirEntrySize + stream_off::DataLength);
        const std::uint64_t valid = core::load_le64(set, kDirEntrySize + stream_off::ValidDataLength);
        core::store_le64(set, kDirEntrySize + stream_off::DataLength, *f.length);
        core::store_le64(set, kDirEntrySize + stream_off::ValidDataLength, std::min(valid, *f.length));
        core::store_le16(set, file_off::SetChecksum, entry_set_checksum(set));
        if (f.entries[1] == f.entries[0] + kDirEntrySize) {
            dev.write_at(f.entries[0], std::span(set).first(2 * kDirEntrySize));
        } else {
            dev.write_at(f.entries[1], std::span(set).subspan(kDirEntrySize, kDirEntrySize));
            dev.write_at(f.entries[0], std::span(set).first(kDirEntrySize));
        }
        done.push_back(
            {std::string(f.code), fmt::format("{}: DataLength cut from {} to {} bytes, what its chain holds",
                                              core::escape_name(f.path), old, *f.length)});
    }
    // Renames: each run of adjacent entries in one write (the whole set, in
    // nearly every case), the run holding the File entry and its SetChecksum last.
    for (const RenameFix& f : renames) {
        write_entries(dev, f.entries, f.set);
        done.push_back(
            {f.duplicate ? "exfat.name.duplicate" : "exfat.name.invalid",
             fmt::format("{}: renamed \"{}\"{}", core::escape_name(f.path), core::escape_name(f.new_name),
                         f.duplicate ? " (an earlier entry of the directory has its name)"
                                     : " (each unit names may not hold made '_')")});
    }
    // Broken and misplaced entries, FirstCluster without data.
    for (const EntryFix& f : entry_fixes) {
        if (f.entries.size() * kDirEntrySize != f.bytes.size()) continue;
        write_entries(dev, f.entries, f.bytes);
        done.push_back({std::string(f.code), fmt::format("{}: {}", core::escape_name(f.path), f.action)});
    }
    const std::uint64_t marked_now = summary.marked_clusters + set_bits - cleared_bits;
    if (percent && summary.cluster_count > 0) {
        const auto pct = static_cast<std::uint8_t>(marked_now * 100 / summary.cluster_count);
        const auto was = static_cast<unsigned>(s[off::PercentInUse]);
        const bool asked =
            codes.count("exfat.boot.percent_in_use") || codes.count("exfat.bitmap.percent-in-use");
        if (asked || (pct != was && was != kPercentInUseUnknown)) {
            const std::array<std::byte, 1> b{static_cast<std::byte>(pct)};
            dev.write_at(off::PercentInUse, b);
            if (asked)
                done.push_back({codes.count("exfat.boot.percent_in_use") ? "exfat.boot.percent_in_use"
                                                                         : "exfat.bitmap.percent-in-use",
                                fmt::format("PercentInUse set to {} (it said {})", unsigned(pct), was)});
        }
    }
    if (!salvage.runs.empty()) save_runs(dev, salvage, options, done);
    // 2. Clean last, after a barrier; only when nothing wrong is left.
    if ((dirty || marked) && !errors_left) {
        if (options.barrier) options.barrier();
        write_flags(static_cast<std::uint16_t>(flags & ~kVolumeFlagVolumeDirty));
        if (dirty) done.push_back({"exfat.boot.dirty", "VolumeDirty cleared: the volume is marked clean"});
    }
    return done;
}

}  // namespace fsimg::exfat
