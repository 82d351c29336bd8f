// fsck exit status, as fsck(8), e2fsck and fsck.exfat define it. The values
// are bits: the CLI ORs them (design.md; docs/exit-codes.md).
#pragma once

#include "fsimg/check/finding.hpp"

namespace fsimg::check {

enum FsckExit : int {
    kFsckClean = 0,        ///< no errors (warnings and notes may have been printed)
    kFsckCorrected = 1,    ///< errors were corrected
    kFsckUncorrected = 4,  ///< errors were left uncorrected
    kFsckOperational = 8,  ///< operational error: cannot open or read the image
    kFsckUsage = 16,       ///< usage or syntax error
    kFsckCancelled = 32,   ///< cancelled by the user
};

/// The exit status for a check-only run: 4 when any finding is an error or
/// fatal, else 0.
inline int fsck_exit_for(const Findings& f) noexcept {
    return f.has_errors() ? kFsckUncorrected : kFsckClean;
}

}  // namespace fsimg::check
