// Fuzz target: an image from bytes is opened as a FAT volume, checked, walked,
// and every file read. Only fsimg::Error may come out; anything else (a crash,
// a hang, a sanitizer report, an allocation beyond the image) is a bug.
// libFuzzer (clang, -DFSIMG_FUZZ=ON) or replay_main.cpp (any compiler).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/fat/check.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"

namespace {

void walk(const fsimg::fat::Volume& v, const fsimg::fat::DirRecord& dir, unsigned depth,
          std::vector<std::uint32_t>& ancestors) {
    if (depth > 16) return;
    const std::uint32_t cl = v.first_cluster(dir);
    for (auto a : ancestors) {
        if (a == cl) return;
    }
    fsimg::fat::ParsedDirectory d;
    try {
        d = v.read_directory(cl);
    } catch (const fsimg::Error&) {
        return;
    }
    ancestors.push_back(cl);
    for (const auto& r : d.records) {
        try {
            if (r.kind == fsimg::fat::RecordKind::file) {
                v.read_file(r, [](std::span<const std::byte>) {});
            } else if (r.kind == fsimg::fat::RecordKind::directory) {
                walk(v, r, depth + 1, ancestors);
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
        fsimg::fat::check_volume(dev, findings);
    } catch (const fsimg::Error&) {
    }
    try {
        fsimg::fat::Volume v(dev);
        std::vector<std::uint32_t> ancestors;
        walk(v, v.root_record(), 0, ancestors);
        (void)v.lookup("/A/B/C.TXT");
    } catch (const fsimg::Error&) {
    }
    return 0;
}
