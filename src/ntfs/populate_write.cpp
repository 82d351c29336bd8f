// write_population: MFT records, index blocks, file data, $MFT's bitmap,
// $MFTMirr and $Bitmap of a planned tree (mkfs -t ntfs --from). See
// include/fsimg/ntfs/populate.hpp.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/progress.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/io/stream_writer.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "fsimg/source/file.hpp"

namespace fsimg::ntfs {

namespace {

/// IO_REPARSE_TAG_SYMLINK and FILE_ATTRIBUTE_REPARSE_POINT ([MS-FSCC] 2.1.2.1, 2.6).
constexpr std::uint32_t kSymlinkTag = 0xA000000C;
constexpr std::uint32_t kReparsePointAttribute = 0x400;

constexpr std::uint64_t kRootRecord = 5;
constexpr std::uint16_t kRootSequence = 5;  ///< format: record n has sequence n (formats.md §3.2)
constexpr std::uint16_t kNewSequence = 1;   ///< a record used for the first time

/// Calls fn(device offset, offset in `bytes`, length) for each piece of the
/// stream range [offset, offset + bytes) that `extents` map.
template <typename Fn>
void for_each_piece(const std::vector<Extent>& extents, std::uint32_t cb, std::uint64_t offset,
                    std::uint64_t bytes, Fn fn) {
    std::uint64_t start = 0;  // stream offset of the current extent
    for (const Extent& e : extents) {
        const std::uint64_t len = e.clusters * cb;
        const std::uint64_t lo = std::max(offset, start), hi = std::min(offset + bytes, start + len);
        if (lo < hi) fn(e.lcn * cb + (lo - start), lo - offset, hi - lo);
        start += len;
    }
    if (offset + bytes > start)
        throw Error(ErrorCode::unsupported, "internal error: an NTFS stream is longer than its clusters");
}

void write_stream(io::BlockDevice& dev, const std::vector<Extent>& extents, std::uint32_t cb,
                  std::uint64_t offset, std::span<const std::byte> data) {
    for_each_piece(extents, cb, offset, data.size(),
                   [&](std::uint64_t at, std::uint64_t from, std::uint64_t n) {
                       dev.write_at(at, data.subspan(from, n));
                   });
}

std::vector<std::byte> nonresident(AttrType type, std::u16string_view name,
                                   const std::vector<Extent>& extents, std::uint32_t cb, std::uint64_t size) {
    const std::uint64_t clusters = clusters_of(extents);
    return build_nonresident_attribute(type, name, runs_of(extents), {clusters * cb, size, size},
                                       clusters - 1);
}

/// An attribute as read, re-encoded (the builders give the same bytes
/// format wrote, instance ids aside).
std::vector<std::byte> rebuild(const Attribute& a) {
    if (!a.non_resident) return build_resident_attribute(a.kind(), a.name, a.value, a.indexed);
    std::vector<DataRun> runs;
    for (const MappedRun& r : a.runs)
        runs.push_back({r.length, r.lcn ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*r.lcn))
                                        : std::nullopt});
    return build_nonresident_attribute(a.kind(), a.name, runs,
                                       {a.allocated_size, a.data_size, a.initialized_size},
                                       static_cast<std::uint64_t>(a.last_vcn),
                                       (a.flags & attr_flag::sparse) ? a.compressed_size : std::nullopt);
}

/// $FILE_NAME value `v` with new allocated and data sizes.
std::vector<std::byte> resized_file_name(std::span<const std::byte> v, std::uint64_t allocated,
                                         std::uint64_t size) {
    FileName fn = decode_file_name(v);
    fn.allocated_size = allocated;
    fn.data_size = size;
    return encode_file_name(fn);
}

/// Reads a small host file whole (resident $DATA).
/// Copies a source file over several extents (a file no free run held whole).
void copy_fragmented(const source::SourceFile& file, const std::vector<Extent>& extents, std::uint32_t cb,
                     io::StreamWriter& w, core::Progress* progress) {
    std::uint64_t pos = 0;
    for (const Extent& e : extents) {
        w.seek(e.lcn * cb);
        const std::uint64_t bytes = e.clusters * cb;
        const std::uint64_t left = std::min(file.size() - std::min(file.size(), pos), bytes);
        source::copy_range(file, pos, left, w, progress);
        w.append_zeros(bytes - left);
        pos += left;
    }
    file.finish();
}

/// Copies a sparse file (NodePlan::sparse): each data VCN range's bytes
/// into the next clusters of `extents`, zeros after the end of the file;
/// first checks that the holes the plan made still read as zeros (the file
/// has no data segment there now, or only zeros), else Error(io): the file
/// changed after the scan and its data would be lost.
void copy_sparse(const source::SourceFile& file, const std::vector<VcnRange>& data_vcns,
                 const std::vector<Extent>& extents, std::uint32_t cb, io::StreamWriter& w,
                 core::Progress* progress) {
    const std::uint64_t size = file.size();
    // One merge walk of the file's data segments against the plan's data
    // ranges (both ascending and disjoint): what lies outside every range
    // must read as zeros.
    constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
    std::vector<std::byte> buf;
    std::size_t ri = 0;  // the first data range that does not end at or before `at`
    for (const source::Segment& s : file.segments()) {
        const std::uint64_t end =
            std::min(size, s.offset + std::min(s.length, size - std::min(size, s.offset)));
        for (std::uint64_t at = s.offset; at < end;) {
            const std::uint64_t vcn = at / cb;
            while (ri < data_vcns.size() && data_vcns[ri].vcn + data_vcns[ri].clusters <= vcn) ++ri;
            if (ri < data_vcns.size() && data_vcns[ri].vcn <= vcn) {  // inside a data range: copied below
                at = std::min(end, (data_vcns[ri].vcn + data_vcns[ri].clusters) * cb);
                continue;
            }
            const std::uint64_t hole_end =
                ri < data_vcns.size() ? std::min(end, data_vcns[ri].vcn * cb) : end;
            for (; at < hole_end;) {
                const std::uint64_t n = std::min(kChunk, hole_end - at);
                buf.resize(static_cast<std::size_t>(n));
                file.read_at(at, buf);
                const auto nz =
                    std::find_if(buf.begin(), buf.end(), [](std::byte b) { return b != std::byte{0}; });
                if (nz != buf.end())
                    throw Error(
                        ErrorCode::io,
                        fmt::format("{} changed after the scan: it holds data at byte {}, where the scan "
                                    "found a hole; nothing was written (run again once it is stable)",
                                    file.path(), at + static_cast<std::uint64_t>(nz - buf.begin())));
                at += n;
            }
        }
    }
    std::uint64_t packed = 0;  // offset in the clusters of `extents`
    std::uint64_t covered = 0;
    for (const VcnRange& r : data_vcns) {
        const std::uint64_t from = r.vcn * cb, bytes = r.clusters * cb;
        for_each_piece(extents, cb, packed, bytes, [&](std::uint64_t at, std::uint64_t off, std::uint64_t n) {
            const std::uint64_t src = from + off;
            const std::uint64_t have = std::min(n, size - std::min(size, src));
            w.seek(at);
            source::copy_range(file, src, have, w, progress);
            w.append_zeros(n - have);
        });
        core::advance(progress, std::min(size, from) - std::min(size, covered));  // the hole before it
        covered = from + bytes;
        packed += bytes;
    }
    core::advance(progress, size - std::min(size, covered));
    file.finish();
}

class Writer {
public:
    Writer(io::BlockDevice& dev, const Layout& L, const source::SourceTree& tree, const PopulatePlan& plan,
           const source::PopulateWriteOptions& opt)
        : dev_(dev),
          L_(L),
          tree_(tree),
          plan_(plan),
          opt_(opt),
          cb_(L.cluster_bytes),
          rs_(L.mft_record_bytes),
          reader_(tree, opt.source) {
        by_record_.assign(plan.mft_records, UINT32_MAX);
        for (std::uint32_t i = 1; i < plan.nodes.size(); ++i)  // a hard link's record is its file's
            if (plan.nodes[i].link_of == kNoLink) by_record_[plan.nodes[i].record] = i;
    }

    void run() {
        read_format_output();
        if (!opt_.device_is_zeroed) zero_new_extents();
        io::StreamWriter w(dev_, opt_.device_is_zeroed);
        write_records(w);
        write_data(w);
        w.flush();
        write_mft_bitmap();
        write_bitmap();
    }

private:
    /// Records 0..26 and the root's system index entries, as format wrote them.
    void read_format_output() {
        const Volume vol(dev_);
        const std::uint64_t formatted = std::min<std::uint64_t>(L_.mft_records, kInitialMftRecords);
        format_records_.resize(formatted * rs_);
        dev_.read_at(L_.mft.lcn * cb_, format_records_);
        const MftRecord root = vol.read_record(kRootRecord);
        const Attribute* ia = root.find(AttrType::index_allocation, u"$I30");
        if (ia == nullptr || L_.root_index.empty())
            throw Error(ErrorCode::unsupported, "internal error: the root has no index block to populate");
        const IndexBlock block = vol.read_index_block(*ia, 0, L_.index_block_bytes, true);
        for (const IndexEntry& e : block.entries) {
            if (e.last()) break;
            if (!e.file_name) continue;
            system_entries_.push_back(e);
        }
        if (system_entries_.size() != kRootSystemNames.size())
            throw Error(ErrorCode::unsupported,
                        "internal error: the formatted root does not list the system files");
        for (std::size_t k = 0; k < kRootSystemNames.size(); ++k) {
            if (system_entries_[k].file_name->name != kRootSystemNames[k])
                throw Error(ErrorCode::unsupported,
                            "internal error: the formatted root lists the system files in another order");
        }
    }

    std::vector<Extent> new_extents() const {
        std::vector<Extent> v;
        auto add = [&](const std::vector<Extent>& list) { v.insert(v.end(), list.begin(), list.end()); };
        for (const Extent& e : plan_.mft)
            if (!(e == L_.mft)) v.push_back(e);
        for (const Extent& e : plan_.mft_bitmap)
            if (!(e == L_.mft_bitmap)) v.push_back(e);
        add(plan_.reparse.extents);
        add(plan_.reparse.bitmap);
        for (std::uint32_t i = 0; i < plan_.nodes.size(); ++i) {
            add(plan_.nodes[i].index_bitmap);
            if (i == 0) {
                for (const Extent& e : plan_.nodes[0].extents)
                    if (std::find(L_.root_index.begin(), L_.root_index.end(), e) == L_.root_index.end())
                        v.push_back(e);
            } else {
                add(plan_.nodes[i].extents);
            }
        }
        return v;
    }

    void zero_new_extents() {
        for (const Extent& e : new_extents()) dev_.zero_range(e.lcn * cb_, e.clusters * cb_);
    }

    // ---- names and times

    std::uint64_t filetime(std::int64_t t, std::uint32_t ns) const {
        if (opt_.clamp && t >= *opt_.clamp) {
            t = *opt_.clamp;
            ns = 0;
        }
        return filetime_from_unix(t, ns);
    }
    struct Times {
        std::uint64_t created, modified;
    };
    Times times_of(const source::TreeNode& n) const {
        if (!n.has_times) {
            const std::uint64_t t = filetime(opt_.creation_time, 0);
            return {t, t};
        }
        return {filetime(n.btime, n.btime_ns), filetime(n.mtime, n.mtime_ns)};
    }
    std::uint32_t attributes_of(std::uint32_t i) const {
        const source::TreeNode& n = tree_.nodes[i];
        std::uint32_t a = n.is_dir ? 0 : file_attr::archive;
        if (!n.is_dir && n.read_only) a |= file_attr::read_only;
        if (opt_.dot_hidden && !n.name.empty() && n.name[0] == '.') a |= file_attr::hidden;
        if (!n.symlink_target.empty()) a |= kReparsePointAttribute;
        const NodePlan& own = plan_.nodes[i];
        if ((own.link_of == kNoLink ? own : plan_.nodes[own.link_of]).sparse) a |= file_attr::sparse_file;
        return a;
    }
    FileReference ref_of(std::uint32_t i) const {
        return i == 0 ? FileReference{kRootRecord, kRootSequence}
                      : FileReference{plan_.nodes[i].record, kNewSequence};
    }
    /// The $FILE_NAME value of node i's name, or of its DOS name.
    std::vector<std::byte> file_name_value(std::uint32_t i, bool dos = false) const {
        const source::TreeNode& n = tree_.nodes[i];
        const NodePlan& own = plan_.nodes[i];
        const NodePlan& p = own.link_of == kNoLink ? own : plan_.nodes[own.link_of];  // the data's plan
        const Times t = times_of(n);
        FileName fn;
        fn.parent = ref_of(n.parent);
        fn.creation_time = t.created;
        fn.modification_time = fn.mft_change_time = fn.access_time = t.modified;
        if (!n.is_dir) {
            fn.data_size = n.size;
            fn.allocated_size = p.resident ? (n.size + 7) / 8 * 8 : clusters_of(p.extents) * cb_;
        }
        fn.file_attributes = attributes_of(i) | (n.is_dir ? file_attr::directory : 0);
        if (!n.symlink_target.empty()) fn.reparse_or_ea = kSymlinkTag;  // the tag, as [MS-FSCC] 2.1.2.4
        fn.name_space = dos ? Namespace::dos : own.name_space;
        fn.name = dos ? own.dos_name : n.name16;
        return encode_file_name(fn);
    }

    /// The $FILE_NAME attributes of node i's record: its name, its DOS name,
    /// its hard links' names; ordered by value (memcmp, then length), the
    /// order NTFS keeps resident attributes of one type and name in
    /// [NTFS-3G attrib.c ntfs_attr_find], so a DOS name shorter than its
    /// long name comes first, as on Windows volumes.
    std::vector<std::vector<std::byte>> file_name_attributes(std::uint32_t i) const {
        const NodePlan& p = plan_.nodes[i];
        std::vector<std::vector<std::byte>> values;
        values.push_back(file_name_value(i));
        if (!p.dos_name.empty()) values.push_back(file_name_value(i, true));
        for (const std::uint32_t l : p.links) values.push_back(file_name_value(l));
        std::sort(values.begin(), values.end());
        std::vector<std::vector<std::byte>> attrs;
        for (const auto& v : values)
            attrs.push_back(build_resident_attribute(AttrType::file_name, u"", v, true));
        return attrs;
    }
    /// $REPARSE_POINT of a relative symbolic link ([MS-FSCC] 2.1.2.4): tag
    /// IO_REPARSE_TAG_SYMLINK, data length, 0; substitute name offset/length,
    /// print name offset/length, flags 1 (SYMLINK_FLAG_RELATIVE); both names
    /// the target with '/' as '\\', substitute first.
    static std::vector<std::byte> symlink_reparse_data(const std::string& target) {
        std::u16string t = core::utf8_to_utf16(target);
        std::replace(t.begin(), t.end(), u'/', u'\\');
        const auto bytes = static_cast<std::uint16_t>(2 * t.size());
        std::vector<std::byte> v(20 + 2 * std::size_t{bytes});
        auto put16 = [&](std::size_t at, std::uint16_t x) {
            v[at] = std::byte(x & 0xFF);
            v[at + 1] = std::byte(x >> 8);
        };
        auto put32 = [&](std::size_t at, std::uint32_t x) {
            put16(at, static_cast<std::uint16_t>(x));
            put16(at + 2, static_cast<std::uint16_t>(x >> 16));
        };
        put32(0, kSymlinkTag);
        put16(4, static_cast<std::uint16_t>(12 + 2 * bytes));
        put16(8, 0);       // substitute name offset
        put16(10, bytes);  // and length
        put16(12, bytes);  // print name offset
        put16(14, bytes);  // and length
        put32(16, 1);      // SYMLINK_FLAG_RELATIVE
        for (std::size_t k = 0; k < t.size(); ++k) {
            put16(20 + 2 * k, t[k]);
            put16(20 + bytes + 2 * k, t[k]);
        }
        return v;
    }

    std::vector<std::byte> standard_information(std::uint32_t i) const {
        const Times t = times_of(tree_.nodes[i]);
        StandardInformation si;
        si.creation_time = t.created;
        si.modification_time = si.mft_change_time = si.access_time = t.modified;
        si.file_attributes = attributes_of(i);
        si.security_id = kSecurityIdRoot;
        const auto v = encode_standard_information(si);
        return build_resident_attribute(AttrType::standard_information, u"", v);
    }

    // ---- directories

    /// The $I30 entry (without sub-node) of entry r of a directory.
    std::vector<std::byte> index_entry(const DirEntryRef& r) const {
        if (!r.system) return build_file_name_index_entry(ref_of(r.index), file_name_value(r.index, r.dos));
        const IndexEntry& e = system_entries_[r.index];
        if (kRootSystemNames[r.index] == u"$MFT") {
            return build_file_name_index_entry(
                FileReference::unpack(e.reference),
                resized_file_name(e.key, clusters_of(plan_.mft) * cb_, plan_.mft_records * rs_));
        }
        return build_file_name_index_entry(FileReference::unpack(e.reference), e.key);
    }

    /// $INDEX_ROOT (and $INDEX_ALLOCATION, $BITMAP) of directory `d`; its
    /// INDX blocks are written here.
    std::vector<std::vector<std::byte>> index_attributes(std::uint32_t d) {
        const NodePlan& p = plan_.nodes[d];
        std::vector<std::vector<std::byte>> entries;
        entries.reserve(p.entries.size());
        for (const DirEntryRef& r : p.entries) entries.push_back(index_entry(r));
        return index_attributes(u"$I30", 0x30, collation::file_name, entries, p.index, p.extents,
                                p.index_bitmap);
    }

    /// The attributes of an index named `name` over `entries` (each without
    /// a sub-node VCN) shaped as `shape`, its blocks written into `extents`.
    std::vector<std::vector<std::byte>> index_attributes(std::u16string_view name, std::uint32_t indexed_type,
                                                         std::uint32_t collation_rule,
                                                         const std::vector<std::vector<std::byte>>& entries,
                                                         const IndexShape& shape,
                                                         const std::vector<Extent>& extents,
                                                         const std::vector<Extent>& bitmap_extents) {
        const bool large = !shape.blocks.empty();
        std::vector<std::vector<std::byte>> attrs;
        attrs.push_back(build_resident_attribute(
            AttrType::index_root, name,
            build_index_root(indexed_type, collation_rule, L_.index_block_bytes, cb_,
                             index_node_bytes(entries, shape.root, index_block_vcns(L_)), large)));
        if (!large) return attrs;
        const std::uint32_t per = index_block_vcns(L_);
        for (std::size_t b = 0; b < shape.blocks.size(); ++b) {
            const IndexNode& node = shape.blocks[b];
            std::vector<std::byte> block =
                build_index_block(b * per, L_.index_block_bytes, index_node_bytes(entries, node, per));
            if (!node.children.empty())
                block[0x18 + 0x0C] = std::byte{1};  // node header flags: has sub-nodes
            write_stream(dev_, extents, cb_, b * std::uint64_t{L_.index_block_bytes}, block);
        }
        const std::uint64_t bytes = shape.blocks.size() * std::uint64_t{L_.index_block_bytes};
        attrs.push_back(nonresident(AttrType::index_allocation, name, extents, cb_, bytes));
        const std::vector<std::byte> bitmap = index_block_bitmap(shape.blocks.size());
        if (shape.storage == IndexStorage::in_record) {
            attrs.push_back(build_resident_attribute(AttrType::bitmap, name, bitmap));
        } else {
            write_stream(dev_, bitmap_extents, cb_, 0, bitmap);
            attrs.push_back(nonresident(AttrType::bitmap, name, bitmap_extents, cb_, bitmap.size()));
        }
        return attrs;
    }

    /// $Extend/$Reparse with an "$R" entry per stored symbolic link
    /// (ReparseIndexPlan): key = tag, file reference; no data.
    std::vector<std::byte> reparse_record() {
        std::vector<std::vector<std::byte>> entries;
        entries.reserve(plan_.reparse.nodes.size());
        for (const std::uint32_t i : plan_.reparse.nodes) {
            std::vector<std::byte> key(12);
            core::store_le32(key, 0, kSymlinkTag);
            core::store_le64(key, 4, ref_of(i).packed());
            entries.push_back(build_view_index_entry(key, {}));
        }
        bool done = false;
        return rebuilt_system_record(
            kReparseRecord, [&](const Attribute& a) -> std::vector<std::vector<std::byte>> {
                if (a.name != u"$R") return {rebuild(a)};
                if (done) return {};
                done = true;
                return index_attributes(u"$R", 0, collation::ulongs, entries, plan_.reparse.index,
                                        plan_.reparse.extents, plan_.reparse.bitmap);
            });
    }

    // ---- records

    /// Node i's record (and, for IndexStorage::extension, its extension
    /// record, kept for record() to return next). Throws Error(unsupported)
    /// naming the path when the record cannot hold the attributes.
    std::vector<std::byte> user_record(std::uint32_t i) {
        try {
            return plan_.nodes[i].extension_record ? directory_with_extension(i) : single_record(i);
        } catch (const Error& e) {
            if (e.code() != ErrorCode::unsupported) throw;
            throw Error(ErrorCode::unsupported,
                        fmt::format("{}: its MFT record {} cannot hold its attributes ({})",
                                    tree_.image_path(i), plan_.nodes[i].record, e.what()));
        }
    }

    /// A directory kept as IndexStorage::extension: the base record holds
    /// $STANDARD_INFORMATION, the $ATTRIBUTE_LIST and $INDEX_ROOT, the
    /// extension record (record + 1) the $FILE_NAMEs, $INDEX_ALLOCATION and
    /// $BITMAP; the list names each attribute's record and instance id.
    std::vector<std::byte> directory_with_extension(std::uint32_t i) {
        const NodePlan& p = plan_.nodes[i];
        const FileReference base_ref = ref_of(i);
        const FileReference ext_ref{p.extension_record, kNewSequence};
        std::vector<AttributeListEntry> list;
        MftRecordBuilder ext(rs_, static_cast<std::uint32_t>(p.extension_record), kNewSequence,
                             record_flag::in_use);
        ext.set_base_record(base_ref.packed());
        const std::vector<std::vector<std::byte>> names = file_name_attributes(i);
        std::vector<std::vector<std::byte>> index =
            index_attributes(i);  // $INDEX_ROOT, $INDEX_ALLOCATION, $BITMAP
        for (const auto& a : names) {
            list.push_back(
                {static_cast<std::uint32_t>(AttrType::file_name), 0, u"", 0, ext_ref, ext.next_instance()});
            ext.add(a);
        }
        for (std::size_t k = 1; k < index.size(); ++k) {
            const AttrType t = k == 1 ? AttrType::index_allocation : AttrType::bitmap;
            list.push_back({static_cast<std::uint32_t>(t), 0, u"$I30", 0, ext_ref, ext.next_instance()});
            ext.add(std::move(index[k]));
        }
        MftRecordBuilder b(rs_, static_cast<std::uint32_t>(p.record), kNewSequence,
                           record_flag::in_use | record_flag::directory);
        b.set_link_count(static_cast<std::uint16_t>(names.size()));
        // Instances in the base: $STANDARD_INFORMATION 0, $ATTRIBUTE_LIST 1, $INDEX_ROOT 2.
        list.push_back({static_cast<std::uint32_t>(AttrType::standard_information), 0, u"", 0, base_ref, 0});
        list.push_back({static_cast<std::uint32_t>(AttrType::index_root), 0, u"$I30", 0, base_ref, 2});
        std::stable_sort(
            list.begin(), list.end(),
            [](const AttributeListEntry& a, const AttributeListEntry& b) { return a.type < b.type; });
        b.add(standard_information(i));
        b.add(build_resident_attribute(AttrType::attribute_list, u"", encode_attribute_list(list)));
        b.add(std::move(index[0]));
        pending_extension_ = ext.finish();
        pending_extension_record_ = p.extension_record;
        return b.finish();
    }

    std::vector<std::byte> single_record(std::uint32_t i) {
        const source::TreeNode& n = tree_.nodes[i];
        const NodePlan& p = plan_.nodes[i];
        MftRecordBuilder b(rs_, static_cast<std::uint32_t>(p.record), kNewSequence,
                           record_flag::in_use | (n.is_dir ? record_flag::directory : 0));
        const std::vector<std::vector<std::byte>> names = file_name_attributes(i);
        b.set_link_count(static_cast<std::uint16_t>(names.size()));  // every $FILE_NAME, DOS names too
        b.add(standard_information(i));
        for (const auto& a : names) b.add(a);
        if (n.is_dir) {
            for (auto& a : index_attributes(i)) b.add(std::move(a));
        } else if (!n.symlink_target.empty()) {
            b.add(build_resident_attribute(AttrType::reparse_point, u"",
                                           symlink_reparse_data(n.symlink_target)));
        } else if (p.resident) {
            b.add(build_resident_attribute(AttrType::data, u"", reader_.open(i).read_all()));
            core::advance(opt_.progress, n.size);
        } else if (p.sparse) {
            const std::uint64_t clusters = sparse_allocated_clusters(n.size, cb_);
            b.add(build_nonresident_attribute(
                AttrType::data, u"", sparse_runlist(p.data_vcns, p.extents, clusters),
                {clusters * cb_, n.size, n.size}, clusters - 1, clusters_of(p.extents) * cb_));
        } else {
            b.add(nonresident(AttrType::data, u"", p.extents, cb_, n.size));
        }
        return b.finish();
    }

    /// A record format wrote, rebuilt with some attributes replaced.
    template <typename Replace>
    std::vector<std::byte> rebuilt_system_record(std::uint64_t number, Replace replace) {
        std::vector<std::byte> raw(format_records_.begin() + static_cast<std::ptrdiff_t>(number * rs_),
                                   format_records_.begin() + static_cast<std::ptrdiff_t>((number + 1) * rs_));
        const MftRecord rec = parse_mft_record(raw, number);
        MftRecordBuilder b(rs_, static_cast<std::uint32_t>(number), rec.header.sequence, rec.header.flags);
        b.set_link_count(rec.header.link_count);
        for (const Attribute& a : rec.attributes) {
            std::vector<std::vector<std::byte>> with = replace(a);
            for (auto& x : with) b.add(std::move(x));
        }
        return b.finish();
    }

    std::vector<std::byte> mft_record() {
        const std::uint64_t mft_size = plan_.mft_records * rs_;
        return rebuilt_system_record(0, [&](const Attribute& a) -> std::vector<std::vector<std::byte>> {
            if (a.kind() == AttrType::file_name)
                return {build_resident_attribute(
                    a.kind(), a.name, resized_file_name(a.value, clusters_of(plan_.mft) * cb_, mft_size),
                    true)};
            if (a.kind() == AttrType::data && a.name.empty())
                return {nonresident(AttrType::data, u"", plan_.mft, cb_, mft_size)};
            if (a.kind() == AttrType::bitmap && a.name.empty())
                return {nonresident(AttrType::bitmap, u"", plan_.mft_bitmap, cb_, plan_.mft_bitmap_bytes)};
            return {rebuild(a)};
        });
    }

    std::vector<std::byte> root_record() {
        bool done = false;
        return rebuilt_system_record(
            kRootRecord, [&](const Attribute& a) -> std::vector<std::vector<std::byte>> {
                const bool index = a.name == u"$I30" &&
                                   (a.kind() == AttrType::index_root ||
                                    a.kind() == AttrType::index_allocation || a.kind() == AttrType::bitmap);
                if (!index) return {rebuild(a)};
                if (done) return {};
                done = true;
                return index_attributes(0);
            });
    }

    std::vector<std::byte> record(std::uint64_t r) {
        if (r == 0) return mft_record();
        if (r == kRootRecord) return root_record();
        if (r == kReparseRecord && !plan_.reparse.nodes.empty()) return reparse_record();
        if (r < format_records_.size() / rs_)
            return {format_records_.begin() + static_cast<std::ptrdiff_t>(r * rs_),
                    format_records_.begin() + static_cast<std::ptrdiff_t>((r + 1) * rs_)};
        if (by_record_[r] != UINT32_MAX) return user_record(by_record_[r]);
        if (r == pending_extension_record_ && !pending_extension_.empty())
            return std::move(pending_extension_);
        // Free and formatted, as format_volume writes free records.
        return MftRecordBuilder(rs_, static_cast<std::uint32_t>(r), static_cast<std::uint16_t>(r), 0)
            .finish();
    }

    void write_records(io::StreamWriter& w) {
        std::vector<std::byte> mirror;
        for (std::uint64_t r = 0; r < plan_.mft_records; ++r) {
            const std::vector<std::byte> rec = record(r);
            for_each_piece(plan_.mft, cb_, r * rs_, rs_,
                           [&](std::uint64_t at, std::uint64_t from, std::uint64_t n) {
                               w.seek(at);
                               w.append(std::span<const std::byte>(rec).subspan(from, n));
                           });
            if (r < L_.mftmirr_records) mirror.insert(mirror.end(), rec.begin(), rec.end());
        }
        dev_.write_at(L_.mftmirr.lcn * cb_, mirror);
    }

    void write_data(io::StreamWriter& w) {
        source::visit_depth_first(tree_, [&](std::uint32_t i) {
            const source::TreeNode& n = tree_.nodes[i];
            const NodePlan& p = plan_.nodes[i];
            if (n.is_dir || p.resident || p.link_of != kNoLink) return;  // a hard link's data is written once
            const std::uint64_t allocated = clusters_of(p.extents) * cb_;
            if (p.sparse) {
                copy_sparse(reader_.open(i), p.data_vcns, p.extents, cb_, w, opt_.progress);
            } else if (p.extents.size() == 1) {
                w.seek(p.extents[0].lcn * cb_);
                source::copy_file(reader_.open(i), allocated, w, opt_.progress);
            } else {
                copy_fragmented(reader_.open(i), p.extents, cb_, w, opt_.progress);
            }
        });
    }

    // ---- bitmaps

    void write_mft_bitmap() {
        std::vector<std::byte> bits(clusters_of(plan_.mft_bitmap) * cb_);
        auto set = [&](std::uint64_t r) { bits[r / 8] |= std::byte(1u << (r % 8)); };
        for (std::uint64_t r = 0; r < 16; ++r) set(r);  // system files and reserved (format)
        for (std::uint64_t r = 24; r < kInitialMftRecords; ++r) set(r);
        for (std::uint32_t i = 1; i < plan_.nodes.size(); ++i) {
            set(plan_.nodes[i].record);
            if (plan_.nodes[i].extension_record) set(plan_.nodes[i].extension_record);
        }
        write_stream(dev_, plan_.mft_bitmap, cb_, 0, bits);
    }

    /// Sets the bits of every new extent in $Bitmap (read, OR, write back,
    /// a window of merged extents at a time).
    void write_bitmap() {
        std::vector<Extent> v = new_extents();
        std::sort(v.begin(), v.end(), [](const Extent& a, const Extent& b) { return a.lcn < b.lcn; });
        std::vector<std::byte> window;
        std::size_t i = 0;
        while (i < v.size()) {
            const std::uint64_t first_byte = v[i].lcn / 8;
            std::uint64_t last_byte = (v[i].lcn + v[i].clusters - 1) / 8;
            std::size_t j = i + 1;
            while (j < v.size() && (v[j].lcn + v[j].clusters - 1) / 8 < first_byte + (1u << 20)) {
                last_byte = std::max(last_byte, (v[j].lcn + v[j].clusters - 1) / 8);
                ++j;
            }
            window.assign(last_byte - first_byte + 1, std::byte{0});
            for_each_piece(L_.bitmap, cb_, first_byte, window.size(),
                           [&](std::uint64_t at, std::uint64_t from, std::uint64_t n) {
                               dev_.read_at(at, std::span(window).subspan(from, n));
                           });
            for (std::size_t k = i; k < j; ++k) {
                for (std::uint64_t c = v[k].lcn; c < v[k].lcn + v[k].clusters; ++c)
                    window[c / 8 - first_byte] |= std::byte(1u << (c % 8));
            }
            write_stream(dev_, L_.bitmap, cb_, first_byte, window);
            i = j;
        }
    }

    io::BlockDevice& dev_;
    const Layout& L_;
    const source::SourceTree& tree_;
    const PopulatePlan& plan_;
    const source::PopulateWriteOptions& opt_;
    const std::uint32_t cb_;
    const std::uint64_t rs_;
    source::SourceReader reader_;           ///< the tree's files, opened race-free
    std::vector<std::uint32_t> by_record_;  ///< node of each user record
    std::vector<std::byte> format_records_;
    std::vector<IndexEntry> system_entries_;    ///< the root's, in kRootSystemNames order
    std::vector<std::byte> pending_extension_;  ///< the extension record user_record built last
    std::uint64_t pending_extension_record_ = 0;
};

}  // namespace

void write_population(io::BlockDevice& volume, const Layout& layout, const source::SourceTree& tree,
                      const PopulatePlan& plan, const source::PopulateWriteOptions& options) {
    Writer(volume, layout, tree, plan, options).run();
}

}  // namespace fsimg::ntfs
