#include "fsimg/ntfs/metadata.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/directory.hpp"

namespace fsimg::ntfs {

namespace {

/// $BadClus [FLATCAP files/badclus].
constexpr std::uint64_t kBadClusRecord = 8;

}  // namespace

void metadata_ranges(const Volume& v, bool logfile, std::vector<fs::ByteRange>& ranges,
                     std::vector<fs::Patch>& patches, std::vector<std::string>& problems) {
    const std::uint64_t size = v.device().size(), C = v.geometry().cluster_bytes;
    const std::uint64_t bps = v.geometry().bytes_per_sector;
    fs::add_range(ranges, 0, bps, size);
    fs::add_range(ranges, v.geometry().volume_bytes(), bps, size);  // the backup boot sector
    const auto add_runs = [&](const Attribute& a) {
        for (const MappedRun& r : a.runs)
            if (r.lcn) fs::add_range(ranges, static_cast<std::uint64_t>(*r.lcn) * C, r.length * C, size);
    };
    add_runs(v.mft_data());
    const std::uint64_t rs = v.geometry().mft_record_bytes;
    std::vector<std::byte> rec_bytes;
    const auto stopped = scan_records(v, 0, [&](std::uint64_t number, std::span<std::byte> raw) {
        if (std::memcmp(raw.data(), "FILE", 4) != 0) return;
        rec_bytes.assign(raw.begin(), raw.end());
        MftRecord rec;
        try {
            rec = parse_mft_record(rec_bytes, number);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            return;  // copied as it is with $MFT; nothing it names is followed
        }
        if (!rec.in_use()) return;
        const std::uint64_t owner =
            rec.header.base_record != 0 ? (rec.header.base_record & 0xFFFFFFFFFFFFull) : number;
        const bool system = owner < kFirstNonSystemRecord;
        bool wipe = false;
        for (const Attribute& a : rec.attributes) {
            const bool data = a.kind() == AttrType::data;
            if (a.non_resident) {
                if (data && (!system || (owner == kBadClusRecord && a.name == u"$Bad") ||
                             (owner == kLogFileRecord && !logfile)))
                    continue;
                add_runs(a);
            } else if (data && !system && !a.value.empty()) {
                // The file's content, resident: zeroed (rec_bytes holds the record, fixups removed).
                const std::size_t at = a.offset + a.value_offset;
                if (at + a.value.size() <= rec_bytes.size()) {
                    std::fill_n(rec_bytes.begin() + static_cast<std::ptrdiff_t>(at), a.value.size(),
                                std::byte{0});
                    wipe = true;
                }
            }
        }
        if (!wipe) return;
        try {
            apply_fixups(rec_bytes, rec.header.usa_offset, rec.update_sequence_number);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            problems.push_back(
                fmt::format("MFT record {}: its resident data could not be zeroed: {}", number, e.what()));
            return;
        }
        for (std::uint64_t k = 0; k < rs; k += 512) {
            const auto at = v.device_offset(v.mft_data(), number * rs + k);
            if (!at) continue;
            const auto piece = std::span(rec_bytes).subspan(static_cast<std::size_t>(k), 512);
            patches.push_back({*at, std::vector<std::byte>(piece.begin(), piece.end())});
        }
    });
    if (stopped) problems.push_back(*stopped);
    // $MFTMirr (record 1's $DATA) was added with the records' attributes.
}

}  // namespace fsimg::ntfs
