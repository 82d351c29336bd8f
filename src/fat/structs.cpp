#include "fsimg/fat/structs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"

namespace fsimg::fat {

using core::le16;
using core::le32;
using core::le8;

BootSector decode_boot_sector(BootSpan s) noexcept {
    BootSector bs;
    for (std::size_t i = 0; i < 3; ++i) bs.jmp_boot[i] = static_cast<std::uint8_t>(s[i]);
    bs.oem_name = core::load_string(s.subspan<off::OEMName, 8>());
    bs.bytes_per_sector = le16<off::BytsPerSec>(s);
    bs.sectors_per_cluster = le8<off::SecPerClus>(s);
    bs.reserved_sectors = le16<off::RsvdSecCnt>(s);
    bs.num_fats = le8<off::NumFATs>(s);
    bs.root_entry_count = le16<off::RootEntCnt>(s);
    bs.total_sectors_16 = le16<off::TotSec16>(s);
    bs.media = le8<off::Media>(s);
    bs.fat_size_16 = le16<off::FATSz16>(s);
    bs.sectors_per_track = le16<off::SecPerTrk>(s);
    bs.num_heads = le16<off::NumHeads>(s);
    bs.hidden_sectors = le32<off::HiddSec>(s);
    bs.total_sectors_32 = le32<off::TotSec32>(s);
    bs.is_fat32_shape = bs.fat_size_16 == 0;
    if (bs.is_fat32_shape) {
        bs.fat_size_32 = le32<off::FATSz32>(s);
        bs.ext_flags = le16<off::ExtFlags>(s);
        bs.fs_version = le16<off::FSVer>(s);
        bs.root_cluster = le32<off::RootClus>(s);
        bs.fsinfo_sector = le16<off::FSInfo>(s);
        bs.backup_boot_sector = le16<off::BkBootSec>(s);
        bs.drive_number = le8<off::DrvNum32>(s);
        bs.reserved1 = le8<off::Reserved1_32>(s);
        bs.boot_signature = le8<off::BootSig32>(s);
        bs.volume_id = le32<off::VolID32>(s);
        bs.volume_label = core::load_string(s.subspan<off::VolLab32, 11>());
        bs.fs_type = core::load_string(s.subspan<off::FilSysType32, 8>());
    } else {
        bs.drive_number = le8<off::DrvNum16>(s);
        bs.reserved1 = le8<off::Reserved1_16>(s);
        bs.boot_signature = le8<off::BootSig16>(s);
        bs.volume_id = le32<off::VolID16>(s);
        bs.volume_label = core::load_string(s.subspan<off::VolLab16, 11>());
        bs.fs_type = core::load_string(s.subspan<off::FilSysType16, 8>());
    }
    bs.signature = le16<off::Signature>(s);
    return bs;
}

void encode_boot_sector(const BootSector& bs, MutableBootSpan s) noexcept {
    using core::store16;
    using core::store32;
    using core::store8;
    for (std::size_t i = 0; i < 3; ++i) s[i] = static_cast<std::byte>(bs.jmp_boot[i]);
    core::store_padded(s.subspan<off::OEMName, 8>(), bs.oem_name);
    store16<off::BytsPerSec>(s, bs.bytes_per_sector);
    store8<off::SecPerClus>(s, bs.sectors_per_cluster);
    store16<off::RsvdSecCnt>(s, bs.reserved_sectors);
    store8<off::NumFATs>(s, bs.num_fats);
    store16<off::RootEntCnt>(s, bs.root_entry_count);
    store16<off::TotSec16>(s, bs.total_sectors_16);
    store8<off::Media>(s, bs.media);
    store16<off::FATSz16>(s, bs.fat_size_16);
    store16<off::SecPerTrk>(s, bs.sectors_per_track);
    store16<off::NumHeads>(s, bs.num_heads);
    store32<off::HiddSec>(s, bs.hidden_sectors);
    store32<off::TotSec32>(s, bs.total_sectors_32);
    if (bs.is_fat32_shape) {
        store32<off::FATSz32>(s, bs.fat_size_32);
        store16<off::ExtFlags>(s, bs.ext_flags);
        store16<off::FSVer>(s, bs.fs_version);
        store32<off::RootClus>(s, bs.root_cluster);
        store16<off::FSInfo>(s, bs.fsinfo_sector);
        store16<off::BkBootSec>(s, bs.backup_boot_sector);
        std::fill_n(s.begin() + off::Reserved32, 12, std::byte{0});
        store8<off::DrvNum32>(s, bs.drive_number);
        store8<off::Reserved1_32>(s, bs.reserved1);
        store8<off::BootSig32>(s, bs.boot_signature);
        store32<off::VolID32>(s, bs.volume_id);
        core::store_padded(s.subspan<off::VolLab32, 11>(), bs.volume_label);
        core::store_padded(s.subspan<off::FilSysType32, 8>(), bs.fs_type);
    } else {
        store8<off::DrvNum16>(s, bs.drive_number);
        store8<off::Reserved1_16>(s, bs.reserved1);
        store8<off::BootSig16>(s, bs.boot_signature);
        store32<off::VolID16>(s, bs.volume_id);
        core::store_padded(s.subspan<off::VolLab16, 11>(), bs.volume_label);
        core::store_padded(s.subspan<off::FilSysType16, 8>(), bs.fs_type);
    }
    store16<off::Signature>(s, bs.signature);
}

BootSector boot_sector_from_layout(const Layout& l, std::uint32_t volume_id, std::string_view label11) {
    BootSector bs;
    const bool fat32 = l.type == FatType::fat32;
    const std::uint8_t code_at = fat32 ? off::BootCode32 : off::BootCode16;
    bs.jmp_boot = {0xEB, static_cast<std::uint8_t>(code_at - 2), 0x90};
    bs.oem_name = "MSWIN4.1";  // [FATGEN] recommends it for compatibility
    bs.bytes_per_sector = static_cast<std::uint16_t>(l.bytes_per_sector);
    bs.sectors_per_cluster = static_cast<std::uint8_t>(l.sectors_per_cluster);
    bs.reserved_sectors = static_cast<std::uint16_t>(l.reserved_sectors);
    bs.num_fats = static_cast<std::uint8_t>(l.num_fats);
    bs.root_entry_count = static_cast<std::uint16_t>(fat32 ? 0 : l.root_entry_count);
    if (!fat32 && l.total_sectors < 0x10000) {
        bs.total_sectors_16 = static_cast<std::uint16_t>(l.total_sectors);
    } else {
        bs.total_sectors_32 = static_cast<std::uint32_t>(l.total_sectors);
    }
    bs.media = l.media;
    bs.sectors_per_track = l.sectors_per_track;
    bs.num_heads = l.num_heads;
    bs.hidden_sectors = static_cast<std::uint32_t>(l.hidden_sectors);
    bs.is_fat32_shape = fat32;
    if (fat32) {
        bs.fat_size_32 = l.fat_size_sectors;
        bs.root_cluster = l.root_cluster;
        bs.fsinfo_sector = l.fsinfo_sector;
        bs.backup_boot_sector = l.backup_boot_sector;
    } else {
        bs.fat_size_16 = static_cast<std::uint16_t>(l.fat_size_sectors);
    }
    bs.drive_number = l.media == 0xF8 ? 0x80 : 0x00;
    bs.boot_signature = 0x29;
    bs.volume_id = volume_id;
    bs.volume_label = std::string(label11);
    bs.fs_type = fat32 ? "FAT32   " : l.type == FatType::fat16 ? "FAT16   " : "FAT12   ";
    bs.signature = 0xAA55;
    return bs;
}

Layout layout_from_boot_sector(const BootSector& bs) noexcept {
    Layout l;
    l.bytes_per_sector = bs.bytes_per_sector;
    l.sectors_per_cluster = bs.sectors_per_cluster;
    l.reserved_sectors = bs.reserved_sectors;
    l.num_fats = bs.num_fats;
    l.root_entry_count = bs.root_entry_count;
    l.fat_size_sectors = bs.fat_size();
    l.total_sectors = bs.total_sectors();
    l.hidden_sectors = bs.hidden_sectors;
    l.media = bs.media;
    l.sectors_per_track = bs.sectors_per_track;
    l.num_heads = bs.num_heads;
    l.root_cluster = bs.root_cluster;
    l.fsinfo_sector = bs.fsinfo_sector;
    l.backup_boot_sector = bs.backup_boot_sector;
    if (l.bytes_per_sector == 0 || l.sectors_per_cluster == 0) {
        l.type = bs.is_fat32_shape ? FatType::fat32 : FatType::fat16;
        return l;
    }
    derive_layout(l);
    // Drivers take FAT32 from the BPB shape, FAT12/16 from the count (§1.3).
    l.type = bs.is_fat32_shape ? FatType::fat32 : type_for_cluster_count(l.cluster_count);
    if (l.type == FatType::fat32 && !bs.is_fat32_shape) l.type = FatType::fat16;
    return l;
}

namespace {
// A real-mode program at the boot code offset B (loaded at 0x7C00 + B):
//   xor ax,ax; mov ds,ax; mov si,msg
//   next: lodsb; test al,al; jz done; mov ah,0Eh; mov bx,7; int 10h; jmp next
//   done: xor ax,ax; int 16h (wait for a key); int 19h (reboot); jmp $
constexpr std::uint8_t kStubCode[] = {0x31, 0xC0, 0x8E, 0xD8, 0xBE, 0x00, 0x00, 0xAC, 0x84, 0xC0,
                                      0x74, 0x09, 0xB4, 0x0E, 0xBB, 0x07, 0x00, 0xCD, 0x10, 0xEB,
                                      0xF2, 0x31, 0xC0, 0xCD, 0x16, 0xCD, 0x19, 0xEB, 0xFE};
constexpr char kStubMessage[] =
    "\r\nThis is not a bootable disk. Remove it and press any key to try again.\r\n";
}  // namespace

void write_boot_stub(MutableBootSpan s, bool fat32_shape) noexcept {
    const std::size_t at = fat32_shape ? off::BootCode32 : off::BootCode16;
    static_assert(sizeof kStubCode + sizeof kStubMessage + off::BootCode32 <= off::Signature);
    s[0] = std::byte{0xEB};
    s[1] = static_cast<std::byte>(at - 2);
    s[2] = std::byte{0x90};
    std::memcpy(s.data() + at, kStubCode, sizeof kStubCode);
    const std::uint16_t msg = static_cast<std::uint16_t>(0x7C00 + at + sizeof kStubCode);
    s[at + 5] = static_cast<std::byte>(msg & 0xFF);
    s[at + 6] = static_cast<std::byte>(msg >> 8);
    std::memcpy(s.data() + at + sizeof kStubCode, kStubMessage, sizeof kStubMessage);  // with NUL
}

FsInfo decode_fsinfo(BootSpan s) noexcept {
    FsInfo f;
    f.lead_signature = le32<fsinfo_off::LeadSig>(s);
    f.struct_signature = le32<fsinfo_off::StrucSig>(s);
    f.free_count = le32<fsinfo_off::Free_Count>(s);
    f.next_free = le32<fsinfo_off::Nxt_Free>(s);
    f.trail_signature = le32<fsinfo_off::TrailSig>(s);
    return f;
}

void encode_fsinfo(const FsInfo& f, MutableBootSpan s) noexcept {
    core::store32<fsinfo_off::LeadSig>(s, f.lead_signature);
    core::store32<fsinfo_off::StrucSig>(s, f.struct_signature);
    core::store32<fsinfo_off::Free_Count>(s, f.free_count);
    core::store32<fsinfo_off::Nxt_Free>(s, f.next_free);
    core::store32<fsinfo_off::TrailSig>(s, f.trail_signature);
}

std::uint32_t get_fat_entry(std::span<const std::byte> fat, FatType type, std::uint32_t n) {
    switch (type) {
        case FatType::fat12: {
            const std::size_t at = std::size_t(n) + n / 2;
            const std::uint16_t pair = core::load_le16(fat, at);
            return (n & 1) ? (pair >> 4) : (pair & 0x0FFF);
        }
        case FatType::fat16:
            return core::load_le16(fat, std::size_t(n) * 2);
        case FatType::fat32:
            return core::load_le32(fat, std::size_t(n) * 4) & kFat32Mask;
    }
    return 0;
}

void set_fat_entry(std::span<std::byte> fat, FatType type, std::uint32_t n, std::uint32_t value) {
    switch (type) {
        case FatType::fat12: {
            const std::size_t at = std::size_t(n) + n / 2;
            std::uint16_t pair = core::load_le16(fat, at);
            if (n & 1) {
                pair = static_cast<std::uint16_t>((pair & 0x000F) | ((value & 0x0FFF) << 4));
            } else {
                pair = static_cast<std::uint16_t>((pair & 0xF000) | (value & 0x0FFF));
            }
            core::store_le16(fat, at, pair);
            return;
        }
        case FatType::fat16:
            core::store_le16(fat, std::size_t(n) * 2, static_cast<std::uint16_t>(value));
            return;
        case FatType::fat32: {
            const std::uint32_t old = core::load_le32(fat, std::size_t(n) * 4);
            core::store_le32(fat, std::size_t(n) * 4, (old & ~kFat32Mask) | (value & kFat32Mask));
            return;
        }
    }
}

DirEntry decode_dir_entry(DirEntrySpan e) noexcept {
    DirEntry d;
    for (std::size_t i = 0; i < 11; ++i) d.name[i] = static_cast<std::uint8_t>(e[i]);
    d.attr = le8<dir_off::Attr>(e);
    d.nt_res = le8<dir_off::NTRes>(e);
    d.crt_time_tenth = le8<dir_off::CrtTimeTenth>(e);
    d.crt_time = le16<dir_off::CrtTime>(e);
    d.crt_date = le16<dir_off::CrtDate>(e);
    d.lst_acc_date = le16<dir_off::LstAccDate>(e);
    d.wrt_time = le16<dir_off::WrtTime>(e);
    d.wrt_date = le16<dir_off::WrtDate>(e);
    d.first_cluster = (std::uint32_t(le16<dir_off::FstClusHI>(e)) << 16) | le16<dir_off::FstClusLO>(e);
    d.file_size = le32<dir_off::FileSize>(e);
    return d;
}

void encode_dir_entry(const DirEntry& d, std::span<std::byte, kDirEntrySize> e) noexcept {
    for (std::size_t i = 0; i < 11; ++i) e[i] = static_cast<std::byte>(d.name[i]);
    core::store8<dir_off::Attr>(e, d.attr);
    core::store8<dir_off::NTRes>(e, d.nt_res);
    core::store8<dir_off::CrtTimeTenth>(e, d.crt_time_tenth);
    core::store16<dir_off::CrtTime>(e, d.crt_time);
    core::store16<dir_off::CrtDate>(e, d.crt_date);
    core::store16<dir_off::LstAccDate>(e, d.lst_acc_date);
    core::store16<dir_off::FstClusHI>(e, static_cast<std::uint16_t>(d.first_cluster >> 16));
    core::store16<dir_off::WrtTime>(e, d.wrt_time);
    core::store16<dir_off::WrtDate>(e, d.wrt_date);
    core::store16<dir_off::FstClusLO>(e, static_cast<std::uint16_t>(d.first_cluster & 0xFFFF));
    core::store32<dir_off::FileSize>(e, d.file_size);
}

std::uint8_t lfn_checksum(const std::array<std::uint8_t, 11>& name) noexcept {
    std::uint8_t sum = 0;
    for (std::uint8_t c : name) sum = static_cast<std::uint8_t>(((sum & 1) << 7) + (sum >> 1) + c);
    return sum;
}

FatTimestamp fat_timestamp_from_unix(std::int64_t t) noexcept {
    constexpr std::int64_t kMin = 315532800;   // 1980-01-01 00:00:00 UTC
    constexpr std::int64_t kMax = 4354819198;  // 2107-12-31 23:59:58 UTC
    t = std::clamp(t, kMin, kMax);
    const core::CivilTime c = core::civil_from_unix(t);
    FatTimestamp ts;
    ts.date = static_cast<std::uint16_t>(((c.year - 1980) << 9) | (c.month << 5) | c.day);
    ts.time = static_cast<std::uint16_t>((c.hour << 11) | (c.minute << 5) | (c.second / 2));
    ts.tenth = static_cast<std::uint8_t>((c.second % 2) * 100);
    return ts;
}

std::int64_t unix_from_fat_timestamp(std::uint16_t date, std::uint16_t time) noexcept {
    core::CivilTime c;
    c.year = 1980 + (date >> 9);
    c.month = (date >> 5) & 0x0F;
    c.day = date & 0x1F;
    c.hour = time >> 11;
    c.minute = (time >> 5) & 0x3F;
    c.second = (time & 0x1F) * 2;
    if (c.month < 1 || c.month > 12 || c.day < 1 || c.hour > 23 || c.minute > 59 || c.second > 59) return -1;
    return core::unix_from_civil(c);
}

std::string normalize_volume_label(std::string_view label) {
    if (label.empty()) return "NO NAME    ";
    if (label.size() > 11) {
        throw Error(ErrorCode::usage,
                    fmt::format("volume label \"{}\" is {} bytes long; a FAT label holds at most 11", label,
                                label.size()));
    }
    constexpr std::string_view kForbidden = "\"*+,./:;<=>?[\\]|";
    std::string out;
    for (char ch : label) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7F || kForbidden.find(ch) != std::string_view::npos) {
            throw Error(
                ErrorCode::usage,
                fmt::format("volume label \"{}\" contains '{}', which FAT labels do not allow "
                            "(forbidden: control characters and {})",
                            label, c < 0x20 ? fmt::format("\\x{:02x}", c) : std::string(1, ch), kForbidden));
        }
        if (c >= 0x80) {
            throw Error(ErrorCode::usage,
                        fmt::format("volume label \"{}\" contains a non-ASCII character; fsimg writes FAT "
                                    "labels in ASCII only, since the OEM code page of the reader is unknown",
                                    label));
        }
        out.push_back(static_cast<char>(std::toupper(c)));
    }
    if (out.front() == ' ') {
        throw Error(ErrorCode::usage, fmt::format("volume label \"{}\" starts with a space", label));
    }
    out.resize(11, ' ');
    return out;
}

}  // namespace fsimg::fat
