// fsimg dump --what fat | dir PATH | extents PATH: the FAT, raw directory
// entries and a file's cluster runs.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "dump_exfat.hpp"
#include "fat_view.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"

namespace fsimg::cli {

namespace {

constexpr std::size_t kMaxChainsShown = 1000;  ///< text output; JSON lists up to kMaxChainsJson
constexpr std::size_t kMaxChainsJson = 100000;

std::string runs_text(const std::vector<fat::ClusterRun>& runs, std::size_t max = 8) {
    std::string s;
    for (std::size_t i = 0; i < runs.size() && i < max; ++i) {
        if (i) s += ", ";
        s += runs[i].count == 1 ? std::to_string(runs[i].first)
                                : fmt::format("{}-{}", runs[i].first, runs[i].first + runs[i].count - 1);
    }
    if (runs.size() > max) s += fmt::format(", ... ({} runs)", runs.size());
    return s;
}

nlohmann::json runs_json(const std::vector<fat::ClusterRun>& runs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : runs) a.push_back({{"first", r.first}, {"count", r.count}});
    return a;
}

std::string_view end_text(fat::ChainEnd e) {
    switch (e) {
        case fat::ChainEnd::end_of_chain:
            return "end of chain";
        case fat::ChainEnd::limit:
            return "limit reached";
        case fat::ChainEnd::free:
            return "links to a free cluster";
        case fat::ChainEnd::bad:
            return "bad cluster";
        case fat::ChainEnd::invalid:
            return "invalid link";
        case fat::ChainEnd::loop:
            return "loops";
    }
    return "?";
}

int dump_fat(const fat::Volume& v, const std::string& image, bool json) {
    const std::uint32_t entries = v.entry_count();
    std::vector<bool> linked(entries, false);
    std::uint64_t used = 0, free = 0, bad = 0;
    std::vector<std::uint32_t> chunk;
    std::uint32_t fat0 = 0, fat1 = 0;
    for (std::uint32_t base = 0; base < entries; base += 65536) {
        chunk.resize(std::min<std::uint32_t>(65536, entries - base));
        v.read_fat_entries(0, base, chunk);
        if (base == 0) {
            fat0 = chunk[0];
            fat1 = chunk[1];
        }
        for (std::size_t i = 0; i < chunk.size(); ++i) {
            if (base + i < 2) continue;
            switch (v.classify(chunk[i])) {
                case fat::EntryKind::free:
                    ++free;
                    break;
                case fat::EntryKind::bad:
                    ++bad;
                    break;
                case fat::EntryKind::next:
                    linked[chunk[i]] = true;
                    [[fallthrough]];
                default:
                    ++used;
            }
        }
    }
    const fat::Layout& l = v.layout();
    nlohmann::json chains = nlohmann::json::array();
    if (!json) {
        fmt::print("{}: {}, {} entries (clusters 2..{}), {} cop{} of {} sectors\n", image,
                   fat::to_string(l.type), core::format_count(entries), v.max_cluster(), l.num_fats,
                   l.num_fats == 1 ? "y" : "ies", l.fat_size_sectors);
        fmt::print("FAT[0] = 0x{:X} (media 0x{:02X}), FAT[1] = 0x{:X}\n", fat0, fat0 & 0xFF, fat1);
        fmt::print("clusters: {} used, {} free, {} bad\n", core::format_count(used), core::format_count(free),
                   core::format_count(bad));
        fmt::print("chains (first cluster: clusters, runs, end):\n");
    }
    std::size_t shown = 0, total = 0;
    for (std::uint32_t base = 0; base < entries; base += 65536) {
        chunk.resize(std::min<std::uint32_t>(65536, entries - base));
        v.read_fat_entries(0, base, chunk);
        for (std::size_t i = 0; i < chunk.size(); ++i) {
            const std::uint32_t n = base + std::uint32_t(i);
            if (n < 2 || linked[n]) continue;
            const auto k = v.classify(chunk[i]);
            if (k == fat::EntryKind::free || k == fat::EntryKind::bad) continue;
            ++total;
            if (shown >= (json ? kMaxChainsJson : kMaxChainsShown)) continue;
            ++shown;
            const fat::Chain c = v.follow_chain(n, entries);
            if (json) {
                chains.push_back({{"first", n},
                                  {"clusters", c.clusters},
                                  {"end", std::string(end_text(c.end))},
                                  {"runs", runs_json(c.runs)}});
            } else {
                fmt::print("  {:>9}: {:>8}  {}  ({})\n", n, c.clusters, runs_text(c.runs), end_text(c.end));
            }
        }
    }
    if (json) {
        nlohmann::json j{{"schema_version", 1},   {"image", image},
                         {"what", "fat"},         {"fat_type", std::string(fat::to_string(l.type))},
                         {"entries", entries},    {"fat0", fat0},
                         {"fat1", fat1},          {"used_clusters", used},
                         {"free_clusters", free}, {"bad_clusters", bad},
                         {"chain_count", total},  {"chains", chains}};
        fmt::print("{}\n", j.dump(2));
    } else if (total > shown) {
        fmt::print("  ... {} more chains (--json lists up to {})\n", total - shown, kMaxChainsJson);
    }
    return kExitOk;
}

int dump_dir(const fat::Volume& v, const std::string& image, const std::string& path, bool json) {
    const auto r = v.lookup(path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", path, image));
    if (r->kind != fat::RecordKind::directory)
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is a file", path));
    const std::vector<std::byte> bytes = v.read_directory_bytes(v.first_cluster(*r));
    nlohmann::json out = nlohmann::json::array();
    if (!json)
        fmt::print("{}: directory {} ({} bytes, {} slots)\n", image, escape_name(path), bytes.size(),
                   bytes.size() / 32);
    for (std::size_t i = 0; i + 32 <= bytes.size() && i / 32 < fat::kMaxDirEntries; i += 32) {
        const auto e = std::span<const std::byte>(bytes).subspan(i).first<32>();
        const auto first = std::to_integer<std::uint8_t>(e[0]);
        const auto attr = std::to_integer<std::uint8_t>(e[11]);
        nlohmann::json j{{"index", i / 32}};
        std::string text;
        if (first == 0) {
            j["type"] = "end";
            text = "end of directory (0x00)";
        } else if ((attr & 0x3F) == fat::kAttrLongName) {
            const auto u = fat::lfn_units(e);
            std::u16string part;
            for (char16_t c : u) {
                if (c == 0 || c == 0xFFFF) break;
                part.push_back(c);
            }
            const std::string s = core::utf16_to_utf8_lossy(part);
            if (first == fat::kDirEntryDeleted) {  // a deleted long-name entry: its ordinal byte is the mark
                j.update({{"type", "deleted-lfn"},
                          {"checksum", std::to_integer<std::uint8_t>(e[13])},
                          {"characters", s}});
                text = fmt::format("DEL  LFN         checksum 0x{:02X} \"{}\"",
                                   std::to_integer<unsigned>(e[13]), escape_name(s));
            } else {
                j.update({{"type", "lfn"},
                          {"ordinal", first & 0x1F},
                          {"last", bool(first & 0x40)},
                          {"checksum", std::to_integer<std::uint8_t>(e[13])},
                          {"characters", s}});
                text = fmt::format("LFN  ord {:2}{} checksum 0x{:02X} \"{}\"", first & 0x1F,
                                   first & 0x40 ? " (last)" : "      ", std::to_integer<unsigned>(e[13]),
                                   escape_name(s));
            }
        } else {
            const fat::DirEntry d = fat::decode_dir_entry(e);
            // A deleted entry's first byte is the mark 0xE5, not a character of the name: shown as
            // "?" (the first character is lost; TSK shows "_").
            std::string name = fat::short_name_display(d.name);
            if (first == fat::kDirEntryDeleted) {
                std::array<std::uint8_t, 11> rest = d.name;
                rest[0] = 'X';
                name = "?" + fat::short_name_display(rest).substr(1);
            }
            j.update({{"type", first == 0xE5 ? "deleted" : "short"},
                      {"name", name},
                      {"attr", d.attr},
                      {"nt_res", d.nt_res},
                      {"first_cluster", d.first_cluster},
                      {"size", d.file_size},
                      {"modified", fat::timestamp_text(d.wrt_date, d.wrt_time)},
                      {"created", fat::timestamp_text(d.crt_date, d.crt_time, true, d.crt_time_tenth)},
                      {"accessed", fat::timestamp_text(d.lst_acc_date, 0, false)},
                      {"checksum", fat::lfn_checksum(d.name)}});
            text = fmt::format(
                "{}  {:<12} attr {} (0x{:02X}) cluster {:>8} size {:>10} modified {}  [lfn sum 0x{:02X}]",
                first == 0xE5 ? "DEL " : "SFN ", escape_name(name), attr_text(d.attr), d.attr,
                d.first_cluster, d.file_size, fat::timestamp_text(d.wrt_date, d.wrt_time),
                fat::lfn_checksum(d.name));
        }
        if (json) {
            out.push_back(j);
        } else {
            fmt::print("  {:5}  {}\n", i / 32, text);
        }
        if (first == 0) break;
    }
    if (json) {
        fmt::print(
            "{}\n",
            nlohmann::json{
                {"schema_version", 1}, {"image", image}, {"what", "dir"}, {"path", path}, {"entries", out}}
                .dump(2));
    }
    return kExitOk;
}

int dump_extents(const fat::Volume& v, const std::string& image, const std::string& path, bool json) {
    const auto r = v.lookup(path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", path, image));
    const std::uint32_t start = v.first_cluster(*r);
    const fat::Chain c = start == 0 ? fat::Chain{} : v.follow_chain(start, v.entry_count());
    const std::uint32_t cb = v.cluster_bytes();
    if (json) {
        fmt::print("{}\n", nlohmann::json{{"schema_version", 1},
                                          {"image", image},
                                          {"what", "extents"},
                                          {"path", path},
                                          {"size", r->entry.file_size},
                                          {"first_cluster", start},
                                          {"cluster_bytes", cb},
                                          {"clusters", c.clusters},
                                          {"end", start == 0 ? "no clusters" : std::string(end_text(c.end))},
                                          {"runs", extent_runs_json(v, c.runs)}}
                               .dump(2));
        return kExitOk;
    }
    fmt::print("{}: {} ({} bytes), first cluster {}, {} clusters of {} bytes, {}\n", image, escape_name(path),
               r->entry.file_size, start, c.clusters, cb, start == 0 ? "no clusters" : end_text(c.end));
    print_extent_runs(v, c.runs);
    return kExitOk;
}

}  // namespace

int dump_fat_view(const std::vector<std::string>& what, const std::string& image,
                  const io::BlockDevice& volume, bool json) {
    const std::string& kind = what[0];
    check_view_what(what, "fat", "bitmap",
                    "a FAT volume has no allocation bitmap (its FAT records allocation); use --what fat");
    const fat::Volume v(volume);
    if (kind == "fat") return dump_fat(v, image, json);
    if (kind == "dir") return dump_dir(v, image, what[1], json);
    return dump_extents(v, image, what[1], json);
}

}  // namespace fsimg::cli
