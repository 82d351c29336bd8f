#include "fsimg/core/windows_names.hpp"

#include <string>

namespace fsimg::core {

bool is_windows_device_name(std::u16string_view name) noexcept {
    const std::u16string_view stem = name.substr(0, name.find(u'.'));
    std::string up;
    for (const char16_t c : stem) {
        if (c >= 0x80) return false;
        up.push_back(static_cast<char>(c >= u'a' && c <= u'z' ? c - 0x20 : c));
    }
    while (!up.empty() && up.back() == ' ') up.pop_back();
    if (up == "CON" || up == "PRN" || up == "AUX" || up == "NUL") return true;
    return up.size() == 4 && (up.rfind("COM", 0) == 0 || up.rfind("LPT", 0) == 0) && up[3] >= '1' &&
           up[3] <= '9';
}

}  // namespace fsimg::core
