// Pass 1: the boot region. Every field rule of the main boot sector
// (validate_boot_sector), the boot checksums of both regions, main vs
// backup, extended boot signatures, the geometry against the image size,
// and VolumeFlags.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::exfat::detail {

namespace {

/// `suffix` ends the checksum finding's message.
void check_copy(Context& c, const BootRegionCopy& r, std::uint64_t first_sector, bool main,
                std::string_view suffix = {}) {
    const char* name = main ? "main boot region" : "backup boot region";
    if (!r.checksum_ok) {
        c.out.add(
            main ? "exfat.boot.checksum" : "exfat.boot.backup-checksum",
            at_sector(first_sector + kChecksumSector, c.bps(), fmt::format("{} checksum sector", name)),
            fmt::format("the {}'s sectors 0..10 sum to {:08X}, its checksum sector (sector {}) holds "
                        "{:08X}{}{}",
                        name, r.checksum_computed, first_sector + kChecksumSector, r.checksum_stored,
                        r.checksum_stored == r.checksum_computed ? " in its first word but not in all" : "",
                        suffix));
    }
    if (r.extended_signatures_ok != kExtendedBootSectors) {
        c.out.add("exfat.boot.extended-signature",
                  at_sector(first_sector + 1, c.bps(), fmt::format("{} extended boot sectors", name)),
                  fmt::format("{} of the {}'s 8 extended boot sectors end with ExtendedBootSignature "
                              "AA550000",
                              r.extended_signatures_ok, name));
    }
}

/// What the volume's regions need from the image, when the image is shorter.
void check_image_size(Context& c) {
    const BootSector& bs = c.boot.active;
    const std::uint64_t bps = c.bps();
    const std::uint64_t have = c.boot.device_bytes;
    if (c.boot.missing_bytes == 0) return;
    const std::uint64_t volume = bs.volume_length * bps;
    const std::uint64_t fat_end =
        (std::uint64_t(bs.fat_offset) + std::uint64_t(bs.fat_length) * bs.number_of_fats) * bps;
    const std::uint64_t heap_end = std::uint64_t(bs.cluster_heap_offset) * bps +
                                   (std::uint64_t(bs.cluster_count) << bs.sectors_per_cluster_shift) * bps;
    std::string cut;
    if (have < fat_end) {
        cut = "the FAT is cut";
    } else if (have < heap_end) {
        const std::uint64_t whole = have <= std::uint64_t(bs.cluster_heap_offset) * bps
                                        ? 0
                                        : (have - std::uint64_t(bs.cluster_heap_offset) * bps) /
                                              (bps << bs.sectors_per_cluster_shift);
        cut = fmt::format("the cluster heap is cut after {} of its {} clusters", core::format_count(whole),
                          core::format_count(bs.cluster_count));
    } else {
        cut = "only the excess space after the cluster heap is missing";
    }
    const std::string device = check::device_name(c.options.placement, have);
    c.out.add("exfat.boot.image-truncated", at_sector(have / bps, c.bps(), "end of " + device),
              fmt::format("{} holds {} bytes, VolumeLength {} sectors needs {}: {} bytes are missing ({}){}",
                          device, have, bs.volume_length, volume, c.boot.missing_bytes, cut,
                          check::partition_shortfall(c.options.placement, have, c.boot.missing_bytes,
                                                     static_cast<std::uint32_t>(bps))));
}

/// PartitionOffset: "the media-relative sector offset of the partition which
/// hosts the given exFAT volume", for boot code; 0 means "ignore" (exFAT
/// spec §3.1.6). The Linux exfat driver does not read it.
void check_partition_offset(Context& c) {
    const BootSector& bs = c.boot.active;
    if (!check::start_disagrees(c.options.placement, bs.partition_offset, c.bps())) return;
    c.out.add(
        "exfat.boot.partition-offset", at_sector(0, c.bps(), "boot sector PartitionOffset"),
        fmt::format("PartitionOffset is {}, the partition starts at sector {}: boot code would read the "
                    "volume from the wrong sectors (the Linux exfat driver does not read it)",
                    bs.partition_offset, c.options.placement->start_bytes / c.bps()));
}

/// For a main region whose checksum fails: which bytes of sectors 0..10
/// differ from the backup region's (VolumeFlags and PercentInUse aside, as
/// the checksum leaves them out), and whether they are only bytes
/// 0x1B8..0x1BD of sector 0, where an MBR keeps its disk signature: Windows
/// writes one there on unpartitioned media, after the format computed the
/// checksum. Empty without a backup.
std::string main_checksum_detail(Context& c) {
    if (!c.boot.backup) return {};
    const std::size_t bps = c.bps();
    const std::size_t n = std::size_t{11} * bps;
    std::vector<std::byte> main(n), backup(n);
    c.device.read_at(0, main);
    c.device.read_at(std::uint64_t{kBackupBootRegionSector} * bps, backup);
    constexpr std::size_t kSigFirst = 0x1B8, kSigEnd = 0x1BE;
    std::vector<std::size_t> diffs;
    std::size_t count = 0;
    bool only_signature = true;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == off::VolumeFlags || i == off::VolumeFlags + 1 || i == off::PercentInUse) continue;
        if (main[i] == backup[i]) continue;
        if (diffs.size() < 5) diffs.push_back(i);
        ++count;
        if (i < kSigFirst || i >= kSigEnd) only_signature = false;
    }
    if (count == 0) return "; sectors 0..10 equal the backup region's (VolumeFlags and PercentInUse aside)";
    const auto byte_at = [&](const std::vector<std::byte>& v, std::size_t i) {
        return std::to_integer<unsigned>(v[i]);
    };
    if (only_signature) {
        std::string m, b;
        for (std::size_t i = kSigFirst; i < kSigFirst + 4; ++i) {
            m += fmt::format("{}{:02X}", m.empty() ? "" : " ", byte_at(main, i));
            b += fmt::format("{}{:02X}", b.empty() ? "" : " ", byte_at(backup, i));
        }
        return fmt::format(
            "; sector 0 differs from the backup only in bytes 0x1B8..0x1BD (main {}, backup {}): an MBR disk "
            "signature, which Windows writes on unpartitioned media after the checksum was computed",
            m, b);
    }
    std::string list;
    for (std::size_t i : diffs) {
        list += fmt::format("{}sector {} byte 0x{:03X} ({:02X}, backup {:02X})", list.empty() ? "" : ", ",
                            i / bps, i % bps, byte_at(main, i), byte_at(backup, i));
    }
    return fmt::format("; sectors 0..10 differ from the backup region's in {} byte{}: {}{}", count,
                       count == 1 ? "" : "s", list, count > diffs.size() ? ", ..." : "");
}

}  // namespace

bool check_boot(Context& c) {
    try {
        c.boot = read_boot_region(c.device);
    } catch (const Error& e) {
        if (e.code() != ErrorCode::corrupt) throw;
        c.out.add("exfat.boot.image-truncated", at_sector(0, 512, "boot region"), e.what());
        return false;
    }
    const BootSector& bs = c.boot.active;
    // A main boot sector of zeros (a wiped or never written sector 0) breaks
    // every field rule and the main checksum at once: with a whole backup,
    // that is one finding, not one per rule (one root cause, one finding).
    bool main_zeroed = false;
    if (c.boot.use_backup) {
        std::vector<std::byte> s0(c.bps());
        c.device.read_at(0, s0);
        main_zeroed = std::all_of(s0.begin(), s0.end(), [](std::byte b) { return b == std::byte{0}; });
    }
    if (main_zeroed) {
        c.out.add(
            "exfat.boot.main-zeroed", at_sector(0, c.bps(), "boot sector"),
            fmt::format("the main boot sector (sector 0, {} bytes) is all zeros; the volume was checked "
                        "through the backup boot region (sectors 12..23), which is whole",
                        c.bps()));
    }
    // The first finding on the main region says that the backup stands in.
    std::string via_backup = c.boot.use_backup
                                 ? "; the volume is checked through the backup boot region (sectors 12..23), "
                                   "which is whole"
                                 : "";
    for (const auto& p : c.boot.problems) {
        if (main_zeroed) break;
        check::Finding& f = c.out.add(p.code, at_sector(0, c.bps(), "boot sector"), p.message + via_backup);
        via_backup.clear();
        // With the backup standing in, the check goes on: not fatal.
        if (c.boot.use_backup && f.severity == check::Severity::fatal) f.severity = check::Severity::error;
    }
    if (main_zeroed) {
        // The main checksum fails because sector 0 is zeros; the extended
        // boot sectors are still judged.
        BootRegionCopy rest = c.boot.main;
        rest.checksum_ok = true;
        check_copy(c, rest, 0, true);
    } else {
        check_copy(c, c.boot.main, 0, true,
                   c.boot.main.checksum_ok ? via_backup : main_checksum_detail(c) + via_backup);
    }
    if (c.boot.backup) {
        check_copy(c, *c.boot.backup, kBackupBootRegionSector, false);
        // One root cause, one finding: a region that does not match its own
        // checksum, or a main region the backup stands in for, already
        // explains why the copies differ.
        if (!c.boot.use_backup && !c.boot.backup_identical && c.boot.main.checksum_ok &&
            c.boot.backup->checksum_ok) {
            c.out.add("exfat.boot.backup-differs",
                      at_sector(kBackupBootRegionSector, c.bps(), "backup boot region"),
                      fmt::format("the backup boot region (sectors 12..23) differs from the main one "
                                  "(VolumeFlags and PercentInUse aside); checksums {:08X} and {:08X}",
                                  c.boot.backup->checksum_computed, c.boot.main.checksum_computed));
        }
    }
    if (bs.volume_flags & kVolumeFlagVolumeDirty) {
        c.out.add("exfat.boot.dirty", at_sector(0, c.bps(), "boot sector VolumeFlags"),
                  fmt::format("VolumeFlags is 0x{:04X}: VolumeDirty is set, the volume was not unmounted "
                              "cleanly",
                              bs.volume_flags));
    }
    if (bs.volume_flags & kVolumeFlagMediaFailure) {
        c.out.add("exfat.boot.media-failure", at_sector(0, c.bps(), "boot sector VolumeFlags"),
                  fmt::format("VolumeFlags is 0x{:04X}: MediaFailure is set, a driver met a media error",
                              bs.volume_flags));
    }
    if (!c.boot.usable()) return false;
    c.summary.type = "exFAT";
    c.summary.cluster_count = bs.cluster_count;
    c.summary.cluster_bytes = c.bps() << bs.sectors_per_cluster_shift;
    check_image_size(c);
    check_partition_offset(c);
    try {
        c.vol = std::make_unique<Volume>(c.device, c.boot);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        // The boot sector is valid, so the root is outside the image; the
        // truncation finding says why.
        if (c.boot.missing_bytes == 0) {
            c.out.add("exfat.dir.unreadable", at_sector(0, c.bps(), "/"), e.what());
        }
        return false;
    }
    return true;
}

}  // namespace fsimg::exfat::detail
