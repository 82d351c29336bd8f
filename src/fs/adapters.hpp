// The opener table: one adapter per filesystem, each a few functions over
// that filesystem's own library (fat/, exfat/, ntfs/). Private to src/fs;
// the face is fs/detect.hpp, fs/view.hpp and fs/check.hpp.
//
// Adding a filesystem: a Kind, one adapter file (probe, open_view, check)
// and its row in adapters(); no caller changes (docs/architecture.md).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "fsimg/check/finding.hpp"
#include "fsimg/check/summary.hpp"
#include "fsimg/fs/check.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/fs/view.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::fs::detail {

/// What one probe says (Detection without the kind).
struct Match {
    Certainty certainty = Certainty::signature;
    bool through_backup = false;
    std::uint64_t backup_offset = 0;
    std::string note;
};

struct Adapter {
    Kind kind;
    /// With `backups` false: a match on sector 0 alone (the filesystem's
    /// signature; NTFS also looks for its backup when a named sector 0 breaks
    /// a rule). With `backups` true (only asked when no filesystem matched
    /// sector 0): a match through a backup boot sector, or FAT's weak match.
    /// nullopt when neither; reads a few sectors; throws only Error(io).
    std::optional<Match> (*probe)(const io::BlockDevice& volume, bool backups);
    /// The view of a volume detect() gave to this adapter.
    std::unique_ptr<View> (*open_view)(const io::BlockDevice& volume, const Detection& detection);
    /// The check of such a volume; findings appended to `out`.
    check::Summary (*check)(const io::BlockDevice& volume, const Detection& detection, check::Findings& out,
                            const CheckOptions& options);
};

/// Every adapter, in Kind order.
const std::array<Adapter, kKindCount>& adapters();
const Adapter& adapter(Kind kind);

// The rows of the table (src/fs/<fs>_adapter.cpp).
Adapter fat_adapter();
Adapter exfat_adapter();
Adapter ntfs_adapter();

}  // namespace fsimg::fs::detail
