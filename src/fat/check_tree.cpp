// Pass 3: the directory tree. Every chain is claimed for its owner in walk
// order; a cluster claimed twice is a cross-link (another owner) or a loop
// (the same chain), told apart by the bitmap of the chain being walked.
#include <algorithm>
#include <unordered_map>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/walk.hpp"

namespace fsimg::fat::detail {

namespace {

struct Claim {
    std::uint64_t clusters = 0;
    bool broken = false;           ///< a problem was reported; size checks are skipped
    std::vector<ClusterRun> runs;  ///< kept for directories, up to the directory size limit
    /// Where fsck -y ends a chain that breaks (a link to a free cluster or
    /// to no cluster, a bad cluster, a loop), as fsck.fat does: the last
    /// cluster before the break (its entry becomes end-of-chain), or 0 when
    /// the break is at the start (the entry's first cluster becomes 0).
    /// nullopt when the chain is whole, or broken in another way (a cross-link).
    std::optional<std::uint32_t> cut;
    std::string_view cut_code;  ///< the finding the cut answers
};

void note_cross_link(Context& c, std::uint32_t cluster, const std::string& path, bool is_dir) {
    ++c.cross_link_count;
    if (c.cross_links.size() < kMaxCrossLinks) c.cross_links.push_back(CrossLink{cluster, path, {}, is_dir});
}

// Claims the chain starting at `start` for `path`. Reports start problems,
// loops, links into free clusters, invalid links, bad clusters and
// cross-links, once each, at the cluster where they are.
Claim claim_chain(Context& c, std::uint32_t start, const std::string& path, bool is_dir) {
    Claim r;
    Volume& v = *c.vol;
    const bool quiet = c.resolving;
    auto report = [&](std::string_view code, std::uint32_t cl, std::string msg) {
        r.broken = true;
        if (!quiet) c.out.add(code, at_cluster(c, cl, path), std::move(msg));
    };
    if (!v.is_cluster(start)) {
        r.cut_code = "fat.file.start-out-of-range";
        r.cut = 0;
        report("fat.file.start-out-of-range", start,
               fmt::format("{} starts at cluster {}, outside the volume's clusters 2..{}",
                           is_dir ? "the directory" : "the file", start, v.max_cluster()));
        return r;
    }
    if (v.fat_entry(start) == 0) {
        r.cut_code = "fat.file.start-free";
        r.cut = 0;
        report("fat.file.start-free", start,
               fmt::format("{} starts at cluster {}, which is free in the FAT",
                           is_dir ? "the directory" : "the file", start));
        return r;
    }
    const std::uint64_t keep =
        is_dir ? core::div_ceil(std::uint64_t(kMaxDirEntries) * kDirEntrySize, v.cluster_bytes()) : 0;
    std::uint32_t cur = start;
    std::uint32_t prev = 0;  // the cluster before cur (0: cur is the start)
    while (true) {
        if (c.owned.test(cur)) {
            if (c.walking.test(cur)) {
                r.cut_code = "fat.chain.loop";
                r.cut = prev;
                report("fat.chain.loop", cur,
                       fmt::format("the chain loops back to cluster {} after {} clusters", cur, r.clusters));
            } else {
                r.broken = true;
                r.cut_code = "fat.chain.cross-link";
                r.cut = prev;  // the second owner ends before the shared clusters, as fsck.fat truncates it
                if (!quiet) note_cross_link(c, cur, path, is_dir);
            }
            break;
        }
        c.owned.set(cur);
        c.walking.set(cur);
        if (c.resolving && c.first_owner) {
            auto it = c.first_owner->find(cur);
            if (it != c.first_owner->end() && it->second.empty()) it->second = path;
        }
        if (r.clusters < keep) {
            if (!r.runs.empty() && r.runs.back().first + r.runs.back().count == cur) {
                ++r.runs.back().count;
            } else {
                r.runs.push_back(ClusterRun{cur, 1});
            }
        }
        ++r.clusters;
        const std::uint32_t next = v.fat_entry(cur);
        const EntryKind k = v.classify(next);
        if (k == EntryKind::end) break;
        if (k == EntryKind::bad) {
            r.cut_code = "fat.chain.bad-cluster";
            r.cut = prev;
            report(
                "fat.chain.bad-cluster", cur,
                fmt::format("cluster {} (number {} of the chain) is marked bad in the FAT", cur, r.clusters));
            break;
        }
        if (k == EntryKind::invalid || k == EntryKind::free) {
            r.cut_code = "fat.chain.out-of-range";
            r.cut = cur;
            report(
                "fat.chain.out-of-range", cur,
                fmt::format("FAT entry {} (number {} of the chain) holds 0x{:X}, not a cluster (2..{}) or an "
                            "end-of-chain mark",
                            cur, r.clusters, next, v.max_cluster()));
            break;
        }
        if (v.fat_entry(next) == 0) {
            r.cut_code = "fat.chain.free-link";
            r.cut = cur;
            report("fat.chain.free-link", cur,
                   fmt::format("FAT entry {} (number {} of the chain) links to cluster {}, which is free",
                               cur, r.clusters, next));
            break;
        }
        prev = cur;
        cur = next;
    }
    // Forget the walk marks: re-walk the same clusters.
    cur = start;
    for (std::uint64_t i = 0; i < r.clusters; ++i) {
        c.walking.reset(cur);
        cur = v.fat_entry(cur);
        if (!v.is_cluster(cur)) break;
    }
    return r;
}

struct SubDir {
    std::string path;
    std::uint32_t cluster;
    std::vector<ClusterRun> runs;
    std::uint64_t chain_clusters;  ///< the whole chain, also past the kept runs
};

std::string list_indices(const std::vector<std::uint32_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < kFirstLocations; ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    if (v.size() > kFirstLocations) s += ", ...";
    return s;
}

void report_lfn_anomalies(Context& c, const std::string& path, std::uint32_t first_cluster,
                          const ParsedDirectory& d) {
    struct Agg {
        std::uint64_t count = 0;
        std::vector<std::uint32_t> at;
    };
    Agg agg[3];
    for (const auto& a : d.anomalies) {
        Agg& g = agg[static_cast<int>(a.kind)];
        ++g.count;
        g.at.push_back(a.index);
    }
    static constexpr const char* codes[3] = {"fat.lfn.orphan", "fat.lfn.checksum", "fat.lfn.sequence"};
    static constexpr const char* what[3] = {"long-name entries not followed by their short entry",
                                            "long names whose checksum does not match their short entry",
                                            "long-name entries out of sequence"};
    for (int k = 0; k < 3; ++k) {
        if (agg[k].count == 0) continue;
        c.out.add(codes[k], at_cluster(c, first_cluster, path),
                  fmt::format("{} set{} of {} (at entr{} {})", agg[k].count, agg[k].count == 1 ? "" : "s",
                              what[k], agg[k].at.size() == 1 ? "y" : "ies", list_indices(agg[k].at)),
                  agg[k].count);
    }
}

class Walker {
public:
    explicit Walker(Context& c) : c_(c), v_(*c.vol) {}

    void run() {
        std::vector<ClusterRun> root_runs;
        std::uint64_t root_clusters = 0;
        const std::uint32_t root = v_.root_cluster();
        if (root != 0) {
            Claim cl = claim_chain(c_, root, "/", true);
            if (cl.cut && *cl.cut != 0 && c_.options.cuts)
                c_.options.cuts->push_back(ChainCut{*cl.cut, 0, cl.cut_code});
            root_runs = std::move(cl.runs);
            root_clusters = cl.clusters;
        }
        ++c_.summary.directories;
        if (c_.options.on_walk && !c_.resolving) c_.options.on_walk("/");
        std::vector<std::uint32_t> ancestors;
        walked_.enter(root, "/");
        walk("/", root, 0, root_runs, root_clusters, ancestors, 0);
    }

private:
    core::VisitedDirectories walked_;  ///< every directory walked, by first cluster

    bool read_dir(const std::string& path, std::uint32_t cluster, const std::vector<ClusterRun>& runs,
                  std::vector<std::byte>& bytes) {
        const Layout& l = c_.layout();
        try {
            if (cluster == 0) {
                bytes = v_.read_directory_bytes(0);
                return true;
            }
            bytes.clear();
            std::vector<std::byte> buf(v_.cluster_bytes());
            for (const auto& r : runs) {
                for (std::uint32_t i = 0; i < r.count; ++i) {
                    v_.read_cluster(r.first + i, buf);
                    bytes.insert(bytes.end(), buf.begin(), buf.end());
                }
            }
            return true;
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            if (!c_.resolving) {
                c_.walk_complete = false;
                c_.out.add(
                    "fat.dir.unreadable",
                    cluster ? at_cluster(c_, cluster, path)
                            : at_sector(l.first_root_dir_sector, l.bytes_per_sector, path),
                    fmt::format("the directory cannot be read: {}; what lies below is not checked, nor "
                                "counted as lost",
                                e.what()));
            }
            return false;
        }
    }

    void walk(const std::string& path, std::uint32_t cluster, std::uint32_t parent,
              const std::vector<ClusterRun>& runs, std::uint64_t chain_clusters,
              std::vector<std::uint32_t>& ancestors, unsigned depth) {
        std::vector<std::byte> bytes;
        if (!read_dir(path, cluster, runs, bytes)) return;
        ParsedDirectory d = parse_directory(bytes);
        // The kept runs stop at the size limit: the chain's length decides.
        const std::uint64_t dir_bytes = cluster != 0 ? chain_clusters * v_.cluster_bytes() : bytes.size();
        const bool over_limit = !d.end_marker && dir_bytes > std::uint64_t(kMaxDirEntries) * kDirEntrySize;
        bytes.clear();
        bytes.shrink_to_fit();
        const bool is_root = path == "/";
        const bool quiet = c_.resolving;
        if (d.after_end_entries != 0) {
            if (!quiet) report_after_end(path, cluster, d);
            // The Linux vfat driver shows what stands there: it is checked
            // (names, chains, loops) and owns its clusters like the rest.
            for (auto& r : d.after_end) d.records.push_back(std::move(r));
            d.anomalies.insert(d.anomalies.end(), d.after_end_anomalies.begin(), d.after_end_anomalies.end());
            d.after_end.clear();
        }
        if (!quiet) {
            report_lfn_anomalies(c_, path, cluster, d);
            if (c_.options.lfn_fixes) {
                static constexpr std::string_view codes[3] = {"fat.lfn.orphan", "fat.lfn.checksum",
                                                              "fat.lfn.sequence"};
                for (const LfnAnomaly& a : d.anomalies) {
                    LfnFix f{path, codes[static_cast<int>(a.kind)], {}};
                    bool whole = true;
                    for (std::uint64_t i = a.first; i < std::uint64_t(a.first) + a.entries && whole; ++i) {
                        const auto at = entry_offset(cluster, runs, static_cast<std::uint32_t>(i));
                        if (at) f.entries.push_back(*at);
                        whole = at.has_value();
                    }
                    if (whole && !f.entries.empty()) c_.options.lfn_fixes->push_back(std::move(f));
                }
            }
            if (over_limit) {
                c_.out.add("fat.dir.too-large", at_cluster(c_, cluster, path),
                           fmt::format("the directory's chain holds more than {} entries", kMaxDirEntries));
            }
            check_names(c_, path, d);
            if (c_.options.names) {
                for (auto& [r, f] : short_name_fixes(path, d)) {
                    bool whole = true;
                    for (std::uint32_t i = r->first_index; i <= r->index && whole; ++i) {
                        const auto at = entry_offset(cluster, runs, i);
                        if (at) f.entries.push_back(*at);
                        whole = at.has_value();
                    }
                    if (whole) c_.options.names->push_back(std::move(f));
                }
            }
            if (is_root) check_labels(c_, d);
            if (c_.options.label_fixes) {
                for (LabelRepair& r : label_repairs(c_, d, is_root)) {
                    LabelFix f{r.code, {}, r.boot_label};
                    bool whole = true;
                    for (const std::uint32_t i : r.indices) {
                        const auto at = entry_offset(cluster, runs, i);
                        if (at) f.entries.push_back(*at);
                        whole = whole && at.has_value();
                    }
                    if (whole) c_.options.label_fixes->push_back(std::move(f));
                }
            }
            if (!is_root) check_dots(path, cluster, parent, d);
            if (!is_root && c_.options.dots) note_dot_fix(path, cluster, parent, runs, d);
        }
        ancestors.push_back(cluster);
        std::vector<SubDir> subdirs;
        for (const auto& r : d.records) {
            if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
            const std::string p = child_path(path, r.name);
            const std::uint32_t start = v_.first_cluster(r);
            if (r.kind == RecordKind::file) {
                ++c_.summary.files;
                if (c_.options.on_walk && !quiet) c_.options.on_walk(p);
                check_file(p, r, start, entry_offset(cluster, runs, r.index));
                continue;
            }
            ++c_.summary.directories;
            if (c_.options.on_walk && !quiet) c_.options.on_walk(p + "/");
            if (r.entry.file_size != 0 && !quiet) {
                c_.out.add(
                    "fat.dir.nonzero-size", at_cluster(c_, start, p),
                    fmt::format("the directory entry has DIR_FileSize {}, must be 0", r.entry.file_size));
            }
            if (start == 0) {
                if (!quiet) {
                    c_.out.add("fat.dir.no-cluster", check::Location{{}, {}, {}, p},
                               "the directory entry has first cluster 0: the directory has no clusters");
                }
                continue;
            }
            if (std::find(ancestors.begin(), ancestors.end(), start) != ancestors.end() ||
                (start == v_.root_cluster() && start != 0)) {
                if (!quiet) {
                    c_.out.add(
                        "fat.dir.loop", at_cluster(c_, start, p),
                        fmt::format("the directory's first cluster {} is that of {}, so the tree loops",
                                    start, start == cluster ? "the directory holding it" : "an ancestor"));
                }
                continue;
            }
            // Each directory once (a visited set, not only the ancestors). A
            // second entry for a walked directory shares its chain: the claim
            // reports that cross-link (one root cause, one finding), and the
            // directory is not walked again.
            const bool again = !walked_.enter(start, p);
            Claim cl = claim_chain(c_, start, p, true);
            if (cl.cut && *cl.cut != 0 && c_.options.cuts && !c_.resolving)
                c_.options.cuts->push_back(ChainCut{*cl.cut, 0, cl.cut_code});
            if (!again && cl.clusters > 0 && !cl.broken)
                subdirs.push_back(SubDir{p, start, std::move(cl.runs), cl.clusters});
        }
        if (depth + 1 >= kMaxDepth && !subdirs.empty()) {
            if (!quiet) {
                c_.walk_complete = false;
                c_.out.add(
                    "fat.dir.too-deep", at_cluster(c_, cluster, path),
                    fmt::format("directories nest deeper than {} levels; the walk stops here (clusters "
                                "below are not checked, nor counted as lost)",
                                kMaxDepth));
            }
        } else {
            for (const auto& s : subdirs)
                walk(s.path + "/", s.cluster, cluster, s.runs, s.chain_clusters, ancestors, depth + 1);
        }
        ancestors.pop_back();
    }

    /// Entries after the 0x00 end-of-directory marker: the specification
    /// says none follow it [FATGEN "FAT Directory Structure", DIR_Name[0] ==
    /// 0x00], so Windows and mtools stop there, while the Linux vfat driver
    /// takes a 0x00 entry for a free one and reads on (fs/fat/dir.c IS_FREE).
    void report_after_end(const std::string& path, std::uint32_t cluster, const ParsedDirectory& d) {
        const std::uint32_t n = d.after_end_entries;
        std::string shown = "none of them is a file or directory";
        std::size_t files = 0;
        const DirRecord* first = nullptr;
        for (const auto& r : d.after_end) {
            if (r.kind == RecordKind::dot || r.kind == RecordKind::dotdot) continue;
            ++files;
            if (!first) first = &r;
        }
        if (first) {
            const char* kind = first->kind == RecordKind::directory      ? "directory"
                               : first->kind == RecordKind::volume_label ? "volume label"
                               : first->kind == RecordKind::file         ? "file"
                                                                         : "entry";
            shown = fmt::format(
                "the Linux vfat driver reads on and shows {} entr{}, the first the {} \"{}\" "
                "(entry {})",
                files, files == 1 ? "y" : "ies", kind, core::escape_name(first->name), first->index);
        }
        c_.out.add("fat.dir.entry-after-end", at_cluster(c_, cluster, path),
                   fmt::format("{} entr{} in use after the end-of-directory marker (entry {}), the first at "
                               "entry {}; readers that stop at the marker do not see {}, {}",
                               n, n == 1 ? "y" : "ies", d.entries_scanned, d.after_end_first,
                               n == 1 ? "it" : "them", shown),
                   n);
    }

    /// The volume byte offset of entry `index` of the directory at `cluster`
    /// (0: the FAT12/16 root region) whose chain is `runs`; nullopt past them.
    std::optional<std::uint64_t> entry_offset(std::uint32_t cluster, const std::vector<ClusterRun>& runs,
                                              std::uint32_t index) const {
        const Layout& l = c_.layout();
        const std::uint64_t at = std::uint64_t(index) * kDirEntrySize;
        if (cluster == 0) return std::uint64_t(l.first_root_dir_sector) * l.bytes_per_sector + at;
        std::uint64_t k = at / v_.cluster_bytes();
        for (const ClusterRun& r : runs) {
            if (k < r.count)
                return l.cluster_offset(r.first + static_cast<std::uint32_t>(k)) + at % v_.cluster_bytes();
            k -= r.count;
        }
        return std::nullopt;
    }

    void check_file(const std::string& p, const DirRecord& r, std::uint32_t start,
                    std::optional<std::uint64_t> entry_at) {
        const std::uint64_t size = r.entry.file_size;
        const std::uint64_t need = core::div_ceil(size, v_.cluster_bytes());
        if (start == 0) {
            if (size != 0 && !c_.resolving) {
                c_.out.add("fat.chain.too-short", check::Location{{}, {}, {}, p},
                           fmt::format("the file's size is {} bytes but it has no clusters (first cluster 0)",
                                       size));
                if (c_.options.sizes && entry_at) c_.options.sizes->push_back(SizeTrim{*entry_at, 0});
            }
            return;
        }
        const Claim cl = claim_chain(c_, start, p, false);
        if (cl.cut && c_.options.cuts && !c_.resolving && (*cl.cut != 0 || entry_at))
            c_.options.cuts->push_back(ChainCut{*cl.cut, *cl.cut == 0 ? *entry_at : 0, cl.cut_code});
        if (cl.broken || c_.resolving) return;
        if (cl.clusters < need && c_.options.sizes && entry_at) {
            c_.options.sizes->push_back(
                SizeTrim{*entry_at, static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                        cl.clusters * v_.cluster_bytes(), 0xFFFFFFFFull))});
        } else if (cl.clusters > need && c_.options.trims && entry_at) {
            c_.options.trims->push_back(ChainTrim{start, need, *entry_at});
        }
        if (cl.clusters < need) {
            c_.out.add(
                "fat.chain.too-short", at_cluster(c_, start, p),
                fmt::format("the file's size is {} bytes, which needs {} clusters, but its chain has {}",
                            size, need, cl.clusters));
        } else if (cl.clusters > need) {
            c_.out.add(
                "fat.chain.too-long", at_cluster(c_, start, p),
                fmt::format("the file's size is {} bytes, which needs {} cluster{}, but its chain has {}",
                            size, need, need == 1 ? "" : "s", cl.clusters));
        }
    }

    // One finding per dot entry kind: missing, misplaced, repeated or pointing elsewhere.
    /// CheckOptions::dots: what check_dots wants, when there is one "." and
    /// one ".." to put there (missing or doubled ones are left).
    void note_dot_fix(const std::string& path, std::uint32_t cluster, std::uint32_t parent,
                      const std::vector<ClusterRun>& runs, const ParsedDirectory& d) {
        const DirRecord *dot = nullptr, *dotdot = nullptr;
        for (const auto& r : d.records) {
            const DirRecord** slot = r.kind == RecordKind::dot      ? &dot
                                     : r.kind == RecordKind::dotdot ? &dotdot
                                                                    : nullptr;
            if (!slot) continue;
            if (*slot) return;  // twice
            *slot = &r;
        }
        if (!dot || !dotdot) return;
        DotFix f;
        f.path = path;
        f.dot = dot->index;
        f.dotdot = dotdot->index;
        f.dot_cluster = cluster;
        f.dotdot_cluster = parent == v_.root_cluster() ? 0 : parent;
        f.slots = std::max(f.dot, f.dotdot) + 1;
        f.moved = f.dot != 0 || f.dotdot != 1;
        const std::uint32_t got_dotdot = v_.first_cluster(*dotdot);
        const bool dotdot_ok =
            got_dotdot == f.dotdot_cluster || (f.dotdot_cluster == 0 && got_dotdot == v_.root_cluster());
        f.dot_wrong = f.dot != 0 || v_.first_cluster(*dot) != f.dot_cluster;
        f.dotdot_wrong = f.dotdot != 1 || !dotdot_ok;
        if (!f.dot_wrong && !f.dotdot_wrong) return;
        if (dotdot_ok) f.dotdot_cluster = got_dotdot;  // the FAT32 root's number some writers store is kept
        const auto first = entry_offset(cluster, runs, 0), last = entry_offset(cluster, runs, f.slots - 1);
        if (!first || !last || *last != *first + std::uint64_t(f.slots - 1) * kDirEntrySize) return;
        f.offset = *first;
        c_.options.dots->push_back(std::move(f));
    }

    void check_dots(const std::string& path, std::uint32_t cluster, std::uint32_t parent,
                    const ParsedDirectory& d) {
        const std::uint32_t want_parent = parent == v_.root_cluster() ? 0 : parent;
        for (int k = 0; k < 2; ++k) {
            const RecordKind kind = k == 0 ? RecordKind::dot : RecordKind::dotdot;
            const char* name = k == 0 ? "\".\"" : "\"..\"";
            const std::uint32_t want_index = static_cast<std::uint32_t>(k);
            std::vector<const DirRecord*> found;
            for (const auto& r : d.records) {
                if (r.kind == kind) found.push_back(&r);
            }
            std::string problem;
            if (found.empty()) {
                problem =
                    fmt::format("the directory has no {} entry (expected as entry {})", name, want_index);
            } else if (found.size() > 1) {
                problem =
                    fmt::format("the directory has {} {} entries (entries {}, {}{})", found.size(), name,
                                found[0]->index, found[1]->index, found.size() > 2 ? ", ..." : "");
            } else if (found[0]->first_index != want_index) {
                problem =
                    fmt::format("{} is entry {}, expected entry {}", name, found[0]->first_index, want_index);
            } else {
                const std::uint32_t got = v_.first_cluster(*found[0]);
                const std::uint32_t want = k == 0 ? cluster : want_parent;
                // ".." of a child of the root is 0, even on FAT32 [FATGEN]; some
                // writers store the FAT32 root cluster, which drivers accept.
                if (got != want && !(k == 1 && want == 0 && got == v_.root_cluster())) {
                    problem = fmt::format("{} points to cluster {}, expected {}{}", name, got, want,
                                          k == 0      ? " (the directory's own)"
                                          : want == 0 ? " (the parent is the root)"
                                                      : " (the parent)");
                }
            }
            if (!problem.empty()) {
                c_.out.add(k == 0 ? "fat.dir.dot" : "fat.dir.dotdot", at_cluster(c_, cluster, path), problem);
            }
        }
    }

    Context& c_;
    Volume& v_;
};

}  // namespace

std::string child_path(const std::string& dir_path, const std::string& name) {
    return dir_path + (name.empty() ? std::string("<empty name>") : name);
}

void check_tree(Context& c) {
    if (!c.root_ok) return;
    Walker(c).run();
    if (c.cross_links.empty()) return;
    // Name the first owners: walk again, silently, recording who claims each
    // cross-linked cluster first.
    std::unordered_map<std::uint32_t, std::string> owners;
    for (const auto& x : c.cross_links) owners.emplace(x.cluster, std::string());
    Context again(c.device, c.out, c.options);
    again.boot = c.boot;
    again.vol = std::make_unique<Volume>(c.device, c.boot);
    again.owned = Bitmap(c.vol->entry_count());
    again.walking = Bitmap(c.vol->entry_count());
    again.resolving = true;
    again.first_owner = &owners;
    Walker(again).run();
    for (auto& x : c.cross_links) {
        x.first = owners[x.cluster];
        check::Location loc = at_cluster(c, x.cluster, x.second);
        loc.other_owner = x.first;
        c.out.add("fat.chain.cross-link", std::move(loc),
                  fmt::format("{} and {} share cluster {} and the rest of its chain", x.second,
                              x.first.empty() ? "another owner" : x.first, x.cluster));
    }
    if (c.cross_link_count > c.cross_links.size()) {
        c.out.add("fat.chain.cross-link", check::Location{},
                  fmt::format("{} more cross-linked chains are not listed one by one",
                              c.cross_link_count - c.cross_links.size()),
                  c.cross_link_count - c.cross_links.size());
    }
}

}  // namespace fsimg::fat::detail
