// check_volume(): detect, then the adapter's checker.
#include "fsimg/fs/check.hpp"

#include "adapters.hpp"

namespace fsimg::fs {

Checked check_volume(const io::BlockDevice& volume, check::Findings& out, const CheckOptions& options) {
    Checked c;
    c.detection = detect(volume);
    c.summary = detail::adapter(c.detection.kind).check(volume, c.detection, out, options);
    return c;
}

}  // namespace fsimg::fs
