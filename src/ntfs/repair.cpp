#include "fsimg/ntfs/repair.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/io/patched_device.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/structs.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

namespace {

/// True when a record, attribute, runlist, attribute-list or $MFT finding
/// leaves the owner of a cluster or record unknown or shared: then no bit
/// is cleared and nothing is allocated from what the bitmaps mark free. A
/// wrong link count, attribute instance or attribute size does not: none
/// says what a record owns (the runlist does).
bool owners_in_doubt(const check::Findings& found) {
    return std::any_of(found.all().begin(), found.all().end(), [](const check::Finding& f) {
        const std::string_view c = f.code;
        if (c == "ntfs.record.link-count" || c == "ntfs.attr.instance" || c == "ntfs.attr.sizes")
            return false;
        return c.starts_with("ntfs.record.") || c.starts_with("ntfs.attr.") || c.starts_with("ntfs.run.") ||
               c.starts_with("ntfs.attrlist.") || c.starts_with("ntfs.mft.");
    });
}

/// The first of `codes` that `plan` answers ("" when none): the name a
/// repair made for several of them is reported under (the root cause first).
std::string_view first_planned(const check::RepairPlan& plan, std::initializer_list<std::string_view> codes) {
    const auto it = std::find_if(codes.begin(), codes.end(), [&](std::string_view c) { return plan.has(c); });
    return it == codes.end() ? std::string_view{} : *it;
}

/// Runs `change` with an editor of the volume, then finish() (the dirty
/// flag cleared if the change set it). An error other than Error(io) (a
/// volume the editor refuses, $LogFile to replay) leaves this repair
/// undone: the check after the repairs reports what is left.
void with_editor(io::BlockDevice& dev, EditOptions options, const std::function<void(Editor&)>& change) {
    try {
        Editor ed(dev, std::move(options));
        change(ed);
        ed.finish();
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
    }
}

}  // namespace

std::vector<check::Repair> repair_volume(io::BlockDevice& dev, const check::Findings& found,
                                         const check::RepairOptions& options) {
    std::vector<check::Repair> done;
    std::array<std::byte, kBootSectorSize> s0{};
    if (dev.size() < s0.size()) return done;
    dev.read_at(0, s0);
    const check::RepairPlan plan = check::plan_repairs(found, options.level);
    // Sector 0 and the backup boot sector: a copy is a source only when it
    // keeps every rule of validate_boot_sector and the volume opens through it
    // (record 0 of $MFT where it says), so that no repair writes a damaged
    // sector over a good one.
    const auto opens =
        [&dev](std::span<const std::byte, kBootSectorSize> sector) -> std::optional<std::string> {
        if (const auto p = validate_boot_sector(sector); !p.empty())
            return fmt::format("{} [{}]", p.front().message, p.front().code);
        try {
            const io::PatchedDevice through(dev, sector);
            const Volume v(through);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return std::string(e.what());
        }
        return std::nullopt;
    };
    const std::optional<std::string> p0 = opens(s0);
    if (p0) {
        const bool asked = std::any_of(plan.codes.begin(), plan.codes.end(),
                                       [](std::string_view c) { return c.substr(0, 10) == "ntfs.boot."; });
        const auto backup = find_backup_boot_sector(dev);
        if (!asked || !backup || opens(backup->sector)) return done;  // neither copy stands: both left
        dev.write_at(0, backup->sector);
        s0 = backup->sector;
        std::string_view code = "ntfs.boot.backup-differs";
        for (const auto& f : found.all())
            if (f.code.substr(0, 10) == "ntfs.boot." && f.code != "ntfs.boot.backup-differs" &&
                plan.has(f.code)) {
                code = f.code;
                break;
            }
        done.push_back(
            {std::string(code), fmt::format("sector 0 rewritten from the backup boot sector at byte "
                                            "{}, which is valid; sector 0 was not: {}",
                                            backup->offset, *p0)});
    }
    if (std::memcmp(s0.data() + 3, "NTFS    ", 8) != 0) return done;
    std::optional<Volume> vol;
    try {
        vol.emplace(dev);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return done;  // $MFT unreadable: nothing to copy from
    }
    const Geometry& g = vol->geometry();
    if (plan.has("ntfs.mftmirr.differs") || plan.has("ntfs.mftmirr.stale")) {
        try {
            const MftRecord r1 = vol->read_record(1);
            const Attribute* mirror = r1.find(AttrType::data);
            const std::uint64_t rs = g.mft_record_bytes;
            if (mirror != nullptr && mirror->non_resident) {
                const std::uint64_t n = std::min<std::uint64_t>(mirror->data_size / rs, vol->record_count());
                std::vector<std::byte> chunk(512);
                std::uint64_t copied = 0;
                for (std::uint64_t rec = 0; rec < n; ++rec) {
                    // In 512-byte pieces: with clusters smaller than a record,
                    // a record may span runs of either stream.
                    bool whole = true;
                    for (std::uint64_t at = rec * rs; at < (rec + 1) * rs; at += chunk.size()) {
                        const auto from = vol->device_offset(vol->mft_data(), at);
                        const auto to = vol->device_offset(*mirror, at);
                        if (!from || !to || *to + chunk.size() > dev.size()) {
                            whole = false;
                            break;
                        }
                        dev.read_at(*from, chunk);
                        dev.write_at(*to, chunk);
                    }
                    if (!whole) break;
                    ++copied;
                }
                if (copied > 0)
                    done.push_back(
                        {plan.has("ntfs.mftmirr.differs") ? "ntfs.mftmirr.differs" : "ntfs.mftmirr.stale",
                         fmt::format("$MFTMirr rewritten from $MFT: record{} 0..{}", copied == 1 ? "" : "s",
                                     copied - 1)});
            }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    if (plan.has("ntfs.boot.backup-differs") && !p0) {
        const std::uint64_t at = g.volume_bytes();
        if (at <= dev.size() && dev.size() - at >= kBootSectorSize) {
            dev.write_at(at, s0);
            done.push_back(
                {"ntfs.boot.backup-differs",
                 fmt::format("the backup boot sector (sector {}) rewritten from sector 0", g.total_sectors)});
        }
    }
    // -y: records marked in use that cannot be read (Editor::
    // repair_corrupt_records), as chkdsk deletes a corrupt attribute record
    // or file record segment: the attributes that decode kept when the
    // header is sound, the record freed otherwise. Only while $MFT itself
    // reads as it should (no ntfs.mft.* finding): a record number must name
    // the record. The index, orphan and bitmap repairs this leaves follow in
    // fsck's next pass, from a fresh check.
    const std::string_view freed_code =
        first_planned(plan, {"ntfs.record.baad", "ntfs.record.signature", "ntfs.record.usa",
                             "ntfs.record.fixup", "ntfs.record.first-attribute", "ntfs.record.bytes-in-use"});
    const std::string_view dropped_code =
        first_planned(plan, {"ntfs.attr.header", "ntfs.run.decode", "ntfs.record.bytes-in-use"});
    const bool mft_sound = std::none_of(found.all().begin(), found.all().end(), [](const check::Finding& f) {
        return f.code.starts_with("ntfs.mft.") || f.code == "ntfs.record.unreadable";
    });
    if ((!freed_code.empty() || !dropped_code.empty()) && mft_sound) {
        std::vector<std::uint64_t> corrupt;
        check::Findings scratch;
        CheckOptions o;
        o.corrupt_records = &corrupt;
        (void)check_volume(dev, scratch, o);
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            const Editor::CorruptRepairs n = ed.repair_corrupt_records(corrupt);
            if (n.rewritten != 0)
                done.push_back(
                    {std::string(dropped_code.empty() ? freed_code : dropped_code),
                     fmt::format("{} record{} rewritten without the {} attribute{} that did not decode (as "
                                 "chkdsk deletes a corrupt attribute record); what {} held is not kept",
                                 n.rewritten, n.rewritten == 1 ? "" : "s", n.dropped,
                                 n.dropped == 1 ? "" : "s", n.dropped == 1 ? "it" : "they")});
            if (n.resized != 0)
                done.push_back(
                    {"ntfs.record.bytes-in-use",
                     fmt::format("{} record{} given the bytes in use where {} attributes end", n.resized,
                                 n.resized == 1 ? "" : "s", n.resized == 1 ? "its" : "their")});
            if (n.freed != 0)
                done.push_back(
                    {std::string(freed_code.empty() ? dropped_code : freed_code),
                     fmt::format("{} record{} whose header or update sequence array cannot be read marked "
                                 "not in use (as chkdsk deletes a corrupt file record segment); what {} "
                                 "held is not kept",
                                 n.freed, n.freed == 1 ? "" : "s", n.freed == 1 ? "it" : "they")});
        });
    }
    // Header fields with one right value: bytes allocated and the record
    // number (preen too), a sequence number 0, flags outside 0x000F and a
    // base reference that names no base (-y).
    if (plan.has("ntfs.record.bytes-allocated") || plan.has("ntfs.record.number") ||
        plan.has("ntfs.record.sequence") || plan.has("ntfs.record.flags") || plan.has("ntfs.record.base") ||
        plan.has("ntfs.attr.missing-std-info") || plan.has("ntfs.attr.missing-data")) {
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            const Editor::FieldRepairs n = ed.repair_record_fields(options.level == check::RepairLevel::all);
            const auto say = [&](std::string_view code, std::uint64_t count, std::string_view what) {
                if (count != 0)
                    done.push_back({std::string(code),
                                    fmt::format("{} record{} given {}", count, count == 1 ? "" : "s", what)});
            };
            say("ntfs.record.bytes-allocated", n.bytes_allocated,
                fmt::format("bytes allocated {}, the boot sector's record size", g.mft_record_bytes));
            say("ntfs.record.number", n.numbers, "the header record number of their place in $MFT");
            say("ntfs.record.sequence", n.sequences, "sequence number 1 (sequence numbers start at 1)");
            say("ntfs.record.flags", n.flags,
                n.flags == 1 ? "the flags of what it holds (bits outside 0x000F cleared)"
                             : "the flags of what they hold (bits outside 0x000F cleared)");
            say("ntfs.attr.missing-std-info", n.std_info,
                "a $STANDARD_INFORMATION with the times and attributes of a $FILE_NAME");
            say("ntfs.attr.missing-data", n.data, "an empty unnamed $DATA (as chkdsk inserts one)");
            if (n.orphans != 0)
                done.push_back(
                    {"ntfs.record.base",
                     fmt::format(
                         "{} extension record{} whose base is no in-use base record of that sequence "
                         "number marked not in use (as chkdsk deletes an orphan file record segment); "
                         "what {} held is not kept",
                         n.orphans, n.orphans == 1 ? "" : "s", n.orphans == 1 ? "it" : "they")});
            say("ntfs.record.base", n.bases,
                "base reference 0: a system file, or a record holding $STANDARD_INFORMATION (which only a "
                "base record holds) whose base is no in-use base record of that sequence number");
        });
    }
    // -y: a record's attributes put back in ascending type order, those of
    // a type no NTFS version defines left out (Editor::repair_attribute_order),
    // first: the repairs below read and rewrite such records.
    if (plan.has("ntfs.attr.order")) {
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            const Editor::OrderRepairs n = ed.repair_attribute_order();
            if (n.records != 0)
                done.push_back(
                    {"ntfs.attr.order",
                     fmt::format("{} record{} rewritten with {} attributes in ascending type order{}",
                                 n.records, n.records == 1 ? "" : "s", n.records == 1 ? "its" : "their",
                                 n.dropped == 0 ? std::string()
                                                : fmt::format(" ({} attribute{} of a type no NTFS version "
                                                              "defines left out)",
                                                              n.dropped, n.dropped == 1 ? "" : "s"))});
        });
    }
    // -y: $ATTRIBUTE_LISTs rebuilt from the base and extension records they
    // index, where those agree (Editor::rebuild_attribute_lists). The
    // findings they answer leave owners in doubt for this pass: the bitmap
    // and index repairs follow in fsck's next pass, from a fresh check.
    if (plan.has("ntfs.attrlist.missing") || plan.has("ntfs.attrlist.decode") ||
        plan.has("ntfs.attrlist.entry")) {
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            const Editor::ListRepairs n = ed.rebuild_attribute_lists();
            const std::string_view code =
                first_planned(plan, {"ntfs.attrlist.decode", "ntfs.attrlist.entry", "ntfs.attrlist.missing"});
            if (n.lists != 0)
                done.push_back(
                    {std::string(code),
                     fmt::format("{} $ATTRIBUTE_LIST{} rebuilt from the records {} index", n.lists,
                                 n.lists == 1 ? "" : "s", n.lists == 1 ? "it should" : "they should")});
            if (n.freed != 0)
                done.push_back({"ntfs.attrlist.missing",
                                fmt::format("{} extension record{} that held nothing marked not in use",
                                            n.freed, n.freed == 1 ? "" : "s")});
            if (n.merged != 0)
                done.push_back(
                    {"ntfs.attrlist.missing",
                     fmt::format(
                         "{} base record{} with no room for an $ATTRIBUTE_LIST given the attributes of "
                         "{} extension records, which were then marked not in use",
                         n.merged, n.merged == 1 ? "" : "s", n.merged == 1 ? "its" : "their")});
        });
    }
    // -y: a file with no $FILE_NAME in any of its records gets back the
    // names the index entries naming it hold (Editor::restore_file_names),
    // before an index rebuild below would drop those entries. One nothing
    // names goes to found.000 (or, holding nothing, is freed) only when no
    // owner is in doubt (that takes a record and clusters), and after the
    // index rebuild when there is one: a found.000 that a cut left out of
    // the root's index is entered by it, not made a second time.
    const std::string_view index_code =
        first_planned(plan, {"ntfs.index.root-missing", "ntfs.index.corrupt", "ntfs.index.bitmap",
                             "ntfs.index.stale-entry", "ntfs.index.missing-entry", "ntfs.index.extra-entry",
                             "ntfs.index.entry-mismatch", "ntfs.index.order", "ntfs.tree.orphan"});
    const bool index_repair = !index_code.empty() && !owners_in_doubt(found);
    const auto report_names = [&](const Editor::NamesRestored& n) {
        if (n.restored != 0)
            done.push_back(
                {"ntfs.filename.missing",
                 fmt::format("{} record{} with no $FILE_NAME given back the names the index "
                             "entries naming {} hold",
                             n.restored, n.restored == 1 ? "" : "s", n.restored == 1 ? "it" : "them")});
        if (n.found != 0)
            done.push_back({"ntfs.filename.missing",
                            fmt::format("{} record{} with no $FILE_NAME that no index entry names linked "
                                        "into /{} as file0000.chk, dir0000.chk, ...",
                                        n.found, n.found == 1 ? "" : "s", n.found_dir)});
        if (n.freed != 0)
            done.push_back({"ntfs.filename.missing",
                            fmt::format("{} record{} with no $FILE_NAME that held nothing (no data, no "
                                        "cluster, no entry) marked not in use",
                                        n.freed, n.freed == 1 ? "" : "s")});
    };
    if (plan.has("ntfs.filename.missing")) {
        const bool to_found = !owners_in_doubt(found) && !index_repair;
        with_editor(dev, {options.barrier, options.now, options.clamp},
                    [&](Editor& ed) { report_names(ed.restore_file_names(to_found, options.now)); });
    }
    // $Bitmap and $MFT's $BITMAP made what the records say: bits of clusters
    // owned (records in use) that are marked free set, which gives up nothing
    // and keeps an allocator off them (preen); bits of what nothing owns
    // (records not in use) cleared (-y), only when no record, attribute or
    // runlist damage leaves an owner unknown or shared. Each byte is read,
    // changed and written alone: a cut leaves each bit old or new.
    const bool clusters = plan.has("ntfs.bitmap.free-in-use") || plan.has("ntfs.bitmap.lost");
    const bool records = plan.has("ntfs.mft-bitmap.unmarked") || plan.has("ntfs.mft-bitmap.marked-free");
    if (clusters || records) {
        const bool doubt = owners_in_doubt(found);
        std::vector<check::BitmapFix> bits, mft_bits;
        check::Findings scratch;
        CheckOptions o;
        if (clusters) o.bitmap_fixes = &bits;
        if (records) o.mft_bitmap_fixes = &mft_bits;
        (void)check_volume(dev, scratch, o);
        const auto keep = [&](std::vector<check::BitmapFix>& v, std::string_view set_code,
                              std::string_view clear_code) {
            for (check::BitmapFix& f : v) {
                if (!plan.has(set_code)) f.set = 0;
                // --salvage: lost clusters are kept (NTFS cannot save them as files yet).
                if (!plan.has(clear_code) || doubt || (options.salvage && clear_code == "ntfs.bitmap.lost"))
                    f.clear = 0;
            }
            std::erase_if(v, [](const check::BitmapFix& f) { return (f.set | f.clear) == 0; });
        };
        keep(bits, "ntfs.bitmap.free-in-use", "ntfs.bitmap.lost");
        keep(mft_bits, "ntfs.mft-bitmap.unmarked", "ntfs.mft-bitmap.marked-free");
        const check::BitmapChange b = check::apply_bitmap_fixes(dev, bits);
        const check::BitmapChange m = check::apply_bitmap_fixes(dev, mft_bits);
        const auto count = [](std::uint64_t n, std::string_view one) {
            return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
        };
        if (b.set != 0)
            done.push_back({"ntfs.bitmap.free-in-use",
                            fmt::format("{} owned by attributes of in-use records marked in use in $Bitmap",
                                        count(b.set, "cluster"))});
        if (b.cleared != 0)
            done.push_back({"ntfs.bitmap.lost",
                            fmt::format("{} that no attribute of an in-use record owns marked free in "
                                        "$Bitmap; what {} held is not kept",
                                        count(b.cleared, "cluster"), b.cleared == 1 ? "it" : "they")});
        if (m.set != 0)
            done.push_back(
                {"ntfs.mft-bitmap.unmarked",
                 fmt::format("{} in use marked in use in $MFT's $BITMAP", count(m.set, "record"))});
        if (m.cleared != 0)
            done.push_back(
                {"ntfs.mft-bitmap.marked-free",
                 fmt::format("{} not in use marked free in $MFT's $BITMAP", count(m.cleared, "record"))});
    }
    // -y: a $LogFile Windows has not replayed (or that cannot be read) emptied,
    // as ntfsfix does, with the dirty flag set first: a cut leaves it set, and
    // it is cleared (by fsck's next pass) only when the volume then checks
    // without an error.
    bool log_emptied = false;
    if (plan.has("ntfs.logfile.unclean") || plan.has("ntfs.logfile.unknown")) {
        try {
            Editor ed(dev, {});
            ed.write_volume_flags(static_cast<std::uint16_t>(ed.volume_flags() | kVolumeIsDirty));
            const std::uint64_t n = ed.empty_logfile();
            log_emptied = true;
            done.push_back(
                {plan.has("ntfs.logfile.unclean") ? "ntfs.logfile.unclean" : "ntfs.logfile.unknown",
                 fmt::format("$LogFile emptied ({} bytes set to 0xFF): the transactions Windows had "
                             "not applied are discarded",
                             n)});
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    // -y: $Extend/$Reparse:$R rebuilt from the reparse points the records
    // hold (Editor::rebuild_reparse_index), while it fits its $INDEX_ROOT.
    if (plan.has("ntfs.reparse.missing-entry") || plan.has("ntfs.reparse.stale-entry") ||
        plan.has("ntfs.reparse.corrupt")) {
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            if (const auto n = ed.rebuild_reparse_index())
                done.push_back(
                    {std::string(first_planned(plan, {"ntfs.reparse.corrupt", "ntfs.reparse.missing-entry",
                                                      "ntfs.reparse.stale-entry"})),
                     fmt::format("$Extend/$Reparse:$R rebuilt from the reparse points the records hold "
                                 "({} entr{})",
                                 *n, *n == 1 ? "y" : "ies")});
        });
    }
    // Record headers: link counts from the names, attribute instances made
    // unique and below the next instance (counts and ids: -p too).
    if (plan.has("ntfs.record.link-count") || plan.has("ntfs.attr.instance")) {
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            const Editor::HeaderRepairs n = ed.repair_record_headers();
            if (n.link_counts != 0)
                done.push_back({"ntfs.record.link-count",
                                fmt::format("{} record{} given the link count of {} names outside the DOS "
                                            "namespace",
                                            n.link_counts, n.link_counts == 1 ? "" : "s",
                                            n.link_counts == 1 ? "its" : "their")});
            if (n.instances != 0)
                done.push_back({"ntfs.attr.instance",
                                fmt::format("{} record{} given attribute instances that are unique and below "
                                            "the next instance",
                                            n.instances, n.instances == 1 ? "" : "s")});
        });
    }
    // -y: attribute sizes made what the runlist maps (a data size past the
    // allocated clusters cut to them), before the index entries copy them.
    if (plan.has("ntfs.attr.sizes")) {
        with_editor(dev, {options.barrier, 0, std::nullopt}, [&](Editor& ed) {
            const std::uint64_t n = ed.repair_attribute_sizes();
            if (n != 0)
                done.push_back(
                    {"ntfs.attr.sizes",
                     fmt::format("{} attribute{} given the allocated size of the clusters {} runlist "
                                 "maps, a data and initialized size no larger",
                                 n, n == 1 ? "" : "s", n == 1 ? "its" : "their")});
        });
    }
    // -y: directory indexes that cannot be walked (a damaged INDX block, a
    // sub-node outside the allocation, a loop), whose $BITMAP:$I30 marks
    // other blocks than the tree's, or whose entries are not their files'
    // names (stale, missing, extra, mismatched or out of order; an orphan
    // whose name gives a directory in use is a missing entry) rebuilt from
    // those names, copy on write (Editor::rebuild_indexes), once no record,
    // attribute or runlist damage leaves the owner of a cluster $Bitmap marks
    // free in doubt. The repair is reported under the first of these codes
    // found (the root cause: a damaged block hides the names it held).
    if (index_repair) {
        with_editor(dev, {options.barrier, options.now, options.clamp}, [&](Editor& ed) {
            // Records whose names give no directory in use: back into the
            // directory whose index names them (before the rebuild drops
            // that entry), the others into /found.000 (chkdsk's convention);
            // the rebuilds then index them.
            const bool relink = plan.has("ntfs.tree.orphan") || plan.has("ntfs.filename.parent") ||
                                plan.has("ntfs.filename.parent-sequence") ||
                                plan.has("ntfs.index.entry-mismatch") || plan.has("ntfs.index.extra-entry");
            Editor::Relinked relinked = relink ? ed.relink_orphans(false, options.now) : Editor::Relinked{};
            std::uint64_t n = ed.rebuild_indexes();
            if (relink) {
                const Editor::Relinked more = ed.relink_orphans(true, options.now);
                relinked.back += more.back;
                relinked.found += more.found;
                relinked.cycle_back += more.cycle_back;
                relinked.cycle_found += more.cycle_found;
                relinked.found_dir = more.found_dir;
                if (more.back + more.found + more.cycle_back + more.cycle_found != 0)
                    n += ed.rebuild_indexes();
            }
            Editor::NamesRestored named;
            if (plan.has("ntfs.filename.missing")) {
                named = ed.restore_file_names(true, options.now);
                if (named.found + named.freed != 0) n += ed.rebuild_indexes();
            }
            std::string_view back =
                first_planned(plan, {"ntfs.filename.parent", "ntfs.filename.parent-sequence"});
            if (back.empty()) back = "ntfs.tree.orphan";
            if (relinked.back != 0)
                done.push_back(
                    {std::string(back),
                     fmt::format("{} record{} whose names gave no directory in use linked back into the "
                                 "director{} whose index named {}",
                                 relinked.back, relinked.back == 1 ? "" : "s",
                                 relinked.back == 1 ? "y" : "ies", relinked.back == 1 ? "it" : "them")});
            const std::uint64_t cycles = relinked.cycle_back + relinked.cycle_found;
            if (cycles != 0)
                done.push_back(
                    {std::string(plan.has("ntfs.tree.orphan") ? std::string_view("ntfs.tree.orphan")
                                                              : index_code),
                     fmt::format("{} director{} whose names led back into {} own subtree (a cycle that never "
                                 "reaches the root) linked {}",
                                 cycles, cycles == 1 ? "y" : "ies", cycles == 1 ? "its" : "their",
                                 relinked.cycle_found == 0
                                     ? std::string("back into the directory whose index named it")
                                 : relinked.cycle_back == 0
                                     ? fmt::format("into /{}", relinked.found_dir)
                                     : fmt::format("back where an index named them or into /{}",
                                                   relinked.found_dir))});
            if (relinked.found != 0)
                done.push_back(
                    {"ntfs.tree.orphan",
                     fmt::format("{} record{} whose directory is gone linked into /{}", relinked.found,
                                 relinked.found == 1 ? "" : "s", relinked.found_dir)});
            if (n != 0 && (relinked.back + relinked.found + cycles == 0 || index_code != "ntfs.tree.orphan"))
                done.push_back({std::string(index_code),
                                fmt::format("{} director{} index rebuilt from the names of the files in {}",
                                            n, n == 1 ? "y's" : "ies'", n == 1 ? "it" : "them")});
            report_names(named);
        });
    }
    // Index entries whose sizes are not the file's: copied from its $DATA.
    if (plan.has("ntfs.index.sizes")) {
        try {
            Editor ed(dev, {});
            const std::uint64_t n = ed.repair_index_sizes();
            if (n != 0)
                done.push_back(
                    {"ntfs.index.sizes",
                     fmt::format("{} index entr{} given the data and allocated sizes of the file's "
                                 "$DATA",
                                 n, n == 1 ? "y" : "ies")});
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    if (options.barrier && !done.empty()) options.barrier();
    // Last: the dirty flag cleared, when the volume now checks without an
    // error and $LogFile holds nothing for Windows to replay (with the flag
    // set Windows would run chkdsk; clear, it trusts the volume).
    if (plan.has("ntfs.volume.dirty") && !log_emptied) {
        check::Findings after;
        (void)check_volume(dev, after);
        const bool errors = std::any_of(after.all().begin(), after.all().end(), [](const check::Finding& f) {
            return f.severity == check::Severity::error || f.severity == check::Severity::fatal;
        });
        if (!errors) {
            try {
                Editor ed(dev, {});
                const LogFileState log = logfile_state(Volume(dev));
                if ((ed.volume_flags() & kVolumeIsDirty) != 0 &&
                    (log == LogFileState::empty || log == LogFileState::clean)) {
                    ed.write_volume_flags(static_cast<std::uint16_t>(ed.volume_flags() & ~kVolumeIsDirty));
                    done.push_back(
                        {"ntfs.volume.dirty", "$Volume's dirty flag cleared: the volume is marked clean"});
                }
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
            }
        }
    }
    return done;
}

}  // namespace fsimg::ntfs
