// fsimg dump for NTFS: boot sector, geometry, $MFT, and one MFT record
// (--what mft N) with every attribute decoded.
#include "dump_ntfs.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "common.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/time.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::cli {

namespace {

using nlohmann::json;
namespace off = ntfs::off;

/// $ATTRIBUTE_LIST values read for display: at most this many bytes.
constexpr std::uint64_t kMaxListBytes = 1u << 20;

std::string utf8(const std::u16string& s) { return core::utf16_to_utf8_lossy(s); }

/// FILETIME as "2023-11-14 22:13:20.0000000 UTC" (100 ns digits).
std::string filetime_utc(std::uint64_t ft) { return ntfs::filetime_text(ft) + " UTC"; }

json time_json(std::uint64_t ft) { return {{"filetime", ft}, {"utc", filetime_utc(ft)}}; }

std::string hex_bytes(std::span<const std::byte> b, std::size_t max) {
    std::string s;
    for (std::size_t i = 0; i < b.size() && i < max; ++i)
        s += fmt::format("{}{:02X}", i ? " " : "", static_cast<std::uint8_t>(b[i]));
    if (b.size() > max) s += " ...";
    return s;
}

json ref_json(ntfs::FileReference r) { return {{"record", r.record}, {"sequence", r.sequence}}; }

// ---- boot sector

/// What the boot dump shows beyond the raw fields, gathered without
/// throwing: a damaged volume still gets its fields printed.
struct BootView {
    std::array<std::byte, ntfs::kBootSectorSize> sector{};
    std::vector<ntfs::BootProblem> problems;
    std::optional<ntfs::Geometry> geometry;
    std::uint64_t device_bytes = 0;
    std::optional<bool> backup_matches;
    std::optional<ntfs::Attribute> mft_data;
    std::uint64_t mft_records = 0;
    std::optional<std::string> label;
    std::optional<ntfs::VolumeInformation> info;
    std::optional<ntfs::LogFileState> logfile;
    std::vector<std::string> errors;  ///< why a part could not be read
    /// Sector 0 breaks a rule and the valid backup boot sector at this byte
    /// offset stands in: the geometry and all below come from it.
    std::optional<std::uint64_t> backup_offset;
};

BootView read_boot_view(const io::BlockDevice& dev, const fs::Detection& d) {
    BootView b;
    b.device_bytes = dev.size();
    dev.read_at(0, b.sector);
    b.problems = ntfs::validate_boot_sector(b.sector);
    if (!b.problems.empty() && !d.through_backup) return b;
    const auto reading = fs::reading_device(dev, d);
    std::array<std::byte, ntfs::kBootSectorSize> boot{};
    reading->read_at(0, boot);
    b.geometry = ntfs::geometry_of(boot);
    if (d.through_backup) b.backup_offset = d.backup_offset;
    try {
        const ntfs::Volume vol(*reading);
        // Through the backup, sector 0 is the damaged one: it differs from its copy.
        b.backup_matches = b.backup_offset ? std::optional(false) : vol.backup_boot_matches();
        b.mft_data = vol.mft_data();
        b.mft_records = vol.record_count();
        const ntfs::MftRecord r = vol.read_record(3);
        if (const auto* n = r.find(ntfs::AttrType::volume_name)) b.label = utf8(ntfs::decode_utf16(n->value));
        if (const auto* i = r.find(ntfs::AttrType::volume_information))
            b.info = ntfs::decode_volume_information(i->value);
        b.logfile = ntfs::logfile_state(vol);
    } catch (const Error& e) {
        b.errors.push_back(e.what());
    }
    return b;
}

/// What $LogFile says, as dump shows it (docs/dump.md).
std::string_view logfile_text(ntfs::LogFileState s) {
    switch (s) {
        case ntfs::LogFileState::empty:
            return "empty";
        case ntfs::LogFileState::clean:
            return "clean";
        case ntfs::LogFileState::unclean:
            return "unclean";
        case ntfs::LogFileState::unknown:
            break;
    }
    return "unknown";
}

json runs_json(const ntfs::Attribute& a) {
    json runs = json::array();
    for (const auto& r : a.runs) {
        runs.push_back({{"vcn", static_cast<std::uint64_t>(r.vcn)},
                        {"lcn", r.lcn ? json(static_cast<std::uint64_t>(*r.lcn)) : json()},
                        {"length", r.length}});
    }
    return runs;
}

json boot_json(const std::string& image, const io::OpenedVolume& v, const BootView& b, const json& table) {
    json j;
    j["schema_version"] = 1;
    j["image"] = image;
    j["filesystem"] = "ntfs";
    j["volume_offset"] = v.offset();
    j["volume_device_bytes"] = b.device_bytes;
    if (!table.is_null()) j["partition_table"] = table;
    json bs = json::object();
    for (const ntfs::BootField& f : ntfs::boot_fields(b.sector)) {
        const std::string key(f.name);
        if (f.kind == ntfs::BootField::Kind::text) {
            bs[key] = f.text;
        } else if (f.kind == ntfs::BootField::Kind::size_code) {
            bs[key] = f.size_code();
        } else {
            bs[key] = f.number;
        }
    }
    j["boot_sector"] = bs;
    j["problems"] = json::array();
    for (const auto& p : b.problems) j["problems"].push_back({{"code", p.code}, {"message", p.message}});
    j["boot_sector_in_use"] = b.backup_offset ? "backup" : "main";
    if (b.geometry) {
        const auto& g = *b.geometry;
        j["geometry"] = {{"bytes_per_sector", g.bytes_per_sector},   {"cluster_bytes", g.cluster_bytes},
                         {"cluster_count", g.cluster_count},         {"mft_record_bytes", g.mft_record_bytes},
                         {"index_block_bytes", g.index_block_bytes}, {"total_sectors", g.total_sectors},
                         {"volume_bytes", g.volume_bytes()}};
    } else {
        j["geometry"] = nullptr;
    }
    j["backup_boot_sector_identical"] = b.backup_matches ? json(*b.backup_matches) : json();
    if (b.mft_data) {
        j["mft"] = {{"records", b.mft_records},
                    {"data_size", b.mft_data->data_size},
                    {"allocated_size", b.mft_data->allocated_size},
                    {"runs", runs_json(*b.mft_data)}};
    }
    if (b.info) {
        j["volume"] = {{"label", b.label ? json(*b.label) : json()},
                       {"version", fmt::format("{}.{}", b.info->major, b.info->minor)},
                       {"flags", b.info->flags}};
        if (b.logfile) j["volume"]["logfile"] = logfile_text(*b.logfile);
    }
    j["errors"] = b.errors;
    return j;
}

void print_runs(const ntfs::Attribute& a, const char* indent) {
    fmt::print("{}{:>14} {:>14} {:>14}\n", indent, "VCN", "LCN", "length");
    for (const auto& r : a.runs) {
        fmt::print("{}{:>14} {:>14} {:>14}\n", indent, static_cast<std::uint64_t>(r.vcn),
                   r.lcn ? std::to_string(static_cast<std::uint64_t>(*r.lcn)) : std::string("sparse"),
                   r.length);
    }
}

void print_boot(const std::string& image, const io::OpenedVolume& v, const BootView& b, const json& table) {
    fmt::print("Image:            {}\n", image);
    if (!table.is_null()) {
        fmt::print("Partition table:  {}, {}-byte sectors, {} partition(s)\n",
                   table["kind"].get<std::string>(), table["sector_size"].get<std::uint32_t>(),
                   table["partitions"].size());
    }
    fmt::print("Volume offset:    {} bytes\n", v.offset());
    fmt::print("\nBoot sector (NTFS)\n");
    using Kind = ntfs::BootField::Kind;
    for (const ntfs::BootField& f : ntfs::boot_fields(b.sector)) {
        const std::uint64_t n = f.number;
        switch (f.kind) {
            case Kind::text:
                fmt::print("  0x{:03X}  {:<22} \"{}\"\n", f.offset, f.name, shown(f.text));
                break;
            case Kind::size_code: {
                const std::int8_t c = f.size_code();
                fmt::print("  0x{:03X}  {:<22} {} ({})\n", f.offset, f.name, c,
                           c > 0 ? fmt::format("{} cluster(s)", c) : fmt::format("2^{} bytes", -c));
                break;
            }
            case Kind::signature:
                fmt::print("  0x{:03X}  {:<22} {:02X} {:02X}\n", f.offset, f.name, n & 0xFF, n >> 8);
                break;
            case Kind::hex:
                fmt::print("  0x{:03X}  {:<22} 0x{:0{}X}\n", f.offset, f.name, n, f.width * 2);
                break;
            case Kind::number:
                fmt::print("  0x{:03X}  {:<22} {}\n", f.offset, f.name, n);
                break;
        }
    }
    fmt::print("\nGeometry\n");
    for (const auto& p : b.problems) fmt::print("  INVALID           {} [{}]\n", p.message, p.code);
    if (b.backup_offset)
        fmt::print("  read through      the backup boot sector at byte {} (valid)\n", *b.backup_offset);
    if (b.geometry) {
        const auto& g = *b.geometry;
        fmt::print("  sector size       {} bytes\n", g.bytes_per_sector);
        fmt::print("  cluster size      {} ({} sectors)\n", core::format_size(g.cluster_bytes),
                   g.cluster_bytes / g.bytes_per_sector);
        fmt::print("  cluster count     {} (LCN 0..{})\n", core::format_count(g.cluster_count),
                   g.cluster_count - 1);
        fmt::print("  MFT record size   {} bytes\n", g.mft_record_bytes);
        fmt::print("  index block size  {} bytes\n", g.index_block_bytes);
        fmt::print("  volume size       {} sectors + backup boot sector ({})\n", g.total_sectors,
                   core::format_size(g.volume_bytes() + g.bytes_per_sector));
        if (g.volume_bytes() + g.bytes_per_sector > b.device_bytes)
            fmt::print("  WARNING           the volume claims {} bytes but only {} are present\n",
                       g.volume_bytes() + g.bytes_per_sector, b.device_bytes);
        fmt::print("  backup boot       sector {}: {}\n", g.total_sectors,
                   !b.backup_matches   ? "past the end of the image"
                   : *b.backup_matches ? "identical to sector 0"
                                       : "DIFFERS from sector 0");
    }
    if (b.mft_data) {
        fmt::print("\n$MFT: {} records, {} bytes ({} allocated)\n", core::format_count(b.mft_records),
                   b.mft_data->data_size, b.mft_data->allocated_size);
        print_runs(*b.mft_data, "  ");
    }
    if (b.info) {
        fmt::print("\n$Volume\n  label             {}\n",
                   b.label ? "\"" + *b.label + "\"" : std::string("none"));
        fmt::print("  version           {}.{}\n", b.info->major, b.info->minor);
        fmt::print("  flags             0x{:04X} ({})\n", b.info->flags,
                   ntfs::volume_flag_names(b.info->flags));
        if (b.logfile) fmt::print("  $LogFile          {}\n", logfile_text(*b.logfile));
    }
    for (const auto& e : b.errors) fmt::print("\nERROR: {}\n", e);
}

// ---- one MFT record

/// The decoded value of an attribute as JSON plus text lines; a value that
/// does not decode gives {"error": ...}.
struct Decoded {
    json j = json::object();
    std::vector<std::string> lines;
};

void add_time(Decoded& d, const char* key, const char* label, std::uint64_t ft) {
    d.j[key] = time_json(ft);
    d.lines.push_back(fmt::format("{:<18}{}", label, filetime_utc(ft)));
}

}  // namespace

json index_entries(const std::vector<ntfs::IndexEntry>& entries, ntfs::IndexKeys keys,
                   std::vector<std::string>& lines, std::string_view indent) {
    json out = json::array();
    for (const auto& e : entries) {
        json je{{"offset", e.offset}, {"length", e.length}, {"key_length", e.key_length}, {"flags", e.flags}};
        std::string line =
            fmt::format("{}entry @0x{:03X} len {:>3} key {:>3}", indent, e.offset, e.length, e.key_length);
        if (e.last()) {
            line += " (last)";
        } else if (keys == ntfs::IndexKeys::file_name && e.file_name) {
            const auto ref = ntfs::FileReference::unpack(e.reference);
            je["file_reference"] = ref_json(ref);
            je["name"] = utf8(e.file_name->name);
            je["namespace"] = ntfs::namespace_name(e.file_name->name_space);
            line +=
                fmt::format(" -> record {} seq {} \"{}\" ({})", ref.record, ref.sequence,
                            shown(utf8(e.file_name->name)), ntfs::namespace_name(e.file_name->name_space));
        } else {
            je["data_offset"] = e.reference & 0xFFFF;
            je["data_length"] = (e.reference >> 16) & 0xFFFF;
            je["key_hex"] = hex_bytes(e.key, 32);
            line += fmt::format(" key {}", hex_bytes(e.key, 16));
            if (keys == ntfs::IndexKeys::reparse && e.key.size() == 12) {  // le32 tag, le64 file reference
                const std::uint32_t tag = core::load_le32(e.key, 0);
                const auto ref = ntfs::FileReference::unpack(core::load_le64(e.key, 4));
                je["reparse_tag"] = tag;
                je["file_reference"] = ref_json(ref);
                line += fmt::format(" = tag 0x{:08X}, record {} seq {}", tag, ref.record, ref.sequence);
            }
        }
        if (e.child_vcn) {
            je["child_vcn"] = *e.child_vcn;
            line += fmt::format(" child VCN {}", *e.child_vcn);
        }
        out.push_back(je);
        lines.push_back(line);
    }
    return out;
}

namespace {

/// The INDX blocks of an $INDEX_ALLOCATION attribute: those its $BITMAP
/// (same name) marks in use, at most kMaxBlocks of them.
void index_blocks(Decoded& d, const ntfs::Volume& vol, const ntfs::MftRecord& rec, const ntfs::Attribute& a) {
    constexpr std::uint64_t kMaxBlocks = 64;
    const auto* root = rec.find(ntfs::AttrType::index_root, a.name);
    std::uint32_t block_bytes = vol.geometry().index_block_bytes;
    auto keys = a.name == ntfs::kI30Index.name ? ntfs::IndexKeys::file_name : ntfs::IndexKeys::raw;
    if (root && !root->non_resident) {
        const auto r = ntfs::decode_index_root(root->value);
        block_bytes = r.index_block_bytes;
        keys = ntfs::index_keys(a.name, r.indexed_type);
    }
    const ntfs::IndexBlocks ib = ntfs::read_index_blocks(vol, a, rec.find(ntfs::AttrType::bitmap, a.name),
                                                         block_bytes, keys, kMaxBlocks);
    d.j["block_bytes"] = block_bytes;
    d.j["blocks"] = json::array();
    if (ib.bitmap_error)
        d.lines.push_back(fmt::format("$BITMAP:{}: {}; every block shown", utf8(a.name), *ib.bitmap_error));
    for (const ntfs::IndexBlockSlot& slot : ib.slots) {
        if (!slot.decoded) {
            d.lines.push_back(fmt::format("block {}: CANNOT DECODE: {}", slot.block, slot.error));
            d.j["blocks"].push_back({{"block", slot.block}, {"error", slot.error}});
            continue;
        }
        const ntfs::IndexBlock& b = *slot.decoded;
        d.lines.push_back(fmt::format("block {} (VCN {}): entries at {}, {} used, {} allocated, flags 0x{:X}",
                                      slot.block, b.vcn, b.entries_offset, b.index_length, b.allocated_length,
                                      b.node_flags));
        json jb{{"block", slot.block}, {"vcn", b.vcn}, {"lsn", b.lsn}, {"node_flags", b.node_flags}};
        jb["entries"] = index_entries(b.entries, keys, d.lines, "  ");
        d.j["blocks"].push_back(jb);
    }
    if (ib.in_use.size() == kMaxBlocks)
        d.lines.push_back(
            fmt::format("(the first {} blocks in use shown, of {} blocks)", kMaxBlocks, ib.blocks));
}

Decoded decode_value(const ntfs::Volume& vol, const ntfs::MftRecord& rec, const ntfs::Attribute& a) {
    Decoded d;
    try {
        switch (a.kind()) {
            case ntfs::AttrType::standard_information: {
                if (a.non_resident) break;
                const auto si = ntfs::decode_standard_information(a.value);
                add_time(d, "creation_time", "created", si.creation_time);
                add_time(d, "modification_time", "modified", si.modification_time);
                add_time(d, "mft_change_time", "MFT changed", si.mft_change_time);
                add_time(d, "access_time", "accessed", si.access_time);
                d.j["file_attributes"] = si.file_attributes;
                d.lines.push_back(fmt::format("{:<18}0x{:08X} ({})", "attributes", si.file_attributes,
                                              ntfs::file_attribute_names(si.file_attributes)));
                if (a.value.size() >= ntfs::kStandardInformationSize) {
                    d.j["owner_id"] = si.owner_id;
                    d.j["security_id"] = si.security_id;
                    d.j["quota_charged"] = si.quota_charged;
                    d.j["usn"] = si.usn;
                    d.lines.push_back(fmt::format("{:<18}owner {}, security id 0x{:X}, quota {}, USN {}",
                                                  "NTFS 3.x", si.owner_id, si.security_id, si.quota_charged,
                                                  si.usn));
                }
                break;
            }
            case ntfs::AttrType::file_name: {
                if (a.non_resident) break;
                const auto fn = ntfs::decode_file_name(a.value);
                d.j["parent"] = ref_json(fn.parent);
                d.j["name"] = utf8(fn.name);
                d.j["namespace"] = ntfs::namespace_name(fn.name_space);
                d.lines.push_back(fmt::format("{:<18}\"{}\" ({})", "name", shown(utf8(fn.name)),
                                              ntfs::namespace_name(fn.name_space)));
                d.lines.push_back(fmt::format("{:<18}record {}, sequence {}", "parent", fn.parent.record,
                                              fn.parent.sequence));
                add_time(d, "creation_time", "created", fn.creation_time);
                add_time(d, "modification_time", "modified", fn.modification_time);
                add_time(d, "mft_change_time", "MFT changed", fn.mft_change_time);
                add_time(d, "access_time", "accessed", fn.access_time);
                d.j["allocated_size"] = fn.allocated_size;
                d.j["data_size"] = fn.data_size;
                d.j["file_attributes"] = fn.file_attributes;
                d.j["reparse_or_ea"] = fn.reparse_or_ea;
                d.lines.push_back(
                    fmt::format("{:<18}{} data, {} allocated", "sizes", fn.data_size, fn.allocated_size));
                d.lines.push_back(fmt::format("{:<18}0x{:08X} ({})", "attributes", fn.file_attributes,
                                              ntfs::file_attribute_names(fn.file_attributes)));
                break;
            }
            case ntfs::AttrType::volume_name: {
                if (a.non_resident) break;
                d.j["label"] = utf8(ntfs::decode_utf16(a.value));
                d.lines.push_back(
                    fmt::format("{:<18}\"{}\"", "label", shown(d.j["label"].get<std::string>())));
                break;
            }
            case ntfs::AttrType::volume_information: {
                if (a.non_resident) break;
                const auto vi = ntfs::decode_volume_information(a.value);
                d.j["version"] = fmt::format("{}.{}", vi.major, vi.minor);
                d.j["flags"] = vi.flags;
                d.lines.push_back(fmt::format("{:<18}{}.{}", "version", vi.major, vi.minor));
                d.lines.push_back(
                    fmt::format("{:<18}0x{:04X} ({})", "flags", vi.flags, ntfs::volume_flag_names(vi.flags)));
                break;
            }
            case ntfs::AttrType::index_root: {
                if (a.non_resident) break;
                const auto r = ntfs::decode_index_root(a.value);
                d.j["indexed_type"] = r.indexed_type;
                d.j["collation_rule"] = r.collation_rule;
                d.j["index_block_bytes"] = r.index_block_bytes;
                d.j["clusters_per_block"] = r.clusters_per_block;
                d.j["node"] = {{"entries_offset", r.entries_offset},
                               {"index_length", r.index_length},
                               {"allocated_length", r.allocated_length},
                               {"flags", r.node_flags}};
                d.lines.push_back(
                    fmt::format("{:<18}type 0x{:X}, collation 0x{:X}, block {} bytes ({} per block)", "index",
                                r.indexed_type, r.collation_rule, r.index_block_bytes, r.clusters_per_block));
                d.lines.push_back(fmt::format("{:<18}entries at {}, {} used, {} allocated, flags 0x{:X}{}",
                                              "node", r.entries_offset, r.index_length, r.allocated_length,
                                              r.node_flags,
                                              r.node_flags & 1 ? " (large: sub-nodes in INDX blocks)" : ""));
                d.j["entries"] =
                    index_entries(r.entries, ntfs::index_keys(a.name, r.indexed_type), d.lines, "  ");
                break;
            }
            case ntfs::AttrType::index_allocation:
                if (a.non_resident) index_blocks(d, vol, rec, a);
                break;
            case ntfs::AttrType::attribute_list: {
                const auto bytes = vol.read_stream(a, kMaxListBytes);
                const auto list = ntfs::decode_attribute_list(bytes);
                d.j["entries"] = json::array();
                for (const auto& e : list) {
                    std::string name(ntfs::attr_type_name(e.type));
                    if (name.empty()) name = fmt::format("0x{:X}", e.type);
                    if (!e.name.empty()) name += ":" + utf8(e.name);
                    d.j["entries"].push_back({{"type", e.type},
                                              {"name", utf8(e.name)},
                                              {"starting_vcn", e.starting_vcn},
                                              {"record", ref_json(e.record)},
                                              {"instance", e.instance}});
                    d.lines.push_back(fmt::format("  {:<26} VCN {:>10} in record {} seq {}, instance {}",
                                                  name, e.starting_vcn, e.record.record, e.record.sequence,
                                                  e.instance));
                }
                break;
            }
            default:
                if (!a.non_resident && !a.value.empty()) {
                    d.j["value_hex"] = hex_bytes(a.value, 64);
                    d.lines.push_back(fmt::format("{:<18}{}", "bytes", hex_bytes(a.value, 32)));
                }
                break;
        }
    } catch (const Error& e) {
        d.j = {{"error", e.what()}};
        d.lines = {fmt::format("CANNOT DECODE: {}", e.what())};
    }
    return d;
}

json record_json(const std::string& image, const io::OpenedVolume& v, const ntfs::Volume& vol,
                 const ntfs::MftRecord& r) {
    const auto& h = r.header;
    json j;
    j["schema_version"] = 1;
    j["image"] = image;
    j["filesystem"] = "ntfs";
    j["volume_offset"] = v.offset();
    j["record"] = r.number;
    j["byte_offset"] = r.byte_offset;
    j["header"] = {{"signature", std::string(h.magic.begin(), h.magic.end())},
                   {"usa_offset", h.usa_offset},
                   {"usa_count", h.usa_count},
                   {"update_sequence_number", r.update_sequence_number},
                   {"fixups_verified", r.fixup_strides},
                   {"lsn", h.lsn},
                   {"sequence", h.sequence},
                   {"link_count", h.link_count},
                   {"first_attribute", h.first_attribute},
                   {"flags", h.flags},
                   {"bytes_in_use", h.bytes_in_use},
                   {"bytes_allocated", h.bytes_allocated},
                   {"base_record", ref_json(ntfs::FileReference::unpack(h.base_record))},
                   {"next_instance", h.next_instance},
                   {"record_number", h.record_number}};
    j["attributes"] = json::array();
    for (const auto& a : r.attributes) {
        json ja{{"type", a.type},
                {"type_name", std::string(ntfs::attr_type_name(a.type))},
                {"offset", a.offset},
                {"length", a.length},
                {"non_resident", a.non_resident},
                {"name", utf8(a.name)},
                {"flags", a.flags},
                {"instance", a.instance}};
        if (!a.non_resident) {
            ja["value_length"] = a.value.size();
            ja["value_offset"] = a.value_offset;
            ja["indexed"] = a.indexed;
        } else {
            ja["first_vcn"] = static_cast<std::uint64_t>(a.first_vcn);
            ja["last_vcn"] = static_cast<std::uint64_t>(a.last_vcn);
            ja["runlist_offset"] = a.runlist_offset;
            ja["compression_unit"] = a.compression_unit;
            ja["allocated_size"] = a.allocated_size;
            ja["data_size"] = a.data_size;
            ja["initialized_size"] = a.initialized_size;
            if (a.compressed_size) ja["compressed_size"] = *a.compressed_size;
            ja["runs"] = runs_json(a);
        }
        ja["decoded"] = decode_value(vol, r, a).j;
        j["attributes"].push_back(ja);
    }
    return j;
}

void print_record(const ntfs::Volume& vol, const ntfs::MftRecord& r) {
    const auto& h = r.header;
    fmt::print("MFT record {} at volume byte {} (0x{:X})\n", r.number, r.byte_offset, r.byte_offset);
    fmt::print("  signature         \"{}\"\n", shown(std::string(h.magic.begin(), h.magic.end())));
    fmt::print(
        "  fixups            {} strides verified, update sequence number 0x{:04X} (array at 0x{:X}, {} "
        "entries)\n",
        r.fixup_strides, r.update_sequence_number, h.usa_offset, h.usa_count);
    fmt::print("  $LogFile LSN      {}\n", h.lsn);
    fmt::print("  sequence number   {}\n", h.sequence);
    fmt::print("  link count        {}\n", h.link_count);
    fmt::print("  flags             0x{:04X} ({})\n", h.flags, ntfs::record_flag_names(h.flags));
    fmt::print("  bytes in use      {} of {} allocated\n", h.bytes_in_use, h.bytes_allocated);
    fmt::print("  first attribute   0x{:X}\n", h.first_attribute);
    const auto base = ntfs::FileReference::unpack(h.base_record);
    fmt::print("  base record       {}\n",
               h.base_record ? fmt::format("record {}, sequence {}", base.record, base.sequence)
                             : std::string("0 (this is a base record)"));
    fmt::print("  next instance     {}\n", h.next_instance);
    fmt::print("  record number     {}\n", h.record_number);
    for (const auto& a : r.attributes) {
        fmt::print("\nAttribute 0x{:X} {}{} at 0x{:X}, {} bytes, {}, instance {}, flags 0x{:04X}{}\n", a.type,
                   ntfs::attr_type_name(a.type).empty() ? "(unknown)" : ntfs::attr_type_name(a.type),
                   a.name.empty() ? "" : " \"" + utf8(a.name) + "\"", a.offset, a.length,
                   a.non_resident ? "non-resident" : "resident", a.instance, a.flags,
                   a.flags ? " (" + ntfs::attribute_flag_names(a.flags) + ")" : "");
        if (!a.non_resident) {
            fmt::print("    value             {} bytes at 0x{:X}{}\n", a.value.size(), a.value_offset,
                       a.indexed ? ", indexed" : "");
        } else {
            fmt::print("    VCNs              {}..{}\n", static_cast<std::uint64_t>(a.first_vcn),
                       static_cast<std::int64_t>(a.last_vcn));
            fmt::print(
                "    sizes             {} data, {} allocated, {} initialized{}\n", a.data_size,
                a.allocated_size, a.initialized_size,
                a.compressed_size ? fmt::format(", {} compressed", *a.compressed_size) : std::string());
            if (a.compression_unit) fmt::print("    compression unit  2^{} clusters\n", a.compression_unit);
        }
        for (const auto& line : decode_value(vol, r, a).lines) fmt::print("    {}\n", line);
        if (a.non_resident) {
            fmt::print("    runlist at 0x{:X}, {} run(s):\n", a.runlist_offset, a.runs.size());
            print_runs(a, "    ");
        }
    }
}

}  // namespace

int dump_ntfs(const std::string& image, const io::OpenedVolume& v, const fs::Detection& d, bool json_out,
              const nlohmann::json& table) {
    const BootView b = read_boot_view(const_cast<io::OpenedVolume&>(v).device(), d);
    if (json_out) {
        fmt::print("{}\n", boot_json(image, v, b, table).dump(2));
    } else {
        print_boot(image, v, b, table);
    }
    return b.errors.empty() && b.problems.empty() ? kExitOk : kExitFailure;
}

int dump_ntfs_record(const std::string& n_text, const std::string& image, const io::OpenedVolume& v,
                     const io::BlockDevice& reading, bool json_out) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(n_text.data(), n_text.data() + n_text.size(), n);
    if (ec != std::errc() || end != n_text.data() + n_text.size())
        throw Error(ErrorCode::usage, "dump --what mft: \"" + n_text + "\" is not a record number");
    const ntfs::Volume vol(reading);
    const ntfs::MftRecord r = vol.read_record(n);
    if (json_out) {
        fmt::print("{}\n", record_json(image, v, vol, r).dump(2));
    } else {
        print_record(vol, r);
    }
    return kExitOk;
}

}  // namespace fsimg::cli
