// The metadata ranges of an NTFS volume (fs/metadata.hpp).
#pragma once

#include <string>
#include <vector>

#include "fsimg/fs/metadata.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

/// Appends to `ranges` the boot sector, the backup boot sector (the sector
/// after the volume), $MFT's $DATA (every record), and the runs of every
/// non-resident attribute of every in-use record except file data: the
/// $DATA streams of records from kFirstNonSystemRecord on (a base record's
/// number decides for its extension records), $BadClus:$Bad, and $LogFile's
/// $DATA unless `logfile`. Appends to `patches` each in-use non-system
/// record whose resident $DATA values are zeroed (fixups reapplied with the
/// record's own update sequence number), in 512-byte pieces at their
/// volume offsets. A record that does not decode is copied as it is and
/// nothing it names is followed. Throws Error(io).
void metadata_ranges(const Volume& v, bool logfile, std::vector<fs::ByteRange>& ranges,
                     std::vector<fs::Patch>& patches, std::vector<std::string>& problems);

}  // namespace fsimg::ntfs
