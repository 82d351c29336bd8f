// write_population: the root's FAT chain, the allocation bitmap, directory
// entry sets, file data and PercentInUse of a planned tree (mkfs --from).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/cost.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/populate.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/io/stream_writer.hpp"
#include "fsimg/source/file.hpp"
#include "stamp.hpp"

namespace fsimg::exfat {

namespace {

constexpr std::size_t kRootSystemBytes = std::size_t{kRootSystemEntries} * kDirEntrySize;

/// Source times -> entry timestamps (stamp.hpp), the creation time for nodes without times.
class NodeStamper {
public:
    explicit NodeStamper(const source::PopulateWriteOptions& o) : opt_(o), stamper_(o.clamp, o.local_time) {}
    void apply(const source::TreeNode& n, FileEntrySetInfo& e) const {
        if (!n.has_times) {
            e.created = e.modified = e.accessed = stamper_.stamp(opt_.creation_time, 0);
            e.accessed.increment_10ms = 0;
        } else {
            stamper_.apply(e, n.mtime, n.mtime_ns, n.btime, n.btime_ns);
        }
    }

private:
    const source::PopulateWriteOptions& opt_;
    Stamper stamper_;
};

/// Encodes directory `d` into `out` (zero-filled, its whole size).
void build_directory(const source::SourceTree& tree, const PopulatePlan& plan, std::uint32_t d,
                     const NodeStamper& stamper, const source::PopulateWriteOptions& opt,
                     std::span<const std::byte> system_entries, std::span<std::byte> out, std::uint32_t cb) {
    std::size_t at = 0;
    if (d == 0) {
        std::copy(system_entries.begin(), system_entries.end(), out.begin());
        at = system_entries.size();
    }
    for (const std::uint32_t c : tree.nodes[d].children) {
        const source::TreeNode& n = tree.nodes[c];
        const NodePlan& p = plan.nodes[c];
        FileEntrySetInfo e;
        e.name = n.name16;
        e.attributes = n.is_dir ? kFileAttrDirectory : kFileAttrArchive;
        if (!n.is_dir && n.read_only) e.attributes |= kFileAttrReadOnly;
        if (opt.dot_hidden && !n.name.empty() && n.name[0] == '.') e.attributes |= kFileAttrHidden;
        stamper.apply(n, e);
        e.first_cluster = p.first_cluster;
        // Directories: DataLength is the allocation [EXFAT §7.6]; files: their size.
        e.data_length = n.is_dir ? std::uint64_t{p.clusters} * cb : n.size;
        e.valid_data_length = e.data_length;
        e.secondary_flags = kSecondaryAllocationPossible | (p.clusters > 0 ? kSecondaryNoFatChain : 0);
        const std::vector<std::byte> set = encode_file_entry_set(e);
        std::copy(set.begin(), set.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
        at += set.size();
    }
}

/// The root's chain: root_first .. root_first + clusters - 1, then end of chain.
void write_root_chain(io::BlockDevice& dev, const Layout& l, const NodePlan& root) {
    std::vector<std::byte> buf(std::size_t{root.clusters} * kFatEntrySize);
    for (std::uint32_t i = 0; i < root.clusters; ++i) {
        const std::uint32_t n = root.first_cluster + i;
        core::store_le32(buf, std::size_t{i} * kFatEntrySize,
                         i + 1 == root.clusters ? kFatEndOfChain : n + 1);
    }
    dev.write_at(
        std::uint64_t{l.fat_offset} * l.bytes_per_sector + std::uint64_t{root.first_cluster} * kFatEntrySize,
        buf);
}

/// PercentInUse in both boot sectors (excluded from the boot checksum [EXFAT §3.4]).
void write_percent_in_use(io::BlockDevice& dev, const Layout& l, std::uint64_t used) {
    const std::array<std::byte, 1> percent{
        static_cast<std::byte>(l.cluster_count == 0 ? 0 : used * 100 / l.cluster_count)};
    for (const std::uint64_t sector : {std::uint64_t{0}, std::uint64_t{kBackupBootRegionSector}}) {
        dev.write_at(sector * l.bytes_per_sector + off::PercentInUse, percent);
    }
}

}  // namespace

void write_population(io::BlockDevice& dev, const Layout& layout, const source::SourceTree& tree,
                      const PopulatePlan& plan, const source::PopulateWriteOptions& opt) {
    const NodeStamper stamper(opt);
    const std::uint32_t cb = layout.cluster_bytes();

    // The label, bitmap and up-case entries format_volume wrote stay first in the root.
    std::array<std::byte, kRootSystemBytes> system{};
    dev.read_at(layout.cluster_offset(layout.root_first_cluster), system);
    if (system[0] != std::byte{kEntryVolumeLabel} ||
        system[kDirEntrySize] != std::byte{kEntryAllocationBitmap} ||
        system[2 * kDirEntrySize] != std::byte{kEntryUpcaseTable}) {
        throw Error(
            ErrorCode::unsupported,
            "internal error: the exFAT root does not start with the label, bitmap and up-case entries "
            "format writes");
    }

    // Recommended order [EXFAT §8.1]: FAT, bitmap, directory entries.
    write_root_chain(dev, layout, plan.nodes[0]);
    write_allocation_bitmap(dev, layout, plan.used_clusters);

    io::StreamWriter w(dev, opt.device_is_zeroed);
    source::SourceReader reader(tree, opt.source);
    std::vector<std::byte> dirbuf;
    for (const std::uint32_t i : plan.allocation_order) {
        const source::TreeNode& n = tree.nodes[i];
        const NodePlan& p = plan.nodes[i];
        w.seek(layout.cluster_offset(p.first_cluster));
        if (n.is_dir) {
            dirbuf.assign(std::size_t{p.clusters} * cb, std::byte{0});
            build_directory(tree, plan, i, stamper, opt, system, dirbuf, cb);
            w.append(dirbuf);
        } else {
            source::copy_file(reader.open(i), std::uint64_t{p.clusters} * cb, w, opt.progress);
        }
    }
    w.flush();
    write_percent_in_use(dev, layout, plan.used_clusters);
}

}  // namespace fsimg::exfat
