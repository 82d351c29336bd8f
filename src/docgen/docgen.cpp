// fsimg_docgen: the manual pages (docs/man/*.1) and the shell completions
// (completions/fsimg.bash, completions/_fsimg), made from the one definition
// of fsimg's command line (fsimg::cli::define_commands, the one --help
// prints) and the prose beside it:
//   docs/man/fsimg[-COMMAND].1.in   everything a page says beyond the options'
//                                   names, values and the --help examples
//   completions/fsimg.bash.in, completions/_fsimg.in
//                                   the shell code around the option lists
//
// usage: fsimg_docgen SOURCE_DIR OUT_DIR
// writes OUT_DIR/docs/man/*.1 and OUT_DIR/completions/{fsimg.bash,_fsimg}.
// scripts/gen-docs runs it with OUT_DIR = SOURCE_DIR; tests/cli/man_pages.sh
// fails when the committed files differ from what it writes.
//
// From the definition: .TH (the version, FSIMG_DOC_DATE), NAME (the command's
// description), SYNOPSIS (its positionals), each OPTIONS item's first line
// (every name of the option and its value: the type name, or the choices
// of an IsMember check), the items of options the .in does not describe
// (with the --help text), the examples of the --help footer, the command
// list of fsimg(1), and every option list of the completions. The .in
// directives are roff comments:
//   .\" @option NAME...     an OPTIONS item for these options (one or several
//                           that share one text); the lines up to the next
//                           directive or .SH are its text
//   .\" @examples           the --help examples, a line each (inside .nf)
//   .\" @commands           fsimg(1): an item per command, with its description
//   .\" @see-commands       fsimg(1): a reference to every command's page
// and in the completions' .in files:
//   @BASH_OPTIONS@          bash: one case per command listing its options
//   @COMMANDS@              bash: the command names
//   @ZSH_COMMANDS@          zsh: 'name:description' per command
//   @ZSH_OPTIONS:COMMAND@   zsh: the _arguments specs of COMMAND's options
//     (the value each option takes is completed by the action a
//     "#@action [COMMAND:]--NAME ACTION" line of _fsimg.in gives, else not)
// An @option naming no option of the command, an option that takes a value
// with no name for it (TEXT), or a directive out of place is an error: the
// pages cannot describe what the command does not have.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../cli/common.hpp"

namespace {

namespace fsys = std::filesystem;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string read_text(const fsys::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) fail(fmt::format("cannot read {}", p.string()));
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fsys::path& p, const std::string& text) {
    fsys::create_directories(p.parent_path());
    const fsys::path tmp = p.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out.flush()) fail(fmt::format("cannot write {}", tmp.string()));
    }
    fsys::rename(tmp, p);
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

/// Text for roff: '-' as \-, '\' as \e, and a line that would start a
/// request guarded with \&.
std::string roff(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
    }
    if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
    return out;
}

/// A description as a sentence's continuation: "Show the..." -> "show the...".
std::string lower_first(std::string s) {
    if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) &&
        !std::isupper(static_cast<unsigned char>(s[1])))
        s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

std::vector<std::string> option_names(const CLI::Option* o) {
    std::vector<std::string> names;
    std::string all = o->get_name(false, true);
    std::size_t start = 0;
    while (start <= all.size()) {
        const std::size_t comma = all.find(',', start);
        const std::string n =
            all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!n.empty()) names.push_back(n);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return names;
}

bool takes_value(const CLI::Option* o) { return o->get_type_size() != 0 && o->get_expected_max() != 0; }

/// The value an option takes, as its page and --help name it: the type name
/// ("SIZE", "FILE"), or the choices of an IsMember check ("mbr|gpt").
/// Returns whether the value is a placeholder (italic) or literal choices.
std::pair<std::string, bool> option_value(const CLI::Option* o, const std::string& where) {
    // get_type_name() is the type name, then ":" and the description of each
    // check: "TEXT:{mbr,gpt}" (IsMember), "TEXT:FILE" (ExistingFile).
    static const std::set<std::string> generic = {"TEXT", "UINT", "INT", "FLOAT", "NUMBER", ""};
    std::string name = o->get_type_name(), choices;
    if (const std::size_t open = name.find(":{"); open != std::string::npos) {
        const std::size_t close = name.find('}', open);
        choices = name.substr(open + 2, close == std::string::npos ? std::string::npos : close - open - 2);
        std::replace(choices.begin(), choices.end(), ',', '|');
        name.erase(open);
    }
    if (const std::size_t colon = name.find(':');
        colon != std::string::npos && generic.count(name.substr(0, colon)) != 0)
        name.erase(0, colon + 1);
    if (generic.count(name) != 0 && !choices.empty()) return {choices, false};
    if (generic.count(name) != 0)
        fail(
            fmt::format("{}: {} takes a {} value with no name for it: give it ->type_name(\"SIZE\") or the "
                        "like, so that --help and the page say what it takes",
                        where, o->get_name(false, true), name.empty() ? "typeless" : name));
    return {name, true};
}

/// An OPTIONS item's first line: every name of each option, bold, and its value.
std::string item_header(const std::vector<const CLI::Option*>& options, const std::string& where) {
    std::vector<std::string> names;
    std::string value;
    bool placeholder = true;
    for (const CLI::Option* o : options) {
        for (const std::string& n : option_names(o)) names.push_back(n);
        if (takes_value(o) && value.empty()) std::tie(value, placeholder) = option_value(o, where);
    }
    if (names.size() == 1 && value.empty()) return ".B " + roff(names[0]);
    if (names.size() == 1)
        return fmt::format(".B{} {} \" {}\"", placeholder ? "I" : "R", roff(names[0]), roff(value));
    std::string line = ".BR";
    for (std::size_t i = 0; i < names.size(); ++i) line += (i ? " \", \" " : " ") + roff(names[i]);
    if (!value.empty())
        line +=
            placeholder ? fmt::format(" \" \\fI{}\\fR\"", roff(value)) : fmt::format(" \" {}\"", roff(value));
    return line;
}

/// The examples of a --help footer: the indented lines after "Examples:".
std::vector<std::string> footer_examples(const std::string& footer) {
    std::vector<std::string> examples;
    bool in = false;
    for (const std::string& line : split_lines(footer)) {
        if (in && line.rfind("  ", 0) == 0)
            examples.push_back(line.substr(2));
        else if (in)
            break;
        else if (line.size() >= 9 && line.compare(line.size() - 9, 9, "Examples:") == 0)
            in = true;
    }
    return examples;
}

const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
    for (const CLI::Option* o : app.get_options()) {
        if (o->get_positional() && !o->nonpositional()) continue;
        for (const std::string& n : option_names(o))
            if (n == name) return o;
    }
    return nullptr;
}

std::vector<const CLI::Option*> named_options(const CLI::App& app) {
    std::vector<const CLI::Option*> out;
    for (const CLI::Option* o : app.get_options())
        if (o->nonpositional()) out.push_back(o);
    return out;
}

std::vector<const CLI::App*> commands(const CLI::App& top) {
    return top.get_subcommands([](const CLI::App*) { return true; });
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string synopsis(const CLI::App& app, const std::string& where) {
    std::string out = fmt::format(".B fsimg {}\n", app.get_name());
    for (const CLI::Option* o : named_options(app)) {  // required options first, by their first name
        if (!o->get_required()) continue;
        out += ".B " + roff(option_names(o).front()) + "\n";
        if (takes_value(o)) {
            const auto [value, placeholder] = option_value(o, where);
            out += (placeholder ? ".I " : ".B ") + roff(value) + "\n";
        }
    }
    out += ".RI [ OPTIONS ]\n";
    for (const CLI::Option* o : app.get_options()) {
        if (!o->get_positional() || o->nonpositional()) continue;
        // A name may be several words ("[PATH] IMAGE"); "[X]" is optional.
        std::istringstream words(o->get_name(true, false));
        std::vector<std::string> tokens{std::istream_iterator<std::string>(words), {}};
        const bool many = o->get_items_expected_max() >= CLI::detail::expected_max_vector_size;
        for (std::size_t k = 0; k < tokens.size(); ++k) {
            std::string t = tokens[k];
            const bool bracketed = t.size() > 2 && t.front() == '[' && t.back() == ']';
            if (bracketed) t = t.substr(1, t.size() - 2);
            const std::string dots = many && k + 1 == tokens.size() ? " \" ...\"" : "";
            if (bracketed || !o->get_required())
                out += dots.empty() ? fmt::format(".RI [ {} ]\n", roff(t))
                                    : fmt::format(".RI [ {} \" ...]\"\n", roff(t));
            else
                out +=
                    dots.empty() ? fmt::format(".I {}\n", roff(t)) : fmt::format(".IR {}{}\n", roff(t), dots);
        }
    }
    return out;
}

struct Page {
    std::string name;  // fsimg or fsimg-mkfs
    const CLI::App* app;
    const CLI::App* top;
};

std::string make_page(const Page& page, const std::string& in) {
    const CLI::App& app = *page.app;
    const bool top = page.app == page.top;
    const std::string where = page.name + ".1.in";
    std::string out = fmt::format(
        ".\\\" Made by fsimg_docgen (src/docgen) from {}.1.in and the definition of `fsimg{}`;\n"
        ".\\\" edit those and run scripts/gen-docs.\n",
        page.name, top ? "" : " " + app.get_name());
    out += fmt::format(".TH {} 1 {} \"fsimg {}\" \"User Commands\"\n", roff(upper(page.name)), FSIMG_DOC_DATE,
                       FSIMG_VERSION);
    std::string description = app.get_description();
    if (top && description.rfind("fsimg: ", 0) == 0) description.erase(0, 7);
    out += fmt::format(".SH NAME\n{} \\- {}\n", roff(page.name), roff(lower_first(description)));
    out += ".SH SYNOPSIS\n";
    if (top)
        out +=
            ".B fsimg\n.I COMMAND\n.RI [ OPTIONS ]\n.br\n.B fsimg help\n.RI [ COMMAND ]\n.br\n"
            ".B fsimg \\-\\-version\n";
    else
        out += synopsis(app, where);

    const std::vector<std::string> lines = split_lines(in);
    std::size_t i = 0;
    while (i < lines.size() && lines[i].rfind(".SH", 0) != 0) ++i;  // the .in's own header comment
    std::string section;
    std::set<const CLI::Option*> described;
    auto flush_missing_options = [&] {
        for (const CLI::Option* o : named_options(app)) {
            if (described.count(o) != 0) continue;
            const std::string text = o->get_description();
            out += ".TP\n" + item_header({o}, where) + "\n" + roff(text) +
                   (!text.empty() && text.back() == '.' ? "\n" : ".\n");
            described.insert(o);
        }
    };
    for (; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (line.rfind(".SH ", 0) == 0) {
            if (section == "OPTIONS") flush_missing_options();
            section = line.substr(4);
            out += line + "\n";
            continue;
        }
        if (line.rfind(".\\\" @", 0) != 0) {
            out += line + "\n";
            continue;
        }
        std::istringstream words(line.substr(5));
        std::string directive;
        words >> directive;
        if (directive == "option") {
            if (section != "OPTIONS") fail(where + ": @option outside .SH OPTIONS");
            std::vector<const CLI::Option*> group;
            for (std::string n; words >> n;) {
                const CLI::Option* o = find_option(app, n);
                if (o == nullptr)
                    fail(fmt::format("{}: @option {}: fsimg {} has no such option", where, n,
                                     top ? "" : app.get_name()));
                if (std::find(group.begin(), group.end(), o) != group.end()) continue;
                if (described.count(o) != 0) fail(fmt::format("{}: @option {} described twice", where, n));
                group.push_back(o);
                described.insert(o);
            }
            if (group.empty()) fail(where + ": @option names no option");
            out += ".TP\n" + item_header(group, where) + "\n";
        } else if (directive == "examples") {
            const auto examples = footer_examples(app.get_footer());
            if (examples.empty()) fail(where + ": @examples, but --help has no examples");
            for (const std::string& e : examples) out += roff(e) + "\n";
        } else if (directive == "commands" && top) {
            for (const CLI::App* c : commands(app)) {
                if (c->get_name() == "help") continue;
                out += fmt::format(".TP\n.B {}\n{}, see\n.BR fsimg\\-{} (1).\n", c->get_name(),
                                   roff(c->get_description()), c->get_name());
            }
        } else if (directive == "see-commands" && top) {
            std::vector<std::string> names;
            for (const CLI::App* c : commands(app))
                if (c->get_name() != "help") names.push_back(c->get_name());
            for (std::size_t k = 0; k < names.size(); ++k)
                out += fmt::format(".BR fsimg\\-{} (1){}\n", names[k], k + 1 < names.size() ? "," : "");
        } else {
            fail(fmt::format("{}: unknown directive \"{}\"", where, line));
        }
    }
    if (section == "OPTIONS") flush_missing_options();
    if (described.size() != named_options(app).size())
        fail(where + ": the page has no OPTIONS section for the options it leaves out");
    return out;
}

// ---- completions --------------------------------------------------------

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

std::string bash_options(const CLI::App& top) {
    std::string out;
    for (const CLI::App* c : commands(top)) {
        std::string names;
        for (const CLI::Option* o : named_options(*c))
            for (const std::string& n : option_names(o)) names += (names.empty() ? "" : " ") + n;
        out += fmt::format("        {}) echo \"{}\" ;;\n", c->get_name(), names);
    }
    if (!out.empty()) out.pop_back();
    return out;
}

std::string command_names(const CLI::App& top) {
    std::string out;
    for (const CLI::App* c : commands(top)) out += (out.empty() ? "" : " ") + c->get_name();
    return out;
}

/// A zsh description: the --help text without its parentheses, up to its
/// first "; ", and at most about 72 characters cut at a ", " or a space, in
/// single quotes' terms with [ ] escaped.
std::string zsh_text(const std::string& text) {
    std::string s;
    int depth = 0;
    for (std::size_t k = 0; k < text.size(); ++k) {
        if (text[k] == '(') {
            ++depth;
            if (!s.empty() && s.back() == ' ') s.pop_back();
        } else if (text[k] == ')' && depth > 0) {
            --depth;
        } else if (depth == 0) {
            s += text[k];
        }
    }
    if (const std::size_t p = s.find("; "); p != std::string::npos) s.erase(p);
    constexpr std::size_t kWidth = 72;
    if (s.size() > kWidth) {
        std::size_t p = s.rfind(", ", kWidth);
        if (p == std::string::npos || p < 20) p = s.rfind(' ', kWidth);
        s.erase(p);
    }
    while (!s.empty() && (s.back() == ':' || s.back() == ',' || s.back() == ' ')) s.pop_back();
    s = lower_first(s);
    std::string out;
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else if (c == '[' || c == ']')
            out += std::string("\\") + c;
        else
            out += c;
    }
    return out;
}

std::string zsh_commands(const CLI::App& top) {
    std::string out;
    for (const CLI::App* c : commands(top))
        out += fmt::format("        '{}:{}'\n", c->get_name(), zsh_text(c->get_description()));
    if (!out.empty()) out.pop_back();
    return out;
}

std::string zsh_options(const CLI::App& app, const std::map<std::string, std::string>& actions) {
    std::string out;
    auto action_for = [&](const std::string& name) -> std::string {
        for (const std::string& key : {app.get_name() + ":" + name, name})
            if (auto it = actions.find(key); it != actions.end()) return it->second;
        return "";
    };
    for (const CLI::Option* o : named_options(app)) {
        const auto names = option_names(o);
        std::string spec;
        const bool help = names.back() == "--help";
        const bool repeat = o->get_items_expected_max() > 1 && takes_value(o);
        if (help)
            spec = "'(- *)'";
        else if (names.size() > 1)
            spec = "'(" + [&] {
                std::string g;
                for (const auto& n : names) g += (g.empty() ? "" : " ") + n;
                return g;
            }() + ")'";
        if (repeat) spec += "'*'";
        if (names.size() > 1) {
            std::string b;
            for (const auto& n : names) b += (b.empty() ? "" : ",") + n;
            spec += "{" + b + "}";
        } else {
            spec += names[0];
        }
        spec += "'[" + zsh_text(o->get_description()) + "]";
        if (takes_value(o)) {
            // The value's label: the type name ("size"), or for a list of
            // choices the option's name ("type").
            std::string value = o->get_type_name();
            value = value.substr(0, value.find(":{"));
            if (value == "TEXT" || value == "UINT" || value == "INT") value = names.back().substr(2);
            value.erase(std::remove(value.begin(), value.end(), ':'), value.end());
            for (char& ch : value) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            std::string action = action_for(names.back());
            if (action.empty()) {
                const std::string full = o->get_type_name();
                const std::size_t open = full.find('{'), close = full.find('}');
                if (open != std::string::npos && close != std::string::npos)
                    action = "(" + replace_all(full.substr(open + 1, close - open - 1), ",", " ") + ")";
            }
            spec += ":" + value + ":" + action;
        }
        spec += "'";
        out += "                " + spec + " \\\n";
    }
    for (const CLI::Option* o : app.get_options()) {
        if (!o->get_positional() || o->nonpositional()) continue;
        const std::string name = o->get_name(true, false);
        std::string lower = name;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        std::string action = "_files";
        for (const std::string& key : {app.get_name() + ":" + name, name})
            if (auto it = actions.find(key); it != actions.end()) {
                action = it->second;
                break;
            }
        out += fmt::format("                '{}{}:{}:{}' \\\n", o->get_items_expected_max() > 1 ? "*" : "",
                           o->get_required() ? "" : ":", lower, action);
    }
    // the last line's continuation goes
    if (out.size() >= 3) out.erase(out.size() - 3);
    return out;
}

std::string make_zsh(const CLI::App& top, const std::string& in) {
    std::map<std::string, std::string> actions;
    std::string body;
    for (const std::string& line : split_lines(in)) {
        if (line.rfind("#@action ", 0) == 0) {
            std::istringstream w(line.substr(9));
            std::string key, action;
            w >> key;
            std::getline(w >> std::ws, action);
            actions[key] = action == "-" ? std::string() : action;
            continue;
        }
        if (line.rfind("#:", 0) == 0) continue;
        body += line + "\n";
    }
    body = replace_all(body, "@ZSH_COMMANDS@", zsh_commands(top));
    for (const CLI::App* c : commands(top)) {
        const std::string marker = "@ZSH_OPTIONS:" + c->get_name() + "@";
        body = replace_all(body, marker, zsh_options(*c, actions));
    }
    if (body.find('@') != std::string::npos && body.find("@ZSH_") != std::string::npos)
        fail("_fsimg.in: a marker names no command");
    return body;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fsimg_docgen SOURCE_DIR OUT_DIR\n");
        return 2;
    }
    try {
        const fsys::path src = argv[1], out = argv[2];
        CLI::App app;
        fsimg::cli::define_commands(app);
        std::vector<Page> pages{{"fsimg", &app, &app}};
        for (const CLI::App* c : commands(app))
            if (c->get_name() != "help") pages.push_back({"fsimg-" + c->get_name(), c, &app});
        for (const Page& p : pages) {
            const std::string in = read_text(src / "docs/man" / (p.name + ".1.in"));
            write_text(out / "docs/man" / (p.name + ".1"), make_page(p, in));
        }
        std::string bash = read_text(src / "completions/fsimg.bash.in");
        bash = replace_all(bash, "@BASH_OPTIONS@", bash_options(app));
        bash = replace_all(bash, "@COMMANDS@", command_names(app));
        write_text(out / "completions/fsimg.bash", bash);
        write_text(out / "completions/_fsimg", make_zsh(app, read_text(src / "completions/_fsimg.in")));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fsimg_docgen: %s\n", e.what());
        return 1;
    }
    return 0;
}
