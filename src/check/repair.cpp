#include "fsimg/check/repair.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace fsimg::check {

namespace {

/// The codes the preen level repairs: flags, counts and copies from a valid
/// twin (fat/repair.hpp, exfat/repair.hpp, ntfs/repair.hpp say how each is
/// repaired). A boot sector code is answered only when a copy validates: the
/// repairer itself leaves the error when neither does.
constexpr std::array<std::string_view, 39> kPreen = {
    "exfat.boot.backup-checksum",
    "exfat.boot.backup-differs",
    "exfat.boot.checksum",
    "exfat.boot.jump_boot",
    "exfat.boot.main-zeroed",
    "exfat.boot.signature",
    "exfat.bitmap.free-in-use",
    "exfat.bitmap.percent-in-use",
    "exfat.boot.dirty",
    "exfat.boot.percent_in_use",
    "exfat.set.name-hash",
    "fat.boot.backup-differs",
    "fat.boot.dirty",
    "fat.boot.main-damaged",
    "fat.boot.signature",
    "fat.fat.dirty",
    "fat.fat.media",
    "fat.fsinfo.free-count",
    "fat.fsinfo.next-free",
    "ntfs.attr.instance",
    "ntfs.bitmap.free-in-use",
    "ntfs.boot.backup-differs",
    "ntfs.boot.bytes_per_sector",
    "ntfs.boot.cluster_size",
    "ntfs.boot.index_block_size",
    "ntfs.boot.mft_lcn",
    "ntfs.boot.mft_record_size",
    "ntfs.boot.mftmirr_lcn",
    "ntfs.boot.oem_id",
    "ntfs.boot.signature",
    "ntfs.boot.total_sectors",
    "ntfs.index.sizes",
    "ntfs.mft-bitmap.unmarked",
    "ntfs.mftmirr.differs",
    "ntfs.mftmirr.stale",
    "ntfs.record.bytes-allocated",
    "ntfs.record.link-count",
    "ntfs.record.number",
    "ntfs.volume.dirty",
};

/// What -y repairs besides: the repairs that give up something (lost
/// clusters freed: what they held is not kept).
constexpr std::array<std::string_view, 77> kAll = {
    "exfat.bitmap.lost",
    "exfat.name.duplicate",
    "exfat.name.invalid",
    "exfat.set.secondary-count",
    "exfat.set.no-stream",
    "exfat.set.name-length",
    "exfat.set.orphan-secondary",
    "exfat.set.unknown-critical",
    "exfat.dir.system-entry",
    "exfat.dir.entry-after-end",
    "exfat.stream.first-cluster",
    "exfat.chain.bad-cluster",
    "exfat.chain.cross-link",
    "exfat.chain.loop",
    "exfat.chain.out-of-range",
    "exfat.chain.too-long",
    "exfat.chain.too-short",
    "exfat.set.checksum",
    "fat.chain.bad-cluster",
    "fat.chain.cross-link",
    "fat.chain.free-link",
    "fat.chain.lost",
    "fat.chain.loop",
    "fat.chain.out-of-range",
    "fat.chain.too-long",
    "fat.chain.too-short",
    "fat.fat.copies-differ",
    "fat.file.start-free",
    "fat.file.start-out-of-range",
    "fat.label.duplicate",
    "fat.label.invalid",
    "fat.label.mismatch",
    "fat.label.outside-root",
    "fat.lfn.checksum",
    "fat.lfn.orphan",
    "fat.lfn.sequence",
    "fat.name.duplicate",
    "fat.name.invalid-short",
    "fat.dir.dot",
    "fat.dir.dotdot",
    "ntfs.attr.header",
    "ntfs.attr.missing-data",
    "ntfs.attr.missing-std-info",
    "ntfs.attr.order",
    "ntfs.attr.sizes",
    "ntfs.attrlist.decode",
    "ntfs.attrlist.entry",
    "ntfs.attrlist.missing",
    "ntfs.bitmap.lost",
    "ntfs.filename.missing",
    "ntfs.filename.parent",
    "ntfs.filename.parent-sequence",
    "ntfs.index.bitmap",
    "ntfs.index.corrupt",
    "ntfs.index.entry-mismatch",
    "ntfs.index.extra-entry",
    "ntfs.index.missing-entry",
    "ntfs.index.order",
    "ntfs.index.root-missing",
    "ntfs.index.stale-entry",
    "ntfs.logfile.unclean",
    "ntfs.logfile.unknown",
    "ntfs.mft-bitmap.marked-free",
    "ntfs.reparse.corrupt",
    "ntfs.reparse.missing-entry",
    "ntfs.record.baad",
    "ntfs.record.base",
    "ntfs.record.bytes-in-use",
    "ntfs.record.first-attribute",
    "ntfs.record.fixup",
    "ntfs.record.flags",
    "ntfs.record.sequence",
    "ntfs.record.signature",
    "ntfs.record.usa",
    "ntfs.reparse.stale-entry",
    "ntfs.run.decode",
    "ntfs.tree.orphan",
};

}  // namespace

RepairPlan plan_repairs(const Findings& found, RepairLevel level) {
    RepairPlan p;
    for (const Finding& f : found.all()) {
        if (repairs(f.code, level)) {
            p.codes.insert(f.code);
        } else if (f.severity == Severity::error || f.severity == Severity::fatal) {
            p.errors_left = true;
        }
    }
    return p;
}

BitmapChange apply_bitmap_fixes(io::BlockDevice& dev, const std::vector<BitmapFix>& fixes) {
    BitmapChange n;
    for (std::size_t i = 0; i < fixes.size();) {
        std::size_t j = i + 1;
        while (j < fixes.size() && fixes[j].offset == fixes[j - 1].offset + 1 && j - i < 65536) ++j;
        std::vector<std::byte> bytes(j - i);
        dev.read_at(fixes[i].offset, bytes);
        for (std::size_t k = i; k < j; ++k) {
            const std::byte was = bytes[k - i];
            bytes[k - i] = (was | std::byte{fixes[k].set}) & ~std::byte{fixes[k].clear};
            n.set += static_cast<unsigned>(
                std::popcount(static_cast<unsigned>(fixes[k].set & ~std::to_integer<unsigned>(was))));
            n.cleared += static_cast<unsigned>(
                std::popcount(static_cast<unsigned>(fixes[k].clear & std::to_integer<unsigned>(was))));
        }
        dev.write_at(fixes[i].offset, bytes);
        i = j;
    }
    return n;
}

bool repairs(std::string_view code, RepairLevel level) noexcept {
    return std::find(kPreen.begin(), kPreen.end(), code) != kPreen.end() ||
           (level == RepairLevel::all && std::find(kAll.begin(), kAll.end(), code) != kAll.end());
}

}  // namespace fsimg::check
