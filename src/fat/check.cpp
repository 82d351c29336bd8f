// fsck driver: runs the passes in order and fills the summary.
#include "fsimg/fat/check.hpp"

#include "check_internal.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat {

namespace detail {

check::Location at_sector(std::uint64_t sector, std::uint32_t bps, std::string object) {
    return check::at_sector(sector, bps, std::move(object));
}

check::Location at_cluster(const Context& c, std::uint32_t cluster, std::string object) {
    check::Location l;
    l.cluster = cluster;
    if (c.vol && c.vol->is_cluster(cluster)) {
        l.byte_offset = c.vol->cluster_offset(cluster);
        l.sector = *l.byte_offset / c.layout().bytes_per_sector;
    }
    l.object = std::move(object);
    return l;
}

std::string clusters_text(const Context& c, std::uint64_t n) {
    return fmt::format("{} cluster{} ({})", core::format_count(n), n == 1 ? "" : "s",
                       core::format_size(n * c.layout().cluster_bytes()));
}

}  // namespace detail

CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out, const CheckOptions& options) {
    detail::Context c(device, out, options);
    c.boot = read_boot_region(device);
    if (!detail::check_boot(c)) return c.summary;
    if (!detail::check_fats(c)) return c.summary;
    detail::check_tree(c);
    detail::check_summary(c);
    c.summary.complete = true;
    return c.summary;
}

}  // namespace fsimg::fat
