#include "fsimg/core/walk.hpp"

#include <fmt/format.h>

#include "fsimg/core/error.hpp"

namespace fsimg::core {

std::vector<std::string_view> path_components(std::string_view path) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < path.size()) {
        while (i < path.size() && path[i] == '/') ++i;
        if (i >= path.size()) break;
        std::size_t j = path.find('/', i);
        if (j == std::string_view::npos) j = path.size();
        const std::string_view comp = path.substr(i, j - i);
        if (comp == "." || comp == "..") {
            throw Error(ErrorCode::usage, fmt::format("path \"{}\": \".\" and \"..\" are not allowed", path));
        }
        out.push_back(comp);
        i = j;
    }
    return out;
}

}  // namespace fsimg::core
