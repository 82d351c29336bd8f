// fsimg disk: a partitioned disk image from a layout: an MBR or a GPT, one
// --part per partition, each filled with a filesystem (as mkfs makes it), a
// raw image file, or nothing.
#include <fmt/format.h>
#include <sys/stat.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/core/utf8_safe.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/partition.hpp"
#include "fsimg/io/probe.hpp"
#include "mkfs_common.hpp"
#include "mkfs_populate.hpp"
#include "output.hpp"

namespace fsimg::cli {

namespace {

constexpr std::uint32_t kSectorSize = 512;
constexpr std::uint64_t kDefaultAlign = 1u << 20;  // 1 MiB, as sfdisk and sgdisk align

struct DiskArgs {
    std::string table;
    std::string size;
    std::string disk_id;
    std::string volume_id;
    std::string align;  ///< --align: where partitions start and end
    std::vector<std::string> parts;
    std::string definitions;  ///< --definitions: a repart.d folder
    std::string copy_source;  ///< --copy-source: where CopyFiles= paths start
    bool force = false;
    bool quiet = false;
    bool json = false;
    PopulateArgs populate;  // the options every from= shares (--symlinks, --rename, ...)
    std::string image;
};

/// How a partition is sized, in sectors.
struct Sizing {
    std::optional<std::uint64_t> fixed;  ///< size=SIZE, SizeMinBytes= = SizeMaxBytes=
    std::uint64_t min = 0;               ///< a lower bound of the others
    std::optional<std::uint64_t> max;    ///< an upper bound when growing
    std::uint64_t weight = 0;            ///< > 0: grows into what -s leaves, in proportion (repart's Weight=)
    bool auto_min = false;               ///< what the from= trees need is a lower bound (size=auto)
    bool image_min = false;              ///< the image= file's size is a lower bound (CopyBlocks=)
    bool rest = false;                   ///< size=rest (messages)
};

/// One partition, as given (a --part, or a repart.d file).
struct PartSpec {
    unsigned ordinal = 0;  ///< 1-based position in the table order, for messages
    std::string where;     ///< "--part 2" or "repart.d/10-esp.conf", for messages
    std::string size;      ///< SIZE, "rest" or "auto" (--part)
    Sizing sizing;
    std::string start;  ///< SIZE or Ns; empty: after the one before
    std::string type, name, uuid;
    bool bootable = false;
    std::string fs, label, cluster, volume_id;
    std::string free;  ///< size=auto: the free space to leave (mkfs --free)
    std::vector<std::string> from;
    std::string image;  ///< a raw image file copied in
};

[[noreturn]] void refuse_part(const PartSpec& p, const std::string& why) {
    throw Error(ErrorCode::usage, fmt::format("{}: {}", p.where, why));
}

/// "size=64M,fs=fat32,label=BOOT,from=boot/,bootable": key=value items
/// separated by commas; "\," is a comma inside a value.
PartSpec parse_part(const std::string& text, unsigned ordinal) {
    PartSpec p;
    p.ordinal = ordinal;
    p.where = fmt::format("--part {}", ordinal);
    std::vector<std::string> items(1);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ',') {
            items.back() += ',';
            ++i;
        } else if (text[i] == ',') {
            items.emplace_back();
        } else {
            items.back() += text[i];
        }
    }
    std::vector<std::string> seen;
    for (const std::string& item : items) {
        if (item.empty()) continue;
        const auto eq = item.find('=');
        const std::string key = item.substr(0, eq);
        const std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
        if (key == "bootable") {
            if (eq != std::string::npos) refuse_part(p, "bootable takes no value");
            p.bootable = true;
            continue;
        }
        if (eq == std::string::npos)
            refuse_part(p, fmt::format("\"{}\" is not KEY=VALUE (keys: size, start, type, name, uuid, "
                                       "bootable, fs, label, cluster, volume-id, from, free, image)",
                                       core::escape_controls(item)));
        if (key != "from") {
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
                refuse_part(p, fmt::format("{}= is given twice", key));
            seen.push_back(key);
        }
        if (value.empty() && key != "name" && key != "label")
            refuse_part(p, fmt::format("{}= needs a value", key));
        if (key == "size") {
            p.size = value;
        } else if (key == "start") {
            p.start = value;
        } else if (key == "type") {
            p.type = value;
        } else if (key == "name") {
            p.name = value;
        } else if (key == "uuid") {
            p.uuid = value;
        } else if (key == "fs") {
            p.fs = value;
        } else if (key == "label") {
            p.label = value;
        } else if (key == "cluster") {
            p.cluster = value;
        } else if (key == "volume-id") {
            p.volume_id = value;
        } else if (key == "from") {
            p.from.push_back(value);
        } else if (key == "image") {
            p.image = value;
        } else if (key == "free") {
            p.free = value;
        } else {
            refuse_part(p, fmt::format("unknown key \"{}\" (keys: size, start, type, name, uuid, bootable, "
                                       "fs, label, cluster, volume-id, from, free, image)",
                                       core::escape_controls(key)));
        }
    }
    static constexpr std::string_view kFs[] = {"fat", "fat12", "fat16", "fat32", "exfat", "ntfs"};
    if (!p.fs.empty() && std::find(std::begin(kFs), std::end(kFs), p.fs) == std::end(kFs))
        refuse_part(p, fmt::format("fs={}: give fat12, fat16, fat32, fat (chosen by size), exfat or ntfs",
                                   core::escape_controls(p.fs)));
    if (!p.image.empty() && !p.fs.empty())
        refuse_part(p, "give fs= (a new filesystem) or image= (a file copied in), not both");
    const bool fs_only = !p.label.empty() || !p.cluster.empty() || !p.volume_id.empty() || !p.from.empty();
    if (fs_only && p.fs.empty())
        refuse_part(p, "label=, cluster=, volume-id= and from= are for a new filesystem: give fs=");
    if (p.size.empty())
        refuse_part(p,
                    "give its size: size=SIZE (256M, 1G, 2048s), size=rest (what the others leave) or "
                    "size=auto (what from= needs)");
    if (p.size == "auto" && p.from.empty())
        refuse_part(p, "size=auto sizes the filesystem to its from= trees; give fs= and from=, or a size");
    if (!p.free.empty() && p.size != "auto")
        refuse_part(p,
                    "free= is the room size=auto leaves beside the trees; with a fixed size the free "
                    "space is what the trees leave");
    return p;
}

/// SIZE or Ns as sectors; `what` names the key in errors.
std::uint64_t parse_sectors(const PartSpec& p, const std::string& text, const char* what);

/// --part's size= as a Sizing.
void size_part(PartSpec& p) {
    if (p.size == "rest") {
        p.sizing.weight = 1000;
        p.sizing.min = 1;
        p.sizing.rest = true;
    } else if (p.size == "auto") {
        p.sizing.auto_min = true;
    } else {
        p.sizing.fixed = parse_sectors(p, p.size, "size");
    }
}

/// SIZE or Ns as sectors; `what` names the key in errors.
std::uint64_t parse_sectors(const PartSpec& p, const std::string& text, const char* what) {
    std::uint64_t sectors = 0;
    if (!text.empty() && text.back() == 's') {
        const auto digits = std::string_view(text).substr(0, text.size() - 1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), sectors);
        if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size())
            refuse_part(p, fmt::format("{}={}: give a size (1M) or sectors (2048s)", what, text));
    } else {
        const std::uint64_t bytes = core::parse_size(text);
        if (bytes % kSectorSize != 0)
            refuse_part(
                p, fmt::format("{}={} is not a whole number of {}-byte sectors", what, text, kSectorSize));
        sectors = bytes / kSectorSize;
    }
    if (sectors == 0) refuse_part(p, fmt::format("{}={} is zero", what, text));
    return sectors;
}

std::uint64_t align_up(std::uint64_t lba, std::uint64_t align) { return (lba + align - 1) / align * align; }

/// The type of a partition in the table as first written: type= when given,
/// else what its content is (the filesystem's type, which mkfs sets again;
/// "linux" for a raw image or nothing, as sfdisk and sgdisk default).
io::PartitionType initial_type(const PartSpec& p, io::PartitionTableKind kind) {
    const bool gpt = kind == io::PartitionTableKind::gpt;
    if (!p.type.empty()) {
        if (const auto named = io::named_partition_type(p.type)) {
            if (gpt && named->gpt == io::Guid{})
                refuse_part(p, fmt::format("type={} is an MBR type; a GPT has none", p.type));
            if (!gpt && named->mbr == 0)
                refuse_part(p, fmt::format("type={} is a GPT type; an MBR has none", p.type));
            return *named;
        }
        if (gpt) {
            if (const auto g = io::parse_guid(p.type)) return {0, *g};
        } else if (const auto b = parse_mbr_type(p.type)) {
            if (io::is_extended_type(*b))
                refuse_part(p, fmt::format("type={} is an extended partition; fsimg disk makes one itself "
                                           "when an MBR has more than four partitions",
                                           p.type));
            return {*b, {}};
        }
        refuse_part(p, fmt::format("type={}: give a name ({}) or {}", p.type, io::partition_type_names(),
                                   gpt ? "a GPT type GUID" : "an MBR type byte in hex (0c, 0x83)"));
    }
    const char* name = p.fs.empty()                        ? "linux"
                       : p.fs == "exfat" || p.fs == "ntfs" ? "exfat"
                       : p.fs == "fat12"                   ? "fat12"
                       : p.fs == "fat16"                   ? "fat16-lba"
                                                           : "fat32-lba";
    io::PartitionType t = *io::named_partition_type(name);
    if (!p.fs.empty()) t.gpt = io::kGptBasicDataType;
    return t;
}

/// Where each partition goes. MBR with more than four: the first three are
/// primary, the fourth entry an extended partition holding the rest as
/// logical partitions 5, 6, ..., each --align (1 MiB) behind its EBR (as sfdisk
/// places them).
struct Planned {
    const PartSpec* spec = nullptr;  ///< nullptr: the extended partition
    io::Partition entry;
};

/// A repart.d Type= identifier as fsimg's type= (a name named_partition_type
/// knows, or a GUID): repart.d(5) and the Discoverable Partitions
/// Specification (docs/formats.md §4.2). "root" and "usr" are those of the
/// architecture fsimg was built for, as repart takes the local one.
std::optional<std::string> repart_type(const std::string& id) {
    static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
        {"esp", "esp"},
        {"linux-generic", "linux"},
        {"swap", "linux-swap"},
        {"xbootldr", "BC13C2FF-59E6-4262-A352-B275FD6F7172"},
        {"home", "933AC7E1-2EB4-4F13-B844-0E14E2AEF915"},
        {"srv", "3B8F8425-20E0-4F3B-907F-1A25A76F98E8"},
        {"var", "4D21B016-B534-45C2-A9FB-5C16E091FD2D"},
        {"tmp", "7EC6F557-3BC5-4ACA-B293-16EF5DF639D1"},
        {"root-x86-64", "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"},
        {"root-x86", "44479540-F297-41B2-9AF7-D131D5F0458A"},
        {"root-arm64", "B921B045-1DF0-41C3-AF44-4C6F280D3FAE"},
        {"root-arm", "69DAD710-2CE4-4E3C-B16C-21A1D49ABED3"},
        {"usr-x86-64", "8484680C-9521-48C6-9C11-B0720656F69E"},
#if defined(__aarch64__)
        {"root", "B921B045-1DF0-41C3-AF44-4C6F280D3FAE"},
#elif defined(__i386__)
        {"root", "44479540-F297-41B2-9AF7-D131D5F0458A"},
#elif defined(__arm__)
        {"root", "69DAD710-2CE4-4E3C-B16C-21A1D49ABED3"},
#else
        {"root", "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"},
        {"usr", "8484680C-9521-48C6-9C11-B0720656F69E"},
#endif
    };
    for (const auto& [name, type] : kTypes)
        if (name == id) return std::string(type);
    if (io::parse_guid(id) || io::named_partition_type(id)) return id;  // a GUID; fsimg's names too
    return std::nullopt;
}

/// repart.d's sizes: K, M, G, T are powers of 1024 (as core::parse_size);
/// SizeMinBytes= rounded up and SizeMaxBytes= down to 4096 bytes.
std::uint64_t repart_bytes(const PartSpec& p, const std::string& key, const std::string& value, bool up) {
    std::uint64_t bytes = 0;
    try {
        bytes = core::parse_size(value);
    } catch (const Error& e) {
        refuse_part(p, fmt::format("{}={}: {}", key, value, e.what()));
    }
    return up ? core::div_ceil(bytes, std::uint64_t{4096}) * 4096 : bytes / 4096 * 4096;
}

/// systemd-repart partition definition files (repart.d(5)): the *.conf
/// files of `dir` in file-name order, one [Partition] section each, as
/// PartSpecs. CopyFiles= sources are taken below `copy_source` when it is
/// given (repart's --copy-source). Keys fsimg does not carry out are
/// refused naming the file and line, never ignored.
std::vector<PartSpec> read_definitions(const std::string& dir, const std::string& copy_source) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".conf") files.push_back(it->path());
    if (ec) throw Error(ErrorCode::usage, fmt::format("--definitions {}: {}", dir, ec.message()));
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return a.filename().string() < b.filename().string(); });
    if (files.empty())
        throw Error(ErrorCode::usage, fmt::format("--definitions {}: no *.conf file (repart.d(5))", dir));
    std::vector<PartSpec> out;
    for (const auto& file : files) {
        PartSpec p;
        p.ordinal = static_cast<unsigned>(out.size() + 1);
        p.where = file.string();
        std::ifstream in(file);
        if (!in) throw Error(ErrorCode::io, fmt::format("cannot read {}", file.string()));
        std::string line, section;
        std::string type = "linux-generic", format, minimize = "off";
        std::optional<std::string> min_text, max_text;
        std::uint64_t weight = 1000;
        std::vector<std::string> copy_files;
        bool any_section = false;
        for (unsigned number = 1; std::getline(in, line); ++number) {
            const auto at = [&](const std::string& why) {
                throw Error(ErrorCode::usage, fmt::format("{}:{}: {}", file.string(), number, why));
            };
            const auto trim = [](std::string t) {
                const auto a = t.find_first_not_of(" \t\r");
                if (a == std::string::npos) return std::string();
                return t.substr(a, t.find_last_not_of(" \t\r") - a + 1);
            };
            line = trim(line);
            if (line.empty() || line[0] == '#' || line[0] == ';') continue;
            if (line.back() == '\\') at("continued lines are not read by fsimg disk; join them");
            if (line.front() == '[') {
                section = line;
                if (section != "[Partition]")
                    at(fmt::format("{}: fsimg disk reads the [Partition] section only",
                                   core::escape_controls(section)));
                any_section = true;
                continue;
            }
            if (section.empty()) at("a setting before the [Partition] section");
            const auto eq = line.find('=');
            if (eq == std::string::npos)
                at(fmt::format("\"{}\" is not KEY=VALUE", core::escape_controls(line)));
            const std::string key = trim(line.substr(0, eq));
            const std::string value = trim(line.substr(eq + 1));
            if (value.find('%') != std::string::npos)
                at(fmt::format("{}={}: specifiers (%) are not expanded by fsimg disk", key,
                               core::escape_controls(value)));
            if (key == "Type") {
                type = value;
            } else if (key == "Label") {
                p.label = value;
                p.name = value;
            } else if (key == "UUID") {
                if (!io::parse_guid(value))
                    at(fmt::format("UUID={}: give a GUID", core::escape_controls(value)));
                p.uuid = value;
            } else if (key == "Weight") {
                const auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), weight);
                if (err != std::errc{} || end != value.data() + value.size() || weight > 1000000)
                    at(fmt::format("Weight={}: give 0..1000000", core::escape_controls(value)));
            } else if (key == "SizeMinBytes") {
                min_text = value;
            } else if (key == "SizeMaxBytes") {
                max_text = value;
            } else if (key == "Format") {
                format = value;
            } else if (key == "CopyFiles") {
                if (value.empty())
                    copy_files.clear();  // an empty assignment resets the list, as in every systemd list
                else
                    copy_files.push_back(value);
            } else if (key == "CopyBlocks") {
                if (value == "auto") at("CopyBlocks=auto copies from the running system; give a file");
                p.image = value;
            } else if (key == "Minimize") {
                if (value != "off" && value != "best" && value != "guess")
                    at(fmt::format("Minimize={}: give off, best or guess", core::escape_controls(value)));
                minimize = value;
            } else if (key == "Priority") {
                // Only decides which partitions repart drops when they do not
                // fit; fsimg drops none and refuses such a layout.
            } else if ((key == "PaddingWeight" || key == "PaddingMinBytes" || key == "PaddingMaxBytes") &&
                       (value == "0" || value.empty())) {
                // No padding: what fsimg does.
            } else {
                at(
                    fmt::format("{}= is not supported by fsimg disk (it reads Type=, Label=, UUID=, Weight=, "
                                "SizeMinBytes=, SizeMaxBytes=, Format=, CopyFiles=, CopyBlocks=, Minimize=, "
                                "Priority=)",
                                core::escape_controls(key)));
            }
        }
        if (!any_section) refuse_part(p, "no [Partition] section");
        const auto t = repart_type(type);
        if (!t)
            refuse_part(p, fmt::format("Type={} is not one fsimg knows (esp, xbootldr, swap, home, srv, var, "
                                       "tmp, linux-generic, root, root-x86-64, root-arm64, ..., or a GUID)",
                                       core::escape_controls(type)));
        p.type = *t;
        if (p.name.empty())
            p.name = type;  // repart names a partition after its type when Label= is not given
        if (format.empty() && !copy_files.empty()) {
            if (type != "esp" && type != "xbootldr")
                refuse_part(p,
                            "CopyFiles= without Format= means ext4 to systemd-repart, which fsimg does not "
                            "make: give Format=vfat, exfat or ntfs");
            format = "vfat";
        }
        if (format == "vfat")
            p.fs = "fat";
        else if (format == "exfat" || format == "ntfs")
            p.fs = format;
        else if (!format.empty())
            refuse_part(
                p, fmt::format("Format={}: fsimg makes vfat, exfat and ntfs", core::escape_controls(format)));
        if (!p.image.empty() && !p.fs.empty())
            refuse_part(p, "CopyBlocks= cannot be combined with Format= or CopyFiles= (repart.d(5))");
        for (const std::string& c : copy_files) {
            const auto colon = c.find(':');
            const std::string source = c.substr(0, colon);
            const std::string target = colon == std::string::npos ? source : c.substr(colon + 1);
            if (source.empty() || source[0] != '/' || target.empty() || target[0] != '/')
                refuse_part(p, fmt::format("CopyFiles={}: both paths are absolute (repart.d(5))",
                                           core::escape_controls(c)));
            p.from.push_back((copy_source.empty() ? source : copy_source + source) + ":" + target);
        }
        Sizing& z = p.sizing;
        z.min = (min_text ? repart_bytes(p, "SizeMinBytes", *min_text, true) : 10u << 20) / kSectorSize;
        z.min = std::max<std::uint64_t>(z.min, 4096 / kSectorSize);
        if (max_text) {
            z.max = repart_bytes(p, "SizeMaxBytes", *max_text, false) / kSectorSize;
            if (*z.max < z.min) refuse_part(p, "SizeMaxBytes= is below SizeMinBytes=");
        }
        if (z.max && *z.max == z.min) {
            z.fixed = z.min;
        } else {
            z.auto_min = !p.from.empty();
            z.image_min = !p.image.empty();
            z.weight = minimize == "off" ? weight : 0;  // Minimize=best|guess: as small as it can be
        }
        if (minimize != "off" && p.from.empty())
            refuse_part(p, "Minimize= sizes the filesystem to its CopyFiles= trees; there are none");
        out.push_back(std::move(p));
    }
    return out;
}

/// The sectors a size=auto partition starting at `start` needs.
using AutoSize = std::function<std::uint64_t(const PartSpec&, std::uint64_t start)>;

std::vector<Planned> plan(const std::vector<PartSpec>& specs, io::PartitionTableKind kind,
                          std::optional<std::uint64_t> disk_sectors, std::uint64_t align,
                          std::uint64_t& disk_out, const AutoSize& auto_sectors) {
    const bool gpt = kind == io::PartitionTableKind::gpt;
    const bool logical = !gpt && specs.size() > 4;
    if (gpt && specs.size() > 128)
        throw Error(ErrorCode::usage, fmt::format("a GPT holds 128 partitions; {} were given", specs.size()));
    // GPT: primary array up to LBA 33; backup array and header in the last 33 sectors.
    const std::uint64_t first_usable = gpt ? 34 : 1;
    const std::uint64_t tail = gpt ? 33 : 0;
    std::vector<std::size_t> growers;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const PartSpec& p = specs[i];
        if (p.sizing.weight == 0) continue;
        if (p.sizing.rest) {
            for (std::size_t g : growers)
                if (specs[g].sizing.rest)
                    refuse_part(p, fmt::format("size=rest is given for {} already", specs[g].where));
            if (!disk_sectors)
                refuse_part(p,
                            "size=rest is what the other partitions leave of the disk: give the disk's size "
                            "with -s");
        }
        growers.push_back(i);
    }
    // The smallest a partition can be at sector `first`.
    const auto base = [&](const PartSpec& p, std::uint64_t first) {
        if (p.sizing.fixed) return *p.sizing.fixed;
        std::uint64_t b = p.sizing.min;
        if (p.sizing.auto_min) b = std::max(b, auto_sectors(p, first));
        if (p.sizing.image_min) {
            std::error_code ec;
            const std::uint64_t bytes = std::filesystem::file_size(p.image, ec);
            if (!ec) b = std::max(b, core::div_ceil(bytes, std::uint64_t{kSectorSize}));
        }
        return b;
    };
    std::vector<std::uint64_t> extra(specs.size());   // sectors beyond the base, for the growers
    std::vector<std::uint64_t> lowest(specs.size());  // the base, as last placed
    std::vector<Planned> out;
    const auto place = [&] {
        out.clear();
        std::uint64_t cursor = align_up(first_usable, align);
        for (std::size_t i = 0; i < specs.size(); ++i) {
            const PartSpec& p = specs[i];
            const bool is_logical = logical && i >= 3;
            if (is_logical && i == 3) {
                Planned ext;
                ext.entry.index = 4;
                ext.entry.mbr_type = 0x0F;  // W95 extended (LBA), as sfdisk and fdisk make it
                ext.entry.first_lba = cursor;
                out.push_back(ext);
            }
            std::uint64_t ebr = 0;
            if (is_logical) {
                ebr = cursor;
                cursor += align;
            }
            std::uint64_t first = cursor;
            if (!p.start.empty()) {
                first = parse_sectors(p, p.start, "start");
                if (is_logical)
                    refuse_part(p, "start= is for primary partitions; a logical partition follows its EBR");
                if (first < std::max(cursor, first_usable))
                    refuse_part(p, fmt::format("start={} (sector {}) lies on {}: it must be at sector {} or "
                                               "later",
                                               p.start, first,
                                               i == 0 ? "the partition table" : "the partition before",
                                               std::max(cursor, first_usable)));
            }
            lowest[i] = base(p, first);
            const std::uint64_t count = lowest[i] + extra[i];
            if (count == 0) refuse_part(p, "its size is zero");
            Planned pl;
            pl.spec = &p;
            pl.entry.index = is_logical ? static_cast<unsigned>(i + 2) : static_cast<unsigned>(i + 1);
            pl.entry.first_lba = first;
            pl.entry.sector_count = count;
            pl.entry.ebr_lba = ebr;
            pl.entry.bootable = p.bootable;
            pl.entry.name = p.name.empty() && kind == io::PartitionTableKind::gpt ? p.label : p.name;
            out.push_back(pl);
            cursor = align_up(first + count, align);
        }
        return out.back().entry.first_lba + out.back().entry.sector_count;
    };
    std::uint64_t used_end = place();
    if (disk_sectors && !growers.empty()) {
        // What the disk leaves after the others, ending on an --align boundary
        // (before GPT's backup) as partitioning tools end it, together with
        // the growers' own smallest sizes, is shared by the growers in
        // proportion to their weights (repart.d's Weight=): a grower whose
        // share is below its smallest size or above its largest
        // (SizeMaxBytes=) gets that size, and the rest is shared again among
        // the others.
        const std::uint64_t limit = *disk_sectors > tail ? *disk_sectors - tail : 0;
        std::uint64_t end = limit / align * align;
        if (end < used_end) end = limit;
        std::uint64_t remaining = end > used_end ? end - used_end : 0;
        for (std::size_t g : growers) remaining += lowest[g];
        std::vector<std::size_t> active = growers;
        std::vector<std::uint64_t> size(specs.size());
        const auto share_of = [&](std::size_t g, unsigned __int128 weights) {
            return static_cast<std::uint64_t>(
                remaining * static_cast<unsigned __int128>(specs[g].sizing.weight) / weights);
        };
        for (bool bounded = true; bounded && !active.empty();) {
            bounded = false;
            unsigned __int128 weights = 0;
            for (std::size_t g : active) weights += specs[g].sizing.weight;
            for (auto it = active.begin(); it != active.end(); ++it) {
                const std::uint64_t share = share_of(*it, weights);
                const auto& max = specs[*it].sizing.max;
                if (share < lowest[*it] || (max && share > *max)) {
                    size[*it] = share < lowest[*it] ? lowest[*it] : std::max(*max, lowest[*it]);
                    remaining -= std::min(remaining, size[*it]);
                    active.erase(it);
                    bounded = true;
                    break;
                }
            }
            if (bounded) continue;
            // Whole MiBs each, so that the partitions after stay aligned; the
            // last grower takes what the rounding leaves.
            std::uint64_t given = 0;
            for (std::size_t k = 0; k < active.size(); ++k) {
                const std::size_t g = active[k];
                const std::uint64_t share = share_of(g, weights);
                size[g] = k + 1 < active.size() ? std::max(share / align * align, lowest[g])
                                                : std::max(remaining - given, lowest[g]);
                given += size[g];
            }
        }
        for (std::size_t g : growers) extra[g] = size[g] - lowest[g];
        for (std::size_t g : growers)
            if (specs[g].sizing.rest && extra[g] == 0)
                refuse_part(specs[g],
                            fmt::format("size=rest leaves nothing: the other partitions fill the {} "
                                        "disk",
                                        core::format_size_both(*disk_sectors * kSectorSize)));
        used_end = place();
    }
    // The disk: -s, else up to the next --align boundary (and that more for
    // GPT's backup), as mkfs sizes a disk for its volume.
    const std::uint64_t need = used_end + tail;
    const std::uint64_t sectors =
        disk_sectors ? *disk_sectors : align_up(used_end, align) + (gpt ? align_up(tail, align) : 0);
    if (need > sectors)
        throw Error(
            ErrorCode::usage,
            fmt::format("the partitions need {} ({} sectors{}); the disk (-s) is {}",
                        core::format_size_both(need * kSectorSize), need, gpt ? ", GPT backup included" : "",
                        core::format_size_both(sectors * kSectorSize)));
    if (!gpt && sectors > 0xFFFFFFFFull && used_end > 0xFFFFFFFFull)
        throw Error(ErrorCode::usage,
                    "an MBR describes only the first 2 TiB (2^32 sectors of 512 bytes); use --table gpt");
    disk_out = sectors;
    if (logical) {
        Planned& ext = out[3];
        const io::Partition& last = out.back().entry;
        ext.entry.sector_count = last.first_lba + last.sector_count - ext.entry.first_lba;
    }
    return out;
}

/// The first `n` bytes of a GUID as a little-endian number.
std::uint64_t guid_bits(const io::Guid& g, unsigned n) {
    std::uint64_t v = 0;
    for (unsigned i = n; i-- > 0;) v = v << 8 | g[i];
    return v;
}

/// What mkfs is asked to make in a partition with fs= (the serial aside).
PartitionFilesystem filesystem_of(const PartSpec& p, const DiskArgs& a, bool image_exists) {
    PartitionFilesystem fs;
    fs.type = p.fs;
    fs.cluster = p.cluster;
    fs.label = p.label;
    fs.partition_type = p.type;
    if (!p.from.empty()) {
        fs.populate = a.populate;
        fs.populate.from = p.from;
        if (!p.free.empty()) fs.populate.free = p.free;                 // read by the sizing only
        if (image_exists) fs.populate.also_exclude.push_back(a.image);  // the file replaced
    }
    return fs;
}

std::uint64_t seed_of(const DiskArgs& a) {
    if (!a.volume_id.empty()) return parse_hex_volume_id(a.volume_id, 64);
    const CreationTime t = creation_time();
    return static_cast<std::uint64_t>(t.unix_seconds) * 1000000000ull + t.nanoseconds;
}

/// Copies the raw image file `path` into the partition, sparse (what the
/// file stores, all-zero 64 KiB blocks left as holes); returns its size.
/// The file is opened once and read through that descriptor.
std::uint64_t copy_image(const PartSpec& p, const std::string& path, io::BlockDevice& disk,
                         const io::Partition& e) {
    if (io::is_gzip_file(path))
        refuse_part(p, fmt::format("image={} is gzip-compressed; decompress it first", path));
    const auto source = io::FileImage::open(path, false);
    const std::uint64_t bytes = e.sector_count * kSectorSize;
    if (source->size() > bytes)
        refuse_part(p, fmt::format("image={} holds {}; the partition is {}", path,
                                   core::format_size_both(source->size()), core::format_size_both(bytes)));
    io::SubRange window(disk, e.first_lba * kSectorSize, bytes);
    io::copy_stored_bytes(*source, window, source->size(), 0);
    return source->size();
}

/// --json: the disk as written, read back: its table, and each partition's
/// entry with what it holds (a filesystem as mkfs --json describes it, a
/// copied image file, nothing, or the extended partition's logical ones).
void print_disk_json(const std::string& image, const std::vector<Planned>& layout) {
    const io::OpenedVolume disk = io::open_disk(image);
    nlohmann::json parts = nlohmann::json::array();
    for (const io::Partition& p : disk.table.partitions) {
        nlohmann::json j = partition_json(disk.table, p);
        const auto planned = std::find_if(layout.begin(), layout.end(),
                                          [&](const Planned& pl) { return pl.entry.index == p.index; });
        const PartSpec* spec = planned == layout.end() ? nullptr : planned->spec;
        j["filesystem"] = nullptr;
        j["source"] = nullptr;
        if (spec == nullptr) {
            j["content"] = "extended";
        } else if (!spec->fs.empty()) {
            j["content"] = "filesystem";
            io::OpenedVolume v = io::open_volume(fmt::format("{}@{}", image, p.index));
            j["filesystem"] = volume_json(v);
        } else if (!spec->image.empty()) {
            j["content"] = "image";
            j["source"] = core::escape_invalid_utf8(spec->image);
        } else {
            j["content"] = "empty";
        }
        parts.push_back(std::move(j));
    }
    nlohmann::json d = disk_json(disk.table);
    d["size"] = disk.file->size();
    const nlohmann::json out{{"schema_version", 1},
                             {"image", core::escape_invalid_utf8(image)},
                             {"disk", d},
                             {"partitions", parts}};
    fmt::print("{}\n", out.dump(2));
}

int run_disk(DiskArgs a) {
    if (!a.definitions.empty()) {
        if (!a.parts.empty())
            throw Error(ErrorCode::usage, "give the partitions with --part or with --definitions, not both");
        if (a.table == "mbr")
            throw Error(ErrorCode::usage,
                        "repart.d files describe GPT partitions; leave --table out or give gpt");
        a.table = "gpt";
    } else {
        if (!a.copy_source.empty())
            throw Error(ErrorCode::usage,
                        "--copy-source is where repart.d's CopyFiles= paths start; give "
                        "--definitions");
        if (a.parts.empty())
            throw Error(ErrorCode::usage, "give the partitions: --part SPEC (or --definitions DIR)");
        if (a.table.empty())
            throw Error(ErrorCode::usage, "give the partition table: --table mbr or --table gpt");
    }
    const io::PartitionTableKind kind = io::parse_partition_table_kind(a.table);
    if (kind == io::PartitionTableKind::none)
        throw Error(ErrorCode::usage,
                    "--table none makes no disk; use fsimg mkfs for an unpartitioned image");
    const bool gpt = kind == io::PartitionTableKind::gpt;
    std::vector<PartSpec> specs;
    if (!a.definitions.empty()) specs = read_definitions(a.definitions, a.copy_source);
    for (const std::string& text : a.parts) {
        specs.push_back(parse_part(text, static_cast<unsigned>(specs.size() + 1)));
        size_part(specs.back());
    }
    for (const PartSpec& p : specs) {
        if (!gpt && (!p.name.empty() || !p.uuid.empty()))
            refuse_part(p, "name= and uuid= are GPT fields; an MBR entry has neither");
        if (gpt && p.bootable) refuse_part(p, "bootable is the MBR active flag; a GPT partition has none");
        if (!p.uuid.empty() && !io::parse_guid(p.uuid))
            refuse_part(p, fmt::format("uuid={}: not a GUID (8-4-4-4-12 hex digits)", p.uuid));
        if (core::utf8_to_utf16(p.name).size() > 36)
            refuse_part(
                p, fmt::format("name=\"{}\" is longer than the 36 UTF-16 units a GPT entry holds", p.name));
        (void)initial_type(p, kind);  // refuse a bad type before anything is made
        for (const std::string& from : p.from) {
            if (from.empty()) refuse_part(p, "from= needs a DIR or FILE");
        }
    }
    {
        PartitionOptions o;  // --disk-id, checked as mkfs checks it
        o.disk_id = a.disk_id;
        check_partition_options(o, kind, false);
    }
    const PopulateArgs& po = a.populate;
    const bool any_from =
        std::any_of(specs.begin(), specs.end(), [](const PartSpec& p) { return !p.from.empty(); });
    if (!any_from && (po.local_time || po.dot_hidden || po.overlay || po.rename || po.symlinks_given))
        throw Error(ErrorCode::usage,
                    "--local-time, --dot-hidden, --overlay, --rename and --symlinks apply to files copied "
                    "with from=; no --part has from=");
    std::optional<std::uint64_t> disk_sectors;
    if (!a.size.empty()) {
        const std::uint64_t bytes = core::parse_size(a.size);
        if (bytes % kSectorSize != 0)
            throw Error(ErrorCode::usage,
                        fmt::format("-s {} is not a whole number of {}-byte sectors", a.size, kSectorSize));
        disk_sectors = bytes / kSectorSize;
    }
    const std::filesystem::path path(a.image);
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;
    std::map<std::pair<unsigned, std::uint64_t>, std::uint64_t> sized;  // (part, start) -> sectors
    const AutoSize auto_sectors = [&](const PartSpec& p, std::uint64_t start) {
        auto [it, fresh] = sized.try_emplace({p.ordinal, start}, 0);
        if (fresh)
            it->second = mkfs_auto_partition_bytes(filesystem_of(p, a, exists), start,
                                                   fmt::format("{} --part {}", a.image, p.ordinal)) /
                         kSectorSize;
        return it->second;
    };
    std::uint64_t sectors = 0;
    std::uint64_t align = kDefaultAlign / kSectorSize;
    if (!a.align.empty()) {
        const std::uint64_t bytes = core::parse_size(a.align);
        if (bytes == 0 || bytes % kSectorSize != 0)
            throw Error(ErrorCode::usage, fmt::format("--align {} is not a whole number of {}-byte sectors",
                                                      a.align, kSectorSize));
        align = bytes / kSectorSize;
    }
    std::vector<Planned> layout = plan(specs, kind, disk_sectors, align, sectors, auto_sectors);

    // The destination: a file that holds anything is refused without --force.
    if (exists && !S_ISREG(st.st_mode))
        throw Error(
            ErrorCode::refused,
            fmt::format("{} exists and is not a regular file; fsimg disk writes image files", a.image));
    std::optional<std::string> refusal;
    if (exists && !a.force)
        refusal = overwrite_refusal_of(a.image, io::probe_path(path, io::ProbeOptions{true}),
                                       *io::FileImage::open(path, false), false);
    for (const Planned& pl : layout) {
        if (pl.spec == nullptr || pl.spec->image.empty()) continue;
        struct stat is {};
        if (::stat(pl.spec->image.c_str(), &is) != 0 || !S_ISREG(is.st_mode))
            refuse_part(*pl.spec, fmt::format("image={} is not a regular file", pl.spec->image));
        if (exists && is.st_dev == st.st_dev && is.st_ino == st.st_ino)
            refuse_part(*pl.spec, fmt::format("image={} is the disk being replaced", pl.spec->image));
    }
    if (refusal) throw Error(ErrorCode::refused, *refusal);

    // Identity: from --volume-id (or the creation time: SOURCE_DATE_EPOCH), one seed for all.
    const std::uint64_t seed = seed_of(a);
    const io::Guid disk_guid = a.disk_id.empty() ? io::guid_from_seed(seed, 1)
                               : gpt             ? *io::parse_guid(a.disk_id)
                                                 : io::Guid{};
    const std::uint32_t signature =
        gpt                 ? 0
        : a.disk_id.empty() ? static_cast<std::uint32_t>(guid_bits(io::guid_from_seed(seed, 0), 4))
                            : static_cast<std::uint32_t>(parse_hex_volume_id(a.disk_id, 32, "--disk-id"));
    std::vector<io::Partition> entries;
    for (Planned& pl : layout) {
        if (pl.spec != nullptr) {
            const io::PartitionType t = initial_type(*pl.spec, kind);
            pl.entry.mbr_type = t.mbr;
            pl.entry.gpt_type = t.gpt;
            pl.entry.gpt_unique = pl.spec->uuid.empty() ? io::guid_from_seed(seed, 1 + pl.entry.index)
                                                        : *io::parse_guid(pl.spec->uuid);
        }
        entries.push_back(pl.entry);
    }

    io::AtomicImage out(path, sectors * kSectorSize);
    for (const auto& p : out.stale_removed())
        note(fmt::format("removed {}, a temporary image left by a process that no longer runs", p));
    if (gpt)
        io::write_gpt(out.device(), kSectorSize, entries, disk_guid);
    else
        io::write_mbr(out.device(), kSectorSize, entries, signature);
    if (!a.quiet) {
        fmt::print("{}: {} disk {}, {}, {} partition{}\n", a.image, io::to_string(kind),
                   core::format_size_both(sectors * kSectorSize),
                   gpt ? fmt::format("GUID {}", io::format_guid(disk_guid))
                       : fmt::format("signature {:08X}", signature),
                   specs.size(), specs.size() == 1 ? "" : "s");
    }
    const std::string temp = out.temporary_path().string();
    for (const Planned& pl : layout) {
        const std::string shown = fmt::format("{}@{}", a.image, pl.entry.index);
        const std::string where =
            fmt::format("in {} partition {} at sector {}, {}", io::to_string(kind), pl.entry.index,
                        pl.entry.first_lba, core::format_size_both(pl.entry.sector_count * kSectorSize));
        if (pl.spec == nullptr) {
            if (!a.quiet)
                fmt::print("{}: the extended partition of {}..{}, {}\n", shown, 5, layout.back().entry.index,
                           where);
            continue;
        }
        const PartSpec& p = *pl.spec;
        if (!p.image.empty()) {
            const std::uint64_t bytes = copy_image(p, p.image, out.device(), pl.entry);
            if (!a.quiet)
                fmt::print("{}: {} copied in ({}), {}\n", shown, core::escape_name(p.image),
                           core::format_size(bytes), where);
        } else if (!p.fs.empty()) {
            PartitionFilesystem fs = filesystem_of(p, a, exists);
            if (!p.volume_id.empty()) {
                fs.volume_id = p.volume_id;
            } else {
                // One serial per partition, from the disk's seed (two volumes
                // of one disk with one serial confuse /dev/disk/by-uuid).
                const io::Guid g = io::guid_from_seed(seed, 0x100 + pl.entry.index);
                const std::uint64_t v = guid_bits(g, 8);
                fs.volume_id =
                    p.fs == "ntfs" ? fmt::format("{:016X}", v) : fmt::format("{:08X}", v & 0xFFFFFFFFu);
            }
            try {
                mkfs_in_new_disk(temp, pl.entry.index, shown, fs, a.quiet);
            } catch (const Error& e) {
                // Which --part (or repart.d file) it was; the user knows the disk
                // as IMAGE, not as its temporary file.
                std::string message = e.what();
                for (std::size_t at = 0; (at = message.find(temp, at)) != std::string::npos;
                     at += a.image.size())
                    message.replace(at, temp.size(), a.image);
                throw Error(e.code(), fmt::format("{}: {}", p.where, message), e.byte_offset());
            }
        } else if (!a.quiet) {
            fmt::print("{}: empty, {}\n", shown, where);
        }
    }
    out.commit();
    if (a.json) print_disk_json(a.image, layout);
    return kExitOk;
}

}  // namespace

Action add_disk(CLI::App& app) {
    auto args = std::make_shared<DiskArgs>();
    CLI::App* cmd = app.add_subcommand(
        "disk", "Build a partitioned disk image: MBR or GPT, a filesystem or an image file per partition");
    cmd->footer(
        "--part takes KEY=VALUE items separated by commas (\\, for a comma in a value):\n"
        "  size=SIZE|rest|auto  start=SIZE  type=NAME|BYTE|GUID  name=TEXT  uuid=GUID  bootable\n"
        "  fs=fat12|fat16|fat32|fat|exfat|ntfs  label=TEXT  cluster=SIZE  volume-id=HEX  from=DIR[:/PATH]\n"
        "  free=SIZE (room size=auto leaves)  image=FILE (a raw image copied in)\n"
        "Examples:\n"
        "  fsimg disk --table mbr -s 1G --part size=256M,fs=fat32,label=BOOT,from=boot/,bootable "
        "--part size=rest,fs=exfat,label=DATA sd.img\n"
        "  fsimg disk --table gpt --part size=100M,type=esp,fs=fat32,from=esp/ --part "
        "size=512M,fs=ntfs,label=Data --part size=64M,type=linux,image=rootfs.ext4 uefi.img\n"
        "  fsimg disk --definitions repart.d --copy-source rootfs/ -s 2G os.img");
    cmd->add_option("--table", args->table, "The partition table: mbr or gpt (required with --part)")
        ->check(CLI::IsMember({"mbr", "gpt"}));
    cmd->add_option("--part", args->parts,
                    "One partition, in table order: its size, place, type and content as KEY=VALUE items "
                    "(see below); repeatable")
        ->type_name("SPEC")
        ->allow_extra_args(false);
    cmd->add_option("--definitions", args->definitions,
                    "The partitions from systemd-repart definition files instead: DIR/*.conf in name order "
                    "(repart.d(5): Type=, Label=, UUID=, Weight=, SizeMinBytes=, SizeMaxBytes=, Format=vfat, "
                    "exfat or ntfs, CopyFiles=, CopyBlocks=, Minimize=); GPT")
        ->type_name("DIR");
    cmd->add_option("--copy-source", args->copy_source,
                    "--definitions: CopyFiles= source paths are below DIR (as systemd-repart --copy-source)")
        ->type_name("DIR");
    cmd->add_option(
           "-s,--size", args->size,
           "The disk's size (64M, 1G, 16GB); default: the partitions' end, rounded up to --align (GPT: "
           "that more for its backup)")
        ->type_name("SIZE");
    cmd->add_option("--align", args->align,
                    "Partitions start (and rest, weights and the disk's end round) on multiples of SIZE: "
                    "default 1M, as sfdisk and sgdisk; 4M or 8M for an SD card's allocation unit")
        ->type_name("SIZE");
    cmd->add_option("--disk-id", args->disk_id,
                    "The MBR disk signature (8 hex digits) or the GPT disk GUID (default: from --volume-id)")
        ->type_name("ID");
    cmd->add_option("--volume-id", args->volume_id,
                    "Seed of every identifier not given: disk signature or GUID, PARTUUIDs, filesystem "
                    "serials (up to 16 hex digits; default: from the time, SOURCE_DATE_EPOCH when set)")
        ->type_name("HEX");
    cmd->add_flag("--force", args->force,
                  "Replace a file that holds anything but zeros (a filesystem, a partition table, data)");
    cmd->add_flag("--local-time", args->populate.local_time,
                  "from=: write timestamps in the local time zone instead of UTC");
    cmd->add_flag("--dot-hidden", args->populate.dot_hidden, "from=: mark names starting with '.' hidden");
    cmd->add_flag("--overlay", args->populate.overlay,
                  "from=: a file of a later source replaces the one of the same name an earlier source gave");
    cmd->add_flag("--rename", args->populate.rename,
                  "from=: store names FAT refuses under safe names, and print the mapping");
    cmd->add_option("--symlinks", args->populate.symlinks,
                    "from=: symbolic links: skip (default, with a warning), follow, error, or store (NTFS)")
        ->check(CLI::IsMember({"skip", "follow", "error", "store"}))
        ->each([args](const std::string&) { args->populate.symlinks_given = true; });
    cmd->add_option("IMAGE", args->image, "The disk image file to create")->required();
    cmd->add_flag("--json", args->json,
                  "Print the disk as JSON for a build log instead of the summary (read back from it: the "
                  "table, each partition's offset, size, type and PARTUUID and what it holds; docs/json.md)");
    return [args] {
        args->quiet = output_options().quiet || args->json;  // with --json the summary is the JSON
        return run_disk(*args);
    };
}

}  // namespace fsimg::cli
