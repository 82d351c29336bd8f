// exfat::Volume: FAT entries and chains, allocation bitmap, up-case table,
// directories, lookup and file data, every read bounds-checked.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/walk.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/volume.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::size_t kReadChunk = 1u << 20;  ///< read_file's largest piece

std::string_view end_reason(ChainEnd e) {
    switch (e) {
        case ChainEnd::end_of_chain:
            return "it ends";
        case ChainEnd::limit:
            return "limit reached";
        case ChainEnd::bad:
            return "a link is the bad-cluster mark";
        case ChainEnd::invalid:
            return "a link is invalid";
        case ChainEnd::loop:
            return "it loops";
    }
    return "?";
}

}  // namespace

struct Volume::Cache {
    struct Window {
        std::uint64_t index = ~std::uint64_t(0);
        std::vector<std::byte> bytes;
    };
    std::array<Window, kCacheWindows> windows;
    std::size_t next = 0;
    /// The allocation bitmap's clusters, computed on first use.
    std::optional<std::vector<ClusterRun>> bitmap_runs;
    std::optional<std::string> bitmap_problem;
};

Volume::Volume(const io::BlockDevice& device) : Volume(device, read_boot_region(device)) {}

Volume::Volume(const io::BlockDevice& device, BootRegion boot)
    : device_(device), boot_(std::move(boot)), cache_(std::make_unique<Cache>()) {
    if (!boot_.usable()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("the exFAT boot sector is invalid: {} [{}]", boot_.problems.front().message,
                                boot_.problems.front().code),
                    0);
    }
    const BootSector& bs = boot_sector();
    const std::uint64_t bps = bytes_per_sector();
    // validate_boot_sector bounds both shifts (cluster <= 32 MiB) and the offsets.
    cluster_bytes_ = static_cast<std::uint32_t>(bps << bs.sectors_per_cluster_shift);
    heap_offset_ = std::uint64_t(bs.cluster_heap_offset) * bps;
    fat_offset_ = std::uint64_t(bs.fat_offset) * bps;
    if (bs.number_of_fats == 2 && (bs.volume_flags & kVolumeFlagActiveFat)) {
        fat_offset_ += std::uint64_t(bs.fat_length) * bps;
    }
    if (!is_cluster(root_cluster()) || cluster_offset(root_cluster()) + cluster_bytes_ > device_.size()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("the root directory's first cluster {} is outside the image (clusters 2..{}, "
                                "{} bytes)",
                                root_cluster(), max_cluster(), device_.size()));
    }
    bitmap_ = boot_.bitmap;
    if (bs.number_of_fats == 2 && (bs.volume_flags & kVolumeFlagActiveFat)) {
        // TexFAT: the second FAT is active, and so is the second bitmap
        // (BitmapFlags bit 0 set) [EXFAT §7.1.2]. Unusable root: no bitmap.
        bitmap_.reset();
        try {
            const std::vector<std::byte> root = read_directory_bytes(root_record());
            for (const auto& e : parse_directory(root).system) {
                if (e.entry_type != kEntryAllocationBitmap) continue;
                const auto b =
                    decode_allocation_bitmap_entry(std::span<const std::byte>(root)
                                                       .subspan(std::size_t{e.index} * kDirEntrySize)
                                                       .first<kDirEntrySize>());
                if (b.bitmap_flags & 1) bitmap_ = b;
            }
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    load_upcase_table();
}

Volume::~Volume() = default;

std::span<const std::byte> Volume::window(std::uint64_t abs) const {
    const std::uint64_t index = abs / kWindowBytes;
    for (const auto& w : cache_->windows) {
        if (w.index == index) return w.bytes;
    }
    Cache::Window& w = cache_->windows[cache_->next];
    cache_->next = (cache_->next + 1) % kCacheWindows;
    const std::uint64_t at = index * kWindowBytes;
    // The part past the end of the image is left out: reads there throw.
    const std::uint64_t avail =
        at >= device_.size() ? 0 : std::min<std::uint64_t>(kWindowBytes, device_.size() - at);
    w.index = ~std::uint64_t(0);
    w.bytes.resize(static_cast<std::size_t>(avail));
    if (avail > 0) device_.read_at(at, w.bytes);
    w.index = index;
    return w.bytes;
}

std::uint32_t Volume::fat_entry(std::uint32_t n) const {
    if (n > max_cluster()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("FAT entry {} is outside the FAT (entries 0..{})", n, max_cluster()));
    }
    // FatOffset is sector-aligned, so an entry never straddles two windows.
    const std::uint64_t abs = fat_offset_ + std::uint64_t(n) * kFatEntrySize;
    const auto w = window(abs);
    const std::size_t at = static_cast<std::size_t>(abs % kWindowBytes);
    if (at + kFatEntrySize > w.size()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("FAT entry {} (byte {}) lies past the end of the image", n, abs), abs);
    }
    return core::load_le32(w, at);
}

EntryKind Volume::classify(std::uint32_t v) const noexcept {
    if (v == kFatEndOfChain) return EntryKind::end;
    if (v == kFatBadCluster) return EntryKind::bad;
    if (is_cluster(v)) return EntryKind::next;
    return EntryKind::invalid;
}

Chain Volume::follow_chain(std::uint32_t start, std::uint64_t max_clusters) const {
    Chain c;
    if (!is_cluster(start)) {
        c.end = ChainEnd::invalid;
        c.stop_value = start;
        return c;
    }
    const std::uint64_t limit = std::min<std::uint64_t>(max_clusters, cluster_count());
    // Exact loop detection; the bits cover only FAT entries inside the image.
    const std::uint64_t in_image =
        device_.size() > fat_offset_ ? (device_.size() - fat_offset_) / kFatEntrySize : 0;
    core::VisitedClusters seen(std::min<std::uint64_t>(in_image, max_cluster() + 1ull));
    std::uint32_t cur = start;
    seen.visit(cur);
    while (true) {
        if (c.clusters >= limit) {
            c.end = ChainEnd::limit;
            break;
        }
        if (!c.runs.empty() && c.runs.back().first + c.runs.back().count == cur) {
            ++c.runs.back().count;
        } else {
            c.runs.push_back(ClusterRun{cur, 1});
        }
        ++c.clusters;
        if (c.clusters >= limit) {
            c.end = ChainEnd::limit;
            break;
        }
        const std::uint32_t v = fat_entry(cur);
        const EntryKind k = classify(v);
        if (k == EntryKind::end) break;
        if (k != EntryKind::next) {
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

std::vector<ClusterRun> Volume::allocation(std::uint32_t first, std::uint64_t length, bool no_fat_chain,
                                           std::string_view what) const {
    if (length == 0) return {};
    const std::uint64_t need = core::div_ceil(length, std::uint64_t{cluster_bytes_});
    if (need > cluster_count()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("{}: its length ({} bytes) needs {} clusters, more than the "
                                "volume's {}",
                                what, length, need, cluster_count()));
    }
    std::vector<ClusterRun> runs;
    if (no_fat_chain) {
        if (!is_cluster(first) || std::uint64_t(first) + need - 1 > max_cluster()) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("{}: its {} contiguous clusters from cluster {} leave the cluster heap "
                                    "(clusters 2..{})",
                                    what, need, first, max_cluster()));
        }
        runs.push_back(ClusterRun{first, static_cast<std::uint32_t>(need)});
    } else {
        Chain c = follow_chain(first, need);
        if (c.clusters < need) {
            throw Error(
                ErrorCode::corrupt,
                fmt::format("{}: its length ({} bytes) needs {} clusters, but the FAT chain from cluster "
                            "{} has {} ({}{})",
                            what, length, need, first, c.clusters, end_reason(c.end),
                            c.end == ChainEnd::end_of_chain ? std::string()
                                                            : fmt::format(": 0x{:08X}", c.stop_value)));
        }
        runs = std::move(c.runs);
    }
    for (const auto& r : runs) {
        const std::uint64_t end = cluster_offset(r.first) + std::uint64_t(r.count) * cluster_bytes_;
        if (end > device_.size()) {
            throw Error(
                ErrorCode::corrupt,
                fmt::format("{}: clusters {}..{} (bytes up to {}) lie past the end of the image ({} bytes)",
                            what, r.first, r.first + r.count - 1, end, device_.size()),
                cluster_offset(r.first));
        }
    }
    return runs;
}

void Volume::read_cluster(std::uint32_t n, std::span<std::byte> out) const {
    if (!is_cluster(n)) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("cluster {} is not a cluster of the volume (2..{})", n, max_cluster()));
    }
    const std::uint64_t at = cluster_offset(n);
    const std::uint64_t len = std::min<std::uint64_t>(out.size(), cluster_bytes_);
    if (at + len > device_.size()) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("cluster {} (bytes {}..{}) lies past the end of the image ({} bytes)", n, at,
                                at + len - 1, device_.size()),
                    at);
    }
    device_.read_at(at, out.first(static_cast<std::size_t>(len)));
}

void Volume::load_upcase_table() {
    const auto fallback = [&](std::string why) {
        upcase_problem_ = std::move(why);
        upcase_map_ = recommended_upcase_map();
    };
    if (!boot_.upcase) return fallback("the root directory has no Up-case Table entry");
    const UpcaseTableEntry& e = *boot_.upcase;
    if (e.data_length == 0 || e.data_length > kMaxUpcaseBytes) {
        return fallback(fmt::format("the Up-case Table entry's DataLength is {}, not 1..{}", e.data_length,
                                    kMaxUpcaseBytes));
    }
    std::vector<std::byte> table(static_cast<std::size_t>(e.data_length));
    try {
        std::size_t at = 0;
        std::vector<std::byte> buf(cluster_bytes_);
        for (const auto& r : allocation(e.first_cluster, e.data_length, false, "the up-case table")) {
            for (std::uint32_t i = 0; i < r.count && at < table.size(); ++i) {
                read_cluster(r.first + i, buf);
                const std::size_t n = std::min<std::size_t>(buf.size(), table.size() - at);
                std::copy_n(buf.begin(), n, table.begin() + static_cast<std::ptrdiff_t>(at));
                at += n;
            }
        }
    } catch (const Error& err) {
        if (err.code() == ErrorCode::io) throw;
        return fallback(err.what());
    }
    const std::uint32_t sum = table_checksum(table);
    if (sum != e.table_checksum) {
        return fallback(fmt::format("the up-case table sums to {:08X}, its TableChecksum says {:08X}", sum,
                                    e.table_checksum));
    }
    // The table every formatter writes: expanded at compile time already.
    const std::vector<std::byte> recommended = upcase_table_bytes(recommended_upcase_table());
    if (table == recommended) {
        upcase_map_ = recommended_upcase_map();
        return;
    }
    auto expanded = expand_upcase_table(table);
    if (!expanded) return fallback("the up-case table does not expand to 65,536 mappings");
    upcase_ = std::move(*expanded);
    upcase_map_ = upcase_;
}

namespace {

/// Where byte `b` of an object stored in `runs` lies on the device.
std::uint64_t object_byte_offset(const Volume& v, const std::vector<ClusterRun>& runs, std::uint64_t b) {
    std::uint64_t cluster = b / v.cluster_bytes();
    for (const auto& r : runs) {
        if (cluster < r.count) {
            return v.cluster_offset(r.first + static_cast<std::uint32_t>(cluster)) + b % v.cluster_bytes();
        }
        cluster -= r.count;
    }
    return ~std::uint64_t(0);  // not reached: callers stay inside the object
}

}  // namespace

const std::vector<ClusterRun>& Volume::bitmap_runs() const {
    if (!cache_->bitmap_runs && !cache_->bitmap_problem) {
        const std::uint64_t need = core::div_ceil(std::uint64_t{cluster_count()}, 8);
        if (!bitmap_) {
            cache_->bitmap_problem = "the root directory has no Allocation Bitmap entry";
        } else if (bitmap_->data_length < need) {
            cache_->bitmap_problem = fmt::format(
                "the Allocation Bitmap's DataLength is {} bytes, less than the {} "
                "that ClusterCount {} needs",
                bitmap_->data_length, need, cluster_count());
        } else {
            try {
                cache_->bitmap_runs =
                    allocation(bitmap_->first_cluster, need, false, "the allocation bitmap");
            } catch (const Error& e) {
                if (e.code() == ErrorCode::io) throw;
                cache_->bitmap_problem = e.what();
            }
        }
    }
    if (cache_->bitmap_problem) throw Error(ErrorCode::corrupt, *cache_->bitmap_problem);
    return *cache_->bitmap_runs;
}

bool Volume::cluster_in_use(std::uint32_t n) const {
    const auto& runs = bitmap_runs();
    if (!is_cluster(n)) {
        throw Error(ErrorCode::corrupt,
                    fmt::format("cluster {} is not a cluster of the volume (2..{})", n, max_cluster()));
    }
    const std::uint64_t bit = n - 2;
    const std::uint64_t abs = object_byte_offset(*this, runs, bit / 8);
    const auto w = window(abs);
    return (std::to_integer<unsigned>(w[static_cast<std::size_t>(abs % kWindowBytes)]) >> (bit % 8)) & 1;
}

void Volume::scan_bitmap(const std::function<void(std::uint64_t, std::span<const std::byte>)>& chunk) const {
    const auto& runs = bitmap_runs();
    const std::uint64_t total = core::div_ceil(std::uint64_t{cluster_count()}, 8);
    std::vector<std::byte> buf;
    std::uint64_t done = 0;
    for (const auto& r : runs) {
        std::uint64_t at = cluster_offset(r.first);
        std::uint64_t left = std::min<std::uint64_t>(std::uint64_t(r.count) * cluster_bytes_, total - done);
        while (left > 0) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kWindowBytes));
            buf.resize(n);
            device_.read_at(at, buf);
            chunk(done, buf);
            done += n;
            at += n;
            left -= n;
        }
    }
}

std::vector<ClusterRun> Volume::used_runs(std::size_t max_runs, bool* complete) const {
    std::vector<ClusterRun> runs;
    bool stopped = false;
    const std::uint64_t bits = cluster_count();
    scan_bitmap([&](std::uint64_t byte0, std::span<const std::byte> bytes) {
        for (std::size_t i = 0; i < bytes.size() && !stopped; ++i) {
            const auto b = std::to_integer<unsigned>(bytes[i]);
            if (b == 0) continue;
            for (unsigned k = 0; k < 8; ++k) {
                const std::uint64_t bit = (byte0 + i) * 8 + k;
                if (bit >= bits || !((b >> k) & 1)) continue;
                const auto n = static_cast<std::uint32_t>(bit + 2);
                if (!runs.empty() && runs.back().first + runs.back().count == n) {
                    ++runs.back().count;
                } else if (runs.size() >= max_runs) {
                    stopped = true;
                    break;
                } else {
                    runs.push_back(ClusterRun{n, 1});
                }
            }
        }
    });
    if (complete) *complete = !stopped;
    return runs;
}

std::uint64_t Volume::used_clusters() const {
    std::uint64_t used = 0;
    const std::uint64_t bits = cluster_count();
    scan_bitmap([&](std::uint64_t byte0, std::span<const std::byte> bytes) {
        for (std::size_t i = 0; i < bytes.size(); ++i) {
            unsigned b = std::to_integer<unsigned>(bytes[i]);
            const std::uint64_t first_bit = (byte0 + i) * 8;
            if (first_bit + 8 > bits) b &= (1u << (bits - first_bit)) - 1;
            used += static_cast<unsigned>(std::popcount(b));
        }
    });
    return used;
}

FileRecord Volume::root_record() const {
    FileRecord r;
    r.attributes = kFileAttrDirectory;
    r.first_cluster = root_cluster();
    r.name = "/";
    r.name16.assign(1, u'/');
    r.is_root = true;
    return r;
}

std::vector<std::byte> Volume::read_directory_bytes(const FileRecord& dir) const {
    std::vector<ClusterRun> runs;
    std::uint64_t length = 0;
    if (dir.is_root) {
        const Chain c = follow_chain(root_cluster(), kMaxDirectoryBytes / cluster_bytes_ + 1);
        if (c.end == ChainEnd::loop ||
            (c.end == ChainEnd::limit && c.clusters * cluster_bytes_ > kMaxDirectoryBytes)) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("the root directory's FAT chain from cluster {} {}", root_cluster(),
                                    c.end == ChainEnd::loop ? "loops"
                                                            : "is longer than a directory may be (256 MiB)"));
        }
        // A chain broken later (bad or invalid link) yields the clusters before the break.
        length = c.clusters * cluster_bytes_;
        runs = allocation(root_cluster(), length, false, "the root directory");
    } else {
        const std::string what = fmt::format("directory \"{}\"", dir.name);
        if (!dir.is_directory())
            throw Error(ErrorCode::corrupt, fmt::format("\"{}\" is not a directory", dir.name));
        if (dir.data_length > kMaxDirectoryBytes) {
            throw Error(ErrorCode::corrupt,
                        fmt::format("{}: its DataLength is {} bytes, more than the 256 MiB a "
                                    "directory may hold",
                                    what, dir.data_length));
        }
        length = dir.data_length;
        runs = allocation(dir.first_cluster, length, dir.no_fat_chain(), what);
    }
    std::vector<std::byte> out(static_cast<std::size_t>(length));
    std::uint64_t at = 0;
    for (const auto& r : runs) {
        const std::uint64_t n = std::min<std::uint64_t>(std::uint64_t(r.count) * cluster_bytes_, length - at);
        device_.read_at(cluster_offset(r.first), std::span<std::byte>(out).subspan(at, n));
        at += n;
    }
    return out;
}

ParsedDirectory Volume::read_directory(const FileRecord& dir) const {
    return parse_directory(read_directory_bytes(dir), upcase_map_);
}

std::optional<FileRecord> Volume::lookup(std::string_view path) const {
    FileRecord cur = root_record();
    std::string walked;
    for (const std::string_view comp : core::path_components(path)) {
        if (!cur.is_directory()) {
            throw Error(ErrorCode::usage, fmt::format("path \"{}\": \"{}\" is a file, not a directory", path,
                                                      walked.empty() ? "/" : walked));
        }
        std::u16string want;
        try {
            want = upcase_name(core::utf8_to_utf16(comp), upcase_map_);
        } catch (const Error&) {
            throw Error(ErrorCode::usage, fmt::format("path \"{}\" is not valid UTF-8", path));
        }
        ParsedDirectory d = read_directory(cur);
        auto found = std::find_if(d.files.begin(), d.files.end(), [&](const FileRecord& r) {
            return r.checksum_ok() && upcase_name(r.name16, upcase_map_) == want;
        });
        if (found == d.files.end()) return std::nullopt;
        cur = std::move(*found);
        walked += "/" + cur.name;
    }
    return cur;
}

void Volume::read_file(const FileRecord& file,
                       const std::function<void(std::span<const std::byte>)>& sink) const {
    const std::uint64_t size = file.data_length;
    if (size == 0) return;
    const std::uint64_t valid = std::min(file.valid_data_length, size);
    const auto runs =
        allocation(file.first_cluster, size, file.no_fat_chain(), fmt::format("\"{}\"", file.name));
    std::vector<std::byte> buf(static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, size)));
    std::uint64_t done = 0;
    for (const auto& r : runs) {
        std::uint64_t at = cluster_offset(r.first);
        std::uint64_t left = std::min<std::uint64_t>(std::uint64_t(r.count) * cluster_bytes_, valid - done);
        while (left > 0) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
            device_.read_at(at, std::span<std::byte>(buf).first(n));
            sink(std::span<const std::byte>(buf).first(n));
            done += n;
            at += n;
            left -= n;
        }
        if (done >= valid) break;
    }
    // Past ValidDataLength the file reads as zeros [EXFAT §7.6.4].
    std::fill(buf.begin(), buf.end(), std::byte{0});
    while (done < size) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, buf.size()));
        sink(std::span<const std::byte>(buf).first(n));
        done += n;
    }
}

}  // namespace fsimg::exfat
