// NTFS structures decoded for display (include/fsimg/ntfs/describe.hpp).
#include "fsimg/ntfs/describe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs {

namespace {

struct FieldSpec {
    std::string_view name;
    std::size_t offset, width;
    BootField::Kind kind;
};
using K = BootField::Kind;
constexpr std::array kBootFields{
    FieldSpec{"OemId", off::OemId, 8, K::text},
    FieldSpec{"BytesPerSector", off::BytesPerSector, 2, K::number},
    FieldSpec{"SectorsPerCluster", off::SectorsPerCluster, 1, K::hex},
    FieldSpec{"MediaDescriptor", off::MediaDescriptor, 1, K::hex},
    FieldSpec{"SectorsPerTrack", off::SectorsPerTrack, 2, K::number},
    FieldSpec{"NumberOfHeads", off::NumberOfHeads, 2, K::number},
    FieldSpec{"HiddenSectors", off::HiddenSectors, 4, K::number},
    FieldSpec{"DriveSignature", off::DriveSignature, 4, K::hex},
    FieldSpec{"TotalSectors", off::TotalSectors, 8, K::number},
    FieldSpec{"MftLcn", off::MftLcn, 8, K::number},
    FieldSpec{"MftMirrLcn", off::MftMirrLcn, 8, K::number},
    FieldSpec{"ClustersPerMftRecord", off::ClustersPerMftRecord, 1, K::size_code},
    FieldSpec{"ClustersPerIndexBlock", off::ClustersPerIndexBlock, 1, K::size_code},
    FieldSpec{"VolumeSerialNumber", off::VolumeSerialNumber, 8, K::hex},
    FieldSpec{"Checksum", off::Checksum, 4, K::hex},
    FieldSpec{"Signature", off::Signature, 2, K::signature},
};

std::string bit_names(std::uint64_t v,
                      std::initializer_list<std::pair<std::uint64_t, std::string_view>> names) {
    std::string s;
    for (const auto& [bit, name] : names) {
        if (!(v & bit)) continue;
        if (!s.empty()) s += ", ";
        s += name;
        v &= ~bit;
    }
    if (v) s += fmt::format("{}0x{:X}", s.empty() ? "" : ", ", v);
    return s.empty() ? "none" : s;
}

}  // namespace

std::vector<BootField> boot_fields(std::span<const std::byte, kBootSectorSize> sector) {
    std::vector<BootField> out;
    out.reserve(kBootFields.size());
    for (const FieldSpec& f : kBootFields) {
        BootField b{f.name, f.offset, f.width, f.kind, 0, {}};
        const auto bytes = sector.subspan(f.offset, f.width);
        if (f.kind == K::text) {
            b.text = core::load_string(bytes);
        } else {
            for (std::size_t i = 0; i < f.width; ++i)
                b.number |= std::uint64_t(std::to_integer<std::uint8_t>(bytes[i])) << (8 * i);
        }
        out.push_back(std::move(b));
    }
    return out;
}

std::string_view namespace_name(Namespace n) noexcept {
    switch (n) {
        case Namespace::posix:
            return "POSIX";
        case Namespace::win32:
            return "Win32";
        case Namespace::dos:
            return "DOS";
        case Namespace::win32_and_dos:
            return "Win32&DOS";
    }
    return "unknown";
}

std::string file_attribute_names(std::uint32_t attributes) {
    return bit_names(attributes, {{0x1, "read-only"},
                                  {0x2, "hidden"},
                                  {0x4, "system"},
                                  {0x20, "archive"},
                                  {0x40, "device"},
                                  {0x80, "normal"},
                                  {0x100, "temporary"},
                                  {0x200, "sparse"},
                                  {0x400, "reparse"},
                                  {0x800, "compressed"},
                                  {0x1000, "offline"},
                                  {0x2000, "not indexed"},
                                  {0x4000, "encrypted"},
                                  {0x10000000, "directory"},
                                  {0x20000000, "view index"}});
}

std::string attribute_flag_names(std::uint16_t flags) {
    return bit_names(flags, {{0x1, "compressed"}, {0x4000, "encrypted"}, {0x8000, "sparse"}});
}

std::string record_flag_names(std::uint16_t flags) {
    return bit_names(flags, {{0x1, "in use"}, {0x2, "directory"}, {0x4, "in $Extend"}, {0x8, "view index"}});
}

std::string volume_flag_names(std::uint16_t flags) {
    return bit_names(flags, {{0x1, "dirty"},
                             {0x2, "resize $LogFile"},
                             {0x4, "upgrade on mount"},
                             {0x8, "mounted on NT4"},
                             {0x10, "deleting USN"},
                             {0x20, "repair object ids"},
                             {0x8000, "modified by chkdsk"}});
}

IndexKeys index_keys(std::u16string_view name, std::uint32_t indexed_type) noexcept {
    if (indexed_type == kI30Index.indexed_type) return IndexKeys::file_name;
    return name == kReparseIndex.name && indexed_type == kReparseIndex.indexed_type ? IndexKeys::reparse
                                                                                    : IndexKeys::raw;
}

IndexBlocks read_index_blocks(const Volume& volume, const Attribute& allocation, const Attribute* bitmap,
                              std::uint32_t block_bytes, IndexKeys keys, std::uint64_t max_blocks) {
    IndexBlocks out;
    out.block_bytes = block_bytes;
    if (!core::is_power_of_two(block_bytes) || block_bytes < 512 || block_bytes > 65536) return out;
    out.blocks = allocation.size() / block_bytes;
    std::vector<std::byte> bits;
    if (!bitmap) {
        out.bitmap_error = "no $BITMAP";
    } else {
        try {
            bits = volume.read_stream(*bitmap, kMaxIndexBitmapBytes);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            out.bitmap_error = e.what();
        }
    }
    const auto in_use = [&](std::uint64_t b) {
        if (out.bitmap_error) return true;
        return b / 8 < bits.size() && (std::to_integer<unsigned>(bits[b / 8]) >> (b % 8) & 1) != 0;
    };
    const std::uint32_t vcns = index_vcns_per_block(volume, block_bytes);
    for (std::uint64_t b = 0; b < out.blocks && out.in_use.size() < max_blocks; ++b) {
        if (!in_use(b)) continue;
        out.in_use.push_back(b);
        IndexBlockSlot slot{b, b * vcns, std::nullopt, {}};
        try {
            slot.decoded = volume.read_index_block(allocation, b, block_bytes, keys == IndexKeys::file_name);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
            slot.error = e.what();
        }
        out.slots.push_back(std::move(slot));
    }
    return out;
}

}  // namespace fsimg::ntfs
