#include "fsimg/exfat/volume.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/layout.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::size_t kMaxRootBytes = 64u << 10;        ///< read at a time from the root, for system entries
constexpr std::uint64_t kMaxRootDirBytes = 256u << 20;  ///< a directory's limit [EXFAT §6.2]

BootRegionCopy read_copy(const io::BlockDevice& dev, std::uint64_t first_sector, std::uint32_t bps,
                         std::vector<std::byte>& bytes) {
    bytes.assign(std::size_t{kBootRegionSectors} * bps, std::byte{0});
    dev.read_at(first_sector * bps, bytes);
    const std::span<const std::byte> r(bytes);
    BootRegionCopy c;
    c.boot = decode_boot_sector(r.first<kBootSectorSize>());
    c.checksum_computed = boot_checksum(r.first(std::size_t{11} * bps));
    c.checksum_stored = core::load_le32(r, std::size_t{kChecksumSector} * bps);
    // boot_region_checksum_ok without computing the checksum a second time.
    const auto cs = r.subspan(std::size_t{kChecksumSector} * bps, bps);
    c.checksum_ok = true;
    for (std::size_t i = 0; i + 4 <= cs.size(); i += 4)
        c.checksum_ok = c.checksum_ok && core::load_le32(cs, i) == c.checksum_computed;
    for (std::uint32_t s = 1; s <= kExtendedBootSectors; ++s) {
        if (extended_boot_signature(r.subspan(std::size_t{s} * bps, bps)) == kExtendedBootSignature) {
            ++c.extended_signatures_ok;
        }
    }
    const auto oem = r.subspan(std::size_t{kOemParametersSector} * bps, bps);
    if (std::all_of(oem.begin(), oem.end(), [](std::byte b) { return b == std::byte{0}; })) {
        c.oem_parameters = "null";
    } else if (std::all_of(oem.begin(), oem.end(), [](std::byte b) { return b == std::byte{0xFF}; })) {
        c.oem_parameters = "0xFF";
    } else {
        c.oem_parameters = "parameters";
    }
    return c;
}

/// The root's system entries and the up-case checksum; sets root_problem instead of throwing.
void read_root(const io::BlockDevice& dev, BootRegion& r) {
    const BootSector& bs = r.active;
    const std::uint64_t bps = r.bytes_per_sector;
    const std::uint64_t cluster = bps << bs.sectors_per_cluster_shift;
    const std::uint64_t heap = std::uint64_t(bs.cluster_heap_offset) * bps;
    auto cluster_at = [&](std::uint32_t c) { return heap + std::uint64_t(c - 2) * cluster; };
    auto in_heap = [&](std::uint32_t c) {
        return c >= 2 && std::uint64_t(c) <= std::uint64_t(bs.cluster_count) + 1;
    };

    // The system entries may stand in any cluster of the root's FAT chain
    // [EXFAT §7.1-7.3: "in the root directory"], not only its first: the
    // chain is followed, every link checked, to the end-of-directory entry,
    // at most kMaxRootDirBytes (the 256 MiB directory limit, §6.2) and
    // ClusterCount clusters; one piece of at most kMaxRootBytes is held.
    const std::uint32_t root = bs.first_cluster_of_root_directory;
    if (!in_heap(root) || cluster_at(root) + std::min<std::uint64_t>(cluster, kMaxRootBytes) > dev.size()) {
        r.root_problem = fmt::format("the root directory's first cluster {} is outside the image", root);
        return;
    }
    const std::uint64_t fat_at = std::uint64_t(bs.fat_offset) * bps;
    const std::uint64_t max_clusters = std::min<std::uint64_t>(
        std::uint64_t(bs.cluster_count), std::max<std::uint64_t>(1, kMaxRootDirBytes / cluster));
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(cluster, kMaxRootBytes)));
    std::uint32_t rc = root;
    bool end = false;
    for (std::uint64_t k = 0; k < max_clusters && !end; ++k) {
        for (std::uint64_t piece = 0; piece < cluster && !end; piece += buf.size()) {
            if (cluster_at(rc) + piece + buf.size() > dev.size()) return;
            dev.read_at(cluster_at(rc) + piece, buf);
            const std::span<const std::byte> b(buf);
            for (std::size_t i = 0; i + kDirEntrySize <= b.size(); i += kDirEntrySize) {
                const auto e = b.subspan(i).first<kDirEntrySize>();
                const auto type = static_cast<std::uint8_t>(e[0]);
                if (type == kEntryEndOfDirectory) {
                    end = true;
                    break;
                }
                if (type == kEntryVolumeLabel && !r.label) r.label = decode_volume_label_entry(e);
                if (type == kEntryAllocationBitmap && !r.bitmap) r.bitmap = decode_allocation_bitmap_entry(e);
                if (type == kEntryUpcaseTable && !r.upcase) r.upcase = decode_upcase_table_entry(e);
            }
        }
        if (end || (r.label && r.bitmap && r.upcase)) break;
        if (fat_at + 4ull * rc + 4 > dev.size()) break;
        std::array<std::byte, 4> next{};
        dev.read_at(fat_at + 4ull * rc, next);
        rc = core::load_le32(next, 0);
        if (!in_heap(rc)) break;  // end of chain, or a broken link (the tree pass reports it)
    }

    // The up-case table: a FAT chain of ceil(DataLength / cluster) clusters.
    if (!r.upcase || r.upcase->data_length == 0 || r.upcase->data_length > kMaxUpcaseBytes) return;
    const std::uint64_t fat = std::uint64_t(bs.fat_offset) * bps;
    std::vector<std::byte> table;
    table.reserve(static_cast<std::size_t>(r.upcase->data_length));
    std::uint32_t c = r.upcase->first_cluster;
    while (table.size() < r.upcase->data_length) {
        if (!in_heap(c)) return;  // broken chain: no checksum
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(cluster, r.upcase->data_length - table.size()));
        if (cluster_at(c) + take > dev.size() || fat + 4ull * c + 4 > dev.size()) return;
        const std::size_t at = table.size();
        table.resize(at + take);
        dev.read_at(cluster_at(c), std::span<std::byte>(table).subspan(at));
        if (table.size() < r.upcase->data_length) {
            std::array<std::byte, 4> next{};
            dev.read_at(fat + 4ull * c, next);
            c = core::load_le32(next, 0);
        }
    }
    r.upcase_checksum_computed = table_checksum(table);
}

/// Reads both regions with `bps`-byte sectors into r (main, backup, backup_identical, problems).
void read_regions(const io::BlockDevice& dev, std::uint32_t bps, BootRegion& r) {
    const std::uint64_t region = std::uint64_t{kBootRegionSectors} * bps;
    if (dev.size() < region) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("the image holds {} bytes, less than the {}-byte main boot region",
                                dev.size(), region));
    }
    r.bytes_per_sector = bps;
    std::vector<std::byte> main_bytes, backup_bytes;
    r.main = read_copy(dev, 0, bps, main_bytes);
    r.backup.reset();
    r.backup_identical = false;
    if (dev.size() >= 2 * region) {
        r.backup = read_copy(dev, kBackupBootRegionSector, bps, backup_bytes);
        for (std::size_t i : {off::VolumeFlags, off::VolumeFlags + 1, off::PercentInUse}) {
            main_bytes[i] = backup_bytes[i] = std::byte{0};
        }
        r.backup_identical = main_bytes == backup_bytes;
    }
    r.problems = validate_boot_sector(r.main.boot);
}

/// A region fit to stand in for the main one, read with `bps`-byte sectors.
bool whole(const BootRegionCopy& c, std::uint32_t bps) {
    return c.checksum_ok && validate_boot_sector(c.boot).empty() &&
           (std::uint32_t{1} << c.boot.bytes_per_sector_shift) == bps;
}

/// The sector size (512..4096) at which a whole backup region stands at sector 12, if any.
std::optional<std::uint32_t> whole_backup_sector_size(const io::BlockDevice& dev) {
    std::vector<std::byte> bytes;
    for (std::uint32_t bps = 512; bps <= 4096; bps *= 2) {
        if (dev.size() < 2ull * kBootRegionSectors * bps) break;
        if (whole(read_copy(dev, kBackupBootRegionSector, bps, bytes), bps)) return bps;
    }
    return std::nullopt;
}

bool says_exfat(const io::BlockDevice& dev) {
    if (dev.size() < off::FileSystemName + 8) return false;
    std::array<std::byte, off::FileSystemName + 8> head{};
    dev.read_at(0, head);
    return core::load_string(std::span<const std::byte>(head).subspan(off::FileSystemName, 8)) ==
           kFileSystemName;
}

}  // namespace

bool probe(const io::BlockDevice& dev) {
    if (says_exfat(dev)) return true;
    if (dev.size() < kBootSectorSize) return false;
    // A FAT or NTFS boot sector holds BytesPerSector (512..4096) at byte 11,
    // where exFAT has MustBeZero: such a volume is not taken for a damaged
    // exFAT one, whatever an old backup region says.
    std::array<std::byte, 2> bps{};
    dev.read_at(11, bps);
    const unsigned n = core::load_le16(bps, 0);
    if (n == 512 || n == 1024 || n == 2048 || n == 4096) return false;
    return whole_backup_sector_size(dev).has_value();
}

BootRegion read_boot_region(const io::BlockDevice& dev) {
    BootRegion r;
    r.device_bytes = dev.size();
    if (dev.size() < kBootSectorSize) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("the image holds {} bytes, less than a boot sector", dev.size()));
    }
    std::array<std::byte, kBootSectorSize> s0{};
    dev.read_at(0, s0);
    const bool named = says_exfat(dev);
    std::optional<std::uint32_t> backup_bps;
    if (!named) {
        backup_bps = whole_backup_sector_size(dev);
        if (!backup_bps) {
            throw Error(ErrorCode::not_this_fs,
                        "no exFAT boot sector: byte 3 does not say \"EXFAT   \" and sector 12 holds no whole "
                        "backup boot region");
        }
    }
    const unsigned shift = static_cast<std::uint8_t>(s0[off::BytesPerSectorShift]);
    read_regions(dev, backup_bps.value_or((shift >= 9 && shift <= 12) ? (1u << shift) : 512), r);
    if (!r.problems.empty() || !r.main.checksum_ok) {
        // The main region is damaged. Its BytesPerSectorShift may be what is
        // wrong: look for the backup at the other sector sizes too.
        if (!(r.backup && whole(*r.backup, r.bytes_per_sector))) {
            if (!backup_bps) backup_bps = whole_backup_sector_size(dev);
            if (backup_bps && *backup_bps != r.bytes_per_sector) read_regions(dev, *backup_bps, r);
        }
        if (r.backup && whole(*r.backup, r.bytes_per_sector)) {
            r.use_backup = true;
            r.main_damage = r.problems.empty()
                                ? fmt::format(
                                      "its sectors 0..10 sum to {:08X}, its checksum sector holds {:08X} "
                                      "[exfat.boot.checksum]",
                                      r.main.checksum_computed, r.main.checksum_stored)
                                : fmt::format("{} [{}]", r.problems.front().message, r.problems.front().code);
        }
    }
    r.active = r.main.boot;
    if (r.use_backup) {
        r.active = r.backup->boot;
        if (r.main.boot.file_system_name == kFileSystemName) {
            r.active.volume_flags = r.main.boot.volume_flags;
            r.active.percent_in_use = r.main.boot.percent_in_use;
        }
    }
    if (r.usable()) {
        if (r.active.volume_length > (~std::uint64_t{0}) / r.bytes_per_sector) {
            r.missing_bytes = ~std::uint64_t{0};
        } else if (r.active.volume_length * r.bytes_per_sector > dev.size()) {
            r.missing_bytes = r.active.volume_length * r.bytes_per_sector - dev.size();
        }
        read_root(dev, r);
    } else {
        r.root_problem = "the boot sector is invalid";
    }
    return r;
}

std::vector<BootField> boot_fields(const BootSector& bs) {
    auto num = [](const char* name, std::size_t offset, std::size_t width, std::uint64_t v) {
        return BootField{name, offset, width, v, {}, false};
    };
    auto text = [](const char* name, std::size_t offset, std::size_t width, std::string v) {
        return BootField{name, offset, width, 0, std::move(v), true};
    };
    return {
        text("JumpBoot", off::JumpBoot, 3,
             fmt::format("{:02X} {:02X} {:02X}", bs.jump_boot[0], bs.jump_boot[1], bs.jump_boot[2])),
        text("FileSystemName", off::FileSystemName, 8, bs.file_system_name),
        text("MustBeZero", off::MustBeZero, 53, bs.must_be_zero_is_zero ? "all zero" : "NOT all zero"),
        num("PartitionOffset", off::PartitionOffset, 8, bs.partition_offset),
        num("VolumeLength", off::VolumeLength, 8, bs.volume_length),
        num("FatOffset", off::FatOffset, 4, bs.fat_offset),
        num("FatLength", off::FatLength, 4, bs.fat_length),
        num("ClusterHeapOffset", off::ClusterHeapOffset, 4, bs.cluster_heap_offset),
        num("ClusterCount", off::ClusterCount, 4, bs.cluster_count),
        num("FirstClusterOfRootDirectory", off::FirstClusterOfRootDirectory, 4,
            bs.first_cluster_of_root_directory),
        num("VolumeSerialNumber", off::VolumeSerialNumber, 4, bs.volume_serial_number),
        num("FileSystemRevision", off::FileSystemRevision, 2, bs.file_system_revision),
        num("VolumeFlags", off::VolumeFlags, 2, bs.volume_flags),
        num("BytesPerSectorShift", off::BytesPerSectorShift, 1, bs.bytes_per_sector_shift),
        num("SectorsPerClusterShift", off::SectorsPerClusterShift, 1, bs.sectors_per_cluster_shift),
        num("NumberOfFats", off::NumberOfFats, 1, bs.number_of_fats),
        num("DriveSelect", off::DriveSelect, 1, bs.drive_select),
        num("PercentInUse", off::PercentInUse, 1, bs.percent_in_use),
        num("BootSignature", off::BootSignature, 2, bs.boot_signature),
    };
}

std::string label_text(const VolumeLabelEntry& e) {
    const std::size_t n = std::min<std::size_t>(e.character_count, e.volume_label.size());
    return core::utf16_to_utf8_lossy(std::u16string_view(e.volume_label.data(), n));
}

std::string backup_note(const BootRegion& r) {
    if (!r.use_backup) return {};
    return fmt::format(
        "the main boot region (sectors 0..11) is damaged ({}); reading through the backup boot "
        "region (sectors 12..23)",
        r.main_damage);
}

std::vector<std::string> reading_problems(const Volume& v) {
    std::vector<std::string> out;
    if (v.boot().use_backup) out.push_back(backup_note(v.boot()));
    if (v.upcase_problem()) {
        out.push_back(
            fmt::format("names are compared with the recommended up-case table: {}", *v.upcase_problem()));
    }
    return out;
}

}  // namespace fsimg::exfat
