#include "fsimg/exfat/salvage.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::exfat {

namespace {

std::string chain_damage(const Volume& v, std::uint32_t start, const Chain& c, std::uint64_t need) {
    const std::string head =
        c.clusters == 0
            ? fmt::format("its length needs {}, but ", core::format_counted(need, "cluster", "clusters"))
            : fmt::format("the FAT chain from cluster {} ends after {} of the {} clusters its length needs: ",
                          start, core::format_count(c.clusters), core::format_count(need));
    const std::uint32_t last = c.runs.empty() ? 0 : c.runs.back().first + c.runs.back().count - 1;
    switch (c.end) {
        case ChainEnd::end_of_chain:
            return head + fmt::format("cluster {} holds the end-of-chain mark", last);
        case ChainEnd::bad:
            return head + fmt::format("cluster {} links to the bad-cluster mark", last);
        case ChainEnd::invalid:
            return c.clusters == 0
                       ? head + fmt::format("its FirstCluster {} is not a cluster of the heap (2..{})", start,
                                            v.max_cluster())
                       : head + fmt::format("cluster {} holds the invalid value 0x{:X}", last, c.stop_value);
        case ChainEnd::loop:
            return head + fmt::format("cluster {} links back to cluster {}", last, c.stop_value);
        case ChainEnd::limit:
            break;
    }
    return head + "the chain stops";
}

}  // namespace

check::Salvage salvage_file(const Volume& v, const FileRecord& file, std::span<const ClusterRun> lost,
                            const std::function<void(std::span<const std::byte>)>& sink) {
    check::SalvageInput in;
    check::describe_volume(in, v);
    // At most the cluster heap: a stored length cannot make the output larger than the volume.
    const std::uint64_t heap = std::uint64_t(v.cluster_count()) * in.cluster_bytes;
    in.bytes = std::min(file.data_length, heap);
    in.read_bytes = std::min(file.valid_data_length, in.bytes);
    if (in.bytes < file.data_length)
        in.damage = fmt::format("its DataLength ({} bytes) exceeds the cluster heap ({} bytes); ",
                                core::format_count(file.data_length), core::format_count(heap));
    const std::uint64_t need = core::div_ceil(in.read_bytes, in.cluster_bytes);
    const std::uint32_t start = file.first_cluster;
    if (need > 0 && file.no_fat_chain()) {
        // One extent: as far as the heap goes; past it nothing continues the file.
        if (!v.is_cluster(start)) {
            in.damage += fmt::format("its FirstCluster {} is not a cluster of the heap (2..{})", start,
                                     v.max_cluster());
        } else {
            const std::uint64_t have = std::min<std::uint64_t>(need, v.max_cluster() - start + 1);
            in.own.push_back({start, have});
            if (have < need)
                in.damage += fmt::format(
                    "its {} consecutive clusters from cluster {} (NoFatChain) run past the heap's last "
                    "cluster {}",
                    core::format_count(need), start, v.max_cluster());
        }
    } else if (need > 0) {
        const Chain c = check::chain_or_invalid(v, start, need);
        for (const ClusterRun& r : c.runs) in.own.push_back({r.first, r.count});
        if (c.clusters < need) {
            in.damage += chain_damage(v, start, c, need);
            in.next = c.runs.empty() ? std::uint64_t{start}
                                     : std::uint64_t{c.runs.back().first} + c.runs.back().count;
        }
    }
    in.lost = [lost](std::uint64_t n) { return check::in_runs(lost, n); };
    in.unowned = [&v, lost](std::uint64_t n) {
        if (!v.is_cluster(n)) return false;
        if (check::in_runs(lost, n)) return true;
        try {
            return !v.cluster_in_use(static_cast<std::uint32_t>(n));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return false;  // no usable bitmap: nothing is known to be free
        }
    };
    in.lost_chain = [&v, lost](std::uint64_t n, std::uint64_t count) {
        return check::exact_lost_chain(v, lost, n, count);
    };
    return check::salvage_stream(in, sink);
}

}  // namespace fsimg::exfat
