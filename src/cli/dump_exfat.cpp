// fsimg dump for exFAT: boot region, geometry, root system entries.
#include "dump_exfat.hpp"

#include <fmt/format.h>

#include "common.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/exfat/volume.hpp"

namespace fsimg::cli {

namespace {

nlohmann::json copy_json(const exfat::BootRegionCopy& c) {
    return {{"checksum_computed", c.checksum_computed},
            {"checksum_stored", c.checksum_stored},
            {"checksum_ok", c.checksum_ok},
            {"extended_signatures_ok", c.extended_signatures_ok},
            {"oem_parameters", c.oem_parameters}};
}

nlohmann::json to_json(const std::string& image, const io::OpenedVolume& v, const exfat::BootRegion& r,
                       const nlohmann::json& table) {
    nlohmann::json j;
    j["schema_version"] = 1;
    j["image"] = image;
    j["filesystem"] = "exfat";
    j["volume_offset"] = v.offset();
    j["volume_device_bytes"] = r.device_bytes;
    if (!table.is_null()) j["partition_table"] = table;
    nlohmann::json bs = nlohmann::json::object();
    for (const auto& f : exfat::boot_fields(r.main.boot)) {
        if (f.is_text) {
            bs[f.name] = f.text;
        } else {
            bs[f.name] = f.number;
        }
    }
    j["boot_sector"] = bs;
    j["main_boot_region"] = copy_json(r.main);
    j["backup_boot_region"] = r.backup ? copy_json(*r.backup) : nlohmann::json();
    j["backup_identical"] = r.backup_identical;
    j["boot_region_in_use"] = r.use_backup ? "backup" : "main";
    j["problems"] = nlohmann::json::array();
    for (const auto& p : r.problems) j["problems"].push_back({{"code", p.code}, {"message", p.message}});
    if (r.usable()) {
        const auto& b = r.active;
        const std::uint64_t cluster = std::uint64_t(r.bytes_per_sector) << b.sectors_per_cluster_shift;
        j["geometry"] = {{"bytes_per_sector", r.bytes_per_sector},
                         {"cluster_bytes", cluster},
                         {"cluster_count", b.cluster_count},
                         {"fat_offset", b.fat_offset},
                         {"fat_length", b.fat_length},
                         {"cluster_heap_offset", b.cluster_heap_offset},
                         {"root_cluster", b.first_cluster_of_root_directory},
                         {"volume_bytes", b.volume_length * r.bytes_per_sector},
                         {"missing_bytes", r.missing_bytes}};
    } else {
        j["geometry"] = nullptr;
    }
    nlohmann::json root = nlohmann::json::object();
    if (r.label) root["label"] = exfat::label_text(*r.label);
    if (r.bitmap) {
        root["allocation_bitmap"] = {{"first_cluster", r.bitmap->first_cluster},
                                     {"data_length", r.bitmap->data_length},
                                     {"bitmap_flags", r.bitmap->bitmap_flags}};
    }
    if (r.upcase) {
        root["upcase_table"] = {
            {"first_cluster", r.upcase->first_cluster},
            {"data_length", r.upcase->data_length},
            {"table_checksum", r.upcase->table_checksum},
            {"checksum_computed",
             r.upcase_checksum_computed ? nlohmann::json(*r.upcase_checksum_computed) : nlohmann::json()}};
    }
    if (r.root_problem) root["problem"] = *r.root_problem;
    j["root_directory"] = root;
    return j;
}

void print_copy(const char* what, const exfat::BootRegionCopy& c) {
    fmt::print(
        "  {:<20}checksum {:08X} {} (stored {:08X}), {}/8 extended boot signatures, OEM parameters {}\n",
        what, c.checksum_computed, c.checksum_ok ? "ok" : "MISMATCH", c.checksum_stored,
        c.extended_signatures_ok, c.oem_parameters);
}

void print_text(const std::string& image, const io::OpenedVolume& v, const exfat::BootRegion& r,
                const nlohmann::json& table) {
    fmt::print("Image:            {}\n", image);
    if (!table.is_null()) {
        fmt::print("Partition table:  {}, {}-byte sectors, {} partition(s)\n",
                   table["kind"].get<std::string>(), table["sector_size"].get<std::uint32_t>(),
                   table["partitions"].size());
    }
    fmt::print("Volume offset:    {} bytes\n", v.offset());
    fmt::print("\nBoot sector (exFAT)\n");
    for (const auto& f : exfat::boot_fields(r.main.boot)) {
        if (f.is_text) {
            fmt::print("  0x{:03X}  {:<28} \"{}\"\n", f.offset, f.name, shown(f.text));
        } else if (f.name == "VolumeSerialNumber" || f.name == "FileSystemRevision" ||
                   f.name == "VolumeFlags" || f.name == "DriveSelect" || f.name == "BootSignature") {
            fmt::print("  0x{:03X}  {:<28} 0x{:0{}X}\n", f.offset, f.name, f.number, f.width * 2);
        } else {
            fmt::print("  0x{:03X}  {:<28} {}\n", f.offset, f.name, f.number);
        }
    }
    fmt::print("\nBoot regions\n");
    print_copy("main (sector 0)", r.main);
    if (r.backup) {
        print_copy("backup (sector 12)", *r.backup);
        fmt::print("  backup            {}\n", r.backup_identical
                                                   ? "identical to the main region (VolumeFlags and "
                                                     "PercentInUse aside)"
                                                   : "DIFFERS from the main region");
    } else {
        fmt::print("  backup            missing (the image is shorter than 24 sectors)\n");
    }
    if (r.use_backup) {
        fmt::print("  in use            BACKUP: the main region is damaged: {}\n", r.main_damage);
        for (const auto& p : r.problems) fmt::print("  main INVALID      {} [{}]\n", p.message, p.code);
    }
    fmt::print("\nGeometry{}\n", r.use_backup ? " (from the backup boot sector)" : "");
    if (!r.usable()) {
        for (const auto& p : r.problems) fmt::print("  INVALID           {} [{}]\n", p.message, p.code);
    } else {
        const auto& b = r.active;
        const std::uint64_t spc = std::uint64_t{1} << b.sectors_per_cluster_shift;
        fmt::print("  sector size       {} bytes\n", r.bytes_per_sector);
        fmt::print("  cluster size      {} ({} sectors)\n", core::format_size(spc * r.bytes_per_sector), spc);
        fmt::print("  FAT               sectors {}..{} ({} FAT{})\n", b.fat_offset,
                   std::uint64_t(b.fat_offset) + b.fat_length - 1, b.number_of_fats,
                   b.number_of_fats == 1 ? "" : "s");
        fmt::print("  cluster heap      sector {} (byte {}), {} clusters (2..{})\n", b.cluster_heap_offset,
                   std::uint64_t(b.cluster_heap_offset) * r.bytes_per_sector,
                   core::format_count(b.cluster_count), std::uint64_t(b.cluster_count) + 1);
        fmt::print("  volume size       {} sectors ({})\n", b.volume_length,
                   core::format_size(b.volume_length * r.bytes_per_sector));
        if (r.missing_bytes) {
            fmt::print("  WARNING           the volume claims more bytes than the image holds ({} missing)\n",
                       r.missing_bytes);
        }
    }
    fmt::print("\nRoot directory (cluster {})\n", r.active.first_cluster_of_root_directory);
    if (r.root_problem) fmt::print("  not read: {}\n", *r.root_problem);
    if (r.label) {
        fmt::print("  volume label      \"{}\" ({} characters)\n", shown(exfat::label_text(*r.label)),
                   r.label->character_count);
    } else if (!r.root_problem) {
        fmt::print("  volume label      no entry\n");
    }
    if (r.bitmap) {
        fmt::print("  allocation bitmap cluster {}, {} bytes\n", r.bitmap->first_cluster,
                   r.bitmap->data_length);
    }
    if (r.upcase) {
        fmt::print("  up-case table     cluster {}, {} bytes, TableChecksum {:08X}{}\n",
                   r.upcase->first_cluster, r.upcase->data_length, r.upcase->table_checksum,
                   !r.upcase_checksum_computed ? " (not verified)"
                   : *r.upcase_checksum_computed == r.upcase->table_checksum
                       ? " (verified)"
                       : fmt::format(" (MISMATCH: the table sums to {:08X})", *r.upcase_checksum_computed));
    }
}

}  // namespace

int dump_exfat(const std::string& image, io::OpenedVolume& v, bool json, const nlohmann::json& table) {
    const exfat::BootRegion r = exfat::read_boot_region(v.device());
    if (r.use_backup) warn(fmt::format("{}: {}", image, exfat::backup_note(r)));
    if (json) {
        fmt::print("{}\n", to_json(image, v, r, table).dump(2));
    } else {
        print_text(image, v, r, table);
    }
    return kExitOk;
}

}  // namespace fsimg::cli
