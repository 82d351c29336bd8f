// verify_fat, verify_exfat, verify_ntfs: predicted == what FAT, exFAT and NTFS populate really allocate.
#include "fsimg/slack/verify.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <set>
#include <variant>

#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/fat/format.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/populate.hpp"

namespace fsimg::slack {

namespace {

/// The tree without the nodes scan_tree reported (and their subtrees).
source::SourceTree prune(const source::SourceTree& in, std::uint64_t& pruned) {
    std::set<std::string> bad;
    for (const auto& p : in.problems) bad.insert(p.path);
    source::SourceTree out;
    out.host_dirs = in.host_dirs;  // the nodes keep their host directories (source::SourceReader)
    out.nodes.push_back(in.nodes[0]);
    out.nodes[0].children.clear();
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{0, 0}};  // (old, new)
    while (!stack.empty()) {
        const auto [old_i, new_i] = stack.back();
        stack.pop_back();
        for (const std::uint32_t c : in.nodes[old_i].children) {
            if (bad.count(in.image_path(c)) != 0) {
                ++pruned;
                continue;
            }
            source::TreeNode n = in.nodes[c];
            n.children.clear();
            n.parent = new_i;
            const auto idx = static_cast<std::uint32_t>(out.nodes.size());
            out.nodes.push_back(std::move(n));
            out.nodes[new_i].children.push_back(idx);
            if (out.nodes[idx].is_dir) {
                ++out.directories;
                stack.emplace_back(c, idx);
            } else {
                ++out.files;
                out.data_bytes += out.nodes[idx].size;
            }
        }
    }
    return out;
}

/// A sparse temporary file, unlinked as soon as it is open.
std::unique_ptr<io::FileImage> temp_image(const std::filesystem::path& dir, std::uint64_t size) {
    std::string tmpl = (dir / "fsimg-slack-verify.XXXXXX").string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        throw Error(ErrorCode::io, fmt::format("cannot create a temporary file in {}: {}", dir.string(),
                                               std::strerror(errno)));
    }
    const int rc = ::ftruncate(fd, static_cast<off_t>(size));
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
        ::unlink(tmpl.c_str());
        throw Error(ErrorCode::io, fmt::format("cannot size {}: {}", tmpl, std::strerror(err)));
    }
    try {
        auto img = io::FileImage::open(tmpl, true);
        ::unlink(tmpl.c_str());
        return img;
    } catch (...) {
        ::unlink(tmpl.c_str());
        throw;
    }
}

std::uint64_t used_clusters(const fat::Volume& v) {
    std::uint64_t used = 0;
    std::vector<std::uint32_t> buf(65536);
    for (std::uint64_t first = 2; first < v.entry_count(); first += buf.size()) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), v.entry_count() - first));
        v.read_fat_entries(0, static_cast<std::uint32_t>(first), std::span(buf.data(), n));
        for (std::size_t i = 0; i < n; ++i) used += buf[i] != 0;
    }
    return used;
}

/// Set bits of an exFAT allocation bitmap: clusters in use.
std::uint64_t bitmap_clusters_in_use(const io::BlockDevice& dev, const exfat::Layout& l) {
    std::uint64_t used = 0;
    std::vector<std::byte> buf(1 << 20);
    const std::uint64_t start = l.cluster_offset(l.bitmap_first_cluster);
    for (std::uint64_t at = 0; at < l.bitmap_bytes; at += buf.size()) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), l.bitmap_bytes - at));
        dev.read_at(start + at, std::span(buf.data(), n));
        for (std::size_t i = 0; i < n; ++i)
            used += static_cast<unsigned>(std::popcount(static_cast<unsigned char>(buf[i])));
    }
    return used;
}

/// Set bits of an NTFS $Bitmap (its extents in `l`): clusters in use.
std::uint64_t ntfs_clusters_in_use(const io::BlockDevice& dev, const ntfs::Layout& l) {
    std::uint64_t used = 0, at = 0;
    const std::uint64_t bytes = (l.cluster_count + 7) / 8;
    std::vector<std::byte> buf(l.cluster_bytes);
    for (const ntfs::Extent& e : l.bitmap) {
        for (std::uint64_t k = 0; k < e.clusters && at < bytes; ++k) {
            dev.read_at((e.lcn + k) * l.cluster_bytes, buf);
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), bytes - at));
            for (std::size_t i = 0; i < n; ++i) {
                unsigned b = static_cast<unsigned char>(buf[i]);
                const std::uint64_t first = (at + i) * 8;  // bits past the last cluster do not count
                if (first + 8 > l.cluster_count) b &= (1u << (l.cluster_count - first)) - 1;
                used += static_cast<unsigned>(std::popcount(b));
            }
            at += n;
        }
    }
    return used;
}

/// The value of a planning step, or Error(usage) "WHAT: reason" for its refusal.
template <typename T, typename Refusal>
T value_or_refuse(const std::variant<T, Refusal>& planned, const std::string& what) {
    if (const auto* r = std::get_if<Refusal>(&planned)) {
        throw Error(ErrorCode::usage, fmt::format("{}: {}", what, r->reason));
    }
    return std::get<T>(planned);
}

/// exFAT and NTFS populate, as verify_populate drives them.
struct ExfatSteps {
    using ScanOptions = exfat::ScanOptions;
    using LayoutRequest = exfat::LayoutRequest;
    using Layout = exfat::Layout;
    using Plan = exfat::PopulatePlan;
    static constexpr const char* name = "exfat";
    static constexpr std::string_view label = "exFAT";
    static source::SourceTree scan_tree(const ScanOptions& o) { return exfat::scan_tree(o); }
    static auto volume_bytes_for_tree(const source::SourceTree& t, const LayoutRequest& r) {
        return exfat::volume_bytes_for_tree(t, r, 0);
    }
    static auto plan_layout(const LayoutRequest& r) { return exfat::plan_layout(r); }
    static auto plan_population(const source::SourceTree& t, const Layout& l) {
        return exfat::plan_population(t, l);
    }
    static void write(io::BlockDevice& img, const Layout& layout, const source::SourceTree& tree,
                      const Plan& plan, const source::PopulateWriteOptions& wo) {
        exfat::FormatOptions fo;
        fo.volume_serial_number = 0x12345678;
        exfat::format_volume(img, layout, fo);
        exfat::write_population(img, layout, tree, plan, wo);
    }
    static std::uint64_t clusters_in_use(const io::BlockDevice& img, const Layout& l) {
        return bitmap_clusters_in_use(img, l);
    }
};

struct NtfsSteps {
    using ScanOptions = ntfs::ScanOptions;
    using LayoutRequest = ntfs::LayoutRequest;
    using Layout = ntfs::Layout;
    using Plan = ntfs::PopulatePlan;
    static constexpr const char* name = "ntfs";
    static constexpr std::string_view label = "NTFS";
    static source::SourceTree scan_tree(const ScanOptions& o) { return ntfs::scan_tree(o); }
    static auto volume_bytes_for_tree(const source::SourceTree& t, const LayoutRequest& r) {
        return ntfs::volume_bytes_for_tree(t, r, 0);
    }
    static auto plan_layout(const LayoutRequest& r) { return ntfs::plan_layout(r, ntfs::secure_sds_bytes()); }
    static auto plan_population(const source::SourceTree& t, const Layout& l) {
        return ntfs::plan_population(t, l);
    }
    static void write(io::BlockDevice& img, const Layout& layout, const source::SourceTree& tree,
                      const Plan& plan, const source::PopulateWriteOptions& wo) {
        ntfs::FormatOptions fo;
        fo.volume_serial_number = 0x12345678;
        fo.creation_filetime = ntfs::filetime_from_unix(315532800, 0);
        fo.device_is_zeroed = true;
        ntfs::format_volume(img, layout, fo);
        ntfs::write_population(img, layout, tree, plan, wo);
    }
    static std::uint64_t clusters_in_use(const io::BlockDevice& img, const Layout& l) {
        return ntfs_clusters_in_use(img, l);
    }
};

/// Scans `dir`, then for each cluster size plans the layout (the smallest
/// volume that holds the tree, or `volume_bytes`) and the population, writes
/// both to a temporary sparse image and counts the clusters in use there.
/// The system files and the root's first cluster belong to the empty volume,
/// so layout.used_clusters() is taken off both counts.
template <class Steps>
std::vector<VerifyResult> verify_populate(const std::filesystem::path& dir,
                                          const std::vector<std::uint32_t>& sizes,
                                          const std::vector<std::uint64_t>& predicted,
                                          std::optional<std::uint64_t> volume_bytes,
                                          const std::filesystem::path& temp_dir) {
    typename Steps::ScanOptions so;
    so.sources.push_back({dir, "/"});
    std::uint64_t pruned = 0;
    const source::SourceTree tree = prune(Steps::scan_tree(so), pruned);

    std::vector<VerifyResult> out;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        VerifyResult res;
        res.filesystem = Steps::name;
        res.cluster_bytes = sizes[k];
        res.predicted = predicted[k];
        res.pruned = pruned;
        const std::string what =
            fmt::format("--verify with {} {} clusters", Steps::label, core::format_size(sizes[k]));
        typename Steps::LayoutRequest req;
        req.cluster_bytes = sizes[k];
        res.volume_bytes =
            volume_bytes ? *volume_bytes : value_or_refuse(Steps::volume_bytes_for_tree(tree, req), what);
        req.volume_bytes = res.volume_bytes;
        const typename Steps::Layout layout = value_or_refuse(Steps::plan_layout(req), what);
        const auto plan_or = Steps::plan_population(tree, layout);
        if (const auto* p = std::get_if<std::vector<source::TreeProblem>>(&plan_or)) {
            throw Error(ErrorCode::usage,
                        fmt::format("{}: {}: {}", what, p->front().path, p->front().reason));
        }
        const typename Steps::Plan& plan = std::get<typename Steps::Plan>(plan_or);
        res.planned = plan.used_clusters - layout.used_clusters();
        auto img = temp_image(temp_dir, res.volume_bytes);
        source::PopulateWriteOptions wo;
        wo.creation_time = 315532800;  // 1980-01-01: the image's times do not matter here
        wo.device_is_zeroed = true;
        Steps::write(*img, layout, tree, plan, wo);
        res.actual = Steps::clusters_in_use(*img, layout) - layout.used_clusters();
        out.push_back(res);
    }
    return out;
}

}  // namespace

std::vector<VerifyResult> verify_fat(const std::filesystem::path& dir,
                                     const std::vector<std::uint32_t>& sizes,
                                     const std::vector<std::uint64_t>& predicted,
                                     std::optional<std::uint64_t> volume_bytes,
                                     const std::filesystem::path& temp_dir) {
    fat::ScanOptions so;
    so.sources.push_back({dir, "/"});
    so.symlinks = fat::SymlinkPolicy::skip;
    const fat::SourceTree scanned = fat::scan_tree(so);
    std::uint64_t pruned = 0;
    const fat::SourceTree tree = prune(scanned, pruned);

    std::vector<VerifyResult> out;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        VerifyResult res;
        res.cluster_bytes = sizes[k];
        res.predicted = predicted[k];
        res.pruned = pruned;
        const std::string what = fmt::format("--verify with {} clusters", core::format_size(sizes[k]));
        fat::LayoutRequest req;
        req.type = fat::FatType::fat32;
        req.cluster_bytes = sizes[k];
        res.volume_bytes = volume_bytes
                               ? *volume_bytes
                               : value_or_refuse(fat::volume_bytes_for_tree(tree, req, false, 0), what);
        req.volume_bytes = res.volume_bytes;
        const fat::Layout layout = value_or_refuse(fat::plan_layout(req), what);
        const auto plan_or = fat::plan_population(tree, layout, false);
        if (const auto* p = std::get_if<std::vector<fat::TreeProblem>>(&plan_or)) {
            throw Error(ErrorCode::usage,
                        fmt::format("--verify with {} clusters: {}: {}", core::format_size(sizes[k]),
                                    p->front().path, p->front().reason));
        }
        const fat::PopulatePlan& plan = std::get<fat::PopulatePlan>(plan_or);
        res.planned = plan.used_clusters - 1;
        auto img = temp_image(temp_dir, res.volume_bytes);
        fat::FormatOptions fo;
        fo.volume_id = 0x12345678;
        fat::format_volume(*img, layout, fo);
        fat::WriteOptions wo;
        wo.creation_time = 315532800;  // 1980-01-01: the image's times do not matter here
        fat::write_population(*img, layout, tree, plan, wo);
        const fat::Volume v(*img);
        res.actual = used_clusters(v) - 1;  // the root's first cluster belongs to the empty volume
        out.push_back(res);
    }
    return out;
}

std::vector<VerifyResult> verify_exfat(const std::filesystem::path& dir,
                                       const std::vector<std::uint32_t>& sizes,
                                       const std::vector<std::uint64_t>& predicted,
                                       std::optional<std::uint64_t> volume_bytes,
                                       const std::filesystem::path& temp_dir) {
    return verify_populate<ExfatSteps>(dir, sizes, predicted, volume_bytes, temp_dir);
}

std::vector<VerifyResult> verify_ntfs(const std::filesystem::path& dir,
                                      const std::vector<std::uint32_t>& sizes,
                                      const std::vector<std::uint64_t>& predicted,
                                      std::optional<std::uint64_t> volume_bytes,
                                      const std::filesystem::path& temp_dir) {
    return verify_populate<NtfsSteps>(dir, sizes, predicted, volume_bytes, temp_dir);
}

}  // namespace fsimg::slack
