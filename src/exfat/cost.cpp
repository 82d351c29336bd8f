#include "fsimg/exfat/cost.hpp"
#include "fsimg/core/windows_names.hpp"

#include <fmt/format.h>

#include <vector>

#include "fsimg/exfat/structs.hpp"

namespace fsimg::exfat {

std::optional<std::string> name_problem(std::u16string_view name) {
    if (name.empty()) return "the name is empty";
    if (name == u"." || name == u"..") return "\".\" and \"..\" cannot be stored as names";
    if (name.size() > kMaxNameUnits) {
        return fmt::format("the name has {} UTF-16 units; exFAT names hold at most {}", name.size(),
                           kMaxNameUnits);
    }
    for (const char16_t c : name) {
        if (c < 0x20) return fmt::format("the name holds the control character U+{:04X}", unsigned(c));
        if (core::is_windows_forbidden(c)) {
            return fmt::format("the name holds '{}', which exFAT forbids", char(c));
        }
    }
    return std::nullopt;
}

namespace {
const std::vector<char16_t>& upcase_map() {
    static const std::vector<char16_t> table = [] {
        const auto bytes = upcase_table_bytes(recommended_upcase_table());
        auto expanded = expand_upcase_table(bytes);
        return expanded ? *expanded : std::vector<char16_t>{};
    }();
    return table;
}
}  // namespace

std::u16string upcase_key(std::u16string_view name) {
    const auto& map = upcase_map();
    std::u16string out(name);
    for (char16_t& c : out) {
        if (c < map.size()) c = map[c];
    }
    return out;
}

}  // namespace fsimg::exfat
