// fs/edit.hpp: the changing commands' adapters over fat::Editor and
// exfat::Editor.
#include "fsimg/fs/edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/exfat/edit.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/fat/edit.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/populate.hpp"

namespace fsimg::fs {

namespace {

// What differs between the filesystems: their types, records and name rules.
struct FatTraits {
    using Ed = fat::Editor;
    using Record = fat::DirRecord;
    using Options = fat::EditOptions;
    using Id = fat::DirId;
    static constexpr Kind kind = Kind::fat;
    static constexpr bool upper_case_labels = true;
    static fat::NewEntryInfo info(const NewEntry& n) {
        fat::NewEntryInfo i;
        i.mtime = n.mtime;
        i.btime = n.btime;
        i.btime_ns = n.btime_ns;
        if (n.read_only) i.attributes |= fat::kAttrReadOnly;
        return i;
    }
    static bool is_dir(const Record& r) { return r.kind == fat::RecordKind::directory; }
    static std::uint8_t attributes(const Record& r) { return r.entry.attr; }
    static void check_tree(source::SourceTree& t) { fat::check_source_tree(t); }
    static std::uint64_t cluster_bytes(const Ed& e) { return e.layout().cluster_bytes(); }
    static void check_label(std::string_view l) {
        if (!l.empty()) (void)fat::normalize_volume_label(l);
    }
};

struct ExfatTraits {
    using Ed = exfat::Editor;
    using Record = exfat::FileRecord;
    using Options = exfat::EditOptions;
    using Id = exfat::DirId;
    static constexpr Kind kind = Kind::exfat;
    static constexpr bool upper_case_labels = false;  // Windows keeps an exFAT label's case
    static exfat::NewEntryInfo info(const NewEntry& n) {
        exfat::NewEntryInfo i;
        i.mtime = n.mtime;
        i.mtime_ns = n.mtime_ns;
        i.btime = n.btime;
        i.btime_ns = n.btime_ns;
        if (n.read_only) i.attributes |= exfat::kFileAttrReadOnly;
        return i;
    }
    static bool is_dir(const Record& r) { return r.is_directory(); }
    static std::uint8_t attributes(const Record& r) {
        return static_cast<std::uint8_t>(r.attributes & exfat::kSettableAttributes);
    }
    static void check_tree(source::SourceTree& t) { exfat::check_source_tree(t); }
    static std::uint64_t cluster_bytes(const Ed& e) { return e.cluster_bytes(); }
    static void check_label(std::string_view l) { (void)exfat::volume_label_entry_from_utf8(l); }
};

template <typename T>
class Adapter final : public Editor {
public:
    Adapter(io::BlockDevice& dev, const EditOptions& o) : ed_(dev, options(o)) {}
    Kind kind() const noexcept override { return T::kind; }

    std::optional<EditEntry> lookup(std::string_view path) override { return wrap(ed_.lookup(path)); }
    EditDir directory_of(const EditEntry& dir) override { return ed_.directory_of(rec(dir)); }
    std::optional<EditEntry> find(EditDir dir, std::string_view name) override {
        return wrap(ed_.find(id(dir), name));
    }
    std::optional<std::string> name_problem(std::string_view name) const override {
        return T::Ed::name_problem(name);
    }
    void check_tree(source::SourceTree& tree) const override { T::check_tree(tree); }
    void check_label(std::string_view label) const override { T::check_label(label); }
    bool windows_upper_cases_labels() const noexcept override { return T::upper_case_labels; }

    EditEntry add_file(EditDir dir, std::string_view name, const source::SourceFile& data,
                       const NewEntry& info) override {
        return wrap(ed_.add_file(id(dir), name, data, T::info(info)));
    }
    void replace_file(EditDir dir, const EditEntry& existing, const source::SourceFile& data,
                      const NewEntry& info) override {
        ed_.replace_file(id(dir), rec(existing), data, T::info(info));
    }
    EditEntry add_directory(EditDir dir, std::string_view name, const NewEntry& info) override {
        return wrap(ed_.add_directory(id(dir), name, T::info(info)));
    }
    void remove(EditDir dir, const EditEntry& e) override { ed_.remove(id(dir), rec(e)); }
    void rename(EditDir from, const EditEntry& e, EditDir to, std::string_view name, bool replace) override {
        ed_.rename(id(from), rec(e), id(to), name, replace);
    }
    std::uint32_t entry_slots(std::string_view name) const override { return T::Ed::entry_slots(name); }
    std::uint64_t data_clusters(std::uint64_t bytes) const override {
        return core::div_ceil(bytes, T::cluster_bytes(ed_));
    }
    std::uint64_t new_directory_clusters(std::span<const std::uint32_t> sets) const override {
        return ed_.new_directory_clusters(sets);
    }
    std::uint64_t growth_clusters(EditDir dir, std::span<const std::uint32_t> sets) override {
        return ed_.growth_clusters(id(dir), sets);
    }
    void check_free(std::uint64_t clusters) override { ed_.check_free(clusters); }
    void set_attributes(EditDir dir, const EditEntry& e, std::uint8_t set, std::uint8_t clear) override {
        ed_.set_attributes(id(dir), rec(e), set, clear);
    }
    std::string label() override { return ed_.label(); }
    void set_label(std::string_view label) override { ed_.set_label(label); }
    std::uint64_t volume_id() override { return ed_.volume_id(); }
    void set_volume_id(std::uint64_t v) override { ed_.set_volume_id(static_cast<std::uint32_t>(v)); }
    unsigned volume_id_bits() const noexcept override { return 32; }
    void finish() override { ed_.finish(); }

private:
    static typename T::Options options(const EditOptions& o) {
        typename T::Options f;
        f.now = o.now;
        f.clamp = o.clamp;
        f.local_time = o.local_time;
        f.barrier = o.barrier;
        if constexpr (requires { f.check_touched; }) f.check_touched = o.check_touched;
        return f;
    }
    static typename T::Id id(EditDir d) { return static_cast<typename T::Id>(d); }
    static const typename T::Record& rec(const EditEntry& e) {
        return std::any_cast<const typename T::Record&>(e.record);
    }
    static EditEntry wrap(const typename T::Record& r) {
        EditEntry e;
        e.name = r.name;
        e.is_root = r.is_root;
        e.is_dir = T::is_dir(r);
        e.attributes = T::attributes(r);
        e.record = r;
        return e;
    }
    static std::optional<EditEntry> wrap(const std::optional<typename T::Record>& r) {
        if (!r) return std::nullopt;
        return wrap(*r);
    }
    typename T::Ed ed_;
};

/// NTFS: label, serial and attributes (ntfs::Editor); EditDir is the
/// directory's MFT record number.
class NtfsAdapter final : public Editor {
public:
    NtfsAdapter(io::BlockDevice& dev, const EditOptions& o)
        : ed_(dev, ntfs::EditOptions{o.barrier, o.now, o.clamp}),
          now_(o.now),
          cluster_bytes_(ntfs::Volume(dev).geometry().cluster_bytes) {}
    Kind kind() const noexcept override { return Kind::ntfs; }

    std::optional<EditEntry> lookup(std::string_view path) override { return wrap(ed_.lookup(path)); }
    EditDir directory_of(const EditEntry& dir) override { return rec(dir).record; }
    std::optional<EditEntry> find(EditDir dir, std::string_view name) override {
        return wrap(ed_.find(record_of(dir), name));
    }
    std::optional<std::string> name_problem(std::string_view name) const override {
        if (name == "." || name == "..") return fmt::format("\"{}\" is not a name", name);
        return ntfs::utf8_name_problem(name);
    }
    void check_tree(source::SourceTree& tree) const override { ntfs::check_source_tree(tree); }
    void check_label(std::string_view label) const override { ntfs::Editor::check_label(label); }
    bool windows_upper_cases_labels() const noexcept override { return false; }

    EditEntry add_file(EditDir dir, std::string_view name, const source::SourceFile& data,
                       const NewEntry& info) override {
        return *wrap(ed_.add_file(record_of(dir), name, data, file_info(info)));
    }
    void replace_file(EditDir, const EditEntry& existing, const source::SourceFile& data,
                      const NewEntry& info) override {
        ed_.replace_file(rec(existing), data, file_info(info));
    }
    EditEntry add_directory(EditDir dir, std::string_view name, const NewEntry& info) override {
        return *wrap(ed_.make_directory(record_of(dir), name, info.mtime.value_or(now_)));
    }
    void remove(EditDir dir, const EditEntry& e) override { ed_.remove(record_of(dir), rec(e)); }
    void rename(EditDir from, const EditEntry& e, EditDir to, std::string_view name, bool replace) override {
        ed_.rename(record_of(from), rec(e), record_of(to), name, replace);
    }
    void set_attributes(EditDir, const EditEntry& e, std::uint8_t set, std::uint8_t clear) override {
        ed_.set_attributes(rec(e), set, clear);
    }
    // A new name costs no clusters of its own on NTFS (an MFT record, and
    // index blocks that make_directory plans and refuses without).
    std::uint32_t entry_slots(std::string_view) const override { return 1; }
    std::uint64_t data_clusters(std::uint64_t bytes) const override {
        // Data that fits in a 1 KiB record beside the names stays resident;
        // a larger record only holds more (what add_file decides exactly).
        constexpr std::uint64_t kResidentBelow = 600;
        return bytes < kResidentBelow ? 0 : (bytes + cluster_bytes_ - 1) / cluster_bytes_;
    }
    std::uint64_t new_directory_clusters(std::span<const std::uint32_t>) const override { return 0; }
    std::uint64_t growth_clusters(EditDir, std::span<const std::uint32_t>) override { return 0; }
    void check_free(std::uint64_t clusters) override {
        if (clusters == 0) return;
        const std::uint64_t free = ed_.free_clusters();
        if (clusters > free)
            throw Error(ErrorCode::io,
                        fmt::format("no space: {} clusters are needed, {} are free", clusters, free));
    }

    std::string label() override { return ed_.label(); }
    void set_label(std::string_view label) override { ed_.set_label(label); }
    std::uint64_t volume_id() override { return ed_.serial(); }
    void set_volume_id(std::uint64_t v) override { ed_.set_serial(v); }
    unsigned volume_id_bits() const noexcept override { return 64; }
    void finish() override { ed_.finish(); }

private:
    /// The MFT record of a directory handle: 0 (the root, as every editor
    /// names it) is record 5.
    static std::uint64_t record_of(EditDir dir) { return dir == 0 ? ntfs::kRootRecord : dir; }
    static const ntfs::FileEntry& rec(const EditEntry& e) {
        return std::any_cast<const ntfs::FileEntry&>(e.record);
    }
    static std::optional<EditEntry> wrap(const std::optional<ntfs::FileEntry>& r) {
        if (!r) return std::nullopt;
        EditEntry e;
        e.name = r->name;
        e.is_root = r->is_root;
        e.is_dir = r->is_directory;
        e.attributes = static_cast<std::uint8_t>(r->attributes & ntfs::kSettableAttributes);
        e.record = *r;
        return e;
    }
    ntfs::Editor::NewFile file_info(const NewEntry& e) const {
        return {e.mtime.value_or(now_), e.mtime_ns, e.btime, e.btime_ns, e.read_only};
    }
    ntfs::Editor ed_;
    std::int64_t now_ = 0;
    std::uint32_t cluster_bytes_ = 4096;
};

}  // namespace

std::unique_ptr<Editor> open_editor(io::BlockDevice& volume, Kind kind, EditOptions options) {
    switch (kind) {
        case Kind::fat:
            return std::make_unique<Adapter<FatTraits>>(volume, options);
        case Kind::exfat:
            return std::make_unique<Adapter<ExfatTraits>>(volume, options);
        case Kind::ntfs:
            return std::make_unique<NtfsAdapter>(volume, options);
    }
    throw Error(ErrorCode::unsupported, fmt::format("{} volumes are not changed", label(kind)));
}

CheckScope automatic_check_scope(const io::BlockDevice& volume, Kind kind, std::uint64_t& clusters) {
    clusters = 0;
    if (kind != Kind::fat) return CheckScope::whole;
    const fat::BootRegion br = fat::read_boot_region(volume);
    if (!br.layout) return CheckScope::whole;
    clusters = br.layout->cluster_count;
    return clusters > kWholeCheckMaxClusters ? CheckScope::touched : CheckScope::whole;
}

namespace {

/// The codes whose findings break what an editor relies on (WriteSafety).
constexpr std::array<std::string_view, 54> kUnsafe = {
    "exfat.bitmap.free-in-use",
    "exfat.bitmap.length",
    "exfat.bitmap.missing",
    "exfat.boot.image-truncated",
    "exfat.chain.bad-cluster",
    "exfat.chain.cross-link",
    "exfat.chain.loop",
    "exfat.chain.out-of-range",
    "exfat.dir.loop",
    "exfat.dir.too-deep",
    "exfat.dir.unreadable",
    "exfat.stream.first-cluster",
    "exfat.stream.outside-heap",
    "exfat.upcase.invalid",
    "exfat.upcase.missing",
    "fat.boot.fat-too-small",
    "fat.boot.image-truncated",
    "fat.boot.main-damaged",
    "fat.boot.root-cluster",
    "fat.boot.root-entries",
    "fat.boot.total-sectors",
    "fat.boot.type-mismatch",
    "fat.chain.bad-cluster",
    "fat.chain.cross-link",
    "fat.chain.free-link",
    "fat.chain.loop",
    "fat.chain.out-of-range",
    "fat.dir.loop",
    "fat.dir.no-cluster",
    "fat.dir.too-deep",
    "fat.dir.unreadable",
    "fat.file.start-free",
    "fat.file.start-out-of-range",
    "ntfs.attr.header",
    "ntfs.attrlist.decode",
    "ntfs.boot.image-truncated",
    "ntfs.index.corrupt",
    "ntfs.index.root-missing",
    "ntfs.mft.unmapped",
    "ntfs.mft.unreadable",
    "ntfs.mftmirr.location",
    "ntfs.mftmirr.unreadable",
    "ntfs.record.baad",
    "ntfs.record.bytes-allocated",
    "ntfs.record.bytes-in-use",
    "ntfs.record.first-attribute",
    "ntfs.record.fixup",
    "ntfs.record.signature",
    "ntfs.record.unreadable",
    "ntfs.record.usa",
    "ntfs.run.cross-link",
    "ntfs.run.decode",
    "ntfs.run.outside",
    "ntfs.volume.information",
};

/// Flags and counts a change rewrites or a crash leaves: no warning.
constexpr std::array<std::string_view, 14> kRoutine = {
    "exfat.bitmap.percent-in-use",
    "exfat.boot.backup-differs",
    "exfat.boot.dirty",
    "exfat.boot.percent_in_use",
    "fat.boot.backup-differs",
    "fat.boot.backup-dirty-only",
    "fat.boot.dirty",
    "fat.fat.dirty",
    "fat.fsinfo.free-count",
    "fat.fsinfo.next-free",
    "fat.fsinfo.signature",
    "ntfs.boot.backup-differs",
    "ntfs.mftmirr.differs",
    "ntfs.volume.dirty",
};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view code) {
    return std::find(list.begin(), list.end(), code) != list.end();
}

}  // namespace

WriteSafety write_safety(const check::Findings& found, const check::Summary& summary) {
    WriteSafety w;
    w.incomplete = !summary.complete;
    for (const check::Finding& f : found.all()) {
        if (f.severity == check::Severity::fatal || listed(kUnsafe, f.code)) {
            w.unsafe.push_back(&f);
        } else if (f.severity == check::Severity::error && !listed(kRoutine, f.code)) {
            w.elsewhere.push_back(&f);
        }
    }
    return w;
}

}  // namespace fsimg::fs
