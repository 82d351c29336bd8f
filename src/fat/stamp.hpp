// Host times -> FAT timestamp fields, as populate (mkfs --from) and the
// editor (cp, mkdir, mv) write them: clamped to SOURCE_DATE_EPOCH, in UTC or
// the host's local time, 2-second resolution with the 10 ms remainder in
// DIR_CrtTimeTenth [FATGEN "Date and Time Formats"; docs/formats.md §1.8].
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <optional>

#include "fsimg/fat/structs.hpp"

namespace fsimg::fat {

class Stamper {
public:
    Stamper(std::optional<std::int64_t> clamp, bool local_time) : clamp_(clamp), local_time_(local_time) {}
    /// The fields for Unix time t (+ ns nanoseconds, which only the tenth keeps).
    FatTimestamp stamp(std::int64_t t, std::uint32_t ns = 0) const {
        if (clamp_ && t >= *clamp_) {
            t = *clamp_;
            ns = 0;
        }
        if (local_time_) {
            const std::time_t tt = static_cast<std::time_t>(t);
            std::tm tm{};
            if (::localtime_r(&tt, &tm) != nullptr) t += tm.tm_gmtoff;
        }
        FatTimestamp ts = fat_timestamp_from_unix(t);
        if (ts.tenth != 0 || ns != 0)
            ts.tenth = static_cast<std::uint8_t>(std::min<unsigned>(199, ts.tenth + ns / 10000000u));
        return ts;
    }
    /// Sets the modification, last-access (the modification date: reading a
    /// source moves its atime, which would make builds differ) and creation
    /// fields of `e`.
    void apply(DirEntry& e, std::int64_t mtime, std::int64_t btime, std::uint32_t btime_ns) const {
        const FatTimestamp wrt = stamp(mtime), crt = stamp(btime, btime_ns);
        e.wrt_date = wrt.date;
        e.wrt_time = wrt.time;
        e.lst_acc_date = wrt.date;
        e.crt_date = crt.date;
        e.crt_time = crt.time;
        e.crt_time_tenth = crt.tenth;
    }

private:
    std::optional<std::int64_t> clamp_;
    bool local_time_;
};

}  // namespace fsimg::fat
