#include "fsimg/fat/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/fat/structs.hpp"

namespace fsimg::fat {

namespace {

std::span<std::byte, kBootSectorSize> first512(std::vector<std::byte>& sector) {
    return std::span<std::byte>(sector).first<kBootSectorSize>();
}

}  // namespace

std::uint32_t volume_id_from_time(std::int64_t unix_seconds, std::uint32_t nanoseconds) noexcept {
    // Like DOS: the sum of two words built from the date and the time of day.
    const auto s = static_cast<std::uint64_t>(unix_seconds);
    const std::uint32_t hi = static_cast<std::uint32_t>((s / 86400) * 0x10001u) ^ 0x5A17u;
    const std::uint32_t lo = static_cast<std::uint32_t>((s % 86400) << 16 | (nanoseconds / 1000000u));
    return hi + lo;
}

void format_volume(io::BlockDevice& dev, const Layout& layout, const FormatOptions& opt) {
    const std::string label11 = normalize_volume_label(opt.label);
    const std::uint32_t bps = layout.bytes_per_sector;
    if (dev.size() < layout.volume_bytes()) {
        throw Error(ErrorCode::usage, fmt::format("the device holds {} bytes, the filesystem needs {}",
                                                  dev.size(), layout.volume_bytes()));
    }
    const bool fat32 = layout.type == FatType::fat32;

    // Boot sector, checked by decoding it the way the reader does.
    std::vector<std::byte> boot(bps);
    write_boot_stub(first512(boot), fat32);
    encode_boot_sector(boot_sector_from_layout(layout, opt.volume_id, label11), first512(boot));
    {
        Layout reread = layout_from_boot_sector(decode_boot_sector(first512(boot)));
        if (reread != layout) {
            throw Error(ErrorCode::unsupported,
                        fmt::format("internal error: the boot sector built for this {} layout reads back "
                                    "as a different geometry ({} clusters instead of {}); nothing written",
                                    to_string(layout.type), reread.cluster_count, layout.cluster_count));
        }
    }

    if (!opt.device_is_zeroed) {
        const std::uint64_t meta_end =
            layout.first_data_sector * bps + (fat32 ? std::uint64_t(layout.cluster_bytes()) : 0);
        dev.zero_range(0, meta_end);
    }

    dev.write_at(0, boot);

    if (fat32) {
        // FSInfo: every cluster but the root's is free; the next free is the one after it.
        std::vector<std::byte> fsinfo(bps);
        FsInfo info;
        info.free_count = layout.cluster_count - 1;
        info.next_free = layout.root_cluster + 1;
        encode_fsinfo(info, first512(fsinfo));
        // The third sector of the FAT32 boot record carries a signature too [FATGEN §3.3].
        std::vector<std::byte> third(bps);
        third[510] = std::byte{0x55};
        third[511] = std::byte{0xAA};
        for (std::uint64_t base : {std::uint64_t(0), std::uint64_t(layout.backup_boot_sector)}) {
            if (base != 0) dev.write_at(base * bps, boot);
            dev.write_at((base + layout.fsinfo_sector) * bps, fsinfo);
            dev.write_at((base + 2) * bps, third);
        }
    }

    // FATs: entries 0 and 1, and the FAT32 root directory's single cluster.
    std::vector<std::byte> fat_head(bps);
    set_fat_entry(fat_head, layout.type, 0, fat0_value(layout.type, layout.media));
    set_fat_entry(fat_head, layout.type, 1, fat1_value(layout.type));
    if (fat32) set_fat_entry(fat_head, layout.type, layout.root_cluster, end_of_chain(layout.type));
    for (std::uint32_t i = 0; i < layout.num_fats; ++i) {
        dev.write_at((layout.first_fat_sector + std::uint64_t(i) * layout.fat_size_sectors) * bps, fat_head);
    }

    // Root directory: the volume-label entry when there is a label.
    if (!opt.label.empty()) {
        std::vector<std::byte> root(kDirEntrySize);
        DirEntry e;
        std::copy_n(label11.begin(), 11, e.name.begin());
        e.attr = kAttrVolumeId;
        const FatTimestamp ts = fat_timestamp_from_unix(opt.timestamp_unix);
        e.wrt_date = ts.date;
        e.wrt_time = ts.time;
        encode_dir_entry(e, std::span<std::byte>(root).first<kDirEntrySize>());
        const std::uint64_t at =
            fat32 ? layout.cluster_offset(layout.root_cluster) : layout.first_root_dir_sector * bps;
        dev.write_at(at, root);
    }
}

}  // namespace fsimg::fat
