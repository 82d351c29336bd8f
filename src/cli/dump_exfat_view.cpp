// fsimg dump --what dir PATH | extents PATH | bitmap on an exFAT volume: the
// directory's entries with their entry sets decoded (SetChecksum and NameHash
// verified), a file's cluster runs, the allocation bitmap's summary and runs.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "dump_exfat.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/open.hpp"

namespace fsimg::cli {

namespace {

constexpr std::size_t kMaxRunsShown = 1000;  ///< text output; JSON lists up to kMaxRunsJson
constexpr std::size_t kMaxRunsJson = 100000;

exfat::FileRecord lookup_or_throw(const exfat::Volume& v, const std::string& image, const std::string& path) {
    auto r = v.lookup(path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", path, image));
    return std::move(*r);
}

std::string hash_text(std::uint16_t stored, std::optional<std::uint16_t> computed) {
    if (!computed) return fmt::format("0x{:04X}", stored);
    return stored == *computed ? fmt::format("0x{:04X} ok", stored)
                               : fmt::format("0x{:04X} MISMATCH (computed 0x{:04X})", stored, *computed);
}

/// One entry of a decoded set: its JSON object and its text line.
void describe_set_entry(const exfat::FileRecord& f, std::uint32_t i, nlohmann::json& j, std::string& text) {
    const std::uint32_t k = i - f.index;
    if (k == 0) {
        j.update({{"type", "file"},
                  {"secondary_count", f.entries - 1},
                  {"set_checksum", f.set_checksum},
                  {"set_checksum_computed", f.set_checksum_computed},
                  {"attributes", f.attributes},
                  {"created", exfat::timestamp_text(f.created)},
                  {"modified", exfat::timestamp_text(f.modified)},
                  {"accessed", exfat::timestamp_text(f.accessed, false)}});
        text = fmt::format("FILE    secondaries {:2}  SetChecksum {}  attr {} (0x{:04X})  modified {}",
                           f.entries - 1, hash_text(f.set_checksum, f.set_checksum_computed),
                           attr_text(f.attributes & 0xFF), f.attributes, exfat::timestamp_text(f.modified));
    } else if (k == 1) {
        j.update(
            {{"type", "stream"},
             {"flags", f.secondary_flags},
             {"contiguous", f.no_fat_chain()},
             {"name_length", f.name_length},
             {"name_hash", f.name_hash},
             {"name_hash_computed", f.name_hash_computed ? nlohmann::json(*f.name_hash_computed) : nullptr},
             {"first_cluster", f.first_cluster},
             {"valid_data_length", f.valid_data_length},
             {"data_length", f.data_length}});
        text = fmt::format(
            "STREAM  flags 0x{:02X}{}  NameLength {:3}  NameHash {}  cluster {:>8}  valid {:>10}  length "
            "{:>10}",
            f.secondary_flags, f.no_fat_chain() ? " (NoFatChain)" : " (FAT chain) ", f.name_length,
            hash_text(f.name_hash, f.name_hash_computed), f.first_cluster, f.valid_data_length,
            f.data_length);
    } else if (j["entry_type"] == exfat::kEntryFileName) {
        const std::size_t from = std::size_t{k - 2} * exfat::kNameUnitsPerEntry;
        const std::u16string_view name(f.name16);
        const std::string part = from < name.size()
                                     ? core::utf16_to_utf8_lossy(name.substr(from, exfat::kNameUnitsPerEntry))
                                     : std::string();
        j.update({{"type", "name"}, {"characters", part}});
        text = fmt::format("NAME    \"{}\"", escape_name(part));
    } else {
        for (const auto& b : f.benign) {
            if (b.index != i) continue;
            j.update({{"type", "benign_secondary"},
                      {"flags", b.flags},
                      {"first_cluster", b.first_cluster},
                      {"data_length", b.data_length}});
            text = fmt::format("BENIGN  type 0x{:02X} flags 0x{:02X} cluster {} length {}", b.entry_type,
                               b.flags, b.first_cluster, b.data_length);
        }
    }
}

int dump_dir(const exfat::Volume& v, const std::string& image, const std::string& path, bool json) {
    const exfat::FileRecord dir = lookup_or_throw(v, image, path);
    if (!dir.is_directory()) throw Error(ErrorCode::usage, fmt::format("\"{}\" is a file", path));
    const std::vector<std::byte> bytes = v.read_directory_bytes(dir);
    const exfat::ParsedDirectory d = exfat::parse_directory(bytes, v.upcase_table());
    std::map<std::uint32_t, const exfat::FileRecord*> owner;  // entry index -> its set
    for (const auto& f : d.files) {
        for (std::uint32_t i = f.index; i < f.index + f.entries; ++i) owner[i] = &f;
    }
    nlohmann::json out = nlohmann::json::array();
    if (!json) {
        fmt::print("{}: directory {} ({} bytes, {} entries)\n", image, escape_name(path), bytes.size(),
                   bytes.size() / exfat::kDirEntrySize);
    }
    const auto n = static_cast<std::uint32_t>(bytes.size() / exfat::kDirEntrySize);
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto e = std::span<const std::byte>(bytes).subspan(std::size_t{i} * 32).first<32>();
        const auto type = std::to_integer<std::uint8_t>(e[0]);
        nlohmann::json j{{"index", i}, {"entry_type", type}};
        std::string text;
        if (auto it = owner.find(i); it != owner.end()) {
            describe_set_entry(*it->second, i, j, text);
        } else if (type == exfat::kEntryEndOfDirectory) {
            j["type"] = "end";
            text = "END     end of directory (0x00)";
        } else if (!(type & exfat::kEntryInUse)) {
            j["type"] = "unused";
            text = fmt::format("unused  type 0x{:02X}", type);
        } else if (type == exfat::kEntryVolumeLabel) {
            const auto l = exfat::decode_volume_label_entry(e);
            j.update({{"type", "label"}, {"label", exfat::label_text(l)}});
            text = fmt::format("LABEL   \"{}\" ({} characters)", escape_name(exfat::label_text(l)),
                               l.character_count);
        } else if (type == exfat::kEntryAllocationBitmap) {
            const auto b = exfat::decode_allocation_bitmap_entry(e);
            j.update({{"type", "bitmap"},
                      {"bitmap_flags", b.bitmap_flags},
                      {"first_cluster", b.first_cluster},
                      {"data_length", b.data_length}});
            text = fmt::format("BITMAP  flags 0x{:02X} cluster {} length {}", b.bitmap_flags, b.first_cluster,
                               b.data_length);
        } else if (type == exfat::kEntryUpcaseTable) {
            const auto u = exfat::decode_upcase_table_entry(e);
            j.update({{"type", "upcase"},
                      {"table_checksum", u.table_checksum},
                      {"first_cluster", u.first_cluster},
                      {"data_length", u.data_length}});
            text = fmt::format("UPCASE  TableChecksum 0x{:08X} cluster {} length {}", u.table_checksum,
                               u.first_cluster, u.data_length);
        } else {
            j["type"] = type == exfat::kEntryVolumeGuid ? "guid" : "other";
            text = fmt::format("{}type 0x{:02X}", type == exfat::kEntryVolumeGuid ? "GUID    " : "OTHER   ",
                               type);
        }
        if (json) {
            out.push_back(std::move(j));
        } else {
            fmt::print("  {:5}  {}\n", i, text);
        }
        if (type == exfat::kEntryEndOfDirectory) break;
    }
    nlohmann::json anomalies = nlohmann::json::array();
    for (const auto& a : d.anomalies) {
        if (json) {
            anomalies.push_back({{"index", a.index}, {"entry_type", a.entry_type}, {"detail", a.detail}});
        } else {
            fmt::print("  problem: {}\n", a.detail);
        }
    }
    if (json) {
        fmt::print("{}\n", nlohmann::json{{"schema_version", 1},
                                          {"image", image},
                                          {"what", "dir"},
                                          {"filesystem", "exfat"},
                                          {"path", path},
                                          {"entries", out},
                                          {"problems", anomalies}}
                               .dump(2));
    }
    return kExitOk;
}

int dump_extents(const exfat::Volume& v, const std::string& image, const std::string& path, bool json) {
    const exfat::FileRecord r = lookup_or_throw(v, image, path);
    std::vector<exfat::ClusterRun> runs;
    std::string how;
    if (r.is_root) {
        const exfat::Chain c = v.follow_chain(r.first_cluster, v.cluster_count());
        runs = c.runs;
        how = "FAT chain";
    } else {
        runs = v.allocation(r.first_cluster, r.data_length, r.no_fat_chain(), fmt::format("\"{}\"", path));
        how = r.data_length == 0 ? "no clusters" : r.no_fat_chain() ? "contiguous (NoFatChain)" : "FAT chain";
    }
    std::uint64_t clusters = 0;
    for (const auto& run : runs) clusters += run.count;
    const std::uint32_t cb = v.cluster_bytes();
    // The root has no Stream Extension: its length is its chain's.
    const std::uint64_t size = r.is_root ? clusters * cb : r.data_length;
    const std::uint64_t valid = r.is_root ? size : r.valid_data_length;
    if (json) {
        fmt::print("{}\n", nlohmann::json{{"schema_version", 1},
                                          {"image", image},
                                          {"what", "extents"},
                                          {"filesystem", "exfat"},
                                          {"path", path},
                                          {"size", size},
                                          {"valid_data_length", valid},
                                          {"first_cluster", r.first_cluster},
                                          {"contiguous", r.no_fat_chain()},
                                          {"cluster_bytes", cb},
                                          {"clusters", clusters},
                                          {"allocation", how},
                                          {"runs", extent_runs_json(v, runs)}}
                               .dump(2));
        return kExitOk;
    }
    fmt::print("{}: {} ({} bytes, {} valid), first cluster {}, {} clusters of {} bytes, {}\n", image,
               escape_name(path), size, valid, r.first_cluster, clusters, cb, how);
    print_extent_runs(v, runs);
    return kExitOk;
}

int dump_bitmap(const exfat::Volume& v, const std::string& image, bool json) {
    const auto entry = v.bitmap_entry();
    if (!entry) throw Error(ErrorCode::corrupt, "the root directory has no Allocation Bitmap entry");
    const std::uint64_t used = v.used_clusters();
    bool complete = true;
    const auto runs = v.used_runs(json ? kMaxRunsJson : kMaxRunsShown, &complete);
    const std::uint64_t count = v.cluster_count();
    const unsigned percent = count ? static_cast<unsigned>(used * 100 / count) : 0;
    if (json) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& r : runs) a.push_back({{"first", r.first}, {"count", r.count}});
        fmt::print("{}\n", nlohmann::json{{"schema_version", 1},
                                          {"image", image},
                                          {"what", "bitmap"},
                                          {"filesystem", "exfat"},
                                          {"first_cluster", entry->first_cluster},
                                          {"data_length", entry->data_length},
                                          {"cluster_count", count},
                                          {"used_clusters", used},
                                          {"free_clusters", count - used},
                                          {"percent_in_use", percent},
                                          {"percent_in_use_boot_sector", v.boot_sector().percent_in_use},
                                          {"runs_complete", complete},
                                          {"used_runs", a}}
                               .dump(2));
        return kExitOk;
    }
    fmt::print("{}: allocation bitmap at cluster {}, {} bytes, {} clusters (2..{})\n", image,
               entry->first_cluster, entry->data_length, core::format_count(count), count + 1);
    fmt::print("clusters: {} used, {} free ({}% in use; PercentInUse in the boot sector: {})\n",
               core::format_count(used), core::format_count(count - used), percent,
               v.boot_sector().percent_in_use == exfat::kPercentInUseUnknown
                   ? std::string("unknown")
                   : std::to_string(v.boot_sector().percent_in_use));
    fmt::print("used runs:\n");
    for (const auto& r : runs) {
        fmt::print("  clusters {:>9}..{:<9} ({:>6})\n", r.first, r.first + r.count - 1, r.count);
    }
    if (!complete) fmt::print("  ... more runs (--json lists up to {})\n", kMaxRunsJson);
    return kExitOk;
}

}  // namespace

int dump_exfat_view(const std::vector<std::string>& what, const std::string& image,
                    const io::BlockDevice& volume, bool json) {
    const std::string& kind = what[0];
    check_view_what(what, "bitmap", "fat",
                    "an exFAT volume records allocation in its bitmap; use --what bitmap (and --what extents "
                    "PATH for a file's clusters)");
    const exfat::Volume v(volume);
    for (const auto& p : exfat::reading_problems(v)) warn(fmt::format("{}: {}", image, p));
    if (kind == "bitmap") return dump_bitmap(v, image, json);
    if (kind == "dir") return dump_dir(v, image, what[1], json);
    return dump_extents(v, image, what[1], json);
}

}  // namespace fsimg::cli
