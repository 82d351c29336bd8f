// Analysis::add_exfat_image and add_ntfs_image: the tree inside an exFAT or
// NTFS image, read with the library's readers (exfat::Volume; fsimg::ntfs::Volume
// and ntfs/directory.hpp), charged as add_fat_image charges a FAT image:
// depth first with an explicit stack, each directory's children in name
// order, loops and depth bounded, damage counted in Tally::unreadable.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "sources_internal.hpp"

namespace fsimg::slack {

namespace {

constexpr std::uint32_t kMaxImageDepth = 512;
/// MFT records below this are system files (formats.md §3.2), not charged.
constexpr std::uint64_t kFirstUserRecord = 16;

/// One child to charge: name, kind, size, and what identifies a directory.
struct Child {
    std::string name;
    bool is_dir = false;
    std::uint64_t size = 0;
    std::uint64_t id = 0;        ///< exFAT: index into the pending records; NTFS: MFT record
    std::uint64_t identity = 0;  ///< the directory on disk: exFAT first cluster, NTFS MFT record
    bool first_link = true, linked = false;
};

/// Depth-first charging shared by both readers: `list(id, path)` returns a
/// directory's children (throws Error for damage).
template <typename List>
void charge_tree(Tally& t, DirAccumulator& root, const AnalyzerOptions& opt, std::uint64_t root_id,
                 std::uint64_t root_identity, List list) {
    struct Pending {
        std::uint64_t id;
        DirContext ctx;
        std::vector<std::uint64_t> ancestors;
    };
    auto unreadable = [&](const std::string& path, const std::string& why) {
        ++t.unreadable_count;
        add_example(t.unreadable, {path, why}, opt.max_examples);
    };
    core::VisitedDirectories visited;  // each directory charged once, however many entries lead to it
    auto charge = [&](DirAccumulator& acc, std::uint64_t id, const std::vector<std::uint64_t>& anc,
                      std::vector<Pending>& stack) {
        std::vector<Child> kids;
        try {
            kids = list(id, acc.context().path);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            unreadable(acc.context().path, e.what());
            return;
        }
        std::sort(kids.begin(), kids.end(), [](const Child& a, const Child& b) { return a.name < b.name; });
        std::vector<ListedEntry> listing;
        listing.reserve(kids.size());
        for (const Child& c : kids)
            listing.push_back({c.name, c.is_dir ? EntryKind::directory : EntryKind::file, c.linked});
        const std::vector<std::u16string> dos =
            DirAccumulator::ntfs_dos_names(listing, acc.context().is_root());
        std::vector<Pending> subdirs;
        for (std::size_t k = 0; k < kids.size(); ++k) {
            const Child& c = kids[k];
            const std::uint8_t ex = acc.add(t, c.name, c.is_dir ? EntryKind::directory : EntryKind::file,
                                            c.is_dir ? 0 : c.size, c.first_link, c.linked, dos[k]);
            if (!c.is_dir) continue;
            DirContext ctx = acc.context().child(c.name, ex, dos[k]);
            if (c.id == id || std::find(anc.begin(), anc.end(), c.id) != anc.end()) {
                unreadable(ctx.path, "the directory is one of its ancestors (a loop)");
                continue;
            }
            if (!visited.enter(c.identity,
                               ctx.path)) {  // a second entry for one directory (a DAG): charged once
                unreadable(ctx.path, fmt::format("the same directory as {}; charged once",
                                                 visited.first_path(c.identity)));
                continue;
            }
            if (ctx.depth > kMaxImageDepth) {
                unreadable(ctx.path, fmt::format("nested deeper than {} directories", kMaxImageDepth));
                continue;
            }
            std::vector<std::uint64_t> a = anc;
            a.push_back(id);
            subdirs.push_back({c.id, std::move(ctx), std::move(a)});
        }
        for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
    };
    std::vector<Pending> stack;
    visited.enter(root_identity, "/");
    charge(root, root_id, {}, stack);
    while (!stack.empty()) {
        Pending p = std::move(stack.back());
        stack.pop_back();
        DirAccumulator acc(opt, std::move(p.ctx));
        charge(acc, p.id, p.ancestors, stack);
        acc.finish(t);
    }
}

}  // namespace

void Analysis::add_exfat_image(const std::string& spec) {
    io::OpenedVolume opened;
    std::unique_ptr<exfat::Volume> volume;
    std::optional<exfat::FileRecord> root;
    try {
        opened = io::open_volume(spec, false);
        volume = std::make_unique<exfat::Volume>(opened.device());
        root = volume->lookup("/");
        if (!root) throw Error(ErrorCode::corrupt, "no root directory");
    } catch (const Error& e) {
        throw Error(e.code() == ErrorCode::io || e.code() == ErrorCode::usage ? e.code() : ErrorCode::corrupt,
                    fmt::format("{}: not a readable exFAT image ({})", spec, e.what()));
    }
    // Directories are identified by their index in `dirs` (their records).
    std::vector<exfat::FileRecord> dirs{*root};
    std::unordered_map<std::uint64_t, std::uint64_t> seen{{root->first_cluster, 0}};  // first cluster -> id
    Tally& t = impl_->tally;
    auto list = [&](std::uint64_t id, const std::string& path) {
        const exfat::ParsedDirectory d = volume->read_directory(dirs.at(id));
        std::vector<Child> out;
        for (const auto& r : d.files) {
            if (!r.checksum_ok()) {
                ++t.unreadable_count;
                add_example(t.unreadable,
                            {(path == "/" ? "/" : path + "/") + r.name, "SetChecksum mismatch; not used"},
                            impl_->opt.analyzer.max_examples);
                continue;
            }
            Child c{r.name, r.is_directory(), r.data_length, 0};
            c.identity = r.first_cluster;
            if (c.is_dir && !seen.count(r.first_cluster)) {  // one record per directory on disk
                c.id = dirs.size();
                dirs.push_back(r);
                seen.emplace(r.first_cluster, c.id);
            } else if (c.is_dir) {
                c.id = seen.at(r.first_cluster);
            }
            out.push_back(std::move(c));
        }
        return out;
    };
    // exFAT directories cannot loop by cluster without a damaged chain, which
    // the reader refuses; ids only grow, so the ancestor check never fires.
    charge_tree(impl_->tally, impl_->root, impl_->opt.analyzer, 0, root->first_cluster, list);
}

void Analysis::add_ntfs_image(const std::string& spec) {
    io::OpenedVolume opened;
    std::unique_ptr<fsimg::ntfs::Volume> volume;
    try {
        opened = io::open_volume(spec, false);
        volume = std::make_unique<fsimg::ntfs::Volume>(opened.device());
    } catch (const Error& e) {
        throw Error(e.code() == ErrorCode::io || e.code() == ErrorCode::usage ? e.code() : ErrorCode::corrupt,
                    fmt::format("{}: not a readable NTFS image ({})", spec, e.what()));
    }
    const fsimg::ntfs::Volume& v = *volume;
    std::vector<std::uint64_t> seen_files;  // records met so far with more than one link (sorted)
    auto list = [&](std::uint64_t record, const std::string&) {
        const fsimg::ntfs::MftRecord dir = v.read_record(record);
        std::vector<fsimg::ntfs::IndexEntry> names;
        fsimg::ntfs::for_each_index_entry(
            v, dir, [&](const fsimg::ntfs::IndexEntry& e, const fsimg::ntfs::IndexEntryLocation&) {
                if (e.file_name && e.file_name->name_space != fsimg::ntfs::Namespace::dos &&
                    fsimg::ntfs::FileReference::unpack(e.reference).record >= kFirstUserRecord)
                    names.push_back(e);
                return true;
            });
        std::vector<Child> out;
        for (const fsimg::ntfs::IndexEntry& e : names) {
            const auto ref = fsimg::ntfs::FileReference::unpack(e.reference);
            if (ref.record >= v.record_count())
                throw Error(ErrorCode::corrupt,
                            fmt::format("an entry refers to MFT record {}, past $MFT", ref.record));
            const fsimg::ntfs::MftRecord r = v.read_record(ref.record);
            if (!r.in_use() || r.header.sequence != ref.sequence)
                throw Error(ErrorCode::corrupt,
                            fmt::format("an entry refers to MFT record {} sequence {}, which is stale",
                                        ref.record, ref.sequence));
            if (fsimg::ntfs::load_attribute(v, r, fsimg::ntfs::AttrType::reparse_point) ||
                fsimg::ntfs::interix_link_target(v, r))
                continue;  // a symbolic link or junction
            Child c{core::utf16_to_utf8_lossy(e.file_name->name), r.is_directory(), 0, ref.record};
            c.identity = ref.record;
            if (!c.is_dir) {
                if (const auto d = fsimg::ntfs::load_attribute(v, r, fsimg::ntfs::AttrType::data))
                    c.size = d->size();
                // Hard links: the names outside the DOS namespace (the header's
                // link count counts a DOS name too).
                std::size_t names_outside_dos = 0;
                for (const fsimg::ntfs::Attribute& a : r.attributes) {
                    if (a.kind() != fsimg::ntfs::AttrType::file_name || a.non_resident) continue;
                    try {
                        if (fsimg::ntfs::decode_file_name(a.value).name_space != fsimg::ntfs::Namespace::dos)
                            ++names_outside_dos;
                    } catch (const FormatError&) {
                        ++names_outside_dos;
                    }
                }
                c.linked = names_outside_dos > 1;
                if (c.linked) {
                    const auto it = std::lower_bound(seen_files.begin(), seen_files.end(), ref.record);
                    c.first_link = it == seen_files.end() || *it != ref.record;
                    if (c.first_link) seen_files.insert(it, ref.record);
                }
            }
            out.push_back(std::move(c));
        }
        return out;
    };
    charge_tree(impl_->tally, impl_->root, impl_->opt.analyzer, fsimg::ntfs::kRootRecord,
                fsimg::ntfs::kRootRecord, list);
}

}  // namespace fsimg::slack
