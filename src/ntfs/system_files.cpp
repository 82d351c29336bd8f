// Contents of $AttrDef and $Secure: see include/fsimg/ntfs/format.hpp.
#include <algorithm>
#include <array>
#include <string_view>

#include "fsimg/core/bytes.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

namespace {

struct AttrDefEntry {
    std::u16string_view name;
    std::uint32_t type;
    std::uint32_t flags;  ///< 0x02 indexed, 0x40 always resident, 0x80 may be non-resident
    std::int64_t min_size;
    std::int64_t max_size;  ///< -1 = no limit
};

// The NTFS 3.1 definitions as mkntfs 2022.10.3 writes them (display rule and
// collation rule 0 in every entry) [EXP; formats.md §3.2].
constexpr std::array<AttrDefEntry, 15> kAttrDefs{{
    {u"$STANDARD_INFORMATION", 0x10, 0x40, 0x30, 0x48},
    {u"$ATTRIBUTE_LIST", 0x20, 0x80, 0, -1},
    {u"$FILE_NAME", 0x30, 0x42, 0x44, 0x242},
    {u"$OBJECT_ID", 0x40, 0x40, 0, 0x100},
    {u"$SECURITY_DESCRIPTOR", 0x50, 0x80, 0, -1},
    {u"$VOLUME_NAME", 0x60, 0x40, 2, 0x100},
    {u"$VOLUME_INFORMATION", 0x70, 0x40, 0xC, 0xC},
    {u"$DATA", 0x80, 0x00, 0, -1},
    {u"$INDEX_ROOT", 0x90, 0x40, 0, -1},
    {u"$INDEX_ALLOCATION", 0xA0, 0x80, 0, -1},
    {u"$BITMAP", 0xB0, 0x80, 0, -1},
    {u"$REPARSE_POINT", 0xC0, 0x80, 0, 0x4000},
    {u"$EA_INFORMATION", 0xD0, 0x40, 8, 8},
    {u"$EA", 0xE0, 0x00, 0, 0x10000},
    {u"$LOGGED_UTILITY_STREAM", 0x100, 0x80, 0, 0x10000},
}};
constexpr std::size_t kAttrDefEntrySize = 160;

// SIDs (revision 1, identifier authority NT = 5) [MS-DTYP 2.4.2].
std::vector<std::byte> sid(std::initializer_list<std::uint32_t> sub) {
    std::vector<std::byte> s(8 + 4 * sub.size());
    s[0] = std::byte{1};
    s[1] = static_cast<std::byte>(sub.size());
    s[7] = std::byte{5};
    std::size_t at = 8;
    for (std::uint32_t a : sub) {
        core::store_le32(s, at, a);
        at += 4;
    }
    return s;
}
std::vector<std::byte> sid_everyone() {
    auto s = sid({0});
    s[7] = std::byte{1};  // S-1-1-0: authority WORLD
    return s;
}
const std::vector<std::byte>& sid_system() {
    static const auto s = sid({18});  // S-1-5-18
    return s;
}
const std::vector<std::byte>& sid_administrators() {
    static const auto s = sid({32, 544});  // S-1-5-32-544
    return s;
}

struct Ace {
    std::uint8_t flags;  ///< 0x01 object inherit, 0x02 container inherit
    std::uint32_t mask;
    std::vector<std::byte> sid;
};

// Self-relative descriptor: header, DACL, owner, group [MS-DTYP 2.4.6].
std::vector<std::byte> descriptor(const std::vector<Ace>& aces) {
    std::vector<std::byte> acl(8);
    for (const Ace& a : aces) {
        std::vector<std::byte> ace(8 + a.sid.size());
        ace[0] = std::byte{0};  // ACCESS_ALLOWED_ACE_TYPE
        ace[1] = std::byte{a.flags};
        core::store_le16(ace, 2, static_cast<std::uint16_t>(ace.size()));
        core::store_le32(ace, 4, a.mask);
        std::copy(a.sid.begin(), a.sid.end(), ace.begin() + 8);
        acl.insert(acl.end(), ace.begin(), ace.end());
    }
    acl[0] = std::byte{2};  // ACL revision
    core::store_le16(acl, 2, static_cast<std::uint16_t>(acl.size()));
    core::store_le16(acl, 4, static_cast<std::uint16_t>(aces.size()));
    const auto& owner = sid_administrators();
    std::vector<std::byte> d(20);
    d[0] = std::byte{1};             // revision
    core::store_le16(d, 2, 0x8004);  // SE_SELF_RELATIVE | SE_DACL_PRESENT
    core::store_le32(d, 4, static_cast<std::uint32_t>(20 + acl.size()));                 // owner
    core::store_le32(d, 8, static_cast<std::uint32_t>(20 + acl.size() + owner.size()));  // group
    core::store_le32(d, 12, 0);                                                          // no SACL
    core::store_le32(d, 16, 20);                                                         // DACL
    d.insert(d.end(), acl.begin(), acl.end());
    d.insert(d.end(), owner.begin(), owner.end());
    d.insert(d.end(), owner.begin(), owner.end());
    return d;
}

constexpr std::uint32_t kReadMask = 0x00120089;       // FILE_GENERIC_READ
constexpr std::uint32_t kReadWriteMask = 0x0012019F;  // FILE_GENERIC_READ | FILE_GENERIC_WRITE
constexpr std::uint32_t kFullMask = 0x001F01FF;       // FILE_ALL_ACCESS
constexpr std::uint8_t kInherit = 0x03;               // OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE

constexpr std::array<std::uint32_t, 3> kIds{kSecurityIdSystem, kSecurityIdSystemRw, kSecurityIdRoot};

std::uint64_t align16(std::uint64_t v) { return (v + 15) & ~std::uint64_t(15); }

}  // namespace

std::vector<std::byte> build_attrdef() {
    std::vector<std::byte> t(kAttrDefBytes);
    std::size_t at = 0;
    for (const AttrDefEntry& e : kAttrDefs) {
        for (std::size_t i = 0; i < e.name.size(); ++i)
            core::store_le16(t, at + 2 * i, static_cast<std::uint16_t>(e.name[i]));
        core::store_le32(t, at + 0x80, e.type);
        core::store_le32(t, at + 0x84, 0);  // display rule
        core::store_le32(t, at + 0x88, 0);  // collation rule (as mkntfs writes it)
        core::store_le32(t, at + 0x8C, e.flags);
        core::store_le64(t, at + 0x90, static_cast<std::uint64_t>(e.min_size));
        core::store_le64(t, at + 0x98, static_cast<std::uint64_t>(e.max_size));
        at += kAttrDefEntrySize;
    }
    return t;
}

std::vector<std::byte> security_descriptor(std::uint32_t id) {
    switch (id) {
        case kSecurityIdSystem:
            return descriptor({{0, kReadMask, sid_system()}, {0, kReadMask, sid_administrators()}});
        case kSecurityIdSystemRw:
            return descriptor({{0, kReadWriteMask, sid_system()}, {0, kReadWriteMask, sid_administrators()}});
        default:
            return descriptor({{kInherit, kFullMask, sid_administrators()},
                               {kInherit, kFullMask, sid_system()},
                               {kInherit, kFullMask, sid_everyone()}});
    }
}

std::uint32_t security_hash(std::span<const std::byte> d) noexcept {
    std::uint32_t h = 0;
    for (std::size_t i = 0; i + 4 <= d.size(); i += 4) {
        const std::uint32_t w = core::load_le32(d, i);
        h = ((h << 3) | (h >> 29)) + w;
    }
    return h;
}

SecureStreams build_secure_streams() {
    SecureStreams s;
    struct Entry {
        std::uint32_t hash, id;
        std::uint64_t offset;
        std::uint32_t length;
    };
    std::vector<Entry> entries;
    std::vector<std::byte> block;
    for (std::uint32_t id : kIds) {
        const auto d = security_descriptor(id);
        const std::uint64_t at = align16(block.size());
        block.resize(at + 20 + d.size());
        Entry e{security_hash(d), id, at, static_cast<std::uint32_t>(20 + d.size())};
        core::store_le32(block, at, e.hash);
        core::store_le32(block, at + 4, e.id);
        core::store_le64(block, at + 8, e.offset);
        core::store_le32(block, at + 16, e.length);
        std::copy(d.begin(), d.end(), block.begin() + static_cast<std::ptrdiff_t>(at + 20));
        entries.push_back(e);
    }
    // The stream: block at 0, its mirror at +256 KiB (formats.md §3.9).
    s.sds.assign(kSdsBlockBytes + block.size(), std::byte{0});
    std::copy(block.begin(), block.end(), s.sds.begin());
    std::copy(block.begin(), block.end(), s.sds.begin() + kSdsBlockBytes);

    auto data_of = [](const Entry& e) {
        std::vector<std::byte> v(20);
        core::store_le32(v, 0, e.hash);
        core::store_le32(v, 4, e.id);
        core::store_le64(v, 8, e.offset);
        core::store_le32(v, 16, e.length);
        return v;
    };
    // $SII: key = security id, collation ULONG.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
    for (const Entry& e : entries) {
        std::vector<std::byte> key(4);
        core::store_le32(key, 0, e.id);
        const auto ie = build_view_index_entry(key, data_of(e));
        s.sii_entries.insert(s.sii_entries.end(), ie.begin(), ie.end());
    }
    // $SDH: key = (hash, id), collation SECURITY_HASH; data padded with
    // "II" (0x00490049) as Windows and mkntfs write it.
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.hash != b.hash ? a.hash < b.hash : a.id < b.id;
    });
    for (const Entry& e : entries) {
        std::vector<std::byte> key(8);
        core::store_le32(key, 0, e.hash);
        core::store_le32(key, 4, e.id);
        auto data = data_of(e);
        auto ie = build_view_index_entry(key, data);
        core::store_le32(ie, 16 + 8 + 20, 0x00490049);  // entry length 0x30 leaves 4 bytes after the data
        s.sdh_entries.insert(s.sdh_entries.end(), ie.begin(), ie.end());
    }
    const auto end = build_end_index_entry();
    s.sii_entries.insert(s.sii_entries.end(), end.begin(), end.end());
    s.sdh_entries.insert(s.sdh_entries.end(), end.begin(), end.end());
    return s;
}

std::uint64_t secure_sds_bytes() { return build_secure_streams().sds.size(); }

}  // namespace fsimg::ntfs
