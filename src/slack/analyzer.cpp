// The single pass: per-file and per-directory charges for every filesystem x
// cluster size. Every rule comes from the filesystems' cost headers.
#include "fsimg/slack/analyzer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/fat/cost.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/ntfs/cost.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/source/tree.hpp"

namespace fsimg::slack {

std::string_view to_string(Fs fs) noexcept {
    switch (fs) {
        case Fs::fat32:
            return "FAT32";
        case Fs::exfat:
            return "exFAT";
        case Fs::ntfs:
            return "NTFS";
    }
    return "?";
}

std::optional<Fs> parse_fs(std::string_view text) noexcept {
    std::string t(text);
    for (char& c : t) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    if (t == "fat32" || t == "fat") return Fs::fat32;
    if (t == "exfat") return Fs::exfat;
    if (t == "ntfs") return Fs::ntfs;
    return std::nullopt;
}

ShiftRange cluster_range(Fs fs) noexcept {
    switch (fs) {
        case Fs::fat32:
            return {kMinShift, core::log2_floor(fat::kMaxClusterBytes)};
        case Fs::exfat:
            return {kMinShift, core::log2_floor(exfat::kMaxClusterBytes)};
        case Fs::ntfs:
            return {kMinShift, core::log2_floor(ntfs::kMaxClusterBytes)};
    }
    return {};
}

void add_example(std::vector<Problem>& list, Problem p, std::size_t max_examples) {
    if (max_examples == 0) return;
    if (list.size() >= max_examples && !(p.path < list.back().path)) return;
    auto it = std::upper_bound(list.begin(), list.end(), p,
                               [](const Problem& a, const Problem& b) { return a.path < b.path; });
    list.insert(it, std::move(p));
    if (list.size() > max_examples) list.pop_back();
}

namespace {

/// The storage rules populate applies on `fs` (each filesystem's tree_rules).
const source::TreeRules& tree_rules(Fs fs) {
    switch (fs) {
        case Fs::fat32:
            return fat::tree_rules();
        case Fs::exfat:
            return exfat::tree_rules();
        case Fs::ntfs:
            break;
    }
    return ::fsimg::ntfs::tree_rules();
}

bool top_less(const TopDirectory& a, const TopDirectory& b) {
    // min-heap on slack; ties broken by path so results are deterministic
    if (a.slack_bytes != b.slack_bytes) return a.slack_bytes > b.slack_bytes;
    return a.path < b.path;
}

void offer_top(std::vector<TopDirectory>& heap, TopDirectory d, std::size_t n) {
    if (n == 0) return;
    if (heap.size() < n) {
        heap.push_back(std::move(d));
        std::push_heap(heap.begin(), heap.end(), top_less);
    } else if (top_less(d, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), top_less);
        heap.back() = std::move(d);
        std::push_heap(heap.begin(), heap.end(), top_less);
    }
}

constexpr std::uint32_t cluster_of(std::size_t i) noexcept { return std::uint32_t{1} << (i + kMinShift); }

}  // namespace

void Tally::merge(Tally&& o, std::size_t max_examples, std::size_t top) {
    for (std::size_t f = 0; f < kFsCount; ++f) {
        FsTally& a = fs[f];
        FsTally& b = o.fs[f];
        for (std::size_t i = 0; i < kShiftCount; ++i) {
            a.data_clusters[i] += b.data_clusters[i];
            a.dir_clusters[i] += b.dir_clusters[i];
            a.sparse_stored[i] += b.sparse_stored[i];
            for (auto& d : b.top[i]) offer_top(a.top[i], std::move(d), top);
        }
        a.files += b.files;
        a.directories += b.directories;
        a.names += b.names;
        a.apparent_bytes += b.apparent_bytes;
        a.resident_files += b.resident_files;
        a.resident_bytes += b.resident_bytes;
        a.sparse_bytes += b.sparse_bytes;
        a.records += b.records;
        a.entry_bytes += b.entry_bytes;
        a.unstorable_files += b.unstorable_files;
        a.unstorable_bytes += b.unstorable_bytes;
        a.unstorable_entries += b.unstorable_entries;
        a.skipped_symlinks += b.skipped_symlinks;
        for (auto& p : b.unstorable) add_example(a.unstorable, std::move(p), max_examples);
        for (auto& p : b.limit_violations) add_example(a.limit_violations, std::move(p), max_examples);
    }
    files += o.files;
    directories += o.directories;
    symlinks += o.symlinks;
    other += o.other;
    apparent_bytes += o.apparent_bytes;
    extra_links += o.extra_links;
    largest_file = std::max(largest_file, o.largest_file);
    for (std::size_t k = 0; k < histogram_files.size(); ++k) {
        histogram_files[k] += o.histogram_files[k];
        histogram_bytes[k] += o.histogram_bytes[k];
    }
    unreadable_count += o.unreadable_count;
    for (auto& p : o.unreadable) add_example(unreadable, std::move(p), max_examples);
}

DirContext DirContext::child(std::string_view name, std::uint8_t child_excluded,
                             std::u16string_view dos_name) const {
    DirContext c;
    c.dos_units = dos_name.size();
    c.path = path == "/" ? "/" + std::string(name) : path + "/" + std::string(name);
    c.depth = depth + 1;
    c.path_bytes = path_bytes + 1 + name.size();
    c.name_units = core::is_valid_utf8(name) ? core::utf8_to_utf16(name).size() : name.size();
    c.excluded = child_excluded;
    return c;
}

DirAccumulator::DirAccumulator(const AnalyzerOptions& options, DirContext context)
    : opt_(&options), ctx_(std::move(context)) {}

void DirAccumulator::unstorable(Tally& t, Fs fs, std::string_view name, std::string reason) {
    FsTally& f = t.fs[std::size_t(fs)];
    ++f.unstorable_entries;
    std::string path = ctx_.path == "/" ? "/" + std::string(name) : ctx_.path + "/" + std::string(name);
    add_example(f.unstorable, {std::move(path), std::move(reason)}, opt_->max_examples);
}

std::vector<std::u16string> DirAccumulator::ntfs_dos_names(std::span<const ListedEntry> listing, bool root) {
    std::vector<std::u16string> names;  // UTF-16 of the stored ones
    std::vector<std::size_t> at;        // their positions in `listing`
    for (std::size_t k = 0; k < listing.size(); ++k) {
        const ListedEntry& e = listing[k];
        if (e.kind != EntryKind::file && e.kind != EntryKind::directory) continue;
        if (!core::is_valid_utf8(e.name)) continue;
        std::u16string n = core::utf8_to_utf16(e.name);
        if (n.empty() || n.size() > exfat::kMaxNameUnits) continue;
        names.push_back(std::move(n));
        at.push_back(k);
    }
    std::vector<::fsimg::ntfs::NameRequest> requests;
    requests.reserve(names.size());
    for (std::size_t j = 0; j < names.size(); ++j)
        requests.push_back({names[j], listing[at[j]].kind == EntryKind::file && listing[at[j]].linked});
    const auto planned = root ? ::fsimg::ntfs::plan_directory_names(requests, ::fsimg::ntfs::kRootSystemNames)
                              : ::fsimg::ntfs::plan_directory_names(requests);
    std::vector<std::u16string> out(listing.size());
    for (std::size_t j = 0; j < planned.size(); ++j) out[at[j]] = planned[j].dos;
    return out;
}

std::uint8_t DirAccumulator::add(Tally& t, std::string_view name, EntryKind kind, std::uint64_t size,
                                 bool first_link, bool linked, std::optional<std::u16string_view> dos_name,
                                 const std::vector<source::Segment>* data) {
    if (kind == EntryKind::other) {
        ++t.other;
        return 0x7;
    }
    const bool is_file = kind == EntryKind::file;
    if (is_file) {
        ++t.files;
        t.apparent_bytes += size;
        if (!first_link) ++t.extra_links;
        t.largest_file = std::max(t.largest_file, size);
        const unsigned bucket = size == 0 ? 0 : unsigned(std::bit_width(size));
        ++t.histogram_files[bucket];
        t.histogram_bytes[bucket] += size;
    } else if (kind == EntryKind::directory) {
        ++t.directories;
    } else {
        ++t.symlinks;
    }

    const bool valid_utf8 = core::is_valid_utf8(name);
    std::u16string dos;  // the DOS name planned alone (when dos_name is not given)
    const std::u16string name16 = valid_utf8 ? core::utf8_to_utf16(name) : std::u16string();
    std::uint8_t excluded = ctx_.excluded;

    // Data clusters per cluster size, shared by the three filesystems.
    std::array<std::uint64_t, kShiftCount> clusters{};
    if (is_file) {
        for (std::size_t i = 0; i < kShiftCount; ++i) {
            const unsigned s = unsigned(i) + kMinShift;
            clusters[i] = (size >> s) + ((size & ((std::uint64_t{1} << s) - 1)) != 0);
        }
    }
    auto charge_data = [&](Fs fs, FsTally& f) {
        const ShiftRange r = cluster_range(fs);
        for (unsigned s = r.min_shift; s <= r.max_shift; ++s) {
            const std::size_t i = s - kMinShift;
            f.data_clusters[i] += clusters[i];
            if (opt_->top) slack_[std::size_t(fs)][i] += (clusters[i] << s) - size;
        }
    };

    for (std::size_t fi = 0; fi < kFsCount; ++fi) {
        const Fs fs = Fs(fi);
        const std::uint8_t bit = fs_bit(fs);
        if (!(opt_->fs_mask & bit)) continue;
        FsTally& f = t.fs[fi];
        if (ctx_.excluded & bit) {  // below a refused directory
            if (is_file) {
                ++f.unstorable_files;
                f.unstorable_bytes += size;
            }
            continue;
        }
        // Symbolic links are skipped by populate on every filesystem (NTFS:
        // its default, --symlinks skip).
        if (kind == EntryKind::symlink) {
            ++f.skipped_symlinks;
            excluded |= bit;
            continue;
        }
        // The rules populate applies (source::check_tree), asked per entry.
        const source::TreeRules& rules = tree_rules(fs);
        std::optional<std::string> problem;
        auto reasons = source::entry_problems(rules, name, is_file, size, ctx_.depth + 1,
                                              ctx_.path_bytes + 1 + name.size(), ctx_.path_bytes);
        if (!reasons.empty()) {
            problem = std::move(reasons.front());
        } else if (!case_keys_[fi].insert(rules.case_key(name16)).second) {
            problem = fmt::format("differs only in letter case from an earlier name ({})", rules.case_note);
        }
        if (problem) {
            excluded |= bit;
            unstorable(t, fs, name, std::move(*problem));
            if (is_file) {
                ++f.unstorable_files;
                f.unstorable_bytes += size;
            }
            continue;
        }

        ++f.names;
        if (fs == Fs::fat32) {
            const std::uint32_t n = fat::name_entry_count(name16);
            entries_[fi] += n;
            f.entry_bytes += 32ull * n;
        } else if (fs == Fs::exfat) {
            const std::uint32_t n = exfat::entry_set_entries(name16.size());
            entries_[fi] += n;
            f.entry_bytes += 32ull * n;
        } else {
            const std::uint32_t b = ntfs::index_entry_bytes(name16.size());
            entries_[fi] += b;
            ntfs_entries_.emplace_back(name16, b);
            f.entry_bytes += b;
            if (!dos_name) {  // planned alone
                const ListedEntry alone{name, kind, linked};
                dos = ntfs_dos_names({&alone, 1}, ctx_.is_root()).front();
                dos_name = dos;
            }
            if (!dos_name->empty()) {
                const std::uint32_t d = ntfs::index_entry_bytes(dos_name->size());
                entries_[fi] += d;
                ntfs_entries_.emplace_back(std::u16string(*dos_name), d);
                f.entry_bytes += d;
            }
        }
        if (kind == EntryKind::directory) {
            ++f.directories;
            if (fs == Fs::ntfs) ++f.records;
            continue;
        }
        if (fs == Fs::ntfs) {
            if (!first_link) continue;  // one record and one copy of the data
            ++f.records;
            ++f.files;
            f.apparent_bytes += size;
            if (linked ? size == 0
                       : size <= ntfs::resident_limit_1k(name16.size(), dos_name ? dos_name->size() : 0)) {
                ++f.resident_files;
                f.resident_bytes += size;
                continue;
            }
            if (data != nullptr && !linked) {  // stored sparse as populate does (ntfs::sparse_data_vcns)
                const std::uint64_t room = ::fsimg::ntfs::sparse_runlist_room(
                    ntfs::kRecordBytes, name16.size(), dos_name ? dos_name->size() : 0);
                std::array<std::uint64_t, kShiftCount> sparse = clusters;
                const ShiftRange r = cluster_range(fs);
                for (unsigned s = r.min_shift; s <= r.max_shift; ++s) {
                    const auto vcns =
                        ::fsimg::ntfs::sparse_data_vcns(*data, size, std::uint32_t{1} << s, room);
                    if (!vcns) continue;
                    std::uint64_t c = 0;
                    for (const auto& v : *vcns) c += v.clusters;
                    sparse[s - kMinShift] = c;
                }
                f.sparse_bytes += size;
                for (unsigned s = r.min_shift; s <= r.max_shift; ++s) {
                    const std::size_t i = s - kMinShift;
                    f.data_clusters[i] += sparse[i];
                    f.sparse_stored[i] += std::min(size, sparse[i] << s);
                    if (opt_->top)
                        slack_[std::size_t(fs)][i] += (sparse[i] << s) - std::min(size, sparse[i] << s);
                }
                continue;
            }
            charge_data(fs, f);
            continue;
        }
        ++f.files;
        f.apparent_bytes += size;
        charge_data(fs, f);
    }
    if (is_file) ++files_;
    return excluded;
}

void DirAccumulator::finish(Tally& t) {
    for (std::size_t fi = 0; fi < kFsCount; ++fi) {
        const Fs fs = Fs(fi);
        const std::uint8_t bit = fs_bit(fs);
        if (!(opt_->fs_mask & bit) || (ctx_.excluded & bit)) continue;
        FsTally& f = t.fs[fi];
        const ShiftRange r = cluster_range(fs);
        const bool root = ctx_.is_root();
        std::uint64_t entries = entries_[fi];
        if (fs == Fs::fat32) {
            if (!root) entries = fat::subdirectory_entries(entries);
            if (entries > fat::kMaxDirectoryEntries) {
                add_example(f.limit_violations,
                            {ctx_.path, fmt::format("needs {} directory entries; a FAT directory holds at "
                                                    "most {}",
                                                    core::format_count(entries),
                                                    core::format_count(fat::kMaxDirectoryEntries))},
                            opt_->max_examples);
            }
        } else if (fs == Fs::exfat) {
            if (root) entries += exfat::kRootSystemEntries;
            if (entries * exfat::kEntryBytes > exfat::kMaxDirectoryBytes) {
                add_example(f.limit_violations,
                            {ctx_.path, fmt::format("needs {} of directory entries; an exFAT directory "
                                                    "holds at most 256 MiB",
                                                    core::format_size(entries * exfat::kEntryBytes))},
                            opt_->max_examples);
            }
        }
        ntfs::IndexCost cost;
        if (fs == Fs::ntfs) {
            if (root) {
                for (const std::u16string_view n : ::fsimg::ntfs::kRootSystemNames)
                    ntfs_entries_.emplace_back(std::u16string(n), ntfs::index_entry_bytes(n.size()));
            }
            std::sort(ntfs_entries_.begin(), ntfs_entries_.end(), [](const auto& a, const auto& b) {
                return ::fsimg::ntfs::name_collates_before(a.first, b.first);
            });
            std::vector<std::uint32_t> bytes;
            bytes.reserve(ntfs_entries_.size());
            for (const auto& e : ntfs_entries_) bytes.push_back(e.second);
            ntfs_entries_.clear();
            ntfs_entries_.shrink_to_fit();
            cost = ntfs::index_cost(bytes, ctx_.name_units, ctx_.dos_units, root);
            if (cost.extension_record) ++f.records;
        }
        for (unsigned s = r.min_shift; s <= r.max_shift; ++s) {
            const std::size_t i = s - kMinShift;
            const std::uint32_t c = cluster_of(i);
            std::uint64_t n = 0;
            if (fs == Fs::fat32) {
                n = fat::directory_clusters(entries, c) - (root ? 1 : 0);  // mkfs made the root's first
            } else if (fs == Fs::exfat) {
                n = exfat::directory_clusters(entries, c) - (root ? 1 : 0);
            } else if (cost.blocks > 0) {
                n = ntfs::index_clusters(cost.blocks, c) - (root ? ntfs::index_clusters(1, c) : 0) +
                    (cost.bitmap_bytes + c - 1) / c;
            }
            f.dir_clusters[i] += n;
            if (opt_->top && files_ > 0) {
                offer_top(f.top[i], {ctx_.path, slack_[fi][i], files_}, opt_->top);
            }
        }
    }
}

}  // namespace fsimg::slack
