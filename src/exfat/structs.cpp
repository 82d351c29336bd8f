#include "fsimg/exfat/structs.hpp"
#include "fsimg/core/windows_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"

namespace fsimg::exfat {

using core::le16;
using core::le32;
using core::le64;
using core::le8;

BootSector decode_boot_sector(BootSpan s) noexcept {
    BootSector bs;
    for (std::size_t i = 0; i < 3; ++i) bs.jump_boot[i] = static_cast<std::uint8_t>(s[off::JumpBoot + i]);
    bs.file_system_name = core::load_string(s.subspan(off::FileSystemName, 8));
    bs.must_be_zero_is_zero = std::all_of(s.begin() + off::MustBeZero, s.begin() + off::PartitionOffset,
                                          [](std::byte b) { return b == std::byte{0}; });
    bs.partition_offset = le64<off::PartitionOffset>(s);
    bs.volume_length = le64<off::VolumeLength>(s);
    bs.fat_offset = le32<off::FatOffset>(s);
    bs.fat_length = le32<off::FatLength>(s);
    bs.cluster_heap_offset = le32<off::ClusterHeapOffset>(s);
    bs.cluster_count = le32<off::ClusterCount>(s);
    bs.first_cluster_of_root_directory = le32<off::FirstClusterOfRootDirectory>(s);
    bs.volume_serial_number = le32<off::VolumeSerialNumber>(s);
    bs.file_system_revision = le16<off::FileSystemRevision>(s);
    bs.volume_flags = le16<off::VolumeFlags>(s);
    bs.bytes_per_sector_shift = le8<off::BytesPerSectorShift>(s);
    bs.sectors_per_cluster_shift = le8<off::SectorsPerClusterShift>(s);
    bs.number_of_fats = le8<off::NumberOfFats>(s);
    bs.drive_select = le8<off::DriveSelect>(s);
    bs.percent_in_use = le8<off::PercentInUse>(s);
    bs.boot_signature = le16<off::BootSignature>(s);
    return bs;
}

void encode_boot_sector(const BootSector& bs, MutableBootSpan s) noexcept {
    for (std::size_t i = 0; i < 3; ++i) s[off::JumpBoot + i] = std::byte{bs.jump_boot[i]};
    core::store_padded(s.subspan(off::FileSystemName, 8), bs.file_system_name, ' ');
    std::fill(s.begin() + off::MustBeZero, s.begin() + off::PartitionOffset, std::byte{0});
    core::store64<off::PartitionOffset>(s, bs.partition_offset);
    core::store64<off::VolumeLength>(s, bs.volume_length);
    core::store32<off::FatOffset>(s, bs.fat_offset);
    core::store32<off::FatLength>(s, bs.fat_length);
    core::store32<off::ClusterHeapOffset>(s, bs.cluster_heap_offset);
    core::store32<off::ClusterCount>(s, bs.cluster_count);
    core::store32<off::FirstClusterOfRootDirectory>(s, bs.first_cluster_of_root_directory);
    core::store32<off::VolumeSerialNumber>(s, bs.volume_serial_number);
    core::store16<off::FileSystemRevision>(s, bs.file_system_revision);
    core::store16<off::VolumeFlags>(s, bs.volume_flags);
    core::store8<off::BytesPerSectorShift>(s, bs.bytes_per_sector_shift);
    core::store8<off::SectorsPerClusterShift>(s, bs.sectors_per_cluster_shift);
    core::store8<off::NumberOfFats>(s, bs.number_of_fats);
    core::store8<off::DriveSelect>(s, bs.drive_select);
    core::store8<off::PercentInUse>(s, bs.percent_in_use);
    std::fill(s.begin() + off::Reserved, s.begin() + off::BootCode, std::byte{0});
    core::store16<off::BootSignature>(s, bs.boot_signature);
}

void write_halt_boot_code(MutableBootSpan s) noexcept {
    std::fill(s.begin() + off::BootCode, s.begin() + off::BootSignature, std::byte{kBootCodeFill});
}

std::vector<BootProblem> validate_boot_sector(const BootSector& bs) {
    std::vector<BootProblem> p;
    auto add = [&](std::string_view code, std::string msg) { p.push_back({code, std::move(msg)}); };
    if (bs.jump_boot != kJumpBoot) {
        add("exfat.boot.jump_boot", fmt::format("JumpBoot is {:02X} {:02X} {:02X}, must be EB 76 90",
                                                bs.jump_boot[0], bs.jump_boot[1], bs.jump_boot[2]));
    }
    if (bs.file_system_name != kFileSystemName) {
        add("exfat.boot.file_system_name",
            fmt::format("FileSystemName is \"{}\", must be \"EXFAT   \"", bs.file_system_name));
    }
    if (!bs.must_be_zero_is_zero) add("exfat.boot.must_be_zero", "MustBeZero (bytes 11..63) is not all zero");
    if (bs.boot_signature != kBootSignature) {
        add("exfat.boot.signature", fmt::format("BootSignature is {:04X}, must be AA55", bs.boot_signature));
    }
    if ((bs.file_system_revision >> 8) != 1) {
        add("exfat.boot.revision", fmt::format("FileSystemRevision is {}.{:02}, only major revision 1 exists",
                                               bs.file_system_revision >> 8, bs.file_system_revision & 0xFF));
    }
    const unsigned bpss = bs.bytes_per_sector_shift;
    const unsigned spcs = bs.sectors_per_cluster_shift;
    const bool shifts_ok = bpss >= 9 && bpss <= 12 && spcs <= 25 - std::min(bpss, 25u);
    if (bpss < 9 || bpss > 12) {
        add("exfat.boot.bytes_per_sector_shift",
            fmt::format("BytesPerSectorShift is {}, must be 9..12 (512..4096-byte sectors)", bpss));
    } else if (spcs > 25 - bpss) {
        add("exfat.boot.sectors_per_cluster_shift",
            fmt::format("SectorsPerClusterShift is {}, must be at most {} (clusters up to 32 MiB)", spcs,
                        25 - bpss));
    }
    if (bs.number_of_fats != 1 && bs.number_of_fats != 2) {
        add("exfat.boot.number_of_fats",
            fmt::format("NumberOfFats is {}, must be 1 or 2", bs.number_of_fats));
    }
    if (bs.percent_in_use > 100 && bs.percent_in_use != kPercentInUseUnknown) {
        add("exfat.boot.percent_in_use",
            fmt::format("PercentInUse is {}, must be 0..100 or 255", bs.percent_in_use));
    }
    if (!shifts_ok) return p;  // the size rules below need both shifts

    const std::uint64_t spc = std::uint64_t{1} << spcs;
    const std::uint64_t nfats = bs.number_of_fats == 2 ? 2 : 1;
    if (bs.volume_length < (std::uint64_t{1} << (20 - bpss))) {
        add("exfat.boot.volume_length",
            fmt::format("VolumeLength is {} sectors, less than 1 MiB ({} sectors)", bs.volume_length,
                        std::uint64_t{1} << (20 - bpss)));
    }
    if (bs.fat_offset < 24) {
        add("exfat.boot.fat_offset", fmt::format("FatOffset is {}, must be at least 24", bs.fat_offset));
    }
    const std::uint64_t fat_end = std::uint64_t(bs.fat_offset) + std::uint64_t(bs.fat_length) * nfats;
    if (fat_end > bs.cluster_heap_offset) {
        add("exfat.boot.fat_offset",
            fmt::format("the FAT region ends at sector {} (FatOffset {} + FatLength {} x {}), after "
                        "ClusterHeapOffset {}",
                        fat_end, bs.fat_offset, bs.fat_length, nfats, bs.cluster_heap_offset));
    }
    const std::uint64_t fat_needed = ((std::uint64_t(bs.cluster_count) + 2) * 4 + (1u << bpss) - 1) >> bpss;
    if (bs.fat_length < fat_needed) {
        add("exfat.boot.fat_length", fmt::format("FatLength is {} sectors, {} clusters need at least {}",
                                                 bs.fat_length, bs.cluster_count, fat_needed));
    }
    if (bs.cluster_count > kMaxClusterCount) {
        add("exfat.boot.cluster_count",
            fmt::format("ClusterCount is {}, more than 2^32-11", bs.cluster_count));
    }
    const std::uint64_t heap_sectors = std::uint64_t(bs.cluster_count) * spc;
    if (bs.cluster_heap_offset > bs.volume_length ||
        heap_sectors > bs.volume_length - bs.cluster_heap_offset) {
        add("exfat.boot.cluster_count",
            fmt::format("the cluster heap (ClusterHeapOffset {} + {} clusters of {} sectors) passes "
                        "VolumeLength {}",
                        bs.cluster_heap_offset, bs.cluster_count, spc, bs.volume_length));
    } else {
        const std::uint64_t fit =
            std::min<std::uint64_t>((bs.volume_length - bs.cluster_heap_offset) / spc, kMaxClusterCount);
        if (bs.cluster_count != fit) {
            add("exfat.boot.cluster_count",
                fmt::format("ClusterCount is {}, the volume holds {} clusters after ClusterHeapOffset",
                            bs.cluster_count, fit));
        }
    }
    if (bs.first_cluster_of_root_directory < 2 ||
        std::uint64_t(bs.first_cluster_of_root_directory) > std::uint64_t(bs.cluster_count) + 1) {
        add("exfat.boot.root_cluster",
            fmt::format("FirstClusterOfRootDirectory is {}, must be 2..{}",
                        bs.first_cluster_of_root_directory, std::uint64_t(bs.cluster_count) + 1));
    }
    if ((bs.volume_flags & kVolumeFlagActiveFat) != 0 && bs.number_of_fats != 2) {
        add("exfat.boot.volume_flags", "VolumeFlags.ActiveFat is 1 but NumberOfFats is not 2");
    }
    return p;
}

void encode_extended_boot_sector(std::span<std::byte> sector) {
    if (sector.size() < 4) throw FormatError(0, "an extended boot sector needs at least 4 bytes");
    std::fill(sector.begin(), sector.end(), std::byte{0});
    core::store_le32(sector, sector.size() - 4, kExtendedBootSignature);
}

std::uint32_t extended_boot_signature(std::span<const std::byte> sector) {
    if (sector.size() < 4) throw FormatError(0, "an extended boot sector needs at least 4 bytes");
    return core::load_le32(sector, sector.size() - 4);
}

std::uint32_t boot_checksum(std::span<const std::byte> sectors) noexcept {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < sectors.size(); ++i) {
        if (i == off::VolumeFlags || i == off::VolumeFlags + 1 || i == off::PercentInUse) continue;
        sum = ((sum & 1) ? 0x80000000u : 0u) + (sum >> 1) + static_cast<std::uint8_t>(sectors[i]);
    }
    return sum;
}

void encode_checksum_sector(std::uint32_t checksum, std::span<std::byte> sector) {
    if (sector.size() % 4 != 0) throw FormatError(0, "a checksum sector is a whole number of 32-bit words");
    for (std::size_t i = 0; i < sector.size(); i += 4) core::store_le32(sector, i, checksum);
}

bool boot_region_checksum_ok(std::span<const std::byte> region, std::uint32_t bps) noexcept {
    if (bps < 512 || bps % 4 != 0 || region.size() / bps < kBootRegionSectors) return false;
    const std::uint32_t sum = boot_checksum(region.first(std::size_t{11} * bps));
    const auto cs = region.subspan(std::size_t{kChecksumSector} * bps, bps);
    for (std::size_t i = 0; i < cs.size(); i += 4) {
        if (core::detail::load_le<std::uint32_t, 4>(cs.data() + i) != sum) return false;
    }
    return true;
}

void encode_allocation_bitmap_entry(const AllocationBitmapEntry& e, MutableEntrySpan out) noexcept {
    std::fill(out.begin(), out.end(), std::byte{0});
    core::store8<dir_off::EntryType>(out, kEntryAllocationBitmap);
    core::store8<dir_off::BitmapFlags>(out, e.bitmap_flags);
    core::store32<dir_off::FirstCluster>(out, e.first_cluster);
    core::store64<dir_off::DataLength>(out, e.data_length);
}

AllocationBitmapEntry decode_allocation_bitmap_entry(EntrySpan in) noexcept {
    return {le8<dir_off::BitmapFlags>(in), le32<dir_off::FirstCluster>(in), le64<dir_off::DataLength>(in)};
}

void encode_upcase_table_entry(const UpcaseTableEntry& e, MutableEntrySpan out) noexcept {
    std::fill(out.begin(), out.end(), std::byte{0});
    core::store8<dir_off::EntryType>(out, kEntryUpcaseTable);
    core::store32<dir_off::TableChecksum>(out, e.table_checksum);
    core::store32<dir_off::FirstCluster>(out, e.first_cluster);
    core::store64<dir_off::DataLength>(out, e.data_length);
}

UpcaseTableEntry decode_upcase_table_entry(EntrySpan in) noexcept {
    return {le32<dir_off::TableChecksum>(in), le32<dir_off::FirstCluster>(in), le64<dir_off::DataLength>(in)};
}

void encode_volume_label_entry(const VolumeLabelEntry& e, MutableEntrySpan out) noexcept {
    std::fill(out.begin(), out.end(), std::byte{0});
    core::store8<dir_off::EntryType>(out, kEntryVolumeLabel);
    core::store8<dir_off::CharacterCount>(out, e.character_count);
    for (std::size_t i = 0; i < e.volume_label.size(); ++i) {
        core::store_le16(out, dir_off::VolumeLabel + 2 * i, static_cast<std::uint16_t>(e.volume_label[i]));
    }
}

VolumeLabelEntry decode_volume_label_entry(EntrySpan in) noexcept {
    VolumeLabelEntry e;
    e.character_count = le8<dir_off::CharacterCount>(in);
    for (std::size_t i = 0; i < e.volume_label.size(); ++i) {
        e.volume_label[i] = static_cast<char16_t>(
            core::detail::load_le<std::uint16_t, 2>(in.data() + dir_off::VolumeLabel + 2 * i));
    }
    return e;
}

VolumeLabelEntry volume_label_entry_from_utf8(std::string_view label) {
    const std::u16string u16 = core::utf8_to_utf16(label);
    if (u16.size() > 11) {
        throw Error(ErrorCode::usage,
                    fmt::format("the exFAT volume label \"{}\" is {} UTF-16 units long; the limit is 11",
                                label, u16.size()));
    }
    for (char16_t c : u16) {
        if (core::is_windows_forbidden(c)) {
            throw Error(
                ErrorCode::usage,
                fmt::format("the exFAT volume label \"{}\" holds the character U+{:04X}, which exFAT "
                            "forbids in names and labels (control characters and \" * / : < > ? \\ |)",
                            label, static_cast<unsigned>(c)));
        }
    }
    VolumeLabelEntry e;
    e.character_count = static_cast<std::uint8_t>(u16.size());
    std::copy(u16.begin(), u16.end(), e.volume_label.begin());
    return e;
}

std::vector<std::byte> upcase_table_bytes(std::span<const std::uint16_t> table) {
    std::vector<std::byte> out(table.size() * 2);
    for (std::size_t i = 0; i < table.size(); ++i) core::store_le16(out, 2 * i, table[i]);
    return out;
}

std::uint32_t table_checksum(std::span<const std::byte> table) noexcept {
    std::uint32_t sum = 0;
    for (std::byte b : table)
        sum = ((sum & 1) ? 0x80000000u : 0u) + (sum >> 1) + static_cast<std::uint8_t>(b);
    return sum;
}

std::optional<std::vector<char16_t>> expand_upcase_table(std::span<const std::byte> table) {
    if (table.size() % 2 != 0) return std::nullopt;
    std::vector<char16_t> map(0x10000);
    std::uint32_t index = 0;
    bool run = false;
    for (std::size_t i = 0; i < table.size(); i += 2) {
        const std::uint16_t v = core::detail::load_le<std::uint16_t, 2>(table.data() + i);
        if (run) {
            if (index + v > 0x10000) return std::nullopt;
            std::iota(map.begin() + index, map.begin() + index + v, static_cast<char16_t>(index));
            index += v;
            run = false;
        } else if (index >= 0x10000) {
            return std::nullopt;  // values past U+FFFF
        } else if (v == index || v != 0xFFFF) {
            map[index] = static_cast<char16_t>(v);
            ++index;
        } else {
            run = true;
        }
    }
    if (run || index != 0x10000) return std::nullopt;
    return map;
}

BootSector boot_sector_from_layout(const Layout& l, std::uint32_t serial,
                                   std::uint8_t percent_in_use) noexcept {
    BootSector bs;
    bs.jump_boot = kJumpBoot;
    bs.file_system_name = std::string(kFileSystemName);
    bs.partition_offset = l.partition_offset;
    bs.volume_length = l.volume_length;
    bs.fat_offset = l.fat_offset;
    bs.fat_length = l.fat_length;
    bs.cluster_heap_offset = l.cluster_heap_offset;
    bs.cluster_count = l.cluster_count;
    bs.first_cluster_of_root_directory = l.root_first_cluster;
    bs.volume_serial_number = serial;
    bs.file_system_revision = kFileSystemRevision;
    bs.volume_flags = 0;
    bs.bytes_per_sector_shift = l.bytes_per_sector_shift();
    bs.sectors_per_cluster_shift = l.sectors_per_cluster_shift();
    bs.number_of_fats = static_cast<std::uint8_t>(l.number_of_fats);
    bs.drive_select = kDriveSelect;
    bs.percent_in_use = percent_in_use;
    bs.boot_signature = kBootSignature;
    return bs;
}

}  // namespace fsimg::exfat
