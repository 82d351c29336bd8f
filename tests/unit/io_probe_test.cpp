// io/probe.hpp: libblkid's probe, the container magics it misses, backups,
// and the zero test; io/safe_output.hpp's refusals.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/io/probe.hpp"
#include "fsimg/io/safe_output.hpp"

namespace fs = std::filesystem;
using namespace fsimg;

namespace {

std::vector<std::byte> bytes_of(std::string_view s, std::size_t size) {
    std::vector<std::byte> v(size);
    for (std::size_t i = 0; i < s.size() && i < size; ++i) v[i] = static_cast<std::byte>(s[i]);
    return v;
}

struct TempDir {
    fs::path path;
    TempDir() {
        std::string t = (fs::temp_directory_path() / "fsimg-probe-XXXXXX").string();
        path = ::mkdtemp(t.data());
    }
    ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("container magics libblkid does not know") {
    const std::vector<std::byte> none;
    auto type_of = [&](std::string_view head, std::size_t at = 0) {
        std::vector<std::byte> h(4096);
        for (std::size_t i = 0; i < head.size(); ++i) h[at + i] = static_cast<std::byte>(head[i]);
        const auto s = io::container_signatures(h, none);
        return s.empty() ? std::string() : s.front().type;
    };
    CHECK(type_of("QFI\xFB") == "qcow2");
    CHECK(type_of("vhdxfile") == "VHDX");
    CHECK(type_of("conectix") == "VHD");
    CHECK(type_of("KDMV") == "VMDK");
    CHECK(type_of("# Disk DescriptorFile") == "VMDK");
    CHECK(type_of("\x1F\x8B\x08") == "gzip");
    CHECK(type_of(std::string_view("\xFD"
                                   "7zXZ\0",
                                   6)) == "xz");
    CHECK(type_of("\x28\xB5\x2F\xFD") == "zstd");
    CHECK(type_of("BZh91AY&SY") == "bzip2");
    // Files that are no disk image: named, so that "not a filesystem" says what they are.
    CHECK(type_of("\x89PNG\r\n\x1A\n") == "PNG");
    CHECK(type_of("\xFF\xD8\xFF\xE1") == "JPEG");
    CHECK(type_of("%PDF-1.7") == "PDF");
    CHECK(type_of("PK\x03\x04") == "ZIP");
    CHECK(type_of("\x7F"
                  "ELF") == "ELF");
    CHECK(type_of("ftyp", 4) == "ISO media");
    CHECK(type_of(std::string_view("SQLite format 3\0", 16)) == "SQLite");
    CHECK(type_of("\x89PNX").empty());
    CHECK(type_of("BZh") == "");  // the block magic is missing
    CHECK(type_of("ustar", 257) == "tar");
    CHECK(type_of("plain text") == "");
    // A fixed VHD's footer is the last 512 bytes.
    const auto tail = bytes_of("conectix", 512);
    const std::vector<std::byte> head(4096);
    REQUIRE(io::container_signatures(head, tail).size() == 1);
    CHECK(io::container_signatures(head, tail)[0].type == "VHD");
}

TEST_CASE("zeros and holes hold nothing; any other byte is data") {
    io::MemoryImage zeros(1 << 20);
    const io::Content c = io::probe_device(zeros);
    CHECK(c.kind == io::ContentKind::none);
    CHECK_FALSE(c.holds_anything());
    CHECK_FALSE(io::overwrite_refusal("z.img", c, false));

    io::MemoryImage one(1 << 20);
    const std::array<std::byte, 1> x{std::byte{1}};
    one.write_at(777777, x);
    const io::Content d = io::probe_device(one);
    CHECK(d.kind == io::ContentKind::data);
    CHECK(d.description == "1 MiB of unrecognised data");
    CHECK(*io::overwrite_refusal("d.img", d, false) ==
          "d.img already holds 1 MiB of unrecognised data; pass --force to overwrite it");
    // On a device, old noise is no reason to stop; a format is.
    CHECK_FALSE(io::overwrite_refusal("/dev/x", d, true));
}

TEST_CASE("libblkid names fsimg's own exFAT, also through its backup boot sector") {
    io::MemoryImage dev(16 << 20);
    exfat::LayoutRequest req;
    req.volume_bytes = dev.size();
    const auto layout = std::get<exfat::Layout>(exfat::plan_layout(req));
    exfat::FormatOptions fo;
    fo.label = "PHOTOS";
    exfat::format_volume(dev, layout, fo);
    const io::Content c = io::probe_device(dev);
    CHECK(c.kind == io::ContentKind::filesystem);
    CHECK(c.description == "an exFAT filesystem (label PHOTOS)");
    // Sector 0 damaged: the backup boot region still names it.
    dev.zero_range(0, 512);
    const io::Content b = io::probe_device(dev);
    CHECK(b.kind == io::ContentKind::filesystem);
    CHECK_THAT(b.description, Catch::Contains("exFAT filesystem, readable through its backup boot sector"));
    CHECK(io::overwrite_refusal("x.img", b, true));
}

TEST_CASE("an output path is never a FIFO, a device, an input or an image") {
    TempDir d;
    const fs::path in = d.path / "in.img";
    std::ofstream(in) << "input";
    std::vector<fs::path> inputs{in};
    CHECK_NOTHROW(io::check_output_path(d.path / "new.svg", inputs, "--chart"));
    auto code = [&](const fs::path& p) {
        try {
            io::check_output_path(p, inputs, "--chart");
        } catch (const Error& e) {
            return static_cast<int>(e.code());
        }
        return -1;
    };
    CHECK(code(in) == static_cast<int>(ErrorCode::refused));
    fs::create_hard_link(in, d.path / "alias");
    CHECK(code(d.path / "alias") == static_cast<int>(ErrorCode::refused));
    REQUIRE(::mkfifo((d.path / "fifo").c_str(), 0644) == 0);
    CHECK(code(d.path / "fifo") == static_cast<int>(ErrorCode::refused));
    CHECK(code("/dev/null") == static_cast<int>(ErrorCode::refused));
    // An earlier report is replaced; an image is not.
    std::ofstream(d.path / "old.txt") << "an earlier report";
    CHECK(code(d.path / "old.txt") == -1);
    {
        std::ofstream g(d.path / "img.gz", std::ios::binary);
        g << std::string("\x1F\x8B\x08\x00", 4) << std::string(100, 'x');
    }
    CHECK(code(d.path / "img.gz") == static_cast<int>(ErrorCode::refused));
    // The write replaces atomically and keeps the mode.
    ::chmod((d.path / "old.txt").c_str(), 0600);
    io::write_file_atomically(d.path / "old.txt", "new report\n");
    std::ifstream r(d.path / "old.txt");
    std::string line;
    std::getline(r, line);
    CHECK(line == "new report");
    struct stat st {};
    REQUIRE(::stat((d.path / "old.txt").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}
