#include "fsimg/exfat/metadata.hpp"

#include <fmt/format.h>

#include <utility>

#include "fsimg/check/summary.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/walk.hpp"

namespace fsimg::exfat {

void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges,
                     std::vector<std::string>& problems) {
    const std::uint64_t size = v.device().size(), cb = v.cluster_bytes(), bps = v.bytes_per_sector();
    const BootSector& bs = v.boot_sector();
    fs::add_range(ranges, 0, 24 * bps, size);  // main and backup boot regions [EXFAT §3.1]
    fs::add_range(ranges, std::uint64_t(bs.fat_offset) * bps,
                  std::uint64_t(bs.fat_length) * bps * std::max<std::uint8_t>(bs.number_of_fats, 1), size);
    const auto add_runs = [&](const std::vector<ClusterRun>& runs) {
        for (const ClusterRun& r : runs)
            fs::add_range(ranges, v.cluster_offset(r.first), std::uint64_t(r.count) * cb, size);
    };
    // The system objects' clusters: contiguous or chained, as allocation() reads them.
    const auto system = [&](std::string_view what, std::uint32_t first, std::uint64_t length) {
        try {
            add_runs(v.allocation(first, length, false, what));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            try {
                add_runs(v.allocation(first, length, true, what));  // some writers leave no FAT chain
            } catch (const Error& e2) {
                if (e2.code() == ErrorCode::io) throw;
                problems.push_back(fmt::format("{}: {}", what, e.what()));
            }
        }
    };
    if (const auto b = v.boot().bitmap) system("the allocation bitmap", b->first_cluster, b->data_length);
    if (const auto u = v.boot().upcase) system("the up-case table", u->first_cluster, u->data_length);
    core::VisitedClusters seen(std::uint64_t{v.max_cluster()} + 1);
    std::vector<std::pair<FileRecord, unsigned>> todo{{v.root_record(), 0}};
    seen.visit(v.root_cluster());
    while (!todo.empty()) {
        const auto [dir, depth] = std::move(todo.back());
        todo.pop_back();
        try {
            if (dir.is_root) {
                // 256 MiB at most, as read_directory_bytes reads the root.
                add_runs(v.follow_chain(v.root_cluster(), (std::uint64_t{256} << 20) / cb).runs);
            } else {
                add_runs(v.allocation(dir.first_cluster, dir.data_length, dir.no_fat_chain(), dir.name));
            }
            const ParsedDirectory d = v.read_directory(dir);
            for (const FileRecord& r : d.files) {
                if (!r.is_directory() || !v.is_cluster(r.first_cluster) || seen.visit(r.first_cluster))
                    continue;
                if (depth + 1 >= check::kMaxDirectoryDepth) {
                    problems.push_back(fmt::format("directory \"{}\" (cluster {}) lies deeper than {} levels",
                                                   r.name, r.first_cluster, check::kMaxDirectoryDepth));
                    continue;
                }
                todo.push_back({r, depth + 1});
            }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            problems.push_back(fmt::format("directory \"{}\": {}", dir.is_root ? "/" : dir.name, e.what()));
        }
    }
}

}  // namespace fsimg::exfat
