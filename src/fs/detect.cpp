// detect(): every adapter's probe, the strongest match, two equal ones refused.
#include "fsimg/fs/detect.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "adapters.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/io/patched_device.hpp"
#include "fsimg/io/probe.hpp"

namespace fsimg::fs {

std::string_view name(Kind kind) noexcept {
    switch (kind) {
        case Kind::fat:
            return "fat";
        case Kind::exfat:
            return "exfat";
        case Kind::ntfs:
            return "ntfs";
    }
    return "?";
}

std::string_view label(Kind kind) noexcept {
    switch (kind) {
        case Kind::fat:
            return "FAT";
        case Kind::exfat:
            return "exFAT";
        case Kind::ntfs:
            return "NTFS";
    }
    return "?";
}

namespace {

std::string_view certainty_text(Certainty c) {
    switch (c) {
        case Certainty::weak:
            return "a FAT jump in sector 0";
        case Certainty::backup:
            return "a valid backup boot sector";
        case Certainty::signature:
            return "its signature in sector 0";
    }
    return "?";
}

}  // namespace

std::optional<Detection> probe(const io::BlockDevice& volume) {
    // Sector 0 first; backups (which may lie at the volume's end: the whole of
    // a lazily decompressed .gz) only when no filesystem claims sector 0. A
    // backup never outranks a signature, so the answer is the same.
    std::vector<Detection> found;
    for (const bool backups : {false, true}) {
        for (const detail::Adapter& a : detail::adapters()) {
            auto m = a.probe(volume, backups);
            if (!m) continue;
            found.push_back({a.kind, m->certainty, m->through_backup, m->backup_offset, std::move(m->note)});
        }
        if (!found.empty()) break;
    }
    if (found.empty()) return std::nullopt;
    std::size_t best = 0;
    for (std::size_t i = 1; i < found.size(); ++i)
        if (found[i].certainty > found[best].certainty) best = i;
    for (std::size_t i = 0; i < found.size(); ++i) {
        if (i == best || found[i].certainty != found[best].certainty) continue;
        throw Error(ErrorCode::corrupt,
                    fmt::format("the volume reads as both {} and {} ({} each); fsimg does not guess which "
                                "to trust",
                                label(found[best].kind), label(found[i].kind),
                                certainty_text(found[best].certainty)));
    }
    return std::move(found[best]);
}

Detection detect(const io::BlockDevice& volume) {
    if (auto d = probe(volume)) return std::move(*d);
    throw Error(ErrorCode::not_this_fs,
                fmt::format("the volume is not FAT, exFAT or NTFS: {}", foreign_content(volume)));
}

std::shared_ptr<const io::BlockDevice> reading_device(const io::BlockDevice& volume, const Detection& d) {
    if (!d.through_backup)
        return std::shared_ptr<const io::BlockDevice>(&volume, [](const io::BlockDevice*) {});
    std::array<std::byte, 512> backup{};
    volume.read_at(d.backup_offset, backup);
    return std::make_shared<io::PatchedDevice>(volume, backup);
}

std::optional<std::string> describe_own(const io::BlockDevice& volume) {
    std::optional<Detection> d;
    try {
        d = probe(volume);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
    if (!d || d->certainty == Certainty::weak) return std::nullopt;
    std::string text = fmt::format("{} {} filesystem", d->kind == Kind::fat ? "a" : "an", label(d->kind));
    if (d->through_backup) {
        text += fmt::format(", readable through its backup boot sector at byte {}", d->backup_offset);
    } else if (d->certainty == Certainty::backup) {
        text += ", readable through its backup boot region at sector 12";
    }
    return text;
}

std::string foreign_content(const io::BlockDevice& volume) {
    // The overwrite guard's content probe (libblkid, and the container magics
    // it lacks) names other filesystems, partition tables and disk images.
    const io::Content c = io::probe_device(volume);
    const bool ours = !c.signatures.empty() &&
                      (c.signatures.front().type == "vfat" || c.signatures.front().type == "exfat" ||
                       c.signatures.front().type == "ntfs");
    if (c.recognised() && !ours) return fmt::format("it holds {}", c.description);
    if (volume.size() < 512)
        return fmt::format("it holds {} bytes, less than one boot sector", volume.size());
    if (!c.holds_anything()) return "it holds only zeros";
    std::array<std::byte, 512> s0{};
    volume.read_at(0, s0);
    return fmt::format(
        "sector 0 does not start with a FAT boot sector jump (EB xx 90 or E9): found {:02X} {:02X} {:02X}, "
        "and no backup boot sector is valid{}",
        std::to_integer<unsigned>(s0[0]), std::to_integer<unsigned>(s0[1]), std::to_integer<unsigned>(s0[2]),
        ours ? fmt::format(" (libblkid takes it for {})", c.description) : std::string());
}

namespace detail {

const std::array<Adapter, kKindCount>& adapters() {
    static const std::array<Adapter, kKindCount> table{fat_adapter(), exfat_adapter(), ntfs_adapter()};
    return table;
}

const Adapter& adapter(Kind kind) { return adapters()[static_cast<std::size_t>(kind)]; }

}  // namespace detail

std::string partition_content(const io::OpenedVolume& v, const io::Partition& p) {
    if (v.table.kind == io::PartitionTableKind::mbr && io::is_extended_type(p.mbr_type))
        return "an extended partition";
    if (p.image_sectors == 0) return "outside the image";
    const io::SubRange window(*v.file,
                              core::checked_mul(p.first_lba, v.table.sector_size, "partition offset"),
                              core::checked_mul(p.image_sectors, v.table.sector_size, "partition size"));
    const std::optional<std::string> own = describe_own(window);
    return own ? *own : io::probe_device(window).description;
}

void select_partition(io::OpenedVolume& v, std::string_view path, std::optional<unsigned> number) {
    if (number || v.table.kind == io::PartitionTableKind::none || v.table.partitions.size() < 2) {
        io::select_partition(v, path, number);
        return;
    }
    std::string list;
    for (const io::Partition& p : v.table.partitions)
        list += fmt::format("{}{}: {}", list.empty() ? "" : "; ", io::describe_partition(v.table, p),
                            partition_content(v, p));
    throw Error(ErrorCode::usage, fmt::format("\"{}\" holds {} partitions; choose one with {}@N: {}", path,
                                              v.table.partitions.size(), path, list));
}

io::OpenedVolume open_volume(std::string_view spec, bool writable) {
    auto [path, number] = io::split_image_spec(spec);
    io::OpenedVolume v = io::open_disk(path, writable);
    fs::select_partition(v, path, number);
    return v;
}

}  // namespace fsimg::fs
