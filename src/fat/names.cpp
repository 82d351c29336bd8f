#include "fsimg/fat/names.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/structs.hpp"

namespace fsimg::fat {

namespace {

constexpr bool is_ascii_lower(char16_t c) noexcept { return c >= u'a' && c <= u'z'; }
constexpr bool is_ascii_upper(char16_t c) noexcept { return c >= u'A' && c <= u'Z'; }

/// Characters no FAT name may hold [FATGEN; formats.md §1.11]: Windows' set.
constexpr bool is_forbidden_in_long_name(char16_t c) noexcept { return core::is_windows_forbidden(c); }

/// ASCII characters a short name may hold besides letters and digits:
/// $ % ' - _ @ ~ ` ! ( ) { } ^ # & [FATGEN].
constexpr bool is_short_special(char16_t c) noexcept {
    return c == u'$' || c == u'%' || c == u'\'' || c == u'-' || c == u'_' || c == u'@' || c == u'~' ||
           c == u'`' || c == u'!' || c == u'(' || c == u')' || c == u'{' || c == u'}' || c == u'^' ||
           c == u'#' || c == u'&';
}

/// A character that may appear in a short name as it is (ASCII, no space).
constexpr bool is_short_char(char16_t c) noexcept {
    return is_ascii_lower(c) || is_ascii_upper(c) || (c >= u'0' && c <= u'9') || is_short_special(c);
}

constexpr char16_t ascii_upper(char16_t c) noexcept { return is_ascii_lower(c) ? c - 0x20 : c; }

}  // namespace

bool is_83_shaped(std::u16string_view name) noexcept {
    const std::size_t dot = name.find(u'.');
    const std::u16string_view base = name.substr(0, dot);
    const std::u16string_view ext =
        dot == std::u16string_view::npos ? std::u16string_view{} : name.substr(dot + 1);
    if (base.empty() || base.size() > 8) return false;
    if (dot != std::u16string_view::npos && (ext.empty() || ext.size() > 3)) return false;
    auto all_short = [](std::u16string_view s) { return std::all_of(s.begin(), s.end(), is_short_char); };
    return all_short(base) && all_short(ext);
}

namespace {

ShortName make_short(std::string_view base, std::string_view ext) {
    ShortName n;
    n.fill(' ');
    std::copy_n(base.begin(), std::min<std::size_t>(base.size(), 8), n.begin());
    std::copy_n(ext.begin(), std::min<std::size_t>(ext.size(), 3), n.begin() + 8);
    return n;
}

std::string with_tail(const std::string& prefix, unsigned n) {
    const std::string tail = fmt::format("~{}", n);
    return prefix.substr(0, 8 - tail.size()) + tail;
}

}  // namespace

std::optional<std::string> long_name_problem(std::string_view utf8) {
    std::u16string name;
    try {
        name = core::utf8_to_utf16(utf8);
    } catch (const Error& e) {
        return fmt::format("the name is not valid UTF-8 ({})", e.what());
    }
    if (name.empty()) return "the name is empty";
    if (name == u"." || name == u"..") return "\".\" and \"..\" are not names";
    for (const char16_t c : name) {
        if (c < 0x20) return fmt::format("the name holds the control character U+{:04X}", unsigned(c));
        if (c == 0xFFFF) return "the name holds U+FFFF, which LFN entries use as padding after the name";
        if (is_forbidden_in_long_name(c)) {
            return fmt::format("the name holds '{}', which FAT names may not contain (\"*/:<>?\\|)",
                               static_cast<char>(c));
        }
    }
    if (name.back() == u'.')
        return "the name ends with a period (Windows strips it, the file could not be opened)";
    if (name.back() == u' ')
        return "the name ends with a space (Windows strips it, the file could not be opened)";
    if (name.size() > kMaxLongNameUnits) {
        return fmt::format("the name is {} UTF-16 code units long; FAT allows {}", name.size(),
                           kMaxLongNameUnits);
    }
    return std::nullopt;
}

namespace {

/// Cuts a UTF-16 name to `units`, keeping an extension of up to 16 units and
/// never splitting a surrogate pair.
std::u16string cut_units(std::u16string name, std::size_t units) {
    if (name.size() <= units) return name;
    const std::size_t dot = name.rfind(u'.');
    std::u16string ext =
        dot != std::u16string::npos && dot > 0 && name.size() - dot <= 16 ? name.substr(dot) : u"";
    std::size_t keep = units - ext.size();
    if (keep > 0 && name[keep - 1] >= 0xD800 && name[keep - 1] <= 0xDBFF) --keep;  // a pair's high half
    return name.substr(0, keep) + ext;
}

}  // namespace

std::string fat_safe_name(std::string_view utf8) {
    if (!long_name_problem(utf8)) return std::string(utf8);
    // Lenient UTF-8: every byte that does not start a valid sequence becomes '_'.
    std::string valid;
    for (std::size_t i = 0; i < utf8.size();) {
        const auto b = static_cast<unsigned char>(utf8[i]);
        const std::size_t len = b < 0x80         ? 1
                                : (b >> 5) == 6  ? 2
                                : (b >> 4) == 14 ? 3
                                : (b >> 3) == 30 ? 4
                                                 : 0;
        if (len != 0 && i + len <= utf8.size() && core::is_valid_utf8(utf8.substr(i, len))) {
            valid.append(utf8.substr(i, len));
            i += len;
        } else {
            valid.push_back('_');
            ++i;
        }
    }
    std::u16string name = core::utf8_to_utf16(valid);
    for (char16_t& c : name) {
        if (is_forbidden_in_long_name(c) || c == 0xFFFF) c = u'_';
    }
    for (auto it = name.rbegin(); it != name.rend() && (*it == u'.' || *it == u' '); ++it) *it = u'_';
    if (name.empty() || name == u"." || name == u"..") name = u"_";
    return core::utf16_to_utf8(cut_units(std::move(name), kMaxLongNameUnits));
}

std::string with_name_suffix(std::string_view utf8, unsigned n) {
    const std::u16string name = core::utf8_to_utf16(utf8);
    const std::u16string tail = core::utf8_to_utf16(fmt::format("~{}", n));
    const std::size_t dot = name.rfind(u'.');
    const bool has_ext = dot != std::u16string::npos && dot > 0;
    std::u16string stem = has_ext ? name.substr(0, dot) : name;
    const std::u16string ext = has_ext ? name.substr(dot) : u"";
    std::u16string out = cut_units(stem + ext, kMaxLongNameUnits - tail.size());
    const std::size_t ext_at =
        out.size() >= ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0
            ? out.size() - ext.size()
            : out.size();
    out.insert(ext_at, tail);
    return core::utf16_to_utf8(out);
}

std::u16string case_fold_key(std::u16string_view name) {
    std::u16string key(name);
    const auto upcase = exfat::recommended_upcase_map();
    for (char16_t& c : key) c = upcase[c];
    return key;
}

std::optional<ShortName> upper_short_form(std::u16string_view name) {
    if (!is_83_shaped(name)) return std::nullopt;
    const std::size_t dot = name.find(u'.');
    std::string b, e;
    for (const char16_t c : name.substr(0, dot)) b.push_back(static_cast<char>(ascii_upper(c)));
    if (dot != std::u16string_view::npos)
        for (const char16_t c : name.substr(dot + 1)) e.push_back(static_cast<char>(ascii_upper(c)));
    return make_short(b, e);
}

std::optional<PlainShortName> plain_short_name(std::u16string_view name) {
    if (!is_83_shaped(name)) return std::nullopt;
    const std::size_t dot = name.find(u'.');
    const std::u16string_view base = name.substr(0, dot);
    const std::u16string_view ext =
        dot == std::u16string_view::npos ? std::u16string_view{} : name.substr(dot + 1);
    auto case_of = [](std::u16string_view part, std::uint8_t lower_bit) -> std::optional<std::uint8_t> {
        const bool has_lower = std::any_of(part.begin(), part.end(), is_ascii_lower);
        const bool has_upper = std::any_of(part.begin(), part.end(), is_ascii_upper);
        if (has_lower && has_upper) return std::nullopt;
        return has_lower ? lower_bit : std::uint8_t{0};
    };
    const auto base_case = case_of(base, kNtLowerBase);
    const auto ext_case = case_of(ext, kNtLowerExt);
    if (!base_case || !ext_case) return std::nullopt;
    std::string b, e;
    for (const char16_t c : base) b.push_back(static_cast<char>(ascii_upper(c)));
    for (const char16_t c : ext) e.push_back(static_cast<char>(ascii_upper(c)));
    return PlainShortName{make_short(b, e), static_cast<std::uint8_t>(*base_case | *ext_case)};
}

BasisName basis_name(std::u16string_view name) {
    // Steps 1-3 of fatgen103: upper-case, convert (lossy '_'), drop spaces.
    std::string s;
    bool lossy = false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char16_t c = name[i];
        if (c == u' ') continue;
        if (c == u'.') {
            s.push_back('.');
        } else if (c < 0x80 && is_short_char(c)) {
            s.push_back(static_cast<char>(ascii_upper(c)));
        } else {
            s.push_back('_');  // non-ASCII (one '_' per code point), or + , ; = [ ]
            lossy = true;
            if (c >= 0xD800 && c <= 0xDBFF && i + 1 < name.size()) ++i;  // the pair's low half
        }
    }
    // Step 4: leading periods go.
    s.erase(0, s.find_first_not_of('.') == std::string::npos ? s.size() : s.find_first_not_of('.'));
    // Steps 5-7, as Windows and Linux vfat do them: the base is everything
    // before the last period with the other periods removed, cut to 8; the
    // extension is what follows the last period, cut to 3. (fatgen103's
    // step 5 literally stops the base at the first period.)
    const std::size_t last = s.rfind('.');
    std::string base = s.substr(0, last);
    std::string ext = last == std::string::npos ? std::string{} : s.substr(last + 1);
    base.erase(std::remove(base.begin(), base.end(), '.'), base.end());
    BasisName out;
    out.lossy = lossy || base.size() > 8 || ext.size() > 3;
    base.resize(std::min<std::size_t>(base.size(), 8));
    ext.resize(std::min<std::size_t>(ext.size(), 3));
    if (base.empty()) {
        base = "_";
        out.lossy = true;
    }
    out.base = std::move(base);
    out.ext = std::move(ext);
    return out;
}

std::uint16_t windows_short_name_hash(std::u16string_view name) noexcept {
    std::uint16_t checksum = 0;
    for (const char16_t c : name) checksum = static_cast<std::uint16_t>(checksum * 0x25 + c);
    auto temp = static_cast<std::int32_t>(std::uint32_t{checksum} * 314159269u);
    if (temp < 0) temp = static_cast<std::int32_t>(0u - static_cast<std::uint32_t>(temp));
    const std::uint64_t q = static_cast<std::uint64_t>(std::int64_t{temp} * 1152921497) >> 60;
    temp = static_cast<std::int32_t>(
        static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::int64_t{temp}) - q * 1000000007ull));
    checksum = static_cast<std::uint16_t>(temp);
    return static_cast<std::uint16_t>(((checksum & 0xF000) >> 12) | ((checksum & 0x0F00) >> 4) |
                                      ((checksum & 0x00F0) << 4) | ((checksum & 0x000F) << 12));
}

std::string short_name_dotted(const ShortName& n) {
    std::string base(n.begin(), n.begin() + 8);
    std::string ext(n.begin() + 8, n.end());
    while (!base.empty() && base.back() == ' ') base.pop_back();
    while (!ext.empty() && ext.back() == ' ') ext.pop_back();
    return ext.empty() ? base : base + "." + ext;
}

bool ShortNameAllocator::reserve(const ShortName& name) { return used_.insert(key(name)).second; }

ShortName generate_short_name(std::u16string_view long_name,
                              const std::function<bool(const ShortName&)>& taken, bool tail_always) {
    const BasisName b = basis_name(long_name);
    if (!tail_always && !b.lossy && is_83_shaped(long_name)) {
        const ShortName n = make_short(b.base, b.ext);
        if (!taken(n)) return n;
    }
    for (unsigned i = 1; i <= 4; ++i) {
        const ShortName n = make_short(with_tail(b.base, i), b.ext);
        if (!taken(n)) return n;
    }
    const std::string prefix =
        b.base.substr(0, 2) + fmt::format("{:04X}", windows_short_name_hash(long_name));
    for (unsigned i = 1;; ++i) {  // ends: at most 65,536 names per directory
        const ShortName n = make_short(with_tail(prefix, i), b.ext);
        if (!taken(n)) return n;
    }
}

ShortName ShortNameAllocator::generate(std::u16string_view long_name, bool tail_always) {
    const ShortName n = generate_short_name(
        long_name, [this](const ShortName& c) { return contains(c); }, tail_always);
    reserve(n);
    return n;
}

void encode_lfn_entries(std::u16string_view name, std::uint8_t checksum, std::span<std::byte> out) {
    const std::uint32_t count = lfn_entry_count(name.size());
    if (name.empty() || name.size() > kMaxLongNameUnits || out.size() != std::size_t{count} * 32) {
        throw Error(ErrorCode::usage,
                    fmt::format("encode_lfn_entries: {} units into {} bytes", name.size(), out.size()));
    }
    // Byte offsets of the 13 units inside an entry [FATGEN LDIR_Name1/2/3].
    static constexpr std::array<std::size_t, 13> kUnitOffsets = {1,  3,  5,  7,  9,  14, 16,
                                                                 18, 20, 22, 24, 28, 30};
    for (std::uint32_t k = 0; k < count; ++k) {
        const std::uint32_t ordinal = count - k;  // physical entry k holds ordinal count-k
        std::span<std::byte> e = out.subspan(std::size_t{k} * 32, 32);
        std::fill(e.begin(), e.end(), std::byte{0});
        e[0] = static_cast<std::byte>(ordinal | (k == 0 ? 0x40u : 0u));
        e[11] = std::byte{0x0F};  // LDIR_Attr = ATTR_LONG_NAME
        e[13] = std::byte{checksum};
        for (std::size_t j = 0; j < kLfnUnitsPerEntry; ++j) {
            const std::size_t i = (ordinal - 1) * kLfnUnitsPerEntry + j;
            const std::uint16_t u = i < name.size() ? name[i] : i == name.size() ? 0x0000 : 0xFFFF;
            e[kUnitOffsets[j]] = static_cast<std::byte>(u & 0xFF);
            e[kUnitOffsets[j] + 1] = static_cast<std::byte>(u >> 8);
        }
    }
}

}  // namespace fsimg::fat
