#include "fsimg/exfat/deleted.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::uint8_t kInUse = 0x80;

}  // namespace

std::vector<FileRecord> parse_deleted(std::span<const std::byte> bytes, std::span<const char16_t> upcase) {
    std::vector<FileRecord> out;
    const std::size_t n = bytes.size() / kDirEntrySize;
    auto type = [&](std::size_t i) { return std::to_integer<std::uint8_t>(bytes[i * kDirEntrySize]); };
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t t = type(i);
        if (t == kEntryEndOfDirectory) break;
        if (t != (kEntryFile & ~kInUse)) continue;
        const std::size_t secondaries = std::to_integer<std::uint8_t>(bytes[i * kDirEntrySize + 1]);
        if (secondaries < 2 || i + secondaries >= n) continue;
        bool deleted_set = true;
        for (std::size_t k = 1; k <= secondaries && deleted_set; ++k) {
            const std::uint8_t s = type(i + k);
            deleted_set = s != kEntryEndOfDirectory && (s & kInUse) == 0 && (s & 0x40) != 0;  // secondaries
        }
        if (!deleted_set) continue;
        // The set with InUse set again, then an end-of-directory entry: decoded as a live set.
        std::vector<std::byte> set(
            bytes.begin() + static_cast<std::ptrdiff_t>(i * kDirEntrySize),
            bytes.begin() + static_cast<std::ptrdiff_t>((i + secondaries + 1) * kDirEntrySize));
        for (std::size_t k = 0; k <= secondaries; ++k) set[k * kDirEntrySize] |= std::byte{kInUse};
        set.resize(set.size() + kDirEntrySize);
        ParsedDirectory d = parse_directory(set, upcase);
        if (d.files.size() != 1 || !d.files.front().checksum_ok()) continue;
        FileRecord r = std::move(d.files.front());
        r.index = static_cast<std::uint32_t>(i);
        out.push_back(std::move(r));
        i += secondaries;
    }
    return out;
}

namespace {

/// The clusters a deleted file's data would take: its FAT chain while every
/// link is one (the Linux driver leaves it), else, as for NoFatChain and as
/// FAT undelete tools do, the clusters in a row from FirstCluster (a writer
/// that zeroes the freed FAT entries, as fsimg's does, leaves no chain). Empty
/// when a cluster is outside the heap.
std::vector<std::uint32_t> deleted_clusters(const Volume& v, const FileRecord& r, std::uint64_t need) {
    std::vector<std::uint32_t> out;
    if (need > v.cluster_count() || !v.is_cluster(r.first_cluster)) return out;
    if (!r.no_fat_chain()) {
        std::uint32_t c = r.first_cluster;
        for (std::uint64_t k = 0; k < need && v.is_cluster(c); ++k) {
            out.push_back(c);
            if (k + 1 < need) c = v.fat_entry(c);
        }
        if (out.size() == need) return out;
        out.clear();
    }
    if (need - 1 > v.max_cluster() - r.first_cluster) return out;
    for (std::uint64_t k = 0; k < need; ++k) out.push_back(static_cast<std::uint32_t>(r.first_cluster + k));
    return out;
}

}  // namespace

fat::DeletedState deleted_state(const Volume& v, const FileRecord& r) {
    const std::uint64_t need = (r.data_length + v.cluster_bytes() - 1) / v.cluster_bytes();
    if (need == 0 || r.first_cluster == 0) return fat::DeletedState::empty;
    const auto clusters = deleted_clusters(v, r, need);
    if (clusters.empty()) return fat::DeletedState::reused;
    for (const std::uint32_t c : clusters)
        if (v.cluster_in_use(c)) return fat::DeletedState::reused;
    return fat::DeletedState::recoverable;
}

void read_deleted(const Volume& v, const FileRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink) {
    if (!fat::readable(deleted_state(v, r), fmt::format("\"{}\" from cluster {}", r.name, r.first_cluster)))
        return;
    // Up to ValidDataLength from the clusters, then zeros [EXFAT §7.6.4].
    const std::uint64_t cb = v.cluster_bytes(), size = r.data_length;
    const std::uint64_t valid = std::min(r.valid_data_length, size);
    std::vector<std::byte> buf(static_cast<std::size_t>(cb));
    std::uint64_t done = 0;
    for (const std::uint32_t c : deleted_clusters(v, r, (size + cb - 1) / cb)) {
        const std::size_t n = static_cast<std::size_t>(std::min(cb, size - done));
        if (done >= valid) {
            std::fill(buf.begin(), buf.end(), std::byte{0});
        } else {
            v.read_cluster(c, std::span(buf).first(n));
            if (valid - done < n)
                std::fill(buf.begin() + static_cast<std::ptrdiff_t>(valid - done), buf.end(), std::byte{0});
        }
        sink(std::span<const std::byte>(buf).first(n));
        done += n;
    }
}

std::vector<FileRecord> deleted_directory_entries(const Volume& v, const FileRecord& dir) {
    if (!dir.is_directory() || dir.data_length > (std::uint64_t{256} << 20) ||
        deleted_state(v, dir) != fat::DeletedState::recoverable)
        return {};
    std::vector<std::byte> bytes;
    bytes.reserve(static_cast<std::size_t>(dir.data_length));
    read_deleted(v, dir,
                 [&](std::span<const std::byte> s) { bytes.insert(bytes.end(), s.begin(), s.end()); });
    std::vector<FileRecord> out = parse_deleted(bytes, v.upcase_table());
    for (FileRecord& r : parse_directory(bytes, v.upcase_table()).files)
        if (r.checksum_ok()) out.push_back(std::move(r));
    std::sort(out.begin(), out.end(),
              [](const FileRecord& a, const FileRecord& b) { return a.index < b.index; });
    return out;
}

}  // namespace fsimg::exfat
