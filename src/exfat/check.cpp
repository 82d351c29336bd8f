// exFAT fsck driver: runs the passes in order; the claim of one allocation
// shared by the passes.
#include "fsimg/exfat/check.hpp"

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::exfat {

namespace detail {

check::Location at_cluster(const Context& c, std::uint32_t cluster, std::string object) {
    check::Location l;
    l.cluster = cluster;
    if (c.vol && c.vol->is_cluster(cluster)) {
        l.byte_offset = c.vol->cluster_offset(cluster);
        l.sector = *l.byte_offset / c.bps();
    }
    l.object = std::move(object);
    return l;
}

std::string clusters_text(const Context& c, std::uint64_t n) {
    return fmt::format("{} cluster{} ({})", core::format_count(n), n == 1 ? "" : "s",
                       core::format_size(n * c.summary.cluster_bytes));
}

std::string first_list(const std::vector<std::uint32_t>& v, std::uint64_t total) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < kFirstLocations; ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    if (total > std::min<std::uint64_t>(v.size(), kFirstLocations)) s += ", ...";
    return s;
}

namespace {

/// Marks the runs owned; a cluster already owned is a cross-link (one per claim).
void mark_owned(Context& c, const std::string& owner, Claim& r) {
    if (!c.ownership) return;
    bool crossed = false;
    std::uint64_t before = 0;  // clusters of the owner before this run
    for (const auto& run : r.runs) {
        // The common case, a run nobody owns yet: 64 clusters per step.
        if (!c.resolving && !c.owned.any(run.first, run.count)) {
            c.owned.set(run.first, run.count);
            before += run.count;
            continue;
        }
        for (std::uint32_t i = 0; i < run.count; ++i) {
            const std::uint32_t cl = run.first + i;
            if (c.resolving) {
                auto it = c.first_owner->find(cl);
                if (it != c.first_owner->end() && it->second.empty()) it->second = owner;
                continue;
            }
            if (c.owned.test(cl)) {
                if (!crossed) {
                    crossed = true;
                    r.broken = true;
                    if (r.code.empty()) r.code = "exfat.chain.cross-link";
                    r.shared_at = before + i;
                    ++c.cross_link_count;
                    if (c.cross_links.size() < kMaxCrossLinks) c.cross_links.push_back({cl, owner, {}});
                }
                continue;
            }
            c.owned.set(cl);
        }
        before += run.count;
    }
}

}  // namespace

Claim claim(Context& c, const std::string& owner, std::uint32_t first, std::uint64_t length,
            bool no_fat_chain, bool check_size) {
    Claim r;
    const Volume& v = *c.vol;
    const bool quiet = c.resolving;
    auto report = [&](std::string_view code, std::uint32_t cl, std::string msg) {
        r.broken = true;
        r.code = code;
        if (!quiet) c.out.add(code, at_cluster(c, cl, owner), std::move(msg));
    };
    const std::uint64_t need = core::div_ceil(length, std::uint64_t{v.cluster_bytes()});
    if (length == 0 && first == 0) return r;
    if (!v.is_cluster(first)) {
        report("exfat.stream.first-cluster", first,
               fmt::format("FirstCluster is {} with DataLength {}: not a cluster of the volume (2..{})",
                           first, length, v.max_cluster()));
        return r;
    }
    if (no_fat_chain) {
        if (length == 0) return r;
        if (!v.is_cluster(first) || std::uint64_t(first) + need - 1 > v.max_cluster()) {
            report("exfat.stream.outside-heap", first,
                   fmt::format("NoFatChain: {} contiguous clusters from cluster {} (DataLength {}) leave the "
                               "cluster heap (clusters 2..{})",
                               core::format_count(need), first, length, v.max_cluster()));
            return r;
        }
        r.runs.push_back(ClusterRun{first, static_cast<std::uint32_t>(need)});
        r.clusters = need;
        mark_owned(c, owner, r);
        return r;
    }
    Chain ch;
    try {
        ch = v.follow_chain(first, v.cluster_count());
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        report("exfat.chain.out-of-range", first,
               fmt::format("the FAT chain from cluster {} cannot be followed: {}", first, e.what()));
        return r;
    }
    r.runs = std::move(ch.runs);
    r.clusters = ch.clusters;
    const std::uint32_t last = r.runs.empty() ? first : r.runs.back().first + r.runs.back().count - 1;
    switch (ch.end) {
        case ChainEnd::bad:
            report(
                "exfat.chain.bad-cluster", last,
                fmt::format("FAT entry {} (number {} of the chain from cluster {}) is the bad-cluster mark "
                            "0xFFFFFFF7",
                            last, r.clusters, first));
            break;
        case ChainEnd::invalid:
            report("exfat.chain.out-of-range", last,
                   fmt::format("FAT entry {} (number {} of the chain from cluster {}) holds 0x{:08X}, not a "
                               "cluster (2..{}) or the end of chain 0xFFFFFFFF",
                               last, r.clusters, first, ch.stop_value, v.max_cluster()));
            break;
        case ChainEnd::loop:
            report("exfat.chain.loop", last,
                   fmt::format("the FAT chain from cluster {} loops: entry {} links back to cluster {} after "
                               "{} clusters",
                               first, last, ch.stop_value, r.clusters));
            break;
        default:
            break;
    }
    mark_owned(c, owner, r);
    if (!check_size || r.broken || quiet) return r;
    if (r.clusters < need) {
        report("exfat.chain.too-short", first,
               fmt::format("DataLength {} bytes needs {} cluster{}, the FAT chain from cluster {} has {}",
                           length, need, need == 1 ? "" : "s", first, r.clusters));
    } else if (r.clusters > need) {
        report("exfat.chain.too-long", first,
               fmt::format("DataLength {} bytes needs {} cluster{}, the FAT chain from cluster {} has {}",
                           length, need, need == 1 ? "" : "s", first, r.clusters));
    }
    return r;
}

}  // namespace detail

CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out, const CheckOptions& options) {
    detail::Context c(device, out, options);
    if (!detail::check_boot(c)) return c.summary;
    detail::check_allocation(c);
    const WalkSnapshot* w = options.reuse_walk;
    const auto covers = [](bool collected, const auto* wanted) { return collected || wanted == nullptr; };
    if (w && w->owned.size() == c.owned.size() && w->sets.empty() &&
        covers(w->collected_sets, options.set_fixes) && covers(w->collected_chains, options.chain_fixes) &&
        covers(w->collected_renames, options.renames) && covers(w->collected_entries, options.entry_fixes)) {
        c.summary.files = w->files;
        c.summary.directories = w->directories;
        c.owned = w->owned;
        c.doubtful = w->doubtful;
        c.walk_complete = w->walk_complete;
        c.cross_links = w->cross_links;
        c.cross_link_count = w->cross_link_count;
        for (const check::Finding& f : w->findings) out.add(f);
        if (options.chain_fixes)
            options.chain_fixes->insert(options.chain_fixes->end(), w->chains.begin(), w->chains.end());
        if (options.renames)
            options.renames->insert(options.renames->end(), w->renames.begin(), w->renames.end());
        if (options.entry_fixes)
            options.entry_fixes->insert(options.entry_fixes->end(), w->entries.begin(), w->entries.end());
    } else {
        const std::size_t findings_before = out.size();
        const auto size_of = [](const auto* v) { return v ? v->size() : std::size_t{0}; };
        const std::size_t sets_before = size_of(options.set_fixes),
                          chains_before = size_of(options.chain_fixes),
                          renames_before = size_of(options.renames),
                          entries_before = size_of(options.entry_fixes);
        detail::check_tree(c);
        if (options.save_walk) {
            auto s = std::make_shared<WalkSnapshot>();
            s->files = c.summary.files;
            s->directories = c.summary.directories;
            s->owned = c.owned;
            s->doubtful = c.doubtful;
            s->walk_complete = c.walk_complete;
            s->cross_links = c.cross_links;
            s->cross_link_count = c.cross_link_count;
            s->findings.assign(out.all().begin() + std::ptrdiff_t(findings_before), out.all().end());
            const auto tail = [](const auto* v, std::size_t from, auto& into) {
                if (v) into.assign(v->begin() + std::ptrdiff_t(from), v->end());
                return v != nullptr;
            };
            s->collected_sets = tail(options.set_fixes, sets_before, s->sets);
            s->collected_chains = tail(options.chain_fixes, chains_before, s->chains);
            s->collected_renames = tail(options.renames, renames_before, s->renames);
            s->collected_entries = tail(options.entry_fixes, entries_before, s->entries);
            *options.save_walk = std::move(s);
        }
    }
    detail::check_summary(c);
    c.summary.complete = true;
    return c.summary;
}

}  // namespace fsimg::exfat
