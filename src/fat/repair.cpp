#include "fsimg/fat/repair.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "fsimg/check/codes.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat {

namespace {

std::uint32_t clean_bit(FatType t) noexcept {
    return t == FatType::fat16 ? 0x8000u : t == FatType::fat32 ? 0x08000000u : 0u;
}

/// FAT[1] of every copy: read, changed by `change`, written back (FAT 1 first).
template <class F>
void rewrite_fat1(io::BlockDevice& dev, const Layout& l, F change) {
    const std::size_t width = l.type == FatType::fat32 ? 4 : 2;
    for (std::uint32_t k = 0; k < l.num_fats; ++k) {
        const std::uint64_t at =
            (l.first_fat_sector + std::uint64_t(k) * l.fat_size_sectors) * l.bytes_per_sector +
            width;  // entry 1
        std::array<std::byte, 4> b{};
        dev.read_at(at, std::span(b).first(width));
        std::uint32_t v = width == 4 ? core::load_le32(b, 0) : core::load_le16(b, 0);
        const std::uint32_t nv = change(v);
        if (nv == v) continue;
        if (width == 4) {
            core::store_le32(b, 0, nv);
        } else {
            core::store_le16(b, 0, static_cast<std::uint16_t>(nv));
        }
        dev.write_at(at, std::span(b).first(width));
    }
}

}  // namespace

std::vector<check::Repair> repair_volume(io::BlockDevice& dev, const check::Findings& found,
                                         const check::Summary& summary, const check::RepairOptions& options) {
    const BootRegion br = read_boot_region(dev);
    if (!br.layout)
        throw Error(ErrorCode::corrupt, "the boot sector gives no geometry: nothing can be repaired");
    const Layout& l = *br.layout;
    const check::RepairPlan plan = check::plan_repairs(found, options.level);
    const std::set<std::string_view>& codes = plan.codes;
    const bool errors_left = plan.errors_left;
    std::vector<check::Repair> done;
    const bool dirty = codes.count("fat.boot.dirty") || codes.count("fat.fat.dirty");
    const bool other = std::any_of(codes.begin(), codes.end(), [](std::string_view c) {
        return c != "fat.boot.dirty" && c != "fat.fat.dirty";
    });
    const std::uint32_t bit = clean_bit(l.type);
    // 1. Marked dirty before the first repair (a volume that is not already).
    bool marked = false;
    if (other && !dirty && bit != 0) {
        rewrite_fat1(dev, l, [bit](std::uint32_t v) { return v & ~bit; });
        marked = true;
    }
    // 2. The repairs.
    if ((codes.count("fat.fsinfo.free-count") || codes.count("fat.fsinfo.next-free")) && br.fsinfo) {
        std::array<std::byte, kBootSectorSize> s{};
        const std::uint64_t at = std::uint64_t(l.fsinfo_sector) * l.bytes_per_sector;
        dev.read_at(at, s);
        FsInfo fi = decode_fsinfo(s);
        if (codes.count("fat.fsinfo.free-count")) {
            done.push_back({"fat.fsinfo.free-count", fmt::format("FSInfo's free count set to {} (it said {})",
                                                                 core::format_count(summary.free_clusters),
                                                                 core::format_count(fi.free_count))});
            fi.free_count = static_cast<std::uint32_t>(summary.free_clusters);
        }
        if (codes.count("fat.fsinfo.next-free")) {
            done.push_back({"fat.fsinfo.next-free",
                            fmt::format("FSInfo's next-free hint set to 0xFFFFFFFF, no hint (it said {})",
                                        fi.next_free)});
            fi.next_free = kFsInfoUnknown;
        }
        encode_fsinfo(fi, s);
        dev.write_at(at, s);
    }
    if (codes.count("fat.boot.backup-differs") && l.type == FatType::fat32 && br.backup) {
        std::array<std::byte, kBootSectorSize> s0{};
        dev.read_at(0, s0);
        // Sector 0 as it is, but for the dirty bit, which the backup does not carry.
        s0[off::Reserved1_32] =
            static_cast<std::byte>(static_cast<std::uint8_t>(s0[off::Reserved1_32]) & ~0x01u);
        dev.write_at(std::uint64_t(l.backup_boot_sector) * l.bytes_per_sector, s0);
        done.push_back({"fat.boot.backup-differs",
                        fmt::format("the backup boot sector (sector {}) rewritten from sector 0",
                                    l.backup_boot_sector)});
    }
    // 3. Clean last, after a barrier; only when nothing wrong is left.
    if ((dirty || marked) && !errors_left) {
        if (options.barrier) options.barrier();
        if (bit != 0) rewrite_fat1(dev, l, [bit](std::uint32_t v) { return v | bit; });
        const std::size_t r1 = l.type == FatType::fat32 ? off::Reserved1_32 : off::Reserved1_16;
        std::array<std::byte, 1> b{};
        dev.read_at(r1, b);
        if (static_cast<std::uint8_t>(b[0]) & 0x01) {
            b[0] = static_cast<std::byte>(static_cast<std::uint8_t>(b[0]) & ~0x01u);
            dev.write_at(r1, b);
        }
        if (dirty)
            done.push_back(
                {codes.count("fat.fat.dirty") ? "fat.fat.dirty" : "fat.boot.dirty",
                 "the volume marked clean (FAT[1]'s clean-shutdown bit set, BS_Reserved1's dirty bit "
                 "cleared)"});
    }
    return done;
}

}  // namespace fsimg::fat
