#include "fsimg/check/finding.hpp"

#include <algorithm>

#include "fsimg/check/codes.hpp"

namespace fsimg::check {

std::string_view to_string(Severity s) noexcept {
    switch (s) {
        case Severity::info:
            return "info";
        case Severity::warning:
            return "warning";
        case Severity::error:
            return "error";
        case Severity::fatal:
            return "fatal";
    }
    return "error";
}

Location at_sector(std::uint64_t sector, std::uint32_t bytes_per_sector, std::string object) {
    Location l;
    l.sector = sector;
    l.byte_offset = sector * bytes_per_sector;
    l.object = std::move(object);
    return l;
}

Finding& Findings::add(std::string_view code, Location where, std::string message, std::uint64_t count) {
    const CodeInfo* info = find_code(code);
    Finding f;
    f.severity = info ? info->severity : Severity::error;
    f.code = info ? info->code : code;
    f.where = std::move(where);
    f.message = std::move(message);
    f.count = count;
    items_.push_back(std::move(f));
    return items_.back();
}

Finding& Findings::add(Finding f) {
    items_.push_back(std::move(f));
    return items_.back();
}

std::size_t Findings::count(Severity s) const noexcept {
    return static_cast<std::size_t>(
        std::count_if(items_.begin(), items_.end(), [s](const Finding& f) { return f.severity == s; }));
}

bool Findings::has_errors() const noexcept {
    return std::any_of(items_.begin(), items_.end(), [](const Finding& f) {
        return f.severity == Severity::error || f.severity == Severity::fatal;
    });
}

bool Findings::has(std::string_view code) const noexcept {
    return std::any_of(items_.begin(), items_.end(), [code](const Finding& f) { return f.code == code; });
}

}  // namespace fsimg::check
