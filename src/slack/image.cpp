// Analysis::add_image: the tree inside a FAT, exFAT or NTFS image, read
// through fs::View (the reader behind ls and extract, with its listing rule
// per filesystem) and charged depth first with an explicit stack, each
// directory's children in name order like a host walk; loops and depth
// bounded, damage counted in Tally::unreadable.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/fs/view.hpp"
#include "sources_internal.hpp"

namespace fsimg::slack {

namespace {

/// Deepest directory nesting followed in an image: far beyond anything real,
/// it bounds a crafted image's recursion.
constexpr std::uint32_t kMaxImageDepth = 512;

struct Pending {
    fs::Entry dir;
    DirContext ctx;
    std::vector<std::uint64_t> ancestors;  ///< ids of the directories above (loop check)
};

}  // namespace

std::optional<CurrentLayout> Analysis::image_layout(std::string& other) const {
    other = impl_->image_other;
    return impl_->image_layout;
}

void Analysis::add_image(const std::string& spec) {
    Impl& im = *impl_;
    Tally& t = im.tally;
    std::unique_ptr<fs::View> view;
    std::optional<fs::Entry> root;
    try {
        view = fs::open_view(spec);
        root = view->lookup("/");
        if (!root) throw Error(ErrorCode::corrupt, "no root directory");
        const std::uint32_t cb = view->cluster_bytes();
        im.image_other.clear();
        im.image_layout.reset();
        switch (view->kind()) {
            case fs::Kind::exfat:
                im.image_layout = CurrentLayout{Fs::exfat, cb};
                break;
            case fs::Kind::ntfs:
                im.image_layout = CurrentLayout{Fs::ntfs, cb};
                break;
            case fs::Kind::fat:
                if (view->type_name() == "FAT32") {
                    im.image_layout = CurrentLayout{Fs::fat32, cb};
                } else {
                    im.image_other =
                        fmt::format("{} with {} clusters", view->type_name(), core::format_size(cb));
                }
                break;
        }
    } catch (const Error& e) {
        // Exit 1 (docs/exit-codes.md): the image is damaged or of another kind; the command line was fine.
        throw Error(
            e.code() == ErrorCode::io || e.code() == ErrorCode::usage ? e.code() : ErrorCode::corrupt,
            fmt::format("{}: not a directory, and not a readable FAT image, nor an exFAT or NTFS one ({})",
                        spec, e.what()));
    }
    auto unreadable = [&](const std::string& path, const std::string& why) {
        ++t.unreadable_count;
        add_example(t.unreadable, {path, why}, im.opt.analyzer.max_examples);
    };
    core::VisitedDirectories visited;       // each directory charged once, however many entries lead to it
    std::vector<std::uint64_t> seen_files;  // ids met so far of files with more than one name (sorted)
    // Depth first with an explicit stack; each directory's children are
    // charged in name order, like a host walk.
    auto charge = [&](DirAccumulator& acc, const fs::Entry& dir, const std::vector<std::uint64_t>& anc,
                      std::vector<Pending>& stack) {
        std::vector<fs::Entry> kids;
        std::vector<std::string> problems;
        try {
            kids = view->list(dir, problems);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            unreadable(acc.context().path, e.what());
            return;
        }
        for (const auto& p : problems) unreadable(acc.context().path, p);
        // Symbolic links and junctions are not charged (mkfs --from skips them
        // by default), nor are alternate data streams (the model has none).
        std::erase_if(kids, [](const fs::Entry& e) { return e.link_target || e.is_stream; });
        std::sort(kids.begin(), kids.end(),
                  [](const fs::Entry& a, const fs::Entry& b) { return a.name < b.name; });
        // The DOS names NTFS populate would generate for this listing (slack/analyzer.hpp).
        std::vector<ListedEntry> listing;
        listing.reserve(kids.size());
        for (const fs::Entry& c : kids)
            listing.push_back(
                {c.name, c.is_dir ? EntryKind::directory : EntryKind::file, !c.is_dir && c.links > 1});
        const std::vector<std::u16string> dos =
            DirAccumulator::ntfs_dos_names(listing, acc.context().is_root());
        std::vector<Pending> subdirs;
        for (std::size_t k = 0; k < kids.size(); ++k) {
            fs::Entry& c = kids[k];
            bool first_link = true;
            const bool linked = listing[k].linked;
            if (linked) {  // a hard-linked file: its first name met is charged as the file
                const auto it = std::lower_bound(seen_files.begin(), seen_files.end(), c.id);
                first_link = it == seen_files.end() || *it != c.id;
                if (first_link) seen_files.insert(it, c.id);
            }
            const std::uint8_t ex = acc.add(t, c.name, c.is_dir ? EntryKind::directory : EntryKind::file,
                                            c.is_dir ? 0 : c.size, first_link, linked, dos[k]);
            if (!c.is_dir) continue;
            DirContext ctx = acc.context().child(c.name, ex, dos[k]);
            if (c.id == dir.id || std::find(anc.begin(), anc.end(), c.id) != anc.end()) {
                unreadable(ctx.path, "the directory is one of its ancestors (a loop)");
                continue;
            }
            if (!visited.enter(c.id, ctx.path)) {  // a second entry for one directory (a DAG): charged once
                unreadable(
                    ctx.path,
                    fmt::format("the same directory as {} ({} {}); charged once", visited.first_path(c.id),
                                view->kind() == fs::Kind::ntfs ? "MFT record" : "first cluster", c.id));
                continue;
            }
            if (ctx.depth > kMaxImageDepth) {
                unreadable(ctx.path, fmt::format("nested deeper than {} directories", kMaxImageDepth));
                continue;
            }
            std::vector<std::uint64_t> a = anc;
            a.push_back(dir.id);
            subdirs.push_back({std::move(c), std::move(ctx), std::move(a)});
        }
        for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
    };

    std::vector<Pending> stack;
    visited.enter(root->id, "/");
    charge(im.root, *root, {}, stack);
    while (!stack.empty()) {
        Pending p = std::move(stack.back());
        stack.pop_back();
        DirAccumulator acc(im.opt.analyzer, std::move(p.ctx));
        charge(acc, p.dir, p.ancestors, stack);
        acc.finish(t);
    }
}

}  // namespace fsimg::slack
