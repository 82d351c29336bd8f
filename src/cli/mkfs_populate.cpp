// mkfs --from: options, warnings, refusals and -s auto.
#include "mkfs_populate.hpp"
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::cli {

namespace {

/// A path for a message: control characters shown as \xNN.
std::string printable(const std::string& path) {
    std::string out;
    for (const char c : path) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out;
}

/// "DIR" -> DIR into the root; "DIR:/dest" -> DIR into /dest (the last ":/"
/// splits, unless the whole text names an existing directory); the same for
/// one FILE. "DIR:dest", where nothing is named so but DIR exists, is
/// refused as the mistake it is (exit 2): the path in the image must start
/// with '/'.
source::TreeSource parse_from(const std::string& text) {
    const std::size_t pos = text.rfind(":/");
    if (pos != std::string::npos && pos > 0 && !std::filesystem::is_directory(text)) {
        return {text.substr(0, pos), text.substr(pos + 1)};
    }
    const std::size_t colon = text.rfind(':');
    std::error_code ec;
    if (pos == std::string::npos && colon != std::string::npos && colon > 0 &&
        !std::filesystem::exists(std::filesystem::symlink_status(text, ec)) &&
        std::filesystem::exists(text.substr(0, colon), ec)) {
        throw Error(
            ErrorCode::usage,
            fmt::format("--from {}: the path in the image after ':' must start with '/' (--from {}:/{})",
                        printable(text), printable(text.substr(0, colon)),
                        printable(text.substr(colon + 1))));
    }
    return {text, "/"};
}

}  // namespace

void add_populate_options(CLI::App* cmd, PopulateArgs& args) {
    cmd->add_option("--from", args.from,
                    "Copy the content of host directory DIR into the image (DIR:/PATH puts it under /PATH), "
                    "or one host FILE (FILE:/PATH stores it as /PATH, FILE:/DIR/ puts it into /DIR); "
                    "repeatable")
        ->type_name("DIR|FILE[:/PATH]")
        ->allow_extra_args(false);  // one DIR per --from: "--from DIR IMAGE --force" keeps IMAGE positional
    cmd->add_flag(
        "--local-time", args.local_time,
        "--from: write timestamps in the local time zone instead of UTC (exFAT also stores the offset)");
    cmd->add_flag("--dot-hidden", args.dot_hidden, "--from: mark names starting with '.' hidden");
    cmd->add_flag("--overlay", args.overlay,
                  "--from: a file of a later source replaces the file of the same name an earlier source "
                  "gave (as a second cp -r over the first); a file and a directory of one name are still "
                  "refused");
    cmd->add_flag("--rename", args.rename,
                  "--from: store names FAT refuses (\"*/:<>?\\|, control characters, trailing . or space, "
                  "case-only duplicates) under safe names, and print the mapping");
    cmd->add_option("--symlinks", args.symlinks,
                    "--from: symbolic links: skip (default, with a warning), "
                    "follow, error, or store (NTFS: relative links as reparse points)")
        ->check(CLI::IsMember({"skip", "follow", "error", "store"}))
        ->each([&args](const std::string&) { args.symlinks_given = true; });
    cmd->add_option("--free", args.free, "--from with -s auto: free space to leave in the image (default 1M)")
        ->type_name("SIZE")
        ->each([&args](const std::string&) { args.free_given = true; });
}

bool wants_auto_size(const PopulateArgs& args, const std::string& size) {
    if (size == "auto" && args.from.empty()) {
        throw Error(ErrorCode::usage,
                    "-s auto sizes the image to the --from trees; give --from DIR or a size");
    }
    return !args.from.empty() && (size.empty() || size == "auto");
}

[[noreturn]] void refuse_tree(const std::string& headline, const std::vector<source::TreeProblem>& problems) {
    std::string msg = fmt::format("{} ({} problem{}); nothing was written:", headline, problems.size(),
                                  problems.size() == 1 ? "" : "s");
    for (const auto& p : problems) msg += fmt::format("\n  {}: {}", printable(p.path), printable(p.reason));
    throw Error(ErrorCode::usage, msg);
}

std::vector<source::TreeSource> tree_sources(const PopulateArgs& args) {
    std::vector<source::TreeSource> sources;
    for (const auto& f : args.from) {
        sources.push_back(parse_from(f));
        sources.back().overlay = args.overlay;
    }
    return sources;
}

source::SymlinkPolicy symlink_policy(const PopulateArgs& args) {
    if (args.symlinks == "follow") return source::SymlinkPolicy::follow;
    if (args.symlinks == "error") return source::SymlinkPolicy::error;
    if (args.symlinks == "store") return source::SymlinkPolicy::store;
    return source::SymlinkPolicy::skip;
}

void report_scan(const source::SourceTree& tree, const std::string& fs_name) {
    for (const auto& w : tree.warnings)
        warn(printable(w));  // names hold control characters (NTFS POSIX names)
    for (const auto& [from, to] : tree.renamed)
        note(fmt::format("renamed {} -> {}", printable(from), printable(to)));
    if (!tree.problems.empty()) refuse_tree("the --from tree cannot be stored on " + fs_name, tree.problems);
}

std::vector<std::filesystem::path> scan_exclusions(const PopulateArgs& args) {
    std::vector<std::filesystem::path> out;
    if (!args.image.empty()) out.emplace_back(args.image);
    for (const auto& p : args.also_exclude) out.emplace_back(p);
    return out;
}

fat::SourceTree scan_sources(const PopulateArgs& args) {
    fat::ScanOptions opt;
    opt.sources = tree_sources(args);
    opt.symlinks = symlink_policy(args);
    opt.rename = args.rename;
    opt.exclude = scan_exclusions(args);
    fat::SourceTree tree = fat::scan_tree(opt);
    report_scan(tree, "FAT");
    return tree;
}

std::uint64_t auto_image_bytes(const PopulateArgs& args, const fat::SourceTree& tree,
                               const fat::LayoutRequest& base, bool has_label, io::PartitionTableKind ptable,
                               std::uint32_t sector_size, std::uint64_t start_lba) {
    const std::uint64_t free_bytes = core::parse_size(args.free);
    const auto sized = fat::volume_bytes_for_tree(tree, base, has_label, free_bytes);
    if (const auto* r = std::get_if<fat::LayoutRefusal>(&sized)) refuse_layout("-s auto", *r);
    return image_bytes_for_volume(std::get<std::uint64_t>(sized), ptable, sector_size, start_lba);
}

std::uint64_t image_bytes_for_volume(std::uint64_t volume, io::PartitionTableKind ptable,
                                     std::uint32_t sector_size, std::uint64_t start_lba) {
    // The partition starts at 1 MiB; GPT keeps its backup in the last MiB.
    const std::uint64_t mib = 1 << 20;
    std::uint64_t image = volume;
    if (start_lba != 0 && ptable != io::PartitionTableKind::none) {
        // Elsewhere: up to the next 1 MiB boundary, where the partition ends.
        image = core::div_ceil(start_lba * sector_size + volume, mib) * mib;
        if (ptable == io::PartitionTableKind::gpt) image += mib;
    } else if (ptable == io::PartitionTableKind::mbr) {
        image += mib;
    } else if (ptable == io::PartitionTableKind::gpt) {
        image += 2 * mib;
    }
    if (ptable != io::PartitionTableKind::none) {
        const auto place = io::place_single_partition(ptable, image, sector_size, start_lba);
        if (place.sector_count * sector_size < volume) {
            throw Error(ErrorCode::unsupported,
                        "internal error: -s auto placed a partition smaller than planned");
        }
    }
    return image;
}

fat::PopulatePlan plan_or_refuse(const fat::SourceTree& tree, const fat::Layout& layout, bool has_label) {
    auto planned = fat::plan_population(tree, layout, has_label);
    if (auto* problems = std::get_if<std::vector<fat::TreeProblem>>(&planned)) {
        refuse_tree(fmt::format("the --from tree does not fit this {} volume with {} clusters",
                                to_string(layout.type), core::format_size(layout.cluster_bytes())),
                    *problems);
    }
    return std::get<fat::PopulatePlan>(std::move(planned));
}

fat::WriteOptions populate_write_options(const PopulateArgs& args, std::int64_t now, bool device_is_zeroed,
                                         core::Progress* progress) {
    fat::WriteOptions w;
    w.creation_time = now;
    w.clamp = core::source_date_epoch();
    w.local_time = args.local_time;
    w.dot_hidden = args.dot_hidden;
    w.device_is_zeroed = device_is_zeroed;
    w.progress = progress;
    // Test-only (tests/cli/mkfs_race.sh): a command run once between the scan
    // and the first file opened, to swap files the way a race would.
    if (const char* hook = std::getenv("FSIMG_TEST_HOOK_BEFORE_COPY"); hook != nullptr && *hook != '\0') {
        // fork + exec, not system(): system() ignores SIGINT and SIGQUIT while it waits, and
        // tests/cli/outputs_safe.sh sends those to mkfs while the hook runs.
        w.source.before_first_open = [cmd = std::string(hook)] {
            const pid_t pid = ::fork();
            if (pid == 0) {
                ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
                ::_exit(127);
            }
            int status = 0;
            while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                throw Error(ErrorCode::io, "FSIMG_TEST_HOOK_BEFORE_COPY failed");
        };
    }
    return w;
}

std::string populate_summary(const fat::SourceTree& tree, const fat::PopulatePlan& plan,
                             const fat::Layout& layout) {
    return fmt::format(", {} ({}), {}, {} of {} clusters used",
                       core::format_counted(tree.files, "file", "files"), core::format_size(tree.data_bytes),
                       core::format_counted(tree.directories, "directory", "directories"),
                       core::format_count(plan.used_clusters), core::format_count(layout.cluster_count));
}

}  // namespace fsimg::cli
