// Pass 1: the boot region (boot sector, BPB, FSInfo, backup boot sector).
#include <algorithm>
#include <array>

#include "check_internal.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat::detail {

namespace {

void check_fsinfo_and_backup(Context& c) {
    const BootSector& bs = c.boot.boot;
    const Layout& l = c.layout();
    if (bs.fsinfo_sector == 0 || bs.fsinfo_sector == 0xFFFF) {
        // "No FSInfo sector": fsck.fat 4.2 says "No FSINFO sector" and exits
        // 0, the Linux driver reads sector 1 for a 0 and ignores a bad
        // signature there; the FSInfo counts are only hints [FATGEN "FAT32
        // FSInfo Sector Structure"].
        c.out.add("fat.fsinfo.none", at_sector(0, l.bytes_per_sector, "boot sector BPB_FSInfo"),
                  fmt::format("BPB_FSInfo is {}: the volume has no FSInfo sector, so no free-cluster count "
                              "or next-free hint",
                              bs.fsinfo_sector == 0 ? "0" : "0xFFFF"));
    } else if (bs.fsinfo_sector >= l.reserved_sectors) {
        c.out.add("fat.fsinfo.location", at_sector(0, l.bytes_per_sector, "boot sector BPB_FSInfo"),
                  fmt::format("BPB_FSInfo is {}, must be a sector of the reserved region (1..{})",
                              bs.fsinfo_sector, l.reserved_sectors - 1));
    } else if (c.boot.fsinfo) {
        const FsInfo& fi = *c.boot.fsinfo;
        std::vector<std::string> bad;
        if (fi.lead_signature != kFsInfoLeadSig) {
            bad.push_back(
                fmt::format("FSI_LeadSig is {:08X}, expected {:08X}", fi.lead_signature, kFsInfoLeadSig));
        }
        if (fi.struct_signature != kFsInfoStrucSig) {
            bad.push_back(
                fmt::format("FSI_StrucSig is {:08X}, expected {:08X}", fi.struct_signature, kFsInfoStrucSig));
        }
        if (fi.trail_signature != kFsInfoTrailSig) {
            bad.push_back(
                fmt::format("FSI_TrailSig is {:08X}, expected {:08X}", fi.trail_signature, kFsInfoTrailSig));
        }
        if (!bad.empty()) {
            std::string msg = bad[0];
            for (std::size_t i = 1; i < bad.size(); ++i) msg += "; " + bad[i];
            c.out.add("fat.fsinfo.signature",
                      at_sector(bs.fsinfo_sector, l.bytes_per_sector,
                                fmt::format("FSInfo sector {}", bs.fsinfo_sector)),
                      msg);
        }
    }
    if (bs.backup_boot_sector == 0 || bs.backup_boot_sector == 0xFFFF ||
        bs.backup_boot_sector >= l.reserved_sectors) {
        c.out.add(
            "fat.boot.backup-missing", at_sector(0, l.bytes_per_sector, "boot sector BPB_BkBootSec"),
            fmt::format("BPB_BkBootSec is {}: there is no backup boot sector in the {} reserved sectors",
                        bs.backup_boot_sector, l.reserved_sectors));
        return;
    }
    const std::uint64_t at = std::uint64_t(bs.backup_boot_sector) * l.bytes_per_sector;
    if (at + kBootSectorSize > c.device.size()) return;  // truncation is reported already
    std::array<std::byte, kBootSectorSize> main{}, backup{};
    c.device.read_at(0, main);
    c.device.read_at(at, backup);
    // Each differing byte is the dirty flag (bit 0 of BS_Reserved1, kept
    // current in sector 0 only), boot code (BS_jmpBoot, BS_OEMName and
    // BS_BootCode32: what boot-loader installers rewrite in sector 0 only, and
    // no driver reads), or a BPB field.
    const auto is_boot_code = [](std::size_t i) {
        return i < off::BytsPerSec || (i >= off::BootCode32 && i < off::Signature);
    };
    std::size_t diffs = 0, code_diffs = 0, field_diffs = 0;
    std::size_t first = 0, first_field = 0;
    for (std::size_t i = 0; i < kBootSectorSize; ++i) {
        if (main[i] == backup[i]) continue;
        if (diffs++ == 0) first = i;
        if (is_boot_code(i)) {
            ++code_diffs;
        } else if (i != off::Reserved1_32 ||
                   ((std::to_integer<unsigned>(main[i]) ^ std::to_integer<unsigned>(backup[i])) & ~1u)) {
            if (field_diffs++ == 0) first_field = i;
        }
    }
    if (diffs == 0) return;
    const auto loc = at_sector(bs.backup_boot_sector, l.bytes_per_sector, "backup boot sector");
    if (field_diffs == 0 && code_diffs == 0) {
        c.out.add("fat.boot.backup-dirty-only", loc,
                  "the backup boot sector differs from sector 0 only in the dirty flag of BS_Reserved1 (byte "
                  "0x41); that flag is only kept current in sector 0");
    } else if (field_diffs == 0) {
        // fsck.fat 4.2 -n: "There are differences between boot sector and its
        // backup. This is mostly harmless", exit 0.
        c.out.add(
            "fat.boot.backup-boot-code", loc,
            fmt::format("the backup boot sector differs from sector 0 only in boot code (jump, OEM name "
                        "or bytes 0x{:02X}..0x1FD): {} byte{}, the first at offset 0x{:03X}; its BPB is "
                        "the same, as boot-loader installers leave it",
                        off::BootCode32, code_diffs, code_diffs == 1 ? "" : "s", first));
    } else {
        c.out.add(
            "fat.boot.backup-differs", loc,
            fmt::format(
                "the backup boot sector differs from sector 0 in {} BPB byte{}, the first at offset "
                "0x{:03X} (sector 0 has {:02X}, the backup {:02X}){}",
                field_diffs, field_diffs == 1 ? "" : "s", first_field,
                std::to_integer<unsigned>(main[first_field]), std::to_integer<unsigned>(backup[first_field]),
                code_diffs
                    ? fmt::format(", and in {} byte{} of boot code", code_diffs, code_diffs == 1 ? "" : "s")
                    : std::string()));
    }
}

}  // namespace

bool check_boot(Context& c) {
    const BootSector& bs = c.boot.boot;
    const std::uint32_t bps0 = bs.bytes_per_sector >= 512 ? bs.bytes_per_sector : 512;
    if (bs.signature != 0xAA55) {
        auto loc = at_sector(0, bps0, "boot sector signature");
        loc.byte_offset = off::Signature;
        c.out.add("fat.boot.signature", loc,
                  fmt::format("bytes 510-511 of the boot sector are {:02X} {:02X}, expected 55 AA",
                              bs.signature & 0xFF, bs.signature >> 8));
    }
    if (!c.boot.layout) {
        c.out.add("fat.boot.geometry", at_sector(0, bps0, "boot sector BPB"),
                  *c.boot.problem + "; nothing more can be checked");
        return false;
    }
    const Layout& l = c.layout();
    c.summary.type = to_string(l.type);
    c.summary.cluster_bytes = l.cluster_bytes();
    const auto bpb = [&](const char* field) {
        return at_sector(0, l.bytes_per_sector, std::string("boot sector ") + field);
    };
    if (bs.media != 0xF0 && bs.media < 0xF8) {
        c.out.add("fat.boot.media", bpb("BPB_Media"),
                  fmt::format("BPB_Media is 0x{:02X}, must be 0xF0 or 0xF8..0xFF", bs.media));
    }
    if (bs.is_fat32_shape) {
        if (bs.root_entry_count != 0) {
            c.out.add("fat.boot.root-entries", bpb("BPB_RootEntCnt"),
                      fmt::format("BPB_RootEntCnt is {}, must be 0 on FAT32", bs.root_entry_count));
        }
        if (bs.fs_version != 0) {
            c.out.add(
                "fat.boot.fs-version", bpb("BPB_FSVer"),
                fmt::format("BPB_FSVer is {}.{}, must be 0.0", bs.fs_version >> 8, bs.fs_version & 0xFF));
        }
    } else {
        if (bs.root_entry_count == 0) {
            c.out.add("fat.boot.root-entries", bpb("BPB_RootEntCnt"),
                      "BPB_RootEntCnt is 0, but a FAT12/16 volume needs a root directory region");
        }
        if (bs.total_sectors_16 != 0 && bs.total_sectors_32 != 0 &&
            bs.total_sectors_16 != bs.total_sectors_32) {
            c.out.add("fat.boot.total-sectors", bpb("BPB_TotSec16"),
                      fmt::format("BPB_TotSec16 is {} and BPB_TotSec32 is {}: only one may be set",
                                  bs.total_sectors_16, bs.total_sectors_32));
        }
    }
    // The FAT must describe every cluster (formats.md §1.4).
    const std::uint64_t capacity = l.fat_bytes() * 8 / fat_entry_bits(l.type);
    if (capacity < std::uint64_t(l.cluster_count) + 2) {
        c.out.add(
            "fat.boot.fat-too-small", bpb(bs.is_fat32_shape ? "BPB_FATSz32" : "BPB_FATSz16"),
            fmt::format("the FAT has {} sectors ({} entries) but the volume has {} clusters, which need "
                        "{} entries; only clusters up to {} are usable",
                        l.fat_size_sectors, capacity, l.cluster_count, std::uint64_t(l.cluster_count) + 2,
                        capacity > 0 ? capacity - 1 : 0));
    }
    if (!bs.is_fat32_shape && l.cluster_count >= 65525) {
        c.out.add("fat.boot.type-mismatch", bpb("BPB_FATSz16"),
                  fmt::format("the BPB is FAT12/16-shaped (BPB_FATSz16 = {}) but the volume has {} clusters, "
                              "a FAT32 count (65,525 or more)",
                              bs.fat_size_16, core::format_count(l.cluster_count)));
    }
    if (bs.is_fat32_shape && l.cluster_count < 65525) {
        c.out.add("compat.fat32.few-clusters", bpb("BPB_FATSz32"),
                  fmt::format("FAT32 with {} clusters: the specification makes volumes below 65,525 clusters "
                              "FAT12/16; Windows and Linux mount it as FAT32, Windows format never makes it",
                              core::format_count(l.cluster_count)));
    }
    if (l.cluster_count == 4085 || l.cluster_count == 4086 || l.cluster_count == 65525 ||
        l.cluster_count == 65526) {
        c.out.add(
            "compat.fat.ambiguous-count", bpb("BPB_SecPerClus"),
            fmt::format("{} clusters: Windows and the specification disagree on the FAT type at this count",
                        l.cluster_count));
    }
    if (l.cluster_bytes() > 32768) {
        c.out.add(
            "compat.cluster.size", bpb("BPB_SecPerClus"),
            fmt::format("clusters of {} bytes: {}", l.cluster_bytes(),
                        l.cluster_bytes() == 65536 ? "only Windows NT-family drivers mount 64 KiB clusters"
                                                   : "no common driver mounts clusters above 64 KiB"));
    }
    // The dirty bit of BS_Reserved1 is reported with FAT[1]'s clean-shutdown
    // bit in pass 2 (check_fats): one unclean unmount, one finding.
    const std::uint64_t volume_bytes = l.volume_bytes();
    if (volume_bytes > c.device.size()) {
        c.truncated = true;
        const std::uint64_t missing = volume_bytes - c.device.size();
        c.out.add("fat.boot.image-truncated", bpb("BPB_TotSec"),
                  fmt::format(
                      "the boot sector says the volume has {} sectors ({} bytes) but {} holds {} bytes: {} "
                      "bytes ({}) are missing{}",
                      l.total_sectors, volume_bytes, check::device_name(c.options.placement, c.device.size()),
                      c.device.size(), missing, core::format_size(missing),
                      check::partition_shortfall(c.options.placement, c.device.size(), missing,
                                                 l.bytes_per_sector)));
    }
    // BPB_HiddSec: "count of hidden sectors preceding the partition that
    // contains this FAT volume" (FATGEN); boot code adds it to find the
    // volume on the disk, the drivers do not read it.
    if (check::start_disagrees(c.options.placement, bs.hidden_sectors, l.bytes_per_sector)) {
        c.out.add(
            "fat.boot.hidden-sectors", bpb("BPB_HiddSec"),
            fmt::format("BPB_HiddSec is {}, the partition starts at sector {}: boot code would read the "
                        "volume from the wrong sectors (the Linux vfat driver does not read it)",
                        bs.hidden_sectors, c.options.placement->start_bytes / l.bytes_per_sector));
    }
    c.vol = std::make_unique<Volume>(c.device, c.boot);
    c.summary.cluster_count = c.vol->max_cluster() - 1;
    if (bs.is_fat32_shape) {
        if (!c.vol->is_cluster(bs.root_cluster)) {
            c.root_ok = false;
            c.out.add(
                "fat.boot.root-cluster", bpb("BPB_RootClus"),
                fmt::format("BPB_RootClus is {}, not a cluster of the volume (2..{}); the directory tree "
                            "cannot be checked",
                            bs.root_cluster, c.vol->max_cluster()));
        }
        check_fsinfo_and_backup(c);
    }
    return true;
}

}  // namespace fsimg::fat::detail
