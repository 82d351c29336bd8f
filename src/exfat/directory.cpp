#include "fsimg/exfat/directory.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <tuple>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/entry_set.hpp"

namespace fsimg::exfat {

namespace {

std::uint8_t type_at(std::span<const std::byte> bytes, std::uint32_t index) {
    return static_cast<std::uint8_t>(bytes[std::size_t{index} * kDirEntrySize]);
}

bool is_secondary(std::uint8_t type) {
    return (type & (kEntryInUse | kEntryCategorySecondary)) == (kEntryInUse | kEntryCategorySecondary);
}

EntrySpan entry_at(std::span<const std::byte> bytes, std::uint32_t index) {
    return bytes.subspan(std::size_t{index} * kDirEntrySize).first<kDirEntrySize>();
}

/// Decodes the set whose File entry is at `index` into `r` (a fresh record,
/// filled in place: no copy of its strings); returns false, with an anomaly
/// added, when the set is not recognized. `count` is set to the entries the
/// set claims (at least 1).
bool decode_set(std::span<const std::byte> bytes, std::uint32_t index, std::uint32_t total,
                std::span<const char16_t> upcase, std::vector<SetAnomaly>& anomalies, std::uint32_t& count,
                FileRecord& r) {
    const EntrySpan file = entry_at(bytes, index);
    const std::uint8_t secondaries = core::le8<file_off::SecondaryCount>(file);
    count = 1;
    auto anomaly = [&](SetAnomaly::Kind kind, std::uint32_t at, std::string detail) {
        anomalies.push_back(SetAnomaly{kind, at, type_at(bytes, at), std::move(detail), index, count});
        return false;
    };
    if (secondaries < 2) {
        return anomaly(SetAnomaly::Kind::secondary_count, index,
                       fmt::format("File entry {}: SecondaryCount {}, needs at least 2 (Stream Extension and "
                                   "a File Name entry)",
                                   index, secondaries));
    }
    // Every claimed secondary must be an in-use secondary inside the directory.
    std::uint32_t have = 0;
    while (have < secondaries && index + 1 + have < total && is_secondary(type_at(bytes, index + 1 + have))) {
        ++have;
    }
    count = 1 + have;
    if (have < secondaries) {
        const std::uint32_t at = index + 1 + have;
        if (at >= total || type_at(bytes, at) == kEntryEndOfDirectory) {
            return anomaly(SetAnomaly::Kind::truncated, index,
                           fmt::format("File entry {}: SecondaryCount {} reaches past the end of the "
                                       "directory (only {} secondary entries follow)",
                                       index, secondaries, have));
        }
        return anomaly(
            SetAnomaly::Kind::not_secondary, at,
            fmt::format("File entry {}: entry {} of its set (SecondaryCount {}) has type 0x{:02X}, "
                        "not an in-use secondary",
                        index, at, secondaries, type_at(bytes, at)));
    }
    const EntrySpan stream = entry_at(bytes, index + 1);
    if (core::le8<stream_off::EntryType>(stream) != kEntryStreamExtension) {
        return anomaly(SetAnomaly::Kind::no_stream, index + 1,
                       fmt::format("File entry {}: the first secondary has type 0x{:02X}, not a Stream "
                                   "Extension (0xC0)",
                                   index, type_at(bytes, index + 1)));
    }
    r.index = index;
    r.entries = count;
    r.attributes = core::le16<file_off::FileAttributes>(file);
    r.created = {core::le32<file_off::CreateTimestamp>(file), core::le8<file_off::Create10msIncrement>(file),
                 core::le8<file_off::CreateUtcOffset>(file)};
    r.modified = {core::le32<file_off::LastModifiedTimestamp>(file),
                  core::le8<file_off::LastModified10msIncrement>(file),
                  core::le8<file_off::LastModifiedUtcOffset>(file)};
    r.accessed = {core::le32<file_off::LastAccessedTimestamp>(file), 0,
                  core::le8<file_off::LastAccessedUtcOffset>(file)};
    r.set_checksum = core::le16<file_off::SetChecksum>(file);  // the computed one: parse_directory
    r.secondary_flags = core::le8<stream_off::GeneralSecondaryFlags>(stream);
    r.name_length = core::le8<stream_off::NameLength>(stream);
    r.name_hash = core::le16<stream_off::NameHash>(stream);
    r.valid_data_length = core::le64<stream_off::ValidDataLength>(stream);
    r.first_cluster = core::le32<stream_off::FirstCluster>(stream);
    r.data_length = core::le64<stream_off::DataLength>(stream);

    // File Name entries follow the Stream Extension; other secondaries after them.
    std::uint32_t k = index + 2;
    // Up to 15 units of each File Name entry, into a string sized once.
    r.name16.resize(r.name_length);
    std::size_t units = 0;
    for (; k < index + count && type_at(bytes, k) == kEntryFileName; ++k) {
        static_assert(name_off::FileName + 2 * kNameUnitsPerEntry <= kDirEntrySize);
        const std::byte* from = entry_at(bytes, k).data() + name_off::FileName;
        const std::size_t take = std::min<std::size_t>(kNameUnitsPerEntry, r.name_length - units);
        if constexpr (std::endian::native == std::endian::little) {
            std::memcpy(r.name16.data() + units, from, 2 * take);
        } else {
            for (std::size_t u = 0; u < take; ++u) {
                r.name16[units + u] = static_cast<char16_t>(core::load_le16_at(from + 2 * u));
            }
        }
        units += take;
    }
    // Units past NameLength, up to the first U+0000 (a longer name than NameLength says).
    r.units_held = units;
    if (units == r.name_length) {
        const std::size_t cap = std::size_t{k - index - 2} * kNameUnitsPerEntry;
        for (std::size_t u = units; u < cap; ++u) {
            const std::size_t e = index + 2 + u / kNameUnitsPerEntry;
            if (core::load_le16_at(entry_at(bytes, static_cast<std::uint32_t>(e)).data() +
                                   name_off::FileName + 2 * (u % kNameUnitsPerEntry)) == 0)
                break;
            r.units_held = u + 1;
        }
    }
    if (r.name_length == 0 || units < r.name_length) {
        return anomaly(
            SetAnomaly::Kind::name_length, index + 1,
            fmt::format("File entry {}: NameLength {} but its {} File Name entries hold {} units", index,
                        r.name_length, k - index - 2, (k - index - 2) * kNameUnitsPerEntry));
    }
    for (; k < index + count; ++k) {
        const std::uint8_t type = type_at(bytes, k);
        if (!(type & kEntryImportanceBenign)) {
            return anomaly(
                SetAnomaly::Kind::unknown_critical, k,
                fmt::format("File entry {}: its secondary entry {} has the critical type 0x{:02X}, "
                            "which is not a File Name entry in that position",
                            index, k, type));
        }
        const EntrySpan e = entry_at(bytes, k);
        r.benign.push_back(BenignSecondary{k, type, core::le8<1>(e), core::le32<dir_off::FirstCluster>(e),
                                           core::le64<dir_off::DataLength>(e)});
    }
    r.name = core::utf16_to_utf8_lossy(r.name16);
    if (!upcase.empty()) r.name_hash_computed = name_hash(r.name16, upcase);
    return true;
}

}  // namespace

ParsedDirectory parse_directory(std::span<const std::byte> bytes, std::span<const char16_t> upcase) {
    ParsedDirectory d;
    const auto total = static_cast<std::uint32_t>(
        std::min<std::size_t>(bytes.size() / kDirEntrySize, kMaxDirectoryBytes / kDirEntrySize));
    // One allocation for the records: File entries before the end marker
    // (an upper bound on the sets, and on what the input holds).
    std::size_t file_entries = 0;
    for (std::uint32_t k = 0; k < total; ++k) {
        const std::uint8_t type = type_at(bytes, k);
        if (type == kEntryEndOfDirectory) break;
        if (type == kEntryFile) ++file_entries;
    }
    d.files.reserve(file_entries);
    std::uint32_t i = 0;
    while (i < total) {
        const std::uint8_t type = type_at(bytes, i);
        if (type == kEntryEndOfDirectory) {
            d.end_marker = true;
            break;
        }
        if (!(type & kEntryInUse)) {
            ++i;
            continue;
        }
        if (type & kEntryCategorySecondary) {
            // Report a run of orphan secondaries once.
            std::uint32_t j = i;
            while (j < total && is_secondary(type_at(bytes, j))) ++j;
            d.anomalies.push_back(SetAnomaly{SetAnomaly::Kind::orphan_secondary, i, type,
                                             fmt::format("entries {}..{}: secondary entries outside any "
                                                         "File entry set (first type 0x{:02X})",
                                                         i, j - 1, type),
                                             i, j - i});
            i = j;
            continue;
        }
        if (type == kEntryFile) {
            std::uint32_t count = 1;
            if (!decode_set(bytes, i, total, upcase, d.anomalies, count, d.files.emplace_back())) {
                d.files.pop_back();
            }
            i += count;
            continue;
        }
        const bool known = type == kEntryAllocationBitmap || type == kEntryUpcaseTable ||
                           type == kEntryVolumeLabel || (type & kEntryImportanceBenign);
        // A primary's secondaries belong to it, whatever it is [EXFAT §6.3.1].
        const std::uint8_t secondaries = static_cast<std::uint8_t>(bytes[std::size_t{i} * kDirEntrySize + 1]);
        std::uint32_t j = i + 1;
        if (type != kEntryVolumeLabel && type != kEntryAllocationBitmap && type != kEntryUpcaseTable) {
            while (j < total && j <= i + secondaries && is_secondary(type_at(bytes, j))) ++j;
        }
        if (known) {
            d.system.push_back(SystemEntry{i, type, j - i});
        } else {
            d.anomalies.push_back(SetAnomaly{
                SetAnomaly::Kind::unknown_critical, i, type,
                fmt::format("entry {}: unknown critical primary entry type 0x{:02X}", i, type), i, j - i});
        }
        i = j;
    }
    d.entries_scanned = i;
    // SetChecksum of every recognized set, two sets at a time (entry_set_checksums).
    const auto set_bytes = [&](const FileRecord& r) {
        return bytes.subspan(std::size_t{r.index} * kDirEntrySize, std::size_t{r.entries} * kDirEntrySize);
    };
    std::size_t k = 0;
    for (; k + 1 < d.files.size(); k += 2) {
        std::tie(d.files[k].set_checksum_computed, d.files[k + 1].set_checksum_computed) =
            entry_set_checksums(set_bytes(d.files[k]), set_bytes(d.files[k + 1]));
    }
    if (k < d.files.size()) d.files[k].set_checksum_computed = entry_set_checksum(set_bytes(d.files[k]));
    return d;
}

std::u16string upcase_name(std::u16string_view name, std::span<const char16_t> upcase) {
    std::u16string out(name);
    for (char16_t& c : out) {
        if (c < upcase.size()) c = upcase[c];
    }
    return out;
}

std::uint16_t name_hash(std::u16string_view name, std::span<const char16_t> upcase) {
    std::uint16_t hash = 0;
    auto add = [&](std::uint8_t byte) {
        hash = static_cast<std::uint16_t>(((hash & 1) ? 0x8000 : 0) + (hash >> 1) + byte);
    };
    for (char16_t c : name) {  // up-cased as upcase_name does, without a copy
        if (c < upcase.size()) c = upcase[c];
        add(static_cast<std::uint8_t>(c & 0xFF));
        add(static_cast<std::uint8_t>(c >> 8));
    }
    return hash;
}

std::optional<DecodedTimestamp> decode_timestamp(const EntryTimestamp& t) noexcept {
    const std::uint32_t v = t.timestamp;
    const unsigned dsec = v & 0x1F, minute = (v >> 5) & 0x3F, hour = (v >> 11) & 0x1F;
    const unsigned day = (v >> 16) & 0x1F, month = (v >> 21) & 0x0F, year = 1980 + (v >> 25);
    if (dsec > 29 || minute > 59 || hour > 23 || day == 0 || month == 0 || month > 12 ||
        t.increment_10ms > 199) {
        return std::nullopt;
    }
    DecodedTimestamp d;
    d.local.year = static_cast<int>(year);
    d.local.month = month;
    d.local.day = day;
    d.local.hour = hour;
    d.local.minute = minute;
    d.local.second = dsec * 2 + t.increment_10ms / 100;
    d.local.nanosecond = std::uint32_t(t.increment_10ms % 100) * 10000000u;
    if (t.utc_offset & 0x80) {
        // Bits 0-6: a signed 7-bit count of 15-minute intervals [EXFAT §7.4.10].
        const int q = (t.utc_offset & 0x40) ? int(t.utc_offset & 0x7F) - 128 : int(t.utc_offset & 0x7F);
        d.utc_offset_minutes = q * 15;
    }
    return d;
}

std::optional<std::pair<std::int64_t, std::uint32_t>> timestamp_unix(const EntryTimestamp& t,
                                                                     int assumed_offset_minutes) noexcept {
    const auto d = decode_timestamp(t);
    if (!d) return std::nullopt;
    const int offset = d->utc_offset_minutes.value_or(assumed_offset_minutes);
    return std::pair{core::unix_from_civil(d->local) - std::int64_t{offset} * 60, d->local.nanosecond};
}

std::string timestamp_problem(const EntryTimestamp& t) {
    if (t.timestamp == 0 && t.increment_10ms == 0) return {};
    const std::uint32_t v = t.timestamp;
    std::string out;
    const auto add = [&](const char* what, unsigned n) {
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", what, n);
    };
    const unsigned day = (v >> 16) & 0x1F, month = (v >> 21) & 0x0F;
    if (day == 0) add("day", day);
    if (month == 0 || month > 12) add("month", month);
    if (((v >> 11) & 0x1F) > 23) add("hour", (v >> 11) & 0x1F);
    if (((v >> 5) & 0x3F) > 59) add("minute", (v >> 5) & 0x3F);
    if ((v & 0x1F) > 29) add("DoubleSeconds", v & 0x1F);
    if (t.increment_10ms > 199) add("10ms increment", t.increment_10ms);
    return out;
}

std::string timestamp_text(const EntryTimestamp& t, bool with_increment) {
    if (t.timestamp == 0 && t.increment_10ms == 0) return "-";
    const auto d = decode_timestamp(t);
    if (!d) {
        return with_increment ? fmt::format("invalid (0x{:08X}, 10ms {})", t.timestamp, t.increment_10ms)
                              : fmt::format("invalid (0x{:08X})", t.timestamp);
    }
    const core::CivilTime& c = d->local;
    std::string s = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", c.year, c.month, c.day, c.hour,
                                c.minute, c.second);
    if (with_increment) s += fmt::format(".{:02}", c.nanosecond / 10000000u);
    if (d->utc_offset_minutes) {
        const int m = *d->utc_offset_minutes;
        s += fmt::format(" {}{:02}:{:02}", m < 0 ? '-' : '+', std::abs(m) / 60, std::abs(m) % 60);
    }
    return s;
}

}  // namespace fsimg::exfat
