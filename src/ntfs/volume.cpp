// Read-only NTFS volume: see include/fsimg/ntfs/volume.hpp.
#include "fsimg/ntfs/volume.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/ntfs/layout.hpp"

namespace fsimg::ntfs {

namespace {

constexpr std::uint32_t kMinRecordBytes = 512, kMaxRecordBytes = 65536;

bool record_size_ok(std::optional<std::uint32_t> v) {
    return v && core::is_power_of_two(*v) && *v >= kMinRecordBytes && *v <= kMaxRecordBytes;
}

std::string where(const Attribute& a) {
    return fmt::format("MFT record {} attribute {}", a.record, a.display_name());
}

}  // namespace

std::vector<BootProblem> validate_boot_sector(std::span<const std::byte, kBootSectorSize> s) {
    std::vector<BootProblem> out;
    const BootSector b = decode_boot_sector(s);
    const std::string oem = core::load_string(s.subspan(off::OemId, 8));
    if (oem != "NTFS    ")
        out.push_back({"ntfs.boot.oem_id", fmt::format("OEM ID is \"{}\", not \"NTFS    \"", oem)});
    if (s[off::Signature] != std::byte{0x55} || s[off::Signature + 1] != std::byte{0xAA})
        out.push_back({"ntfs.boot.signature",
                       fmt::format("signature is {:02X} {:02X}, not 55 AA", std::uint8_t(s[off::Signature]),
                                   std::uint8_t(s[off::Signature + 1]))});
    const bool bps_ok =
        core::is_power_of_two(b.bytes_per_sector) && b.bytes_per_sector >= 256 && b.bytes_per_sector <= 4096;
    if (!bps_ok)
        out.push_back(
            {"ntfs.boot.bytes_per_sector",
             fmt::format("bytes per sector is {}, not a power of two in 256..4096", b.bytes_per_sector)});
    const auto cluster =
        bps_ok ? decode_cluster_bytes(b.sectors_per_cluster_raw, b.bytes_per_sector) : std::nullopt;
    if (bps_ok && (!cluster || !core::is_power_of_two(*cluster) || *cluster > kMaxClusterBytes)) {
        out.push_back(
            {"ntfs.boot.cluster_size",
             fmt::format(
                 "sectors per cluster byte 0x{:02X} gives {}, not a power-of-two cluster of at most 2 MiB",
                 b.sectors_per_cluster_raw,
                 cluster ? fmt::format("{} bytes", *cluster) : std::string("no size"))});
    }
    if (!cluster || !core::is_power_of_two(*cluster) || *cluster > kMaxClusterBytes) return out;
    const auto rec = decode_record_size(b.clusters_per_mft_record, *cluster);
    if (!record_size_ok(rec))
        out.push_back(
            {"ntfs.boot.mft_record_size",
             fmt::format("clusters per MFT record {} gives {}, not a power of two in 512..65536",
                         b.clusters_per_mft_record, rec ? std::to_string(*rec) + " bytes" : "no size")});
    const auto idx = decode_record_size(b.clusters_per_index_block, *cluster);
    if (!record_size_ok(idx))
        out.push_back(
            {"ntfs.boot.index_block_size",
             fmt::format("clusters per index block {} gives {}, not a power of two in 512..65536",
                         b.clusters_per_index_block, idx ? std::to_string(*idx) + " bytes" : "no size")});
    const std::uint64_t spc = *cluster / b.bytes_per_sector;
    const std::uint64_t clusters = b.total_sectors / spc;
    if (clusters == 0 || b.total_sectors > ~std::uint64_t(0) / b.bytes_per_sector) {
        out.push_back({"ntfs.boot.total_sectors",
                       fmt::format("total sectors {} is less than one cluster ({} sectors) or too large",
                                   b.total_sectors, spc)});
        return out;
    }
    if (b.mft_lcn >= clusters)
        out.push_back({"ntfs.boot.mft_lcn",
                       fmt::format("$MFT LCN {} is past the last cluster {}", b.mft_lcn, clusters - 1)});
    if (b.mftmirr_lcn >= clusters)
        out.push_back({"ntfs.boot.mftmirr_lcn", fmt::format("$MFTMirr LCN {} is past the last cluster {}",
                                                            b.mftmirr_lcn, clusters - 1)});
    return out;
}

std::optional<Geometry> geometry_of(std::span<const std::byte, kBootSectorSize> s) {
    if (!validate_boot_sector(s).empty()) return std::nullopt;
    const BootSector b = decode_boot_sector(s);
    Geometry g;
    g.bytes_per_sector = b.bytes_per_sector;
    g.cluster_bytes = *decode_cluster_bytes(b.sectors_per_cluster_raw, b.bytes_per_sector);
    g.mft_record_bytes = *decode_record_size(b.clusters_per_mft_record, g.cluster_bytes);
    g.index_block_bytes = *decode_record_size(b.clusters_per_index_block, g.cluster_bytes);
    g.total_sectors = b.total_sectors;
    g.cluster_count = b.total_sectors / (g.cluster_bytes / g.bytes_per_sector);
    return g;
}

bool is_ntfs(const io::BlockDevice& device) {
    if (device.size() < kBootSectorSize) return false;
    std::array<std::byte, 11> head{};
    device.read_at(0, head);
    return std::memcmp(head.data() + off::OemId, "NTFS    ", 8) == 0;
}

std::optional<BackupBootSector> find_backup_boot_sector(const io::BlockDevice& d) {
    if (d.size() < 2 * kBootSectorSize) return std::nullopt;
    const std::uint64_t size = d.size() / 512 * 512;
    for (std::uint64_t back : {512u, 1024u, 2048u, 4096u}) {
        if (size < back + kBootSectorSize) continue;
        BackupBootSector b;
        d.read_at(size - back, b.sector);
        if (!validate_boot_sector(b.sector).empty()) continue;
        const BootSector bs = decode_boot_sector(b.sector);
        if (bs.total_sectors > ~std::uint64_t(0) / bs.bytes_per_sector) continue;
        if (bs.total_sectors * bs.bytes_per_sector != size - back) continue;
        b.offset = size - back;
        return b;
    }
    return std::nullopt;
}

Volume::Volume(const io::BlockDevice& device) : device_(device) {
    if (device.size() < kBootSectorSize)
        throw Error(ErrorCode::corrupt,
                    fmt::format("the image has {} bytes, less than one boot sector", device.size()));
    device.read_at(0, boot_bytes_);
    if (std::memcmp(boot_bytes_.data() + off::OemId, "NTFS    ", 8) != 0)
        throw Error(ErrorCode::not_this_fs, "no NTFS boot sector (byte 3 does not say \"NTFS    \")", 3);
    const auto problems = validate_boot_sector(boot_bytes_);
    if (!problems.empty())
        throw Error(ErrorCode::corrupt,
                    fmt::format("NTFS boot sector: {} ({})", problems.front().message, problems.front().code),
                    0);
    boot_ = decode_boot_sector(boot_bytes_);
    geometry_ = *geometry_of(boot_bytes_);
    load_mft();
}

void Volume::load_mft() {
    const io::BlockDevice& device = device_;
    // Record 0 lies at the boot sector's $MFT LCN; its runlist maps the rest.
    const std::uint64_t rs = geometry_.mft_record_bytes;
    const std::uint64_t at = core::checked_mul(boot_.mft_lcn, geometry_.cluster_bytes, "$MFT byte offset");
    if (at > device.size() || device.size() - at < rs)
        throw Error(ErrorCode::corrupt,
                    fmt::format("MFT record 0 at volume byte {} passes the end of the volume ({} bytes)", at,
                                device.size()),
                    at);
    std::vector<std::byte> raw(rs);
    device.read_at(at, raw);
    const MftRecord rec0 = parse_mft_record(raw, 0, at);
    const Attribute* data = rec0.find(AttrType::data);
    if (!data || !data->non_resident || data->first_vcn != Vcn{0})
        throw Error(ErrorCode::corrupt,
                    "MFT record 0 ($MFT) has no non-resident unnamed $DATA attribute starting at VCN 0", at);
    check_runs(*data);
    mft_data_ = *data;
    if (const Attribute* list = rec0.find(AttrType::attribute_list)) follow_mft_extents(*list);
}

void Volume::reload_mft() { load_mft(); }

void Volume::follow_mft_extents(const Attribute& list) {
    // $MFT's $DATA may continue in extension records named by record 0's
    // $ATTRIBUTE_LIST [FLATCAP attributes/attribute_list]. Each extent must
    // start at the VCN where the runs so far end, so every step maps more
    // VCNs and the walk ends after at most one step per list entry.
    const auto entries = decode_attribute_list(read_stream(list, kMaxAttributeListBytes));
    const std::uint64_t rs = geometry_.mft_record_bytes;
    auto end_vcn = [&] {
        return mft_data_.runs.empty()
                   ? static_cast<std::uint64_t>(mft_data_.first_vcn)
                   : static_cast<std::uint64_t>(mft_data_.runs.back().vcn) + mft_data_.runs.back().length;
    };
    for (const AttributeListEntry& e : entries) {
        if (e.type != static_cast<std::uint32_t>(AttrType::data) || !e.name.empty() || e.record.record == 0)
            continue;
        if (e.starting_vcn != end_vcn())
            throw Error(
                ErrorCode::corrupt,
                fmt::format("MFT record 0 ($MFT): $ATTRIBUTE_LIST names a $DATA extent at VCN {} in record "
                            "{}, but the runs so far end at VCN {}",
                            e.starting_vcn, e.record.record, end_vcn()));
        if (e.record.record >= record_count())
            throw Error(ErrorCode::corrupt,
                        fmt::format("MFT record 0 ($MFT): $ATTRIBUTE_LIST names record {}, past "
                                    "$MFT's {} records",
                                    e.record.record, record_count()));
        std::vector<std::byte> raw(rs);
        read_stream(mft_data_, e.record.record * rs, raw);
        const MftRecord ext = parse_mft_record(raw, e.record.record,
                                               device_offset(mft_data_, e.record.record * rs).value_or(0));
        const Attribute* more = nullptr;
        for (const Attribute& a : ext.attributes)
            if (a.type == e.type && a.name.empty() && a.non_resident &&
                static_cast<std::uint64_t>(a.first_vcn) == e.starting_vcn)
                more = &a;
        if (!more || FileReference::unpack(ext.header.base_record).record != 0 || more->runs.empty())
            throw Error(ErrorCode::corrupt,
                        fmt::format("MFT record {} holds no $DATA extent of $MFT starting at VCN {}",
                                    e.record.record, e.starting_vcn),
                        ext.byte_offset);
        check_runs(*more);
        mft_data_.runs.insert(mft_data_.runs.end(), more->runs.begin(), more->runs.end());
        mft_data_.last_vcn = more->last_vcn;
    }
}

std::uint64_t Volume::record_count() const noexcept {
    return mft_data_.data_size / geometry_.mft_record_bytes;
}

std::optional<bool> Volume::backup_boot_matches() const {
    const std::uint64_t at = geometry_.total_sectors * geometry_.bytes_per_sector;
    if (at > device_.size() || device_.size() - at < kBootSectorSize) return std::nullopt;
    std::array<std::byte, kBootSectorSize> copy{};
    device_.read_at(at, copy);
    return copy == boot_bytes_;
}

void Volume::check_runs(const Attribute& a) const {
    for (const MappedRun& r : a.runs) {
        if (!r.lcn) continue;
        const auto lcn = static_cast<std::uint64_t>(*r.lcn);
        if (lcn >= geometry_.cluster_count || r.length > geometry_.cluster_count - lcn)
            throw Error(ErrorCode::corrupt,
                        fmt::format("{}: the run at VCN {} (LCN {}, {} clusters) passes the volume's last "
                                    "cluster {}",
                                    where(a), static_cast<std::uint64_t>(r.vcn), lcn, r.length,
                                    geometry_.cluster_count - 1));
    }
}

std::optional<std::uint64_t> Volume::device_offset(const Attribute& a, std::uint64_t stream_offset) const {
    if (!a.non_resident) return std::nullopt;
    const std::uint64_t vcn = stream_offset / geometry_.cluster_bytes;
    auto it = std::upper_bound(a.runs.begin(), a.runs.end(), vcn, [](std::uint64_t v, const MappedRun& r) {
        return v < static_cast<std::uint64_t>(r.vcn);
    });
    if (it == a.runs.begin()) return std::nullopt;
    --it;
    const std::uint64_t in_run = vcn - static_cast<std::uint64_t>(it->vcn);
    if (in_run >= it->length || !it->lcn) return std::nullopt;
    const std::uint64_t lcn = static_cast<std::uint64_t>(*it->lcn) + in_run;
    if (lcn >= geometry_.cluster_count) return std::nullopt;
    return lcn * geometry_.cluster_bytes + stream_offset % geometry_.cluster_bytes;
}

void Volume::read_stream(const Attribute& a, std::uint64_t stream_offset, std::span<std::byte> out) const {
    const std::uint64_t size = a.size();
    if (stream_offset > size || out.size() > size - stream_offset)
        throw Error(ErrorCode::usage, fmt::format("{}: bytes {}..{} pass the stream's {} bytes", where(a),
                                                  stream_offset, stream_offset + out.size(), size));
    if (!a.non_resident) {
        std::copy_n(a.value.begin() + static_cast<std::ptrdiff_t>(stream_offset), out.size(), out.begin());
        return;
    }
    const std::uint64_t C = geometry_.cluster_bytes;
    const std::uint64_t initialized = std::min(a.initialized_size, a.data_size);
    std::size_t done = 0;
    // Each step consumes at least one byte and at most one run's bytes: the
    // loop ends within out.size() steps.
    while (done < out.size()) {
        const std::uint64_t pos = stream_offset + done;
        std::span<std::byte> rest = out.subspan(done);
        if (pos >= initialized) {
            std::fill(rest.begin(), rest.end(), std::byte{0});
            return;
        }
        std::uint64_t want = std::min<std::uint64_t>(rest.size(), initialized - pos);
        const std::uint64_t vcn = pos / C;
        auto it = std::upper_bound(
            a.runs.begin(), a.runs.end(), vcn,
            [](std::uint64_t v, const MappedRun& r) { return v < static_cast<std::uint64_t>(r.vcn); });
        if (it == a.runs.begin() ||
            vcn - static_cast<std::uint64_t>(std::prev(it)->vcn) >= std::prev(it)->length)
            throw Error(
                ErrorCode::corrupt,
                fmt::format("{}: VCN {} (stream byte {}) is not mapped by the runlist", where(a), vcn, pos));
        const MappedRun& r = *std::prev(it);
        const std::uint64_t in_run = vcn - static_cast<std::uint64_t>(r.vcn);
        const std::uint64_t clusters_left = r.length - in_run;
        if (clusters_left <= (want + C) / C) want = std::min(want, clusters_left * C - pos % C);
        const std::span<std::byte> chunk = rest.first(static_cast<std::size_t>(want));
        if (!r.lcn) {
            std::fill(chunk.begin(), chunk.end(), std::byte{0});
        } else {
            const std::uint64_t lcn = static_cast<std::uint64_t>(*r.lcn);
            if (lcn >= geometry_.cluster_count || r.length > geometry_.cluster_count - lcn)
                throw Error(
                    ErrorCode::corrupt,
                    fmt::format("{}: the run at VCN {} (LCN {}, {} clusters) passes the volume's last "
                                "cluster {}",
                                where(a), static_cast<std::uint64_t>(r.vcn), lcn, r.length,
                                geometry_.cluster_count - 1));
            device_.read_at((lcn + in_run) * C + pos % C, chunk);
        }
        done += chunk.size();
    }
}

std::vector<std::byte> Volume::read_stream(const Attribute& a, std::uint64_t max_bytes) const {
    if (a.size() > max_bytes)
        throw Error(ErrorCode::usage,
                    fmt::format("{}: the stream has {} bytes, more than the {} allowed here", where(a),
                                a.size(), max_bytes));
    std::vector<std::byte> out(static_cast<std::size_t>(a.size()));
    read_stream(a, 0, out);
    return out;
}

IndexBlock Volume::read_index_block(const Attribute& a, std::uint64_t block, std::uint32_t block_bytes,
                                    bool file_names) const {
    if (!core::is_power_of_two(block_bytes) || block_bytes < kMinRecordBytes || block_bytes > kMaxRecordBytes)
        throw Error(ErrorCode::usage,
                    fmt::format("{}: index block size {} is not a power of two in 512..65536", where(a),
                                block_bytes));
    if (block >= a.size() / block_bytes)
        throw Error(ErrorCode::usage, fmt::format("{}: index block {} passes the stream's {} bytes", where(a),
                                                  block, a.size()));
    std::vector<std::byte> raw(block_bytes);
    read_stream(a, block * block_bytes, raw);
    try {
        return decode_index_block(raw, file_names);
    } catch (const FormatError& e) {
        const std::uint64_t rel = block * block_bytes + e.byte_offset().value_or(0);
        const auto at = device_offset(a, rel);
        throw Error(ErrorCode::corrupt,
                    fmt::format("{}: index block {} (volume byte {}): {} at block offset 0x{:X}", where(a),
                                block, at.value_or(0), e.what(), e.byte_offset().value_or(0)),
                    at);
    }
}

MftRecord Volume::read_record(std::uint64_t number) const {
    const std::uint64_t rs = geometry_.mft_record_bytes;
    if (number >= record_count())
        throw Error(ErrorCode::usage, fmt::format("MFT record {} does not exist: $MFT holds {} records",
                                                  number, record_count()));
    std::vector<std::byte> raw(rs);
    read_stream(mft_data_, number * rs, raw);
    return parse_mft_record(raw, number, device_offset(mft_data_, number * rs).value_or(0));
}

std::optional<std::string> scan_records(
    const Volume& v, std::uint64_t first,
    const std::function<void(std::uint64_t, std::span<std::byte>)>& visit) {
    const std::uint64_t rs = v.geometry().mft_record_bytes, count = v.record_count();
    const std::uint64_t per_chunk = std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / rs);
    std::vector<std::byte> chunk;
    for (std::uint64_t at = first; at < count; at += per_chunk) {
        const std::uint64_t n = std::min(per_chunk, count - at);
        chunk.resize(static_cast<std::size_t>(n * rs));
        try {
            v.read_stream(v.mft_data(), at * rs, chunk);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return fmt::format("MFT records {} on: {}", at, e.what());
        }
        for (std::uint64_t i = 0; i < n; ++i)
            visit(at + i,
                  std::span(chunk).subspan(static_cast<std::size_t>(i * rs), static_cast<std::size_t>(rs)));
    }
    return std::nullopt;
}

}  // namespace fsimg::ntfs
