// Pass 2: allocation structures. FatEntry[0], the Allocation Bitmap (whose
// size decides whether the one-bit-per-cluster ownership map is affordable:
// it is exactly as large as the on-disk bitmap, so only a bitmap lying inside
// the image allows it), and the Up-case Table with its TableChecksum.
#include <fmt/format.h>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::exfat::detail {

namespace {

void check_fat_media(Context& c) {
    const Volume& v = *c.vol;
    std::uint32_t fat0 = 0;
    try {
        fat0 = v.fat_entry(0);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return;  // past the end of the image: the truncation finding says so
    }
    if (fat0 != kFatEntryMediaDescriptor) {
        const BootSector& bs = v.boot_sector();
        c.out.add("exfat.fat.media", at_sector(bs.fat_offset, c.bps(), "FAT entry 0"),
                  fmt::format("FatEntry[0] is 0x{:08X}, must be 0xFFFFFFF8 (media descriptor F8)", fat0));
    }
}

/// True when `runs` lie inside the device.
bool inside_image(const Context& c, const std::vector<ClusterRun>& runs) {
    for (const auto& r : runs) {
        const std::uint64_t end =
            c.vol->cluster_offset(r.first) + std::uint64_t(r.count) * c.vol->cluster_bytes();
        if (end > c.device.size()) return false;
    }
    return true;
}

void check_bitmap(Context& c) {
    const Volume& v = *c.vol;
    const auto e = v.bitmap_entry();
    if (!e) {
        c.out.add("exfat.bitmap.missing", at_cluster(c, v.root_cluster(), "/"),
                  "the root directory has no Allocation Bitmap entry (0x81): which clusters are in use is "
                  "unknown");
        return;
    }
    const std::uint64_t need = core::div_ceil(std::uint64_t{v.cluster_count()}, 8);
    const bool long_enough = e->data_length >= need;
    if (!long_enough) {
        c.out.add("exfat.bitmap.length", at_cluster(c, e->first_cluster, "allocation bitmap"),
                  fmt::format("the Allocation Bitmap's DataLength is {} bytes, ClusterCount {} needs {}",
                              e->data_length, v.cluster_count(), need));
    }
    // Size the ownership map only when the bitmap it mirrors is real data.
    if (long_enough && v.is_cluster(e->first_cluster)) {
        Chain ch;
        try {
            ch = v.follow_chain(e->first_cluster, core::div_ceil(need, v.cluster_bytes()));
        } catch (const Error& err) {
            if (err.code() == ErrorCode::io) throw;
        }
        if (ch.clusters * v.cluster_bytes() >= need && inside_image(c, ch.runs)) {
            c.owned = check::ClusterBitmap(std::uint64_t(v.max_cluster()) + 1);
            c.ownership = true;
        }
    }
    Claim cl = claim(c, "allocation bitmap", e->first_cluster, e->data_length, false);
    if (c.ownership && !cl.broken && cl.clusters * v.cluster_bytes() >= need)
        c.bitmap_runs = std::move(cl.runs);
    if (!c.ownership && long_enough && c.boot.missing_bytes == 0 && !cl.broken) {
        c.out.add("exfat.bitmap.length", at_cluster(c, e->first_cluster, "allocation bitmap"),
                  "the allocation bitmap's clusters do not hold ClusterCount bits inside the image");
    }
}

void check_upcase(Context& c) {
    const Volume& v = *c.vol;
    const auto& e = c.boot.upcase;
    if (!e) {
        c.out.add("exfat.upcase.missing", at_cluster(c, v.root_cluster(), "/"),
                  "the root directory has no Up-case Table entry (0x82); names are compared with the "
                  "recommended table");
        return;
    }
    const Claim cl = claim(c, "up-case table", e->first_cluster, e->data_length, false);
    if (cl.broken) return;
    if (c.boot.upcase_checksum_computed && *c.boot.upcase_checksum_computed != e->table_checksum) {
        c.out.add("exfat.upcase.checksum", at_cluster(c, e->first_cluster, "up-case table"),
                  fmt::format("the up-case table ({} bytes) sums to {:08X}, its TableChecksum says {:08X}",
                              e->data_length, *c.boot.upcase_checksum_computed, e->table_checksum));
    } else if (v.upcase_problem()) {
        c.out.add("exfat.upcase.invalid", at_cluster(c, e->first_cluster, "up-case table"),
                  fmt::format("{}; names are compared with the recommended table", *v.upcase_problem()));
    }
}

}  // namespace

void check_allocation(Context& c) {
    check_fat_media(c);
    check_bitmap(c);
    check_upcase(c);
}

}  // namespace fsimg::exfat::detail
