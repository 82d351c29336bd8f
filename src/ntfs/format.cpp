// Writes an empty NTFS volume: see include/fsimg/ntfs/format.hpp.
#include "fsimg/ntfs/format.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

// MFT records of the system files [FLATCAP files/index] (formats.md §3.2).
constexpr std::uint32_t kMft = 0, kMftMirr = 1, kLogFile = 2, kVolume = 3, kAttrDef = 4, kRoot = 5,
                        kBitmap = 6, kBoot = 7, kBadClus = 8, kSecure = 9, kUpCase = 10, kExtend = 11,
                        kQuota = 24, kObjId = 25, kReparse = 26;
constexpr std::uint32_t kFirstFreeReserved = 16, kFirstExtendChild = 24;

constexpr std::uint32_t kSysAttrs = file_attr::hidden | file_attr::system;

std::uint16_t sequence_of(std::uint32_t record) {
    // Record n carries sequence number n ($MFT 1), the $Extend children 1
    // (formats.md §3.2 [EXP]).
    if (record >= kFirstExtendChild) return 1;
    return static_cast<std::uint16_t>(std::max<std::uint32_t>(record, 1));
}
FileReference ref_of(std::uint32_t record) { return {record, sequence_of(record)}; }

std::span<const std::byte> as_bytes(const std::u16string& s) {
    return std::as_bytes(std::span<const char16_t>(s.data(), s.size()));
}

/// One system file's identity as its $FILE_NAME and the directory index see it.
struct Named {
    std::uint32_t record;
    std::u16string name;
    std::uint32_t parent;
    std::uint64_t allocated, size;
    std::uint32_t flags;
};

class Builder {
public:
    Builder(const Layout& L, const FormatOptions& o) : L_(L), o_(o), secure_(build_secure_streams()) {}

    std::vector<Named> names() const {
        const std::uint64_t C = L_.cluster_bytes;
        const auto dir = file_attr::directory, view = file_attr::view_index;
        return {
            {kMft, u"$MFT", kRoot, L_.mft.clusters * C, L_.mft_bytes(), kSysAttrs},
            {kMftMirr, u"$MFTMirr", kRoot, L_.mftmirr.clusters * C, L_.mftmirr_bytes(), kSysAttrs},
            {kLogFile, u"$LogFile", kRoot, L_.logfile.clusters * C, L_.logfile_bytes, kSysAttrs},
            {kVolume, u"$Volume", kRoot, 0, 0, kSysAttrs},
            {kAttrDef, u"$AttrDef", kRoot, clusters_of(L_.attrdef) * C, kAttrDefBytes, kSysAttrs},
            {kRoot, u".", kRoot, 0, 0, kSysAttrs | dir},
            {kBitmap, u"$Bitmap", kRoot, clusters_of(L_.bitmap) * C, L_.bitmap_bytes, kSysAttrs},
            {kBoot, u"$Boot", kRoot, L_.boot.clusters * C, kBootBytes, kSysAttrs},
            {kBadClus, u"$BadClus", kRoot, 0, 0, kSysAttrs},
            {kSecure, u"$Secure", kRoot, 0, 0, kSysAttrs | view},
            {kUpCase, u"$UpCase", kRoot, clusters_of(L_.upcase) * C, kUpcaseBytes, kSysAttrs},
            {kExtend, u"$Extend", kRoot, 0, 0, kSysAttrs | dir},
            {kQuota, u"$Quota", kExtend, 0, 0, kSysAttrs | file_attr::archive | view},
            {kObjId, u"$ObjId", kExtend, 0, 0, kSysAttrs | file_attr::archive | view},
            {kReparse, u"$Reparse", kExtend, 0, 0, kSysAttrs | file_attr::archive | view},
        };
    }

    std::vector<std::byte> file_name_value(const Named& n) const {
        FileName fn;
        fn.parent = ref_of(n.parent);
        fn.creation_time = fn.modification_time = fn.mft_change_time = fn.access_time = o_.creation_filetime;
        fn.allocated_size = n.allocated;
        fn.data_size = n.size;
        fn.file_attributes = n.flags;
        fn.name = n.name;
        return encode_file_name(fn);
    }

    std::vector<std::byte> si(std::uint32_t security_id) const {
        StandardInformation s;
        s.creation_time = s.modification_time = s.mft_change_time = s.access_time = o_.creation_filetime;
        s.file_attributes = kSysAttrs;
        s.security_id = security_id;
        const auto v = encode_standard_information(s);
        return build_resident_attribute(AttrType::standard_information, u"", v);
    }

    /// $INDEX_ROOT entries of a directory, sorted by FILENAME collation.
    std::vector<std::byte> directory_entries(std::uint32_t parent) const {
        auto all = names();
        std::vector<Named> kids;
        for (const Named& n : all)
            if (n.parent == parent) kids.push_back(n);
        std::sort(kids.begin(), kids.end(),
                  [](const Named& a, const Named& b) { return collate_file_names(a.name, b.name) < 0; });
        std::vector<std::byte> out;
        for (const Named& n : kids) {
            const auto e = build_file_name_index_entry(ref_of(n.record), file_name_value(n));
            out.insert(out.end(), e.begin(), e.end());
        }
        const auto end = build_end_index_entry();
        out.insert(out.end(), end.begin(), end.end());
        return out;
    }

    std::vector<std::byte> root_index_block() const {
        return build_index_block(0, L_.index_block_bytes, directory_entries(kRoot));
    }

    std::vector<std::byte> record(std::uint32_t n) const {
        const std::uint64_t C = L_.cluster_bytes;
        const std::uint32_t rs = L_.mft_record_bytes;
        if ((n >= kFirstFreeReserved && n < kFirstExtendChild) || n >= kInitialMftRecords) {  // free
            return MftRecordBuilder(rs, n, static_cast<std::uint16_t>(n), 0).finish();
        }
        if (n > kExtend && n < kFirstFreeReserved) {  // reserved, in use, no name
            MftRecordBuilder b(rs, n, sequence_of(n), record_flag::in_use);
            b.add(si(kSecurityIdSystemRw));
            b.add(build_resident_attribute(AttrType::data, u"", {}));
            return b.finish();
        }
        const Named me = find(n);
        std::uint16_t flags = record_flag::in_use;
        if (me.flags & file_attr::directory) flags |= record_flag::directory;
        if (n == kSecure) flags |= record_flag::view_index;
        if (n >= kFirstExtendChild) flags |= record_flag::in_extend | record_flag::view_index;
        MftRecordBuilder b(rs, n, sequence_of(n), flags);
        b.set_link_count(1);
        const bool rw = n == kVolume || n == kSecure || n >= kExtend;
        b.add(si(n == kRoot ? kSecurityIdRoot : rw ? kSecurityIdSystemRw : kSecurityIdSystem));
        b.add(build_resident_attribute(AttrType::file_name, u"", file_name_value(me), true));
        auto nonres = [&](AttrType t, std::u16string_view name, const std::vector<Extent>& ext,
                          std::uint64_t size, std::uint64_t init) {
            const std::uint64_t clusters = clusters_of(ext);
            b.add(
                build_nonresident_attribute(t, name, runs_of(ext), {clusters * C, size, init}, clusters - 1));
        };
        switch (n) {
            case kMft:
                nonres(AttrType::data, u"", {L_.mft}, L_.mft_bytes(), L_.mft_bytes());
                nonres(AttrType::bitmap, u"", {L_.mft_bitmap}, L_.mft_bitmap_bytes, L_.mft_bitmap_bytes);
                break;
            case kMftMirr:
                nonres(AttrType::data, u"", {L_.mftmirr}, L_.mftmirr_bytes(), L_.mftmirr_bytes());
                break;
            case kLogFile:
                nonres(AttrType::data, u"", {L_.logfile}, L_.logfile_bytes, L_.logfile_bytes);
                break;
            case kVolume: {
                b.add(build_resident_attribute(AttrType::volume_name, u"", as_bytes(o_.label)));
                std::vector<std::byte> info(12);
                info[8] = std::byte{3};  // NTFS 3.1, flags 0 (clean) (formats.md §3.9)
                info[9] = std::byte{1};
                b.add(build_resident_attribute(AttrType::volume_information, u"", info));
                b.add(build_resident_attribute(AttrType::data, u"", {}));
                break;
            }
            case kAttrDef:
                nonres(AttrType::data, u"", L_.attrdef, kAttrDefBytes, kAttrDefBytes);
                break;
            case kRoot: {
                const auto end = build_end_index_entry(0);
                b.add(build_resident_attribute(
                    AttrType::index_root, u"$I30",
                    build_index_root(0x30, collation::file_name, L_.index_block_bytes, L_.cluster_bytes, end,
                                     true)));
                nonres(AttrType::index_allocation, u"$I30", L_.root_index, L_.index_block_bytes,
                       L_.index_block_bytes);
                std::vector<std::byte> bm(8);
                bm[0] = std::byte{1};
                b.add(build_resident_attribute(AttrType::bitmap, u"$I30", bm));
                break;
            }
            case kBitmap:
                nonres(AttrType::data, u"", L_.bitmap, L_.bitmap_bytes, L_.bitmap_bytes);
                break;
            case kBoot:
                nonres(AttrType::data, u"", {L_.boot}, kBootBytes, kBootBytes);
                break;
            case kBadClus: {
                b.add(build_resident_attribute(AttrType::data, u"", {}));
                const std::vector<DataRun> sparse{{L_.cluster_count, std::nullopt}};
                const std::uint64_t bytes = L_.cluster_count * C;
                b.add(build_nonresident_attribute(AttrType::data, u"$Bad", sparse, {bytes, bytes, 0},
                                                  L_.cluster_count - 1));
                break;
            }
            case kSecure:
                nonres(AttrType::data, u"$SDS", L_.sds, secure_.sds.size(), secure_.sds.size());
                b.add(view_root(u"$SDH", collation::security_hash, secure_.sdh_entries));
                b.add(view_root(u"$SII", collation::ulong, secure_.sii_entries));
                break;
            case kUpCase: {
                nonres(AttrType::data, u"", L_.upcase, kUpcaseBytes, kUpcaseBytes);
                std::vector<std::byte> info(32);
                core::store_le32(info, 0, 32);
                core::store_le64(info, 8,
                                 upcase_info_crc64(upcase_table()));  // OS version fields 0, as mkntfs
                b.add(build_resident_attribute(AttrType::data, u"$Info", info));
                break;
            }
            case kExtend:
                b.add(build_resident_attribute(
                    AttrType::index_root, u"$I30",
                    build_index_root(0x30, collation::file_name, L_.index_block_bytes, L_.cluster_bytes,
                                     directory_entries(kExtend), false)));
                break;
            case kQuota:
                b.add(view_root(u"$O", collation::sid, quota_owner_entries()));
                b.add(view_root(u"$Q", collation::ulong, quota_entries()));
                break;
            case kObjId:
                b.add(view_root(u"$O", collation::ulongs, build_end_index_entry()));
                break;
            case kReparse:
                b.add(view_root(u"$R", collation::ulongs, build_end_index_entry()));
                break;
            default:
                break;
        }
        return b.finish();
    }

    const SecureStreams& secure() const { return secure_; }

private:
    Named find(std::uint32_t n) const {
        for (const Named& x : names())
            if (x.record == n) return x;
        throw Error(ErrorCode::unsupported, "no system file at MFT record " + std::to_string(n));
    }

    std::vector<std::byte> view_root(std::u16string_view name, std::uint32_t coll,
                                     const std::vector<std::byte>& entries) const {
        return build_resident_attribute(
            AttrType::index_root, name,
            build_index_root(0, coll, L_.index_block_bytes, L_.cluster_bytes, entries, false));
    }

    static std::vector<std::byte> admin_sid() {
        std::vector<std::byte> s(16);
        s[0] = std::byte{1};
        s[1] = std::byte{2};
        s[7] = std::byte{5};
        core::store_le32(s, 8, 32);
        core::store_le32(s, 12, 544);
        return s;
    }

    // $Quota:$Q: owner 1 (defaults) and owner 0x100 (Administrators) with
    // default limits (-1) [EXP mkntfs].
    std::vector<std::byte> quota_entries() const {
        std::vector<std::byte> out;
        for (std::uint32_t owner : {1u, 0x100u}) {
            std::vector<std::byte> key(4);
            core::store_le32(key, 0, owner);
            std::vector<std::byte> data(48);
            core::store_le32(data, 0, 2);  // version
            core::store_le32(data, 4, 1);  // QUOTA_FLAG_DEFAULT_LIMITS
            core::store_le64(data, 16, o_.creation_filetime);
            core::store_le64(data, 24, ~std::uint64_t(0));  // warning limit
            core::store_le64(data, 32, ~std::uint64_t(0));  // hard limit
            if (owner == 0x100) {
                const auto sid = admin_sid();
                data.insert(data.end(), sid.begin(), sid.end());
            }
            const auto e = build_view_index_entry(key, data);
            out.insert(out.end(), e.begin(), e.end());
        }
        const auto end = build_end_index_entry();
        out.insert(out.end(), end.begin(), end.end());
        return out;
    }
    // $Quota:$O: SID -> owner id.
    std::vector<std::byte> quota_owner_entries() const {
        std::vector<std::byte> data(4);
        core::store_le32(data, 0, 0x100);
        auto out = build_view_index_entry(admin_sid(), data);
        const auto end = build_end_index_entry();
        out.insert(out.end(), end.begin(), end.end());
        return out;
    }

    const Layout& L_;
    const FormatOptions& o_;
    SecureStreams secure_;
};

/// Writes `data` as the stream held by `extents`, from stream offset 0.
void write_stream(io::BlockDevice& dev, const Layout& L, const std::vector<Extent>& extents,
                  std::span<const std::byte> data, std::uint64_t stream_offset = 0) {
    std::uint64_t ext_start = 0;  // stream offset of the current extent
    for (const Extent& e : extents) {
        const std::uint64_t ext_bytes = e.clusters * L.cluster_bytes;
        const std::uint64_t lo = std::max(stream_offset, ext_start);
        const std::uint64_t hi = std::min(stream_offset + data.size(), ext_start + ext_bytes);
        if (lo < hi) {
            dev.write_at(e.lcn * L.cluster_bytes + (lo - ext_start),
                         data.subspan(lo - stream_offset, hi - lo));
        }
        ext_start += ext_bytes;
    }
    if (stream_offset + data.size() > ext_start)
        throw Error(ErrorCode::unsupported, "stream larger than its clusters");
}

/// $Bitmap from its set bytes only: the allocated extents and the bits past
/// the last cluster (formats.md §3.9).
void write_bitmap(io::BlockDevice& dev, const Layout& L) {
    std::map<std::uint64_t, std::uint8_t> bytes;
    auto set_range = [&](std::uint64_t first, std::uint64_t count) {
        std::uint64_t c = first;
        const std::uint64_t end = first + count;
        while (c < end) {
            if (c % 8 == 0 && end - c >= 8) {
                bytes[c / 8] = 0xFF;
                c += 8;
            } else {
                bytes[c / 8] |= static_cast<std::uint8_t>(1u << (c % 8));
                ++c;
            }
        }
    };
    for (const Extent& e : L.allocated()) set_range(e.lcn, e.clusters);
    set_range(L.cluster_count, L.bitmap_bytes * 8 - L.cluster_count);
    std::vector<std::byte> run;
    std::uint64_t run_start = 0;
    auto flush = [&] {
        if (!run.empty()) write_stream(dev, L, L.bitmap, run, run_start);
        run.clear();
    };
    for (const auto& [index, value] : bytes) {
        if (run.empty() || index != run_start + run.size() || run.size() >= (1u << 20)) {
            flush();
            run_start = index;
        }
        run.push_back(static_cast<std::byte>(value));
    }
    flush();
}

}  // namespace

void format_volume(io::BlockDevice& dev, const Layout& L, const FormatOptions& o) {
    if (o.label.size() > 128)
        throw Error(ErrorCode::usage, "an NTFS label has at most 128 UTF-16 units, this one has " +
                                          std::to_string(o.label.size()));
    if (dev.size() < L.volume_bytes())
        throw Error(ErrorCode::usage,
                    "the device (" + std::to_string(dev.size()) + " bytes) is smaller than the volume");
    const std::uint64_t C = L.cluster_bytes;

    // Boot sector, checked by decoding it back.
    BootSector bs;
    bs.bytes_per_sector = static_cast<std::uint16_t>(L.bytes_per_sector);
    bs.sectors_per_cluster_raw = encode_sectors_per_cluster(L.cluster_bytes, L.bytes_per_sector).value_or(0);
    bs.hidden_sectors = static_cast<std::uint32_t>(std::min<std::uint64_t>(L.hidden_sectors, 0xFFFFFFFFu));
    bs.total_sectors = L.total_sectors;
    bs.mft_lcn = L.mft.lcn;
    bs.mftmirr_lcn = L.mftmirr.lcn;
    bs.clusters_per_mft_record = encode_record_size(L.mft_record_bytes, L.cluster_bytes);
    bs.clusters_per_index_block = encode_record_size(L.index_block_bytes, L.cluster_bytes);
    bs.volume_serial_number = o.volume_serial_number;
    std::vector<std::byte> sector(L.bytes_per_sector);
    encode_boot_sector(bs, std::span(sector).first<kBootSectorSize>());
    {
        const BootSector back =
            decode_boot_sector(std::span<const std::byte>(sector).first<kBootSectorSize>());
        const auto cb = decode_cluster_bytes(back.sectors_per_cluster_raw, back.bytes_per_sector);
        if (back != bs || cb != L.cluster_bytes ||
            decode_record_size(back.clusters_per_mft_record, *cb) != L.mft_record_bytes ||
            decode_record_size(back.clusters_per_index_block, *cb) != L.index_block_bytes ||
            back.total_sectors / (*cb / back.bytes_per_sector) != L.cluster_count) {
            throw Error(ErrorCode::unsupported,
                        "internal error: the NTFS boot sector does not describe the layout");
        }
    }

    const Builder b(L, o);
    if (!o.device_is_zeroed) {
        for (const Extent& e : L.allocated()) dev.zero_range(e.lcn * C, e.clusters * C);
    }

    // $MFT and $MFTMirr.
    std::vector<std::byte> mft(L.mft_bytes());
    for (std::uint32_t n = 0; n < L.mft_records; ++n) {
        const auto r = b.record(n);
        std::copy(r.begin(), r.end(), mft.begin() + std::ptrdiff_t(n) * L.mft_record_bytes);
    }
    dev.write_at(L.mft.lcn * C, mft);
    dev.write_at(L.mftmirr.lcn * C, std::span(mft).first(L.mftmirr_bytes()));

    // $MFT $BITMAP: records 0..15 and 24..26 in use.
    std::vector<std::byte> mft_bitmap(L.mft_bitmap_bytes);
    mft_bitmap[0] = std::byte{0xFF};
    mft_bitmap[1] = std::byte{0xFF};
    mft_bitmap[3] = std::byte{0x07};
    dev.write_at(L.mft_bitmap.lcn * C, mft_bitmap);

    // $LogFile: all 0xFF, which ntfs-3g and the kernel read as an empty,
    // clean journal (what mkntfs writes; formats.md §3.2).
    {
        std::vector<std::byte> ff(std::min<std::uint64_t>(L.logfile_bytes, 1u << 20), std::byte{0xFF});
        for (std::uint64_t done = 0; done < L.logfile_bytes; done += ff.size())
            dev.write_at(L.logfile.lcn * C + done,
                         std::span(ff).first(std::min<std::uint64_t>(ff.size(), L.logfile_bytes - done)));
    }

    write_stream(dev, L, L.attrdef, build_attrdef());
    write_stream(dev, L, L.root_index, b.root_index_block());
    {
        std::vector<std::byte> up(kUpcaseBytes);
        const auto t = upcase_table();
        for (std::size_t i = 0; i < t.size(); ++i) core::store_le16(up, 2 * i, t[i]);
        write_stream(dev, L, L.upcase, up);
    }
    write_stream(dev, L, L.sds, b.secure().sds);
    write_bitmap(dev, L);

    // Boot sector last: a crash before this leaves no NTFS signature.
    dev.write_at(0, sector);
    dev.write_at((L.device_sectors - 1) * L.bytes_per_sector, sector);
}

}  // namespace fsimg::ntfs
