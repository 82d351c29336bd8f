// Test helper shared by the exFAT unit tests: a volume formatted in memory
// by exfat::format_volume plus helpers that allocate clusters and add entry
// sets the way a writer would (bitmap bits, FAT links, checksums).
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <span>
#include <variant>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::exfat::test {

/// A formatted volume in memory plus helpers that allocate clusters and add
/// entry sets the way a writer would (bitmap bits, FAT links, checksums).
struct TestVolume {
    Layout l;
    io::MemoryImage dev;
    std::uint32_t next_free;
    std::map<std::uint64_t, std::uint64_t> dir_fill;  ///< directory byte offset -> next entry offset

    explicit TestVolume(std::uint64_t bytes = 8u << 20, std::uint32_t cluster = 4096, std::uint32_t bps = 512)
        : l(plan(bytes, cluster, bps)), dev(bytes) {
        format_volume(dev, l, FormatOptions{0x1234ABCD, "TEST", true});
        next_free = l.root_first_cluster + 1;
        dir_fill[l.cluster_offset(l.root_first_cluster)] = l.cluster_offset(l.root_first_cluster) + 3 * 32;
    }
    static Layout plan(std::uint64_t bytes, std::uint32_t cluster, std::uint32_t bps) {
        LayoutRequest r;
        r.volume_bytes = bytes;
        r.cluster_bytes = cluster;
        r.bytes_per_sector = bps;
        auto v = plan_layout(r);
        REQUIRE(std::holds_alternative<Layout>(v));
        return std::get<Layout>(v);
    }
    void set_fat(std::uint32_t n, std::uint32_t v) {
        std::array<std::byte, 4> b{};
        core::store_le32(b, 0, v);
        dev.write_at(std::uint64_t(l.fat_offset) * l.bytes_per_sector + 4ull * n, b);
    }
    void mark_used(std::uint32_t n) {
        const std::uint64_t at = l.cluster_offset(l.bitmap_first_cluster) + (n - 2) / 8;
        std::array<std::byte, 1> b{};
        dev.read_at(at, b);
        b[0] |= std::byte(1u << ((n - 2) % 8));
        dev.write_at(at, b);
    }
    void clear_used(std::uint32_t n) {
        const std::uint64_t at = l.cluster_offset(l.bitmap_first_cluster) + (n - 2) / 8;
        std::array<std::byte, 1> b{};
        dev.read_at(at, b);
        b[0] &= ~std::byte(1u << ((n - 2) % 8));
        dev.write_at(at, b);
    }
    std::uint32_t alloc_contiguous(std::uint32_t count) {
        const std::uint32_t first = next_free;
        for (std::uint32_t i = 0; i < count; ++i) mark_used(first + i);
        next_free += count;
        return first;
    }
    /// Links `clusters` into a FAT chain (end of chain after the last).
    void chain(const std::vector<std::uint32_t>& clusters) {
        for (std::size_t i = 0; i < clusters.size(); ++i) {
            mark_used(clusters[i]);
            set_fat(clusters[i], i + 1 < clusters.size() ? clusters[i + 1] : kFatEndOfChain);
        }
    }
    void write_runs(const std::vector<std::uint32_t>& clusters, const std::vector<std::byte>& data) {
        for (std::size_t i = 0; i < clusters.size(); ++i) {
            const std::size_t from = i * l.cluster_bytes();
            if (from >= data.size()) break;
            const std::size_t n = std::min<std::size_t>(l.cluster_bytes(), data.size() - from);
            dev.write_at(l.cluster_offset(clusters[i]), std::span<const std::byte>(data).subspan(from, n));
        }
    }
    /// Appends raw entries to the directory whose first cluster starts at `dir_at`.
    std::uint64_t append(std::uint64_t dir_at, std::span<const std::byte> entries) {
        auto it = dir_fill.find(dir_at);
        REQUIRE(it != dir_fill.end());
        const std::uint64_t at = it->second;
        dev.write_at(at, entries);
        it->second += entries.size();
        return at;
    }
    std::uint64_t root_at() const { return l.cluster_offset(l.root_first_cluster); }

    static FileEntrySetInfo info(const std::u16string& name, std::uint16_t attr, std::uint8_t flags,
                                 std::uint32_t first, std::uint64_t valid, std::uint64_t length) {
        FileEntrySetInfo i;
        i.name = name;
        i.attributes = attr;
        i.created = entry_timestamp(1700000000, 500000000, 3600);
        i.modified = entry_timestamp(1714566896, 780000000, 7200);
        i.accessed = entry_timestamp(1714566896, 0, 7200);
        i.secondary_flags = flags;
        i.first_cluster = first;
        i.valid_data_length = valid;
        i.data_length = length;
        return i;
    }
    /// A contiguous (NoFatChain) file holding `data`; returns the set's byte offset.
    std::uint64_t add_file(std::uint64_t dir_at, const std::u16string& name,
                           const std::vector<std::byte>& data) {
        const auto n = static_cast<std::uint32_t>((data.size() + l.cluster_bytes() - 1) / l.cluster_bytes());
        const std::uint32_t first = n ? alloc_contiguous(n) : 0;
        std::vector<std::uint32_t> cl;
        for (std::uint32_t i = 0; i < n; ++i) cl.push_back(first + i);
        write_runs(cl, data);
        const auto set = encode_file_entry_set(
            info(name, kFileAttrArchive, n ? 0x03 : 0x01, first, data.size(), data.size()));
        return append(dir_at, set);
    }
    /// A FAT-chained file on the given clusters.
    std::uint64_t add_chained_file(std::uint64_t dir_at, const std::u16string& name,
                                   const std::vector<std::uint32_t>& clusters,
                                   const std::vector<std::byte>& data, std::uint64_t valid) {
        chain(clusters);
        write_runs(clusters, data);
        const auto set =
            encode_file_entry_set(info(name, kFileAttrArchive, 0x01, clusters.at(0), valid, data.size()));
        return append(dir_at, set);
    }
    /// A one-cluster directory; returns its byte offset (for append).
    std::uint64_t add_dir(std::uint64_t dir_at, const std::u16string& name) {
        const std::uint32_t c = alloc_contiguous(1);
        const auto set = encode_file_entry_set(
            info(name, kFileAttrDirectory, 0x03, c, l.cluster_bytes(), l.cluster_bytes()));
        append(dir_at, set);
        dir_fill[l.cluster_offset(c)] = l.cluster_offset(c);
        return l.cluster_offset(c);
    }
    /// Rewrites the SetChecksum of the set at byte `at` spanning `entries` entries.
    void fix_checksum(std::uint64_t at, std::size_t entries) {
        std::vector<std::byte> set(entries * 32);
        dev.read_at(at, set);
        core::store_le16(set, 2, entry_set_checksum(set));
        dev.write_at(at, set);
    }
    void poke(std::uint64_t at, std::initializer_list<std::uint8_t> bytes) {
        std::vector<std::byte> b;
        for (auto v : bytes) b.push_back(std::byte{v});
        dev.write_at(at, b);
    }
};

inline std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
    std::vector<std::byte> v(n);
    std::mt19937 rng(seed);
    for (auto& b : v) b = std::byte(rng() & 0xFF);
    return v;
}

/// Puts `regions` ({offset, length} pairs) of `dev` back as they are in
/// `clean`, then changes 1..12 random bytes inside them: one device damaged
/// afresh each round of a random-corruption test, without copying the whole
/// image per round (that copy was most of these tests' time under ASan).
inline void corrupt(io::MemoryImage& dev, const std::vector<std::byte>& clean,
                    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& regions, std::mt19937& rng) {
    for (const auto& [at, len] : regions) dev.write_at(at, std::span(clean).subspan(at, len));
    const int flips = 1 + int(rng() % 12);
    for (int i = 0; i < flips; ++i) {
        const auto& [at, len] = regions[rng() % regions.size()];
        const auto value = std::byte(rng() & 0xFF);
        dev.write_at(at + rng() % len, std::span(&value, 1));
    }
}

}  // namespace fsimg::exfat::test
