#include "fsimg/fat/salvage.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat {

namespace {

std::string chain_damage(const Volume& v, std::uint32_t start, const Chain& c, std::uint64_t need) {
    const std::string head =
        c.clusters == 0
            ? fmt::format("its size needs {}, but ", core::format_counted(need, "cluster", "clusters"))
            : fmt::format("the chain from cluster {} ends after {} of the {} clusters its size needs: ",
                          start, core::format_count(c.clusters), core::format_count(need));
    const std::uint32_t last = c.runs.empty() ? 0 : c.runs.back().first + c.runs.back().count - 1;
    switch (c.end) {
        case ChainEnd::end_of_chain:
            return head + fmt::format("cluster {} holds an end-of-chain mark", last);
        case ChainEnd::free:
            return c.clusters == 0
                       ? head + fmt::format("its first cluster {} is free", start)
                       : head + fmt::format("cluster {} links to free cluster {}", last, c.stop_value);
        case ChainEnd::bad:
            return head + fmt::format("cluster {} is marked bad", last);
        case ChainEnd::invalid:
            return c.clusters == 0
                       ? head + fmt::format("its first cluster {} is not a cluster of the volume (2..{})",
                                            start, v.max_cluster())
                       : head + fmt::format("cluster {} holds the invalid value 0x{:X}", last, c.stop_value);
        case ChainEnd::loop:
            return head + fmt::format("cluster {} links back to cluster {}", last, c.stop_value);
        case ChainEnd::limit:
            break;
    }
    return head + "the chain stops";
}

}  // namespace

check::Salvage salvage_file(const Volume& v, const DirRecord& file, std::span<const ClusterRun> lost,
                            const std::function<void(std::span<const std::byte>)>& sink) {
    check::SalvageInput in;
    check::describe_volume(in, v);
    // At most the data area: an entry's size cannot make the output larger than the volume.
    const std::uint64_t area = std::uint64_t(v.max_cluster() - 1) * in.cluster_bytes;
    in.bytes = in.read_bytes = std::min<std::uint64_t>(file.entry.file_size, area);
    if (in.bytes == 0) return {};
    const std::uint64_t need = core::div_ceil(in.bytes, in.cluster_bytes);
    const std::uint32_t start = v.first_cluster(file);
    const Chain c = check::chain_or_invalid(v, start, need);
    for (const ClusterRun& r : c.runs) in.own.push_back({r.first, r.count});
    if (in.bytes < file.entry.file_size)
        in.damage = fmt::format("its size ({} bytes) exceeds the volume's data area ({} bytes); ",
                                core::format_count(file.entry.file_size), core::format_count(area));
    if (c.clusters < need) {
        in.damage += chain_damage(v, start, c, need);
        in.next = c.end == ChainEnd::free ? std::uint64_t{c.stop_value}
                  : c.runs.empty()        ? std::uint64_t{start}
                                          : std::uint64_t{c.runs.back().first} + c.runs.back().count;
    }
    in.lost = [lost](std::uint64_t n) { return check::in_runs(lost, n); };
    in.unowned = [&v, lost](std::uint64_t n) {
        if (!v.is_cluster(n)) return false;
        try {
            return v.fat_entry(static_cast<std::uint32_t>(n)) == 0 || check::in_runs(lost, n);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return false;  // the entry lies past the image's end
        }
    };
    in.lost_chain = [&v, lost](std::uint64_t n, std::uint64_t count) {
        return check::exact_lost_chain(v, lost, n, count);
    };
    return check::salvage_stream(in, sink);
}

}  // namespace fsimg::fat
