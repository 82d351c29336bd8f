// What every command prints besides its result: -q/--quiet, --progress, and
// the progress line on stderr.
#pragma once

#include <memory>

#include "fsimg/core/progress.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace fsimg::cli {

struct OutputOptions {
    bool quiet = false;       ///< -q: nothing but errors (and the command's own result on stdout)
    bool progress = false;    ///< --progress: a progress line even when stderr is not a terminal
    unsigned codepage = 850;  ///< --codepage: OEM code page of FAT short names and labels (437 or 850)
};

/// The options of the command being run (one per process).
OutputOptions& output_options();

/// Adds -q/--quiet (unless the command already has -q) and, for commands
/// with long work (with_progress), --progress to `cmd`, bound to output_options().
void add_output_flags(CLI::App* cmd, bool with_progress);

/// A Progress drawing on stderr, or null when there is nothing to draw:
/// --quiet, or stderr is not a terminal and --progress was not given. On a
/// terminal the line is redrawn in place (carriage return, at most 10 times a
/// second) and ends with a newline when a phase ends; otherwise (--progress
/// into a file or pipe) one line per second and one per phase end.
std::unique_ptr<core::Progress> make_progress();

/// The width text output wraps at: COLUMNS when it holds 20..1000 (as ls
/// and lsblk take it), else the terminal's width when `to_stdout` and
/// standard output is a terminal, else 80.
unsigned output_columns(bool to_stdout);

/// make_progress() with its first phase begun (core::Progress::begin), or null.
std::unique_ptr<core::Progress> begin_progress(std::string phase, std::uint64_t total,
                                               core::ProgressUnit unit);

}  // namespace fsimg::cli
