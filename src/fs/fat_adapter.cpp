// The FAT12/16/32 adapter: probe, view, check (adapters.hpp).
#include <fmt/format.h>

#include <array>

#include "adapters.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/salvage.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/fs/repair.hpp"

namespace fsimg::fs::detail {

namespace {

/// Sector 0 with a FAT jump and a BPB whose geometry derives is FAT; a jump
/// alone (the BPB broken) is a weak match, which a valid FAT32 backup boot
/// sector (sector 6) makes a backup one. exFAT and NTFS boot sectors also
/// start with EB xx 90: their names at byte 3 exclude them.
std::optional<Match> probe_fat(const io::BlockDevice& volume, bool backups) {
    if (volume.size() < fat::kBootSectorSize) return std::nullopt;
    std::array<std::byte, fat::kBootSectorSize> s0{};
    volume.read_at(0, s0);
    const fat::BootSector bs = fat::decode_boot_sector(s0);
    const bool jump = fat::has_boot_jump(bs) && bs.oem_name != "EXFAT   " && bs.oem_name != "NTFS    ";
    std::optional<std::string> problem;
    if (jump) {
        problem = fat::geometry_problem(bs);
        if (!problem) return backups ? std::nullopt : std::optional(Match{});
    }
    if (!backups) return std::nullopt;
    if (const auto b = fat::find_backup_boot_sector(volume)) {
        Match m;
        m.certainty = Certainty::backup;
        m.through_backup = true;
        m.backup_offset = b->offset;
        m.note = fmt::format(
            "the boot sector (sector 0) is damaged ({}); reading through the FAT32 backup boot sector at "
            "byte {}",
            jump ? *problem
                 : fmt::format("no FAT boot sector jump: {:02X} {:02X} {:02X}", bs.jmp_boot[0],
                               bs.jmp_boot[1], bs.jmp_boot[2]),
            b->offset);
        return m;
    }
    if (jump) return Match{Certainty::weak, false, 0, {}};
    return std::nullopt;
}

class FatView final : public View {
public:
    FatView(std::shared_ptr<const io::BlockDevice> device, const Detection& d)
        : View(d), device_(std::move(device)), volume_(*device_) {}

    bool has_short_names() const noexcept override { return true; }
    std::uint32_t cluster_bytes() const noexcept override { return volume_.cluster_bytes(); }
    std::string_view type_name() const noexcept override { return fat::to_string(volume_.type()); }
    std::vector<std::string> open_problems() const override {
        if (detection().note.empty()) return {};
        return {detection().note};
    }
    std::optional<Entry> lookup(std::string_view path) const override {
        auto r = volume_.lookup(path);
        if (!r) return std::nullopt;
        return entry(std::move(*r));
    }
    std::vector<Entry> list(const Entry& dir, std::vector<std::string>&) const override {
        // First cluster 0 would read the root (FAT12/16's fixed region, FAT32's root cluster).
        if (!dir.is_root && !volume_.is_cluster(dir.id))
            throw Error(ErrorCode::corrupt,
                        fmt::format("the directory's first cluster {} is not a cluster of the volume (2..{})",
                                    dir.id, volume_.max_cluster()));
        std::vector<Entry> out;
        for (auto& r : volume_.read_directory(static_cast<std::uint32_t>(dir.id)).records) {
            if (r.kind == fat::RecordKind::file || r.kind == fat::RecordKind::directory)
                out.push_back(entry(std::move(r)));
        }
        return out;
    }
    void read(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink) const override {
        volume_.read_file(std::get<fat::DirRecord>(file.native), sink);
    }
    std::vector<DeletedEntry> list_deleted(const Entry& dir) const override {
        if (!dir.is_root && !volume_.is_cluster(dir.id))
            throw Error(ErrorCode::corrupt,
                        fmt::format("the directory's first cluster {} is not a cluster of the volume (2..{})",
                                    dir.id, volume_.max_cluster()));
        std::vector<DeletedEntry> out;
        for (auto& r : fat::parse_deleted(volume_.read_directory_bytes(static_cast<std::uint32_t>(dir.id))))
            out.push_back(deleted_entry(std::move(r)));
        return out;
    }
    void read_deleted(const DeletedEntry& file,
                      const std::function<void(std::span<const std::byte>)>& sink) const override {
        fat::read_deleted(volume_, std::get<fat::DeletedRecord>(file.native), sink);
    }
    std::vector<DeletedEntry> list_deleted_in(const DeletedEntry& dir) const override {
        std::vector<DeletedEntry> out;
        if (const auto* d = std::get_if<fat::DeletedRecord>(&dir.native))
            for (auto& r : fat::deleted_directory_entries(volume_, *d))
                out.push_back(deleted_entry(std::move(r)));
        return out;
    }
    SalvageReport read_salvaged(const Entry& file,
                                const std::function<void(std::span<const std::byte>)>& sink) const override {
        if (!lost_) {
            // Who owns each cluster: one check of the whole volume (its findings are not shown here).
            lost_.emplace();
            check::Findings scratch;
            fat::CheckOptions o;
            o.lost = &*lost_;
            (void)fat::check_volume(*device_, scratch, o);
        }
        const check::Salvage s =
            fat::salvage_file(volume_, std::get<fat::DirRecord>(file.native), *lost_, sink);
        return {s.salvaged(), s.damage, s.sources()};
    }

private:
    DeletedEntry deleted_entry(fat::DeletedRecord r) const {
        DeletedEntry d;
        d.name = r.name;
        d.short_name = r.short_name;
        d.is_dir = r.is_directory();
        d.attributes = r.entry.attr;
        d.size = r.entry.file_size;
        d.first_cluster = d.id = r.entry.first_cluster;
        d.modified = fat::timestamp_text(r.entry.wrt_date, r.entry.wrt_time);
        if (const auto t = fat::decode_timestamp(r.entry.wrt_date, r.entry.wrt_time))
            d.mtime = HostTime{*t, std::nullopt};
        d.state = std::string(fat::to_string(fat::deleted_state(volume_, r)));
        d.native = std::move(r);
        return d;
    }
    Entry entry(fat::DirRecord r) const {
        const fat::DirEntry& e = r.entry;
        Entry v;
        v.name = r.name;
        v.is_dir = r.kind == fat::RecordKind::directory;
        v.is_root = r.is_root;
        v.size = e.file_size;
        v.id = volume_.first_cluster(r);
        v.attributes = e.attr;
        v.short_name = r.short_name_raw;
        v.modified = fat::timestamp_text(e.wrt_date, e.wrt_time);
        v.created = fat::timestamp_text(e.crt_date, e.crt_time, true, e.crt_time_tenth);
        v.accessed = fat::timestamp_text(e.lst_acc_date, 0, false);
        if (const auto t = fat::decode_timestamp(e.wrt_date, e.wrt_time))
            v.mtime = HostTime{*t, std::nullopt};
        v.properties.push_back({"short_name", r.short_name_raw});
        v.native = std::move(r);
        return v;
    }

    std::shared_ptr<const io::BlockDevice> device_;
    fat::Volume volume_;
    mutable std::optional<std::vector<fat::ClusterRun>> lost_;  ///< read_salvaged's, found once
};

std::unique_ptr<View> open_fat(const io::BlockDevice& volume, const Detection& d) {
    return std::make_unique<FatView>(reading_device(volume, d), d);
}

check::Summary check_fat(const io::BlockDevice& volume, const Detection& d, check::Findings& out,
                         const CheckOptions& options) {
    fat::CheckOptions o;
    o.on_walk = options.on_walk;
    o.progress = options.progress;
    o.placement = options.placement;
    if (!d.through_backup) {
        if (options.repair_hints) options.repair_hints->fat.emplace().collect_with(o);
        return fat::check_volume(volume, out, o);
    }
    check::Location at = check::at_sector(0, 512, "boot sector");
    out.add("fat.boot.main-damaged", std::move(at), d.note);
    return fat::check_volume(*reading_device(volume, d), out, o);
}

}  // namespace

Adapter fat_adapter() { return {Kind::fat, probe_fat, open_fat, check_fat}; }

}  // namespace fsimg::fs::detail
