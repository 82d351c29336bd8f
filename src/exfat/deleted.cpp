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

fat::DeletedState deleted_state(const Volume& v, const FileRecord& r) {
    const std::uint64_t cb = v.cluster_bytes();
    const std::uint64_t need = (r.data_length + cb - 1) / cb;
    if (need == 0 || r.first_cluster == 0) return fat::DeletedState::empty;
    if (need > v.cluster_count()) return fat::DeletedState::reused;
    std::uint32_t c = r.first_cluster;
    for (std::uint64_t k = 0; k < need; ++k) {
        if (!v.is_cluster(c) || v.cluster_in_use(c)) return fat::DeletedState::reused;
        if (k + 1 == need) break;
        if (r.no_fat_chain()) {
            ++c;
        } else {
            c = v.fat_entry(c);
        }
    }
    return fat::DeletedState::recoverable;
}

void read_deleted(const Volume& v, const FileRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink) {
    if (!fat::readable(deleted_state(v, r), fmt::format("\"{}\" from cluster {}", r.name, r.first_cluster)))
        return;
    v.read_file(r, sink);
}

}  // namespace fsimg::exfat
