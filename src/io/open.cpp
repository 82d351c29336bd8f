#include "fsimg/io/open.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <limits>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"

namespace fsimg::io {

std::string describe_partition(const PartitionTable& table, const Partition& p) {
    const std::uint64_t bytes = p.sector_count * table.sector_size;
    if (table.kind == PartitionTableKind::gpt) {
        const auto type = gpt_type_name(p.gpt_type);
        return fmt::format("{} (LBA {}, {}, type {}{})", p.index, p.first_lba, core::format_size(bytes),
                           type ? std::string(*type) : format_guid(p.gpt_type),
                           p.name.empty() ? "" : fmt::format(", \"{}\"", p.name));
    }
    return fmt::format("{} (LBA {}, {}, type 0x{:02X})", p.index, p.first_lba, core::format_size(bytes),
                       p.mbr_type);
}

namespace {

std::string list_partitions(const PartitionTable& table) {
    std::string out;
    for (const Partition& p : table.partitions) {
        if (!out.empty()) out += ", ";
        out += describe_partition(table, p);
    }
    return out;
}

}  // namespace

std::pair<std::string, std::optional<unsigned>> split_image_spec(std::string_view spec) {
    const auto at = spec.rfind('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == spec.size())
        return {std::string(spec), std::nullopt};
    const std::string_view digits = spec.substr(at + 1);
    std::uint64_t n = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return {std::string(spec), std::nullopt};
        n = n * 10 + static_cast<unsigned>(c - '0');
        if (n > std::numeric_limits<unsigned>::max()) {
            throw Error(ErrorCode::usage,
                        fmt::format("partition number \"{}\" in \"{}\" is too large", digits, spec));
        }
    }
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(std::string(spec)), ec)) {
        return {std::string(spec), std::nullopt};
    }
    return {std::string(spec.substr(0, at)), static_cast<unsigned>(n)};
}

OpenedVolume open_disk(std::string_view path, bool writable) {
    OpenedVolume v;
    const std::string p(path);
    // A gzip-compressed image is read through a sparse temporary copy.
    v.file = !writable && is_gzip_file(p) ? FileImage::open_gzip(p) : FileImage::open(p, writable);
    v.table = read_partition_table(*v.file);
    return v;
}

OpenedVolume open_volume(std::string_view spec, bool writable) {
    auto [path, number] = split_image_spec(spec);
    OpenedVolume v = open_disk(path, writable);
    select_partition(v, path, number);
    return v;
}

void select_partition(OpenedVolume& v, std::string_view path, std::optional<unsigned> number) {
    if (v.table.kind == PartitionTableKind::none) {
        if (number) {
            throw Error(ErrorCode::usage,
                        fmt::format("\"{}\" has no partition table, so there is no partition {}; open \"{}\" "
                                    "without @{}",
                                    path, *number, path, *number));
        }
        return;
    }
    const Partition* chosen = nullptr;
    if (number) {
        for (const Partition& p : v.table.partitions) {
            if (p.index == *number) chosen = &p;
        }
        if (chosen == nullptr) {
            throw Error(ErrorCode::usage,
                        fmt::format("\"{}\" has no partition {} in its {} table; partitions: {}", path,
                                    *number, to_string(v.table.kind),
                                    v.table.partitions.empty() ? "none" : list_partitions(v.table)));
        }
    } else if (v.table.partitions.size() == 1) {
        chosen = &v.table.partitions.front();
    } else if (v.table.partitions.empty()) {
        throw Error(ErrorCode::not_this_fs,
                    fmt::format("\"{}\" holds an {} partition table with no partitions", path,
                                to_string(v.table.kind)));
    } else {
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" holds {} partitions; choose one with {}@N: {}", path,
                                v.table.partitions.size(), path, list_partitions(v.table)));
    }
    if (v.table.kind == PartitionTableKind::mbr && is_extended_type(chosen->mbr_type)) {
        std::string logical;
        for (const Partition& p : v.table.partitions) {
            if (p.index >= 5) logical += fmt::format("{}{}@{}", logical.empty() ? "" : ", ", path, p.index);
        }
        throw Error(
            ErrorCode::usage,
            fmt::format("partition {} of \"{}\" is an extended partition (type 0x{:02X}): it holds {}",
                        chosen->index, path, chosen->mbr_type,
                        logical.empty() ? "no logical partitions"
                                        : fmt::format("the logical partitions {}", logical)));
    }
    if (chosen->image_sectors == 0) {
        throw Error(
            ErrorCode::corrupt,
            fmt::format("partition {} of \"{}\" lies outside the image (LBA {} + {} sectors, the image "
                        "holds {} sectors of {} bytes): nothing of it can be read",
                        chosen->index, path, chosen->first_lba, chosen->sector_count,
                        v.file->size() / v.table.sector_size, v.table.sector_size));
    }
    v.partition = *chosen;
    const std::uint64_t offset =
        core::checked_mul(chosen->first_lba, v.table.sector_size, "partition offset");
    // What the image holds of it: an image cut short inside the partition is
    // read up to its end (part.entry.past-image says so).
    const std::uint64_t length =
        core::checked_mul(chosen->image_sectors, v.table.sector_size, "partition size");
    v.window = std::make_unique<SubRange>(*v.file, offset, length);
}

}  // namespace fsimg::io
