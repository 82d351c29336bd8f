// What a repairing fsck run may change, and what it reports having done
// (fsimg fsck -a/-p/-y; docs/fsck.md "Repair").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/io/block_device.hpp"

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
    /// -y --salvage: lost chains are saved as files instead of freed (FAT:
    /// /FOUND.nnn/FILEnnnn.CHK, chkdsk's convention); where a filesystem
    /// cannot save them yet (exFAT, NTFS) its lost clusters are left.
    bool salvage = false;
    /// Unix seconds stamped on what a repair creates (--salvage's files and
    /// directories); `clamp`: SOURCE_DATE_EPOCH, no stamp later than it.
    std::int64_t now = 0;
    std::optional<std::int64_t> clamp;
};

/// Which findings of one check a repair at `level` answers.
struct RepairPlan {
    std::set<std::string_view> codes;  ///< the repairable codes found (check::repairs)
    bool errors_left = false;          ///< an error or fatal finding that no repair at this level answers
    bool has(std::string_view code) const { return codes.count(code) != 0; }
};
RepairPlan plan_repairs(const Findings& found, RepairLevel level);

/// One byte of an allocation bitmap (exFAT's allocation bitmap, NTFS's
/// $Bitmap or $MFT's $BITMAP) that disagrees with what the check found owned.
struct BitmapFix {
    std::uint64_t offset = 0;  ///< volume byte offset of the bitmap byte
    std::uint8_t set = 0;      ///< bits of what is owned (in use) but marked free
    std::uint8_t clear = 0;    ///< bits of what is marked in use but owned by nothing
};
/// Bits set and cleared by apply_bitmap_fixes.
struct BitmapChange {
    std::uint64_t set = 0;
    std::uint64_t cleared = 0;
};
/// Writes `fixes` (ascending offsets) to `device`: each byte read, its `set`
/// bits set and `clear` bits cleared, and written back; a run of adjacent
/// bytes (at most 64 KiB) in one read and one write. Throws Error(io).
BitmapChange apply_bitmap_fixes(io::BlockDevice& device, const std::vector<BitmapFix>& fixes);

/// True when `code` is one a repair at `level` answers (every filesystem's
/// repairable codes, docs/fsck-codes.md "Repair").
bool repairs(std::string_view code, RepairLevel level) noexcept;

/// True when `fixes` (renames: each with a `duplicate` flag) answer fewer of
/// `found`'s `invalid_code` findings (duplicate false) or `duplicate_code`
/// findings (duplicate true) than there are: then errors are left.
template <class Fix>
bool names_left(const Findings& found, const std::vector<Fix>& fixes, std::string_view invalid_code,
                std::string_view duplicate_code) {
    std::size_t wanted[2] = {0, 0}, fixed[2] = {0, 0};
    for (const Finding& f : found.all()) {
        if (f.code == invalid_code) ++wanted[0];
        if (f.code == duplicate_code) ++wanted[1];
    }
    for (const Fix& f : fixes) ++fixed[f.duplicate ? 1 : 0];
    return fixed[0] < wanted[0] || fixed[1] < wanted[1];
}

}  // namespace fsimg::check
