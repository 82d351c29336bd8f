// exfat/edit.hpp: changing an existing exFAT volume, every write ordered so
// that a cut after it leaves the volume consistent (see the header); the
// steps are Editor::Impl's (edit_impl.hpp).
#include "fsimg/exfat/edit.hpp"

#include <fmt/format.h>

#include <array>
#include <unordered_set>

#include "edit_impl.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/walk.hpp"

namespace fsimg::exfat {

Editor::Editor(io::BlockDevice& device, EditOptions options)
    : impl_(std::make_unique<Impl>(device, std::move(options))) {}
Editor::~Editor() = default;

const Volume& Editor::volume() const { return impl_->volume(); }
std::uint32_t Editor::cluster_bytes() const noexcept { return impl_->cb; }
std::uint64_t Editor::allocated_clusters() const noexcept { return impl_->allocated; }

namespace {
/// Where entries end after sets of `sets` entries are added at entry `end`
/// of a directory of `per` entries per cluster (Impl::plan_room's rule: a
/// set that fits in one cluster starts a new cluster rather than cross).
std::uint64_t end_after(std::uint64_t end, std::span<const std::uint32_t> sets, std::uint64_t per) {
    for (const std::uint32_t s : sets) {
        if (s <= per && end % per + s > per) end += per - end % per;
        end += s;
    }
    return end;
}
}  // namespace

std::uint32_t Editor::entry_slots(std::string_view name) {
    return entry_set_entries(core::utf8_to_utf16(name).size());
}

std::uint64_t Editor::new_directory_clusters(std::span<const std::uint32_t> sets) const {
    const std::uint64_t per = impl_->cb / kDirEntrySize;
    return std::max<std::uint64_t>(1, core::div_ceil(end_after(0, sets, per), per));
}

std::uint64_t Editor::growth_clusters(DirId dir, std::span<const std::uint32_t> sets) {
    Impl& m = *impl_;
    const auto& c = m.dir(dir);
    const std::uint64_t per = m.cb / kDirEntrySize;
    const std::uint64_t end = end_after(c.end, sets, per);
    return end <= c.total() ? 0 : core::div_ceil(end - c.total(), per);
}

void Editor::check_free(std::uint64_t clusters) {
    if (clusters != 0) (void)impl_->find_free(clusters, impl_->hint);
}
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
    // Name checks, and the clusters for the data and the directory's growth, before anything is written.
    const auto set = m.new_set(dir, name, e, nullptr);
    m.plan_space(dir, core::div_ceil(data.size(), std::uint64_t{m.cb}),
                 static_cast<std::uint32_t>(set.size() / kDirEntrySize));
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
    const auto set = m.new_set(dir, name, e, nullptr);
    m.plan_space(dir, 1,
                 static_cast<std::uint32_t>(set.size() / kDirEntrySize));  // before anything is written
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

FileRecord Editor::add_extent_file(DirId dir, std::string_view name, std::uint32_t first_cluster,
                                   std::uint32_t clusters, const NewEntryInfo& info) {
    Impl& m = *impl_;
    FileEntrySetInfo e = m.stamped(info, static_cast<std::uint16_t>(info.attributes & ~kFileAttrDirectory));
    const auto set = m.new_set(dir, name, e, nullptr);
    m.plan_space(dir, 0, static_cast<std::uint32_t>(set.size() / kDirEntrySize));
    m.begin();
    e.first_cluster = clusters == 0 ? 0 : first_cluster;
    e.secondary_flags = clusters == 0
                            ? kSecondaryAllocationPossible
                            : static_cast<std::uint8_t>(kSecondaryAllocationPossible | kSecondaryNoFatChain);
    e.data_length = e.valid_data_length = std::uint64_t(clusters) * m.cb;
    return m.add_entries(dir, m.new_set(dir, name, e, nullptr));
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
    if (m.bitmap->length() <= Impl::kMaxCountedBitmap && m.count != 0)
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
