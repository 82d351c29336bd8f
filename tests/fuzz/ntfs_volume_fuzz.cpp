// Fuzz target: an image from bytes is checked by the NTFS fsck
// (ntfs/check.hpp: every record, runlist, attribute list and $I30 index
// walk), then opened as an NTFS volume (boot sector,
// $MFT through its runlist and attribute list), the first records read and
// every attribute's value decoded, every stream of up to 1 MiB read through
// its runlist, every INDX block of every index allocation decoded, the
// backup boot sector compared, and the tree walked as ls -R, cat and
// extract walk it (directory.hpp, file.hpp). The checker may throw only
// Error(not_this_fs) or Error(io); the reader only fsimg::Error; anything else
// (a crash, a hang, a sanitizer report, an allocation beyond the image) is a
// bug. libFuzzer (clang, -DFSIMG_FUZZ=ON) or replay_main.cpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace {

using namespace fsimg::ntfs;

constexpr std::uint64_t kMaxRecords = 128;
constexpr std::uint64_t kMaxStreamBytes = 1u << 20;

void decode_value(const Attribute& a) {
    switch (a.kind()) {
        case AttrType::standard_information:
            (void)decode_standard_information(a.value);
            break;
        case AttrType::file_name:
            (void)decode_file_name(a.value);
            break;
        case AttrType::volume_information:
            (void)decode_volume_information(a.value);
            break;
        case AttrType::volume_name:
            (void)decode_utf16(a.value);
            break;
        case AttrType::index_root:
            (void)decode_index_root(a.value);
            break;
        case AttrType::attribute_list:
            (void)decode_attribute_list(a.value);
            break;
        default:
            break;
    }
}

void visit(const Volume& v, const MftRecord& r, const Attribute& a) {
    if (!a.non_resident) {
        decode_value(a);
        return;
    }
    v.check_runs(a);
    if (a.size() <= kMaxStreamBytes) (void)v.read_stream(a, kMaxStreamBytes);
    if (a.kind() == AttrType::index_allocation) {
        const Attribute* root = r.find(AttrType::index_root, a.name);
        std::uint32_t block = v.geometry().index_block_bytes;
        if (root && !root->non_resident) block = decode_index_root(root->value).index_block_bytes;
        for (std::uint64_t i = 0;
             i < std::min<std::uint64_t>(a.size() / std::max<std::uint32_t>(block, 1), 16); ++i)
            (void)v.read_index_block(a, i, block, a.name == u"$I30");
    }
}

/// What ls -R, cat and extract do: from the root (record 5), list each
/// directory through its $I30 index, open every entry's record, read every
/// $DATA stream of up to 1 MiB through load_attribute/read_data and decode a
/// reparse point; bounded to 64 directories and 4,096 entries.
void walk_tree(const Volume& v) {
    const UpcaseTable upcase = load_upcase(v);
    std::vector<std::uint64_t> dirs{5};
    std::size_t entries = 0;
    for (std::size_t i = 0; i < dirs.size() && i < 64; ++i) {
        try {
            const MftRecord dir = v.read_record(dirs[i]);
            for (const IndexEntry& e : list_directory(v, dir)) {
                if (++entries > 4096) return;
                const std::uint64_t n = FileReference::unpack(e.reference).record;
                if (n < 16 || n >= v.record_count()) continue;
                try {
                    const MftRecord r = v.read_record(n);
                    if (r.is_directory() && std::find(dirs.begin(), dirs.end(), n) == dirs.end())
                        dirs.push_back(n);
                    for (const StreamInfo& s : data_streams(v, r)) {
                        if (s.size > kMaxStreamBytes) continue;
                        try {
                            read_data(v, r, s.name, [](std::span<const std::byte>) {});
                        } catch (const fsimg::Error&) {
                        }
                    }
                    if (const Attribute* rp = r.find(AttrType::reparse_point); rp && !rp->non_resident)
                        (void)decode_reparse_link(rp->value);
                } catch (const fsimg::Error&) {
                }
            }
        } catch (const fsimg::Error&) {
        }
    }
    (void)resolve_path(v, "/DCIM/100CANON/IMG_0001.JPG", upcase);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = std::byte{data[i]};
    fsimg::io::MemoryImage dev(std::move(bytes));
    (void)is_ntfs(dev);
    try {
        fsimg::check::Findings findings;
        (void)check_volume(dev, findings);
    } catch (const fsimg::Error& e) {
        // Damage inside the image is a finding, never an exception.
        if (e.code() != fsimg::ErrorCode::not_this_fs && e.code() != fsimg::ErrorCode::io) __builtin_trap();
    }
    try {
        const Volume v(dev);
        (void)v.backup_boot_matches();
        try {
            walk_tree(v);
        } catch (const fsimg::Error&) {
        }
        for (std::uint64_t n = 0; n < std::min(v.record_count(), kMaxRecords); ++n) {
            try {
                const MftRecord r = v.read_record(n);
                for (const Attribute& a : r.attributes) {
                    try {
                        visit(v, r, a);
                    } catch (const fsimg::Error&) {
                    }
                }
            } catch (const fsimg::Error&) {
            }
        }
    } catch (const fsimg::Error&) {
    }
    return 0;
}
