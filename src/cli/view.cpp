#include "view.hpp"

#include <fmt/format.h>

#include "common.hpp"

namespace fsimg::cli {

std::unique_ptr<fs::View> open_image_view(const std::string& spec) {
    auto view = naming_image(spec, [&] { return fs::open_view(spec); });
    for (const auto& p : view->open_problems()) warn(fmt::format("{}: {}", spec, p));
    return view;
}

nlohmann::json properties_json(const fs::Entry& entry) {
    nlohmann::json j = nlohmann::json::object();
    for (const fs::Property& p : entry.properties) std::visit([&](const auto& v) { j[p.key] = v; }, p.value);
    return j;
}

}  // namespace fsimg::cli
