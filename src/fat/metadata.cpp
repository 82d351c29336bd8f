#include "fsimg/fat/metadata.hpp"

#include <fmt/format.h>

#include <utility>

#include "fsimg/check/summary.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/walk.hpp"

namespace fsimg::fat {

void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges,
                     std::vector<std::string>& problems) {
    const std::uint64_t size = v.device().size(), cb = v.cluster_bytes();
    fs::add_range(ranges, 0, v.layout().first_data_sector * v.layout().bytes_per_sector, size);
    // A directory holds at most kMaxDirEntries entries: its chain is read that far.
    const std::uint64_t cap = core::div_ceil(std::uint64_t{kMaxDirEntries} * kDirEntrySize, cb);
    core::VisitedClusters seen(v.readable_entries());
    std::vector<std::pair<DirRecord, unsigned>> todo{{v.root_record(), 0}};
    while (!todo.empty()) {
        const auto [dir, depth] = std::move(todo.back());
        todo.pop_back();
        const std::uint32_t first = v.first_cluster(dir);
        const std::string name = dir.is_root ? std::string("/") : dir.name;
        try {
            if (first != 0) {
                for (const ClusterRun& r : v.follow_chain(first, cap).runs)
                    fs::add_range(ranges, v.cluster_offset(r.first), std::uint64_t(r.count) * cb, size);
            }
            const ParsedDirectory d = v.read_directory(first);
            for (const auto* list : {&d.records, &d.after_end})
                for (const DirRecord& r : *list) {
                    if (r.kind != RecordKind::directory) continue;
                    const std::uint32_t c = v.first_cluster(r);
                    if (!v.is_cluster(c) || seen.visit(c)) continue;
                    if (depth + 1 >= check::kMaxDirectoryDepth) {
                        problems.push_back(
                            fmt::format("directory \"{}\" (cluster {}) lies deeper than {} levels", r.name, c,
                                        check::kMaxDirectoryDepth));
                        continue;
                    }
                    todo.push_back({r, depth + 1});
                }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            problems.push_back(fmt::format("directory \"{}\" (cluster {}): {}", name, first, e.what()));
        }
    }
}

}  // namespace fsimg::fat
