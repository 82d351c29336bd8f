#include "volume_view.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "common.hpp"
#include "dump_exfat.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

namespace {

std::optional<HostTime> fat_host_time(std::uint16_t date, std::uint16_t time) {
    const unsigned day = date & 0x1F, month = (date >> 5) & 0x0F;
    if (date == 0 || day == 0 || month == 0 || month > 12) return std::nullopt;
    HostTime t;
    t.local.year = 1980 + (date >> 9);
    t.local.month = month;
    t.local.day = day;
    t.local.hour = time >> 11;
    t.local.minute = (time >> 5) & 0x3F;
    t.local.second = (time & 0x1F) * 2;
    return t;
}

class FatView final : public VolumeView {
public:
    explicit FatView(io::OpenedVolume opened)
        : opened_(std::move(opened)), volume_(std::make_unique<fat::Volume>(opened_.device())) {}
    std::string_view filesystem() const override { return "fat"; }

    std::optional<ViewEntry> lookup(std::string_view path) const override {
        auto r = volume_->lookup(path);
        if (!r) return std::nullopt;
        return entry(std::move(*r));
    }
    std::vector<ViewEntry> list(const ViewEntry& dir, std::vector<std::string>&) const override {
        std::vector<ViewEntry> out;
        for (auto& r : volume_->read_directory(dir.first_cluster).records) {
            if (r.kind == fat::RecordKind::file || r.kind == fat::RecordKind::directory) {
                out.push_back(entry(std::move(r)));
            }
        }
        return out;
    }
    void read(const ViewEntry& file,
              const std::function<void(std::span<const std::byte>)>& sink) const override {
        volume_->read_file(std::get<fat::DirRecord>(file.record), sink);
    }

private:
    ViewEntry entry(fat::DirRecord r) const {
        const fat::DirEntry& e = r.entry;
        ViewEntry v;
        v.name = r.name;
        v.is_dir = r.kind == fat::RecordKind::directory;
        v.is_root = r.is_root;
        v.size = e.file_size;
        v.first_cluster = volume_->first_cluster(r);
        v.attributes = e.attr;
        v.short_name = r.short_name_raw;
        v.modified = fat_time_text(e.wrt_date, e.wrt_time);
        v.created = fat_time_text(e.crt_date, e.crt_time);
        v.accessed = fat_time_text(e.lst_acc_date, 0, false);
        v.mtime = fat_host_time(e.wrt_date, e.wrt_time);
        v.extra["short_name"] = r.short_name_raw;
        v.record = std::move(r);
        return v;
    }

    io::OpenedVolume opened_;
    std::unique_ptr<fat::Volume> volume_;
};

class ExfatView final : public VolumeView {
public:
    explicit ExfatView(io::OpenedVolume opened)
        : opened_(std::move(opened)), volume_(std::make_unique<exfat::Volume>(opened_.device())) {}
    std::string_view filesystem() const override { return "exfat"; }
    std::vector<std::string> open_problems() const override { return exfat_open_problems(*volume_); }

    std::optional<ViewEntry> lookup(std::string_view path) const override {
        auto r = volume_->lookup(path);
        if (!r) return std::nullopt;
        return entry(std::move(*r));
    }
    std::vector<ViewEntry> list(const ViewEntry& dir, std::vector<std::string>& problems) const override {
        exfat::ParsedDirectory d = volume_->read_directory(std::get<exfat::FileRecord>(dir.record));
        for (const auto& a : d.anomalies) problems.push_back(a.detail);
        std::vector<ViewEntry> out;
        for (auto& r : d.files) {
            if (!r.checksum_ok()) {
                problems.push_back(
                    fmt::format("entry {} (\"{}\"): SetChecksum is 0x{:04X}, the set sums to "
                                "0x{:04X}; not used",
                                r.index, escape_name(r.name), r.set_checksum, r.set_checksum_computed));
                continue;
            }
            out.push_back(entry(std::move(r)));
        }
        return out;
    }
    void read(const ViewEntry& file,
              const std::function<void(std::span<const std::byte>)>& sink) const override {
        volume_->read_file(std::get<exfat::FileRecord>(file.record), sink);
    }

private:
    ViewEntry entry(exfat::FileRecord r) const {
        ViewEntry v;
        v.name = r.name;
        v.is_dir = r.is_directory();
        v.is_root = r.is_root;
        v.size = r.data_length;
        v.first_cluster = r.first_cluster;
        v.attributes = static_cast<std::uint8_t>(r.attributes & 0xFF);
        v.modified = exfat::timestamp_text(r.modified);
        v.created = exfat::timestamp_text(r.created);
        v.accessed = exfat::timestamp_text(r.accessed, false);
        if (const auto t = exfat::decode_timestamp(r.modified))
            v.mtime = HostTime{t->local, t->utc_offset_minutes};
        if (!r.is_root) {
            v.extra["valid_data_length"] = r.valid_data_length;
            v.extra["contiguous"] = r.no_fat_chain();
        }
        v.record = std::move(r);
        return v;
    }

    io::OpenedVolume opened_;
    std::unique_ptr<exfat::Volume> volume_;
};

}  // namespace

namespace {

/// OEM ID "NTFS    " at byte 3 of sector 0 [MS-NTFS boot sector; as ntfs-3g and the kernel test it].
bool is_ntfs_volume(const io::BlockDevice& dev) {
    if (dev.size() < 512) return false;
    std::array<std::byte, 8> oem{};
    dev.read_at(3, oem);
    return std::memcmp(oem.data(), "NTFS    ", 8) == 0;
}

}  // namespace

std::unique_ptr<VolumeView> open_view(const std::string& spec) {
    io::OpenedVolume opened = io::open_volume(spec);
    std::unique_ptr<VolumeView> view;
    if (is_exfat_volume(opened.device())) {
        view = std::make_unique<ExfatView>(std::move(opened));
    } else if (is_ntfs_volume(opened.device())) {
        view = make_ntfs_view(std::move(opened));
    } else {
        view = std::make_unique<FatView>(std::move(opened));
    }
    for (const auto& p : view->open_problems()) warn(fmt::format("{}: {}", spec, p));
    return view;
}

std::string normalize_path(std::string_view p) {
    std::string path = "/";
    for (const char ch : p) {
        if (ch != '/' || path.back() != '/') path.push_back(ch);
    }
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

}  // namespace fsimg::cli
