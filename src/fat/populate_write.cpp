// write_population: FAT chains, directories, file data and FSInfo of a
// planned tree (mkfs --from).
#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/fat/populate.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/io/stream_writer.hpp"
#include "fsimg/source/file.hpp"
#include "stamp.hpp"

namespace fsimg::fat {

namespace {

constexpr std::uint32_t kFatChunkEntries = 1u << 16;  ///< FAT entries encoded per write (even, for FAT12)

/// Source times -> FAT fields (stamp.hpp), with populate's rule for created directories.
class NodeStamper {
public:
    explicit NodeStamper(const WriteOptions& o) : opt_(o), stamper_(o.clamp, o.local_time) {}
    void apply(const TreeNode& n, DirEntry& e) const {
        const std::int64_t m = n.has_times ? n.mtime : opt_.creation_time;
        const std::int64_t b = n.has_times ? n.btime : opt_.creation_time;
        stamper_.apply(e, m, b, n.has_times ? n.btime_ns : 0);
    }

private:
    const WriteOptions& opt_;
    Stamper stamper_;
};

void put_entry(const DirEntry& e, std::span<std::byte> out, std::size_t slot) {
    encode_dir_entry(e, out.subspan(slot * kDirEntrySize).first<kDirEntrySize>());
}

/// Encodes directory `d` into `out` (zero-filled, its whole size).
void build_directory(const SourceTree& tree, const PopulatePlan& plan, std::uint32_t d,
                     const NodeStamper& stamper, const WriteOptions& opt,
                     std::span<const std::byte> label_entry, std::span<std::byte> out) {
    std::size_t slot = 0;
    const TreeNode& dir = tree.nodes[d];
    if (d != 0) {
        DirEntry dot;
        dot.name.fill(' ');
        dot.name[0] = '.';
        dot.attr = kAttrDirectory;
        stamper.apply(dir, dot);
        dot.first_cluster = plan.nodes[d].first_cluster;
        put_entry(dot, out, slot++);
        DirEntry dotdot = dot;
        dotdot.name[1] = '.';
        // ".." of a directory in the root points at cluster 0, even on FAT32 [FATGEN].
        dotdot.first_cluster = dir.parent == 0 ? 0 : plan.nodes[dir.parent].first_cluster;
        put_entry(dotdot, out, slot++);
    } else if (!label_entry.empty()) {
        std::copy(label_entry.begin(), label_entry.end(), out.begin());
        ++slot;
    }
    for (const std::uint32_t c : dir.children) {
        const TreeNode& n = tree.nodes[c];
        const NodePlan& p = plan.nodes[c];
        if (p.lfn) {
            const std::size_t count = lfn_entry_count(n.name16.size());
            encode_lfn_entries(n.name16, lfn_checksum(p.short_name),
                               out.subspan(slot * kDirEntrySize, count * kDirEntrySize));
            slot += count;
        }
        DirEntry e;
        e.name = p.short_name;
        e.nt_res = p.lfn ? 0 : p.nt_case;
        e.attr = n.is_dir ? kAttrDirectory : kAttrArchive;
        if (!n.is_dir && n.read_only) e.attr |= kAttrReadOnly;
        if (opt.dot_hidden && !n.name.empty() && n.name[0] == '.') e.attr |= kAttrHidden;
        stamper.apply(n, e);
        e.first_cluster = p.first_cluster;
        e.file_size = n.is_dir ? 0 : static_cast<std::uint32_t>(n.size);
        put_entry(e, out, slot++);
    }
}

void write_fats(io::BlockDevice& dev, const Layout& layout, const PopulatePlan& plan) {
    const std::uint32_t total = 2 + plan.used_clusters;  // entries 0 .. next-1
    const unsigned bits = fat_entry_bits(layout.type);
    const std::uint32_t eoc = end_of_chain(layout.type);
    std::size_t run = 0;  // index into allocation_order
    std::vector<std::byte> buf;
    for (std::uint32_t start = 0; start < total; start += kFatChunkEntries) {
        const std::uint32_t m = std::min(kFatChunkEntries, total - start);
        buf.assign(bits == 12 ? (std::size_t{m} * 3 + 1) / 2 : std::size_t{m} * bits / 8, std::byte{0});
        for (std::uint32_t n = start; n < start + m; ++n) {
            std::uint32_t v = 0;
            if (n == 0) {
                v = fat0_value(layout.type, layout.media);
            } else if (n == 1) {
                v = fat1_value(layout.type);
            } else {
                const NodePlan& p = plan.nodes[plan.allocation_order[run]];
                const std::uint32_t last = p.first_cluster + p.clusters - 1;
                v = n == last ? eoc : n + 1;
                if (n == last) ++run;
            }
            set_fat_entry(buf, layout.type, n - start, v);
        }
        const std::uint64_t at = std::uint64_t{start} * bits / 8;
        for (std::uint32_t i = 0; i < layout.num_fats; ++i) {
            dev.write_at(layout.first_fat_sector * layout.bytes_per_sector + i * layout.fat_bytes() + at,
                         buf);
        }
    }
}

void write_fsinfo(io::BlockDevice& dev, const Layout& layout, const PopulatePlan& plan) {
    const std::uint32_t bps = layout.bytes_per_sector;
    for (const std::uint64_t base : {std::uint64_t{0}, std::uint64_t{layout.backup_boot_sector}}) {
        const std::uint64_t at = (base + layout.fsinfo_sector) * bps;
        std::array<std::byte, kBootSectorSize> sector{};
        dev.read_at(at, sector);
        FsInfo info = decode_fsinfo(sector);
        info.free_count = layout.cluster_count - plan.used_clusters;
        info.next_free = plan.next_free;
        encode_fsinfo(info, sector);
        dev.write_at(at, sector);
    }
}

}  // namespace

void write_population(io::BlockDevice& dev, const Layout& layout, const SourceTree& tree,
                      const PopulatePlan& plan, const WriteOptions& opt) {
    const NodeStamper stamper(opt);
    const bool fat32 = layout.type == FatType::fat32;
    const std::uint64_t cb = layout.cluster_bytes();
    const std::uint64_t root_at = fat32 ? layout.cluster_offset(layout.root_cluster)
                                        : layout.first_root_dir_sector * layout.bytes_per_sector;

    // The volume-label entry format_volume wrote stays first in the root.
    std::array<std::byte, kDirEntrySize> label{};
    dev.read_at(root_at, label);
    const bool has_label = decode_dir_entry(label).attr == kAttrVolumeId;
    const std::span<const std::byte> label_entry =
        has_label ? std::span<const std::byte>(label) : std::span<const std::byte>{};

    write_fats(dev, layout, plan);

    if (!fat32) {
        std::vector<std::byte> root(std::size_t{plan.nodes[0].entries} * kDirEntrySize);
        build_directory(tree, plan, 0, stamper, opt, label_entry, root);
        if (!root.empty()) dev.write_at(root_at, root);
    }

    io::StreamWriter w(dev, opt.device_is_zeroed);
    source::SourceReader reader(tree, opt.source);
    std::vector<std::byte> dirbuf;
    for (const std::uint32_t i : plan.allocation_order) {
        const TreeNode& n = tree.nodes[i];
        const NodePlan& p = plan.nodes[i];
        w.seek(layout.cluster_offset(p.first_cluster));
        if (n.is_dir) {
            dirbuf.assign(p.clusters * cb, std::byte{0});
            build_directory(tree, plan, i, stamper, opt, label_entry, dirbuf);
            w.append(dirbuf);
        } else {
            source::copy_file(reader.open(i), p.clusters * cb, w, opt.progress);
        }
    }
    w.flush();

    if (fat32) write_fsinfo(dev, layout, plan);
}

}  // namespace fsimg::fat
