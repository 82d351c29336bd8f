// Findings: what a checker reports about damage inside an image.
//
// Operational failures (cannot open or read the image) are thrown as
// fsimg::Error; everything wrong *inside* the image is a Finding appended to
// a Findings sink, never thrown out of a checker (design.md, style.md §4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fsimg::check {

/// How bad a finding is. `error` and `fatal` make fsck exit 4; `fatal` also
/// means the checker could not go on past it (e.g. underivable geometry).
enum class Severity : std::uint8_t { info, warning, error, fatal };

/// "info", "warning", "error", "fatal".
std::string_view to_string(Severity s) noexcept;

/// Where a finding is. Every part is optional; a finding names as many as it knows.
struct Location {
    std::optional<std::uint64_t> byte_offset;  ///< absolute, in the volume (bytes from its first sector)
    std::optional<std::uint64_t> sector;       ///< volume-relative sector number
    std::optional<std::uint32_t> cluster;      ///< FAT/exFAT cluster number (from 2)
    std::string object;                        ///< "FAT 2 entry 1234", "/DCIM/A.JPG", "boot sector"
    /// The other owner of what `object` claims: a cross-link's first owner
    /// ("/A.TXT", "allocation bitmap"); empty when there is none or it is unknown.
    std::string other_owner{};
};

/// A location at a volume sector: its number, its byte offset (sector x
/// bytes_per_sector) and what lies there ("boot sector", "FAT 1").
Location at_sector(std::uint64_t sector, std::uint32_t bytes_per_sector, std::string object);

/// One problem found in an image.
struct Finding {
    Severity severity = Severity::error;
    std::string_view code;  ///< a registered code (codes.hpp), stable: "fat.chain.cross-link"
    Location where;
    std::string message;      ///< says what was expected and what was found, with the values
    std::uint64_t count = 1;  ///< how many instances this one finding stands for (one root cause)
};

/// The sink every checker appends to. Keeps findings in the order found.
class Findings {
public:
    /// Appends a finding with the code's default severity (from the registry;
    /// an unregistered code is a programming error and gets Severity::error).
    Finding& add(std::string_view code, Location where, std::string message, std::uint64_t count = 1);
    /// Appends a finding as is.
    Finding& add(Finding f);

    const std::vector<Finding>& all() const noexcept { return items_; }
    std::size_t size() const noexcept { return items_.size(); }
    bool empty() const noexcept { return items_.empty(); }
    /// Number of findings of exactly this severity.
    std::size_t count(Severity s) const noexcept;
    /// True when any finding is an error or fatal.
    bool has_errors() const noexcept;
    /// True when a finding with this code exists.
    bool has(std::string_view code) const noexcept;

private:
    std::vector<Finding> items_;
};

}  // namespace fsimg::check
