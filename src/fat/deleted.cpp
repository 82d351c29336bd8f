#include "fsimg/fat/deleted.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/structs.hpp"

namespace fsimg::fat {

namespace {

/// A byte a short name may start with [FATGEN "File and Directory Name
/// Requirements"]: not a control byte, not a lower-case letter, none of
/// " * + , . / : ; < = > ? [ \ ] |, and not the deletion mark.
bool short_name_start(std::uint8_t c) noexcept {
    constexpr std::string_view kBad = "\"*+,./:;<=>?[\\]| ";
    return c > 0x20 && c != kDirEntryDeleted && !(c >= 'a' && c <= 'z') && kBad.find(char(c)) == kBad.npos;
}

/// The DIR_Name[0] whose LDIR_Chksum over the short name is `sum`: the
/// checksum starts from byte 0 and every later step is a bijection of the
/// running sum (rotate right by one, add the next byte), so exactly one byte
/// gives each sum [FATGEN "Checksum Generation"].
std::uint8_t first_byte_for(std::array<std::uint8_t, 11> name, std::uint8_t sum) noexcept {
    for (unsigned c = 0; c < 256; ++c) {
        name[0] = static_cast<std::uint8_t>(c);
        if (lfn_checksum(name) == sum) return static_cast<std::uint8_t>(c);
    }
    return 0;  // not reached: one byte always matches
}

/// True when a cluster reads as the continuation of a directory: it does not
/// open with "." (the first cluster of another directory), and every entry
/// before the end marker (first byte 0x00) is a deleted entry, a long-name
/// entry (attribute 0x0F, ordinal 1..20, with or without the last-entry
/// flag 0x40) or a short entry whose name bytes are printable and whose
/// attribute uses no bit above 0x3F [FATGEN "FAT Directory Structure",
/// "FAT Long Directory Entries"]. File data almost never does.
bool looks_like_directory(std::span<const std::byte> bytes) noexcept {
    const std::size_t n = bytes.size() / kDirEntrySize;
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = bytes.subspan(i * kDirEntrySize, kDirEntrySize);
        const auto first = std::to_integer<std::uint8_t>(e[0]);
        if (first == 0x00) return true;
        if (i == 0 && first == '.') return false;
        if (first == kDirEntryDeleted) continue;
        const auto attr = std::to_integer<std::uint8_t>(e[dir_off::Attr]);
        if ((attr & 0x3F) == kAttrLongName) {
            const unsigned ordinal = first & 0x3F;
            if ((first & ~0x7Fu) != 0 || ordinal == 0 || ordinal > kMaxLfnEntries) return false;
            continue;
        }
        if (attr & 0xC0) return false;
        for (std::size_t k = 0; k < 11; ++k)
            if (std::to_integer<std::uint8_t>(e[k]) < 0x20 || std::to_integer<std::uint8_t>(e[k]) == 0x7F)
                return false;
    }
    return true;
}

}  // namespace

std::string_view to_string(DeletedState s) noexcept {
    switch (s) {
        case DeletedState::empty:
            return "empty";
        case DeletedState::recoverable:
            return "recoverable";
        case DeletedState::reused:
            return "reused";
    }
    return "?";
}

bool readable(DeletedState s, std::string_view what) {
    if (s == DeletedState::reused)
        throw Error(ErrorCode::refused,
                    fmt::format("the clusters of deleted {} are in use again, or lie outside the volume: its "
                                "data is gone",
                                what));
    return s == DeletedState::recoverable;
}

std::vector<DeletedRecord> parse_deleted(std::span<const std::byte> bytes) {
    std::vector<DeletedRecord> out;
    const std::size_t n = std::min<std::size_t>(bytes.size() / kDirEntrySize, kMaxDirEntries);
    auto entry = [&](std::size_t i) { return bytes.subspan(i * kDirEntrySize).first<kDirEntrySize>(); };
    auto is_deleted_lfn = [&](std::size_t i) {
        const auto e = entry(i);
        return std::to_integer<std::uint8_t>(e[0]) == kDirEntryDeleted &&
               (std::to_integer<std::uint8_t>(e[dir_off::Attr]) & 0x3F) == kAttrLongName;
    };
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = entry(i);
        const auto first = std::to_integer<std::uint8_t>(e[0]);
        if (first == 0x00) break;
        if (first != kDirEntryDeleted) continue;
        const auto attr = std::to_integer<std::uint8_t>(e[dir_off::Attr]);
        if ((attr & 0x3F) == kAttrLongName || (attr & kAttrVolumeId)) continue;
        DeletedRecord r;
        r.index = static_cast<std::uint32_t>(i);
        r.entry = decode_dir_entry(e);
        std::array<std::uint8_t, 11> rest = r.entry.name;
        rest[0] = 'X';
        r.short_name = "?" + short_name_display(rest).substr(1);
        // The deleted long-name entries right before it, nearest first (ordinal 1, 2, ...), one checksum.
        std::u16string units;
        std::size_t parts = 0;
        std::uint8_t sum = 0;
        bool whole = false;
        for (std::size_t j = i; j > 0 && parts < kMaxLfnEntries && is_deleted_lfn(j - 1); --j, ++parts) {
            const auto l = entry(j - 1);
            const auto s = std::to_integer<std::uint8_t>(l[lfn_off::Chksum]);
            if (parts != 0 && s != sum) break;
            sum = s;
            const auto u = lfn_units(l);
            const auto end = std::find(u.begin(), u.end(), u'\0');
            units.append(u.begin(), end);
            if (end != u.end()) {  // the terminator: the name is whole
                whole = true;
                ++parts;
                break;
            }
            // A name that fills its entries exactly has no terminator: whole when the entry before is not
            // another part of it.
            if (j - 1 == 0 || !is_deleted_lfn(j - 2) ||
                std::to_integer<std::uint8_t>(entry(j - 2)[lfn_off::Chksum]) != sum) {
                whole = true;
                ++parts;
                break;
            }
        }
        if (whole && !units.empty()) {
            const std::uint8_t c = first_byte_for(r.entry.name, sum);
            if (short_name_start(c)) {
                std::array<std::uint8_t, 11> proven = r.entry.name;
                proven[0] = c;
                r.short_name = short_name_display(proven);
                r.name = core::utf16_to_utf8_lossy(units);
                r.has_long_name = true;
            }
        }
        if (!r.has_long_name) r.name = r.short_name;
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<DeletedRecord> deleted_directory_entries(const Volume& v, const DeletedRecord& dir) {
    const std::uint32_t c =
        v.type() == FatType::fat32 ? dir.entry.first_cluster : (dir.entry.first_cluster & 0xFFFF);
    if (!dir.is_directory() || deleted_state(v, dir) != DeletedState::recoverable) return {};
    std::vector<std::byte> bytes(v.cluster_bytes());
    try {
        v.read_cluster(c, bytes);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return {};
    }
    const DirEntry dot = decode_dir_entry(std::span<const std::byte>(bytes).first<kDirEntrySize>());
    const std::uint32_t named = v.type() == FatType::fat32 ? dot.first_cluster : (dot.first_cluster & 0xFFFF);
    if (dot.name != std::array<std::uint8_t, 11>{'.', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '} ||
        !(dot.attr & kAttrDirectory) || named != c)
        return {};
    // Its chain is gone: the clusters after the first are taken as undelete
    // tools take a file's, consecutive from it, while the bytes so far hold
    // no end marker and the next cluster is free and reads as directory
    // entries (at most kMaxDirEntries entries in all).
    const auto ended = [&] {
        for (std::size_t i = bytes.size() - v.cluster_bytes(); i < bytes.size(); i += kDirEntrySize)
            if (bytes[i] == std::byte{0}) return true;
        return false;
    };
    std::vector<std::byte> next(v.cluster_bytes());
    for (std::uint64_t k = std::uint64_t{c} + 1;
         !ended() && bytes.size() / kDirEntrySize < kMaxDirEntries && v.is_cluster(k) &&
         v.fat_entry(static_cast<std::uint32_t>(k)) == 0;
         ++k) {
        try {
            v.read_cluster(static_cast<std::uint32_t>(k), next);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            break;
        }
        if (!looks_like_directory(next)) break;
        bytes.insert(bytes.end(), next.begin(), next.end());
    }
    std::vector<DeletedRecord> out = parse_deleted(bytes);
    for (DirRecord& r : parse_directory(bytes).records) {
        if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
        DeletedRecord d;
        d.index = r.index;
        d.entry = r.entry;
        d.short_name = r.short_name_raw;
        d.name = r.name;
        d.has_long_name = r.has_long_name;
        out.push_back(std::move(d));
    }
    std::sort(out.begin(), out.end(),
              [](const DeletedRecord& a, const DeletedRecord& b) { return a.index < b.index; });
    return out;
}

DeletedState deleted_state(const Volume& v, const DeletedRecord& r) {
    const std::uint64_t cb = v.cluster_bytes();
    const std::uint64_t need = r.is_directory() ? 1 : (std::uint64_t(r.entry.file_size) + cb - 1) / cb;
    const std::uint32_t first = r.entry.first_cluster;
    if (need == 0 || first == 0) return DeletedState::empty;
    if (!v.is_cluster(first) || !v.is_cluster(std::uint64_t(first) + need - 1)) return DeletedState::reused;
    for (std::uint64_t c = first; c < first + need; ++c)
        if (v.fat_entry(static_cast<std::uint32_t>(c)) != 0) return DeletedState::reused;
    return DeletedState::recoverable;
}

void read_deleted(const Volume& v, const DeletedRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink) {
    if (!readable(deleted_state(v, r), fmt::format("\"{}\" from cluster {}", r.name, r.entry.first_cluster)))
        return;
    std::uint64_t left = r.is_directory() ? v.cluster_bytes() : r.entry.file_size;
    std::uint64_t at = v.cluster_offset(r.entry.first_cluster);
    std::vector<std::byte> buf(std::min<std::uint64_t>(left, 1 << 20));
    while (left > 0) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
        v.device().read_at(at, std::span(buf).first(n));
        sink(std::span<const std::byte>(buf).first(n));
        at += n;
        left -= n;
    }
}

}  // namespace fsimg::fat
