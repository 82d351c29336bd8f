// Adding to an NTFS volume: new directories (Editor::make_directory), the
// MFT record allocation and index insertion they take. See
// include/fsimg/ntfs/edit.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/names.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

/// The first record a new file may take: 0..15 are the system files and
/// 16..23 are kept for $MFT's own extension records [FLATCAP files/mft;
/// NTFS-3G mft.c keeps them too].
constexpr std::uint64_t kFirstFreeRecord = 24;
constexpr std::size_t kSiSecurityId = 0x34;  // in a 72-byte $STANDARD_INFORMATION value

}  // namespace

std::pair<std::uint64_t, std::uint16_t> Editor::free_record() const {
    const MftRecord r0 = vol_.read_record(0);
    const Attribute* bm = r0.find(AttrType::bitmap);
    if (bm == nullptr) throw Error(ErrorCode::corrupt, "$MFT has no $BITMAP");
    const std::uint64_t records = vol_.record_count();
    std::vector<std::byte> bits(
        static_cast<std::size_t>(std::min<std::uint64_t>(bm->size(), (records + 7) / 8)));
    vol_.read_stream(*bm, 0, bits);
    const std::uint32_t rs = vol_.geometry().mft_record_bytes;
    std::vector<std::byte> raw(rs);
    for (std::uint64_t n = kFirstFreeRecord; n < records && n / 8 < bits.size(); ++n) {
        if ((std::to_integer<unsigned>(bits[n / 8]) >> (n % 8)) & 1u) continue;
        vol_.read_stream(vol_.mft_data(), n * rs, raw);
        std::uint16_t sequence = 1;
        try {
            const MftRecord r = parse_mft_record(raw, n);
            if (r.in_use()) continue;  // in use though its bit is clear: fsck's to settle, not ours to take
            if (r.header.sequence != 0) sequence = r.header.sequence;
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;  // never formatted, or damaged: written whole anew
        }
        return {n, sequence};
    }
    throw Error(ErrorCode::unsupported,
                fmt::format("$MFT has no free record among its {} (fsimg does not grow $MFT yet)", records));
}

std::vector<Editor::IndexKey> Editor::index_keys(std::uint64_t dir) const {
    std::vector<IndexKey> keys;
    for_each_index_entry(vol_, read_record(dir).parsed, [&](const IndexEntry& e, const IndexEntryLocation&) {
        if (e.file_name) keys.push_back({FileReference::unpack(e.reference), e.key, e.file_name->name});
        return true;
    });
    return keys;
}

void Editor::mark_record(std::uint64_t record) {
    const MftRecord r0 = vol_.read_record(0);
    const Attribute* bm = r0.find(AttrType::bitmap);
    if (bm == nullptr) throw Error(ErrorCode::corrupt, "$MFT has no $BITMAP");
    const auto bit = static_cast<std::uint8_t>(1u << (record % 8));
    if (bm->non_resident) {
        const auto off = vol_.device_offset(*bm, record / 8);
        if (!off)
            throw Error(ErrorCode::corrupt, fmt::format("$MFT's $BITMAP does not map record {}", record));
        (void)check::apply_bitmap_fixes(dev_, {check::BitmapFix{*off, bit, 0}});
        return;
    }
    Record z = read_record(0);
    const Attribute* b = z.parsed.find(AttrType::bitmap);
    if (record / 8 >= b->value.size())
        throw Error(ErrorCode::corrupt, fmt::format("$MFT's $BITMAP does not hold record {}", record));
    z.bytes[b->offset + b->value_offset + record / 8] |= std::byte{bit};
    write_record(0, std::move(z.bytes));
}

void Editor::stamp_directory(std::uint64_t dir) {
    Record p = read_record(dir);
    const Attribute* si = p.parsed.find(AttrType::standard_information);
    if (si == nullptr || si->non_resident || si->value.size() < 0x18) return;
    const std::int64_t t = options_.clamp ? std::min(options_.now, *options_.clamp) : options_.now;
    const std::uint64_t ft = filetime_from_unix(t);
    core::store_le64(p.bytes, si->offset + si->value_offset + 0x08, ft);  // modification
    core::store_le64(p.bytes, si->offset + si->value_offset + 0x10, ft);  // MFT change
    write_record(dir, std::move(p.bytes));
}

FileEntry Editor::make_directory(std::uint64_t dir, std::string_view name, std::int64_t mtime) {
    if (auto why = utf8_name_problem(name))
        throw Error(ErrorCode::usage, fmt::format("\"{}\": {}", name, *why));
    if (name == "." || name == "..") throw Error(ErrorCode::usage, fmt::format("\"{}\" is not a name", name));
    if (find(dir, name)) throw Error(ErrorCode::usage, fmt::format("\"{}\" exists", name));
    const Record parent = read_record(dir);
    if (!parent.parsed.is_directory())
        throw Error(ErrorCode::corrupt, fmt::format("MFT record {} is not a directory", dir));
    // 1. Planned: the names, the record, the parent's new index.
    std::vector<IndexKey> keys = index_keys(dir);
    const std::u16string name16 = core::utf8_to_utf16(name);
    std::vector<std::u16string_view> reserved;
    for (const IndexKey& k : keys) reserved.push_back(k.name);
    const NameRequest request[] = {{name16, false}};
    const NamePlan names = plan_directory_names(request, reserved).front();
    const auto [number, sequence] = free_record();
    const FileReference self{number, sequence};
    const FileReference up{dir, parent.parsed.header.sequence};
    const std::int64_t when = options_.clamp ? std::min(mtime, *options_.clamp) : mtime;
    const std::uint64_t ft = filetime_from_unix(when);
    const auto file_name = [&](std::u16string_view n, Namespace ns) {
        FileName fn;
        fn.parent = up;
        fn.creation_time = fn.modification_time = fn.mft_change_time = fn.access_time = ft;
        fn.file_attributes = file_attr::directory;
        fn.name_space = ns;
        fn.name = std::u16string(n);
        return encode_file_name(fn);
    };
    std::vector<std::vector<std::byte>> values{file_name(name16, names.name_space)};
    keys.push_back({self, values.back(), name16});
    if (!names.dos.empty()) {
        values.push_back(file_name(names.dos, Namespace::dos));
        keys.push_back({self, values.back(), names.dos});
    }
    std::sort(values.begin(), values.end());  // resident $FILE_NAMEs in value order [NTFS-3G ntfs_attr_find]
    StandardInformation si;
    si.creation_time = si.modification_time = si.mft_change_time = si.access_time = ft;
    std::optional<std::vector<std::byte>> descriptor;
    if (const Attribute* psi = parent.parsed.find(AttrType::standard_information);
        psi != nullptr && !psi->non_resident && psi->value.size() >= kSiSecurityId + 4 &&
        core::load_le32(psi->value, kSiSecurityId) != 0) {
        si.security_id = core::load_le32(psi->value, kSiSecurityId);
    } else if (const Attribute* sd = parent.parsed.find(AttrType::security_descriptor);
               sd != nullptr && !sd->non_resident) {
        descriptor = build_resident_attribute(AttrType::security_descriptor, u"", sd->value);
    }
    const std::uint32_t rs = vol_.geometry().mft_record_bytes;
    MftRecordBuilder b(rs, static_cast<std::uint32_t>(number), sequence,
                       record_flag::in_use | record_flag::directory);
    b.set_link_count(static_cast<std::uint16_t>(values.size()));
    const auto encoded_si = encode_standard_information(si);
    b.add(build_resident_attribute(AttrType::standard_information, u"", encoded_si));
    for (const auto& v : values) b.add(build_resident_attribute(AttrType::file_name, u"", v, true));
    if (descriptor) b.add(std::move(*descriptor));
    const std::uint32_t block_bytes = vol_.geometry().index_block_bytes;
    b.add(build_resident_attribute(
        AttrType::index_root, u"$I30",
        build_index_root(0x30, collation::file_name, block_bytes, vol_.geometry().cluster_bytes,
                         build_end_index_entry(), false)));
    std::vector<std::byte> record = b.finish();
    if (verify_and_remove_fixups(record))
        throw Error(ErrorCode::corrupt, "a new MFT record fails its fixups");
    const IndexRewrite index = plan_index(dir, std::move(keys));
    // 2. Written: the record, its bit, the parent's index, the parent's times.
    begin();
    write_record(number, std::move(record));
    mark_record(number);
    apply_index(index);
    stamp_directory(dir);
    return entry_of(number, std::string(name));
}

}  // namespace fsimg::ntfs
