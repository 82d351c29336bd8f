// Pass 5 and the $UpCase check: $Bitmap (record 6) against the clusters the
// records pass claimed (lost: marked, owned by nothing; marked free but
// owned), streamed in 64 KiB pieces; $Volume's $VOLUME_INFORMATION dirty
// flag; $UpCase's size and ASCII letters (formats.md §3.2, §3.9, §3.11).
#include <fmt/format.h>

#include <algorithm>

#include "check_internal.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/ntfs/edit.hpp"

namespace fsimg::ntfs::detail {

namespace {

constexpr std::uint64_t kUpcaseBytes = 65536 * 2;

std::string clusters_text(const Context& c, std::uint64_t n) {
    return fmt::format("{} cluster{} ({})", core::format_count(n), n == 1 ? "" : "s",
                       core::format_size(n * c.g.cluster_bytes));
}

void check_bitmap(Context& c) {
    const auto r6 = load_record(c, 6);
    if (!r6) return;  // the records pass said why
    const Attribute* bm = r6->find(AttrType::data);
    const std::uint64_t need_all = core::div_ceil(c.g.cluster_count, std::uint64_t{8});
    if (!bm || bm->size() < need_all) {
        report(c, "ntfs.bitmap.size", at_record(c, 6, "$DATA"),
               fmt::format("$Bitmap's $DATA holds {} bytes, the volume's {} clusters need {}",
                           bm ? bm->size() : 0, c.g.cluster_count, need_all));
        return;
    }
    // Compared over the clusters the image holds (tracked_clusters): a
    // truncated image's missing tail is ntfs.boot.image-truncated, and a
    // sparse $Bitmap of a claimed 2^40 clusters is not read for hours.
    const std::uint64_t bits = c.tracked_clusters;
    const std::uint64_t need = core::div_ceil(bits, std::uint64_t{8});
    Tally lost, free_used;
    std::uint64_t marked = 0;
    try {
        for_each_chunk(c, *bm, need, [&](std::uint64_t at, std::span<const std::byte> buf) {
            for (std::size_t i = 0; i < buf.size(); ++i) {
                const auto byte = std::to_integer<unsigned>(buf[i]);
                const std::uint64_t first = (at + i) * 8;
                // 8 clusters at a time: the common case is "all agree".
                unsigned mine = 0;
                for (unsigned k = 0; k < 8 && first + k < bits; ++k)
                    mine |= unsigned(c.owned.test(first + k)) << k;
                const unsigned valid = first + 8 <= bits ? 0xFFu : ((1u << (bits - first)) - 1);
                const unsigned used = byte & valid;
                marked += static_cast<unsigned>(__builtin_popcount(used));
                if (used == mine) continue;
                if (c.options.bitmap_fixes) {
                    if (const auto off = c.vol->device_offset(*bm, at + i))
                        c.options.bitmap_fixes->push_back(
                            check::BitmapFix{*off, static_cast<std::uint8_t>(mine & ~used),
                                             static_cast<std::uint8_t>(used & ~mine)});
                }
                for (unsigned k = 0; k < 8 && first + k < bits; ++k) {
                    const bool u = (used >> k) & 1, m = (mine >> k) & 1;
                    if (u && !m) lost.add(first + k);
                    if (!u && m) free_used.add(first + k);
                }
            }
        });
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        report(c, "ntfs.bitmap.size", at_record(c, 6, "$DATA"),
               fmt::format("$Bitmap cannot be read: {}", e.what()));
        return;
    }
    c.summary.marked_clusters = marked;
    c.summary.free_clusters = bits - marked;
    if (free_used.n)
        c.out.add(
            "ntfs.bitmap.free-in-use", at_record(c, 6, "$DATA"),
            fmt::format("{} owned by attributes of in-use records {} marked free in $Bitmap (clusters {})",
                        clusters_text(c, free_used.n), free_used.n == 1 ? "is" : "are",
                        first_list(free_used.first, free_used.n)),
            free_used.n);
    // A record that did not parse owns clusters nobody can name: "lost" is
    // not judged then (one root cause, one finding), nor cleared.
    if (c.options.bitmap_fixes && !c.walk_complete) {
        for (check::BitmapFix& f : *c.options.bitmap_fixes) f.clear = 0;
        std::erase_if(*c.options.bitmap_fixes, [](const check::BitmapFix& f) { return f.set == 0; });
    }
    if (lost.n && c.walk_complete) {
        c.summary.lost_clusters = lost.n;
        c.out.add(
            "ntfs.bitmap.lost", at_record(c, 6, "$DATA"),
            fmt::format(
                "{} marked in use in $Bitmap belong{} to no attribute of an in-use record (clusters {})",
                clusters_text(c, lost.n), lost.n == 1 ? "s" : "", first_list(lost.first, lost.n)),
            lost.n);
    }
}

void check_volume_flags(Context& c) {
    const auto r3 = load_record(c, 3);
    if (!r3) return;
    const Attribute* vi = r3->find(AttrType::volume_information);
    if (!vi || vi->non_resident) {
        report(c, "ntfs.volume.information", at_record(c, 3), "$Volume has no resident $VOLUME_INFORMATION");
        return;
    }
    VolumeInformation info;
    try {
        info = decode_volume_information(vi->value);
    } catch (const FormatError& e) {
        report(c, "ntfs.volume.information", at_record(c, 3, "$VOLUME_INFORMATION"), e.what());
        return;
    }
    if (info.flags & 0x0001)
        report(
            c, "ntfs.volume.dirty", at_record(c, 3, "$VOLUME_INFORMATION"),
            fmt::format("the volume is marked dirty (flags 0x{:04X}): it was not unmounted cleanly, Windows "
                        "runs chkdsk on it",
                        info.flags));
}

}  // namespace

void check_upcase(Context& c) {
    const auto r10 = load_record(c, 10);
    if (!r10) return;  // the records pass says why
    const Attribute* d = r10->find(AttrType::data);
    if (!d || d->size() != kUpcaseBytes) {
        report(c, "ntfs.upcase.size", at_record(c, 10, "$DATA"),
               fmt::format("$UpCase's $DATA holds {} bytes, not the 131072 of 65536 UTF-16 units",
                           d ? d->size() : 0));
        return;
    }
    std::vector<std::byte> raw;
    try {
        raw = c.vol->read_stream(*d, kUpcaseBytes);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        report(c, "ntfs.upcase.size", at_record(c, 10, "$DATA"),
               fmt::format("$UpCase cannot be read: {}", e.what()));
        return;
    }
    std::vector<std::uint16_t> t(65536);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = core::load_le16(raw, 2 * i);
    std::vector<std::uint64_t> bad;
    std::uint64_t n_bad = 0;
    for (std::uint16_t u = 0; u < 128; ++u) {
        const std::uint16_t want = (u >= 'a' && u <= 'z') ? static_cast<std::uint16_t>(u - 32) : u;
        if (t[u] != want && n_bad++ < kFirstLocations) bad.push_back(u);
    }
    if (n_bad) {
        report(c, "ntfs.upcase.ascii", at_record(c, 10, "$DATA"),
               fmt::format("{} ASCII unit{} ({}) do not map to their upper case (a-z to A-Z, the rest to "
                           "themselves); collation uses the built-in table",
                           n_bad, n_bad == 1 ? "" : "s", first_list(bad, n_bad)));
        return;
    }
    c.upcase = std::move(t);
}

/// $LogFile's restart area (logfile_state): transactions Windows has not
/// applied, or no restart page to tell. Record 2 damage is the records pass's.
void check_logfile(Context& c) {
    if (!c.vol) return;
    switch (logfile_state(*c.vol)) {
        case LogFileState::empty:
        case LogFileState::clean:
            return;
        case LogFileState::unclean:
            report(c, "ntfs.logfile.unclean", at_record(c, 2, "$DATA"),
                   "$LogFile holds transactions Windows has not applied (it was not shut down cleanly, or "
                   "hibernated with fast startup): Windows replays them at its next mount, ntfs-3g mounts it "
                   "read-only, and fsimg label and attrib refuse to change it");
            return;
        case LogFileState::unknown:
            report(c, "ntfs.logfile.unknown", at_record(c, 2, "$DATA"),
                   "$LogFile's first page is neither empty (0xFF) nor a valid restart page (\"RSTR\" with "
                   "its fixups): whether Windows left transactions to replay is not known");
            return;
    }
}

void check_system(Context& c) {
    check_bitmap(c);
    check_volume_flags(c);
    check_logfile(c);
}

}  // namespace fsimg::ntfs::detail
