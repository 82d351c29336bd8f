// Analysis::add_list: streaming "SIZE<TAB>PATH" listings.
#include <fmt/format.h>

#include <charconv>
#include <functional>
#include <unordered_set>
#include <vector>

#include "fsimg/core/error.hpp"
#include "sources_internal.hpp"

namespace fsimg::slack {

namespace {

struct Frame {
    std::string name;
    DirAccumulator acc;
};

std::uint64_t path_hash(const std::string& path) { return std::hash<std::string>{}(path); }

}  // namespace

void Analysis::add_list(std::istream& in, const std::string& name) {
    Impl& im = *impl_;
    Tally& t = im.tally;
    std::vector<Frame> stack;  // open directories below the root, outermost first
    std::unordered_set<std::uint64_t> closed;
    std::uint64_t line_no = 0;
    auto fail = [&](const std::string& why) {
        throw Error(ErrorCode::usage, fmt::format("{}:{}: {}", name, line_no, why));
    };
    auto close_to = [&](std::size_t depth) {
        while (stack.size() > depth) {
            stack.back().acc.finish(t);
            closed.insert(path_hash(stack.back().acc.context().path));
            stack.pop_back();
        }
    };
    auto current = [&]() -> DirAccumulator& { return stack.empty() ? im.root : stack.back().acc; };

    std::string line;
    std::vector<std::string_view> parts;
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::size_t tab = line.find('\t');
        if (tab == std::string::npos)
            fail("expected SIZE<TAB>PATH (find -printf '%s\\t%P\\n'), found no tab");
        const std::string_view size_text(line.data(), tab);
        std::uint64_t size = 0;
        const auto [ptr, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
        if (size_text.empty() || ec != std::errc{} || ptr != size_text.data() + size_text.size()) {
            fail(fmt::format("the size \"{}\" is not a decimal number of bytes{}", size_text,
                             ec == std::errc::result_out_of_range ? " that fits 64 bits" : ""));
        }
        std::string_view path(line.data() + tab + 1, line.size() - tab - 1);
        while (path.starts_with("./")) path.remove_prefix(2);
        while (path.starts_with("/")) path.remove_prefix(1);
        bool is_dir = false;
        if (path.ends_with("/")) {
            is_dir = true;
            path.remove_suffix(1);
        }
        if (path.empty()) {
            if (is_dir) continue;  // "./" names the root itself
            fail("the path is empty");
        }
        parts.clear();
        for (std::size_t pos = 0;;) {
            const std::size_t slash = path.find('/', pos);
            const std::string_view part =
                path.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
            if (part.empty()) fail(fmt::format("the path \"{}\" has an empty component", path));
            if (part == "." || part == "..") fail(fmt::format("the path \"{}\" contains . or ..", path));
            parts.push_back(part);
            if (slash == std::string_view::npos) break;
            pos = slash + 1;
        }
        const std::size_t dirs = is_dir ? parts.size() : parts.size() - 1;
        std::size_t common = 0;
        while (common < stack.size() && common < dirs && stack[common].name == parts[common]) ++common;
        close_to(common);
        for (std::size_t i = common; i < dirs; ++i) {
            const DirContext& parent = current().context();
            const std::string child_path =
                parent.path == "/" ? "/" + std::string(parts[i]) : parent.path + "/" + std::string(parts[i]);
            if (closed.count(path_hash(child_path)) != 0) {
                fail(
                    fmt::format("the directory \"{}\" was left earlier in the listing; the lines of a "
                                "directory must stay together (use find's order, or sort the listing)",
                                child_path.substr(1)));
            }
            const std::uint8_t ex = current().add(t, parts[i], EntryKind::directory, 0);
            DirContext ctx = parent.child(parts[i], ex);
            stack.push_back({std::string(parts[i]), DirAccumulator(im.opt.analyzer, std::move(ctx))});
        }
        if (!is_dir) {
            const std::string_view leaf = parts.back();
            const std::string& dir = current().context().path;
            if (!closed.empty() && closed.count(path_hash(dir == "/" ? "/" + std::string(leaf)
                                                                     : dir + "/" + std::string(leaf))) != 0) {
                fail(fmt::format("\"{}\" was listed as a directory earlier and now as a file", path));
            }
            current().add(t, leaf, EntryKind::file, size);
        }
        if (im.opt.progress && (line_no & 0xFFFF) == 0) im.opt.progress(line_no);
    }
    if (in.bad()) throw Error(ErrorCode::io, fmt::format("{}: read error after line {}", name, line_no));
    close_to(0);
}

}  // namespace fsimg::slack
