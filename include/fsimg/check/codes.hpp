// The registry of finding codes: one table, like e2fsck's problem.c without
// the prompts. Codes are dotted `<fs>.<structure>.<problem>` (or `compat.*`
// for things that are valid but that some system will not accept), never
// renumbered or reused; docs/fsck-codes.md documents each one. Tests assert
// codes, not message wording.
#pragma once

#include <span>
#include <string_view>

#include "fsimg/check/finding.hpp"

namespace fsimg::check {

struct CodeInfo {
    std::string_view code;     ///< "fat.chain.cross-link"
    Severity severity;         ///< default severity
    bool repairable;           ///< a repairing run could fix it (repair is a later feature)
    std::string_view meaning;  ///< one line
};

/// Every registered code, sorted by code.
std::span<const CodeInfo> all_codes() noexcept;
/// The entry for a code, or nullptr when it is not registered.
const CodeInfo* find_code(std::string_view code) noexcept;

}  // namespace fsimg::check
