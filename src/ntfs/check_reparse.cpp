// Pass 6: $Extend/$Reparse:$R against the reparse points the records hold.
//
// Windows lists every reparse point of the volume in the view index $R of
// $Extend/$Reparse: key (reparse tag, file reference), no data, collation
// COLLATION_NTOFS_ULONGS (the 12-byte key as three little-endian 32-bit
// words) [NTFS-3G reparse.c: set_reparse_index, remove_reparse_index;
// FLATCAP files/reparse]. chkdsk adds a missing entry and removes a stale
// one; ntfs-3g looks the entry up when it deletes a symbolic link.
#include <fmt/format.h>

#include <map>

#include "check_internal.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"

namespace fsimg::ntfs::detail {

namespace {

constexpr std::uint64_t kExtendRecord = 11;
constexpr std::size_t kKeyBytes = 12;

struct Key {
    std::uint32_t tag = 0;
    std::uint64_t reference = 0;
    /// COLLATION_NTOFS_ULONGS: tag, the reference's low word, its high word.
    bool operator<(const Key& o) const noexcept {
        if (tag != o.tag) return tag < o.tag;
        const auto lo = [](std::uint64_t r) { return static_cast<std::uint32_t>(r); };
        if (lo(reference) != lo(o.reference)) return lo(reference) < lo(o.reference);
        return (reference >> 32) < (o.reference >> 32);
    }
};

/// The record of $Extend/$Reparse, found by name in $Extend's $I30 (it is
/// record 26 on volumes mkntfs and fsimg make, but Windows may place it
/// elsewhere). nullopt when $Extend or the name is missing (NTFS 1.x has
/// neither; the index pass reports a damaged $Extend).
std::optional<FileReference> find_reparse_file(const Context& c) {
    if (!c.used(kExtendRecord) || !(c.rec[kExtendRecord].flags & rs::has_i30)) return std::nullopt;
    const auto extend = load_record(c, kExtendRecord);
    if (!extend) return std::nullopt;
    std::optional<FileReference> found;
    try {
        for_each_index_entry(*c.vol, *extend, [&](const IndexEntry& e, const IndexEntryLocation&) {
            if (e.file_name && e.file_name->name == u"$Reparse") found = FileReference::unpack(e.reference);
            return !found;
        });
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
    return found;
}

/// The reparse tag of record n's $REPARSE_POINT (its first 4 bytes), when it
/// can be read.
std::optional<std::uint32_t> reparse_tag(const Context& c, std::uint64_t n) {
    const auto r = load_record(c, n);
    if (!r) return std::nullopt;
    try {
        const auto a = load_attribute(*c.vol, *r, AttrType::reparse_point, u"");
        if (!a || a->size() < 4) return std::nullopt;
        std::array<std::byte, 4> head{};
        if (a->non_resident)
            c.vol->read_stream(*a, 0, head);
        else
            std::copy_n(a->value.begin(), 4, head.begin());
        return core::load_le32(head, 0);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
}

}  // namespace

void check_reparse(Context& c) {
    const auto file = find_reparse_file(c);
    if (!file || !c.used(file->record)) return;
    const auto rec = load_record(c, file->record);
    if (!rec || !rec->find(AttrType::index_root, kReparseIndex.name)) return;
    const check::Location where = at_record(c, file->record, "$R");

    std::map<std::uint64_t, Key> listed;  // by record; bounded by the index, itself bounded by the image
    Tally disorder;
    std::optional<Key> previous;
    try {
        for_each_index_entry(
            *c.vol, *rec, kReparseIndex, [&](const IndexEntry& e, const IndexEntryLocation&) {
                if (e.key.size() != kKeyBytes) {
                    report(c, "ntfs.reparse.corrupt", where,
                           fmt::format("$Extend/$Reparse:$R has an entry with a {}-byte key, not {}",
                                       e.key.size(), kKeyBytes));
                    return true;
                }
                const Key k{core::load_le32(e.key, 0), core::load_le64(e.key, 4)};
                if (previous && !(*previous < k)) disorder.add(FileReference::unpack(k.reference).record);
                previous = k;
                listed.emplace(FileReference::unpack(k.reference).record, k);
                return true;
            });
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        report(c, "ntfs.reparse.corrupt", where,
               fmt::format("$Extend/$Reparse:$R cannot be walked: {}", e.what()));
        return;
    }
    if (disorder.n)
        report(
            c, "ntfs.reparse.corrupt", where,
            fmt::format("$Extend/$Reparse:$R is not in COLLATION_NTOFS_ULONGS order (or repeats a key) at {} "
                        "entr{} (records {})",
                        disorder.n, disorder.n == 1 ? "y" : "ies", first_list(disorder.first, disorder.n)));

    // Records holding a reparse point (an extension's counts for its base).
    std::map<std::uint64_t, bool> holders;
    for (std::uint64_t n = 0; n < c.rec.size(); ++n) {
        const RecordState& st = c.rec[n];
        if (!(st.flags & rs::used) || !(st.flags & rs::has_reparse)) continue;
        holders[(st.flags & rs::extension) ? st.base : n] = true;
    }
    for (const auto& [n, unused] : holders) {
        (void)unused;
        if (!c.used(n) || (c.rec[n].flags & rs::extension)) continue;  // the names pass reports the base
        const auto it = listed.find(n);
        const std::uint64_t want = FileReference{n, c.rec[n].sequence}.packed();
        if (it == listed.end() || it->second.reference != want) {
            report(c, "ntfs.reparse.missing-entry", at_record(c, n, "$REPARSE_POINT"),
                   fmt::format("{} holds a reparse point, but $Extend/$Reparse:$R has no entry for it "
                               "(file reference {} sequence {})",
                               record_name(n), n, c.rec[n].sequence));
            continue;
        }
        if (const auto tag = reparse_tag(c, n); tag && *tag != it->second.tag)
            report(
                c, "ntfs.reparse.stale-entry", at_record(c, n, "$REPARSE_POINT"),
                fmt::format("$Extend/$Reparse:$R lists {} with reparse tag 0x{:08X}, but its $REPARSE_POINT "
                            "has tag 0x{:08X}",
                            record_name(n), it->second.tag, *tag));
    }
    for (const auto& [n, k] : listed) {
        if (holders.count(n)) {
            if (k.reference == FileReference{n, c.rec[n].sequence}.packed()) continue;
        } else if (n < c.rec.size() && (c.rec[n].flags & rs::broken)) {
            continue;  // its attributes are unknown
        }
        const FileReference ref = FileReference::unpack(k.reference);
        const std::string why =
            !c.used(n) ? "a record not in use"
            : holders.count(n)
                ? fmt::format("sequence {}, but the record has sequence {}", ref.sequence, c.rec[n].sequence)
                : "a record without a $REPARSE_POINT";
        report(c, "ntfs.reparse.stale-entry", where,
               fmt::format("$Extend/$Reparse:$R lists record {} (tag 0x{:08X}): {}", n, k.tag, why));
    }
}

}  // namespace fsimg::ntfs::detail
