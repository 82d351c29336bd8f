// fsimg cat: write a file of a FAT, exFAT or NTFS image to stdout.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/fs/view.hpp"
#include "view.hpp"

namespace fsimg::cli {

namespace {

struct CatArgs {
    std::string image;
    std::string path;
    bool deleted = false;
    bool salvage = false;
};

void write_out(std::span<const std::byte> s) {
    // Straight to the descriptor, not through stdio (whose 4 KiB buffer split
    // every piece in two writes): to a pipe or socket in pieces of 64 KiB,
    // a pipe's capacity, so that the reader works while the next piece is
    // read (1 MiB writes made `fsimg cat | cat` twice as slow as mtype's
    // 64 KiB ones); to a file or device as read (issue 41).
    static const std::size_t piece = [] {
        std::fflush(stdout);
        struct stat st {};
        const bool stream = ::fstat(STDOUT_FILENO, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
        return stream ? std::size_t{64} * 1024 : std::size_t{16} << 20;
    }();
    while (!s.empty()) {
        const ssize_t n = ::write(STDOUT_FILENO, s.data(), std::min(s.size(), piece));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw Error(ErrorCode::io, fmt::format("cannot write to standard output: {}",
                                                   std::strerror(n < 0 ? errno : EIO)));
        s = s.subspan(static_cast<std::size_t>(n));
    }
}

/// ASCII case-insensitive equality (FAT names compare so; ls --deleted shows both forms).
bool same_name(std::string_view x, std::string_view y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](char p, char q) {
               return std::tolower(static_cast<unsigned char>(p)) ==
                      std::tolower(static_cast<unsigned char>(q));
           });
}

/// --deleted: PATH names a deleted entry (its long or short name as ls --deleted shows it) in a
/// directory that exists; the first recoverable one of that name is read.
int run_cat_deleted(const CatArgs& a, const fs::View& view) {
    const std::string path = fs::normalize_path(a.path);
    const std::size_t slash = path.rfind('/');
    const std::string dir_path = slash == 0 ? "/" : path.substr(0, slash), name = path.substr(slash + 1);
    const auto dir = view.lookup(dir_path);
    if (!dir || !dir->is_dir)
        throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a directory in {}", dir_path, a.image));
    std::vector<fs::DeletedEntry> found;
    for (auto& d : view.list_deleted(*dir))
        if (!d.is_dir && (same_name(d.name, name) || same_name(d.short_name, name)))
            found.push_back(std::move(d));
    if (found.empty())
        throw Error(ErrorCode::usage,
                    fmt::format("no deleted file \"{}\" in {} (see fsimg ls --deleted)", a.path, a.image));
    const auto it = std::find_if(found.begin(), found.end(),
                                 [](const fs::DeletedEntry& d) { return d.state != "reused"; });
    const fs::DeletedEntry& pick = it != found.end() ? *it : found.front();
    if (found.size() > 1)
        warn(fmt::format("{} deleted files are named \"{}\"; reading the one from cluster {}", found.size(),
                         core::escape_name(name), pick.first_cluster));
    view.read_deleted(pick, write_out);
    if (std::fflush(stdout) != 0) throw Error(ErrorCode::io, "cannot write to standard output");
    return kExitOk;
}

int run_cat(const CatArgs& a) {
    const auto view = open_image_view(a.image);
    if (a.deleted) return run_cat_deleted(a, *view);
    // A path with wildcards: every file it matches, in byte order, one after the other.
    const std::vector<std::string> paths = expand_paths(*view, {a.path});
    const bool many = paths.size() > 1;
    int rc = kExitOk;
    for (const std::string& path : paths) {
        const auto r = view->lookup(path);
        if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", path, a.image));
        if (r->is_dir) {
            if (many) continue;  // "cat /DCIM/*" skips the directories it matches
            throw Error(ErrorCode::usage, fmt::format("\"{}\" is a directory; use fsimg ls", path));
        }
        if (!a.salvage) {
            view->read(*r, write_out);
            if (std::fflush(stdout) != 0) throw Error(ErrorCode::io, "cannot write to standard output");
            continue;
        }
        const fs::SalvageReport s = view->read_salvaged(*r, write_out);
        if (std::fflush(stdout) != 0) throw Error(ErrorCode::io, "cannot write to standard output");
        if (!s.salvaged && s.damage.empty()) continue;
        warn(fmt::format("\"{}\" is damaged: {}; salvaged {}", core::escape_name(path), s.damage, s.sources));
        rc = kExitFailure;
    }
    return rc;
}

}  // namespace

Action add_cat(CLI::App& app) {
    auto args = std::make_shared<CatArgs>();
    CLI::App* cmd =
        app.add_subcommand("cat", "Write a file of a FAT, exFAT or NTFS image to standard output");
    cmd->footer(
        "Examples:\n"
        "  fsimg cat card.img DCIM/100CANON/IMG_0001.JPG > photo.jpg\n"
        "  fsimg cat disk.img@1 /boot/config.txt\n"
        "  fsimg cat ntfs.img 'report.docx:Zone.Identifier'\n"
        "  fsimg cat --deleted card.img DCIM/100CANON/IMG_0001.JPG > photo.jpg\n"
        "  fsimg cat --salvage card.img DCIM/100CANON/IMG_0002.JPG > photo.jpg");
    cmd->add_option("IMAGE", args->image, "Image file; IMAGE@N selects partition N")->required();
    cmd->add_option("PATH", args->path,
                    "File inside the image (any case; FAT: long or short name; NTFS: FILE:STREAM)")
        ->required();
    cmd->add_flag("--deleted", args->deleted,
                  "PATH names a deleted file (FAT, exFAT, NTFS; its long name, or its short name with \"?\" "
                  "first, as ls "
                  "--deleted shows them): write its data while its clusters are still free");
    cmd->add_flag(
           "--salvage", args->salvage,
           "Write what is readable of a file whose allocation is broken: its own clusters, then (FAT, exFAT) "
           "the lost chain or free clusters that continue it; zeros for the rest; exit 1 when anything was "
           "salvaged")
        ->excludes("--deleted");
    return [args] { return run_cat(*args); };
}

}  // namespace fsimg::cli
