#include "fsimg/fat/metadata.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "fsimg/check/summary.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/structs.hpp"

namespace fsimg::fat {

namespace {

/// The byte offsets of the 13 UTF-16 units of a long-name entry [FATGEN].
constexpr std::array<std::size_t, 13> kLfnUnits{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30};

std::u16string fold(std::u16string s) {
    for (char16_t& u : s)
        if (u >= u'a' && u <= u'z') u = static_cast<char16_t>(u - 32);
    return s;
}

/// "NAME.EXT" of 11 DIR_Name bytes (as units, bytes taken as they are).
std::u16string short_form(const std::array<std::uint8_t, 11>& n) {
    std::u16string s;
    for (std::size_t i = 0; i < 8 && n[i] != ' '; ++i) s += static_cast<char16_t>(n[i]);
    if (n[8] != ' ') s += u'.';
    for (std::size_t i = 8; i < 11 && n[i] != ' '; ++i) s += static_cast<char16_t>(n[i]);
    return s;
}

/// The directory from `first` (0: the FAT12/16 root region) with its names scrambled, as patches.
void scramble_directory(const Volume& v, std::uint32_t first, const core::NameScrambler& scramble,
                        std::vector<fs::Patch>& patches);

}  // namespace

void scramble_names(std::span<std::byte> bytes, const core::NameScrambler& scramble, std::uint64_t salt) {
    const std::size_t n = bytes.size() / kDirEntrySize;
    const auto entry = [&](std::size_t i) { return bytes.subspan(i * kDirEntrySize, kDirEntrySize); };
    // The records as stored: their long-name entries are written again below, whole.
    const ParsedDirectory d = parse_directory(bytes);
    std::vector<bool> owned(n, false);
    for (const auto* list : {&d.records, &d.after_end})
        for (const DirRecord& r : *list)
            for (std::uint32_t k = r.first_index; k < r.index && k < n; ++k) owned[k] = true;
    // Every other long-name entry's units and every deleted short name, in place.
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = entry(i);
        const auto b0 = std::to_integer<std::uint8_t>(e[0]), attr = std::to_integer<std::uint8_t>(e[11]);
        if (b0 == 0x00 || owned[i]) continue;
        if ((attr & 0x3F) == kAttrLongName) {
            std::u16string live;  // the units before the terminator
            for (const std::size_t at : kLfnUnits) {
                const auto u = static_cast<char16_t>(core::load_le16(e, at));
                if (u == 0 || u == 0xFFFF) break;
                live += u;
            }
            const std::u16string made = scramble.scramble(live, salt ^ (i << 20), 0);
            for (std::size_t k = 0; k < made.size(); ++k) core::store_le16(e, kLfnUnits[k], made[k]);
        } else if (b0 == kDirEntryDeleted) {
            std::u16string base;  // DIR_Name[1..7]; the extension kept
            for (std::size_t k = 1; k < 8; ++k)
                base += static_cast<char16_t>(std::to_integer<std::uint8_t>(e[k]));
            const std::u16string made = scramble.scramble(base, salt ^ (i << 20), 0, true);
            for (std::size_t k = 0; k < made.size(); ++k) e[1 + k] = static_cast<std::byte>(made[k]);
        }
    }
    // Each file and directory: a new short name, and a new long name written again with its checksum.
    std::set<std::u16string> taken;
    for (const auto* list : {&d.records, &d.after_end})
        for (const DirRecord& r : *list) {
            if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
            const auto e = entry(r.index);
            std::array<std::uint8_t, 11> name{};
            for (std::size_t k = 0; k < 11; ++k) name[k] = std::to_integer<std::uint8_t>(e[k]);
            std::u16string base;
            for (std::size_t k = 0; k < 8 && name[k] != ' '; ++k) base += static_cast<char16_t>(name[k]);
            for (unsigned attempt = 0; attempt < 1000; ++attempt) {
                std::array<std::uint8_t, 11> made = name;
                const std::u16string b = scramble.scramble(base, salt ^ r.index, attempt, true);
                for (std::size_t k = 0; k < b.size(); ++k) made[k] = static_cast<std::uint8_t>(b[k]);
                const std::u16string s = fold(short_form(made));
                std::u16string l;
                if (r.has_long_name) l = scramble.scramble(r.long_name, salt ^ r.index ^ 0x5A5A, attempt);
                if (taken.count(s) || (r.has_long_name && taken.count(fold(l)))) continue;
                taken.insert(s);
                for (std::size_t k = 0; k < 11; ++k) e[k] = static_cast<std::byte>(made[k]);
                if (r.has_long_name) {
                    taken.insert(fold(l));
                    encode_lfn_entries(l, lfn_checksum(made),
                                       bytes.subspan(r.first_index * kDirEntrySize,
                                                     (r.index - r.first_index) * kDirEntrySize));
                }
                break;
            }
        }
}

void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges, std::vector<std::string>& problems,
                     const core::NameScrambler* scramble, std::vector<fs::Patch>* patches) {
    const std::uint64_t size = v.device().size(), cb = v.cluster_bytes();
    fs::add_range(ranges, 0, v.layout().first_data_sector * v.layout().bytes_per_sector, size);
    // A directory holds at most kMaxDirEntries entries: its chain is read that far.
    const std::uint64_t cap = core::div_ceil(std::uint64_t{kMaxDirEntries} * kDirEntrySize, cb);
    core::VisitedClusters seen(v.readable_entries());
    std::vector<std::pair<DirRecord, unsigned>> todo{{v.root_record(), 0}};
    while (!todo.empty()) {
        const auto [dir, depth] = std::move(todo.back());
        todo.pop_back();
        const std::uint32_t first = v.first_cluster(dir);
        const std::string name = dir.is_root ? std::string("/") : dir.name;
        try {
            if (first != 0) {
                for (const ClusterRun& r : v.follow_chain(first, cap).runs)
                    fs::add_range(ranges, v.cluster_offset(r.first), std::uint64_t(r.count) * cb, size);
            }
            const ParsedDirectory d = v.read_directory(first);
            if (scramble && patches) scramble_directory(v, first, *scramble, *patches);
            for (const auto* list : {&d.records, &d.after_end})
                for (const DirRecord& r : *list) {
                    if (r.kind != RecordKind::directory) continue;
                    const std::uint32_t c = v.first_cluster(r);
                    if (!v.is_cluster(c) || seen.visit(c)) continue;
                    if (depth + 1 >= check::kMaxDirectoryDepth) {
                        problems.push_back(
                            fmt::format("directory \"{}\" (cluster {}) lies deeper than {} levels", r.name, c,
                                        check::kMaxDirectoryDepth));
                        continue;
                    }
                    todo.push_back({r, depth + 1});
                }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            problems.push_back(fmt::format("directory \"{}\" (cluster {}): {}", name, first, e.what()));
        }
    }
}

namespace {

void scramble_directory(const Volume& v, std::uint32_t first, const core::NameScrambler& scramble,
                        std::vector<fs::Patch>& patches) {
    std::vector<std::byte> bytes = v.read_directory_bytes(first);
    scramble_names(bytes, scramble, first);
    const Layout& l = v.layout();
    if (first == 0 && v.type() != FatType::fat32) {
        patches.push_back({l.first_root_dir_sector * l.bytes_per_sector, std::move(bytes)});
        return;
    }
    // The bytes lie in the chain's clusters in order.
    const std::uint64_t cb = v.cluster_bytes();
    std::uint64_t at = 0;
    for (const ClusterRun& r :
         v.follow_chain(first == 0 ? v.root_cluster() : first, core::div_ceil(bytes.size(), cb)).runs) {
        const std::uint64_t n = std::min<std::uint64_t>(std::uint64_t(r.count) * cb, bytes.size() - at);
        patches.push_back({v.cluster_offset(r.first),
                           std::vector<std::byte>(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                                  bytes.begin() + static_cast<std::ptrdiff_t>(at + n))});
        at += n;
        if (at >= bytes.size()) break;
    }
}

}  // namespace

}  // namespace fsimg::fat
