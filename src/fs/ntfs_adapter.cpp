// The NTFS adapter: probe, view, check (adapters.hpp).
//
// The view's listing rule (fs/view.hpp), and why:
//  - One entry per name a directory's $I30 index holds, except DOS-only
//    names (namespace 2: the short twin of a Win32 name, which would list the
//    file twice) and the system files (records below kFirstNonSystemRecord:
//    $MFT, $Bitmap, ..., $Extend, and the root's "." entry), which ntfs-3g
//    hides from its mounts too; they are still found by an explicit path
//    (ls IMAGE /$Extend). A file with several hard links appears under each
//    of its names.
//  - Sizes, times and attributes come from the MFT record
//    ($STANDARD_INFORMATION, $DATA), not from the index entry's copy of
//    $FILE_NAME, which Windows updates lazily. Times are UTC at 100 ns.
//  - Each named $DATA stream follows its file as "name:stream".
//  - Symbolic links and junctions ($REPARSE_POINT tags 0xA000000C,
//    0xA0000003) and Interix links (ntfs-3g's ln -s) carry their target.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "adapters.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/deleted.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/salvage.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::fs::detail {

namespace {

/// "NTFS    " at byte 3 (as ntfs-3g and the kernel test it): NTFS, read
/// through the backup boot sector when sector 0 breaks a rule and the backup
/// keeps them all; without the name, a valid backup boot sector alone.
std::optional<Match> probe_ntfs(const io::BlockDevice& volume, bool backups) {
    if (volume.size() < ntfs::kBootSectorSize) return std::nullopt;
    std::array<std::byte, ntfs::kBootSectorSize> s0{};
    volume.read_at(0, s0);
    const bool named = ntfs::is_ntfs(volume);
    if (named == backups) return std::nullopt;  // sector 0 names NTFS: the first pass; else the second
    const auto problems = ntfs::validate_boot_sector(s0);
    if (named && problems.empty()) return Match{};
    const auto backup = ntfs::find_backup_boot_sector(volume);
    if (!backup) {
        if (named) return Match{};  // damaged, no backup: the reader and checker say how
        return std::nullopt;
    }
    Match m;
    m.certainty = named ? Certainty::signature : Certainty::backup;
    m.through_backup = true;
    m.backup_offset = backup->offset;
    m.note = fmt::format(
        "the boot sector (sector 0) is damaged ({} [{}]); reading through the backup boot "
        "sector at byte {}",
        problems.front().message, problems.front().code, backup->offset);
    return m;
}

/// "2023-11-14 22:13:20.1234567 +00:00" (UTC, 100 ns); "-" for 0.
std::string time_text(std::uint64_t ft) {
    if (ft == 0) return "-";
    return ntfs::filetime_text(ft) + " +00:00";
}

/// Strips a trailing ":$DATA" (any case) from a stream path component.
std::string_view strip_data_suffix(std::string_view s) {
    constexpr std::string_view suffix = ":$DATA";
    if (s.size() >= suffix.size()) {
        const auto tail = s.substr(s.size() - suffix.size());
        if (std::equal(tail.begin(), tail.end(), suffix.begin(),
                       [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; }))
            return s.substr(0, s.size() - suffix.size());
    }
    return s;
}

class NtfsView final : public View {
public:
    NtfsView(std::shared_ptr<const io::BlockDevice> device, const Detection& d)
        : View(d), device_(std::move(device)), volume_(*device_), upcase_(ntfs::load_upcase(volume_)) {}

    std::uint32_t cluster_bytes() const noexcept override { return volume_.geometry().cluster_bytes; }
    std::string_view type_name() const noexcept override { return "NTFS"; }
    std::vector<std::string> open_problems() const override {
        std::vector<std::string> out;
        if (!detection().note.empty()) out.push_back(detection().note);
        if (upcase_.note) out.push_back(*upcase_.note);
        return out;
    }

    std::optional<Entry> lookup(std::string_view path) const override {
        const std::string p = normalize_path(path);
        if (auto t = ntfs::resolve_path(volume_, p, upcase_)) {
            const ntfs::MftRecord r = volume_.read_record(t->record);
            return entry(r, t->name.name, std::u16string(), t->record == ntfs::kRootRecord);
        }
        // "dir/file:stream", "file:stream:$DATA", "file::$DATA" (the unnamed stream).
        const std::size_t slash = p.rfind('/');
        const std::string_view last = strip_data_suffix(std::string_view(p).substr(slash + 1));
        const std::size_t colon = last.rfind(':');
        if (colon == std::string_view::npos) return std::nullopt;
        const std::string file = p.substr(0, slash + 1) + std::string(last.substr(0, colon));
        const auto t = ntfs::resolve_path(volume_, file, upcase_);
        if (!t) return std::nullopt;
        const ntfs::MftRecord r = volume_.read_record(t->record);
        const std::u16string want = core::utf8_to_utf16(last.substr(colon + 1));
        for (const ntfs::StreamInfo& s : ntfs::data_streams(volume_, r)) {
            if (s.name == want || (!s.name.empty() && upcase_.equal(s.name, want)))
                return entry(r, t->name.name, s.name, false);
        }
        return std::nullopt;
    }

    std::vector<Entry> list(const Entry& dir, std::vector<std::string>& problems) const override {
        const auto& node = std::get<NtfsNode>(dir.native);
        const ntfs::MftRecord d = volume_.read_record(node.record);
        std::vector<ntfs::IndexEntry> names;
        ntfs::for_each_index_entry(
            volume_, d, [&](const ntfs::IndexEntry& e, const ntfs::IndexEntryLocation&) {
                if (!e.file_name || e.file_name->name_space == ntfs::Namespace::dos) return true;
                if (ntfs::FileReference::unpack(e.reference).record < ntfs::kFirstNonSystemRecord)
                    return true;
                names.push_back(e);
                return true;
            });
        std::vector<Entry> out;
        for (const ntfs::IndexEntry& e : names) {
            const auto ref = ntfs::FileReference::unpack(e.reference);
            const std::string shown = core::utf16_to_utf8_lossy(e.file_name->name);
            try {
                if (ref.record >= volume_.record_count())
                    throw Error(ErrorCode::corrupt,
                                fmt::format("refers to MFT record {}, past $MFT's {} records", ref.record,
                                            volume_.record_count()));
                const ntfs::MftRecord r = volume_.read_record(ref.record);
                if (!r.in_use() || r.header.sequence != ref.sequence)
                    throw Error(ErrorCode::corrupt,
                                fmt::format("refers to MFT record {} sequence {}, but the record is {} with "
                                            "sequence {} (a stale entry)",
                                            ref.record, ref.sequence, r.in_use() ? "in use" : "free",
                                            r.header.sequence));
                out.push_back(entry(r, e.file_name->name, std::u16string(), false));
                for (const ntfs::StreamInfo& s : ntfs::data_streams(volume_, r))
                    if (!s.name.empty()) out.push_back(entry(r, e.file_name->name, s.name, false));
            } catch (const Error& err) {
                if (err.code() == ErrorCode::io) throw;
                problems.push_back(fmt::format("\"{}\": {}; not used", core::escape_name(shown), err.what()));
            }
        }
        return out;
    }

    void read(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink) const override {
        const auto& node = std::get<NtfsNode>(file.native);
        if (file.link_target && node.stream.empty())
            throw Error(ErrorCode::unsupported,
                        fmt::format("\"{}\" is a symbolic link to \"{}\"; not followed", file.name,
                                    *file.link_target));
        const ntfs::MftRecord r = volume_.read_record(node.record);
        ntfs::read_data(volume_, r, node.stream, sink);
    }
    void read_sparse(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink,
                     const std::function<void(std::uint64_t)>& hole) const override {
        const auto& node = std::get<NtfsNode>(file.native);
        if (file.link_target && node.stream.empty()) return read(file, sink);  // the refusal
        const ntfs::MftRecord r = volume_.read_record(node.record);
        ntfs::read_data_sparse(volume_, r, node.stream, sink, hole);
    }
    std::vector<DeletedEntry> list_deleted(const Entry& dir) const override {
        if (!deleted_) deleted_ = ntfs::deleted_records(volume_);
        const std::uint16_t sequence = volume_.read_record(dir.id).header.sequence;
        std::vector<DeletedEntry> out;
        for (const ntfs::DeletedRecord& r : *deleted_)
            if (r.parent.record == dir.id && r.parent.sequence == sequence) out.push_back(deleted_entry(r));
        // The root also holds $OrphanFiles (as The Sleuth Kit shows it): the
        // deleted files no directory lists, their own having been reused.
        if (dir.id == ntfs::kRootRecord && !orphaned().empty()) {
            ntfs::DeletedRecord v;
            v.number = kOrphanFiles;
            v.name = u"$OrphanFiles";
            v.is_directory = true;
            DeletedEntry d;
            d.name = "$OrphanFiles";
            d.is_dir = true;
            d.attributes = fat::kAttrDirectory;
            d.id = kOrphanFiles;
            d.state = std::string(fat::to_string(fat::DeletedState::empty));
            d.native = v;
            out.push_back(std::move(d));
        }
        return out;
    }
    std::vector<DeletedEntry> list_deleted_in(const DeletedEntry& dir) const override {
        const auto* d = std::get_if<ntfs::DeletedRecord>(&dir.native);
        if (d == nullptr || !d->is_directory) return {};
        if (d->number == kOrphanFiles) {
            std::vector<DeletedEntry> out;
            for (const ntfs::DeletedRecord& r : orphaned()) out.push_back(deleted_entry(r));
            return out;
        }
        if (!deleted_) deleted_ = ntfs::deleted_records(volume_);
        // Freeing a record adds one to its sequence number (ntfs-3g does): its children name the one before.
        const std::uint16_t sequence = volume_.read_record(d->number).header.sequence;
        std::vector<DeletedEntry> out;
        for (const ntfs::DeletedRecord& r : *deleted_)
            if (r.parent.record == d->number &&
                (r.parent.sequence == sequence ||
                 static_cast<std::uint16_t>(r.parent.sequence + 1) == sequence))
                out.push_back(deleted_entry(r));
        return out;
    }
    void read_deleted(const DeletedEntry& file,
                      const std::function<void(std::span<const std::byte>)>& sink) const override {
        ntfs::read_deleted(volume_, std::get<ntfs::DeletedRecord>(file.native), sink);
    }
    SalvageReport read_salvaged(const Entry& file,
                                const std::function<void(std::span<const std::byte>)>& sink) const override {
        const auto& node = std::get<NtfsNode>(file.native);
        if (file.link_target && node.stream.empty()) read(file, sink);  // the refusal
        const check::Salvage s =
            ntfs::salvage_data(volume_, volume_.read_record(node.record), node.stream, sink);
        return {s.salvaged(), s.damage, s.sources()};
    }

private:
    /// The id of the virtual directory $OrphanFiles (no MFT record has it).
    static constexpr std::uint64_t kOrphanFiles = ~std::uint64_t{0};
    /// The deleted records no directory lists: their parent (record and
    /// sequence number) is neither an in-use directory of that sequence nor
    /// a deleted directory of it or the one before (list_deleted_in's rule),
    /// because the record was reused or does not exist. Computed once.
    const std::vector<ntfs::DeletedRecord>& orphaned() const {
        if (orphans_) return *orphans_;
        if (!deleted_) deleted_ = ntfs::deleted_records(volume_);
        std::map<std::uint64_t, std::optional<ntfs::MftRecordHeader>> parents;
        std::set<std::uint64_t> deleted_dirs;
        for (const ntfs::DeletedRecord& r : *deleted_)
            if (r.is_directory) deleted_dirs.insert(r.number);
        orphans_.emplace();
        for (const ntfs::DeletedRecord& r : *deleted_) {
            auto it = parents.find(r.parent.record);
            if (it == parents.end()) {
                std::optional<ntfs::MftRecordHeader> h;
                try {
                    if (r.parent.record < volume_.record_count())
                        h = volume_.read_record(r.parent.record).header;
                } catch (const Error& e) {
                    if (e.code() == ErrorCode::io) throw;
                }
                it = parents.emplace(r.parent.record, h).first;
            }
            const auto& h = it->second;
            const bool listed =
                h && (h->flags & ntfs::record_flag::directory) &&
                ((h->flags & ntfs::record_flag::in_use)
                     ? h->sequence == r.parent.sequence
                     : deleted_dirs.count(r.parent.record) &&
                           (h->sequence == r.parent.sequence ||
                            h->sequence == static_cast<std::uint16_t>(r.parent.sequence + 1)));
            if (!listed) orphans_->push_back(r);
        }
        return *orphans_;
    }
    DeletedEntry deleted_entry(const ntfs::DeletedRecord& r) const {
        DeletedEntry d;
        d.name = core::utf16_to_utf8_lossy(r.name);
        d.is_dir = r.is_directory;
        d.attributes = static_cast<std::uint8_t>((r.file_attributes & 0xFF) |
                                                 (r.is_directory ? fat::kAttrDirectory : 0));
        d.size = r.size;
        d.first_cluster = r.first_lcn.value_or(0);
        d.id = r.number;
        d.modified = time_text(r.modified);
        if (r.modified != 0) d.mtime = HostTime{ntfs::civil_from_filetime(r.modified), 0};
        d.state = std::string(fat::to_string(ntfs::deleted_state(volume_, r)));
        d.native = r;
        return d;
    }
    Entry entry(const ntfs::MftRecord& r, const std::u16string& name, const std::u16string& stream,
                bool is_root) const {
        Entry v;
        v.name = core::utf16_to_utf8_lossy(name);
        v.is_root = is_root;
        v.id = r.number;
        // Hard links: the names outside the DOS namespace (the header's link
        // count also counts the DOS twin of a Win32 name).
        v.links = 0;
        for (const ntfs::Attribute& a : r.attributes) {
            if (a.kind() != ntfs::AttrType::file_name || a.non_resident) continue;
            try {
                if (ntfs::decode_file_name(a.value).name_space != ntfs::Namespace::dos) ++v.links;
            } catch (const FormatError&) {
                ++v.links;
            }
        }
        v.links = std::max<std::uint32_t>(v.links, 1);
        v.is_dir = r.is_directory() && stream.empty();
        ntfs::StandardInformation si;
        if (const ntfs::Attribute* a = r.find(ntfs::AttrType::standard_information)) {
            try {
                si = ntfs::decode_standard_information(a->value);
            } catch (const FormatError&) {
            }
        }
        v.attributes = static_cast<std::uint8_t>(si.file_attributes & 0xFF);
        if (v.is_dir) v.attributes |= fat::kAttrDirectory;
        v.modified = time_text(si.modification_time);
        v.created = time_text(si.creation_time);
        v.accessed = time_text(si.access_time);
        if (si.modification_time != 0) v.mtime = HostTime{ntfs::civil_from_filetime(si.modification_time), 0};
        v.properties.push_back({"mft_record", r.number});
        v.properties.push_back({"sequence", std::uint64_t{r.header.sequence}});
        v.properties.push_back({"link_count", std::uint64_t{r.header.link_count}});
        v.properties.push_back({"file_attributes", std::uint64_t{si.file_attributes}});
        v.properties.push_back({"changed", time_text(si.mft_change_time)});
        if (!stream.empty()) {
            v.is_stream = true;
            v.name += ":" + core::utf16_to_utf8_lossy(stream);
            v.properties.push_back({"stream", core::utf16_to_utf8_lossy(stream)});
        }
        if (!v.is_dir) {
            if (const auto data = ntfs::load_attribute(volume_, r, ntfs::AttrType::data, stream)) {
                v.size = data->size();
                if (data->flags & ntfs::attr_flag::compressed) v.properties.push_back({"compressed", true});
                if (data->flags & ntfs::attr_flag::encrypted) v.properties.push_back({"encrypted", true});
                if (data->flags & ntfs::attr_flag::sparse) v.properties.push_back({"sparse", true});
                v.properties.push_back({"resident", !data->non_resident});
            }
        }
        if (stream.empty()) link(r, v);
        v.native = NtfsNode{r.number, stream};
        return v;
    }

    /// Marks symbolic links, junctions and Interix links with their target.
    void link(const ntfs::MftRecord& r, Entry& v) const {
        if (const auto rp = ntfs::load_attribute(volume_, r, ntfs::AttrType::reparse_point)) {
            try {
                const auto value = volume_.read_stream(*rp, 16 * 1024);
                if (const auto tag = ntfs::reparse_tag(value))
                    v.properties.push_back({"reparse_tag", std::uint64_t{*tag}});
                if (const auto l = ntfs::decode_reparse_link(value)) {
                    v.link_target = l->posix_target();
                    v.properties.push_back({"target", *v.link_target});
                    v.properties.push_back(
                        {"link_kind",
                         std::string(l->tag == ntfs::kReparseTagSymlink ? "symlink" : "junction")});
                    v.is_dir = false;
                    v.size = v.link_target->size();  // as lstat gives a symbolic link
                }
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
                v.properties.push_back({"reparse_problem", std::string(e.what())});
            }
            return;
        }
        if (!v.is_dir) {
            if (auto t = ntfs::interix_link_target(volume_, r)) {
                v.link_target = std::move(*t);
                v.properties.push_back({"target", *v.link_target});
                v.properties.push_back({"link_kind", std::string("interix")});
                v.size = v.link_target->size();
            }
        }
    }

    std::shared_ptr<const io::BlockDevice> device_;
    mutable std::optional<std::vector<ntfs::DeletedRecord>> deleted_;  ///< list_deleted's, read once
    mutable std::optional<std::vector<ntfs::DeletedRecord>> orphans_;  ///< orphaned(), once
    ntfs::Volume volume_;
    ntfs::UpcaseTable upcase_;
};

std::unique_ptr<View> open_ntfs(const io::BlockDevice& volume, const Detection& d) {
    return std::make_unique<NtfsView>(reading_device(volume, d), d);
}

check::Summary check_ntfs(const io::BlockDevice& volume, const Detection&, check::Findings& out,
                          const CheckOptions& options) {
    // The checker finds and uses the backup boot sector itself, reporting
    // each rule sector 0 breaks.
    ntfs::CheckOptions o;
    o.on_walk = options.on_walk;
    o.placement = options.placement;
    return ntfs::check_volume(volume, out, o);
}

}  // namespace

Adapter ntfs_adapter() { return {Kind::ntfs, probe_ntfs, open_ntfs, check_ntfs}; }

}  // namespace fsimg::fs::detail
