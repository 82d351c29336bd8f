#include "fsimg/exfat/entry_set.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

namespace {

/// One step of the 16-bit rotate-right-and-add of [EXFAT §6.3.3, §7.6.4].
constexpr std::uint16_t add16(std::uint16_t sum, std::uint8_t byte) noexcept {
    return static_cast<std::uint16_t>(((sum & 1) ? 0x8000 : 0) + (sum >> 1) + byte);
}

}  // namespace

EntryTimestamp entry_timestamp(std::int64_t t, std::uint32_t ns, std::int32_t offset_seconds) noexcept {
    constexpr std::int64_t kMin = 315532800;   // 1980-01-01 00:00:00
    constexpr std::int64_t kMax = 4354819198;  // 2107-12-31 23:59:58
    const std::int32_t quarters = std::clamp(offset_seconds / 900, -64, 63);
    std::int64_t local = t + offset_seconds;
    if (local < kMin || local > kMax) {
        local = std::clamp(local, kMin, kMax);
        ns = 0;
    }
    const core::CivilTime c = core::civil_from_unix(local);
    EntryTimestamp e;
    const std::uint32_t date = (static_cast<std::uint32_t>(c.year - 1980) << 9) | (c.month << 5) | c.day;
    const std::uint32_t time = (c.hour << 11) | (c.minute << 5) | (c.second / 2);
    e.timestamp = (date << 16) | time;
    e.increment_10ms =
        static_cast<std::uint8_t>((c.second % 2) * 100 + std::min<std::uint32_t>(ns, 999999999) / 10000000);
    e.utc_offset = static_cast<std::uint8_t>(0x80 | (static_cast<std::uint32_t>(quarters) & 0x7F));
    return e;
}

namespace {

/// add16 over bytes [from, end) of `bytes`, continuing `sum`.
std::uint16_t add_bytes(std::uint16_t sum, std::span<const std::byte> bytes, std::size_t from) noexcept {
    for (std::size_t i = from; i < bytes.size(); ++i) sum = add16(sum, static_cast<std::uint8_t>(bytes[i]));
    return sum;
}

/// The checksum of a set's first two bytes: the SetChecksum field itself
/// (bytes 2-3) is skipped, everything from byte 4 follows [EXFAT 6.3.3].
std::uint16_t head_sum(std::span<const std::byte> set) noexcept {
    static_assert(file_off::SetChecksum == 2);
    return add_bytes(0, set.first(std::min<std::size_t>(set.size(), 2)), 0);
}

}  // namespace

std::uint16_t entry_set_checksum(std::span<const std::byte> set) noexcept {
    return add_bytes(head_sum(set), set, 4);
}

std::pair<std::uint16_t, std::uint16_t> entry_set_checksums(std::span<const std::byte> a,
                                                            std::span<const std::byte> b) noexcept {
    std::uint16_t sa = head_sum(a), sb = head_sum(b);
    const std::size_t both = std::min(a.size(), b.size());
    std::size_t i = 4;
    for (; i < both; ++i) {  // the two chains side by side
        sa = add16(sa, static_cast<std::uint8_t>(a[i]));
        sb = add16(sb, static_cast<std::uint8_t>(b[i]));
    }
    return {add_bytes(sa, a, i), add_bytes(sb, b, i)};
}

std::uint16_t name_hash(std::u16string_view name) {
    std::uint16_t hash = 0;
    for (const char16_t c : upcase_key(name)) {
        hash = add16(hash, static_cast<std::uint8_t>(c & 0xFF));
        hash = add16(hash, static_cast<std::uint8_t>(c >> 8));
    }
    return hash;
}

std::vector<std::byte> encode_file_entry_set(const FileEntrySetInfo& in) {
    if (in.name.empty() || in.name.size() > kMaxNameUnits) {
        throw Error(ErrorCode::usage, fmt::format("an exFAT name has 1..{} UTF-16 units, not {}",
                                                  kMaxNameUnits, in.name.size()));
    }
    const std::uint32_t entries = entry_set_entries(in.name.size());
    std::vector<std::byte> out(std::size_t{entries} * kDirEntrySize);
    const std::span<std::byte> all(out);

    const auto file = all.first<kDirEntrySize>();
    core::store8<file_off::EntryType>(file, kEntryFile);
    core::store8<file_off::SecondaryCount>(file, static_cast<std::uint8_t>(entries - 1));
    core::store16<file_off::FileAttributes>(file, in.attributes);
    core::store32<file_off::CreateTimestamp>(file, in.created.timestamp);
    core::store32<file_off::LastModifiedTimestamp>(file, in.modified.timestamp);
    core::store32<file_off::LastAccessedTimestamp>(file, in.accessed.timestamp);
    core::store8<file_off::Create10msIncrement>(file, in.created.increment_10ms);
    core::store8<file_off::LastModified10msIncrement>(file, in.modified.increment_10ms);
    core::store8<file_off::CreateUtcOffset>(file, in.created.utc_offset);
    core::store8<file_off::LastModifiedUtcOffset>(file, in.modified.utc_offset);
    core::store8<file_off::LastAccessedUtcOffset>(file, in.accessed.utc_offset);

    const auto stream = all.subspan(kDirEntrySize).first<kDirEntrySize>();
    core::store8<stream_off::EntryType>(stream, kEntryStreamExtension);
    core::store8<stream_off::GeneralSecondaryFlags>(stream, in.secondary_flags);
    core::store8<stream_off::NameLength>(stream, static_cast<std::uint8_t>(in.name.size()));
    core::store16<stream_off::NameHash>(
        stream, in.upcase.empty() ? name_hash(in.name) : name_hash(in.name, in.upcase));
    core::store64<stream_off::ValidDataLength>(stream, in.valid_data_length);
    core::store32<stream_off::FirstCluster>(stream, in.first_cluster);
    core::store64<stream_off::DataLength>(stream, in.data_length);

    for (std::uint32_t k = 0; k + 2 < entries; ++k) {
        const auto e = all.subspan((2 + std::size_t{k}) * kDirEntrySize, kDirEntrySize);
        e[name_off::EntryType] = std::byte{kEntryFileName};
        const std::size_t first = std::size_t{k} * kNameUnitsPerEntry;
        const std::size_t n = std::min<std::size_t>(kNameUnitsPerEntry, in.name.size() - first);
        for (std::size_t u = 0; u < n; ++u)
            core::store_le16(e, name_off::FileName + 2 * u, in.name[first + u]);
    }
    core::store16<file_off::SetChecksum>(file, entry_set_checksum(all));
    return out;
}

}  // namespace fsimg::exfat
