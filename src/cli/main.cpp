// fsimg: the command line. Parsing (CLI11) and printing (fmt) only.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/utf8_safe.hpp"
#include "fsimg/fat/directory.hpp"
#include "output.hpp"

namespace fsimg::cli {

// stdout is flushed first so that, with both going to one file or pipe, a
// note follows the output it is about.
void note(const std::string& text) {
    if (output_options().quiet) return;
    std::fflush(stdout);
    fmt::print(stderr, "fsimg: note: {}\n", core::escape_controls(text));
}
std::string shown(std::string_view s) { return core::escape_invalid_utf8(core::escape_name(s)); }

void warn(const std::string& text) {
    if (output_options().quiet) return;
    std::fflush(stdout);
    fmt::print(stderr, "fsimg: warning: {}\n", core::escape_controls(text));
}

namespace {

int exit_code_for(ErrorCode code) {
    switch (code) {
        case ErrorCode::usage:
            return kExitUsage;
        case ErrorCode::refused:
            return kExitRefused;
        default:
            return kExitFailure;
    }
}

}  // namespace
}  // namespace fsimg::cli

/// " (did you mean --deleted?)" for the first unexpected option of a parse
/// error ("The following argument was not expected: --delted") that is close
/// to an option of the command `name`; empty otherwise.
static std::string option_hint(CLI::App& app, std::string_view name, std::string_view what) {
    const std::size_t colon = what.find(": ");
    if (name.empty() || colon == std::string_view::npos) return {};
    std::string_view word = what.substr(colon + 2);
    word = word.substr(0, word.find(' '));
    if (word.size() < 2 || word.front() != '-') return {};
    word = word.substr(0, word.find('='));
    CLI::App* sub = nullptr;
    for (CLI::App* c : app.get_subcommands({}))
        if (c->get_name() == name) sub = c;
    if (sub == nullptr) return {};
    std::vector<std::string> options;
    for (const CLI::Option* o : sub->get_options()) {
        for (const std::string& l : o->get_lnames()) options.push_back("--" + l);
        for (const std::string& s : o->get_snames()) options.push_back("-" + s);
    }
    const auto guess = fsimg::core::closest_word(word, options);
    return guess ? fmt::format(" (did you mean {}?)", *guess) : std::string();
}

namespace {
using Adder = fsimg::cli::Action (*)(CLI::App&);
constexpr std::pair<std::string_view, Adder> kCommands[] = {
    {"mkfs", fsimg::cli::add_mkfs},   {"disk", fsimg::cli::add_disk},       {"dump", fsimg::cli::add_dump},
    {"fsck", fsimg::cli::add_fsck},   {"slack", fsimg::cli::add_slack},     {"ls", fsimg::cli::add_ls},
    {"cat", fsimg::cli::add_cat},     {"extract", fsimg::cli::add_extract}, {"cp", fsimg::cli::add_cp},
    {"rm", fsimg::cli::add_rm},       {"mkdir", fsimg::cli::add_mkdir},     {"mv", fsimg::cli::add_mv},
    {"label", fsimg::cli::add_label}, {"attrib", fsimg::cli::add_attrib},   {"undo", fsimg::cli::add_undo},
    {"help", fsimg::cli::add_help},
};
}  // namespace

std::vector<std::pair<std::string_view, fsimg::cli::Action>> fsimg::cli::define_commands(
    CLI::App& app, std::string_view only) {
    app.description("fsimg: create, check and inspect FAT12/16/32, exFAT and NTFS image files offline");
    app.name("fsimg");
    app.footer(
        "`fsimg help COMMAND` or `fsimg COMMAND --help` describes a command; man fsimg-COMMAND too.\n"
        "Examples:\n"
        "  fsimg mkfs -t fat32 -s 2G --partition-table mbr disk.img\n"
        "  fsimg fsck disk.img\n"
        "  fsimg ls -l -R disk.img\n"
        "  fsimg help mkfs");
    app.set_version_flag("--version", std::string("fsimg ") + FSIMG_VERSION);
    app.require_subcommand(1);
    std::vector<std::pair<std::string_view, Action>> actions;
    for (const auto& [name, adder] : kCommands) {
        if (!only.empty() && name != only) continue;
        actions.emplace_back(name, adder(app));
    }
    for (CLI::App* sub : app.get_subcommands({})) {
        // Long work (a progress line): mkfs --from, fsck, slack, extract; ls, cat and dump only get -q.
        const std::string& name = sub->get_name();
        if (name != "help")
            add_output_flags(sub, name == "mkfs" || name == "disk" || name == "fsck" || name == "slack" ||
                                      name == "extract");
    }
    return actions;
}

int fsimg::cli::run_cli(int argc, char** argv) {
    using namespace fsimg::cli;
    output_options() = OutputOptions{};  // run_cli runs many times in one process (the CLI fuzz target)
    CLI::App app;
    // Only the command being run is built: CLI11 spends most of fsimg's
    // start-up adding options (about 1.2 of 1.6 million instructions for all
    // eight commands, callgrind), and a short fsck is measured against
    // fsck.exfat. `help`, --help, --version and anything unknown build them all.
    const std::string_view first = argc > 1 ? std::string_view(argv[1]) : std::string_view();
    const bool known = std::any_of(std::begin(kCommands), std::end(kCommands),
                                   [&](const auto& c) { return c.first == first; });
    const auto actions = define_commands(app, known && first != "help" ? first : std::string_view());
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        // The parser's message, in the form every other error has.
        if (!first.empty() && first.front() != '-' && !known) {
            std::vector<std::string> names;
            for (const auto& c : kCommands) names.emplace_back(c.first);
            const auto guess = core::closest_word(first, names);
            fmt::print(stderr, "fsimg: error: \"{}\" is not a command{}; see fsimg --help\n",
                       core::escape_name(first), guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : "");
        } else {
            fmt::print(stderr, "fsimg: error: {}{}; see fsimg help{}{}\n", core::escape_controls(e.what()),
                       option_hint(app, first, e.what()), known ? " " : "",
                       known ? first : std::string_view());
        }
        return first == "fsck" ? 16 : kExitUsage;
    }
    fat::set_oem_code_page(output_options().codepage == 437 ? fat::OemCodePage::cp437
                                                            : fat::OemCodePage::cp850);
    for (CLI::App* sub : app.get_subcommands()) {  // a command's own -q (mkfs) quiets the notes too
        if (const CLI::Option* q = sub->get_option_no_throw("-q"); q && q->count() > 0)
            output_options().quiet = true;
    }
    try {
        for (const auto& [name, action] : actions) {
            if (app.got_subcommand(std::string(name))) return action();
        }
    } catch (const fsimg::Error& e) {
        fmt::print(stderr, "fsimg: error: {}\n", core::escape_controls(e.what()));
        return exit_code_for(e.code());
    } catch (const std::bad_alloc&) {
        // Memory follows the image's real content; an allocation that still fails was asked for by
        // the input (or the machine is short): an operational error, never an "internal error".
        fmt::print(stderr,
                   "fsimg: error: out of memory: reading the input needs more memory than is available\n");
        return first == "fsck" ? 8 : kExitFailure;
    } catch (const std::length_error& e) {
        fmt::print(stderr,
                   "fsimg: error: out of memory: the input asks for an object too large to hold ({})\n",
                   e.what());
        return first == "fsck" ? 8 : kExitFailure;
    } catch (const std::exception& e) {
        fmt::print(stderr, "fsimg: internal error: {}\n", e.what());
        // The CLI fuzz target (tests/fuzz/cli_walk_fuzz.cpp) counts an internal error as a crash.
        if (std::getenv("FSIMG_ABORT_ON_INTERNAL_ERROR") != nullptr) std::abort();
        return kExitFailure;
    }
    return kExitUsage;
}
