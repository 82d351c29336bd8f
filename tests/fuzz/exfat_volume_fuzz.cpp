// Fuzz target: an image from bytes is checked by the exFAT fsck
// (exfat/check.hpp), opened as an exFAT volume (boot region, up-case table),
// its allocation bitmap summed, every directory walked and every file read,
// and a path looked up. Only fsimg::Error may come out;
// anything else (a crash, a hang, a sanitizer report, an allocation beyond
// the image) is a bug. libFuzzer (clang, -DFSIMG_FUZZ=ON) or replay_main.cpp.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"

namespace {

void walk(const fsimg::exfat::Volume& v, const fsimg::exfat::FileRecord& dir, unsigned depth,
          std::vector<std::uint32_t>& ancestors) {
    if (depth > 16) return;
    for (auto a : ancestors) {
        if (a == dir.first_cluster) return;
    }
    fsimg::exfat::ParsedDirectory d;
    try {
        d = v.read_directory(dir);
    } catch (const fsimg::Error&) {
        return;
    }
    ancestors.push_back(dir.first_cluster);
    for (const auto& r : d.files) {
        try {
            if (r.is_directory()) {
                walk(v, r, depth + 1, ancestors);
            } else {
                v.read_file(r, [](std::span<const std::byte>) {});
            }
        } catch (const fsimg::Error&) {
        }
    }
    ancestors.pop_back();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = std::byte{data[i]};
    fsimg::io::MemoryImage dev(std::move(bytes));
    try {
        fsimg::check::Findings findings;
        fsimg::exfat::check_volume(dev, findings);
    } catch (const fsimg::Error&) {
    }
    try {
        fsimg::exfat::Volume v(dev);
        std::vector<std::uint32_t> ancestors;
        walk(v, v.root_record(), 0, ancestors);
        try {
            (void)v.used_runs(1000);
            (void)v.used_clusters();
        } catch (const fsimg::Error&) {
        }
        (void)v.lookup("/A/B/C.TXT");
    } catch (const fsimg::Error&) {
    }
    return 0;
}
