#include "fsimg/ntfs/deleted.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fsimg/core/error.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"

namespace fsimg::ntfs {

namespace {

/// $Bitmap is MFT record 6 [FLATCAP files/bitmap].

/// The deleted file `r` names, read from one raw record; nullopt when it names none.
std::optional<DeletedRecord> from_record(std::span<std::byte> raw, std::uint64_t number) {
    if (raw.size() < 4 || std::memcmp(raw.data(), "FILE", 4) != 0) return std::nullopt;
    MftRecord rec;
    try {
        rec = parse_mft_record(raw, number);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
    if (rec.in_use() || rec.header.base_record != 0) return std::nullopt;
    DeletedRecord d;
    d.number = number;
    d.is_directory = rec.is_directory();
    std::optional<FileName> pick;  // the first Win32 or POSIX name, else the DOS one
    for (const Attribute& a : rec.attributes) {
        if (a.kind() != AttrType::file_name || a.non_resident) continue;
        try {
            FileName fn = decode_file_name(a.value);
            if (!pick || (pick->name_space == Namespace::dos && fn.name_space != Namespace::dos))
                pick = std::move(fn);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    if (!pick || pick->name.empty()) return std::nullopt;
    d.parent = pick->parent;
    d.name = std::move(pick->name);
    d.modified = pick->modification_time;
    if (const Attribute* si = rec.find(AttrType::standard_information); si && !si->non_resident) {
        try {
            const StandardInformation s = decode_standard_information(si->value);
            d.modified = s.modification_time;
            d.file_attributes = s.file_attributes;
        } catch (const Error& e) {
            if (e.code() == ErrorCode::io) throw;
        }
    }
    if (const Attribute* data = rec.find(AttrType::data); data && !d.is_directory) {
        d.size = data->size();
        if (data->non_resident)
            for (const MappedRun& run : data->runs)
                if (run.lcn) {
                    d.first_lcn = static_cast<std::uint64_t>(*run.lcn);
                    break;
                }
    }
    return d;
}

}  // namespace

std::vector<DeletedRecord> deleted_records(const Volume& v) {
    std::vector<DeletedRecord> out;
    (void)scan_records(v, kFirstNonSystemRecord, [&](std::uint64_t number, std::span<std::byte> raw) {
        if (auto d = from_record(raw, number)) out.push_back(std::move(*d));
    });
    return out;
}

fat::DeletedState deleted_state(const Volume& v, const DeletedRecord& r) {
    if (r.is_directory || r.size == 0) return fat::DeletedState::empty;
    try {
        const MftRecord rec = v.read_record(r.number);
        if (rec.in_use()) return fat::DeletedState::reused;
        const Attribute* data = rec.find(AttrType::data);
        if (data == nullptr) return fat::DeletedState::reused;
        if (!data->non_resident) return fat::DeletedState::recoverable;
        const auto bitmap = load_attribute(v, v.read_record(kBitmapRecord), AttrType::data);
        if (!bitmap || !bitmap->non_resident) return fat::DeletedState::reused;
        const std::uint64_t clusters = v.geometry().cluster_count;
        std::vector<std::byte> bytes;
        for (const MappedRun& run : data->runs) {
            if (!run.lcn) continue;  // sparse
            const std::uint64_t lcn = static_cast<std::uint64_t>(*run.lcn);
            if (lcn >= clusters || run.length > clusters - lcn) return fat::DeletedState::reused;
            const std::uint64_t from = lcn / 8, to = (lcn + run.length - 1) / 8;
            if (to >= bitmap->size()) return fat::DeletedState::reused;
            // In pieces of at most 64 KiB of $Bitmap (512 Ki clusters).
            for (std::uint64_t at = from; at <= to;) {
                const std::uint64_t n = std::min<std::uint64_t>(to - at + 1, 65536);
                bytes.resize(static_cast<std::size_t>(n));
                v.read_stream(*bitmap, at, bytes);
                for (std::uint64_t i = 0; i < n; ++i) {
                    const auto b = std::to_integer<unsigned>(bytes[static_cast<std::size_t>(i)]);
                    for (unsigned k = 0; k < 8; ++k) {
                        const std::uint64_t c = (at + i) * 8 + k;
                        if (c >= lcn && c < lcn + run.length && ((b >> k) & 1))
                            return fat::DeletedState::reused;
                    }
                }
                at += n;
            }
        }
        return fat::DeletedState::recoverable;
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return fat::DeletedState::reused;
    }
}

void read_deleted(const Volume& v, const DeletedRecord& r,
                  const std::function<void(std::span<const std::byte>)>& sink) {
    if (!fat::readable(deleted_state(v, r), fmt::format("MFT record {}", r.number))) return;
    read_data(v, v.read_record(r.number), u"", sink);
}

}  // namespace fsimg::ntfs
