// Host times -> exFAT File entry timestamps, as populate (mkfs --from) and
// the editor (cp, mkdir, mv) write them: clamped to SOURCE_DATE_EPOCH, in UTC
// (UtcOffset 0x80) or the host's local time with its offset, 10 ms
// increments [EXFAT §7.4.8-7.4.10; docs/formats.md §2.8].
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>

#include "fsimg/exfat/entry_set.hpp"

namespace fsimg::exfat {

class Stamper {
public:
    Stamper(std::optional<std::int64_t> clamp, bool local_time) : clamp_(clamp), local_time_(local_time) {}
    /// The fields for Unix time t + ns nanoseconds (no later than the clamp).
    EntryTimestamp stamp(std::int64_t t, std::uint32_t ns) const {
        if (clamp_ && t >= *clamp_) {
            t = *clamp_;
            ns = 0;
        }
        std::int32_t offset = 0;
        if (local_time_) {
            const std::time_t tt = static_cast<std::time_t>(t);
            std::tm tm{};
            if (::localtime_r(&tt, &tm) != nullptr) offset = static_cast<std::int32_t>(tm.tm_gmtoff);
        }
        return entry_timestamp(t, ns, offset);
    }
    /// Create from (btime, btime_ns), LastModified from (mtime, mtime_ns),
    /// LastAccessed from mtime without its increment (LastAccessed has no
    /// 10ms field [EXFAT §7.4]; not the host atime: reading a source to
    /// copy it moves that, so two builds would differ).
    void apply(FileEntrySetInfo& e, std::int64_t mtime, std::uint32_t mtime_ns, std::int64_t btime,
               std::uint32_t btime_ns) const {
        e.created = stamp(btime, btime_ns);
        e.modified = stamp(mtime, mtime_ns);
        e.accessed = stamp(mtime, 0);
        e.accessed.increment_10ms = 0;
    }

private:
    std::optional<std::int64_t> clamp_;
    bool local_time_;
};

}  // namespace fsimg::exfat
