// The exFAT adapter: probe, view, check (adapters.hpp).
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <memory>

#include "adapters.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/exfat/deleted.hpp"
#include "fsimg/exfat/salvage.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/fs/repair.hpp"

namespace fsimg::fs::detail {

namespace {

/// "EXFAT   " at byte 3 [EXFAT §3.1.2]; without it, a whole backup boot
/// region at sector 12 (exfat::probe). The exFAT readers take the backup
/// region themselves when the main one is damaged, so no device is patched.
std::optional<Match> probe_exfat(const io::BlockDevice& volume, bool backups) {
    if (!backups) {
        if (volume.size() < 11) return std::nullopt;
        std::array<std::byte, 11> head{};
        volume.read_at(0, head);
        if (std::memcmp(head.data() + 3, "EXFAT   ", 8) == 0) return Match{};
        return std::nullopt;
    }
    if (exfat::probe(volume)) return Match{Certainty::backup, false, 0, {}};
    return std::nullopt;
}

class ExfatView final : public View {
public:
    ExfatView(const io::BlockDevice& device, const Detection& d) : View(d), volume_(device) {}

    std::vector<std::string> open_problems() const override { return exfat::reading_problems(volume_); }
    std::uint32_t cluster_bytes() const noexcept override { return volume_.cluster_bytes(); }
    std::string_view type_name() const noexcept override { return "exFAT"; }
    std::optional<Entry> lookup(std::string_view path) const override {
        auto r = volume_.lookup(path);
        if (!r) return std::nullopt;
        return entry(std::move(*r));
    }
    std::vector<Entry> list(const Entry& dir, std::vector<std::string>& problems) const override {
        exfat::ParsedDirectory d = volume_.read_directory(std::get<exfat::FileRecord>(dir.native));
        for (const auto& a : d.anomalies) problems.push_back(a.detail);
        std::vector<Entry> out;
        for (auto& r : d.files) {
            if (!r.checksum_ok()) {
                problems.push_back(fmt::format(
                    "entry {} (\"{}\"): SetChecksum is 0x{:04X}, the set sums to 0x{:04X}; not used", r.index,
                    core::escape_name(r.name), r.set_checksum, r.set_checksum_computed));
                continue;
            }
            out.push_back(entry(std::move(r)));
        }
        return out;
    }
    void read(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink) const override {
        volume_.read_file(std::get<exfat::FileRecord>(file.native), sink);
    }
    std::vector<DeletedEntry> list_deleted(const Entry& dir) const override {
        std::vector<DeletedEntry> out;
        const auto bytes = volume_.read_directory_bytes(std::get<exfat::FileRecord>(dir.native));
        for (auto& r : exfat::parse_deleted(bytes, volume_.upcase_table()))
            out.push_back(deleted_entry(std::move(r)));
        return out;
    }
    void read_deleted(const DeletedEntry& file,
                      const std::function<void(std::span<const std::byte>)>& sink) const override {
        exfat::read_deleted(volume_, std::get<exfat::FileRecord>(file.native), sink);
    }
    std::vector<DeletedEntry> list_deleted_in(const DeletedEntry& dir) const override {
        std::vector<DeletedEntry> out;
        if (const auto* d = std::get_if<exfat::FileRecord>(&dir.native))
            for (auto& r : exfat::deleted_directory_entries(volume_, *d))
                out.push_back(deleted_entry(std::move(r)));
        return out;
    }
    SalvageReport read_salvaged(const Entry& file,
                                const std::function<void(std::span<const std::byte>)>& sink) const override {
        if (!lost_) {
            // Who owns each cluster: one check of the whole volume (its findings are not shown here).
            lost_.emplace();
            check::Findings scratch;
            exfat::CheckOptions o;
            o.lost = &*lost_;
            (void)exfat::check_volume(volume_.device(), scratch, o);
        }
        const check::Salvage s =
            exfat::salvage_file(volume_, std::get<exfat::FileRecord>(file.native), *lost_, sink);
        return {s.salvaged(), s.damage, s.sources()};
    }

private:
    DeletedEntry deleted_entry(exfat::FileRecord r) const {
        DeletedEntry d;
        d.name = r.name;
        d.is_dir = r.is_directory();
        d.attributes = static_cast<std::uint8_t>(r.attributes & 0x3F);
        d.size = r.data_length;
        d.first_cluster = d.id = r.first_cluster;
        d.modified = exfat::timestamp_text(r.modified);
        if (const auto t = exfat::decode_timestamp(r.modified))
            d.mtime = HostTime{t->local, t->utc_offset_minutes};
        d.state = std::string(fat::to_string(exfat::deleted_state(volume_, r)));
        d.native = std::move(r);
        return d;
    }
    Entry entry(exfat::FileRecord r) const {
        Entry v;
        v.name = r.name;
        v.is_dir = r.is_directory();
        v.is_root = r.is_root;
        v.size = r.data_length;
        v.id = r.first_cluster;
        v.attributes = static_cast<std::uint8_t>(r.attributes & 0xFF);
        v.modified = exfat::timestamp_text(r.modified);
        v.created = exfat::timestamp_text(r.created);
        v.accessed = exfat::timestamp_text(r.accessed, false);
        if (const auto t = exfat::decode_timestamp(r.modified))
            v.mtime = HostTime{t->local, t->utc_offset_minutes};
        if (!r.is_root) {
            v.properties.push_back({"valid_data_length", r.valid_data_length});
            v.properties.push_back({"contiguous", r.no_fat_chain()});
        }
        v.native = std::move(r);
        return v;
    }

    exfat::Volume volume_;
    mutable std::optional<std::vector<exfat::ClusterRun>> lost_;  ///< read_salvaged's, found once
};

std::unique_ptr<View> open_exfat(const io::BlockDevice& volume, const Detection& d) {
    return std::make_unique<ExfatView>(volume, d);
}

check::Summary check_exfat(const io::BlockDevice& volume, const Detection&, check::Findings& out,
                           const CheckOptions& options) {
    exfat::CheckOptions o;
    o.on_walk = options.on_walk;
    o.placement = options.placement;
    if (!options.repair_hints) return exfat::check_volume(volume, out, o);
    RepairHints& h = *options.repair_hints;
    h.exfat.emplace().collect_with(o);
    // The walk of the check before, when nothing it read has changed since.
    if (!h.exfat_walk_current) h.exfat_walk.reset();
    h.exfat_walk_current = false;
    const std::shared_ptr<exfat::WalkSnapshot> previous = h.exfat_walk;
    o.reuse_walk = previous.get();
    o.save_walk = &h.exfat_walk;
    return exfat::check_volume(volume, out, o);
}

}  // namespace

Adapter exfat_adapter() { return {Kind::exfat, probe_exfat, open_exfat, check_exfat}; }

}  // namespace fsimg::fs::detail
