// io/probe.hpp: libblkid's probe, the container magics it misses, fsimg's
// own backup copies, and the zero test.
#include "fsimg/io/probe.hpp"

#include <blkid.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/units.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/partition.hpp"

namespace fsimg::io {

namespace {

/// Closes a descriptor on scope exit.
struct OwnedFd {
    int fd = -1;
    explicit OwnedFd(int f) : fd(f) {}
    ~OwnedFd() {
        if (fd >= 0) ::close(fd);
    }
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;
};

/// Printable text for a message: control characters, DEL and backslash as \xNN.
std::string printable(std::string_view s) {
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7F || c == '\\') {
            out += fmt::format("\\x{:02x}", c);
        } else {
            out.push_back(ch);
        }
    }
    return out;
}

bool bytes_equal(std::span<const std::byte> s, std::size_t at, std::string_view text) {
    if (at > s.size() || text.size() > s.size() - at) return false;
    return std::memcmp(s.data() + at, text.data(), text.size()) == 0;
}

/// "an" before a vowel sound of the names used here.
std::string with_article(std::string_view word) {
    const char c = word.empty() ? 'x' : static_cast<char>(std::tolower(static_cast<unsigned char>(word[0])));
    const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ||
                       word.rfind("NTFS", 0) == 0 || word.rfind("LVM", 0) == 0 || word.rfind("MBR", 0) == 0 ||
                       word.rfind("xfs", 0) == 0;
    return fmt::format("{} {}", vowel ? "an" : "a", word);
}

/// The name users know for a libblkid TYPE.
std::string type_name(std::string_view type) {
    if (type == "vfat") return "FAT";
    if (type == "exfat") return "exFAT";
    if (type == "ntfs") return "NTFS";
    if (type == "dos") return "MBR";
    if (type == "gpt" || type == "PMBR") return "GPT";
    if (type == "crypto_LUKS") return "LUKS";
    if (type == "LVM2_member") return "LVM2";
    if (type == "iso9660") return "ISO 9660";
    return std::string(type);
}

/// What a file that is no disk image is, by the type container_signatures gives it; nullptr for the others.
const char* file_type_text(std::string_view type) {
    static constexpr std::pair<std::string_view, const char*> kFiles[] = {
        {"PNG", "a PNG image"},
        {"JPEG", "a JPEG image"},
        {"GIF", "a GIF image"},
        {"PDF", "a PDF document"},
        {"ZIP", "a ZIP archive"},
        {"ELF", "an ELF executable"},
        {"7-Zip", "a 7-Zip archive"},
        {"ISO media", "an MP4/MOV/HEIC media file"},
        {"RIFF", "a RIFF file (WAV, AVI, WebP)"},
        {"Ogg", "an Ogg stream"},
        {"SQLite", "an SQLite database"},
    };
    for (const auto& [t, text] : kFiles)
        if (t == type) return text;
    return nullptr;
}

std::string describe(const Signature& s) {
    const std::string name = type_name(s.type);
    std::string text;
    switch (s.kind) {
        case ContentKind::filesystem:
            text = with_article(name) + " filesystem";
            break;
        case ContentKind::partition_table:
            text = with_article(name) + " partition table";
            break;
        case ContentKind::container:
            if (const char* file = file_type_text(s.type)) {
                text = file;
                break;
            }
            text = name == "tar" ? "a tar archive"
                   : name == "gzip" || name == "xz" || name == "zstd" || name == "bzip2"
                       ? name + "-compressed data"
                       : name + " data";
            break;
        case ContentKind::other:
            text = s.type == "swap"          ? "a swap area"
                   : s.type == "crypto_LUKS" ? "a LUKS encrypted volume"
                   : s.type == "LVM2_member" ? "an LVM2 physical volume"
                                             : with_article(name) + " signature";
            break;
        case ContentKind::none:
        case ContentKind::data:
            text = "data";
            break;
    }
    if (!s.label.empty()) text += fmt::format(" (label {})", printable(s.label));
    if (s.through_backup) text += fmt::format(", readable through {}", s.where);
    return text;
}

/// libblkid's signatures in [offset, offset+size) of fd, as wipefs lists them.
std::vector<Signature> blkid_signatures(int fd, std::uint64_t offset, std::uint64_t size,
                                        const std::string& name) {
    blkid_probe pr = blkid_new_probe();
    if (pr == nullptr) throw Error(ErrorCode::io, fmt::format("cannot probe {}: out of memory", name));
    struct Free {
        blkid_probe p;
        ~Free() { blkid_free_probe(p); }
    } guard{pr};
    if (blkid_probe_set_device(pr, fd, static_cast<blkid_loff_t>(offset), static_cast<blkid_loff_t>(size)) !=
        0) {
        throw Error(ErrorCode::io, fmt::format("cannot probe {}: libblkid refused the device", name));
    }
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_USAGE |
                                              BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
    blkid_probe_enable_partitions(pr, 1);
    blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
    std::vector<Signature> out;
    // Each successful blkid_do_probe returns the next signature of the chains.
    for (int step = 0; step < 64 && blkid_do_probe(pr) == 0; ++step) {
        const char* value = nullptr;
        Signature s;
        if (blkid_probe_lookup_value(pr, "TYPE", &value, nullptr) == 0 && value != nullptr) {
            s.type = value;
            const char* usage = nullptr;
            const std::string_view u =
                blkid_probe_lookup_value(pr, "USAGE", &usage, nullptr) == 0 && usage ? usage : "";
            s.kind = u == "filesystem" ? ContentKind::filesystem : ContentKind::other;
            const char* label = nullptr;
            if (blkid_probe_lookup_value(pr, "LABEL", &label, nullptr) == 0 && label != nullptr)
                s.label = label;
        } else if (blkid_probe_lookup_value(pr, "PTTYPE", &value, nullptr) == 0 && value != nullptr) {
            s.type = value;
            s.kind = ContentKind::partition_table;
        } else {
            continue;
        }
        // The protective MBR of a GPT is reported as its own table: one is enough.
        const bool seen = std::any_of(out.begin(), out.end(), [&](const Signature& o) {
            return o.type == s.type || (type_name(o.type) == "GPT" && type_name(s.type) == "GPT");
        });
        if (!seen) out.push_back(std::move(s));
    }
    return out;
}

/// Reads up to out.size() bytes at `offset` of fd (fewer at its end).
std::size_t pread_some(int fd, std::uint64_t offset, std::span<std::byte> out) {
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n =
            ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            throw Error(ErrorCode::io, fmt::format("cannot read {} bytes at offset {}: {}", out.size() - done,
                                                   offset + done, std::strerror(errno)));
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

/// A BlockDevice over [offset, offset+size) of a descriptor, for the backup tests.
class DescriptorView final : public BlockDevice {
public:
    DescriptorView(int fd, std::uint64_t offset, std::uint64_t size)
        : fd_(fd), offset_(offset), size_(size) {}
    std::uint64_t size() const override { return size_; }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
        if (offset > size_ || out.size() > size_ - offset ||
            pread_some(fd_, offset_ + offset, out) != out.size())
            throw Error(ErrorCode::corrupt,
                        fmt::format("reading {} bytes at offset {} passes the end ({} bytes)", out.size(),
                                    offset, size_));
    }
    void write_at(std::uint64_t, std::span<const std::byte>) override {
        throw Error(ErrorCode::io, "a probe never writes");
    }

private:
    int fd_;
    std::uint64_t offset_;
    std::uint64_t size_;
};

/// Whether [offset, offset+size) of fd holds a non-zero byte, and how many
/// bytes it stores (data segments, SEEK_DATA/SEEK_HOLE; the whole range where
/// the host cannot tell holes, as for most block devices).
struct DataScan {
    bool non_zero = false;
    std::uint64_t data_bytes = 0;
};
DataScan scan_data(int fd, std::uint64_t offset, std::uint64_t size) {
    DataScan scan;
    std::vector<std::byte> buf(1u << 20);
    const std::uint64_t end = offset + size;
    std::uint64_t at = offset;
    while (at < end) {
        std::uint64_t seg_begin = at, seg_end = end;
        const off_t d = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
        if (d < 0 && errno == ENXIO) break;  // holes to the end
        if (d >= 0) {
            seg_begin = static_cast<std::uint64_t>(d);
            if (seg_begin >= end) break;
            const off_t h = ::lseek(fd, d, SEEK_HOLE);
            if (h > d) seg_end = std::min<std::uint64_t>(end, static_cast<std::uint64_t>(h));
        }
        scan.data_bytes += seg_end - seg_begin;
        for (std::uint64_t p = seg_begin; !scan.non_zero && p < seg_end;) {
            const std::size_t want =
                static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), seg_end - p));
            const std::size_t got = pread_some(fd, p, std::span<std::byte>(buf.data(), want));
            if (got == 0) break;
            scan.non_zero = !core::all_zero(buf.data(), got);
            p += got;
        }
        at = seg_end;
    }
    return scan;
}

Content finish(std::vector<Signature> sigs, const DataScan& scan, bool tested) {
    Content c;
    c.signatures = std::move(sigs);
    c.data_bytes = scan.data_bytes;
    if (!c.signatures.empty()) {
        c.kind = c.signatures.front().kind;
        c.description = describe(c.signatures.front());
        if (c.signatures.size() > 1) {
            std::string more;
            for (std::size_t i = 1; i < c.signatures.size(); ++i)
                more += (i > 1 ? ", " : "") + describe(c.signatures[i]);
            c.description += fmt::format(" (also {})", more);
        }
    } else if (tested && scan.non_zero) {
        c.kind = ContentKind::data;
        c.description = fmt::format("{} of unrecognised data", core::format_size(scan.data_bytes));
    } else {
        c.description = "nothing but zeros";
    }
    return c;
}

}  // namespace

std::optional<std::string> device_busy_reason(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error(ErrorCode::io,
                    fmt::format("cannot stat \"{}\": {}", path.string(), std::strerror(errno)));
    if (!S_ISBLK(st.st_mode)) return std::nullopt;
    const unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
    // The device and its partitions: /sys/dev/block/MAJ:MIN/<part>/dev holds "maj:min".
    std::vector<std::pair<unsigned, unsigned>> devices{{maj, min}};
    const std::filesystem::path sys = fmt::format("/sys/dev/block/{}:{}", maj, min);
    std::error_code ec;
    for (std::filesystem::directory_iterator it(sys, ec), end; !ec && it != end; it.increment(ec)) {
        std::ifstream dev(it->path() / "dev");
        unsigned a = 0, b = 0;
        char colon = 0;
        if (dev >> a >> colon >> b && colon == ':') devices.emplace_back(a, b);
    }
    std::ifstream mounts("/proc/self/mountinfo");
    std::string line;
    while (std::getline(mounts, line)) {
        // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": field 3 is MAJ:MIN, 5 the mount
        // point.
        std::istringstream in(line);
        std::string id, parent, devno, root, point;
        if (!(in >> id >> parent >> devno >> root >> point)) continue;
        const std::size_t colon = devno.find(':');
        if (colon == std::string::npos) continue;
        const unsigned a = static_cast<unsigned>(std::strtoul(devno.c_str(), nullptr, 10));
        const unsigned b = static_cast<unsigned>(std::strtoul(devno.c_str() + colon + 1, nullptr, 10));
        for (const auto& [da, db] : devices) {
            if (da == a && db == b)
                return fmt::format("{}{} is mounted on {}", path.string(),
                                   da == maj && db == min ? "" : fmt::format(" (partition {}:{})", da, db),
                                   point);
        }
    }
    for (std::filesystem::directory_iterator it(sys / "holders", ec), end; !ec && it != end; it.increment(ec))
        return fmt::format("{} is held by {} (device-mapper, LVM or RAID)", path.string(),
                           it->path().filename().string());
    const int fd = ::open(path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EBUSY)
        return fmt::format("{} is in use (an exclusive open fails: EBUSY)", path.string());
    if (fd >= 0) ::close(fd);
    return std::nullopt;
}

std::optional<std::string> overwrite_refusal(const std::string& name, const Content& content,
                                             bool is_device) {
    if (is_device ? !content.recognised() : !content.holds_anything()) return std::nullopt;
    return fmt::format("{} already holds {}; pass --force to overwrite it", name, content.description);
}

std::vector<Signature> container_signatures(std::span<const std::byte> head,
                                            std::span<const std::byte> tail) {
    std::vector<Signature> out;
    auto add = [&](std::string type) {
        Signature s;
        s.kind = ContentKind::container;
        s.type = std::move(type);
        out.push_back(std::move(s));
    };
    if (bytes_equal(head, 0, "QFI\xFB")) add("qcow2");
    if (bytes_equal(head, 0, "vhdxfile")) add("VHDX");
    if (bytes_equal(head, 0, "conectix") || (tail.size() == 512 && bytes_equal(tail, 0, "conectix")) ||
        (tail.size() == 512 && bytes_equal(tail, 1, "conectix")))  // a 511-byte footer of old Virtual PC
        add("VHD");
    if (bytes_equal(head, 0, "KDMV") || bytes_equal(head, 0, "COWD") ||
        bytes_equal(head, 0, "# Disk DescriptorFile"))
        add("VMDK");
    if (bytes_equal(head, 0, "\x1F\x8B")) add("gzip");
    if (bytes_equal(head, 0,
                    std::string_view("\xFD"
                                     "7zXZ\0",
                                     6)))
        add("xz");
    if (bytes_equal(head, 0, "\x28\xB5\x2F\xFD")) add("zstd");
    if (bytes_equal(head, 0, "BZh") && head.size() >= 10 && head[3] >= std::byte{'1'} &&
        head[3] <= std::byte{'9'} &&
        (bytes_equal(head, 4, "\x31\x41\x59\x26\x53\x59") ||
         bytes_equal(head, 4, "\x17\x72\x45\x38\x50\x90")))
        add("bzip2");
    if (bytes_equal(head, 257, "ustar")) add("tar");
    // Files that are no images at all, named so that "not a filesystem" says what the file is.
    if (bytes_equal(head, 0, "\x89PNG\r\n\x1A\n")) add("PNG");
    if (bytes_equal(head, 0, "\xFF\xD8\xFF")) add("JPEG");
    if (bytes_equal(head, 0, "GIF87a") || bytes_equal(head, 0, "GIF89a")) add("GIF");
    if (bytes_equal(head, 0, "%PDF-")) add("PDF");
    if (bytes_equal(head, 0, "PK\x03\x04") || bytes_equal(head, 0, "PK\x05\x06")) add("ZIP");
    if (bytes_equal(head, 0,
                    "\x7F"
                    "ELF"))
        add("ELF");
    if (bytes_equal(head, 0, "7z\xBC\xAF\x27\x1C")) add("7-Zip");
    if (bytes_equal(head, 4, "ftyp")) add("ISO media");
    if (bytes_equal(head, 0, "RIFF")) add("RIFF");
    if (bytes_equal(head, 0, "OggS")) add("Ogg");
    if (bytes_equal(head, 0, std::string_view("SQLite format 3\0", 16))) add("SQLite");
    return out;
}

std::vector<Signature> backup_signatures(const BlockDevice& dev) {
    std::vector<Signature> out;
    const std::uint64_t size = dev.size();
    std::array<std::byte, 512> s{};
    auto read = [&](std::uint64_t at) {
        if (at > size || size - at < s.size()) return false;
        dev.read_at(at, s);
        return true;
    };
    auto add = [&](ContentKind kind, std::string type, std::string where) {
        Signature sig;
        sig.kind = kind;
        sig.type = std::move(type);
        sig.through_backup = true;
        sig.where = std::move(where);
        out.push_back(std::move(sig));
    };
    for (const std::uint32_t sector : {512u, 4096u}) {
        // exFAT: the backup boot region starts at sector 12 [EXFAT §3.1].
        if (read(12ull * sector) && bytes_equal(s, 3, "EXFAT   ") && s[510] == std::byte{0x55} &&
            s[511] == std::byte{0xAA} && std::to_integer<unsigned>(s[108]) >= 9 &&
            std::to_integer<unsigned>(s[108]) <= 12 && (1u << std::to_integer<unsigned>(s[108])) == sector) {
            add(ContentKind::filesystem, "exfat",
                fmt::format("its backup boot sector at sector 12 ({}-byte sectors)", sector));
        }
        // NTFS: the backup boot sector is the volume's last sector [MS-NTFS; ntfs-3g mkntfs].
        if (size >= sector && read(size / sector * sector - sector) && bytes_equal(s, 3, "NTFS    ") &&
            s[510] == std::byte{0x55} && s[511] == std::byte{0xAA}) {
            add(ContentKind::filesystem, "ntfs", "its backup boot sector in the last sector");
        }
        // GPT: the backup header is in the disk's last LBA [UEFI 2.10 §5.3.2].
        if (size >= 2ull * sector && read(size / sector * sector - sector) && bytes_equal(s, 0, "EFI PART")) {
            add(ContentKind::partition_table, "gpt",
                fmt::format("its backup GPT header in the last LBA ({}-byte sectors)", sector));
        }
    }
    // FAT32: BPB_BkBootSec, conventionally 6 [FAT spec §3.6]; the backup names its own sector size.
    for (const std::uint32_t sector : {512u, 1024u, 2048u, 4096u}) {
        if (!read(6ull * sector)) continue;
        const std::uint32_t bps = core::le16<0x0B>(std::span<const std::byte, 512>(s));
        if (bps == sector && bytes_equal(s, 82, "FAT32   ") && s[510] == std::byte{0x55} &&
            s[511] == std::byte{0xAA} && looks_like_boot_sector(s)) {
            add(ContentKind::filesystem, "vfat", "its backup boot sector at sector 6");
        }
    }
    // Several views of one backup (NTFS at two sector sizes): keep each type once.
    std::vector<Signature> unique;
    for (auto& sig : out) {
        if (std::none_of(unique.begin(), unique.end(),
                         [&](const Signature& u) { return u.type == sig.type; }))
            unique.push_back(std::move(sig));
    }
    return unique;
}

Content probe_descriptor(int fd, std::uint64_t offset, std::uint64_t size, const std::string& name,
                         const ProbeOptions& options) {
    std::vector<Signature> sigs =
        size == 0 ? std::vector<Signature>{} : blkid_signatures(fd, offset, size, name);
    std::vector<std::byte> head(std::min<std::uint64_t>(size, 4096));
    head.resize(pread_some(fd, offset, head));
    std::vector<std::byte> tail;
    if (size >= 512) {
        tail.resize(512);
        tail.resize(pread_some(fd, offset + size - 512, tail));
    }
    for (auto& s : container_signatures(head, tail)) {
        if (std::none_of(sigs.begin(), sigs.end(), [&](const Signature& o) { return o.type == s.type; }))
            sigs.push_back(std::move(s));
    }
    if (sigs.empty()) {
        const DescriptorView view(fd, offset, size);
        sigs = backup_signatures(view);
    }
    DataScan scan;
    if (options.test_zeros && sigs.empty()) {
        scan = scan_data(fd, offset, size);
    } else if (options.test_zeros) {
        scan.data_bytes = size;
    }
    return finish(std::move(sigs), scan, options.test_zeros);
}

Content probe_path(const std::filesystem::path& path, const ProbeOptions& options) {
    int fd = -1;
    do {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        throw Error(ErrorCode::io,
                    fmt::format("cannot open \"{}\": {}", path.string(), std::strerror(errno)));
    const OwnedFd guard(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw Error(ErrorCode::io,
                    fmt::format("cannot stat \"{}\": {}", path.string(), std::strerror(errno)));
    std::uint64_t size = 0;
    if (S_ISREG(st.st_mode)) {
        size = static_cast<std::uint64_t>(st.st_size);
    } else if (S_ISBLK(st.st_mode)) {
        const off_t end = ::lseek(fd, 0, SEEK_END);
        if (end < 0)
            throw Error(ErrorCode::io, fmt::format("cannot find the size of \"{}\": {}", path.string(),
                                                   std::strerror(errno)));
        size = static_cast<std::uint64_t>(end);
    } else {
        throw Error(ErrorCode::usage,
                    fmt::format("\"{}\" is neither a regular file nor a block device", path.string()));
    }
    try {
        return probe_descriptor(fd, 0, size, path.string(), options);
    } catch (const Error& e) {
        throw Error(e.code(), fmt::format("probing \"{}\": {}", path.string(), e.what()));
    }
}

Content probe_device(const BlockDevice& device, const ProbeOptions& options) {
    if (const auto* file = dynamic_cast<const FileImage*>(&device); file && file->descriptor() >= 0) {
        return probe_descriptor(file->descriptor(), 0, file->size(), file->path().string(), options);
    }
    if (const auto* sub = dynamic_cast<const SubRange*>(&device)) {
        if (const auto* file = dynamic_cast<const FileImage*>(&sub->parent());
            file && file->descriptor() >= 0) {
            return probe_descriptor(file->descriptor(), sub->offset_in_parent(), sub->size(),
                                    file->path().string(), options);
        }
    }
    // A sparse copy: the first 8 MiB and the last 1 MiB, where the signatures are.
    const int fd = ::memfd_create("fsimg-probe", MFD_CLOEXEC);
    if (fd < 0)
        throw Error(ErrorCode::io, fmt::format("cannot probe: memfd_create: {}", std::strerror(errno)));
    const OwnedFd guard(fd);
    const std::uint64_t size = device.size();
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
        throw Error(ErrorCode::io, fmt::format("cannot probe: ftruncate: {}", std::strerror(errno)));
    std::vector<std::byte> buf;
    auto copy = [&](std::uint64_t at, std::uint64_t len) {
        buf.resize(static_cast<std::size_t>(len));
        device.read_at(at, buf);
        if (::pwrite(fd, buf.data(), buf.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(buf.size()))
            throw Error(ErrorCode::io, fmt::format("cannot probe: pwrite: {}", std::strerror(errno)));
    };
    const std::uint64_t head = std::min<std::uint64_t>(size, 8u << 20);
    copy(0, head);
    if (size > head) {
        const std::uint64_t tail = std::min<std::uint64_t>(size - head, 1u << 20);
        copy(size - tail, tail);
    }
    ProbeOptions o = options;
    o.test_zeros = false;  // holes stand for the bytes not copied
    Content c = probe_descriptor(fd, 0, size, "the image", o);
    if (options.test_zeros && !c.recognised()) {
        // The zero test on the device itself.
        std::vector<std::byte> chunk(1u << 20);
        for (std::uint64_t at = 0; at < size; at += chunk.size()) {
            const std::size_t len =
                static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - at));
            device.read_at(at, std::span<std::byte>(chunk.data(), len));
            if (!core::all_zero(chunk.data(), len)) {
                c.kind = ContentKind::data;
                c.data_bytes = size;
                c.description = fmt::format("{} of unrecognised data", core::format_size(size));
                break;
            }
        }
    }
    return c;
}

}  // namespace fsimg::io
