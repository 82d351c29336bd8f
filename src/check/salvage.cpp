#include "fsimg/check/salvage.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/units.hpp"

namespace fsimg::check {

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
                out += fmt::format("{} from its own clusters at cluster {}", n, p.first_cluster);
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
            case SalvageSource::unmapped:
                out += fmt::format("{} of zeros (VCNs its runlist does not map)", n);
                break;
            case SalvageSource::outside:
                out +=
                    fmt::format("{} of zeros (a run at LCN {} lies outside the volume)", n, p.first_cluster);
                break;
            case SalvageSource::undecodable:
                out += fmt::format("{} of zeros (compressed data at cluster {} that does not decompress)", n,
                                   p.first_cluster);
                break;
        }
    }
    return out;
}

Salvage salvage_stream(const SalvageInput& in, const std::function<void(std::span<const std::byte>)>& sink) {
    Salvage s;
    if (in.bytes == 0 || in.cluster_bytes == 0) return s;
    const std::uint64_t cb = in.cluster_bytes;
    const std::uint64_t readable = std::min(in.read_bytes, in.bytes);
    std::uint64_t left = readable;
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min(cb, in.bytes)));
    // One piece per source and stretch (zeros of a gap apart from zeros past the image's end).
    const auto emit = [&](SalvageSource src, std::uint64_t cluster, std::uint64_t n) {
        if (!s.pieces.empty() && s.pieces.back().source == src &&
            (src != SalvageSource::zeros || (s.pieces.back().first_cluster != 0) == (cluster != 0))) {
            s.pieces.back().bytes += n;
            return;
        }
        s.pieces.push_back({src, cluster, n});
    };
    // One cluster (or the last bytes) from cluster n; zeros when it lies past the image's end.
    bool past_end = false;
    const auto put_cluster = [&](SalvageSource src, std::uint64_t n) {
        const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(left, cb));
        const std::uint64_t at = in.cluster_offset(n);
        if (at <= in.device_bytes && in.device_bytes - at >= len) {
            in.read_at(at, std::span(buf).first(len));
            emit(src, n, len);
        } else {
            std::fill(buf.begin(), buf.end(), std::byte{0});
            emit(SalvageSource::zeros, n, len);
            past_end = true;
        }
        sink(std::span<const std::byte>(buf).first(len));
        left -= len;
    };
    for (const SalvageRun& r : in.own)
        for (std::uint64_t i = 0; i < r.count && left > 0; ++i)
            put_cluster(SalvageSource::chain, r.first + i);
    s.damage = in.damage;
    if (left > 0) {
        const std::uint64_t missing = core::div_ceil(left, cb);
        bool found = false;
        // 1. A lost chain from there of exactly the missing length.
        if (in.next && in.is_cluster(*in.next) && in.lost(*in.next) && in.lost_chain) {
            if (const auto tail = in.lost_chain(*in.next, missing)) {
                found = true;
                for (const SalvageRun& r : *tail)
                    for (std::uint64_t i = 0; i < r.count && left > 0; ++i)
                        put_cluster(SalvageSource::lost_chain, r.first + i);
            }
        }
        // 2. The missing clusters consecutive from there, each free or lost.
        if (!found && in.next && in.is_cluster(*in.next) && in.is_cluster(*in.next + missing - 1)) {
            bool all = true;
            for (std::uint64_t n = *in.next; n < *in.next + missing && all; ++n) all = in.unowned(n);
            if (all) {
                found = true;
                for (std::uint64_t n = *in.next; n < *in.next + missing && left > 0; ++n)
                    put_cluster(SalvageSource::free_run, n);
            }
        }
        // 3. Zeros.
        if (!found) {
            std::fill(buf.begin(), buf.end(), std::byte{0});
            while (left > 0) {
                const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(left, cb));
                emit(SalvageSource::zeros, 0, len);
                sink(std::span<const std::byte>(buf).first(len));
                left -= len;
            }
        }
    }
    if (past_end && s.damage.empty()) s.damage = "its clusters run past the end of the image";
    // Past the bytes that are read (exFAT ValidDataLength): zeros, as every reader gives them.
    std::fill(buf.begin(), buf.end(), std::byte{0});
    for (std::uint64_t z = in.bytes - readable; z > 0;) {
        const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(z, buf.size()));
        sink(std::span<const std::byte>(buf).first(len));
        z -= len;
    }
    return s;
}

}  // namespace fsimg::check
