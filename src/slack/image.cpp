// Analysis::add_fat_image: the tree inside a FAT image, read with fat::Volume
// (exFAT and NTFS images are handed to image_exfat_ntfs.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/open.hpp"
#include "sources_internal.hpp"

namespace fsimg::slack {

namespace {

/// Deepest directory nesting followed in an image: far beyond anything real,
/// it bounds a crafted image's recursion.
constexpr std::uint32_t kMaxImageDepth = 512;

struct Pending {
    std::uint32_t first_cluster = 0;
    DirContext ctx;
    std::vector<std::uint32_t> ancestors;  ///< first clusters of the directories above (loop check)
};

}  // namespace

void Analysis::add_fat_image(const std::string& spec) {
    Impl& im = *impl_;
    Tally& t = im.tally;
    io::OpenedVolume opened;
    std::unique_ptr<fat::Volume> volume;
    try {
        opened = io::open_volume(spec, false);
        std::array<std::byte, 11> head{};
        if (opened.device().size() >= 512) opened.device().read_at(0, head);
        if (std::memcmp(head.data() + 3, "EXFAT   ", 8) == 0) return add_exfat_image(spec);
        if (std::memcmp(head.data() + 3, "NTFS    ", 8) == 0) return add_ntfs_image(spec);
        volume = std::make_unique<fat::Volume>(opened.device());
    } catch (const Error& e) {
        // Exit 1 (docs/exit-codes.md): the image is damaged or of another kind; the command line was fine.
        throw Error(e.code() == ErrorCode::io || e.code() == ErrorCode::usage ? e.code() : ErrorCode::corrupt,
                    fmt::format("{}: not a directory, and not a readable FAT image ({}), nor an exFAT or "
                                "NTFS one",
                                spec, e.what()));
    }
    const fat::Volume& v = *volume;
    auto unreadable = [&](const std::string& path, const std::string& why) {
        ++t.unreadable_count;
        add_example(t.unreadable, {path, why}, im.opt.analyzer.max_examples);
    };
    core::VisitedDirectories visited;  // each directory charged once
    // Depth first with an explicit stack; each directory's children are
    // charged in name order, like a host walk.
    auto charge = [&](DirAccumulator& acc, std::uint32_t first_cluster, const std::vector<std::uint32_t>& anc,
                      std::vector<Pending>& stack) {
        fat::ParsedDirectory dir;
        try {
            dir = v.read_directory(first_cluster);
        } catch (const Error& e) {
            unreadable(acc.context().path, e.what());
            return;
        }
        std::vector<const fat::DirRecord*> recs;
        for (const auto& r : dir.records) {
            if (r.kind == fat::RecordKind::file || r.kind == fat::RecordKind::directory) recs.push_back(&r);
        }
        std::sort(recs.begin(), recs.end(),
                  [](const fat::DirRecord* a, const fat::DirRecord* b) { return a->name < b->name; });
        std::vector<ListedEntry> listing;
        listing.reserve(recs.size());
        for (const fat::DirRecord* r : recs)
            listing.push_back({r->name,
                               r->kind == fat::RecordKind::directory ? EntryKind::directory : EntryKind::file,
                               false});
        const std::vector<std::u16string> dos =
            DirAccumulator::ntfs_dos_names(listing, acc.context().is_root());
        std::vector<Pending> subdirs;
        for (std::size_t k = 0; k < recs.size(); ++k) {
            const fat::DirRecord* r = recs[k];
            const bool is_dir = r->kind == fat::RecordKind::directory;
            const std::uint8_t ex = acc.add(t, r->name, is_dir ? EntryKind::directory : EntryKind::file,
                                            is_dir ? 0 : r->entry.file_size, true, false, dos[k]);
            if (!is_dir) continue;
            const std::uint32_t fc = v.first_cluster(*r);
            DirContext ctx = acc.context().child(r->name, ex, dos[k]);
            if (fc == 0 || std::find(anc.begin(), anc.end(), fc) != anc.end() || fc == first_cluster) {
                unreadable(ctx.path, fmt::format("the directory's first cluster {} is invalid or an "
                                                 "ancestor's (a loop)",
                                                 fc));
                continue;
            }
            if (!visited.enter(fc, ctx.path)) {  // a second entry for one directory (a DAG): charged once
                unreadable(ctx.path, fmt::format("the same directory as {} (first cluster {}); charged once",
                                                 visited.first_path(fc), fc));
                continue;
            }
            if (ctx.depth > kMaxImageDepth) {
                unreadable(ctx.path, fmt::format("nested deeper than {} directories", kMaxImageDepth));
                continue;
            }
            std::vector<std::uint32_t> a = anc;
            a.push_back(first_cluster);
            subdirs.push_back({fc, std::move(ctx), std::move(a)});
        }
        for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
    };

    std::vector<Pending> stack;
    visited.enter(v.root_cluster(), "/");
    charge(im.root, v.root_cluster(), {}, stack);
    while (!stack.empty()) {
        Pending p = std::move(stack.back());
        stack.pop_back();
        DirAccumulator acc(im.opt.analyzer, std::move(p.ctx));
        charge(acc, p.first_cluster, p.ancestors, stack);
        acc.finish(t);
    }
}

}  // namespace fsimg::slack
