// Compressed NTFS attributes: see include/fsimg/ntfs/compression.hpp.
#include "fsimg/ntfs/compression.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/lznt1.hpp"

namespace fsimg::ntfs {

namespace {

std::string where(const Attribute& a) {
    return fmt::format("MFT record {} attribute {}", a.record, a.display_name());
}

}  // namespace

UnitPlan plan_compression_unit(std::span<const MappedRun> runs, std::uint64_t first_vcn,
                               std::uint64_t unit_clusters) {
    UnitPlan p;
    const std::uint64_t end_vcn = first_vcn + unit_clusters;
    // The first run that ends past first_vcn (runs are sorted and contiguous).
    auto it = std::upper_bound(runs.begin(), runs.end(), first_vcn, [](std::uint64_t v, const MappedRun& r) {
        return v < static_cast<std::uint64_t>(r.vcn);
    });
    if (it != runs.begin()) --it;
    std::uint64_t vcn = first_vcn;
    for (; it != runs.end() && vcn < end_vcn; ++it) {
        const auto rv = static_cast<std::uint64_t>(it->vcn);
        if (rv > vcn) {  // a gap no run maps
            if (!p.first_unmapped) p.first_unmapped = vcn;
            vcn = std::min(rv, end_vcn);
            if (vcn == end_vcn) break;
        }
        if (it->length <= vcn - rv) continue;  // the run ends before vcn
        const std::uint64_t in_run = vcn - rv;
        const std::uint64_t take = std::min(it->length - in_run, end_vcn - vcn);
        if (it->lcn) {
            const std::uint64_t lcn = static_cast<std::uint64_t>(*it->lcn) + in_run;
            if (!p.extents.empty() && p.extents.back().lcn + p.extents.back().clusters == lcn)
                p.extents.back().clusters += take;
            else
                p.extents.push_back({lcn, take});
            p.allocated += take;
        }
        vcn += take;
    }
    if (vcn < end_vcn && !p.first_unmapped) p.first_unmapped = vcn;
    p.kind = p.allocated == 0               ? UnitPlan::Kind::sparse
             : p.allocated == unit_clusters ? UnitPlan::Kind::stored
                                            : UnitPlan::Kind::compressed;
    return p;
}

std::optional<std::string> compression_unsupported(const Volume& v, const Attribute& a) {
    if (!a.non_resident || !(a.flags & 0x0001)) return std::nullopt;
    if (v.geometry().cluster_bytes > kMaxCompressedClusterBytes)
        return fmt::format(
            "the stream is compressed, but clusters are {} bytes; NTFS compresses only with "
            "clusters up to {} bytes",
            v.geometry().cluster_bytes, kMaxCompressedClusterBytes);
    if (a.compression_unit != kCompressionUnitLog2)
        return fmt::format(
            "the stream is compressed in units of 2^{} clusters; fsimg reads the units of "
            "2^{} clusters NTFS writes",
            a.compression_unit, kCompressionUnitLog2);
    return std::nullopt;
}

UnitRead read_compression_unit(const Volume& v, const Attribute& a, std::uint64_t unit, std::uint64_t needed,
                               std::span<std::byte> out, std::vector<std::byte>& scratch) {
    const std::uint64_t C = v.geometry().cluster_bytes;
    const std::uint64_t unit_clusters = std::uint64_t{1} << kCompressionUnitLog2;
    const std::uint64_t first_vcn = unit * unit_clusters;
    const std::uint64_t start = unit * unit_clusters * C;
    UnitRead r;
    const UnitPlan p = plan_compression_unit(a.runs, first_vcn, unit_clusters);
    if (p.first_unmapped && *p.first_unmapped < first_vcn + (needed + C - 1) / C) {
        r.status = UnitRead::Status::unmapped;
        r.why = fmt::format("{}: VCN {} (stream byte {}) is not mapped by the runlist", where(a),
                            *p.first_unmapped, *p.first_unmapped * C);
        return r;
    }
    if (p.kind == UnitPlan::Kind::sparse) {
        std::fill(out.begin(), out.end(), std::byte{0});
        return r;
    }
    const std::uint64_t first_lcn = p.extents.front().lcn;
    r.lcn = first_lcn;
    for (const UnitPlan::Extent& e : p.extents) {
        if (e.lcn >= v.geometry().cluster_count || e.clusters > v.geometry().cluster_count - e.lcn) {
            r.status = UnitRead::Status::outside;
            r.lcn = e.lcn;
            r.why = fmt::format(
                "{}: compression unit at VCN {}: clusters from LCN {} pass the volume's last "
                "cluster {}",
                where(a), first_vcn, e.lcn, v.geometry().cluster_count - 1);
            return r;
        }
        if ((e.lcn + e.clusters) * C > v.device().size()) {
            r.status = UnitRead::Status::past_image;
            r.lcn = (v.device().size() + C - 1) / C;
            r.why = fmt::format(
                "{}: compression unit at VCN {}: clusters from LCN {} lie past the end of the "
                "image",
                where(a), first_vcn, e.lcn);
            return r;
        }
    }
    // The allocated clusters (stored: the unit's; compressed: the chunks) in VCN order.
    scratch.resize(out.size());
    std::span<std::byte> dst = p.kind == UnitPlan::Kind::stored ? out : std::span<std::byte>(scratch);
    std::size_t at = 0;
    for (const UnitPlan::Extent& e : p.extents) {
        const std::size_t bytes = static_cast<std::size_t>(e.clusters * C);
        v.device().read_at(e.lcn * C, dst.subspan(at, bytes));
        at += bytes;
    }
    if (p.kind != UnitPlan::Kind::compressed) return r;
    try {
        lznt1::decompress(dst.first(at), out);
    } catch (const FormatError& e) {
        // The volume byte of the input byte that failed.
        std::uint64_t off = e.byte_offset().value_or(0), dev = first_lcn * C;
        for (const UnitPlan::Extent& x : p.extents) {
            if (off < x.clusters * C) {
                dev = x.lcn * C + off;
                break;
            }
            off -= x.clusters * C;
        }
        r.status = UnitRead::Status::corrupt;
        r.volume_byte = dev;
        r.why = fmt::format(
            "{}: compression unit at VCN {} (stream byte {}, {} clusters stored from LCN {}), "
            "volume byte {}: {}",
            where(a), first_vcn, start, p.allocated, first_lcn, dev, e.what());
    }
    return r;
}

void read_compressed(const Volume& v, const Attribute& a,
                     const std::function<void(std::span<const std::byte>)>& sink) {
    if (const auto why = compression_unsupported(v, a))
        throw Error(ErrorCode::unsupported, fmt::format("{}: {}", where(a), *why));
    if (!a.non_resident || !(a.flags & 0x0001))
        throw Error(ErrorCode::usage, fmt::format("{}: not a compressed non-resident stream", where(a)));
    v.check_runs(a);
    const std::uint64_t C = v.geometry().cluster_bytes;
    const std::uint64_t unit_bytes = (std::uint64_t{1} << kCompressionUnitLog2) * C;  // at most 64 KiB
    const std::uint64_t size = a.data_size;
    const std::uint64_t initialized = std::min(a.initialized_size, a.data_size);
    std::vector<std::byte> scratch;
    std::vector<std::byte> out(static_cast<std::size_t>(unit_bytes));
    // Each unit either maps its data clusters (bounded by the runlist, whose
    // runs check_runs kept inside the volume) or throws: the loop ends.
    for (std::uint64_t unit = 0; unit < (size + unit_bytes - 1) / unit_bytes; ++unit) {
        const std::uint64_t start = unit * unit_bytes;
        const std::size_t n = static_cast<std::size_t>(std::min(unit_bytes, size - start));
        const UnitRead r = read_compression_unit(v, a, unit, n, out, scratch);
        if (r.status != UnitRead::Status::ok) throw Error(ErrorCode::corrupt, r.why, r.volume_byte);
        if (start + n > initialized) {
            const std::uint64_t from = std::max(initialized, start) - start;
            std::fill(out.begin() + static_cast<std::ptrdiff_t>(from),
                      out.begin() + static_cast<std::ptrdiff_t>(n), std::byte{0});
        }
        sink(std::span<const std::byte>(out).first(n));
    }
}

}  // namespace fsimg::ntfs
