// ntfs/edit.hpp: label, serial and attributes of an NTFS volume, changed in
// place in the order the header gives.
#include "fsimg/ntfs/edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include "fsimg/check/repair.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

constexpr std::size_t kVolumeFlagsOffset = 0x0A;    // in the $VOLUME_INFORMATION value
constexpr std::size_t kSiAttributesOffset = 0x20;   // in the $STANDARD_INFORMATION value
constexpr std::size_t kIndexKeyOffset = 0x10;       // an index entry's key [FLATCAP concepts/index_entry]
constexpr std::size_t kFnAttributesOffset = 0x38;   // in a $FILE_NAME value
constexpr std::size_t kIndexRootNodeOffset = 0x10;  // the node header in an $INDEX_ROOT value
constexpr std::uint16_t kLogNoClient = 0xFFFF;      // restart area: no client in use [NTFS-3G logfile.h]
constexpr std::uint16_t kRestartVolumeIsClean = 0x0002;
constexpr std::size_t kRecordLinkCount =
    0x12;  // MFT record header: hard link count [FLATCAP concepts/file_record]

/// The next update sequence number: never 0 (the value a zeroed sector tail
/// holds) nor 0xFFFF.
std::uint16_t next_usn(std::uint16_t usn) noexcept {
    const std::uint16_t n = static_cast<std::uint16_t>(usn + 1);
    return n == 0 || n == 0xFFFF ? 1 : n;
}

/// Re-protects a block whose fixups were removed (an MFT record or an INDX
/// block): the update sequence array at the header's offset 4, a new number.
void protect(std::span<std::byte> block) {
    const std::uint16_t usa = core::load_le16(block, 4);
    apply_fixups(block, usa, next_usn(core::load_le16(block, usa)));
}

}  // namespace

LogFileState logfile_state(const Volume& v) {
    std::optional<Attribute> data;
    try {
        const MftRecord r = v.read_record(kLogFileRecord);
        data = load_attribute(v, r, AttrType::data);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return LogFileState::unknown;
    }
    if (!data || data->size() < 512) return LogFileState::unknown;
    // One restart page: its signature, fixups, and the restart area's LSN and state.
    struct Page {
        std::uint64_t lsn = 0;
        bool clean = false;
    };
    const auto page_at = [&](std::uint64_t at, std::uint32_t bytes) -> std::optional<Page> {
        if (bytes < 512 || bytes > 65536 || (bytes & (bytes - 1)) != 0 || at + bytes > data->size())
            return std::nullopt;
        std::vector<std::byte> p(bytes);
        try {
            v.read_stream(*data, at, p);
            if (std::memcmp(p.data(), "RSTR", 4) != 0 && std::memcmp(p.data(), "CHKD", 4) != 0)
                return std::nullopt;
            if (verify_and_remove_fixups(p)) return std::nullopt;
            const std::uint16_t ra = core::load_le16(p, 0x18);
            if (ra % 8 != 0 || ra + 0x10u > bytes) return std::nullopt;
            return Page{core::load_le64(p, ra),
                        core::load_le16(p, ra + 0x0C) == kLogNoClient ||
                            (core::load_le16(p, ra + 0x0E) & kRestartVolumeIsClean) != 0};
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return std::nullopt;
        }
    };
    std::array<std::byte, 512> first{};
    try {
        v.read_stream(*data, 0, first);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return LogFileState::unknown;
    }
    if (std::all_of(first.begin(), first.end(), [](std::byte b) { return b == std::byte{0xFF}; }))
        return LogFileState::empty;
    // The first page's system page size places the second (NTFS-3G reads both).
    const std::uint32_t page = core::load_le32(first, 0x10);
    const auto a = page_at(0, page), b = page_at(page, page);
    if (!a && !b) return LogFileState::unknown;
    const Page& newest = !b ? *a : !a ? *b : (b->lsn > a->lsn ? *b : *a);
    return newest.clean ? LogFileState::clean : LogFileState::unclean;
}

Editor::Editor(io::BlockDevice& device, EditOptions options)
    : dev_(device), options_(std::move(options)), vol_(device), upcase_(load_upcase(vol_)) {
    serial_ = core::load_le64(vol_.boot_sector_bytes(), off::VolumeSerialNumber);
    const Record r3 = read_record(kVolumeRecord);
    const Attribute* info = r3.parsed.find(AttrType::volume_information);
    if (info == nullptr || info->non_resident || info->value.size() < 12)
        throw Error(ErrorCode::corrupt, "$Volume (MFT record 3) has no resident $VOLUME_INFORMATION");
    volume_flags_ = decode_volume_information(info->value).flags;
    const MftRecord r1 = vol_.read_record(1);
    if (const Attribute* m = r1.find(AttrType::data); m != nullptr && m->non_resident) {
        vol_.check_runs(*m);
        mirror_ = *m;
        mirror_records_ =
            std::min<std::uint64_t>(m->data_size / vol_.geometry().mft_record_bytes, vol_.record_count());
    }
}

Editor::Record Editor::read_record(std::uint64_t number) const {
    const std::uint64_t rs = vol_.geometry().mft_record_bytes;
    if (number >= vol_.record_count())
        throw Error(ErrorCode::corrupt, fmt::format("MFT record {} does not exist: $MFT holds {} records",
                                                    number, vol_.record_count()));
    Record r;
    r.bytes.resize(static_cast<std::size_t>(rs));
    vol_.read_stream(vol_.mft_data(), number * rs, r.bytes);
    r.parsed =
        parse_mft_record(r.bytes, number, vol_.device_offset(vol_.mft_data(), number * rs).value_or(0));
    if (!r.parsed.in_use())
        throw Error(ErrorCode::corrupt, fmt::format("MFT record {} is not in use", number));
    return r;
}

void Editor::write_stream(const Attribute& attr, std::uint64_t offset, std::span<const std::byte> bytes) {
    // Pieces of 512 bytes (a record or block may span runs when clusters are
    // smaller), written as one write where their device bytes are adjacent.
    constexpr std::uint64_t piece = 512;
    std::uint64_t done = 0;
    while (done < bytes.size()) {
        const auto start = vol_.device_offset(attr, offset + done);
        if (!start)
            throw Error(ErrorCode::corrupt,
                        fmt::format("MFT record {}: byte {} of its {} is not mapped by a run", attr.record,
                                    offset + done, attr.display_name()));
        std::uint64_t len = std::min<std::uint64_t>(piece, bytes.size() - done);
        while (done + len < bytes.size()) {
            const auto next = vol_.device_offset(attr, offset + done + len);
            if (!next || *next != *start + len) break;
            len += std::min<std::uint64_t>(piece, bytes.size() - done - len);
        }
        if (*start + len > dev_.size())
            throw Error(ErrorCode::corrupt, fmt::format("MFT record {}: its {} passes the end of the image",
                                                        attr.record, attr.display_name()));
        dev_.write_at(*start, bytes.subspan(static_cast<std::size_t>(done), static_cast<std::size_t>(len)));
        done += len;
    }
}

void Editor::write_record(std::uint64_t number, std::vector<std::byte> plain) {
    protect(plain);
    const std::uint64_t at = number * vol_.geometry().mft_record_bytes;
    write_stream(vol_.mft_data(), at, plain);
    if (mirror_ && number < mirror_records_) write_stream(*mirror_, at, plain);
}

std::optional<Editor::DataOut> Editor::plan_data_out(const Record& r) const {
    const Attribute* chosen = nullptr;
    for (const Attribute& a : r.parsed.attributes)
        if (a.kind() == AttrType::data && !a.non_resident && a.flags == 0 &&
            (chosen == nullptr || a.value.size() > chosen->value.size()))
            chosen = &a;
    if (chosen == nullptr || chosen->value.empty()) return std::nullopt;
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    const std::uint64_t size = chosen->value.size();
    const std::uint64_t need = (size + cb - 1) / cb;
    if (free_clusters() < need) return std::nullopt;  // a full volume: the caller leaves the record
    DataOut d;
    d.extents = free_extents(need);
    const std::uint64_t clusters = clusters_of(d.extents);
    auto moved = build_nonresident_attribute(AttrType::data, chosen->name, runs_of(d.extents),
                                             {clusters * cb, size, size}, clusters - 1);
    if (moved.size() >= chosen->length) return std::nullopt;
    core::store_le16(moved, 0x0E, chosen->instance);  // the attribute header's instance
    // Every $DATA stream again, in its place, the chosen one non-resident.
    std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fresh;
    for (const Attribute& a : r.parsed.attributes)
        if (a.kind() == AttrType::data)
            fresh.emplace_back(a.type, &a == chosen
                                           ? moved
                                           : std::vector<std::byte>(r.bytes.begin() + a.offset,
                                                                    r.bytes.begin() + a.offset + a.length));
    auto bytes = rebuilt_record(
        r, [](const Attribute& a) { return a.kind() == AttrType::data; }, fresh,
        r.parsed.header.next_instance);
    if (!bytes) return std::nullopt;
    d.value.assign(chosen->value.begin(), chosen->value.end());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (const Extent& e : d.extents) runs.emplace_back(e.lcn, e.clusters);
    d.allocate = cluster_bits(runs, true);
    std::vector<std::byte> raw = *bytes;
    protect(raw);
    d.record.parsed = parse_mft_record(raw, r.parsed.number, r.parsed.byte_offset);
    d.record.bytes = std::move(*bytes);
    return d;
}

void Editor::write_data_out(const DataOut& d) {
    const std::uint32_t cb = vol_.geometry().cluster_bytes;
    std::uint64_t at = 0;  // bytes of the value written
    for (const Extent& e : d.extents) {
        std::vector<std::byte> buf(static_cast<std::size_t>(e.clusters * cb), std::byte{0});
        if (at < d.value.size()) {
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), d.value.size() - at));
            std::copy_n(d.value.begin() + static_cast<std::ptrdiff_t>(at), n, buf.begin());
        }
        dev_.write_at(e.lcn * cb, buf);
        at += buf.size();
    }
    (void)check::apply_bitmap_fixes(dev_, d.allocate);
}

void Editor::set_volume_flags(std::uint16_t flags) {
    Record r = read_record(kVolumeRecord);
    const Attribute* info = r.parsed.find(AttrType::volume_information);
    if (info == nullptr || info->non_resident || info->value.size() < 12)
        throw Error(ErrorCode::corrupt, "$Volume (MFT record 3) has no resident $VOLUME_INFORMATION");
    core::store_le16(r.bytes, info->offset + info->value_offset + kVolumeFlagsOffset, flags);
    write_record(kVolumeRecord, std::move(r.bytes));
}

void Editor::write_volume_flags(std::uint16_t flags) {
    set_volume_flags(flags);
    volume_flags_ = flags;
}

std::uint64_t Editor::empty_logfile() {
    const Record r = read_record(kLogFileRecord);
    const auto data = load_attribute(vol_, r.parsed, AttrType::data);
    if (!data || !data->non_resident)
        throw Error(ErrorCode::corrupt, "$LogFile (MFT record 2) has no non-resident $DATA");
    vol_.check_runs(*data);
    const std::uint64_t size = data->data_size;
    const std::vector<std::byte> ff(std::size_t{1} << 20, std::byte{0xFF});
    for (std::uint64_t at = 0; at < size; at += ff.size()) {
        const std::uint64_t n = std::min<std::uint64_t>(ff.size(), size - at);
        write_stream(*data, at, std::span(ff).first(static_cast<std::size_t>(n)));
    }
    return size;
}

std::uint64_t Editor::repair_index_sizes() {
    keys_.clear();
    namers_.clear();
    constexpr std::uint64_t kExtendRecord = 11;
    constexpr std::size_t kFnAllocated = 0x28, kFnData = 0x30;
    constexpr std::uint32_t kFnDirectory = 0x10000000;
    // The directories, and which of them lie in $Extend's tree (not judged).
    std::vector<std::uint64_t> dirs;
    (void)scan_records(vol_, 0, [&](std::uint64_t n, std::span<std::byte> raw) {
        std::vector<std::byte> copy(raw.begin(), raw.end());
        try {
            const MftRecord r = parse_mft_record(copy, n);
            if (r.in_use() && r.is_directory() && r.header.base_record == 0) dirs.push_back(n);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    });
    std::set<std::uint64_t> system{kExtendRecord};
    std::vector<std::uint64_t> todo{kExtendRecord};
    while (!todo.empty() && system.size() <= dirs.size()) {
        const std::uint64_t d = todo.back();
        todo.pop_back();
        try {
            for_each_index_entry(vol_, read_record(d).parsed,
                                 [&](const IndexEntry& e, const IndexEntryLocation&) {
                                     const std::uint64_t t = FileReference::unpack(e.reference).record;
                                     if (e.file_name && (e.file_name->file_attributes & kFnDirectory) &&
                                         system.insert(t).second)
                                         todo.push_back(t);
                                     return true;
                                 });
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    std::uint64_t changed = 0;
    for (const std::uint64_t d : dirs) {
        if (system.count(d)) continue;
        struct Patch {
            IndexEntryLocation at;
            std::uint64_t allocated = 0, data = 0;
        };
        std::vector<Patch> patches;
        Record dir;
        try {
            dir = read_record(d);
            for_each_index_entry(vol_, dir.parsed, [&](const IndexEntry& e, const IndexEntryLocation& loc) {
                const std::uint64_t t = FileReference::unpack(e.reference).record;
                if (!e.file_name || t < kFirstNonSystemRecord ||
                    (e.file_name->file_attributes & kFnDirectory))
                    return true;
                try {
                    const Record f = read_record(t);
                    if (f.parsed.is_directory() || f.parsed.header.base_record != 0) return true;
                    const auto data = load_attribute(vol_, f.parsed, AttrType::data);
                    if (!data || data->size() == e.file_name->data_size) return true;
                    const auto [allocated, size] = entry_sizes(*data);
                    patches.push_back({loc, allocated, size});
                } catch (const Error& x) {
                    if (x.code() == ErrorCode::io) throw;
                }
                return true;
            });
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            continue;
        }
        if (patches.empty()) continue;
        const auto apply = [](std::span<std::byte> node, std::size_t key, const Patch& p) {
            if (key + kFnData + 8 > node.size()) return false;
            core::store_le64(node, key + kFnAllocated, p.allocated);
            core::store_le64(node, key + kFnData, p.data);
            return true;
        };
        // The root's entries: one rewrite of the directory's record.
        const Attribute* ir = dir.parsed.find(AttrType::index_root, u"$I30");
        bool root = false;
        for (const Patch& p : patches) {
            if (p.at.block || ir == nullptr || ir->non_resident) continue;
            const std::size_t end = ir->offset + ir->length;
            if (apply(std::span(dir.bytes).first(end),
                      ir->offset + ir->value_offset + p.at.offset + kIndexKeyOffset, p)) {
                root = true;
                ++changed;
            }
        }
        if (root) write_record(d, std::move(dir.bytes));
        // Each INDX block once, with all its entries.
        std::set<std::uint64_t> blocks;
        for (const Patch& p : patches)
            if (p.at.block) blocks.insert(*p.at.block);
        if (blocks.empty() || ir == nullptr) continue;
        try {
            const Record again = read_record(d);
            const auto alloc = load_attribute(vol_, again.parsed, AttrType::index_allocation, u"$I30");
            if (!alloc) continue;
            const std::uint64_t bytes = decode_index_root(ir->value).index_block_bytes;
            for (const std::uint64_t b : blocks) {
                std::vector<std::byte> block(static_cast<std::size_t>(bytes));
                vol_.read_stream(*alloc, b * bytes, block);
                if (verify_and_remove_fixups(block)) continue;
                std::uint64_t n = 0;
                for (const Patch& p : patches)
                    if (p.at.block == b && apply(block, p.at.offset + kIndexKeyOffset, p)) ++n;
                if (n == 0) continue;
                protect(block);
                write_stream(*alloc, b * bytes, block);
                changed += n;
            }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    return changed;
}

void Editor::begin() {
    if (begun_) return;
    // Before the first write: a $LogFile with transactions Windows has not
    // applied would be replayed over the change.
    const LogFileState log = options_.metadata_copy ? LogFileState::empty : logfile_state(vol_);
    if (log == LogFileState::unclean || log == LogFileState::unknown)
        throw Error(ErrorCode::refused,
                    log == LogFileState::unclean
                        ? "$LogFile holds transactions Windows has not applied (Windows was not shut down "
                          "cleanly, or hibernated with fast startup); start Windows and shut it down fully "
                          "(or run fsimg fsck -y or ntfsfix, which discard them) before changing this volume"
                        : "$LogFile has no valid restart page, so whether Windows left transactions to "
                          "replay is not known; run chkdsk (or ntfsfix) before changing this volume");
    begun_ = true;
    if (!(volume_flags_ & kVolumeIsDirty)) set_volume_flags(volume_flags_ | kVolumeIsDirty);
}

void Editor::finish() {
    if (!begun_) return;
    if (options_.barrier) options_.barrier();
    if (!(volume_flags_ & kVolumeIsDirty)) set_volume_flags(volume_flags_);
    begun_ = false;
}

FileEntry Editor::entry_of(std::uint64_t record, std::string name) const {
    const Record r = read_record(record);
    const Attribute* si = r.parsed.find(AttrType::standard_information);
    if (si == nullptr || si->non_resident || si->value.size() < kSiAttributesOffset + 4)
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record {} has no resident $STANDARD_INFORMATION", record));
    FileEntry e;
    e.record = record;
    e.name = std::move(name);
    e.is_root = record == kRootRecord;
    e.is_directory = r.parsed.is_directory();
    e.attributes = core::load_le32(si->value, kSiAttributesOffset);
    return e;
}

std::optional<FileEntry> Editor::lookup(std::string_view path) {
    const auto t = resolve_path(vol_, path, upcase_);
    if (!t) return std::nullopt;
    return entry_of(t->record, t->record == kRootRecord ? "/" : core::utf16_to_utf8_lossy(t->name.name));
}

std::optional<FileEntry> Editor::find(std::uint64_t dir, std::string_view name) {
    // The keys this editor holds of the directory (index_keys) answer without
    // reading its index again: an exact name first, else one equal but for case.
    if (keys_.count(dir) != 0) {
        const auto named = keys_named(dir, core::utf8_to_utf16(name));
        if (named.empty()) return std::nullopt;
        return entry_of(named.front()->file.record, core::utf16_to_utf8_lossy(named.front()->name));
    }
    const Record d = read_record(dir);
    const auto e = find_in_directory(vol_, d.parsed, core::utf8_to_utf16(name), upcase_);
    if (!e || !e->file_name) return std::nullopt;
    return entry_of(FileReference::unpack(e->reference).record,
                    core::utf16_to_utf8_lossy(e->file_name->name));
}

void Editor::set_attributes(const FileEntry& file, std::uint32_t set, std::uint32_t clear) {
    if (((set | clear) & ~kSettableAttributes) != 0)
        throw Error(ErrorCode::usage, "only read-only, hidden, system and archive can be set or cleared");
    Record r = read_record(file.record);
    const Attribute* si = r.parsed.find(AttrType::standard_information);
    if (si == nullptr || si->non_resident || si->value.size() < kSiAttributesOffset + 4)
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record {} has no resident $STANDARD_INFORMATION", file.record));
    const std::size_t at = si->offset + si->value_offset + kSiAttributesOffset;
    const std::uint32_t old = core::load_le32(r.bytes, at);
    const std::uint32_t now = (old & ~clear) | set;
    if (now == old) return;
    const MftRecord parsed = r.parsed;
    begin();
    core::store_le32(r.bytes, at, now);
    write_record(file.record, std::move(r.bytes));
    // The copies in the parents' index entries: the bits changed, the rest as stored.
    patch_entries(file.record, parsed, [&](std::span<std::byte> key_at) {
        const std::uint32_t v = core::load_le32(key_at, kFnAttributesOffset);
        core::store_le32(key_at, kFnAttributesOffset, (v & ~(set | clear)) | (now & (set | clear)));
    });
}

void Editor::patch_entries(std::uint64_t file, const MftRecord& r,
                           const std::function<void(std::span<std::byte>)>& patch) {
    // Every parent its names give (a hard link in another directory too).
    std::set<std::uint64_t> parents;
    for (const Attribute& a : r.attributes) {
        if (a.kind() != AttrType::file_name || a.non_resident) continue;
        try {
            parents.insert(decode_file_name(a.value).parent.record);
        } catch (const FormatError&) {
            throw Error(ErrorCode::corrupt, fmt::format("MFT record {}: a $FILE_NAME does not decode", file));
        }
    }
    constexpr std::size_t kKeyBytes = kFnAttributesOffset + 4;  // what a patch may touch
    for (const std::uint64_t p : parents) {
        if (p == file && file != kRootRecord) continue;
        keys_.erase(p);
        namers_.erase(p);  // the keys' copies change
        Record dir = read_record(p);
        std::vector<IndexEntryLocation> found;
        for_each_index_entry(vol_, dir.parsed, [&](const IndexEntry& e, const IndexEntryLocation& loc) {
            if (FileReference::unpack(e.reference).record == file && e.key.size() >= kKeyBytes)
                found.push_back(loc);
            return true;
        });
        bool root_changed = false;
        std::optional<Attribute> alloc;
        for (const IndexEntryLocation& loc : found) {
            if (!loc.block) {
                const Attribute* ir = dir.parsed.find(AttrType::index_root, u"$I30");
                if (ir == nullptr || ir->non_resident) throw Error(ErrorCode::corrupt, "no $INDEX_ROOT:$I30");
                const std::size_t key = ir->offset + ir->value_offset + loc.offset + kIndexKeyOffset;
                if (key + kKeyBytes > ir->offset + ir->length)
                    throw Error(ErrorCode::corrupt,
                                fmt::format("MFT record {}: an $I30 entry passes $INDEX_ROOT", p));
                patch(std::span(dir.bytes).subspan(key, kKeyBytes));
                root_changed = true;
                continue;
            }
            if (!alloc) alloc = load_attribute(vol_, dir.parsed, AttrType::index_allocation, u"$I30");
            const Attribute* ir = dir.parsed.find(AttrType::index_root, u"$I30");
            if (!alloc || ir == nullptr) throw Error(ErrorCode::corrupt, "no $INDEX_ALLOCATION:$I30");
            const IndexRoot root = decode_index_root(ir->value);
            const std::uint64_t bytes = root.index_block_bytes;
            std::vector<std::byte> block(static_cast<std::size_t>(bytes));
            vol_.read_stream(*alloc, *loc.block * bytes, block);
            if (verify_and_remove_fixups(block))
                throw Error(ErrorCode::corrupt,
                            fmt::format("MFT record {}: INDX block {} fails its fixups", p, *loc.block));
            const std::size_t key = loc.offset + kIndexKeyOffset;
            if (key + kKeyBytes > block.size())
                throw Error(ErrorCode::corrupt,
                            fmt::format("MFT record {}: an $I30 entry passes INDX block {}", p, *loc.block));
            patch(std::span(block).subspan(key, kKeyBytes));
            protect(block);
            write_stream(*alloc, *loc.block * bytes, block);
        }
        if (root_changed) write_record(p, std::move(dir.bytes));
    }
}

namespace {

constexpr std::uint16_t kEntryHasSubnode = 0x01;  // index entry flags [FLATCAP concepts/index_entry]
constexpr std::uint16_t kEntryLast = 0x02;
constexpr std::size_t kKeyNameOffset = 0x42;  // a $FILE_NAME key's name; its length in units at 0x40

/// `record` (fixups removed) with resident attribute `a`'s value replaced by
/// `value`: the attributes after it moved, bytes in use updated, the rest of
/// the record zeroed. Error(unsupported) when it no longer fits.
std::vector<std::byte> with_value(const std::vector<std::byte>& record, const MftRecord& parsed,
                                  const Attribute& a, std::span<const std::byte> value) {
    const std::uint32_t in_use = parsed.header.bytes_in_use;
    const auto length = static_cast<std::uint32_t>(r8(a.value_offset + value.size()));
    std::vector<std::byte> attr(record.begin() + a.offset, record.begin() + a.offset + a.value_offset);
    attr.resize(length);
    core::store_le32(attr, 4, length);
    core::store_le32(attr, 0x10, static_cast<std::uint32_t>(value.size()));
    std::copy(value.begin(), value.end(), attr.begin() + a.value_offset);
    const std::uint64_t new_in_use = std::uint64_t{in_use} - a.length + length;
    if (new_in_use > parsed.header.bytes_allocated)
        throw Error(ErrorCode::unsupported,
                    fmt::format("MFT record {} has no room for its new {}", parsed.number, a.display_name()));
    std::vector<std::byte> out(record.begin(), record.begin() + a.offset);
    out.insert(out.end(), attr.begin(), attr.end());
    out.insert(out.end(), record.begin() + a.offset + a.length, record.begin() + in_use);
    core::store_le32(out, 0x18, static_cast<std::uint32_t>(new_in_use));
    out.resize(record.size());
    return out;
}

/// Removes the index entries at `offsets` (from `node`'s start, as
/// IndexEntryLocation gives them) from the node whose header lies at
/// `header` in `node`: the entries after them moved down, index length
/// (and with `root`, allocated length) lowered, the freed tail zeroed.
/// Returns the bytes removed.
std::uint32_t remove_entries(std::vector<std::byte>& node, std::size_t header,
                             std::vector<std::uint32_t> offsets, bool root) {
    std::sort(offsets.rbegin(), offsets.rend());
    const std::uint32_t index_length = core::load_le32(node, header + 4);
    std::size_t end = header + index_length;
    if (end > node.size()) throw Error(ErrorCode::corrupt, "an index node's length passes the node");
    std::uint32_t removed = 0;
    for (const std::uint32_t o : offsets) {
        const std::uint16_t len = core::load_le16(node, o + 8);
        if (len < 16 || o + len > end) throw Error(ErrorCode::corrupt, "an index entry passes its node");
        std::copy(node.begin() + o + len, node.begin() + static_cast<std::ptrdiff_t>(end), node.begin() + o);
        std::fill(node.begin() + static_cast<std::ptrdiff_t>(end - len),
                  node.begin() + static_cast<std::ptrdiff_t>(end), std::byte{0});
        end -= len;
        removed += len;
    }
    core::store_le32(node, header + 4, index_length - removed);
    if (root) core::store_le32(node, header + 8, core::load_le32(node, header + 8) - removed);
    return removed;
}

/// Puts `entries` (each at the offset from the node header of the entry it
/// goes before; offsets in ascending order, equal ones in collation order)
/// into the node whose header lies at `header` in `node`: the entries from
/// there moved up, index length (and with `root`, allocated length) raised.
/// False when the node has no room (a block's allocated length).
bool insert_entries(std::vector<std::byte>& node, std::size_t header,
                    const std::vector<std::pair<std::uint32_t, std::vector<std::byte>>>& entries, bool root) {
    const std::uint32_t index_length = core::load_le32(node, header + 4);
    if (header + std::uint64_t{index_length} > node.size()) return false;
    std::vector<std::byte> region(node.begin() + static_cast<std::ptrdiff_t>(header),
                                  node.begin() + static_cast<std::ptrdiff_t>(header + index_length));
    // From the last insertion point down, so each offset still names its entry; at one offset
    // the later one first, so the earlier ends before it.
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
        if (it->first > region.size()) return false;
        region.insert(region.begin() + it->first, it->second.begin(), it->second.end());
    }
    const auto length = static_cast<std::uint32_t>(region.size());
    if (root) {
        node.resize(header + length);
    } else if (length > core::load_le32(node, header + 8) || header + std::uint64_t{length} > node.size()) {
        return false;
    }
    std::copy(region.begin(), region.end(), node.begin() + static_cast<std::ptrdiff_t>(header));
    core::store_le32(node, header + 4, length);
    if (root) core::store_le32(node, header + 8, length);
    return true;
}

}  // namespace

std::optional<Editor::IndexInsert> Editor::plan_insert(std::uint64_t dir, std::vector<IndexKey> keys) const {
    const auto before = [&](std::u16string_view a, std::u16string_view b) {
        const int c = upcase_.collate(a, b);
        return c != 0 ? c < 0 : a < b;
    };
    std::sort(keys.begin(), keys.end(),
              [&](const IndexKey& a, const IndexKey& b) { return before(a.name, b.name); });
    const Record d = read_record(dir);
    if (d.parsed.find(AttrType::attribute_list) != nullptr) return std::nullopt;
    const Attribute* ir = d.parsed.find(AttrType::index_root, u"$I30");
    if (ir == nullptr || ir->non_resident) return std::nullopt;
    try {
        const IndexRoot root = decode_index_root(ir->value);
        const std::uint32_t block_bytes = root.index_block_bytes;
        const std::uint32_t per = index_vcns_per_block(vol_, block_bytes);
        std::optional<Attribute> alloc;
        // Each key's leaf: nullopt for the root, else a block; and the offset it goes to.
        std::map<std::optional<std::uint64_t>, std::vector<std::pair<std::uint32_t, std::vector<std::byte>>>>
            nodes;
        std::map<std::uint64_t, std::vector<std::byte>> blocks;  // plain bytes of the blocks reached
        // The entry of a node (its bytes from the node header) that `name` goes before: the first
        // that is last, has no $FILE_NAME key or sorts after it [FLATCAP concepts/index_record].
        // Read in place, no entry copied: this walk runs for every new name.
        struct Next {
            std::uint32_t offset = 0;
            std::uint16_t flags = 0;
            std::optional<std::uint64_t> child_vcn;
        };
        std::array<char16_t, 255> units{};
        const auto next_entry = [&](std::span<const std::byte> node,
                                    std::u16string_view name) -> std::optional<Next> {
            if (node.size() < 16) return std::nullopt;
            const std::uint32_t first = core::load_le32(node, 0), length = core::load_le32(node, 4);
            if (length > node.size() || first < 16 || first >= length) return std::nullopt;
            for (std::uint32_t off = first; off + 16 <= length;) {
                const std::uint16_t len = core::load_le16(node, off + 8);
                const std::uint16_t key_len = core::load_le16(node, off + 10);
                const std::uint16_t flags = core::load_le16(node, off + 12);
                if (len < 16 || len % 8 != 0 || off + std::uint64_t{len} > length) return std::nullopt;
                bool here = (flags & kEntryLast) != 0 || key_len < kKeyNameOffset || 16u + key_len > len;
                if (!here) {
                    const std::size_t key = off + 16;
                    const auto n = std::to_integer<std::size_t>(node[key + kKeyNameOffset - 2]);
                    if (kKeyNameOffset + 2 * n > key_len) {
                        here = true;
                    } else {
                        for (std::size_t i = 0; i < n; ++i)
                            units[i] =
                                static_cast<char16_t>(core::load_le16(node, key + kKeyNameOffset + 2 * i));
                        here = before(name, std::u16string_view(units.data(), n));
                    }
                }
                if (here) {
                    Next out{off, flags, std::nullopt};
                    if (flags & kEntryHasSubnode) {
                        if (len < 24) return std::nullopt;
                        out.child_vcn = core::load_le64(node, off + len - 8);
                    }
                    return out;
                }
                off += len;
            }
            return std::nullopt;
        };
        for (const IndexKey& k : keys) {
            std::optional<std::uint64_t> at_block;
            std::span<const std::byte> node = std::span(ir->value).subspan(kIndexRootNodeOffset);
            for (std::uint32_t depth = 0;; ++depth) {
                if (depth > kMaxIndexDepth) return std::nullopt;
                const std::optional<Next> next = next_entry(node, k.name);
                if (!next) return std::nullopt;
                if (!(next->flags & kEntryHasSubnode)) {
                    nodes[at_block].emplace_back(next->offset, build_file_name_index_entry(k.file, k.key));
                    break;
                }
                if (!next->child_vcn || *next->child_vcn % per != 0) return std::nullopt;
                const std::uint64_t b = *next->child_vcn / per;
                if (!alloc) alloc = load_attribute(vol_, d.parsed, AttrType::index_allocation, u"$I30");
                if (!alloc || (b + 1) * block_bytes > alloc->size()) return std::nullopt;
                auto [it, fresh] = blocks.try_emplace(b);
                if (fresh) {
                    it->second.resize(block_bytes);
                    vol_.read_stream(*alloc, b * block_bytes, it->second);
                    if (verify_and_remove_fixups(it->second)) return std::nullopt;
                }
                node = std::span<const std::byte>(it->second).subspan(0x18);
                at_block = b;
            }
        }
        IndexInsert plan;
        for (auto& [node, entries] : nodes) {
            std::stable_sort(entries.begin(), entries.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            if (node) {
                std::vector<std::byte>& block = blocks[*node];
                if (!insert_entries(block, 0x18, entries, false)) return std::nullopt;
                plan.blocks.emplace_back(*node, block);
                continue;
            }
            std::vector<std::byte> value = ir->value;
            (void)insert_entries(value, kIndexRootNodeOffset, entries, true);
            std::uint64_t grown = 0;
            for (const auto& e : entries) grown += e.second.size();
            if (d.parsed.header.bytes_in_use + grown + kIndexRootReserve > d.parsed.header.bytes_allocated)
                return std::nullopt;
            plan.record = with_value(d.bytes, d.parsed, *ir, value);
        }
        return plan;
    } catch (const FormatError&) {
        return std::nullopt;
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
}

void Editor::apply_insert(std::uint64_t dir, const IndexInsert& plan) {
    begin();
    if (!plan.blocks.empty()) {
        const Record d = read_record(dir);
        const auto alloc = load_attribute(vol_, d.parsed, AttrType::index_allocation, u"$I30");
        const Attribute* ir = d.parsed.find(AttrType::index_root, u"$I30");
        if (!alloc || ir == nullptr) throw Error(ErrorCode::corrupt, "no $INDEX_ALLOCATION:$I30");
        const std::uint64_t bytes = decode_index_root(ir->value).index_block_bytes;
        for (auto [b, block] : plan.blocks) {
            protect(block);
            write_stream(*alloc, b * bytes, block);
        }
    }
    if (plan.record) write_record(dir, *plan.record);
}

Editor::EntryRemoval Editor::plan_entry_removal(std::uint64_t dir,
                                                const std::function<bool(const IndexEntry&)>& removed,
                                                const IndexSpec& index) {
    // In place when each lies in a leaf and leaves its INDX block an entry;
    // else the index is rewritten without them.
    EntryRemoval plan;
    plan.dir = dir;
    plan.index = &index;
    const Record d = read_record(dir);
    std::vector<IndexEntryLocation> at;
    std::vector<IndexKey> rest;                   // the other entries, for a rewrite
    std::map<std::uint64_t, unsigned> per_block;  // entries (with a key) of each INDX block
    bool rebalance = false;
    for_each_index_entry(vol_, d.parsed, index, [&](const IndexEntry& e, const IndexEntryLocation& loc) {
        if (loc.block) ++per_block[*loc.block];
        if (!removed(e)) {
            if (e.file_name) rest.push_back({FileReference::unpack(e.reference), e.key, e.file_name->name});
            return true;
        }
        if (e.flags & kEntryHasSubnode) rebalance = true;
        at.push_back(loc);
        return true;
    });
    plan.any = !at.empty();
    for (const IndexEntryLocation& l : at)
        (l.block ? plan.in_blocks[*l.block] : plan.in_root).push_back(l.offset);
    for (const auto& [b, offs] : plan.in_blocks)
        if (per_block[b] <= offs.size()) rebalance = true;
    if (rebalance && &index != &kI30Index)
        throw Error(
            ErrorCode::unsupported,
            fmt::format("an entry of MFT record {}'s {} index is a separator of its B+ tree or the last "
                        "of its INDX block: fsimg does not rewrite that index yet",
                        dir, index.label));
    if (rebalance) {
        plan.rewrite = plan_index(dir, std::move(rest));
        plan.in_root.clear();
        plan.in_blocks.clear();
    }
    return plan;
}

void Editor::apply_entry_removal(const EntryRemoval& plan) {
    // The parent's record ($INDEX_ROOT) or each INDX block, one write each;
    // or the index rewritten.
    const std::uint64_t dir = plan.dir;
    const std::u16string_view name = plan.index->name;
    if (plan.rewrite) apply_index(*plan.rewrite);
    const Record d = read_record(dir);
    if (!plan.in_root.empty()) {
        const Attribute* ir = d.parsed.find(AttrType::index_root, name);
        if (ir == nullptr || ir->non_resident)
            throw Error(ErrorCode::corrupt, fmt::format("no $INDEX_ROOT:{}", plan.index->label));
        std::vector<std::byte> value = ir->value;
        remove_entries(value, kIndexRootNodeOffset, plan.in_root, true);
        value.resize(kIndexRootNodeOffset + core::load_le32(value, kIndexRootNodeOffset + 8));  // allocated
        write_record(dir, with_value(d.bytes, d.parsed, *ir, value));
    }
    if (!plan.in_blocks.empty()) {
        const auto alloc = load_attribute(vol_, read_record(dir).parsed, AttrType::index_allocation, name);
        const Attribute* ir = d.parsed.find(AttrType::index_root, name);
        if (!alloc || ir == nullptr)
            throw Error(ErrorCode::corrupt, fmt::format("no $INDEX_ALLOCATION:{}", plan.index->label));
        const std::uint64_t bytes = decode_index_root(ir->value).index_block_bytes;
        for (const auto& [b, offs] : plan.in_blocks) {
            std::vector<std::byte> block(static_cast<std::size_t>(bytes));
            vol_.read_stream(*alloc, b * bytes, block);
            if (verify_and_remove_fixups(block))
                throw Error(ErrorCode::corrupt, fmt::format("INDX block {} fails its fixups", b));
            remove_entries(block, 0x18, offs, false);
            protect(block);
            write_stream(*alloc, b * bytes, block);
        }
    }
}

std::optional<std::uint64_t> Editor::extend_file(std::u16string_view name) const {
    constexpr std::uint64_t kExtend = 11;
    std::optional<std::uint64_t> file;
    const Record extend = read_record(kExtend);
    for_each_index_entry(vol_, extend.parsed, kI30Index, [&](const IndexEntry& e, const IndexEntryLocation&) {
        if (e.file_name && e.file_name->name == name) file = FileReference::unpack(e.reference).record;
        return !file;
    });
    return file;
}

bool Editor::remove_link(std::uint64_t dir, const FileEntry& file) {
    const Record r = read_record(file.record);
    if (r.parsed.header.base_record != 0 || r.parsed.is_directory() || file.record < kFirstNonSystemRecord)
        return false;
    struct Name {
        const Attribute* attr;
        FileName fn;
    };
    std::vector<Name> names;
    for (const Attribute& a : r.parsed.attributes) {
        if (a.kind() == AttrType::attribute_list) return false;  // remove() refuses it
        if (a.kind() != AttrType::file_name || a.non_resident) continue;
        try {
            names.push_back({&a, decode_file_name(a.value)});
        } catch (const FormatError&) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("MFT record {}: a $FILE_NAME does not decode", file.record));
        }
    }
    // The name removed, and its Win32 or DOS twin in the same directory
    // (one name in two namespaces) [FLATCAP attribute/file_name].
    const std::u16string wanted = core::utf8_to_utf16(file.name);
    const auto hit = std::find_if(names.begin(), names.end(), [&](const Name& n) {
        return n.fn.parent.record == dir && n.fn.name == wanted;
    });
    if (hit == names.end()) return false;
    std::set<const Attribute*> drop{hit->attr};
    std::set<std::u16string> dropped{hit->fn.name};
    const bool paired = hit->fn.name_space == Namespace::win32 || hit->fn.name_space == Namespace::dos;
    const Namespace twin = hit->fn.name_space == Namespace::win32 ? Namespace::dos : Namespace::win32;
    for (const Name& n : names)
        if (paired && n.fn.parent.record == dir && n.fn.name_space == twin) {
            drop.insert(n.attr);
            dropped.insert(n.fn.name);
        }
    // Hard links count the names outside the DOS namespace (as mkntfs and ntfs-3g count them).
    const auto links =
        static_cast<std::uint16_t>(std::count_if(names.begin(), names.end(), [&](const Name& n) {
            return !drop.count(n.attr) && n.fn.name_space != Namespace::dos;
        }));
    if (links == 0) return false;  // its last name: the file goes (remove)
    EntryRemoval entries = plan_entry_removal(dir, [&](const IndexEntry& e) {
        return FileReference::unpack(e.reference).record == file.record && e.file_name &&
               e.file_name->parent.record == dir && dropped.count(e.file_name->name);
    });
    if (!entries.any)
        throw Error(ErrorCode::corrupt,
                    fmt::format("directory record {} has no index entry naming record {}", dir, file.record));
    auto out = rebuilt_record(
        r, [&](const Attribute& a) { return drop.count(&a) != 0; }, {}, r.parsed.header.next_instance);
    if (!out) throw Error(ErrorCode::corrupt, fmt::format("MFT record {} cannot be rewritten", file.record));
    core::store_le16(*out, kRecordLinkCount, links);
    keys_.erase(dir);
    namers_.erase(dir);
    begin();
    // The entries first, then the record without the names (as ntfs-3g's
    // ntfs_delete: a cut leaves a name no index lists, which fsck -y puts
    // back), then the directory's times.
    apply_entry_removal(entries);
    write_record(file.record, std::move(*out));
    stamp_directory(dir);
    return true;
}

void Editor::remove(std::uint64_t dir, const FileEntry& file) {
    if (file.is_root) throw Error(ErrorCode::usage, "the root directory cannot be removed");
    // One name of a file that has others (a hard link): that name goes, the file stays.
    if (!file.is_directory && remove_link(dir, file)) return;
    const auto unsupported = [](std::uint64_t n, std::string_view why) {
        return Error(ErrorCode::unsupported,
                     fmt::format("MFT record {} {}: fsimg does not remove such files on NTFS yet", n, why));
    };
    // 1. What is freed: the file, and below a directory everything (each record once).
    std::vector<std::uint64_t> records;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> clusters;  // (first LCN, length) of each run
    std::set<std::uint64_t> seen;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> todo{{file.record, dir}};  // (record, its parent)
    // $Extend/$Reparse:$R's key of each reparse point removed: its tag and
    // the file's reference [FLATCAP files/reparse], formats.md §3.9.
    std::vector<std::array<std::byte, 12>> reparse_keys;
    while (!todo.empty()) {
        const auto [n, parent] = todo.back();
        todo.pop_back();
        if (!seen.insert(n).second) continue;
        if (n < kFirstNonSystemRecord) throw unsupported(n, "is a system file");
        const Record r = read_record(n);
        if (r.parsed.header.base_record != 0) throw unsupported(n, "is an extension record");
        // The records holding the file: the base, and the extension records its
        // $ATTRIBUTE_LIST names, each of which must name this base (record and
        // sequence number) [FLATCAP attributes/attribute_list].
        std::vector<Record> holders;
        if (const Attribute* list = r.parsed.find(AttrType::attribute_list)) {
            std::vector<AttributeListEntry> entries;
            try {
                entries = decode_attribute_list(
                    list->non_resident ? vol_.read_stream(*list, kMaxAttributeListBytes) : list->value);
            } catch (const FormatError&) {
                throw Error(ErrorCode::corrupt,
                            fmt::format("MFT record {}: its $ATTRIBUTE_LIST does not decode", n));
            }
            const FileReference self{n, r.parsed.header.sequence};
            std::set<std::uint64_t> named;
            for (const AttributeListEntry& e : entries) {
                if (e.record.record == n || !named.insert(e.record.record).second) continue;
                if (e.record.record < kFirstNonSystemRecord || seen.count(e.record.record))
                    throw Error(ErrorCode::corrupt,
                                fmt::format("MFT record {}: its $ATTRIBUTE_LIST names record {}", n,
                                            e.record.record));
                Record x = read_record(e.record.record);
                if (x.parsed.header.base_record != self.packed() ||
                    x.parsed.header.sequence != e.record.sequence)
                    throw Error(
                        ErrorCode::corrupt,
                        fmt::format("MFT record {}: its $ATTRIBUTE_LIST names record {}, which is not its "
                                    "extension record",
                                    n, e.record.record));
                seen.insert(e.record.record);
                records.push_back(e.record.record);  // freed after the base (records run backwards)
                holders.push_back(std::move(x));
            }
        }
        holders.push_back(r);
        unsigned names = 0;
        for (const Record& holder : holders)
            for (const Attribute& a : holder.parsed.attributes) {
                if (a.kind() == AttrType::reparse_point) {
                    std::array<std::byte, 4> tag{};
                    if (a.non_resident && a.data_size >= 4)
                        vol_.read_stream(a, 0, tag);
                    else if (!a.non_resident && a.value.size() >= 4)
                        std::copy_n(a.value.begin(), 4, tag.begin());
                    else
                        throw Error(ErrorCode::corrupt,
                                    fmt::format("MFT record {}: its reparse point holds no tag", n));
                    std::array<std::byte, 12> key{};
                    std::copy(tag.begin(), tag.end(), key.begin());
                    core::store_le64(key, 4, FileReference{n, r.parsed.header.sequence}.packed());
                    reparse_keys.push_back(key);
                }
                if (a.kind() == AttrType::object_id) throw unsupported(n, "has an object id");
                if (a.kind() == AttrType::file_name && !a.non_resident) {
                    FileName fn;
                    try {
                        fn = decode_file_name(a.value);
                    } catch (const FormatError&) {
                        throw Error(ErrorCode::corrupt,
                                    fmt::format("MFT record {}: a $FILE_NAME does not decode", n));
                    }
                    if (fn.name_space == Namespace::dos) continue;
                    ++names;
                    if (fn.parent.record != parent)
                        throw unsupported(n, fmt::format("has a name in directory record {} (a hard link)",
                                                         fn.parent.record));
                }
                if (a.non_resident) {
                    vol_.check_runs(a);
                    for (const MappedRun& m : a.runs)
                        if (m.lcn && m.length != 0)
                            clusters.emplace_back(static_cast<std::uint64_t>(*m.lcn), m.length);
                }
            }
        if (names != 1) throw unsupported(n, fmt::format("has {} names (hard links)", names));
        records.push_back(n);
        if (records.size() > vol_.record_count()) throw Error(ErrorCode::corrupt, "a directory tree loops");
        if (r.parsed.is_directory())
            for_each_index_entry(vol_, r.parsed, [&](const IndexEntry& e, const IndexEntryLocation&) {
                if (e.file_name && e.file_name->name_space != Namespace::dos)
                    todo.emplace_back(FileReference::unpack(e.reference).record, n);
                return true;
            });
    }
    // 2. The entries naming it in `dir` (planned here, before the first write).
    EntryRemoval entries = plan_entry_removal(
        dir, [&](const IndexEntry& e) { return FileReference::unpack(e.reference).record == file.record; });
    if (!entries.any)
        throw Error(ErrorCode::corrupt,
                    fmt::format("directory record {} has no index entry naming record {}", dir, file.record));
    // The reparse points' entries in $Extend/$Reparse:$R (none there: nothing to remove).
    std::optional<EntryRemoval> reparse;
    if (!reparse_keys.empty()) {
        const auto holder = extend_file(u"$Reparse");
        if (holder) {
            reparse = plan_entry_removal(
                *holder,
                [&](const IndexEntry& e) {
                    return e.key.size() >= 12 &&
                           std::any_of(reparse_keys.begin(), reparse_keys.end(), [&](const auto& k) {
                               return std::equal(k.begin(), k.end(), e.key.begin());
                           });
                },
                kReparseIndex);
            if (!reparse->any) reparse.reset();
        }
    }
    // The bitmaps' bytes: $MFT's $BITMAP (record 0), $Bitmap (record 6's $DATA).
    const MftRecord r0 = vol_.read_record(0);
    const Attribute* mft_bitmap = r0.find(AttrType::bitmap);
    if (mft_bitmap == nullptr) throw Error(ErrorCode::corrupt, "$MFT has no $BITMAP");
    const std::vector<check::BitmapFix> freed = cluster_bits(clusters, false);

    keys_.clear();
    namers_.clear();  // the directory's, and those of directories removed with it
    begin();
    // 3. The entries, then the reparse points' in $R (a cut between leaves
    // an orphan whose reparse point $R still lists: fsck -y links it back).
    apply_entry_removal(entries);
    if (reparse) apply_entry_removal(*reparse);
    // 4. The records, those below a directory before it (a cut leaves records
    // no index reaches, never one whose parent is gone): not in use, a new
    // sequence number.
    for (auto it = records.rbegin(); it != records.rend(); ++it) {
        const std::uint64_t n = *it;
        Record r = read_record(n);
        core::store_le16(r.bytes, 0x16,
                         static_cast<std::uint16_t>(r.parsed.header.flags & ~record_flag::in_use));
        const auto seq = static_cast<std::uint16_t>(r.parsed.header.sequence + 1);
        core::store_le16(r.bytes, 0x10, seq == 0 ? 1 : seq);
        write_record(n, std::move(r.bytes));
    }
    // 5. $MFT's $BITMAP, then 6. $Bitmap: each byte read, its bits cleared, written.
    if (mft_bitmap->non_resident) {
        std::map<std::uint64_t, std::uint8_t> bits;
        for (const std::uint64_t n : records) bits[n / 8] |= static_cast<std::uint8_t>(1u << (n % 8));
        std::vector<check::BitmapFix> fixes;
        for (const auto& [byte, b] : bits) {
            const auto off = vol_.device_offset(*mft_bitmap, byte);
            if (!off) throw Error(ErrorCode::corrupt, "$MFT's $BITMAP does not map a removed record");
            fixes.push_back({*off, 0, b});
        }
        std::sort(fixes.begin(), fixes.end(),
                  [](const check::BitmapFix& x, const check::BitmapFix& y) { return x.offset < y.offset; });
        (void)check::apply_bitmap_fixes(dev_, fixes);
    } else {
        Record z = read_record(0);
        const Attribute* bm = z.parsed.find(AttrType::bitmap);
        std::vector<std::byte>& b = z.bytes;
        for (const std::uint64_t n : records) {
            const std::size_t at = bm->offset + bm->value_offset + n / 8;
            if (n / 8 < bm->value.size()) b[at] &= static_cast<std::byte>(~(1u << (n % 8)));
        }
        write_record(0, std::move(z.bytes));
    }
    (void)check::apply_bitmap_fixes(dev_, freed);
    // 7. The directory's times: modified now (no later than SOURCE_DATE_EPOCH).
    stamp_directory(dir);
}

std::string Editor::label() const {
    const Record r = read_record(kVolumeRecord);
    const Attribute* name = r.parsed.find(AttrType::volume_name);
    if (name == nullptr || name->non_resident) return {};
    return core::utf16_to_utf8_lossy(decode_utf16(name->value));
}

void Editor::check_label(std::string_view label) {
    const std::u16string units = core::utf8_to_utf16(label);
    if (units.size() > kMaxLabelUnits)
        throw Error(ErrorCode::usage, fmt::format("an NTFS label has at most {} UTF-16 units, \"{}\" has {}",
                                                  kMaxLabelUnits, label, units.size()));
}

void Editor::set_label(std::string_view label) {
    check_label(label);
    const std::u16string units = core::utf8_to_utf16(label);
    std::vector<std::byte> value(units.size() * 2);
    for (std::size_t i = 0; i < units.size(); ++i) core::store_le16(value, 2 * i, units[i]);
    // Record 3 with the new $VOLUME_NAME: the old attribute's header
    // (instance, flags) with the new value, or a new attribute before the
    // first of a higher type. Built once to check it fits before the first
    // write, and again after begin() has set the dirty flag in this record.
    const auto relabelled = [&] {
        Record r = read_record(kVolumeRecord);
        const std::vector<std::byte>& b = r.bytes;
        const std::uint32_t in_use = r.parsed.header.bytes_in_use;
        const Attribute* old = r.parsed.find(AttrType::volume_name);
        if (old != nullptr && old->non_resident)
            throw Error(ErrorCode::corrupt, "$Volume's $VOLUME_NAME is non-resident");
        if (old != nullptr) return with_value(b, r.parsed, *old, value);  // resized in place
        std::vector<std::byte> attr = build_resident_attribute(AttrType::volume_name, u"", value);
        core::store_le16(attr, 0x0E, r.parsed.header.next_instance);
        std::uint32_t at = in_use - 8;  // before the end marker, or the first attribute of a higher type
        for (const Attribute& a : r.parsed.attributes)
            if (a.type > static_cast<std::uint32_t>(AttrType::volume_name)) {
                at = a.offset;
                break;
            }
        const std::uint64_t new_in_use = std::uint64_t{in_use} + attr.size();
        if (new_in_use > r.parsed.header.bytes_allocated)
            throw Error(ErrorCode::unsupported,
                        fmt::format("$Volume (MFT record 3) has no room for a label of {} units: it would "
                                    "use {} of its {} bytes",
                                    units.size(), new_in_use, r.parsed.header.bytes_allocated));
        std::vector<std::byte> out(b.begin(), b.begin() + at);
        out.insert(out.end(), attr.begin(), attr.end());
        out.insert(out.end(), b.begin() + at, b.begin() + in_use);
        core::store_le32(out, 0x18, static_cast<std::uint32_t>(new_in_use));
        core::store_le16(out, 0x28, static_cast<std::uint16_t>(r.parsed.header.next_instance + 1));
        out.resize(b.size());  // the rest of the record zeroed
        return out;
    };
    (void)relabelled();
    begin();
    write_record(kVolumeRecord, relabelled());
}

void Editor::set_serial(std::uint64_t serial) {
    begin();
    std::array<std::byte, kBootSectorSize> s{};
    dev_.read_at(0, s);
    core::store_le64(s, off::VolumeSerialNumber, serial);
    dev_.write_at(0, s);
    const std::uint64_t backup = vol_.geometry().volume_bytes();
    if (backup + kBootSectorSize <= dev_.size()) {
        std::array<std::byte, kBootSectorSize> t{};
        dev_.read_at(backup, t);
        if (std::memcmp(t.data() + 3, "NTFS    ", 8) == 0) {
            core::store_le64(t, off::VolumeSerialNumber, serial);
            dev_.write_at(backup, t);
        }
    }
    serial_ = serial;
}

}  // namespace fsimg::ntfs
