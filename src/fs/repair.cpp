// repair_volume(): the filesystem's repairer, by what check_volume detected.
#include "fsimg/fs/repair.hpp"

#include "fsimg/exfat/repair.hpp"
#include "fsimg/fat/repair.hpp"
#include "fsimg/ntfs/repair.hpp"

namespace fsimg::fs {

std::vector<check::Repair> repair_volume(io::BlockDevice& volume, const Checked& checked,
                                         const check::Findings& found, const check::RepairOptions& options,
                                         RepairHints* hints) {
    // A volume read through its backup boot sector goes to the repairer too:
    // it rewrites sector 0 from the backup when the backup validates.
    switch (checked.detection.kind) {
        case Kind::fat:
            return fat::repair_volume(volume, found, checked.summary, options,
                                      hints && hints->fat ? &*hints->fat : nullptr);
        case Kind::exfat:
            if (checked.detection.through_backup) return {};  // the main boot region is not restored yet
            {
                bool kept = false;
                auto done = exfat::repair_volume(volume, found, checked.summary, options,
                                                 hints && hints->exfat ? &*hints->exfat : nullptr, &kept);
                if (hints) hints->exfat_walk_current = kept;
                return done;
            }
        case Kind::ntfs:
            return ntfs::repair_volume(volume, found, options);
    }
    return {};
}

}  // namespace fsimg::fs
