// The NTFS view for ls, cat and extract (volume_view.hpp): directories
// through ntfs/directory.hpp, files and streams through ntfs/file.hpp.
//
// What is shown, and why:
//  - One entry per name a directory's $I30 index holds, except DOS-only
//    names (namespace 2: the short twin of a Win32 name, which would list the
//    file twice) and the system files (MFT records 0..15: $MFT, $Bitmap,
//    ..., $Extend, and the root's "." entry), which ntfs-3g hides from its
//    mounts too; they are still found by an explicit path (ls IMAGE /$Extend).
//    A file with several hard links appears under each of its names.
//  - Sizes, times and attributes come from the MFT record
//    ($STANDARD_INFORMATION, $DATA), not from the index entry's copy of
//    $FILE_NAME, which Windows updates lazily. Times are UTC at 100 ns.
//  - Each named $DATA stream follows its file as "name:stream".
//  - Symbolic links and junctions ($REPARSE_POINT tags 0xA000000C,
//    0xA0000003) and Interix links (ntfs-3g's ln -s) carry their target.
#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "volume_view.hpp"

namespace fsimg::cli {

namespace {

/// Records below this are system files (formats.md §3.2: 0..11 named, 12..15 reserved).
constexpr std::uint64_t kFirstUserRecord = 16;
/// FILETIME of 1970-01-01 in 100 ns units since 1601 [FLATCAP glossary].
constexpr std::uint64_t kUnixEpochFiletime = 116444736000000000ull;

std::optional<core::CivilTime> civil_of(std::uint64_t ft) {
    if (ft == 0) return std::nullopt;
    const auto secs =
        static_cast<std::int64_t>(ft / 10000000) - static_cast<std::int64_t>(kUnixEpochFiletime / 10000000);
    return core::civil_from_unix(secs, static_cast<std::uint32_t>(ft % 10000000) * 100);
}

/// "2023-11-14 22:13:20.1234567 +00:00" (UTC, 100 ns); "-" for 0.
std::string ntfs_time_text(std::uint64_t ft) {
    const auto c = civil_of(ft);
    if (!c) return "-";
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:07} +00:00", c->year, c->month, c->day, c->hour,
                       c->minute, c->second, c->nanosecond / 100);
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

class NtfsView final : public VolumeView {
public:
    explicit NtfsView(io::OpenedVolume opened)
        : opened_(std::move(opened)),
          volume_(std::make_unique<ntfs::Volume>(opened_.device())),
          upcase_(ntfs::load_upcase(*volume_)) {}
    std::string_view filesystem() const override { return "ntfs"; }
    std::vector<std::string> open_problems() const override {
        if (upcase_.note) return {*upcase_.note};
        return {};
    }

    std::optional<ViewEntry> lookup(std::string_view path) const override {
        const std::string p = normalize_path(path);
        if (auto t = ntfs::resolve_path(*volume_, p, upcase_)) {
            const ntfs::MftRecord r = volume_->read_record(t->record);
            return entry(r, t->name.name, std::u16string(), t->record == ntfs::kRootRecord);
        }
        // "dir/file:stream", "file:stream:$DATA", "file::$DATA" (the unnamed stream).
        const std::size_t slash = p.rfind('/');
        const std::string_view last = strip_data_suffix(std::string_view(p).substr(slash + 1));
        const std::size_t colon = last.rfind(':');
        if (colon == std::string_view::npos) return std::nullopt;
        const std::string file = p.substr(0, slash + 1) + std::string(last.substr(0, colon));
        const auto t = ntfs::resolve_path(*volume_, file, upcase_);
        if (!t) return std::nullopt;
        const ntfs::MftRecord r = volume_->read_record(t->record);
        const std::u16string want = core::utf8_to_utf16(last.substr(colon + 1));
        for (const ntfs::StreamInfo& s : ntfs::data_streams(*volume_, r)) {
            if (s.name == want || (!s.name.empty() && upcase_.equal(s.name, want)))
                return entry(r, t->name.name, s.name, false);
        }
        return std::nullopt;
    }

    std::vector<ViewEntry> list(const ViewEntry& dir, std::vector<std::string>& problems) const override {
        const auto& node = std::get<NtfsNode>(dir.record);
        const ntfs::MftRecord d = volume_->read_record(node.record);
        std::vector<ntfs::IndexEntry> names;
        ntfs::for_each_index_entry(*volume_, d,
                                   [&](const ntfs::IndexEntry& e, const ntfs::IndexEntryLocation&) {
                                       if (!e.file_name || e.file_name->name_space == ntfs::Namespace::dos)
                                           return true;
                                       if (ntfs::FileReference::unpack(e.reference).record < kFirstUserRecord)
                                           return true;
                                       names.push_back(e);
                                       return true;
                                   });
        std::vector<ViewEntry> out;
        for (const ntfs::IndexEntry& e : names) {
            const auto ref = ntfs::FileReference::unpack(e.reference);
            const std::string shown = core::utf16_to_utf8_lossy(e.file_name->name);
            try {
                if (ref.record >= volume_->record_count())
                    throw Error(ErrorCode::corrupt,
                                fmt::format("refers to MFT record {}, past $MFT's {} records", ref.record,
                                            volume_->record_count()));
                const ntfs::MftRecord r = volume_->read_record(ref.record);
                if (!r.in_use() || r.header.sequence != ref.sequence)
                    throw Error(ErrorCode::corrupt,
                                fmt::format("refers to MFT record {} sequence {}, but the record is {} with "
                                            "sequence {} (a stale entry)",
                                            ref.record, ref.sequence, r.in_use() ? "in use" : "free",
                                            r.header.sequence));
                out.push_back(entry(r, e.file_name->name, std::u16string(), false));
                for (const ntfs::StreamInfo& s : ntfs::data_streams(*volume_, r))
                    if (!s.name.empty()) out.push_back(entry(r, e.file_name->name, s.name, false));
            } catch (const Error& err) {
                if (err.code() == ErrorCode::io) throw;
                problems.push_back(fmt::format("\"{}\": {}; not used", escape_name(shown), err.what()));
            }
        }
        return out;
    }

    void read(const ViewEntry& file,
              const std::function<void(std::span<const std::byte>)>& sink) const override {
        const auto& node = std::get<NtfsNode>(file.record);
        if (file.link_target && node.stream.empty())
            throw Error(ErrorCode::unsupported,
                        fmt::format("\"{}\" is a symbolic link to \"{}\"; not followed", file.name,
                                    *file.link_target));
        const ntfs::MftRecord r = volume_->read_record(node.record);
        ntfs::read_data(*volume_, r, node.stream, sink);
    }
    void read_sparse(const ViewEntry& file, const std::function<void(std::span<const std::byte>)>& sink,
                     const std::function<void(std::uint64_t)>& hole) const override {
        const auto& node = std::get<NtfsNode>(file.record);
        if (file.link_target && node.stream.empty()) return read(file, sink);  // the refusal
        const ntfs::MftRecord r = volume_->read_record(node.record);
        ntfs::read_data_sparse(*volume_, r, node.stream, sink, hole);
    }

private:
    ViewEntry entry(const ntfs::MftRecord& r, const std::u16string& name, const std::u16string& stream,
                    bool is_root) const {
        ViewEntry v;
        v.name = core::utf16_to_utf8_lossy(name);
        v.is_root = is_root;
        v.first_cluster = r.number;
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
        v.modified = ntfs_time_text(si.modification_time);
        v.created = ntfs_time_text(si.creation_time);
        v.accessed = ntfs_time_text(si.access_time);
        if (const auto c = civil_of(si.modification_time)) v.mtime = HostTime{*c, 0};
        v.extra["mft_record"] = r.number;
        v.extra["sequence"] = r.header.sequence;
        v.extra["link_count"] = r.header.link_count;
        v.extra["file_attributes"] = si.file_attributes;
        v.extra["changed"] = ntfs_time_text(si.mft_change_time);
        if (!stream.empty()) {
            v.is_stream = true;
            v.name += ":" + core::utf16_to_utf8_lossy(stream);
            v.extra["stream"] = core::utf16_to_utf8_lossy(stream);
        }
        if (!v.is_dir) {
            if (const auto data = ntfs::load_attribute(*volume_, r, ntfs::AttrType::data, stream)) {
                v.size = data->size();
                if (data->flags & 0x0001) v.extra["compressed"] = true;
                if (data->flags & 0x4000) v.extra["encrypted"] = true;
                if (data->flags & 0x8000) v.extra["sparse"] = true;
                v.extra["resident"] = !data->non_resident;
            }
        }
        if (stream.empty()) link(r, v);
        v.record = NtfsNode{r.number, stream};
        return v;
    }

    /// Marks symbolic links, junctions and Interix links with their target.
    void link(const ntfs::MftRecord& r, ViewEntry& v) const {
        if (const auto rp = ntfs::load_attribute(*volume_, r, ntfs::AttrType::reparse_point)) {
            try {
                const auto value = volume_->read_stream(*rp, 16 * 1024);
                if (const auto tag = ntfs::reparse_tag(value)) v.extra["reparse_tag"] = *tag;
                if (const auto l = ntfs::decode_reparse_link(value)) {
                    v.link_target = l->posix_target();
                    v.extra["target"] = *v.link_target;
                    v.extra["link_kind"] = l->tag == ntfs::kReparseTagSymlink ? "symlink" : "junction";
                    v.is_dir = false;
                    v.size = v.link_target->size();  // as lstat gives a symbolic link
                }
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
                v.extra["reparse_problem"] = e.what();
            }
            return;
        }
        if (!v.is_dir) {
            if (auto t = ntfs::interix_link_target(*volume_, r)) {
                v.link_target = std::move(*t);
                v.extra["target"] = *v.link_target;
                v.extra["link_kind"] = "interix";
                v.size = v.link_target->size();
            }
        }
    }

    io::OpenedVolume opened_;
    std::unique_ptr<ntfs::Volume> volume_;
    ntfs::UpcaseTable upcase_;
};

}  // namespace

std::unique_ptr<VolumeView> make_ntfs_view(io::OpenedVolume opened) {
    return std::make_unique<NtfsView>(std::move(opened));
}

}  // namespace fsimg::cli
