#include "fsimg/exfat/metadata.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "fsimg/check/summary.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/exfat/deleted.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

void scramble_names(std::span<std::byte> bytes, std::span<const char16_t> upcase,
                    const core::NameScrambler& scramble, std::uint64_t salt) {
    const std::size_t n = bytes.size() / kDirEntrySize;
    const auto entry = [&](std::size_t i) { return bytes.subspan(i * kDirEntrySize, kDirEntrySize); };
    constexpr std::uint8_t kDeletedFileName = kEntryFileName & 0x7F;
    // Deleted sets whose SetChecksum still holds (with InUse set again, as when they were written): a new
    // name, and that checksum (and NameHash) computed again, so that they stay deleted files to read.
    std::vector<bool> done(n, false);
    for (const FileRecord& r : parse_deleted(bytes, upcase)) {
        if (r.entries < 3 || r.index + r.entries > n) continue;
        const std::u16string made = scramble.scramble(r.name16, salt ^ r.index ^ 0xDE1E7ED, 0);
        for (std::size_t k = 0; k < made.size() && k / 15 + 2 < r.entries; ++k)
            core::store_le16(entry(r.index + 2 + k / 15), 2 + 2 * (k % 15), made[k]);
        if (r.name_hash_ok()) core::store_le16(entry(r.index + 1), 4, name_hash(made, upcase));
        const auto set = bytes.subspan(r.index * kDirEntrySize, r.entries * kDirEntrySize);
        std::vector<std::byte> live(set.begin(), set.end());
        for (std::size_t k = 0; k < r.entries; ++k) live[k * kDirEntrySize] |= std::byte{0x80};
        core::store_le16(set, 2, entry_set_checksum(live));
        for (std::size_t k = 0; k < r.entries; ++k) done[r.index + k] = true;
    }
    for (std::size_t i = 0; i < n; ++i) {  // other deleted File Name entries, in place
        const auto e = entry(i);
        if (done[i] || std::to_integer<std::uint8_t>(e[0]) != kDeletedFileName) continue;
        std::u16string units;
        for (std::size_t k = 0; k < 15 && core::load_le16(e, 2 + 2 * k) != 0; ++k)
            units += static_cast<char16_t>(core::load_le16(e, 2 + 2 * k));
        const std::u16string made = scramble.scramble(units, salt ^ (i << 20), 0);
        for (std::size_t k = 0; k < made.size(); ++k) core::store_le16(e, 2 + 2 * k, made[k]);
    }
    const ParsedDirectory d = parse_directory(bytes, upcase);
    std::set<std::u16string> taken;
    for (const FileRecord& r : d.files) {
        if (r.entries < 3 || r.index + r.entries > n) continue;
        const bool sound = r.checksum_ok(), hash_ok = r.name_hash_ok();
        for (unsigned attempt = 0; attempt < 1000; ++attempt) {
            const std::u16string made = scramble.scramble(r.name16, salt ^ r.index, attempt);
            const std::u16string key = upcase_name(made, upcase);
            if (taken.count(key)) continue;
            taken.insert(key);
            for (std::size_t k = 0; k < made.size() && k / 15 + 2 < r.entries; ++k)
                core::store_le16(entry(r.index + 2 + k / 15), 2 + 2 * (k % 15), made[k]);
            const auto set = bytes.subspan(r.index * kDirEntrySize, r.entries * kDirEntrySize);
            if (hash_ok) core::store_le16(entry(r.index + 1), 4, name_hash(made, upcase));
            if (sound) core::store_le16(set, 2, entry_set_checksum(set));
            break;
        }
    }
}

void metadata_ranges(const Volume& v, std::vector<fs::ByteRange>& ranges, std::vector<std::string>& problems,
                     const core::NameScrambler* scramble, std::vector<fs::Patch>* patches) {
    const std::uint64_t size = v.device().size(), cb = v.cluster_bytes(), bps = v.bytes_per_sector();
    const BootSector& bs = v.boot_sector();
    fs::add_range(ranges, 0, 24 * bps, size);  // main and backup boot regions [EXFAT §3.1]
    fs::add_range(ranges, std::uint64_t(bs.fat_offset) * bps,
                  std::uint64_t(bs.fat_length) * bps * std::max<std::uint8_t>(bs.number_of_fats, 1), size);
    const auto add_runs = [&](const std::vector<ClusterRun>& runs) {
        for (const ClusterRun& r : runs)
            fs::add_range(ranges, v.cluster_offset(r.first), std::uint64_t(r.count) * cb, size);
    };
    // The system objects' clusters: contiguous or chained, as allocation() reads them.
    const auto system = [&](std::string_view what, std::uint32_t first, std::uint64_t length) {
        try {
            add_runs(v.allocation(first, length, false, what));
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            try {
                add_runs(v.allocation(first, length, true, what));  // some writers leave no FAT chain
            } catch (const Error& e2) {
                if (e2.code() == ErrorCode::io) throw;
                problems.push_back(fmt::format("{}: {}", what, e.what()));
            }
        }
    };
    if (const auto b = v.boot().bitmap) system("the allocation bitmap", b->first_cluster, b->data_length);
    if (const auto u = v.boot().upcase) system("the up-case table", u->first_cluster, u->data_length);
    core::VisitedClusters seen(std::uint64_t{v.max_cluster()} + 1);
    std::vector<std::pair<FileRecord, unsigned>> todo{{v.root_record(), 0}};
    seen.visit(v.root_cluster());
    while (!todo.empty()) {
        const auto [dir, depth] = std::move(todo.back());
        todo.pop_back();
        try {
            // 256 MiB at most for the root, as read_directory_bytes reads it.
            const std::vector<ClusterRun> runs =
                dir.is_root ? v.follow_chain(v.root_cluster(), (std::uint64_t{256} << 20) / cb).runs
                            : v.allocation(dir.first_cluster, dir.data_length, dir.no_fat_chain(), dir.name);
            add_runs(runs);
            if (scramble && patches) {
                std::vector<std::byte> bytes = v.read_directory_bytes(dir);
                scramble_names(bytes, v.upcase_table(), *scramble,
                               dir.is_root ? v.root_cluster() : dir.first_cluster);
                std::uint64_t at = 0;
                for (const ClusterRun& r : runs) {
                    if (at >= bytes.size()) break;
                    const std::uint64_t k =
                        std::min<std::uint64_t>(std::uint64_t(r.count) * cb, bytes.size() - at);
                    patches->push_back(
                        {v.cluster_offset(r.first),
                         std::vector<std::byte>(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                                bytes.begin() + static_cast<std::ptrdiff_t>(at + k))});
                    at += k;
                }
            }
            const ParsedDirectory d = v.read_directory(dir);
            for (const FileRecord& r : d.files) {
                if (!r.is_directory() || !v.is_cluster(r.first_cluster) || seen.visit(r.first_cluster))
                    continue;
                if (depth + 1 >= check::kMaxDirectoryDepth) {
                    problems.push_back(fmt::format("directory \"{}\" (cluster {}) lies deeper than {} levels",
                                                   r.name, r.first_cluster, check::kMaxDirectoryDepth));
                    continue;
                }
                todo.push_back({r, depth + 1});
            }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            problems.push_back(fmt::format("directory \"{}\": {}", dir.is_root ? "/" : dir.name, e.what()));
        }
    }
}

}  // namespace fsimg::exfat
