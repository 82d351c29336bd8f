#include "fsimg/ntfs/salvage.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/ntfs/compression.hpp"
#include "fsimg/ntfs/file.hpp"

namespace fsimg::ntfs {

namespace {

/// A compressed stream, unit by unit (read_compression_unit): a unit that
/// reads is written as it decompresses; one whose runs leave the volume or
/// the image, whose VCNs no run maps or whose LZNT1 data does not decode is
/// written as zeros (its 16 clusters' bytes), so that the others keep their
/// offsets.
check::Salvage salvage_compressed(const Volume& v, const MftRecord& base, const Attribute& a,
                                  const std::function<void(std::span<const std::byte>)>& sink) {
    if (const auto why = compression_unsupported(v, a))
        throw Error(ErrorCode::unsupported, fmt::format("MFT record {}: {}", base.number, *why));
    check::Salvage s;
    const std::uint64_t C = v.geometry().cluster_bytes;
    const std::uint64_t unit_bytes = (std::uint64_t{1} << kCompressionUnitLog2) * C;
    // At most the volume: a stored size cannot make the output larger than it.
    const std::uint64_t size =
        std::min(a.size(), core::checked_mul(v.geometry().cluster_count, C, "volume size"));
    const std::uint64_t initialized = std::min(a.initialized_size, size);
    if (size < a.size())
        s.damage = fmt::format("its size ({} bytes) exceeds the volume's ({} bytes)",
                               core::format_count(a.size()), core::format_count(size));
    std::vector<std::byte> out(static_cast<std::size_t>(unit_bytes)), scratch;
    for (std::uint64_t unit = 0; unit < (size + unit_bytes - 1) / unit_bytes; ++unit) {
        const std::uint64_t start = unit * unit_bytes;
        const std::size_t n = static_cast<std::size_t>(std::min(unit_bytes, size - start));
        const UnitRead r = read_compression_unit(v, a, unit, n, out, scratch);
        check::SalvageSource src = check::SalvageSource::chain;
        if (r.status != UnitRead::Status::ok) {
            std::fill(out.begin(), out.end(), std::byte{0});
            src = r.status == UnitRead::Status::unmapped  ? check::SalvageSource::unmapped
                  : r.status == UnitRead::Status::outside ? check::SalvageSource::outside
                  : r.status == UnitRead::Status::corrupt ? check::SalvageSource::undecodable
                                                          : check::SalvageSource::zeros;
            // What is wrong, without the record and attribute the report names already.
            const std::size_t colon = r.why.find(": ");
            const std::string what = colon == std::string::npos ? r.why : r.why.substr(colon + 2);
            if (s.damage.find(what) == std::string::npos) s.damage += (s.damage.empty() ? "" : "; ") + what;
        }
        if (start + n > initialized) {
            const std::uint64_t from = std::max(initialized, start) - start;
            std::fill(out.begin() + static_cast<std::ptrdiff_t>(from),
                      out.begin() + static_cast<std::ptrdiff_t>(n), std::byte{0});
        }
        if (!s.pieces.empty() && s.pieces.back().source == src)
            s.pieces.back().bytes += n;
        else
            s.pieces.push_back({src, r.lcn, n});
        sink(std::span<const std::byte>(out).first(n));
    }
    return s;
}

}  // namespace

check::Salvage salvage_data(const Volume& v, const MftRecord& base, std::u16string_view name,
                            const std::function<void(std::span<const std::byte>)>& sink) {
    check::Salvage s;
    const auto a = load_attribute(v, base, AttrType::data, name);
    if (!a || !a->non_resident) {
        read_data(v, base, name, sink);  // resident (or no such stream: its Error(usage))
        return s;
    }
    if (a->flags & 0x0001) return salvage_compressed(v, base, *a, sink);
    if (const auto why = unreadable_reason(v, base, *a))
        throw Error(ErrorCode::unsupported, fmt::format("MFT record {}: {}", base.number, *why));
    const std::uint64_t C = v.geometry().cluster_bytes, volume_clusters = v.geometry().cluster_count;
    const std::uint64_t device = v.device().size();
    // At most the volume: a stored size cannot make the output larger than it.
    const std::uint64_t size = std::min(a->size(), core::checked_mul(volume_clusters, C, "volume size"));
    const std::uint64_t initialized = std::min(a->initialized_size, size);
    if (size < a->size())
        s.damage = fmt::format("its size ({} bytes) exceeds the volume's ({} bytes)",
                               core::format_count(a->size()), core::format_count(size));
    const auto note = [&s](std::string what) {
        if (s.damage.find(what) != std::string::npos) return;
        s.damage += (s.damage.empty() ? "" : "; ") + what;
    };
    const auto emit = [&s](check::SalvageSource src, std::uint64_t cluster, std::uint64_t n) {
        if (!s.pieces.empty() && s.pieces.back().source == src) {
            s.pieces.back().bytes += n;
            return;
        }
        s.pieces.push_back({src, cluster, n});
    };
    constexpr std::uint64_t kChunk = 1u << 20;
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min(std::max<std::uint64_t>(size, 1), kChunk)));
    const auto zeros = [&](std::uint64_t n) {
        std::fill(buf.begin(), buf.end(), std::byte{0});
        while (n > 0) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf.size()));
            sink(std::span<const std::byte>(buf).first(k));
            n -= k;
        }
    };
    // Each step covers at least one byte and at most one run's (or one chunk's) bytes.
    for (std::uint64_t at = 0; at < size;) {
        if (at >= initialized) {  // past the initialized size: zeros, as every reader gives them
            emit(check::SalvageSource::chain, 0, size - at);
            zeros(size - at);
            break;
        }
        const std::uint64_t vcn = at / C;
        const auto it = std::upper_bound(
            a->runs.begin(), a->runs.end(), vcn,
            [](std::uint64_t x, const MappedRun& r) { return x < static_cast<std::uint64_t>(r.vcn); });
        const MappedRun* r = nullptr;
        if (it != a->runs.begin() &&
            vcn - static_cast<std::uint64_t>(std::prev(it)->vcn) < std::prev(it)->length)
            r = &*std::prev(it);
        if (r == nullptr) {
            // Unmapped: up to the next run's VCN (or the end).
            const std::uint64_t next =
                it == a->runs.end()
                    ? initialized
                    : std::min(initialized, core::checked_mul(static_cast<std::uint64_t>(it->vcn), C, "VCN"));
            const std::uint64_t n = std::max<std::uint64_t>(next, at + 1) - at;
            note(fmt::format("its runlist does not map VCN {} (stream byte {})", vcn, at));
            emit(check::SalvageSource::unmapped, 0, n);
            zeros(n);
            at += n;
            continue;
        }
        const std::uint64_t first = static_cast<std::uint64_t>(r->vcn);
        const std::uint64_t run_end =
            std::min(initialized, core::checked_mul(first + r->length, C, "run end"));
        const std::uint64_t n = std::min(kChunk, run_end - at);
        if (!r->lcn) {  // sparse: zeros that are the file's
            emit(check::SalvageSource::chain, 0, n);
            zeros(n);
            at += n;
            continue;
        }
        const std::uint64_t lcn = static_cast<std::uint64_t>(*r->lcn) + (vcn - first);
        if (lcn >= volume_clusters || r->length > volume_clusters - static_cast<std::uint64_t>(*r->lcn)) {
            note(fmt::format("the run at VCN {} (LCN {}, {} clusters) passes the volume's last cluster {}",
                             first, static_cast<std::uint64_t>(*r->lcn), r->length, volume_clusters - 1));
            // Clusters inside the volume are still read; those outside are zeros.
            if (lcn >= volume_clusters) {
                const std::uint64_t k = std::min(n, run_end - at);
                emit(check::SalvageSource::outside, static_cast<std::uint64_t>(*r->lcn), k);
                zeros(k);
                at += k;
                continue;
            }
        }
        const std::uint64_t k =
            std::min(n, (volume_clusters - lcn) * C - at % C);  // the bytes inside the volume
        const std::uint64_t pos = lcn * C + at % C;
        if (pos >= device || device - pos < k) {
            note("its clusters run past the end of the image");
            const std::uint64_t inside = pos >= device ? 0 : device - pos;
            if (inside > 0) {
                v.device().read_at(pos, std::span(buf).first(static_cast<std::size_t>(inside)));
                emit(check::SalvageSource::chain, lcn, inside);
                sink(std::span<const std::byte>(buf).first(static_cast<std::size_t>(inside)));
            }
            emit(check::SalvageSource::zeros, (pos + inside) / C, k - inside);
            zeros(k - inside);
            at += k;
            continue;
        }
        v.device().read_at(pos, std::span(buf).first(static_cast<std::size_t>(k)));
        emit(check::SalvageSource::chain, lcn, k);
        sink(std::span<const std::byte>(buf).first(static_cast<std::size_t>(k)));
        at += k;
    }
    return s;
}

}  // namespace fsimg::ntfs
