// What a repairing fsck run may change, and what it reports having done
// (fsimg fsck -a/-p/-y; docs/fsck.md "Repair").
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/check/finding.hpp"

namespace fsimg::check {

/// fsck(8)'s repair levels: `preen` (-a, -p) makes only the repairs that
/// need no judgement (a flag, a count, a copy from a valid twin); `all` (-y)
/// everything fsimg can repair.
enum class RepairLevel : std::uint8_t { preen, all };

/// One repair made: the finding code it answers and what was written, said
/// for a person ("FSInfo's free count set to 12,345 (it said 99)").
struct Repair {
    std::string code;
    std::string done;
};

struct RepairOptions {
    RepairLevel level = RepairLevel::preen;
    /// Called after the repairs and before the clean flag is set again (the
    /// image file's fsync), so that the flag never reaches the disk before
    /// what it vouches for. May be empty.
    std::function<void()> barrier;
};

/// Which findings of one check a repair at `level` answers.
struct RepairPlan {
    std::set<std::string_view> codes;  ///< the repairable codes found (check::repairs)
    bool errors_left = false;          ///< an error or fatal finding that no repair at this level answers
    bool has(std::string_view code) const { return codes.count(code) != 0; }
};
RepairPlan plan_repairs(const Findings& found, RepairLevel level);

/// True when `code` is one a repair at `level` answers (every filesystem's
/// repairable codes, docs/fsck-codes.md "Repair").
bool repairs(std::string_view code, RepairLevel level) noexcept;

}  // namespace fsimg::check
