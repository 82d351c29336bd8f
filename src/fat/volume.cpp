#include "fsimg/fat/volume.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat {

std::optional<std::string> geometry_problem(const BootSector& bs) {
    const unsigned bps = bs.bytes_per_sector;
    if (bps < 512 || bps > 4096 || !core::is_power_of_two(bps)) {
        return fmt::format("BPB_BytsPerSec is {}, must be 512, 1024, 2048 or 4096", bps);
    }
    if (!core::is_power_of_two(bs.sectors_per_cluster)) {
        return fmt::format("BPB_SecPerClus is {}, must be a power of two from 1 to 128",
                           bs.sectors_per_cluster);
    }
    if (bs.reserved_sectors == 0) return std::string("BPB_RsvdSecCnt is 0, must be at least 1");
    if (bs.num_fats == 0) return std::string("BPB_NumFATs is 0, must be at least 1");
    if (bs.fat_size() == 0) return std::string("BPB_FATSz16 and BPB_FATSz32 are both 0");
    if (bs.total_sectors() == 0) return std::string("BPB_TotSec16 and BPB_TotSec32 are both 0");
    const std::uint64_t root_sectors = core::div_ceil(std::uint64_t(bs.root_entry_count) * 32, bps);
    const std::uint64_t meta =
        bs.reserved_sectors + std::uint64_t(bs.num_fats) * bs.fat_size() + root_sectors;
    if (meta >= bs.total_sectors()) {
        return fmt::format(
            "the reserved sectors, FATs and root directory take {} sectors, but the volume has "
            "only {} (BPB_TotSec)",
            meta, bs.total_sectors());
    }
    return std::nullopt;
}

bool has_boot_jump(const BootSector& bs) noexcept {
    return (bs.jmp_boot[0] == 0xEB && bs.jmp_boot[2] == 0x90) || bs.jmp_boot[0] == 0xE9;
}

std::optional<BackupBootSector> find_backup_boot_sector(const io::BlockDevice& dev) {
    constexpr std::uint64_t kBackupSector = 6;
    for (const std::uint32_t bps : {512u, 1024u, 2048u, 4096u}) {
        const std::uint64_t at = kBackupSector * bps;
        if (at + kBootSectorSize > dev.size()) break;
        BackupBootSector b;
        b.offset = at;
        dev.read_at(at, b.sector);
        const BootSector bs = decode_boot_sector(b.sector);
        if (bs.is_fat32_shape && has_boot_jump(bs) && bs.signature == 0xAA55 && bs.bytes_per_sector == bps &&
            bs.backup_boot_sector == kBackupSector && !geometry_problem(bs))
            return b;
    }
    return std::nullopt;
}

std::optional<std::string> boot_copy_problem(BootSpan sector, const io::BlockDevice& dev) {
    const BootSector bs = decode_boot_sector(sector);
    if (!has_boot_jump(bs))
        return fmt::format("no boot sector jump (EB xx 90 or E9): {:02X} {:02X} {:02X}", bs.jmp_boot[0],
                           bs.jmp_boot[1], bs.jmp_boot[2]);
    if (bs.signature != 0xAA55)
        return fmt::format("bytes 510-511 are {:02X} {:02X}, not 55 AA", bs.signature & 0xFF,
                           bs.signature >> 8);
    if (bs.oem_name == "EXFAT   " || bs.oem_name == "NTFS    ")
        return fmt::format("the OEM name is \"{}\": an exFAT or NTFS boot sector", bs.oem_name);
    if (auto p = geometry_problem(bs)) return p;
    const Layout l = layout_from_boot_sector(bs);
    if (l.volume_bytes() > dev.size())
        return fmt::format("it describes {} bytes of volume, more than the {} the image holds",
                           l.volume_bytes(), dev.size());
    std::array<std::byte, 1> fat0{};
    dev.read_at(l.first_fat_sector * l.bytes_per_sector, fat0);
    if (std::to_integer<std::uint8_t>(fat0[0]) != bs.media)
        return fmt::format(
            "FAT[0]'s media byte {:02X} in the FAT it locates (sector {}) is not its BPB_Media {:02X}",
            std::to_integer<unsigned>(fat0[0]), l.first_fat_sector, bs.media);
    return std::nullopt;
}

BootRegion read_boot_region(const io::BlockDevice& dev) {
    if (dev.size() < kBootSectorSize) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("the image holds {} bytes, less than one 512-byte boot sector", dev.size()),
                    0);
    }
    std::array<std::byte, kBootSectorSize> s0{};
    dev.read_at(0, s0);
    BootRegion r;
    r.device_bytes = dev.size();
    r.boot = decode_boot_sector(s0);
    if (r.boot.oem_name == "EXFAT   " || r.boot.oem_name == "NTFS    ") {
        throw Error(ErrorCode::not_this_fs, fmt::format("the volume is {}, not FAT",
                                                        r.boot.oem_name == "NTFS    " ? "NTFS" : "exFAT"));
    }
    if (!has_boot_jump(r.boot)) {
        throw Error(ErrorCode::not_this_fs,
                    fmt::format("sector 0 does not start with a FAT boot sector jump (EB xx 90 or E9): found "
                                "{:02X} {:02X} {:02X}",
                                r.boot.jmp_boot[0], r.boot.jmp_boot[1], r.boot.jmp_boot[2]),
                    0);
    }
    r.problem = geometry_problem(r.boot);
    if (r.problem) return r;
    Layout l = layout_from_boot_sector(r.boot);
    r.layout = l;
    const std::uint32_t bps = l.bytes_per_sector;
    auto read_sector_512 =
        [&](std::uint64_t sector) -> std::optional<std::array<std::byte, kBootSectorSize>> {
        const std::uint64_t at = sector * bps;
        if (at + kBootSectorSize > dev.size()) return std::nullopt;
        std::array<std::byte, kBootSectorSize> buf{};
        dev.read_at(at, buf);
        return buf;
    };
    if (r.boot.is_fat32_shape) {
        if (r.boot.fsinfo_sector != 0 && r.boot.fsinfo_sector < l.reserved_sectors) {
            if (auto s = read_sector_512(r.boot.fsinfo_sector)) r.fsinfo = decode_fsinfo(*s);
        }
        if (r.boot.backup_boot_sector != 0 && r.boot.backup_boot_sector < l.reserved_sectors) {
            if (auto s = read_sector_512(r.boot.backup_boot_sector)) {
                r.backup = decode_boot_sector(*s);
                r.backup_identical = *s == s0;
            }
        }
    }
    // The volume label entry: look in the first sector or cluster of the root.
    std::uint64_t root_at = 0;
    std::uint64_t root_len = 0;
    if (r.boot.is_fat32_shape) {
        if (l.root_cluster >= 2 && l.root_cluster <= std::uint64_t(l.cluster_count) + 1) {
            root_at = l.cluster_offset(l.root_cluster);
            root_len = l.cluster_bytes();
        }
    } else {
        root_at = l.first_root_dir_sector * bps;
        root_len = std::uint64_t(l.root_dir_sectors) * bps;
    }
    root_len = std::min<std::uint64_t>(root_len, 64 * 1024);
    if (root_len != 0 && root_at + root_len <= dev.size()) {
        std::vector<std::byte> dir(root_len);
        dev.read_at(root_at, dir);
        for (std::size_t i = 0; i + kDirEntrySize <= dir.size(); i += kDirEntrySize) {
            const auto e = std::span<const std::byte>(dir).subspan(i).first<kDirEntrySize>();
            const auto first = static_cast<std::uint8_t>(e[0]);
            if (first == 0x00) break;
            if (first == 0xE5) continue;
            const DirEntry d = decode_dir_entry(e);
            if ((d.attr & 0x3F) == kAttrLongName) continue;
            if ((d.attr & (kAttrVolumeId | kAttrDirectory)) == kAttrVolumeId) {
                r.root_label = std::string(d.name.begin(), d.name.end());
                break;
            }
        }
    }
    return r;
}

std::vector<BootField> boot_fields(const BootSector& bs) {
    std::vector<BootField> f;
    auto num = [&](const char* name, std::size_t off, std::size_t width, std::uint64_t v) {
        f.push_back(BootField{name, off, width, v, {}, false});
    };
    auto txt = [&](const char* name, std::size_t off, std::size_t width, const std::string& v) {
        f.push_back(BootField{name, off, width, 0, v, true});
    };
    txt("BS_jmpBoot", off::jmpBoot, 3,
        fmt::format("{:02X} {:02X} {:02X}", bs.jmp_boot[0], bs.jmp_boot[1], bs.jmp_boot[2]));
    txt("BS_OEMName", off::OEMName, 8, oem_text(bs.oem_name));
    num("BPB_BytsPerSec", off::BytsPerSec, 2, bs.bytes_per_sector);
    num("BPB_SecPerClus", off::SecPerClus, 1, bs.sectors_per_cluster);
    num("BPB_RsvdSecCnt", off::RsvdSecCnt, 2, bs.reserved_sectors);
    num("BPB_NumFATs", off::NumFATs, 1, bs.num_fats);
    num("BPB_RootEntCnt", off::RootEntCnt, 2, bs.root_entry_count);
    num("BPB_TotSec16", off::TotSec16, 2, bs.total_sectors_16);
    num("BPB_Media", off::Media, 1, bs.media);
    num("BPB_FATSz16", off::FATSz16, 2, bs.fat_size_16);
    num("BPB_SecPerTrk", off::SecPerTrk, 2, bs.sectors_per_track);
    num("BPB_NumHeads", off::NumHeads, 2, bs.num_heads);
    num("BPB_HiddSec", off::HiddSec, 4, bs.hidden_sectors);
    num("BPB_TotSec32", off::TotSec32, 4, bs.total_sectors_32);
    if (bs.is_fat32_shape) {
        num("BPB_FATSz32", off::FATSz32, 4, bs.fat_size_32);
        num("BPB_ExtFlags", off::ExtFlags, 2, bs.ext_flags);
        num("BPB_FSVer", off::FSVer, 2, bs.fs_version);
        num("BPB_RootClus", off::RootClus, 4, bs.root_cluster);
        num("BPB_FSInfo", off::FSInfo, 2, bs.fsinfo_sector);
        num("BPB_BkBootSec", off::BkBootSec, 2, bs.backup_boot_sector);
        num("BS_DrvNum", off::DrvNum32, 1, bs.drive_number);
        num("BS_Reserved1", off::Reserved1_32, 1, bs.reserved1);
        num("BS_BootSig", off::BootSig32, 1, bs.boot_signature);
        num("BS_VolID", off::VolID32, 4, bs.volume_id);
        txt("BS_VolLab", off::VolLab32, 11, oem_text(bs.volume_label));
        txt("BS_FilSysType", off::FilSysType32, 8, oem_text(bs.fs_type));
    } else {
        num("BS_DrvNum", off::DrvNum16, 1, bs.drive_number);
        num("BS_Reserved1", off::Reserved1_16, 1, bs.reserved1);
        num("BS_BootSig", off::BootSig16, 1, bs.boot_signature);
        num("BS_VolID", off::VolID16, 4, bs.volume_id);
        txt("BS_VolLab", off::VolLab16, 11, oem_text(bs.volume_label));
        txt("BS_FilSysType", off::FilSysType16, 8, oem_text(bs.fs_type));
    }
    num("Signature_word", off::Signature, 2, bs.signature);
    return f;
}

}  // namespace fsimg::fat
