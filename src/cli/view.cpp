#include "view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "fsimg/core/text.hpp"

namespace fsimg::cli {

std::unique_ptr<fs::View> open_image_view(const std::string& spec) {
    auto view = naming_image(spec, [&] { return fs::open_view(spec); });
    for (const auto& p : view->open_problems()) warn(fmt::format("{}: {}", spec, p));
    return view;
}

std::vector<std::string> expand_paths(const fs::View& view, const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const std::string& p : paths) {
        if (!core::has_wildcard(p)) {
            out.push_back(p);
            continue;
        }
        std::vector<std::string> problems;
        std::vector<std::string> found = fs::expand_wildcards(view, p, problems);
        for (const auto& x : problems) warn(x);
        if (found.empty()) {
            out.push_back(p);
        } else {
            out.insert(out.end(), found.begin(), found.end());
        }
    }
    return out;
}

std::vector<std::string> expand_paths(const std::string& spec, const std::vector<std::string>& paths) {
    if (std::none_of(paths.begin(), paths.end(), [](const std::string& p) { return core::has_wildcard(p); }))
        return paths;
    const auto view = open_image_view(spec);
    return expand_paths(*view, paths);
}

nlohmann::json properties_json(const fs::Entry& entry) {
    nlohmann::json j = nlohmann::json::object();
    for (const fs::Property& p : entry.properties) std::visit([&](const auto& v) { j[p.key] = v; }, p.value);
    return j;
}

}  // namespace fsimg::cli
