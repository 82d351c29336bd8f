#include "fsimg/fat/salvage.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::fat {

namespace {

/// True when cluster n lies in one of the ascending runs.
bool in_runs(std::span<const ClusterRun> runs, std::uint32_t n) {
    const auto it = std::upper_bound(runs.begin(), runs.end(), n,
                                     [](std::uint32_t x, const ClusterRun& r) { return x < r.first; });
    if (it == runs.begin()) return false;
    const ClusterRun& r = *std::prev(it);
    return n - r.first < r.count;
}

/// The entry of cluster n in FAT 1, nullopt when it cannot be read (it lies past the image's end).
std::optional<std::uint32_t> entry_of(const Volume& v, std::uint32_t n) {
    try {
        return v.fat_entry(n);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
}

std::string chain_damage(const Volume& v, std::uint32_t start, const Chain& c, std::uint64_t need) {
    const std::string head =
        c.clusters == 0
            ? fmt::format("its size ({}) needs {}, but ", core::format_counted(need, "cluster", "clusters"),
                          need)
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

bool Salvage::salvaged() const noexcept {
    return std::any_of(pieces.begin(), pieces.end(),
                       [](const SalvagePiece& p) { return p.source != SalvageSource::chain; });
}

std::string Salvage::sources() const {
    std::string out;
    for (const SalvagePiece& p : pieces) {
        if (!out.empty()) out += ", ";
        const std::string n = core::format_counted(p.bytes, "byte", "bytes");
        switch (p.source) {
            case SalvageSource::chain:
                out += fmt::format("{} from its chain at cluster {}", n, p.first_cluster);
                break;
            case SalvageSource::lost_chain:
                out += fmt::format("{} from the lost chain at cluster {}", n, p.first_cluster);
                break;
            case SalvageSource::free_run:
                out += fmt::format("{} from the free or lost clusters from {} on", n, p.first_cluster);
                break;
            case SalvageSource::zeros:
                out += p.first_cluster != 0
                           ? fmt::format("{} of zeros (cluster {} on lies past the image's end)", n,
                                         p.first_cluster)
                           : fmt::format("{} of zeros (no lost chain or free clusters continue it)", n);
                break;
        }
    }
    return out;
}

Salvage salvage_file(const Volume& v, const DirRecord& file, std::span<const ClusterRun> lost,
                     const std::function<void(std::span<const std::byte>)>& sink) {
    Salvage s;
    const std::uint64_t cb = v.cluster_bytes();
    // At most the data area: an entry's size cannot make the output larger than the volume.
    const std::uint64_t area = std::uint64_t(v.max_cluster() - 1) * cb;
    std::uint64_t left = std::min<std::uint64_t>(file.entry.file_size, area);
    if (left == 0) return s;
    if (left < file.entry.file_size)
        s.damage = fmt::format("its size ({} bytes) exceeds the volume's data area ({} bytes); ",
                               core::format_count(file.entry.file_size), core::format_count(area));
    const std::uint64_t need = core::div_ceil(left, cb);
    std::vector<std::byte> buf(static_cast<std::size_t>(cb));

    // One piece per source and stretch (zeros of a gap apart from zeros past the image's end).
    const auto emit = [&](SalvageSource src, std::uint32_t cluster, std::uint64_t n) {
        if (!s.pieces.empty() && s.pieces.back().source == src &&
            (src != SalvageSource::zeros || (s.pieces.back().first_cluster != 0) == (cluster != 0))) {
            s.pieces.back().bytes += n;
            return;
        }
        s.pieces.push_back({src, cluster, n});
    };
    // One cluster (or the file's last bytes) from `n`; zeros when it lies past the image's end.
    const auto put_cluster = [&](SalvageSource src, std::uint32_t n) {
        const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(left, cb));
        const std::uint64_t at = v.cluster_offset(n);
        if (at + len <= v.device().size()) {
            v.device().read_at(at, std::span(buf).first(len));
            emit(src, n, len);
        } else {
            std::fill(buf.begin(), buf.end(), std::byte{0});
            emit(SalvageSource::zeros, n, len);
        }
        sink(std::span<const std::byte>(buf).first(len));
        left -= len;
    };

    const std::uint32_t start = v.first_cluster(file);
    Chain c;
    try {
        c = v.follow_chain(start, need);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        c = Chain{};  // FAT 1 unreadable where the chain starts
        c.end = ChainEnd::invalid;
        c.stop_value = start;
    }
    for (const ClusterRun& r : c.runs)
        for (std::uint32_t i = 0; i < r.count && left > 0; ++i)
            put_cluster(SalvageSource::chain, r.first + i);
    if (left == 0) {
        if (s.salvaged() && s.damage.empty()) s.damage = "its chain runs past the end of the image";
        return s;
    }

    const std::uint64_t missing = need - c.clusters;
    s.damage += chain_damage(v, start, c, need);
    // Where the file would have continued.
    std::uint64_t next = c.end == ChainEnd::free ? c.stop_value
                         : c.runs.empty()        ? start
                                                 : std::uint64_t(c.runs.back().first) + c.runs.back().count;
    const auto unowned = [&](std::uint64_t n) {
        if (!v.is_cluster(n)) return false;
        const auto e = entry_of(v, static_cast<std::uint32_t>(n));
        return e && (*e == 0 || in_runs(lost, static_cast<std::uint32_t>(n)));
    };
    bool found = false;
    // 1. A lost chain from there of exactly the missing length.
    if (v.is_cluster(next) && in_runs(lost, static_cast<std::uint32_t>(next))) {
        Chain tail;
        try {
            tail = v.follow_chain(static_cast<std::uint32_t>(next), missing + 1);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
        bool all_lost = tail.clusters == missing && tail.end == ChainEnd::end_of_chain;
        for (const ClusterRun& r : tail.runs)
            for (std::uint32_t i = 0; i < r.count && all_lost; ++i) all_lost = in_runs(lost, r.first + i);
        if (all_lost) {
            found = true;
            for (const ClusterRun& r : tail.runs)
                for (std::uint32_t i = 0; i < r.count && left > 0; ++i)
                    put_cluster(SalvageSource::lost_chain, r.first + i);
        }
    }
    // 2. The missing clusters consecutive from there, each free or lost.
    if (!found && v.is_cluster(next) && next + missing - 1 <= v.max_cluster()) {
        bool all = true;
        for (std::uint64_t n = next; n < next + missing && all; ++n) all = unowned(n);
        if (all) {
            found = true;
            for (std::uint64_t n = next; n < next + missing && left > 0; ++n)
                put_cluster(SalvageSource::free_run, static_cast<std::uint32_t>(n));
        }
    }
    // 3. Zeros, in pieces of at most one cluster.
    if (!found) {
        std::fill(buf.begin(), buf.end(), std::byte{0});
        while (left > 0) {
            const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(left, cb));
            emit(SalvageSource::zeros, 0, len);
            sink(std::span<const std::byte>(buf).first(len));
            left -= len;
        }
    }
    return s;
}

}  // namespace fsimg::fat
