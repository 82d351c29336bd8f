// fat::Volume: FAT entries, chains, directories and files of a read-only volume.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/fat/volume.hpp"

namespace fsimg::fat {

struct Volume::Cache {
    struct Window {
        unsigned copy = ~0u;
        std::uint64_t index = ~std::uint64_t(0);
        std::vector<std::byte> bytes;
    };
    std::array<Window, kFatCacheWindows> windows;
    std::size_t next = 0;
    std::size_t last = 0;  ///< the window returned last: a chain's entries are mostly in it
};

Volume::Volume(const io::BlockDevice& device) : Volume(device, read_boot_region(device)) {}

Volume::Volume(const io::BlockDevice& device, BootRegion boot)
    : device_(device), boot_(std::move(boot)), cache_(std::make_unique<Cache>()) {
    if (!boot_.layout) {
        throw Error(
            ErrorCode::corrupt,
            fmt::format("the FAT geometry is underivable: {}", boot_.problem.value_or("unknown BPB problem")),
            0);
    }
    const Layout& l = *boot_.layout;
    const std::uint64_t capacity = l.fat_bytes() * 8 / fat_entry_bits(l.type);
    const std::uint64_t wanted = std::uint64_t(l.cluster_count) + 2;
    std::uint64_t n = std::min(capacity, wanted);
    // FAT32 entries are 28 bits: 0x0FFFFFF7 and above are never clusters.
    n = std::min<std::uint64_t>(n, std::uint64_t(bad_cluster(l.type)));
    if (n < 2) n = 2;  // no data clusters at all; max_cluster() = 1 makes every cluster invalid
    entry_count_ = static_cast<std::uint32_t>(n);
}

Volume::~Volume() = default;

std::uint32_t Volume::readable_entries() const noexcept {
    const Layout& l = layout();
    const std::uint64_t start = l.first_fat_sector * l.bytes_per_sector;
    if (start >= device_.size()) return 0;
    const std::uint64_t n = (device_.size() - start) * 8 / fat_entry_bits(l.type);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(n, entry_count_));
}

bool Volume::fat_copy_readable(unsigned copy) const noexcept {
    const Layout& l = layout();
    if (copy >= l.num_fats) return false;
    const std::uint64_t start =
        (l.first_fat_sector + std::uint64_t(copy) * l.fat_size_sectors) * l.bytes_per_sector;
    const std::uint64_t need = core::div_ceil(std::uint64_t(entry_count_) * fat_entry_bits(l.type), 8);
    return start + need <= device_.size();
}

std::span<const std::byte> Volume::fat_window(unsigned copy, std::uint64_t index) const {
    const Layout& l = layout();
    if (const auto& w = cache_->windows[cache_->last]; w.copy == copy && w.index == index) return w.bytes;
    for (std::size_t k = 0; k < kFatCacheWindows; ++k) {
        const auto& w = cache_->windows[k];
        if (w.copy == copy && w.index == index) {
            cache_->last = k;
            return w.bytes;
        }
    }
    cache_->last = cache_->next;
    Cache::Window& w = cache_->windows[cache_->next];
    cache_->next = (cache_->next + 1) % kFatCacheWindows;
    const std::uint64_t fat_start =
        (l.first_fat_sector + std::uint64_t(copy) * l.fat_size_sectors) * l.bytes_per_sector;
    const std::uint64_t at = index * kFatWindowBytes;
    const std::uint64_t len = std::min<std::uint64_t>(kFatWindowBytes, l.fat_bytes() - at);
    const std::uint64_t abs = fat_start + at;
    w.copy = ~0u;
    // The part past the end of the image is left out: entries there throw.
    const std::uint64_t avail =
        abs >= device_.size() ? 0 : std::min<std::uint64_t>(len, device_.size() - abs);
    w.bytes.resize(static_cast<std::size_t>(avail));
    if (avail > 0) device_.read_at(abs, w.bytes);
    w.copy = copy;
    w.index = index;
    return w.bytes;
}

std::uint32_t Volume::fat_entry(std::uint32_t n, unsigned copy) const {
    const Layout& l = layout();
    if (n >= entry_count_ || copy >= l.num_fats) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("FAT entry {} of FAT {} is outside the FAT ({} entries, {} copies)", n,
                                copy + 1, entry_count_, l.num_fats));
    }
    const unsigned bits = fat_entry_bits(l.type);
    const std::uint64_t byte = bits == 12 ? n + n / 2 : std::uint64_t(n) * (bits / 8);
    const std::size_t width = bits == 32 ? 4 : 2;
    std::array<std::uint8_t, 4> b{};
    const std::size_t in_window = static_cast<std::size_t>(byte % kFatWindowBytes);
    if (in_window + width <= kFatWindowBytes) {  // the whole entry in one window (FAT16/32 always)
        const auto w = fat_window(copy, byte / kFatWindowBytes);
        if (in_window + width > w.size()) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("FAT {} entry {} lies past the end of the image", copy + 1, n));
        }
        for (std::size_t i = 0; i < width; ++i) b[i] = static_cast<std::uint8_t>(w[in_window + i]);
    } else {
        for (std::size_t i = 0; i < width; ++i) {
            const std::uint64_t at = byte + i;
            const auto w = fat_window(copy, at / kFatWindowBytes);
            if (at % kFatWindowBytes >= w.size()) {
                throw Error(ErrorCode::corrupt,
                            fmt::format("FAT {} entry {} lies past the end of the image", copy + 1, n));
            }
            b[i] = static_cast<std::uint8_t>(w[static_cast<std::size_t>(at % kFatWindowBytes)]);
        }
    }
    if (bits == 12) {
        const std::uint32_t v = b[0] | (std::uint32_t(b[1]) << 8);
        return (n & 1) ? v >> 4 : v & 0xFFF;
    }
    if (bits == 16) return b[0] | (std::uint32_t(b[1]) << 8);
    return (b[0] | (std::uint32_t(b[1]) << 8) | (std::uint32_t(b[2]) << 16) | (std::uint32_t(b[3]) << 24)) &
           kFat32Mask;
}

void Volume::read_fat_entries(unsigned copy, std::uint32_t first, std::span<std::uint32_t> out) const {
    if (out.empty()) return;
    const Layout& l = layout();
    if (copy >= l.num_fats || std::uint64_t(first) + out.size() > entry_count_) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("FAT entries {}..{} are outside the FAT ({} entries)", first,
                                std::uint64_t(first) + out.size() - 1, entry_count_));
    }
    const unsigned bits = fat_entry_bits(l.type);
    const std::uint64_t last = std::uint64_t(first) + out.size() - 1;
    const std::uint64_t b0 = bits == 12 ? first + first / 2 : std::uint64_t(first) * (bits / 8);
    const std::uint64_t b1 = bits == 12 ? last + last / 2 + 2 : (last + 1) * (bits / 8);
    const std::uint64_t fat_start =
        (l.first_fat_sector + std::uint64_t(copy) * l.fat_size_sectors) * l.bytes_per_sector;
    std::uint64_t want = b1 - b0;
    // The last FAT12 entry's second byte may be the last byte of the FAT.
    want = std::min<std::uint64_t>(want, l.fat_bytes() - b0);
    if (fat_start + b0 + want > device_.size()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("FAT {} entries {}..{} lie past the end of the image ({} bytes)", copy + 1,
                                first, last, device_.size()),
                    fat_start + b0);
    }
    std::vector<std::byte>& buf = fat_bytes_;
    buf.assign(static_cast<std::size_t>(b1 - b0), std::byte{0});
    device_.read_at(fat_start + b0, std::span<std::byte>(buf.data(), static_cast<std::size_t>(want)));
    const std::byte* p = buf.data();
    if (bits == 32) {  // the hot case (large volumes): plain little-endian loads the compiler vectorizes
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = core::load_le32_at(p + k * 4) & kFat32Mask;
    } else if (bits == 16) {
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = core::load_le16_at(p + k * 2);
    } else {
        for (std::size_t k = 0; k < out.size(); ++k) {
            const std::uint64_t n = first + k;
            const std::uint32_t v = core::load_le16_at(p + (n + n / 2 - b0));
            out[k] = (n & 1) ? v >> 4 : v & 0xFFF;
        }
    }
}

EntryKind Volume::classify(std::uint32_t v) const noexcept {
    const FatType t = type();
    if (v == 0) return EntryKind::free;
    if (v == bad_cluster(t)) return EntryKind::bad;
    if (v > bad_cluster(t)) return EntryKind::end;
    if (v >= 2 && v <= max_cluster()) return EntryKind::next;
    return EntryKind::invalid;
}

void Volume::read_cluster(std::uint32_t n, std::span<std::byte> out) const {
    if (!is_cluster(n)) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("cluster {} is not a cluster of the volume (2..{})", n, max_cluster()));
    }
    const std::uint64_t at = cluster_offset(n);
    const std::uint64_t len = std::min<std::uint64_t>(out.size(), cluster_bytes());
    if (at + len > device_.size()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("cluster {} (bytes {}..{}) lies past the end of the image ({} bytes)", n, at,
                                at + len - 1, device_.size()),
                    at);
    }
    device_.read_at(at, out.first(static_cast<std::size_t>(len)));
}

Chain Volume::follow_chain(std::uint32_t start, std::uint64_t max_clusters) const {
    Chain c;
    if (!is_cluster(start)) {
        c.end = ChainEnd::invalid;
        c.stop_value = start;
        return c;
    }
    const std::uint64_t limit = std::min<std::uint64_t>(max_clusters, max_cluster() - 1);
    // Exact loop detection. The bits cover only entries that lie inside the
    // image (others cannot be read), so memory is bounded by the image.
    core::VisitedClusters seen(readable_entries());
    std::uint32_t cur = start;
    seen.visit(cur);
    while (true) {
        if (c.clusters >= limit) {
            c.end = ChainEnd::limit;
            break;
        }
        const std::uint32_t v = fat_entry(cur);
        const EntryKind k = classify(v);
        if (k == EntryKind::free) {
            c.end = ChainEnd::free;
            c.stop_value = cur;
            break;
        }
        if (!c.runs.empty() && c.runs.back().first + c.runs.back().count == cur) {
            ++c.runs.back().count;
        } else {
            c.runs.push_back(ClusterRun{cur, 1});
        }
        ++c.clusters;
        if (k == EntryKind::end) break;
        if (k == EntryKind::bad || k == EntryKind::invalid) {
            c.end = k == EntryKind::bad ? ChainEnd::bad : ChainEnd::invalid;
            c.stop_value = v;
            break;
        }
        if (seen.visit(v)) {
            c.end = ChainEnd::loop;
            c.stop_value = v;
            break;
        }
        cur = v;
    }
    return c;
}

std::vector<std::byte> Volume::read_directory_bytes(std::uint32_t first) const {
    const Layout& l = layout();
    if (first == 0 && type() == FatType::fat32) first = root_cluster();
    if (first == 0) {
        const std::uint64_t at = l.first_root_dir_sector * l.bytes_per_sector;
        const std::uint64_t len = std::uint64_t(l.root_dir_sectors) * l.bytes_per_sector;
        if (at + len > device_.size()) {
            throw Error(
                ErrorCode::corrupt,
                fmt::format("the root directory (bytes {}..{}) lies past the end of the image ({} bytes)", at,
                            at + len - 1, device_.size()),
                at);
        }
        std::vector<std::byte> buf(static_cast<std::size_t>(len));
        device_.read_at(at, buf);
        return buf;
    }
    const std::uint64_t max_clusters =
        core::div_ceil(std::uint64_t(kMaxDirEntries) * kDirEntrySize, cluster_bytes());
    const Chain c = follow_chain(first, max_clusters);
    if (c.end == ChainEnd::loop || c.clusters == 0) {
        throw Error(
            ErrorCode::corrupt,
            fmt::format("the directory at cluster {} has a broken cluster chain ({})", first,
                        c.end == ChainEnd::loop ? "it loops" : "its first cluster is free or invalid"));
    }
    std::vector<std::byte> buf(static_cast<std::size_t>(c.clusters * cluster_bytes()));
    std::size_t at = 0;
    for (const auto& run : c.runs) {
        for (std::uint32_t i = 0; i < run.count; ++i) {
            read_cluster(run.first + i, std::span<std::byte>(buf).subspan(at, cluster_bytes()));
            at += cluster_bytes();
        }
    }
    return buf;
}

ParsedDirectory Volume::read_directory(std::uint32_t first) const {
    return parse_directory(read_directory_bytes(first));
}

DirRecord Volume::root_record() const {
    DirRecord r;
    r.kind = RecordKind::directory;
    r.entry.attr = kAttrDirectory;
    r.entry.first_cluster = root_cluster();
    r.name = "/";
    r.short_name = "/";
    r.short_name_raw = "/";
    r.is_root = true;
    return r;
}

std::uint32_t Volume::first_cluster(const DirRecord& r) const noexcept {
    if (r.is_root) return root_cluster();
    return type() == FatType::fat32 ? r.entry.first_cluster : (r.entry.first_cluster & 0xFFFF);
}

std::optional<DirRecord> Volume::lookup(std::string_view path) const {
    DirRecord cur = root_record();
    std::string walked;
    for (const std::string_view comp : core::path_components(path)) {
        if (cur.kind != RecordKind::directory) {
            throw Error(ErrorCode::usage, fmt::format("path \"{}\": \"{}\" is a file, not a directory", path,
                                                      walked.empty() ? "/" : walked));
        }
        const ParsedDirectory d = read_directory(first_cluster(cur));
        const std::string want = fold_case(comp);
        const DirRecord* found = nullptr;
        for (const auto& r : d.records) {
            if (r.kind != RecordKind::file && r.kind != RecordKind::directory) continue;
            if (fold_case(r.name) == want || fold_case(r.short_name_raw) == want) {
                found = &r;
                break;
            }
        }
        if (!found) return std::nullopt;
        cur = *found;
        walked += "/" + cur.name;
    }
    return cur;
}

void Volume::read_file(const DirRecord& file,
                       const std::function<void(std::span<const std::byte>)>& sink) const {
    const std::uint64_t size = file.entry.file_size;
    if (size == 0) return;
    const std::uint32_t start = first_cluster(file);
    const std::uint64_t need = core::div_ceil(size, cluster_bytes());
    const Chain c = follow_chain(start, need);
    if (c.clusters < need) {
        throw Error(
            ErrorCode::corrupt,
            fmt::format("\"{}\": its size ({} bytes) needs {} clusters, but the chain from cluster {} "
                        "has {}",
                        file.name, size, need, start, c.clusters));
    }
    // A run of consecutive clusters is read in pieces of up to 1 MiB (whole
    // clusters), not a cluster at a time: a pread per 4 KiB cluster made cat
    // and extract three times slower than mtools (issue 41).
    constexpr std::uint64_t kChunk = 1 << 20;
    const std::uint64_t per_read = std::max<std::uint64_t>(kChunk / cluster_bytes(), 1) * cluster_bytes();
    const auto buf_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(per_read, size));
    const auto storage =
        std::make_unique_for_overwrite<std::byte[]>(buf_bytes);  // every byte read before use
    const std::span<std::byte> buf(storage.get(), buf_bytes);
    std::uint64_t left = size;
    for (const auto& run : c.runs) {
        if (left == 0) break;
        if (!is_cluster(run.first) || !is_cluster(run.first + (run.count - 1)))
            throw Error(ErrorCode::corrupt,
                        fmt::format("clusters {}..{} are not clusters of the volume (2..{})", run.first,
                                    run.first + (run.count - 1), max_cluster()));
        std::uint64_t at = cluster_offset(run.first);
        std::uint64_t run_left = std::min<std::uint64_t>(std::uint64_t{run.count} * cluster_bytes(), left);
        if (at + run_left > device_.size())
            throw Error(
                ErrorCode::corrupt,
                fmt::format("clusters {}..{} (bytes {}..{}) lie past the end of the image ({} bytes)",
                            run.first, run.first + (run.count - 1), at, at + run_left - 1, device_.size()),
                at);
        while (run_left > 0) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(run_left, buf.size()));
            device_.read_at(at, buf.first(n));
            sink(buf.first(n));
            at += n;
            run_left -= n;
            left -= n;
        }
    }
}

}  // namespace fsimg::fat
