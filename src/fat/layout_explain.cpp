// FAT layout words: refusals with what would work instead, and the lines of
// `mkfs --explain`. The numbers come from the solver in layout.cpp.
#include <algorithm>
#include <array>
#include <span>

#include <fmt/format.h>

#include "fsimg/core/units.hpp"
#include "fsimg/fat/layout.hpp"
#include "layout_internal.hpp"

namespace fsimg::fat {
namespace detail {

namespace {

constexpr std::array<FatType, 3> kAllTypes = {FatType::fat12, FatType::fat16, FatType::fat32};

std::string volume_text(std::uint64_t bytes, std::uint64_t total_sectors, std::uint32_t bps) {
    return fmt::format("the {} volume ({} sectors of {} bytes)", core::format_size(bytes),
                       core::format_count(total_sectors), bps);
}

// The -s argument for a byte count: "33M", "2052K", "1050112".
std::string size_arg(std::uint64_t bytes) {
    if (bytes % (1024 * 1024) == 0) return fmt::format("{}M", bytes / (1024 * 1024));
    if (bytes % 1024 == 0) return fmt::format("{}K", bytes / 1024);
    return fmt::format("{}", bytes);
}

// A byte count without rounding: "33 MiB", "2,052 KiB", "1,050,112 bytes".
std::string exact_size_text(std::uint64_t bytes) {
    static constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> kUnits = {
        {{std::uint64_t{1} << 40, "TiB"},
         {std::uint64_t{1} << 30, "GiB"},
         {1 << 20, "MiB"},
         {1 << 10, "KiB"}}};
    for (const auto& [unit, name] : kUnits) {
        if (bytes >= unit && bytes % unit == 0)
            return fmt::format("{} {}", core::format_count(bytes / unit), name);
    }
    return fmt::format("{} bytes", core::format_count(bytes));
}

// A round volume size inside [first, last] sectors near one end of it: whole
// MiB when that moves the bound by at most 1/16, else whole KiB (or sectors).
std::uint64_t round_size_in(const SectorRange& range, std::uint32_t bps, bool at_least) {
    const std::uint64_t lo = range.first * bps;
    const std::uint64_t hi = range.last * bps;
    const std::uint64_t bound = at_least ? lo : hi;
    for (std::uint64_t unit : {std::uint64_t{1024 * 1024}, std::max<std::uint64_t>(1024, bps)}) {
        const std::uint64_t v = at_least ? core::round_up(lo, unit) : hi / unit * unit;
        const std::uint64_t moved = at_least ? v - lo : hi - v;
        if (v >= lo && v <= hi && moved <= bound / 16) return v;
    }
    return bound;
}

std::string size_suggestion(const SectorRange& range, std::uint32_t bps, bool at_least,
                            std::string_view what) {
    const std::uint64_t v = round_size_in(range, bps, at_least);
    return fmt::format("a volume of {} {} for {} (with no partition table: -s {})",
                       at_least ? "at least" : "at most", exact_size_text(v), what, size_arg(v));
}

std::string type_cluster_text(FatType type, std::uint32_t cluster_bytes) {
    return fmt::format("{} with {} clusters", to_string(type), cluster_text(cluster_bytes));
}

std::vector<std::uint32_t> cluster_sizes(std::uint32_t bps) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t c = bps; c <= kMaxClusterBytes; c *= 2) out.push_back(c);
    return out;
}

std::uint32_t root_of(const LayoutRequest& r) {
    return rounded_root_entries(r.root_entry_count, r.bytes_per_sector);
}

// The first cluster size (smallest) valid for `type` at this size.
std::optional<std::uint32_t> any_valid_cluster(FatType type, const LayoutRequest& r, std::uint64_t total) {
    for (std::uint32_t c : cluster_sizes(r.bytes_per_sector)) {
        if (solve_planned(type, r.bytes_per_sector, c, total, root_of(r)).valid()) return c;
    }
    return std::nullopt;
}

// Nearest valid sizes below/above `total` over a set of (type, cluster) pairs.
struct Nearest {
    std::optional<SectorRange> below;  ///< the range whose last sector is largest below total
    std::string below_what;
    std::optional<SectorRange> above;  ///< the range whose first sector is smallest above total
    std::string above_what;
};

Nearest nearest_sizes(const LayoutRequest& r, std::uint64_t total, std::span<const FatType> types,
                      std::span<const std::uint32_t> clusters) {
    Nearest n;
    for (FatType t : types) {
        for (std::uint32_t c : clusters) {
            auto range = valid_sector_range(t, r.bytes_per_sector, c, root_of(r));
            if (!range) continue;
            if (range->last < total && (!n.below || range->last > n.below->last)) {
                n.below = range;
                n.below_what = type_cluster_text(t, c);
            }
            if (range->first > total && (!n.above || range->first < n.above->first)) {
                n.above = range;
                n.above_what = type_cluster_text(t, c);
            }
        }
    }
    return n;
}

void add_nearest(std::vector<std::string>& out, const Nearest& n, std::uint32_t bps) {
    if (n.below) out.push_back(size_suggestion(*n.below, bps, false, n.below_what));
    if (n.above) out.push_back(size_suggestion(*n.above, bps, true, n.above_what));
}

}  // namespace

std::string cluster_text(std::uint32_t cluster_bytes) { return core::format_size(cluster_bytes); }

std::string cluster_arg(std::uint32_t cluster_bytes) {
    if (cluster_bytes >= 1024 && cluster_bytes % 1024 == 0) return fmt::format("{}K", cluster_bytes / 1024);
    return fmt::format("{}", cluster_bytes);
}

std::string type_arg(FatType type) {
    switch (type) {
        case FatType::fat12:
            return "fat12";
        case FatType::fat16:
            return "fat16";
        case FatType::fat32:
            return "fat32";
    }
    return "fat";
}

std::string count_text(std::int64_t clusters) {
    if (clusters < 1) return "no clusters";
    return fmt::format("{} clusters", core::format_count(static_cast<std::uint64_t>(clusters)));
}

std::string range_text(FatType type) {
    if (type == FatType::fat12) {
        return fmt::format("FAT12 needs 1..{} clusters", core::format_count(kFat12MaxClusters));
    }
    return fmt::format("{} needs {}..{} clusters", to_string(type), core::format_count(min_clusters(type)),
                       core::format_count(max_clusters(type)));
}

std::string invalid_reason(const Solved& s) {
    if (s.valid()) return {};
    if (s.clusters < 1) {
        return fmt::format("no clusters fit: the metadata alone takes {} of {} sectors",
                           core::format_count(s.min_metadata_sectors), core::format_count(s.total_sectors));
    }
    const auto n = static_cast<std::uint64_t>(s.clusters);
    if (s.clusters > std::int64_t{max_clusters(s.type)}) {
        return fmt::format("{} clusters > {}", core::format_count(n),
                           core::format_count(max_clusters(s.type)));
    }
    return fmt::format("{} clusters < {}", core::format_count(n), core::format_count(min_clusters(s.type)));
}

LayoutRefusal refuse_type_cluster(const LayoutRequest& r, const Solved& s, bool cluster_given) {
    const std::uint32_t bps = r.bytes_per_sector;
    const std::uint64_t total = s.total_sectors;
    const std::uint32_t c = s.sectors_per_cluster * bps;
    const FatType type = s.type;
    LayoutRefusal out;
    const std::string vol = volume_text(r.volume_bytes, total, bps);
    if (s.clusters < 1) {
        out.reason = fmt::format(
            "{} is too small for {} with {} clusters: the reserved sectors, FATs and root directory alone "
            "take {} "
            "sectors",
            vol, to_string(type), cluster_text(c), core::format_count(s.min_metadata_sectors));
    } else {
        const bool many = s.clusters > std::int64_t{max_clusters(type)};
        out.reason =
            fmt::format("{} with {} clusters on {} gives {}, {} the {} {} of {}; {}", to_string(type),
                        cluster_text(c), vol, detail::count_text(s.clusters), many ? "above" : "below",
                        to_string(type), many ? "maximum" : "minimum",
                        core::format_count(many ? max_clusters(type) : min_clusters(type)), range_text(type));
        if (!cluster_given)
            out.reason += fmt::format(" (the default cluster size for this size is {})", cluster_text(c));
    }
    // Other cluster sizes for this type.
    bool cluster_works = false;
    for (std::uint32_t alt : cluster_sizes(bps)) {
        if (alt == c) continue;
        if (solve_planned(type, bps, alt, total, root_of(r)).valid()) {
            out.suggestions.push_back(fmt::format("-c {}", cluster_arg(alt)));
            cluster_works = true;
        }
    }
    // Other types.
    for (FatType t : kAllTypes) {
        if (t == type) continue;
        if (solve_planned(t, bps, c, total, root_of(r)).valid()) {
            out.suggestions.push_back(fmt::format("-t {}", type_arg(t)));
        } else if (auto alt = any_valid_cluster(t, r, total)) {
            out.suggestions.push_back(cluster_given
                                          ? fmt::format("-t {} -c {}", type_arg(t), cluster_arg(*alt))
                                          : fmt::format("-t {}", type_arg(t)));
        }
    }
    // Volume sizes for this type (with this cluster size when it was given).
    if (!cluster_works || cluster_given) {
        const std::array<FatType, 1> types = {type};
        std::vector<std::uint32_t> clusters =
            cluster_given ? std::vector<std::uint32_t>{c} : cluster_sizes(bps);
        add_nearest(out.suggestions, nearest_sizes(r, total, types, clusters), bps);
    }
    return out;
}

LayoutRefusal refuse_dead_zone(const LayoutRequest& r, std::uint32_t c) {
    const std::uint32_t bps = r.bytes_per_sector;
    const std::uint64_t total = r.volume_bytes / bps;
    LayoutRefusal out;
    std::string why;
    for (FatType t : kAllTypes) {
        const Solved s = solve_planned(t, bps, c, total, root_of(r));
        why += fmt::format("{}{}: {} ({})", why.empty() ? "" : "; ", to_string(t), invalid_reason(s),
                           range_text(t));
    }
    out.reason = fmt::format("no FAT type works with {} clusters on {}: {}", cluster_text(c),
                             volume_text(r.volume_bytes, total, bps), why);
    // The nearest cluster sizes on either side that work at this size.
    auto works = [&](std::uint32_t alt) -> std::optional<FatType> {
        for (FatType t : kAllTypes) {
            if (solve_planned(t, bps, alt, total, root_of(r)).valid()) return t;
        }
        return std::nullopt;
    };
    for (std::uint32_t alt = c / 2; alt >= bps; alt /= 2) {
        if (auto t = works(alt)) {
            out.suggestions.push_back(fmt::format("-c {} ({})", cluster_arg(alt), to_string(*t)));
            break;
        }
    }
    for (std::uint32_t alt = c * 2; alt <= kMaxClusterBytes; alt *= 2) {
        if (auto t = works(alt)) {
            out.suggestions.push_back(fmt::format("-c {} ({})", cluster_arg(alt), to_string(*t)));
            break;
        }
    }
    const std::array<std::uint32_t, 1> clusters = {c};
    add_nearest(out.suggestions, nearest_sizes(r, total, kAllTypes, clusters), bps);
    return out;
}

LayoutRefusal refuse_no_type(const LayoutRequest& r) {
    const std::uint32_t bps = r.bytes_per_sector;
    const std::uint64_t total = r.volume_bytes / bps;
    LayoutRefusal out;
    const std::vector<std::uint32_t> clusters = cluster_sizes(bps);
    const Nearest n = nearest_sizes(r, total, kAllTypes, clusters);
    const std::string vol = volume_text(r.volume_bytes, total, bps);
    if (n.above && !n.below) {
        out.reason = fmt::format("{} is too small for any FAT: the smallest is {} sectors ({})", vol,
                                 core::format_count(n.above->first), n.above_what);
    } else if (n.below && !n.above) {
        out.reason = fmt::format("{} is too large for any FAT: the largest is {} sectors ({})", vol,
                                 core::format_count(n.below->last), n.below_what);
        out.suggestions.push_back("-t exfat");
    } else {
        out.reason = fmt::format("no FAT type and cluster size fits {}", vol);
    }
    add_nearest(out.suggestions, n, bps);
    return out;
}

}  // namespace detail

std::vector<std::string> explain_layout(const LayoutRequest& r, const Layout& l) {
    using detail::Solved;
    std::vector<std::string> out;
    const std::uint32_t bps = l.bytes_per_sector;
    const std::uint32_t spc = l.sectors_per_cluster;
    const std::uint64_t total = l.total_sectors;
    const std::uint64_t n = l.cluster_count;
    out.push_back(fmt::format("{}: {} of {} ({} sector{} of {} bytes)", to_string(l.type),
                              detail::count_text(l.cluster_count), detail::cluster_text(l.cluster_bytes()),
                              spc, spc == 1 ? "" : "s", bps));
    out.push_back(fmt::format(
        "volume: {} = {} sectors{}", core::format_size(l.volume_bytes()), core::format_count(total),
        l.hidden_sectors
            ? fmt::format(", starting at sector {} of the disk", core::format_count(l.hidden_sectors))
            : std::string{}));
    // Where the count stands against the boundaries [FATGEN, FASTFAT, MS-FORMAT].
    auto dist = [&](std::uint64_t limit) {
        return n >= limit ? fmt::format("{} above", core::format_count(n - limit))
                          : fmt::format("{} below", core::format_count(limit - n));
    };
    out.push_back(fmt::format(
        "cluster count {}: FAT12 up to {} ({}), FAT16 from {} ({}) to {} ({}), FAT32 from {} ({}) "
        "to {} ({}); 4,085-4,086 and 65,525-65,526 are avoided (drivers disagree on the type)",
        core::format_count(n), core::format_count(kFat12MaxClusters), dist(kFat12MaxClusters),
        core::format_count(kFat16MinClusters), dist(kFat16MinClusters), core::format_count(kFat16MaxClusters),
        dist(kFat16MaxClusters), core::format_count(kFat32MinClusters), dist(kFat32MinClusters),
        core::format_count(kFat32MaxClusters), dist(kFat32MaxClusters)));
    const std::uint64_t entries = l.fat_bytes() * 8 / fat_entry_bits(l.type);
    out.push_back(fmt::format(
        "FAT: {} copies of {} sector{} ({} each), {} entries of {} bits for {} needed (clusters + 2)",
        l.num_fats, core::format_count(l.fat_size_sectors), l.fat_size_sectors == 1 ? "" : "s",
        core::format_size(l.fat_bytes()), core::format_count(entries), fat_entry_bits(l.type),
        core::format_count(n + 2)));
    const std::uint64_t base = l.type == FatType::fat32 ? detail::kReservedFat32 : detail::kReservedFat12_16;
    const std::uint64_t pad = l.reserved_sectors > base ? l.reserved_sectors - base : 0;
    std::string reserved = fmt::format("reserved: {} sector{}", core::format_count(l.reserved_sectors),
                                       l.reserved_sectors == 1 ? "" : "s");
    if (pad) reserved += fmt::format(" ({} + {} padding)", base, core::format_count(pad));
    if (l.type == FatType::fat32) {
        reserved +=
            fmt::format("; FSInfo at sector {}, backup boot sector at {}; root directory in cluster {}",
                        l.fsinfo_sector, l.backup_boot_sector, l.root_cluster);
    } else {
        reserved += fmt::format("; root directory: {} entries in {} sectors at sector {}",
                                core::format_count(l.root_entry_count), l.root_dir_sectors,
                                core::format_count(l.first_root_dir_sector));
    }
    out.push_back(reserved);
    std::string align =
        fmt::format("data region: cluster 2 at sector {} (byte {})", core::format_count(l.first_data_sector),
                    core::format_count(l.first_data_sector * bps));
    const bool aligned = spc != 0 && l.first_data_sector % spc == 0;
    if (spc == 1) {
        align += ", one-sector clusters need no alignment";
    } else if (total <= kNoAlignMaxSectors) {
        align += fmt::format(", not aligned: volumes of {} sectors or less are not (as mkfs.fat)",
                             core::format_count(kNoAlignMaxSectors));
    } else if (aligned) {
        align += fmt::format(", aligned to the {} cluster size (volume-relative)",
                             detail::cluster_text(l.cluster_bytes()));
    } else {
        const Solved a = detail::solve(l.type, bps, spc, total, l.root_entry_count, true);
        align += fmt::format(", not aligned: aligning would leave {} ({})", detail::count_text(a.clusters),
                             detail::range_text(l.type));
    }
    const std::uint64_t tail = total - l.first_data_sector - n * spc;
    if (tail) align += fmt::format("; {} sector{} unused at the end", tail, tail == 1 ? "" : "s");
    out.push_back(align);

    // What the others would do for this size.
    const std::uint64_t v = r.volume_bytes;
    auto win = [&](FatType t) {
        auto w = windows_default_cluster_bytes(t, v);
        return w ? detail::cluster_text(*w) : std::string{"not formatted"};
    };
    const TypeAndCluster mk = mkfs_fat_default(v);
    const TypeAndCluster ours = default_cluster_bytes(r.type, v);
    out.push_back(
        fmt::format("defaults for {}: Windows (KB140365) FAT16 {}, FAT32 {}; mkfs.fat 4.2 {} with {}; "
                    "fsimg {} with {}",
                    core::format_size(v), win(FatType::fat16), win(FatType::fat32), to_string(mk.type),
                    detail::cluster_text(mk.cluster_bytes), to_string(ours.type),
                    detail::cluster_text(std::max(ours.cluster_bytes, bps))));
    std::string chosen = "chosen: ";
    if (r.type) {
        chosen += fmt::format("type {} (-t)", to_string(*r.type));
    } else if (r.cluster_bytes) {
        chosen += "the type that makes the given cluster size valid";
    } else {
        chosen += "the default type for the size";
    }
    if (r.cluster_bytes) {
        chosen += fmt::format(", cluster size {} (-c)", detail::cluster_text(*r.cluster_bytes));
    } else if (std::max(ours.cluster_bytes, bps) != l.cluster_bytes() || (!r.type && ours.type != l.type)) {
        chosen += fmt::format(", {} (the default {} {} does not give a valid count)",
                              detail::cluster_text(l.cluster_bytes()), to_string(ours.type),
                              detail::cluster_text(std::max(ours.cluster_bytes, bps)));
    } else {
        chosen += fmt::format(", default cluster size {}", detail::cluster_text(l.cluster_bytes()));
    }
    out.push_back(chosen);

    // Every other type and cluster size, with why it was not taken.
    out.push_back("alternatives:");
    const std::uint32_t root = detail::rounded_root_entries(r.root_entry_count, bps);
    for (FatType t : detail::kAllTypes) {
        for (std::uint32_t c = bps; c <= kMaxClusterBytes; c *= 2) {
            if (t == l.type && c == l.cluster_bytes()) continue;
            const Solved s = detail::solve_planned(t, bps, c, total, root);
            out.push_back(fmt::format("  {} with {} clusters: {}", to_string(t), detail::cluster_text(c),
                                      s.valid() ? fmt::format("possible, {}", detail::count_text(s.clusters))
                                                : detail::invalid_reason(s)));
        }
    }
    return out;
}

}  // namespace fsimg::fat
