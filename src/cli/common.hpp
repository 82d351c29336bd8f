// Shared pieces of the command line: exit codes and subcommand registration.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace fsimg::cli {

/// Exit codes of every command except fsck (which follows fsck(8), see
/// docs/exit-codes.md).
enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,  ///< operational failure: I/O error, corrupt input, unsupported
    kExitUsage = 2,    ///< invalid arguments or values
    kExitRefused =
        3,  ///< a safety rule refused (existing filesystem without --force, a device without --device)
};

/// Each subcommand adds itself to the app and returns the action to run when
/// it was chosen. The action returns the exit code; it may throw fsimg::Error.
using Action = std::function<int()>;
Action add_mkfs(CLI::App& app);
Action add_dump(CLI::App& app);
Action add_fsck(CLI::App& app);
Action add_slack(CLI::App& app);
Action add_ls(CLI::App& app);
Action add_cat(CLI::App& app);
Action add_extract(CLI::App& app);
Action add_help(CLI::App& app);
Action add_cp(CLI::App& app);
Action add_rm(CLI::App& app);
Action add_mkdir(CLI::App& app);
Action add_mv(CLI::App& app);
Action add_label(CLI::App& app);
Action add_attrib(CLI::App& app);
Action add_undo(CLI::App& app);
Action add_disk(CLI::App& app);

/// Defines fsimg's command line on `app` (its name, description, footer,
/// --version and the commands with their options): every command, or only
/// `only` when it names one. Returns each defined command's action. The one
/// definition that --help, the manual pages and the shell completions are
/// made from (run_cli; tools/docgen.cpp writes docs/man and completions/).
std::vector<std::pair<std::string_view, Action>> define_commands(CLI::App& app, std::string_view only = {});

/// The whole command line: parses argv, runs the command, prints errors;
/// returns the exit status. main() (main_entry.cpp) calls it, and so does the
/// CLI fuzz target (tests/fuzz/cli_walk_fuzz.cpp), many times in one process.
int run_cli(int argc, char** argv);

/// A name, path or message holding names from an image, for a line of
/// text: control characters and DEL as \xNN and a backslash as "\\"
/// (core::escape_name, the one spelling of every command), then any byte
/// that is not valid UTF-8 as \xNN (core::escape_invalid_utf8).
std::string shown(std::string_view s);

/// Prints "fsimg: note: ..." on stderr (unless quiet).
void note(const std::string& text);
/// Prints "fsimg: warning: ..." on stderr.
void warn(const std::string& text);

/// Runs f(); an Error(not_this_fs) it throws ("the volume is not FAT, exFAT
/// or NTFS: it holds a PNG image") gets the image's name in front, so that
/// the message names the file as well as what it holds.
template <class F>
decltype(auto) naming_image(std::string_view spec, F&& f) {
    try {
        return f();
    } catch (const Error& e) {
        if (e.code() != ErrorCode::not_this_fs) throw;
        throw Error(e.code(), fmt::format("{}: {}", core::escape_name(spec), e.what()));
    }
}

}  // namespace fsimg::cli
