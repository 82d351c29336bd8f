// fsimg mkfs -t ntfs.
#include "mkfs_ntfs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <random>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/partition.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::cli {

namespace {

constexpr std::uint8_t kMbrTypeNtfs = 0x07;  ///< formats.md §4.1

std::uint32_t parse_u32_size(const std::string& text, const char* option) {
    const std::uint64_t v = core::parse_size(text);
    if (v > 0xFFFFFFFFu) throw Error(ErrorCode::usage, fmt::format("{} {} is far too large", option, text));
    return static_cast<std::uint32_t>(v);
}

/// "0123456789ABCDEF", "0x...", with optional dashes -> 64-bit serial.
std::uint64_t parse_ntfs_volume_id(const std::string& text) {
    std::string hex = text;
    if (hex.size() > 2 && (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0)) hex = hex.substr(2);
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    const bool ok = !hex.empty() && hex.size() <= 16 && std::all_of(hex.begin(), hex.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
    });
    if (!ok) {
        throw Error(
            ErrorCode::usage,
            fmt::format("--volume-id \"{}\" is not a 64-bit hexadecimal number (e.g. 0123456789ABCDEF)",
                        text));
    }
    return std::stoull(hex, nullptr, 16);
}

/// A serial from the creation time (reproducible under SOURCE_DATE_EPOCH),
/// mixed so that neighbouring times give unrelated serials (splitmix64).
std::uint64_t serial_from(std::uint64_t seed) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

int run_mkfs_ntfs(const NtfsMkfsRequest& a) {
    const io::PartitionTableKind ptable = io::parse_partition_table_kind(a.partition_table);
    const std::uint32_t bps = a.sector_size;

    io::PartitionPlacement place{0, a.image_bytes / bps};
    if (ptable != io::PartitionTableKind::none)
        place = io::place_single_partition(ptable, a.image_bytes, bps);

    ntfs::LayoutRequest req;
    req.volume_bytes = place.sector_count * bps;
    req.bytes_per_sector = bps;
    req.hidden_sectors = place.first_lba;
    if (!a.cluster.empty()) req.cluster_bytes = parse_u32_size(a.cluster, "-c");
    if (!a.mft_record_size.empty())
        req.mft_record_bytes = parse_u32_size(a.mft_record_size, "--mft-record-size");
    auto planned = ntfs::plan_layout(req, ntfs::secure_sds_bytes());
    if (auto* refusal = std::get_if<ntfs::LayoutRefusal>(&planned)) {
        std::string msg = fmt::format("cannot make -t ntfs -s {}{}: {}",
                                      a.size_text.empty() ? std::to_string(a.image_bytes) : a.size_text,
                                      a.cluster.empty() ? "" : " -c " + a.cluster, refusal->reason);
        if (!refusal->suggestions.empty()) {
            msg += "\n  what would work:";
            for (const auto& s : refusal->suggestions) msg += "\n    " + s;
        }
        throw Error(ErrorCode::usage, msg);
    }
    const ntfs::Layout& layout = std::get<ntfs::Layout>(planned);

    ntfs::FormatOptions fo;
    fo.label = core::utf8_to_utf16(a.label);
    if (fo.label.size() > 128) {
        throw Error(ErrorCode::usage,
                    fmt::format("-L: an NTFS label has at most 128 UTF-16 units, \"{}\" has {}", a.label,
                                fo.label.size()));
    }
    const std::optional<std::int64_t> sde = core::source_date_epoch();
    const std::int64_t now = core::creation_time_unix();
    const auto ns = sde ? 0u
                        : static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                         std::chrono::system_clock::now().time_since_epoch())
                                                         .count() %
                                                     1000000000);
    fo.creation_filetime = ntfs::filetime_from_unix(now, ns);
    if (!a.volume_id.empty()) {
        fo.volume_serial_number = parse_ntfs_volume_id(a.volume_id);
    } else if (sde) {
        fo.volume_serial_number = serial_from(fo.creation_filetime);
    } else {
        fo.volume_serial_number = serial_from(fo.creation_filetime ^ std::random_device{}());
    }

    if (a.explain) {
        fmt::print("NTFS {}: {} clusters of {}, {}-byte sectors, MFT records of {} bytes\n",
                   core::format_size(layout.volume_bytes()), core::format_count(layout.cluster_count),
                   core::format_size(layout.cluster_bytes), layout.bytes_per_sector, layout.mft_record_bytes);
        fmt::print("  $MFT at LCN {} ({} records), $MFTMirr at LCN {} ({} records), $LogFile {} at LCN {}\n",
                   layout.mft.lcn, layout.mft_records, layout.mftmirr.lcn, layout.mftmirr_records,
                   core::format_size(layout.logfile_bytes), layout.logfile.lcn);
        fmt::print("  MFT zone up to LCN {}; {} clusters in use\n", layout.mft_zone_end,
                   core::format_count(layout.used_clusters()));
    }
    const std::uint32_t serial32 = static_cast<std::uint32_t>(fo.volume_serial_number);

    auto write_all = [&](io::BlockDevice& disk) {
        if (ptable != io::PartitionTableKind::none) {
            io::Partition p;
            p.index = 1;
            p.first_lba = place.first_lba;
            p.sector_count = place.sector_count;
            p.mbr_type = kMbrTypeNtfs;
            p.gpt_type = io::kGptBasicDataType;
            p.gpt_unique = io::guid_from_seed(serial32, 2);
            p.name = a.label.empty() ? "Basic data partition" : a.label;
            if (ptable == io::PartitionTableKind::mbr) {
                io::write_mbr(disk, bps, p, serial32);
            } else {
                io::write_gpt(disk, bps, p, io::guid_from_seed(serial32, 1));
            }
        }
        io::SubRange volume(disk, place.first_lba * bps, req.volume_bytes);
        ntfs::format_volume(volume, layout, fo);
    };

    if (a.is_device) {
        fo.device_is_zeroed = false;
        auto dev = io::FileImage::open(a.image, true, true);
        write_all(*dev);
        dev->sync();
    } else {
        io::AtomicImage out(std::filesystem::path(a.image), a.image_bytes);
        write_all(out.device());
        out.commit();
    }

    if (!a.quiet) {
        fmt::print(
            "{}: NTFS {}, {} clusters of {}, serial {:016X}{}{}\n", a.image,
            core::format_size(layout.volume_bytes()), core::format_count(layout.cluster_count),
            core::format_size(layout.cluster_bytes), fo.volume_serial_number,
            a.label.empty() ? "" : fmt::format(", label \"{}\"", a.label),
            ptable == io::PartitionTableKind::none
                ? ""
                : fmt::format(", in {} partition 1 at sector {}", io::to_string(ptable), place.first_lba));
    }
    return kExitOk;
}

}  // namespace fsimg::cli
