#include "output.hpp"
#include <CLI/CLI.hpp>
#include <optional>

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fsimg::cli {

OutputOptions& output_options() {
    static OutputOptions options;
    return options;
}

void add_output_flags(CLI::App* cmd, bool with_progress) {
    OutputOptions& o = output_options();
    if (!cmd->get_option_no_throw("-q")) cmd->add_flag("-q,--quiet", o.quiet, "Print nothing but errors");
    if (cmd->get_name() != "mkfs" && cmd->get_name() != "disk" && !cmd->get_option_no_throw("--codepage")) {
        cmd->add_option("--codepage", o.codepage,
                        "OEM code page of FAT short names, labels and OEM names: 850 (default, as mtools "
                        "and fsck.fat) or 437 (as the Linux vfat driver)")
            ->check(CLI::IsMember({437u, 850u}))
            ->capture_default_str();
    }
    if (with_progress) {
        cmd->add_flag("--progress", o.progress,
                      "Show progress on stderr even when it is not a terminal (it is shown on a terminal)");
    }
}

namespace {

/// COLUMNS when it holds a width from 20 to 1000.
std::optional<unsigned> columns_variable() {
    if (const char* c = std::getenv("COLUMNS")) {
        const long v = std::strtol(c, nullptr, 10);
        if (v >= 20 && v <= 1000) return static_cast<unsigned>(v);
    }
    return std::nullopt;
}

unsigned terminal_columns() {
    winsize ws{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return columns_variable().value_or(80);
}

}  // namespace

unsigned output_columns(bool to_stdout) {
    if (const auto c = columns_variable()) return *c;
    winsize ws{};
    if (to_stdout && isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
        ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

std::unique_ptr<core::Progress> make_progress() {
    const OutputOptions& o = output_options();
    if (o.quiet) return nullptr;
    const bool tty = isatty(STDERR_FILENO) == 1;
    if (!tty && !o.progress) return nullptr;
    if (tty) {
        const unsigned width = terminal_columns() - 1;  // never the last column: no wrap
        auto drawn = std::make_shared<std::size_t>(0);
        return std::make_unique<core::Progress>(
            [width, drawn](const core::ProgressState& s) {
                const std::string line = core::render_progress_line(s, width);
                // Blank out what a longer previous line left behind.
                const std::size_t pad = *drawn > line.size() ? *drawn - line.size() : 0;
                fmt::print(stderr, "\r{}{}{}", line, std::string(pad, ' '), s.finished ? "\n" : "");
                std::fflush(stderr);
                *drawn = s.finished ? 0 : line.size();
            },
            std::chrono::milliseconds(100));
    }
    return std::make_unique<core::Progress>(
        [](const core::ProgressState& s) {
            if (s.done == 0 && !s.finished) return;  // the phase just began: nothing to say yet
            fmt::print(stderr, "{}\n", core::render_progress_line(s, 100));
        },
        std::chrono::seconds(1));
}

std::unique_ptr<core::Progress> begin_progress(std::string phase, std::uint64_t total,
                                               core::ProgressUnit unit) {
    auto p = make_progress();
    if (p) p->begin(std::move(phase), total, unit);
    return p;
}

}  // namespace fsimg::cli
