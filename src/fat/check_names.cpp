// Part of pass 3: names and labels of one directory.
#include <algorithm>
#include <array>
#include <set>
#include <unordered_map>

#include "check_internal.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fat/names.hpp"

namespace fsimg::fat::detail {

namespace {

constexpr std::string_view kShortForbidden = "\"*+,./:;<=>?[\\]|";
constexpr std::u16string_view kLongForbidden = u"\\/:*?\"<>|";

// Why an 11-byte short name (or label) is invalid, or empty when it is valid.
std::string short_name_problem(const std::array<std::uint8_t, 11>& n, bool label) {
    for (std::size_t i = 0; i < 11; ++i) {
        const std::uint8_t b = n[i];
        if (i == 0 && b == 0x05 && !label) continue;
        if (b < 0x20) return fmt::format("byte {} is the control character 0x{:02X}", i, b);
        if (b < 0x80 && kShortForbidden.find(char(b)) != std::string_view::npos) {
            return fmt::format("byte {} is '{}', which short names may not hold", i, char(b));
        }
        if (!label && b >= 'a' && b <= 'z')
            return fmt::format("byte {} is the lower-case letter '{}'", i, char(b));
    }
    if (n[0] == ' ') return label ? "it is empty or starts with a space" : "it starts with a space";
    return {};
}

std::string long_name_problem(const std::u16string& name) {
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char16_t u = name[i];
        if (u < 0x20)
            return fmt::format("character {} is the control character U+{:04X}", i + 1, unsigned(u));
        if (kLongForbidden.find(u) != std::u16string_view::npos) {
            return fmt::format("character {} is '{}', which long names may not hold", i + 1, char(u));
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 1 < name.size() && name[i + 1] >= 0xDC00 && name[i + 1] <= 0xDFFF) {
                ++i;
                continue;
            }
            return fmt::format("character {} is an unpaired UTF-16 surrogate", i + 1);
        }
        if (u >= 0xDC00 && u <= 0xDFFF)
            return fmt::format("character {} is an unpaired UTF-16 surrogate", i + 1);
    }
    if (name.empty()) return "it is empty";
    if (name == u"." || name == u"..")
        return "only the dot entries of a directory may be named \".\" or \"..\"";
    return {};
}

std::string windows_problem(const std::string& name) {
    if (!name.empty() && (name.back() == '.' || name.back() == ' ')) {
        return fmt::format("it ends with '{}', which Windows strips", name.back());
    }
    std::string base = fold_case(name.substr(0, name.find('.')), true);
    while (!base.empty() && base.back() == ' ') base.pop_back();
    static constexpr std::array<std::string_view, 4> devices = {"CON", "PRN", "AUX", "NUL"};
    bool reserved = std::find(devices.begin(), devices.end(), base) != devices.end();
    if (base.size() == 4 && (base.starts_with("COM") || base.starts_with("LPT")) && base[3] >= '1' &&
        base[3] <= '9') {
        reserved = true;
    }
    if (reserved) return fmt::format("\"{}\" is a device name for Windows", base);
    return {};
}

/// A label for a message: OEM bytes decoded (code page 850), trailing spaces dropped.
std::string label_text(const std::string& raw, bool oem = false) {
    std::string s = oem ? oem_text(raw) : raw;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

}  // namespace

void check_names(Context& c, const std::string& dir, const ParsedDirectory& d) {
    const bool is_root = dir == "/";
    std::unordered_map<std::string, const DirRecord*> strict, loose;
    // Long names padded with something else than 0xFFFF after their
    // terminator: one writer's habit, one finding per directory.
    std::uint64_t bad_padding = 0;
    const DirRecord* first_bad_padding = nullptr;
    for (const auto& r : d.records) {
        if (r.has_long_name && r.lfn_padding_bad && r.kind != RecordKind::volume_label && bad_padding++ == 0)
            first_bad_padding = &r;
    }
    // Timestamps with fields out of range: a writer's habit too, one finding
    // per directory naming the first.
    std::uint64_t bad_times = 0;
    std::string first_bad_time;
    for (const auto& r : d.records) {
        if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
        const DirEntry& e = r.entry;
        const std::array<std::pair<const char*, std::string>, 3> fields = {
            std::pair{"DIR_WrtDate/Time", timestamp_problem(e.wrt_date, e.wrt_time)},
            std::pair{"DIR_CrtDate/Time/TimeTenth",
                      timestamp_problem(e.crt_date, e.crt_time, true, e.crt_time_tenth)},
            std::pair{"DIR_LstAccDate", timestamp_problem(e.lst_acc_date, 0, false)}};
        for (const auto& [field, problem] : fields) {
            if (problem.empty()) continue;
            if (bad_times++ == 0) {
                first_bad_time = fmt::format("\"{}\" (entry {}): {} has {}", core::escape_name(r.name),
                                             r.index, field, problem);
            }
        }
    }
    if (bad_times != 0) {
        c.out.add("fat.dir.timestamp", check::Location{{}, {}, {}, dir},
                  fmt::format("{} timestamp{} in {} {} not a valid date and time, the first {}; readers show "
                              "them as invalid (the Linux driver takes a day or month 0 for 1)",
                              bad_times, bad_times == 1 ? "" : "s", dir, bad_times == 1 ? "is" : "are",
                              first_bad_time),
                  bad_times);
    }
    if (first_bad_padding) {
        c.out.add("fat.lfn.padding", check::Location{{}, {}, {}, child_path(dir, first_bad_padding->name)},
                  fmt::format("{} long name{} in {} {} padded after the 0x0000 terminator with other units "
                              "than 0xFFFF (the first: \"{}\", entry {}); Windows and Linux read them, "
                              "7-Zip drops such names",
                              bad_padding, bad_padding == 1 ? "" : "s", dir, bad_padding == 1 ? "is" : "are",
                              core::escape_name(first_bad_padding->name), first_bad_padding->index),
                  bad_padding);
    }
    for (const auto& r : d.records) {
        if (r.kind == RecordKind::invalid_attr) {
            c.out.add("fat.dir.bad-attr", check::Location{{}, {}, {}, child_path(dir, r.name)},
                      fmt::format("entry {} has DIR_Attr 0x{:02X}: directory and volume label at once",
                                  r.index, r.entry.attr));
            continue;
        }
        if (r.kind == RecordKind::volume_label) {
            if (!is_root) {
                c.out.add(
                    "fat.label.outside-root", check::Location{{}, {}, {}, dir},
                    fmt::format("entry {} is a volume label \"{}\", but labels belong in the root directory",
                                r.index, label_text(r.short_name_raw)));
            }
            continue;
        }
        if (r.kind == RecordKind::dot || r.kind == RecordKind::dotdot) {
            if (is_root) {
                c.out.add("fat.dir.dot-in-root", check::Location{{}, {}, {}, "/"},
                          fmt::format("entry {} of the root directory is \"{}\"; the root has no dot entries",
                                      r.index, r.kind == RecordKind::dot ? "." : ".."));
            }
            continue;
        }
        const std::string path = child_path(dir, r.name);
        if (auto p = short_name_problem(r.entry.name, false); !p.empty()) {
            c.out.add("fat.name.invalid-short", check::Location{{}, {}, {}, path},
                      fmt::format("the short name \"{}\" is invalid: {}", r.short_name_raw, p));
        }
        if (r.has_long_name) {
            if (auto p = long_name_problem(r.long_name); !p.empty()) {
                c.out.add("fat.name.invalid-long", check::Location{{}, {}, {}, path},
                          fmt::format("the long name is invalid: {}", p));
            }
        }
        if (auto p = windows_problem(r.name); !p.empty()) {
            c.out.add("compat.name.reserved", check::Location{{}, {}, {}, path},
                      fmt::format("Windows cannot open this name: {}", p));
        }
        // One case-insensitive namespace of long and short names [FATGEN].
        std::array<std::string, 2> keys = {fold_case(r.name, true), fold_case(r.short_name_raw, true)};
        const std::size_t nkeys = keys[0] == keys[1] ? 1 : 2;
        bool dup = false;
        for (std::size_t k = 0; k < nkeys && !dup; ++k) {
            auto [it, fresh] = strict.emplace(keys[k], &r);
            if (!fresh && it->second != &r) {
                dup = true;
                c.out.add("fat.name.duplicate", check::Location{{}, {}, {}, path},
                          fmt::format("entry {} (\"{}\") has the same name as entry {} (\"{}\")", r.index,
                                      r.name, it->second->index, it->second->name));
            }
        }
        if (dup) continue;
        for (std::size_t k = 0; k < nkeys; ++k) {
            auto [it, fresh] = loose.emplace(fold_case(keys[k]), &r);
            if (!fresh && it->second != &r) {
                c.out.add(
                    "compat.name.case-only", check::Location{{}, {}, {}, path},
                    fmt::format("\"{}\" and \"{}\" differ only in the case of non-ASCII letters: Windows "
                                "takes them for the same name",
                                r.name, it->second->name));
                break;
            }
        }
    }
}

std::vector<std::pair<const DirRecord*, NameFix>> short_name_fixes(const std::string& dir_path,
                                                                   const ParsedDirectory& d) {
    std::vector<std::pair<const DirRecord*, NameFix>> out;
    std::set<ShortName> taken, seen;
    // How many entries answer to each name (long and short, case folded): a
    // duplicate whose long name another entry also has is not settled by a
    // new short name, and is left.
    std::unordered_map<std::string, unsigned> names;
    for (const auto& r : d.records) {
        taken.insert(r.entry.name);
        if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
        ++names[fold_case(r.short_name_raw)];
        if (r.has_long_name) ++names[fold_case(r.name)];
    }
    const auto is_taken = [&](const ShortName& n) { return taken.count(n) != 0; };
    unsigned number =
        0;  // fsck.fat's auto_rename: FSCK0000.000, FSCK0000.001, ... first free in the directory
    for (const auto& r : d.records) {
        if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
        const bool invalid = !short_name_problem(r.entry.name, false).empty();
        const bool duplicate = !seen.insert(r.entry.name).second;
        if (!invalid && !(duplicate && (!r.has_long_name || names[fold_case(r.name)] == 1))) continue;
        NameFix f;
        f.duplicate = !invalid;
        f.path = child_path(dir_path, r.name);
        f.old_name = r.short_name_raw;
        bool made = false;
        if (r.has_long_name && long_name_problem(r.long_name).empty()) {
            const ShortName n = generate_short_name(r.long_name, is_taken);
            if (short_name_problem(n, false).empty() && !is_taken(n)) {
                f.name = n;
                f.from_long_name = made = true;
            }
        }
        while (!made && number < 10'000'000) {
            const std::string s = fmt::format("FSCK{:04}{:03}", number / 1000, number % 1000);
            ++number;
            std::copy_n(s.begin(), 11, f.name.begin());
            made = !is_taken(f.name);
        }
        if (!made) continue;
        taken.insert(f.name);
        out.emplace_back(&r, std::move(f));
    }
    return out;
}

std::vector<LabelRepair> label_repairs(const Context& c, const ParsedDirectory& d, bool is_root) {
    std::vector<LabelRepair> out;
    std::vector<const DirRecord*> labels;
    for (const auto& r : d.records)
        if (r.kind == RecordKind::volume_label) labels.push_back(&r);
    if (!is_root) {
        for (const DirRecord* r : labels) out.push_back({"fat.label.outside-root", {r->index}, {}});
        return out;
    }
    const BootSector& bs = c.boot.boot;
    const std::string no_name = "NO NAME    ";
    const bool boot_named = bs.boot_signature == 0x29 && bs.volume_label != no_name;
    if (labels.size() > 1) {
        LabelRepair dup{"fat.label.duplicate", {}, {}};
        for (std::size_t i = 1; i < labels.size(); ++i) dup.indices.push_back(labels[i]->index);
        out.push_back(std::move(dup));
    }
    if (!labels.empty()) {
        std::array<std::uint8_t, 11> name = labels[0]->entry.name;
        if (name[0] == 0x05) name[0] = 0xE5;
        const std::string root(name.begin(), name.end());
        if (!short_name_problem(name, true).empty()) {
            out.push_back({"fat.label.invalid", {labels[0]->index}, boot_named ? no_name : std::string()});
        } else if (bs.boot_signature == 0x29 && bs.volume_label != root) {
            out.push_back({"fat.label.mismatch", {}, root});  // the root's label, which readers show
        }
    } else if (boot_named) {
        std::array<std::uint8_t, 11> name{};
        for (std::size_t i = 0; i < 11 && i < bs.volume_label.size(); ++i)
            name[i] = static_cast<std::uint8_t>(bs.volume_label[i]);
        out.push_back({short_name_problem(name, true).empty() ? "fat.label.mismatch" : "fat.label.invalid",
                       {},
                       no_name});
    }
    return out;
}

void check_labels(Context& c, const ParsedDirectory& root) {
    const BootSector& bs = c.boot.boot;
    const DirRecord* label = nullptr;
    std::size_t labels = 0;
    for (const auto& r : root.records) {
        if (r.kind != RecordKind::volume_label) continue;
        if (labels++ == 0) label = &r;
    }
    const auto root_loc = check::Location{{}, {}, {}, "/ (volume label)"};
    if (labels > 1) {
        c.out.add("fat.label.duplicate", root_loc,
                  fmt::format("the root directory holds {} volume-label entries; the first is \"{}\"", labels,
                              label_text(label->short_name_raw)));
    }
    std::array<std::uint8_t, 11> root_name{};
    if (label) {
        root_name = label->entry.name;
        if (root_name[0] == 0x05) root_name[0] = 0xE5;
        if (auto p = short_name_problem(root_name, true); !p.empty()) {
            c.out.add("fat.label.invalid", root_loc,
                      fmt::format("the root-directory label \"{}\" is invalid: {}",
                                  label_text(label->short_name_raw), p));
            return;
        }
        if (std::any_of(root_name.begin(), root_name.end(),
                        [](std::uint8_t b) { return b >= 'a' && b <= 'z'; })) {
            c.out.add(
                "compat.label.chars", root_loc,
                fmt::format("the label \"{}\" has lower-case letters; Windows stores labels in upper case",
                            label_text(label->short_name_raw)));
        }
    }
    // BS_VolLab is only there when BS_BootSig is 0x29.
    if (bs.boot_signature != 0x29) return;
    const std::string boot = bs.volume_label;
    std::array<std::uint8_t, 11> boot_name{};
    for (std::size_t i = 0; i < 11 && i < boot.size(); ++i) boot_name[i] = static_cast<std::uint8_t>(boot[i]);
    const std::string_view no_name = "NO NAME    ";
    const auto boot_loc = at_sector(0, c.layout().bytes_per_sector, "boot sector BS_VolLab");
    const std::string root_text = label ? std::string(root_name.begin(), root_name.end()) : std::string();
    if (!label) {
        if (boot == no_name) return;
        if (auto p = short_name_problem(boot_name, true); !p.empty()) {
            c.out.add("fat.label.invalid", boot_loc,
                      fmt::format("the boot-sector label \"{}\" is invalid: {} (\"NO NAME\" means no label)",
                                  label_text(boot, true), p));
        } else {
            c.out.add("fat.label.mismatch", boot_loc,
                      fmt::format("the boot sector has the label \"{}\" but the root directory has no "
                                  "volume-label entry; Windows shows no label, Linux shows the boot-sector "
                                  "copy",
                                  label_text(boot, true)));
        }
        return;
    }
    if (root_text == boot) return;
    if (boot == no_name && root_text == no_name) return;
    // Windows format and Explorer write the label to the root directory and
    // may leave BS_VolLab "NO NAME"; the root entry is what Windows, Linux
    // (vfat and blkid) and macOS show, so a differing copy is a note.
    c.out.add("fat.label.mismatch", boot_loc,
              fmt::format("the boot sector's copy of the label is \"{}\"; the root directory's label \"{}\" "
                          "is the one Windows, Linux and macOS show",
                          label_text(boot, true), label_text(root_text, true)));
}

}  // namespace fsimg::fat::detail
