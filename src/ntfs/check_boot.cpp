// Pass 1: the boot sector (every rule of validate_boot_sector, the backup
// boot sector standing in for a broken main one, main vs backup), the
// geometry against the image size, $MFT opened through record 0; and,
// after the records pass, $MFTMirr against the first records of $MFT.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "check_internal.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::ntfs::detail {

using Sector = std::array<std::byte, kBootSectorSize>;

/// The backup boot sector (find_backup_boot_sector) as the passes use it.
std::optional<std::pair<Sector, std::uint64_t>> find_backup(const io::BlockDevice& d) {
    const auto b = find_backup_boot_sector(d);
    if (!b) return std::nullopt;
    return std::pair{b->sector, b->offset};
}

namespace {

void check_image_size(Context& c) {
    const std::uint64_t have = c.device.size();
    const std::uint64_t volume = c.g.volume_bytes();
    const std::uint64_t bps = c.g.bytes_per_sector;
    if (have < volume) {
        const std::uint64_t whole = have / c.g.cluster_bytes;
        const std::string device = check::device_name(c.options.placement, have);
        c.out.add("ntfs.boot.image-truncated",
                  check::at_sector(have / bps, c.g.bytes_per_sector, "end of " + device),
                  fmt::format("{} holds {} bytes, the boot sector's {} sectors of {} bytes need {} plus the "
                              "backup boot sector: {} bytes are missing (clusters {}..{} lie past the end){}",
                              device, have, c.g.total_sectors, bps, volume, volume + bps - have, whole,
                              c.g.cluster_count - 1,
                              check::partition_shortfall(c.options.placement, have, volume + bps - have,
                                                         c.g.bytes_per_sector)));
    } else if (have - volume < kBootSectorSize) {
        c.out.add("ntfs.boot.backup-missing",
                  check::at_sector(c.g.total_sectors, c.g.bytes_per_sector, "backup boot sector"),
                  fmt::format("the image ends at byte {}, where the backup boot sector (sector {}, after the "
                              "volume's {} sectors) should be",
                              have, c.g.total_sectors, c.g.total_sectors));
    }
}

}  // namespace

bool check_boot(Context& c) {
    if (c.device.size() < kBootSectorSize)
        throw Error(ErrorCode::not_this_fs,
                    fmt::format("the image has {} bytes, less than one boot sector", c.device.size()));
    Sector main{};
    c.device.read_at(0, main);
    const auto problems = validate_boot_sector(main);
    std::optional<std::pair<Sector, std::uint64_t>> backup;
    if (!problems.empty()) {
        backup = find_backup(c.device);
        if (!backup && std::memcmp(main.data() + off::OemId, "NTFS    ", 8) != 0)
            throw Error(ErrorCode::not_this_fs, "no NTFS boot sector (byte 3 does not say \"NTFS    \")", 3);
        for (const auto& p : problems) {
            auto& f =
                c.out.add(p.code, check::at_sector(0, 512, "boot sector"),
                          backup ? fmt::format("{}; the backup boot sector at byte {} is valid and stands in",
                                               p.message, backup->second)
                                 : p.message);
            if (backup) f.severity = check::Severity::error;
        }
        if (!backup) return false;
        c.overlay = std::make_unique<BootOverlay>(c.device, backup->first);
    }
    const Sector& boot = backup ? backup->first : main;
    c.g = *geometry_of(boot);
    c.summary.type = "NTFS";
    c.summary.cluster_count = c.g.cluster_count;
    c.summary.cluster_bytes = c.g.cluster_bytes;
    c.summary.record_bytes = c.g.mft_record_bytes;
    check_image_size(c);
    // Hidden sectors (BPB offset 0x1C): the partition's start, which NTFS
    // boot code adds to find the volume; ntfs-3g and ntfs3 do not read it.
    const std::uint32_t hidden = decode_boot_sector(boot).hidden_sectors;
    if (check::start_disagrees(c.options.placement, hidden, c.g.bytes_per_sector)) {
        c.out.add(
            "ntfs.boot.hidden-sectors",
            check::at_sector(0, c.g.bytes_per_sector, "boot sector hidden sectors"),
            fmt::format("the boot sector's hidden sectors are {}, the partition starts at sector {}: boot "
                        "code would read the volume from the wrong sectors (ntfs-3g and ntfs3 do not read "
                        "it)",
                        hidden, c.options.placement->start_bytes / c.g.bytes_per_sector));
    }
    if (!backup) {
        const std::uint64_t at = c.g.volume_bytes();
        if (at <= c.device.size() && c.device.size() - at >= kBootSectorSize) {
            Sector copy{};
            c.device.read_at(at, copy);
            if (copy != main) {
                std::size_t first = 0;
                while (first < kBootSectorSize && copy[first] == main[first]) ++first;
                c.out.add("ntfs.boot.backup-differs",
                          check::at_sector(c.g.total_sectors, c.g.bytes_per_sector, "backup boot sector"),
                          fmt::format(
                              "the backup boot sector (sector {}) differs from sector 0, first at byte "
                              "{} (0x{:02X} vs 0x{:02X}){}",
                              c.g.total_sectors, first, std::uint8_t(copy[first]), std::uint8_t(main[first]),
                              validate_boot_sector(copy).empty() ? "" : "; the backup is not valid"));
            }
        }
    }
    try {
        c.vol = std::make_unique<Volume>(c.dev());
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        check::Location l;
        l.byte_offset = e.byte_offset();
        if (l.byte_offset) l.sector = *l.byte_offset / c.g.bytes_per_sector;
        l.object = record_name(0);
        c.out.add("ntfs.mft.unreadable", l, fmt::format("$MFT cannot be opened: {}", e.what()));
        return false;
    }
    // Records are bounded by what $MFT's runs map: a data size field alone
    // does not make the checker allocate.
    const Attribute& md = c.vol->mft_data();
    std::uint64_t mapped = 0;  // VCNs mapped contiguously from 0
    for (const MappedRun& r : md.runs) {
        if (static_cast<std::uint64_t>(r.vcn) != mapped || !r.lcn) break;
        mapped += r.length;
    }
    const std::uint64_t rs = c.g.mft_record_bytes;
    const std::uint64_t by_runs = mapped > ~std::uint64_t(0) / c.g.cluster_bytes
                                      ? ~std::uint64_t(0) / rs
                                      : mapped * c.g.cluster_bytes / rs;
    const std::uint64_t by_size = c.vol->record_count();
    // Nor does a runlist mapping more clusters than the image holds: a record
    // past the image's end cannot be read (memory bounded by real content).
    const std::uint64_t by_image = c.dev().size() / rs;
    c.records = std::min({by_runs, by_size, by_image});
    c.tracked_clusters =
        std::min(c.g.cluster_count, core::div_ceil(c.dev().size(), std::uint64_t{c.g.cluster_bytes}));
    if (by_runs < by_size) {
        c.out.add(
            "ntfs.mft.unmapped", at_record(c, 0, "$DATA"),
            fmt::format("$MFT's data size {} holds {} records, its runlist maps {} clusters ({} records) "
                        "from VCN 0; records {}.. cannot be read",
                        md.data_size, by_size, mapped, by_runs, by_runs));
    }
    c.summary.records = c.records;
    return true;
}

}  // namespace fsimg::ntfs::detail

namespace fsimg::ntfs {
bool looks_like_ntfs(const io::BlockDevice& device) {
    return is_ntfs(device) || detail::find_backup(device).has_value();
}
}  // namespace fsimg::ntfs

namespace fsimg::ntfs::detail {

void check_mirror(Context& c) {
    const std::uint64_t rs = c.g.mft_record_bytes;
    const auto r1 = load_record(c, 1);
    if (!r1) return;  // reported by the records pass
    const Attribute* data = r1->find(AttrType::data);
    if (!data || !data->non_resident) {
        c.out.add("ntfs.mftmirr.unreadable", at_record(c, 1), "$MFTMirr has no non-resident unnamed $DATA");
        return;
    }
    const BootSector& b = c.vol->boot();
    if (!data->runs.empty() && data->runs.front().lcn &&
        static_cast<std::uint64_t>(*data->runs.front().lcn) != b.mftmirr_lcn)
        c.out.add("ntfs.mftmirr.location", at_record(c, 1, "$DATA"),
                  fmt::format("the boot sector puts $MFTMirr at LCN {}, its $DATA starts at LCN {}",
                              b.mftmirr_lcn, static_cast<std::uint64_t>(*data->runs.front().lcn)));
    // What the mirror is read for (docs/formats.md §5): the first 4 records
    // are the ones Windows keeps in sync and the Linux ntfs driver
    // (super.c: "Windows only keeps in sync and cares about the consistency
    // of the first four mft records") requires; a mirror holding fewer is
    // unusable. mkntfs sizes it to 4 records or one cluster's worth, and
    // ntfs-3g since 2017.3.23 (volume.c, "Windows 10 does not update the
    // full $MFTMirr any more") compares the records the mirror holds up to
    // record 15 and refuses to mount when one differs: measured here with
    // ntfs-3g 2022.10.3 (ntfsfix -n fails on record 9, passes on record 20).
    constexpr std::uint64_t kSynced = 4;      // kept in sync by Windows
    constexpr std::uint64_t kNtfs3gMax = 16;  // FILE_first_user
    const std::uint64_t cluster_worth = c.g.cluster_bytes <= kSynced * rs ? kSynced : c.g.cluster_bytes / rs;
    const std::uint64_t have = std::min<std::uint64_t>(data->data_size / rs, c.records);
    const std::uint64_t required = std::min<std::uint64_t>(kSynced, c.records);
    if (have < required) {
        c.out.add("ntfs.mftmirr.unreadable", at_record(c, 1, "$DATA"),
                  fmt::format("$MFTMirr holds {} records, it must mirror the first {}", have, required));
    }
    std::vector<std::byte> a(rs), m(rs);
    std::vector<std::uint64_t> differ, stale;
    for (std::uint64_t n = 0; n < std::min({cluster_worth, have, kNtfs3gMax}); ++n) {
        bool ok_m = true;
        try {
            c.vol->read_stream(*data, n * rs, m);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            ok_m = false;
        }
        if (!ok_m) {
            if (n >= kSynced) break;  // past what must be mirrored
            c.out.add("ntfs.mftmirr.unreadable", at_record(c, 1, "$DATA"),
                      fmt::format("$MFTMirr's copy of record {} cannot be read", n));
            return;
        }
        if (!read_raw_record(c, n, a)) continue;
        // Compared after removing the fixups, as ntfsfix does (its records
        // come through ntfs_mst_pread); a copy whose fixups do not verify is
        // compared as stored.
        for (auto* r : {&a, &m}) {
            try {
                (void)verify_and_remove_fixups(*r);
            } catch (const Error&) {
            }
        }
        // Only the bytes in use of $MFT's record, as ntfs-3g compares
        // (ntfs_mft_record_get_data_size): the slack after them may differ.
        std::size_t used = rs;
        if (std::memcmp(a.data(), "FILE", 4) == 0) {
            const std::uint32_t in_use = core::load_le32(a, 0x18);
            if (in_use >= 0x30 && in_use <= rs) used = in_use;
        }
        if (std::memcmp(a.data(), m.data(), used) != 0) (n < kSynced ? differ : stale).push_back(n);
    }
    if (!differ.empty())
        c.out.add(
            "ntfs.mftmirr.differs", at_record(c, 1, "$DATA"),
            fmt::format("$MFTMirr's copy of record{} {} differ{} from $MFT", differ.size() == 1 ? "" : "s",
                        first_list(differ, differ.size()), differ.size() == 1 ? "s" : ""),
            differ.size());
    if (!stale.empty())
        c.out.add("ntfs.mftmirr.stale", at_record(c, 1, "$DATA"),
                  fmt::format("$MFTMirr's copy of record{} {} differ{} from $MFT: Windows keeps only records "
                              "0-3 in sync, but ntfs-3g compares up to record 15 and refuses to mount "
                              "(ntfsfix rewrites the mirror)",
                              stale.size() == 1 ? "" : "s", first_list(stale, stale.size()),
                              stale.size() == 1 ? "s" : ""),
                  stale.size());
}

}  // namespace fsimg::ntfs::detail
