// check_volume(): detect, then the adapter's checker.
#include "fsimg/fs/check.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "adapters.hpp"
#include "fsimg/fs/repair.hpp"

namespace fsimg::fs {

Checked check_volume(const io::BlockDevice& volume, check::Findings& out, const CheckOptions& options) {
    Checked c;
    c.detection = detect(volume);
    // The exFAT adapter keeps a walk the repair left current; the rest is
    // this check's. FSIMG_TEST_FULL_WALKS (tests) collects nothing, so that
    // every repair and check walks the volume itself, to compare with.
    const bool full_walks = std::getenv("FSIMG_TEST_FULL_WALKS") != nullptr;
    CheckOptions o = options;
    if (o.repair_hints && (c.detection.kind != Kind::exfat || full_walks)) *o.repair_hints = {};
    if (full_walks) o.repair_hints = nullptr;
    c.summary = detail::adapter(c.detection.kind).check(volume, c.detection, out, o);
    return c;
}

std::optional<check::Placement> placement_of(const io::OpenedVolume& v) {
    if (!v.partition) return std::nullopt;
    const std::uint64_t ss = v.table.sector_size;
    check::Placement p;
    p.partition = v.partition->index;
    p.start_bytes = v.partition->first_lba * ss;  // inside the image: select_partition checked it
    p.entry_bytes = v.partition->sector_count * ss;
    const std::uint64_t image = v.file->size();
    if (v.partition->ebr_lba != 0)
        p.ebr_relative_start_bytes = (v.partition->first_lba - v.partition->ebr_lba) * ss;
    p.image_bytes_after = p.start_bytes + p.entry_bytes < image ? image - p.start_bytes - p.entry_bytes : 0;
    return p;
}

void add_table_findings(const io::PartitionTable& table, check::Findings& out) {
    for (const auto& problem : table.problems) {
        check::Location where;
        where.object = fmt::format("partition table (image byte {})", problem.byte_offset);
        out.add(problem.code, std::move(where), problem.message);
    }
}

}  // namespace fsimg::fs
