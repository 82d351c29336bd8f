// fsimg help [COMMAND]: the same text as `fsimg COMMAND --help`.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "common.hpp"
#include "fsimg/core/error.hpp"

namespace fsimg::cli {

Action add_help(CLI::App& app) {
    auto command = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("help", "Show the help of a command (the same as COMMAND --help)");
    cmd->footer(
        "Examples:\n"
        "  fsimg help mkfs\n"
        "  fsimg help");
    cmd->add_option("COMMAND", *command, "The command to describe; none: the list of commands");
    const CLI::App* top = &app;
    return [top, command] {
        if (command->empty()) {
            fmt::print("{}",
                       top->get_formatter()->make_help(top, top->get_name(), CLI::AppFormatMode::Normal));
            return static_cast<int>(kExitOk);
        }
        for (const CLI::App* sub : top->get_subcommands([](const CLI::App*) { return true; })) {
            if (sub->get_name() == *command) {
                fmt::print("{}", sub->help(top->get_name()));
                return static_cast<int>(kExitOk);
            }
        }
        std::string names;
        for (const CLI::App* sub : top->get_subcommands([](const CLI::App*) { return true; })) {
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        throw Error(ErrorCode::usage,
                    fmt::format("help: there is no command \"{}\"; the commands are {}", *command, names));
    };
}

}  // namespace fsimg::cli
