// fsimg cat: write a file of a FAT, exFAT or NTFS image to stdout.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/fs/view.hpp"
#include "view.hpp"

namespace fsimg::cli {

namespace {

struct CatArgs {
    std::string image;
    std::string path;
};

int run_cat(const CatArgs& a) {
    const auto view = open_image_view(a.image);
    const auto r = view->lookup(a.path);
    if (!r) throw Error(ErrorCode::usage, fmt::format("\"{}\" does not exist in {}", a.path, a.image));
    if (r->is_dir) throw Error(ErrorCode::usage, fmt::format("\"{}\" is a directory; use fsimg ls", a.path));
    view->read(*r, [](std::span<const std::byte> s) {
        if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) {
            throw Error(ErrorCode::io, "cannot write to standard output");
        }
    });
    if (std::fflush(stdout) != 0) throw Error(ErrorCode::io, "cannot write to standard output");
    return kExitOk;
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
        "  fsimg cat ntfs.img 'report.docx:Zone.Identifier'");
    cmd->add_option("IMAGE", args->image, "Image file; IMAGE@N selects partition N")->required();
    cmd->add_option("PATH", args->path,
                    "File inside the image (any case; FAT: long or short name; NTFS: FILE:STREAM)")
        ->required();
    return [args] { return run_cat(*args); };
}

}  // namespace fsimg::cli
