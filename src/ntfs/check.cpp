// NTFS fsck driver: runs the passes in order; helpers shared by the passes.
#include "fsimg/ntfs/check.hpp"

#include <algorithm>

#include "check_internal.hpp"
#include "fsimg/core/error.hpp"

namespace fsimg::ntfs {

namespace detail {

void BootOverlay::read_at(std::uint64_t offset, std::span<std::byte> out) const {
    d_.read_at(offset, out);
    if (offset >= kBootSectorSize) return;
    const std::size_t n = std::min<std::size_t>(out.size(), kBootSectorSize - offset);
    std::copy_n(boot_.begin() + static_cast<std::ptrdiff_t>(offset), n, out.begin());
}

void BootOverlay::write_at(std::uint64_t, std::span<const std::byte>) {
    throw Error(ErrorCode::usage, "the checker's view of the image is read-only");
}

void report(Context& c, std::string_view code, check::Location where, std::string message) {
    if (++c.per_code[code] <= kMaxPerCode) c.out.add(code, std::move(where), std::move(message));
}

void report_suppressed(Context& c) {
    for (const auto& [code, n] : c.per_code)
        if (n > kMaxPerCode)
            c.out.add(code, check::Location{},
                      fmt::format("{} more findings of this code are not listed one by one", n - kMaxPerCode),
                      n - kMaxPerCode);
}

std::string record_name(std::uint64_t n) {
    static constexpr std::string_view kNames[] = {"$MFT",     "$MFTMirr", "$LogFile", "$Volume",
                                                  "$AttrDef", ".",        "$Bitmap",  "$Boot",
                                                  "$BadClus", "$Secure",  "$UpCase",  "$Extend"};
    if (n < std::size(kNames)) return fmt::format("MFT record {} ({})", n, kNames[n]);
    return fmt::format("MFT record {}", n);
}

check::Location at_record(const Context& c, std::uint64_t n, std::string detail) {
    check::Location l;
    if (c.vol) {
        const auto at = c.vol->device_offset(c.vol->mft_data(), n * c.g.mft_record_bytes);
        if (at) {
            l.byte_offset = *at;
            l.sector = *at / c.g.bytes_per_sector;
        }
    }
    l.object = record_name(n);
    if (!detail.empty()) l.object += " " + detail;
    return l;
}

std::string first_list(const std::vector<std::uint64_t>& v, std::uint64_t total) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < kFirstLocations; ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    if (total > std::min<std::uint64_t>(v.size(), kFirstLocations)) s += ", ...";
    return s;
}

bool read_raw_record(const Context& c, std::uint64_t n, std::span<std::byte> out) {
    try {
        c.vol->read_stream(c.vol->mft_data(), n * c.g.mft_record_bytes, out);
        return true;
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return false;
    }
}

std::optional<MftRecord> load_record(const Context& c, std::uint64_t n) {
    if (n >= c.records) return std::nullopt;
    std::vector<std::byte> raw(c.g.mft_record_bytes);
    if (!read_raw_record(c, n, raw)) return std::nullopt;
    try {
        return parse_mft_record(raw, n, c.vol->device_offset(c.vol->mft_data(), n * raw.size()).value_or(0));
    } catch (const Error& e) {
        if (e.code() == ErrorCode::io) throw;
        return std::nullopt;
    }
}

std::uint32_t name_key_hash(const FileName& fn) {
    std::uint32_t h = 2166136261u;
    auto mix = [&h](std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) {
            h ^= static_cast<std::uint8_t>(v >> (8 * i));
            h *= 16777619u;
        }
    };
    mix(fn.parent.packed(), 8);
    mix(static_cast<std::uint8_t>(fn.name_space), 1);
    mix((fn.file_attributes & file_attr::directory) ? 1 : 0, 1);
    for (char16_t u : fn.name) mix(u, 2);
    // Never 0, so that a name and an entry of equal hash XOR to 0 only in pairs.
    return h ? h : 1;
}

int collate(const Context& c, std::u16string_view a, std::u16string_view b) {
    if (c.upcase.empty()) {
        if (const int r = collate_file_names(a, b)) return r;
    } else {
        const std::size_t n = std::min(a.size(), b.size());
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint16_t x = c.upcase[a[i]], y = c.upcase[b[i]];
            if (x != y) return x < y ? -1 : 1;
        }
        if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    }
    if (a == b) return 0;
    return a < b ? -1 : 1;
}

}  // namespace detail

CheckSummary check_volume(const io::BlockDevice& device, check::Findings& out, const CheckOptions& options) {
    detail::Context c(device, out, options);
    if (!detail::check_boot(c)) return c.summary;
    detail::check_upcase(c);
    detail::check_records(c);
    detail::check_mirror(c);
    detail::check_names(c);
    detail::check_index(c);
    detail::check_system(c);
    detail::check_reparse(c);
    detail::report_suppressed(c);
    c.summary.complete = true;
    return c.summary;
}

}  // namespace fsimg::ntfs
