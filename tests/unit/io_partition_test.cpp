#include <zlib.h>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/open.hpp"
#include "fsimg/io/partition.hpp"

using namespace fsimg;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

/// A large device that stores only the 4 KiB chunks written to it.
class SparseDevice final : public io::BlockDevice {
public:
    explicit SparseDevice(std::uint64_t size) : size_(size) {}
    std::uint64_t size() const override { return size_; }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
        if (offset > size_ || out.size() > size_ - offset) throw Error(ErrorCode::corrupt, "read past end");
        for (std::size_t i = 0; i < out.size(); ++i) {
            auto it = chunks_.find((offset + i) / kChunk);
            out[i] = it == chunks_.end() ? std::byte{0} : it->second[(offset + i) % kChunk];
        }
    }
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override {
        if (offset > size_ || in.size() > size_ - offset) throw Error(ErrorCode::io, "write past end");
        for (std::size_t i = 0; i < in.size(); ++i) {
            auto& chunk = chunks_[(offset + i) / kChunk];
            if (chunk.empty()) chunk.resize(kChunk);
            chunk[(offset + i) % kChunk] = in[i];
        }
    }

private:
    static constexpr std::uint64_t kChunk = 4096;
    std::uint64_t size_;
    std::map<std::uint64_t, std::vector<std::byte>> chunks_;
};

std::vector<std::byte> read(const io::BlockDevice& d, std::uint64_t offset, std::size_t n) {
    std::vector<std::byte> v(n);
    d.read_at(offset, v);
    return v;
}

std::vector<std::byte> hex(std::initializer_list<int> values) {
    std::vector<std::byte> v;
    for (int x : values) v.push_back(static_cast<std::byte>(x));
    return v;
}

std::uint32_t zlib_crc(const std::vector<std::byte>& v) {
    return static_cast<std::uint32_t>(
        crc32(crc32(0, Z_NULL, 0), reinterpret_cast<const Bytef*>(v.data()), static_cast<uInt>(v.size())));
}

/// A minimal FAT16-style boot sector: jump, OEM, BPB, 55 AA.
std::array<std::byte, 512> fat_boot_sector() {
    std::array<std::byte, 512> s{};
    const std::span<std::byte, 512> b(s);
    core::store8<0>(b, 0xEB);
    core::store8<1>(b, 0x3C);
    core::store8<2>(b, 0x90);
    core::store_padded(b.subspan(3, 8), "MSDOS5.0");
    core::store16<0x0B>(b, 512);
    core::store8<0x0D>(b, 4);
    core::store16<0x0E>(b, 4);
    core::store8<0x10>(b, 2);
    core::store8<0x15>(b, 0xF8);
    core::store16<0x1FE>(b, 0xAA55);
    return s;
}

io::Partition one_partition(std::uint64_t first, std::uint64_t count, std::uint8_t type = 0x0C) {
    io::Partition p;
    p.index = 1;
    p.first_lba = first;
    p.sector_count = count;
    p.mbr_type = type;
    return p;
}

/// Recomputes the header CRC of the GPT header at `lba` after a test edited it.
void fix_header_crc(io::BlockDevice& d, std::uint32_t ss, std::uint64_t lba) {
    auto h = read(d, lba * ss, 92);
    core::store_le32(h, 16, 0);
    core::store_le32(h, 16, zlib_crc(h));
    d.write_at(lba * ss, h);
}

/// Recomputes the entry-array CRC (128 x 128) in the header at `lba` and the header CRC.
void fix_array_crc(io::BlockDevice& d, std::uint32_t ss, std::uint64_t lba) {
    auto h = read(d, lba * ss, 92);
    const auto array = read(d, core::load_le64(h, 72) * ss, 128 * 128);
    core::store_le32(h, 88, zlib_crc(array));
    d.write_at(lba * ss, h);
    fix_header_crc(d, ss, lba);
}

std::string find_tool(const std::string& name) {
    for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/local/bin"}) {
        const fs::path p = fs::path(dir) / name;
        if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
    return {};
}

/// Runs a command, returning its standard output and exit status.
std::pair<std::string, int> run(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    const int status = ::pclose(pipe);
    return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

class TempDir {
public:
    TempDir() {
        std::string templ = (fs::temp_directory_path() / "fsimg-part-test-XXXXXX").string();
        REQUIRE(::mkdtemp(templ.data()) != nullptr);
        path_ = templ;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

/// Creates a sparse file of `size` bytes.
void make_file(const fs::path& p, std::uint64_t size) {
    { std::ofstream out(p, std::ios::binary); }
    fs::resize_file(p, size);
}

}  // namespace

TEST_CASE("partition table kinds and GUID text", "[io][partition]") {
    CHECK(io::parse_partition_table_kind("none") == io::PartitionTableKind::none);
    CHECK(io::parse_partition_table_kind("mbr") == io::PartitionTableKind::mbr);
    CHECK(io::parse_partition_table_kind("gpt") == io::PartitionTableKind::gpt);
    REQUIRE_THROWS_WITH(io::parse_partition_table_kind("GPT2"), Catch::Contains("\"GPT2\""));
    CHECK(io::to_string(io::PartitionTableKind::gpt) == "gpt");
    CHECK(io::format_guid(io::kGptBasicDataType) == "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7");

    const io::Guid a = io::guid_from_seed(0x1234ABCD, 0);
    CHECK(a == io::guid_from_seed(0x1234ABCD, 0));
    CHECK(a != io::guid_from_seed(0x1234ABCD, 1));
    CHECK(a != io::guid_from_seed(0x1234ABCE, 0));
    const std::string text = io::format_guid(a);
    CHECK(text.size() == 36);
    CHECK(text[14] == '4');                                          // version 4
    CHECK(std::string("89AB").find(text[19]) != std::string::npos);  // RFC 4122 variant
}

TEST_CASE("placing one partition", "[io][partition]") {
    using K = io::PartitionTableKind;
    auto gpt512 = io::place_single_partition(K::gpt, 64 * kMiB, 512);
    CHECK(gpt512.first_lba == 2048);
    CHECK(gpt512.sector_count ==
          131072 - 2048 - 2048);  // ends on the last 1 MiB boundary before the backup GPT
    auto gpt4k = io::place_single_partition(K::gpt, 64 * kMiB, 4096);
    CHECK(gpt4k.first_lba == 256);
    CHECK(gpt4k.first_lba + gpt4k.sector_count - 1 == 16384 - 256 - 1);  // ends on a 1 MiB boundary
    auto mbr = io::place_single_partition(K::mbr, 64 * kMiB, 512);
    CHECK(mbr.first_lba == 2048);
    CHECK(mbr.sector_count == 129024);
    auto none = io::place_single_partition(K::none, 64 * kMiB + 100, 512);
    CHECK(none.first_lba == 0);
    CHECK(none.sector_count == 131072);

    REQUIRE_THROWS_WITH(io::place_single_partition(K::gpt, kMiB, 512),
                        Catch::Contains("too small") && Catch::Contains("1065984 bytes"));
    REQUIRE_THROWS_WITH(io::place_single_partition(K::mbr, 3ull << 40, 512), Catch::Contains("gpt"));
    CHECK(io::place_single_partition(K::mbr, 3ull << 40, 4096).sector_count == (3ull << 40) / 4096 - 256);
    CHECK(io::place_single_partition(K::gpt, 3ull << 40, 512).first_lba == 2048);
    REQUIRE_THROWS_WITH(io::place_single_partition(K::gpt, 64 * kMiB, 1000), Catch::Contains("1000"));
}

TEST_CASE("MBR entry matches sfdisk byte for byte", "[io][partition][mbr]") {
    io::MemoryImage disk(64 * kMiB);
    io::write_mbr(disk, 512, one_partition(2048, 129024), 0x78D73114);
    // `echo 'start=2048, size=129024, type=c' | sfdisk -q FILE` on a 64 MiB file (util-linux 2.38):
    const auto expected =
        hex({0x00, 0x20, 0x21, 0x00, 0x0C, 0x28, 0x20, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00, 0xF8, 0x01, 0x00});
    CHECK(read(disk, 446, 16) == expected);
    CHECK(read(disk, 440, 6) == hex({0x14, 0x31, 0xD7, 0x78, 0x00, 0x00}));
    auto rest = read(disk, 462, 48);
    CHECK(rest == std::vector<std::byte>(48));
    CHECK(read(disk, 510, 2) == hex({0x55, 0xAA}));

    auto table = io::read_partition_table(disk);
    CHECK(table.kind == io::PartitionTableKind::mbr);
    CHECK(table.sector_size == 512);
    CHECK(table.mbr_disk_signature == 0x78D73114u);
    REQUIRE(table.partitions.size() == 1);
    CHECK(table.partitions[0].index == 1);
    CHECK(table.partitions[0].first_lba == 2048);
    CHECK(table.partitions[0].sector_count == 129024);
    CHECK(table.partitions[0].mbr_type == 0x0C);
    CHECK_FALSE(table.partitions[0].bootable);
}

TEST_CASE("MBR CHS beyond cylinder 1023 is FE FF FF", "[io][partition][mbr]") {
    SparseDevice disk(100ull << 30);  // 100 GiB: CHS covers only ~8 GiB
    auto p = one_partition(2048, (100ull << 30) / 512 - 2048, 0x07);
    p.bootable = true;
    io::write_mbr(disk, 512, p, 1);
    const auto e = read(disk, 446, 16);
    CHECK(e[0] == std::byte{0x80});
    CHECK(std::vector<std::byte>(e.begin() + 1, e.begin() + 4) == hex({0x20, 0x21, 0x00}));
    CHECK(e[4] == std::byte{0x07});
    CHECK(std::vector<std::byte>(e.begin() + 5, e.begin() + 8) == hex({0xFE, 0xFF, 0xFF}));
    auto table = io::read_partition_table(disk);
    REQUIRE(table.partitions.size() == 1);
    CHECK(table.partitions[0].bootable);
    CHECK(table.partitions[0].sector_count == (100ull << 30) / 512 - 2048);

    REQUIRE_THROWS_WITH(io::write_mbr(disk, 512, one_partition(2048, 1ull << 32), 0), Catch::Contains("MBR"));
    REQUIRE_THROWS_AS(io::write_mbr(disk, 512, one_partition(0, 100), 0), Error);
}

TEST_CASE("GPT at 512-byte sectors: headers, CRCs, backup", "[io][partition][gpt]") {
    io::MemoryImage disk(64 * kMiB);
    const std::uint64_t n = 131072;
    const auto place = io::place_single_partition(io::PartitionTableKind::gpt, disk.size(), 512);
    auto p = one_partition(place.first_lba, place.sector_count);
    p.gpt_unique = io::guid_from_seed(7, 2);
    const io::Guid disk_guid = io::guid_from_seed(7, 1);
    io::write_gpt(disk, 512, p, disk_guid);

    // Protective MBR, as sgdisk writes it for this disk.
    CHECK(read(disk, 446, 16) == hex({0x00, 0x00, 0x02, 0x00, 0xEE, 0x28, 0x20, 0x08, 0x01, 0x00, 0x00, 0x00,
                                      0xFF, 0xFF, 0x01, 0x00}));
    CHECK(read(disk, 510, 2) == hex({0x55, 0xAA}));

    auto header = read(disk, 512, 92);
    CHECK(core::load_string(std::span(header).first(8)) == "EFI PART");
    CHECK(core::load_le32(header, 8) == 0x00010000u);
    CHECK(core::load_le32(header, 12) == 92u);
    const std::uint32_t stored = core::load_le32(header, 16);
    core::store_le32(header, 16, 0);
    CHECK(stored == zlib_crc(header));
    CHECK(core::load_le64(header, 24) == 1);
    CHECK(core::load_le64(header, 32) == n - 1);
    CHECK(core::load_le64(header, 40) == 34);
    CHECK(core::load_le64(header, 48) == n - 34);
    CHECK(core::load_le64(header, 72) == 2);
    CHECK(core::load_le32(header, 80) == 128u);
    CHECK(core::load_le32(header, 84) == 128u);
    const auto array = read(disk, 2 * 512, 128 * 128);
    CHECK(core::load_le32(header, 88) == zlib_crc(array));
    CHECK(read(disk, 512 + 92, 420) == std::vector<std::byte>(420));  // rest of the header sector is zero

    // Entry 1: Basic Data, LBA 2048..N-34, name "fsimg".
    CHECK(std::vector<std::byte>(array.begin(), array.begin() + 16) ==
          hex({0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44, 0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26, 0x99,
               0xC7}));
    CHECK(core::load_le64(array, 32) == 2048);
    CHECK(core::load_le64(array, 40) == n - 2048 - 1);
    CHECK(core::load_le16(array, 56) == u'f');
    CHECK(core::load_le16(array, 64) == u'g');
    CHECK(core::load_le16(array, 66) == 0);
    CHECK(std::vector<std::byte>(array.begin() + 128, array.end()) == std::vector<std::byte>(127 * 128));

    // Backup header in the last LBA, backup array in the 32 sectors before it.
    auto backup = read(disk, (n - 1) * 512, 92);
    CHECK(core::load_string(std::span(backup).first(8)) == "EFI PART");
    const std::uint32_t backup_crc = core::load_le32(backup, 16);
    core::store_le32(backup, 16, 0);
    CHECK(backup_crc == zlib_crc(backup));
    CHECK(core::load_le64(backup, 24) == n - 1);
    CHECK(core::load_le64(backup, 32) == 1);
    CHECK(core::load_le64(backup, 72) == n - 33);
    CHECK(read(disk, (n - 33) * 512, 128 * 128) == array);

    auto table = io::read_partition_table(disk);
    CHECK(table.kind == io::PartitionTableKind::gpt);
    CHECK(table.sector_size == 512);
    CHECK(table.gpt_disk_guid == disk_guid);
    REQUIRE(table.partitions.size() == 1);
    const auto& got = table.partitions[0];
    CHECK(got.index == 1);
    CHECK(got.first_lba == 2048);
    CHECK(got.sector_count == place.sector_count);
    CHECK(got.gpt_type == io::kGptBasicDataType);
    CHECK(got.gpt_unique == p.gpt_unique);
    CHECK(got.name == "fsimg");
}

TEST_CASE("GPT at 4096-byte sectors", "[io][partition][gpt]") {
    io::MemoryImage disk(64 * kMiB);
    const std::uint64_t n = 16384;
    const auto place = io::place_single_partition(io::PartitionTableKind::gpt, disk.size(), 4096);
    auto p = one_partition(place.first_lba, place.sector_count);
    p.name = "Données ☃";
    io::write_gpt(disk, 4096, p, io::guid_from_seed(1, 1));
    CHECK(read(disk, 512, 8) == std::vector<std::byte>(8));  // nothing at LBA 1 of 512 bytes
    auto header = read(disk, 4096, 92);
    CHECK(core::load_string(std::span(header).first(8)) == "EFI PART");
    CHECK(core::load_le64(header, 32) == n - 1);
    CHECK(core::load_le64(header, 40) == 6);
    CHECK(core::load_le64(header, 48) == n - 6);
    CHECK(core::load_le64(header, 72) == 2);
    auto backup = read(disk, (n - 1) * 4096, 92);
    CHECK(core::load_le64(backup, 24) == n - 1);
    CHECK(core::load_le64(backup, 72) == n - 5);
    // Protective entry counts 4 KiB sectors.
    CHECK(core::load_le32(read(disk, 446 + 12, 4), 0) == n - 1);

    auto table = io::read_partition_table(disk);
    CHECK(table.kind == io::PartitionTableKind::gpt);
    CHECK(table.sector_size == 4096);
    REQUIRE(table.partitions.size() == 1);
    CHECK(table.partitions[0].first_lba == 256);
    CHECK(table.partitions[0].first_lba + table.partitions[0].sector_count - 1 == n - 256 - 1);
    CHECK(table.partitions[0].name == "Données ☃");

    p.name = std::string(37, 'x');
    REQUIRE_THROWS_WITH(io::write_gpt(disk, 4096, p, {}), Catch::Contains("36"));
    p.name.clear();
    p.first_lba = 5;  // before the first usable LBA
    REQUIRE_THROWS_AS(io::write_gpt(disk, 4096, p, {}), Error);
}

TEST_CASE("GPT on a disk beyond 2 TiB caps the protective entry", "[io][partition][gpt]") {
    SparseDevice disk(3ull << 40);
    const auto place = io::place_single_partition(io::PartitionTableKind::gpt, disk.size(), 512);
    io::write_gpt(disk, 512, one_partition(place.first_lba, place.sector_count), io::guid_from_seed(3, 1));
    const auto e = read(disk, 446, 16);
    CHECK(std::vector<std::byte>(e.begin() + 5, e.end()) ==
          hex({0xFE, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF}));
    auto table = io::read_partition_table(disk);
    REQUIRE(table.partitions.size() == 1);
    CHECK(table.partitions[0].sector_count == (3ull << 40) / 512 - 2048 - 2048);
}

TEST_CASE("GPT damage: fallback to the backup, then refusal", "[io][partition][gpt]") {
    const std::uint64_t n = 131072;
    auto fresh = [&] {
        auto d = std::make_unique<io::MemoryImage>(64 * kMiB);
        io::write_gpt(*d, 512, one_partition(2048, 4096), io::guid_from_seed(9, 1));
        return d;
    };
    const std::byte junk[1] = {std::byte{0x5A}};

    SECTION("bad primary header CRC uses the backup") {
        auto d = fresh();
        d->write_at(512 + 40, junk);  // first usable LBA changes, CRC no longer matches
        auto table = io::read_partition_table(*d);
        REQUIRE(table.partitions.size() == 1);
        CHECK(table.partitions[0].first_lba == 2048);
    }
    SECTION("bad primary array CRC uses the backup") {
        auto d = fresh();
        d->write_at(1024 + 200, junk);
        CHECK(io::read_partition_table(*d).partitions.size() == 1);
    }
    SECTION("both copies damaged") {
        auto d = fresh();
        d->write_at(512 + 40, junk);
        d->write_at((n - 1) * 512 + 40, junk);
        try {
            io::read_partition_table(*d);
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::corrupt);
            CHECK_THAT(e.what(), Catch::Contains("primary") && Catch::Contains("CRC32"));
        }
    }
    SECTION("huge entry count is refused before any allocation") {
        auto d = fresh();
        for (std::uint64_t lba : {std::uint64_t{1}, n - 1}) {
            auto h = read(*d, lba * 512, 92);
            core::store_le32(h, 80, 0xFFFFFFFF);
            d->write_at(lba * 512, h);
            fix_header_crc(*d, 512, lba);
        }
        REQUIRE_THROWS_WITH(io::read_partition_table(*d), Catch::Contains("4294967295 entries"));
    }
    SECTION("entry array past the end of the disk") {
        auto d = fresh();
        for (std::uint64_t lba : {std::uint64_t{1}, n - 1}) {
            auto h = read(*d, lba * 512, 92);
            core::store_le64(h, 72, n - 2);
            d->write_at(lba * 512, h);
            fix_header_crc(*d, 512, lba);
        }
        REQUIRE_THROWS_WITH(io::read_partition_table(*d), Catch::Contains("passes the end"));
    }
    SECTION("bad entry size") {
        auto d = fresh();
        auto h = read(*d, 512, 92);
        core::store_le32(h, 84, 0);
        d->write_at(512, h);
        fix_header_crc(*d, 512, 1);
        d->write_at((n - 1) * 512 + 40, junk);
        REQUIRE_THROWS_WITH(io::read_partition_table(*d), Catch::Contains("entry size 0"));
    }
    SECTION("partition outside the usable LBAs") {
        auto d = fresh();
        for (std::uint64_t lba : {std::uint64_t{2}, n - 33}) {
            auto entry = read(*d, lba * 512, 128);
            core::store_le64(entry, 40, n + 5);
            d->write_at(lba * 512, entry);
        }
        fix_array_crc(*d, 512, 1);
        fix_array_crc(*d, 512, n - 1);
        try {
            io::read_partition_table(*d);
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::corrupt);
            CHECK_THAT(e.what(), Catch::Contains("GPT entry 1"));
        }
    }
    SECTION("protective MBR without any GPT") {
        auto d = fresh();
        d->write_at(512, std::vector<std::byte>(512));
        d->write_at((n - 1) * 512, std::vector<std::byte>(512));
        REQUIRE_THROWS_WITH(io::read_partition_table(*d), Catch::Contains("0xEE"));
    }
    SECTION("truncated image: the backup is gone, primary still good") {
        auto d = fresh();
        auto bytes = d->bytes();
        bytes.resize(32 * kMiB);
        io::MemoryImage half(std::move(bytes));
        // The primary header still validates, but its last usable LBA and
        // its backup lie beyond the end now: it is used, the cut recorded once
        // (Linux efi.c would skip the partition; the part inside is readable).
        const auto t = io::read_partition_table(half);
        REQUIRE(t.partitions.size() == 1);
        CHECK(t.partitions[0].image_sectors == t.partitions[0].sector_count);  // 4096 sectors at 1 MiB
        REQUIRE(t.problems.size() == 1);
        CHECK(t.problems[0].code == "part.gpt.past-image");
        CHECK_THAT(
            t.problems[0].message,
            Catch::Contains("the GPT header describes a disk of 131072 sectors (last usable LBA 131038, "
                            "backup header at LBA 131071), the image holds 65536: the image is cut short; "
                            "every partition lies inside it"));
        CHECK(t.problems[0].byte_offset == 512);
        // Cut inside the partition: it is named, and what is left of it is read.
        auto bytes2 = d->bytes();
        bytes2.resize(1 * kMiB + 1024 * 512);
        io::MemoryImage cut(std::move(bytes2));
        const auto t2 = io::read_partition_table(cut);
        REQUIRE(t2.partitions.size() == 1);
        CHECK(t2.partitions[0].image_sectors == 1024);
        REQUIRE(t2.problems.size() == 1);
        CHECK_THAT(t2.problems[0].message, Catch::EndsWith("partition 1 runs past its end"));
    }
}

TEST_CASE("MBR reading skips empty entries and checks ranges", "[io][partition][mbr]") {
    io::MemoryImage disk(64 * kMiB);
    io::write_mbr(disk, 512, one_partition(2048, 4096), 0xCAFE);
    // A second entry in slot 3, slot 2 left empty (type 0, with junk LBAs).
    auto e2 = hex({0, 0, 0, 0, 0x00, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
    disk.write_at(446 + 16, e2);
    auto e3 = hex({0, 0, 0, 0, 0x07, 0, 0, 0, 0x00, 0x40, 0, 0, 0x00, 0x10, 0, 0});
    disk.write_at(446 + 32, e3);
    auto table = io::read_partition_table(disk);
    REQUIRE(table.partitions.size() == 2);
    CHECK(table.partitions[0].index == 1);
    CHECK(table.partitions[1].index == 3);
    CHECK(table.partitions[1].first_lba == 0x4000);
    CHECK(table.partitions[1].sector_count == 0x1000);
    CHECK(table.partitions[1].mbr_type == 0x07);

    CHECK(table.partitions[1].image_sectors == 0x1000);
    CHECK(table.problems.empty());

    // Entries the image does not hold are listed with what it holds of them
    // and a problem each; the others are untouched.
    auto beyond = hex({0, 0, 0, 0, 0x0C, 0, 0, 0, 0x00, 0x00, 0x02, 0, 0x01, 0, 0, 0});  // LBA 131072 + 1
    disk.write_at(446 + 48, beyond);
    auto across = hex({0, 0, 0, 0, 0x07, 0, 0, 0, 0x00, 0x40, 0, 0, 0x00, 0x00, 0x02, 0});  // 0x4000 + 131072
    disk.write_at(446 + 32, across);
    table = io::read_partition_table(disk);
    REQUIRE(table.partitions.size() == 3);
    CHECK(table.partitions[0].image_sectors == 4096);
    CHECK(table.partitions[1].image_sectors == 131072 - 0x4000);
    CHECK(table.partitions[2].index == 4);
    CHECK(table.partitions[2].image_sectors == 0);
    REQUIRE(table.problems.size() == 2);
    CHECK(table.problems[0].code == "part.entry.past-image");
    CHECK(table.problems[0].byte_offset == 446 + 32);
    CHECK_THAT(
        table.problems[0].message,
        Catch::StartsWith("MBR entry 3 (type 0x07) spans LBA 16384 + 131072 sectors, 16384 sectors past "
                          "the end of the image (131072 sectors of 512 bytes)"));
    CHECK(table.problems[1].code == "part.entry.outside");
    CHECK_THAT(table.problems[1].message,
               Catch::StartsWith("MBR entry 4 (type 0x0C) starts at LBA 131072, past "
                                 "the end of the image"));
    // An entry of 0 sectors is unused (Linux msdos.c).
    disk.write_at(446 + 48 + 12, hex({0, 0, 0, 0}));
    CHECK(io::read_partition_table(disk).partitions.size() == 2);
}

namespace {

/// Writes an MBR-style partition entry (type, LBA, sectors) into slot
/// `slot` of the table sector at `table_lba`, and the 55 AA signature.
void put_entry(io::MemoryImage& d, std::uint64_t table_lba, unsigned slot, std::uint8_t type,
               std::uint32_t lba, std::uint32_t sectors) {
    std::vector<std::byte> e(16);
    e[4] = std::byte{type};
    core::store_le32(e, 8, lba);
    core::store_le32(e, 12, sectors);
    d.write_at(table_lba * 512 + 446 + slot * 16, e);
    d.write_at(table_lba * 512 + 510, std::vector<std::byte>{std::byte{0x55}, std::byte{0xAA}});
}

}  // namespace

TEST_CASE("EBR chain: logical partitions numbered from 5, bounded walk", "[io][partition][mbr]") {
    // 64 MiB: a primary at 2048, an extended partition at 20480 + 100000
    // sectors with EBRs at 20480 and 40960 (links relative to the extended
    // partition's start, logical entries relative to their EBR; formats.md §4.1).
    io::MemoryImage d(64 * kMiB);
    put_entry(d, 0, 0, 0x0C, 2048, 16384);
    put_entry(d, 0, 1, 0x0F, 20480, 100000);
    put_entry(d, 20480, 0, 0x06, 2048, 8192);
    put_entry(d, 20480, 1, 0x05, 20480, 30000);
    put_entry(d, 40960, 0, 0x07, 2048, 10000);
    auto t = io::read_partition_table(d);
    REQUIRE(t.partitions.size() == 4);
    CHECK(t.problems.empty());
    CHECK(t.partitions[2].index == 5);
    CHECK(t.partitions[2].first_lba == 22528);
    CHECK(t.partitions[2].ebr_lba == 20480);
    CHECK(t.partitions[3].index == 6);
    CHECK(t.partitions[3].first_lba == 43008);
    CHECK(t.partitions[3].sector_count == 10000);
    CHECK(t.partitions[3].image_sectors == 10000);
    CHECK(t.partitions[3].mbr_type == 0x07);

    SECTION("a loop back to the first EBR ends the walk once") {
        put_entry(d, 40960, 1, 0x05, 0, 30000);
        t = io::read_partition_table(d);
        CHECK(t.partitions.size() == 4);
        REQUIRE(t.problems.size() == 1);
        CHECK(t.problems[0].code == "part.ebr.chain");
        CHECK(t.problems[0].byte_offset == 40960 * 512);
    }
    SECTION("a logical partition past the image is listed with what the image holds") {
        put_entry(d, 40960, 0, 0x07, 2048, 100000);  // 43008 + 100000 > 131072
        t = io::read_partition_table(d);
        REQUIRE(t.partitions.size() == 4);
        CHECK(t.partitions[3].image_sectors == 131072 - 43008);
        std::vector<std::string> codes;
        for (const auto& p : t.problems) codes.push_back(p.code);
        CHECK(codes == std::vector<std::string>{"part.entry.past-image", "part.ebr.logical-outside"});
        CHECK_THAT(t.problems[0].message,
                   Catch::StartsWith("logical partition 6 (type 0x07, EBR at LBA 40960)"));
    }
    SECTION("an extended partition starting past the image has no chain to walk") {
        put_entry(d, 0, 1, 0x0F, 200000, 100000);
        t = io::read_partition_table(d);
        REQUIRE(t.partitions.size() == 2);
        REQUIRE(t.problems.size() == 1);
        CHECK(t.problems[0].code == "part.entry.outside");
    }
}

TEST_CASE("MBR with 4096-byte sectors is recognised by the boot sector it points to",
          "[io][partition][mbr]") {
    io::MemoryImage disk(64 * kMiB);
    const auto place = io::place_single_partition(io::PartitionTableKind::mbr, disk.size(), 4096);
    io::write_mbr(disk, 4096, one_partition(place.first_lba, place.sector_count), 1);
    disk.write_at(kMiB, fat_boot_sector());
    auto table = io::read_partition_table(disk);
    CHECK(table.kind == io::PartitionTableKind::mbr);
    CHECK(table.sector_size == 4096);
    REQUIRE(table.partitions.size() == 1);
    CHECK(table.partitions[0].first_lba == 256);
}

TEST_CASE("boot sectors are not partition tables", "[io][partition]") {
    auto fat = fat_boot_sector();
    CHECK(io::looks_like_boot_sector(fat));
    io::MemoryImage disk(kMiB);
    disk.write_at(0, fat);
    CHECK(io::read_partition_table(disk).kind == io::PartitionTableKind::none);

    auto exfat = std::array<std::byte, 512>{};
    exfat[0] = std::byte{0xEB};
    core::store_padded(std::span(exfat).subspan(3, 8), "EXFAT");
    CHECK(io::looks_like_boot_sector(exfat));
    auto ntfs = exfat;
    core::store_padded(std::span(ntfs).subspan(3, 8), "NTFS");
    CHECK(io::looks_like_boot_sector(ntfs));

    auto bad = fat;
    bad[0x15] = std::byte{0x00};  // media
    CHECK_FALSE(io::looks_like_boot_sector(bad));
    bad = fat;
    bad[0x0D] = std::byte{3};  // sectors per cluster
    CHECK_FALSE(io::looks_like_boot_sector(bad));
    bad = fat;
    bad[0x0E] = bad[0x0F] = std::byte{0};  // reserved sectors
    CHECK_FALSE(io::looks_like_boot_sector(bad));
    bad = fat;
    bad[0x10] = std::byte{5};  // FATs
    CHECK_FALSE(io::looks_like_boot_sector(bad));
    bad = fat;
    core::store_le16(bad, 0x0B, 8192);
    CHECK_FALSE(io::looks_like_boot_sector(bad));
    bad = fat;
    bad[0] = std::byte{0x33};  // MBR code starts 33 C0 ...
    CHECK_FALSE(io::looks_like_boot_sector(bad));
    CHECK_FALSE(io::looks_like_boot_sector(std::span(fat).first(100)));

    io::MemoryImage blank(kMiB);
    CHECK(io::read_partition_table(blank).kind == io::PartitionTableKind::none);  // no 55 AA
    io::MemoryImage tiny(100);
    CHECK(io::read_partition_table(tiny).kind == io::PartitionTableKind::none);
}

TEST_CASE("our GPT and MBR pass sgdisk and sfdisk", "[io][partition][oracle]") {
    const std::string sgdisk = find_tool("sgdisk");
    const std::string sfdisk = find_tool("sfdisk");
    if (sgdisk.empty() || sfdisk.empty()) {
        WARN("sgdisk or sfdisk not installed: oracle check skipped");
        return;
    }
    TempDir dir;
    const fs::path gpt = dir.path() / "gpt.img";
    {
        io::AtomicImage img(gpt, 64 * kMiB);
        const auto place = io::place_single_partition(io::PartitionTableKind::gpt, 64 * kMiB, 512);
        io::write_gpt(img.device(), 512, one_partition(place.first_lba, place.sector_count),
                      io::guid_from_seed(42, 1));
        img.commit();
    }
    auto [verify, status] = run(sgdisk + " -v '" + gpt.string() + "'");
    INFO(verify);
    CHECK(status == 0);
    CHECK_THAT(verify, Catch::Contains("No problems found"));
    auto [json_text, json_status] = run(sfdisk + " --json '" + gpt.string() + "'");
    INFO(json_text);
    REQUIRE(json_status == 0);
    const auto j = nlohmann::json::parse(json_text)["partitiontable"];
    CHECK(j["label"] == "gpt");
    CHECK(j["firstlba"] == 34);
    CHECK(j["lastlba"] == 131072 - 34);
    REQUIRE(j["partitions"].size() == 1);
    CHECK(j["partitions"][0]["start"] == 2048);
    CHECK(j["partitions"][0]["size"] == 131072 - 2048 - 2048);
    CHECK(j["partitions"][0]["type"] == "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7");
    CHECK(j["partitions"][0]["name"] == "fsimg");
    CHECK(j["id"] == io::format_guid(io::guid_from_seed(42, 1)));

    const fs::path mbr = dir.path() / "mbr.img";
    {
        io::AtomicImage img(mbr, 64 * kMiB);
        io::write_mbr(img.device(), 512, one_partition(2048, 129024), 0x12345678);
        img.commit();
    }
    auto [mbr_text, mbr_status] = run(sfdisk + " --json '" + mbr.string() + "'");
    INFO(mbr_text);
    REQUIRE(mbr_status == 0);
    const auto m = nlohmann::json::parse(mbr_text)["partitiontable"];
    CHECK(m["label"] == "dos");
    CHECK(m["id"] == "0x12345678");
    REQUIRE(m["partitions"].size() == 1);
    CHECK(m["partitions"][0]["start"] == 2048);
    CHECK(m["partitions"][0]["size"] == 129024);
    CHECK(m["partitions"][0]["type"] == "c");
}

TEST_CASE("we read tables written by sfdisk and sgdisk", "[io][partition][oracle]") {
    const std::string sgdisk = find_tool("sgdisk");
    const std::string sfdisk = find_tool("sfdisk");
    if (sgdisk.empty() || sfdisk.empty()) {
        WARN("sgdisk or sfdisk not installed: oracle check skipped");
        return;
    }
    TempDir dir;
    const fs::path a = dir.path() / "sfdisk.img";
    make_file(a, 64 * kMiB);
    REQUIRE(run("printf 'start=2048, size=20480, type=c\\nstart=22528, size=8192, type=7\\n' | " + sfdisk +
                " -q '" + a.string() + "'")
                .second == 0);
    auto ta = io::read_partition_table(*io::FileImage::open(a, false));
    CHECK(ta.kind == io::PartitionTableKind::mbr);
    REQUIRE(ta.partitions.size() == 2);
    CHECK(ta.partitions[1].index == 2);
    CHECK(ta.partitions[1].first_lba == 22528);
    CHECK(ta.partitions[1].sector_count == 8192);
    CHECK(ta.partitions[1].mbr_type == 0x07);

    const fs::path b = dir.path() / "sgdisk.img";
    make_file(b, 64 * kMiB);
    REQUIRE(run(sgdisk + " -n 1:2048:+10M -t 1:0700 -c 1:first -n 3:0:+5M -t 3:8300 '" + b.string() + "'")
                .second == 0);
    auto tb = io::read_partition_table(*io::FileImage::open(b, false));
    CHECK(tb.kind == io::PartitionTableKind::gpt);
    REQUIRE(tb.partitions.size() == 2);
    CHECK(tb.partitions[0].name == "first");
    CHECK(tb.partitions[0].gpt_type == io::kGptBasicDataType);
    CHECK(tb.partitions[0].sector_count == 20480);
    CHECK(tb.partitions[1].index == 3);
    CHECK(tb.partitions[1].first_lba == 2048 + 20480);
}

TEST_CASE("split_image_spec", "[io][open]") {
    TempDir dir;
    const std::string base = (dir.path() / "disk.img").string();
    CHECK(io::split_image_spec(base + "@2") == std::pair<std::string, std::optional<unsigned>>(base, 2u));
    CHECK(io::split_image_spec(base) == std::pair<std::string, std::optional<unsigned>>(base, std::nullopt));
    CHECK(io::split_image_spec(base + "@").second == std::nullopt);
    CHECK(io::split_image_spec(base + "@x1").second == std::nullopt);
    CHECK(io::split_image_spec("@3").second == std::nullopt);
    CHECK(io::split_image_spec("a@b@12") == std::pair<std::string, std::optional<unsigned>>("a@b", 12u));
    make_file(base + "@7", 10);  // a real file with that name wins
    CHECK(io::split_image_spec(base + "@7").first == base + "@7");
    CHECK(io::split_image_spec(base + "@7").second == std::nullopt);
    REQUIRE_THROWS_WITH(io::split_image_spec(base + "@99999999999"), Catch::Contains("99999999999"));
}

TEST_CASE("open_volume picks the partition", "[io][open]") {
    TempDir dir;
    const auto fat = fat_boot_sector();

    SECTION("bare filesystem") {
        const fs::path p = dir.path() / "bare.img";
        make_file(p, kMiB);
        {
            auto f = io::FileImage::open(p, true);
            f->write_at(0, fat);
        }
        auto v = io::open_volume(p.string());
        CHECK(v.table.kind == io::PartitionTableKind::none);
        CHECK_FALSE(v.partition.has_value());
        CHECK(v.window == nullptr);
        CHECK(v.offset() == 0);
        CHECK(v.device().size() == kMiB);
        CHECK(read(v.device(), 0, 512) == std::vector<std::byte>(fat.begin(), fat.end()));
        REQUIRE_THROWS_WITH(io::open_volume(p.string() + "@1"), Catch::Contains("no partition table"));
    }
    SECTION("one GPT partition opens without @N") {
        const fs::path p = dir.path() / "gpt.img";
        make_file(p, 64 * kMiB);
        {
            auto f = io::FileImage::open(p, true);
            const auto place = io::place_single_partition(io::PartitionTableKind::gpt, 64 * kMiB, 512);
            io::write_gpt(*f, 512, one_partition(place.first_lba, place.sector_count),
                          io::guid_from_seed(1, 1));
            f->write_at(kMiB, fat);
        }
        for (const std::string& spec : {p.string(), p.string() + "@1"}) {
            auto v = io::open_volume(spec);
            CHECK(v.table.kind == io::PartitionTableKind::gpt);
            REQUIRE(v.partition.has_value());
            CHECK(v.partition->index == 1);
            CHECK(v.offset() == kMiB);
            CHECK(v.device().size() == (131072 - 2048 - 2048) * 512ull);
            CHECK(read(v.device(), 0, 512) == std::vector<std::byte>(fat.begin(), fat.end()));
        }
        try {
            io::open_volume(p.string() + "@2");
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::usage);
            CHECK_THAT(e.what(), Catch::Contains("no partition 2") && Catch::Contains("LBA 2048"));
        }
        auto w = io::open_volume(p.string(), true);
        w.device().write_at(0, fat);  // writable through the window
    }
    SECTION("several MBR partitions need @N") {
        const fs::path p = dir.path() / "mbr.img";
        make_file(p, 64 * kMiB);
        {
            auto f = io::FileImage::open(p, true);
            io::write_mbr(*f, 512, one_partition(2048, 4096), 1);
            f->write_at(446 + 16, hex({0, 0, 0, 0, 0x07, 0, 0, 0, 0x00, 0x20, 0, 0, 0x00, 0x10, 0, 0}));
        }
        try {
            io::open_volume(p.string());
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::usage);
            CHECK_THAT(e.what(),
                       Catch::Contains("@N") && Catch::Contains("type 0x0C") && Catch::Contains("type 0x07"));
        }
        auto v = io::open_volume(p.string() + "@2");
        CHECK(v.offset() == 0x2000 * 512ull);
        CHECK(v.device().size() == 0x1000 * 512ull);
    }
    SECTION("missing file names the path") {
        REQUIRE_THROWS_WITH(io::open_volume((dir.path() / "nope.img").string()), Catch::Contains("nope.img"));
    }
}

TEST_CASE("setting a partition type changes that byte or GUID only", "[io][partition]") {
    SECTION("MBR primary and logical entries") {
        io::MemoryImage d(64 * kMiB);
        put_entry(d, 0, 0, 0x83, 2048, 16384);
        put_entry(d, 0, 1, 0x0F, 20480, 100000);
        put_entry(d, 20480, 0, 0x83, 2048, 8192);
        const auto before = read(d, 0, static_cast<std::size_t>(d.size()));
        const auto t = io::read_partition_table(d);
        REQUIRE(t.partitions.size() == 3);
        CHECK(t.partitions[0].entry_offset == 446);
        CHECK(t.partitions[2].entry_offset == 20480 * 512 + 446);
        CHECK(io::set_partition_type(d, t, t.partitions[2], 0x07, io::kGptBasicDataType));
        CHECK_FALSE(io::set_partition_type(d, t, t.partitions[0], 0x83, io::kGptBasicDataType));
        auto after = read(d, 0, static_cast<std::size_t>(d.size()));
        CHECK(after[20480 * 512 + 446 + 4] == std::byte{0x07});
        after[20480 * 512 + 446 + 4] = std::byte{0x83};
        CHECK(after == before);
        CHECK(io::read_partition_table(d).partitions[2].mbr_type == 0x07);
        // A table that changed since it was read is not written over.
        put_entry(d, 20480, 0, 0x0B, 2048, 8192);
        CHECK_THROWS_AS(io::set_partition_type(d, t, t.partitions[2], 0x0C, io::kGptBasicDataType), Error);
    }
    SECTION("GPT: both arrays, both headers, valid CRCs") {
        io::MemoryImage disk(64 * kMiB);
        const auto place = io::place_single_partition(io::PartitionTableKind::gpt, disk.size(), 512);
        auto p = one_partition(place.first_lba, place.sector_count);
        p.gpt_type = io::guid_from_seed(3, 3);  // some other type
        io::write_gpt(disk, 512, p, io::guid_from_seed(7, 1));
        const auto t = io::read_partition_table(disk);
        REQUIRE(t.partitions.size() == 1);
        CHECK(t.partitions[0].entry_offset == 2 * 512);
        CHECK(io::set_partition_type(disk, t, t.partitions[0], 0x07, io::kGptBasicDataType));
        const std::uint64_t n = disk.size() / 512;
        for (const std::uint64_t lba : {std::uint64_t{1}, n - 1}) {
            auto header = read(disk, lba * 512, 92);
            const std::uint32_t stored = core::load_le32(header, 16);
            core::store_le32(header, 16, 0);
            CHECK(stored == zlib_crc(header));
            const auto array = read(disk, core::load_le64(header, 72) * 512, 128 * 128);
            CHECK(core::load_le32(header, 88) == zlib_crc(array));
            CHECK(std::vector<std::byte>(array.begin(), array.begin() + 16) ==
                  hex({0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44, 0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26,
                       0x99, 0xC7}));
        }
        const auto again = io::read_partition_table(disk);
        CHECK(again.partitions[0].gpt_type == io::kGptBasicDataType);
        CHECK(again.partitions[0].gpt_unique == t.partitions[0].gpt_unique);
        CHECK(again.partitions[0].name == t.partitions[0].name);
        // The primary damaged: the backup alone is rewritten, and still read.
        disk.write_at(512 + 16, std::vector<std::byte>(4, std::byte{0xEE}));
        const auto from_backup = io::read_partition_table(disk);
        CHECK(io::set_partition_type(disk, from_backup, from_backup.partitions[0], 0x07, p.gpt_type));
        CHECK(io::read_partition_table(disk).partitions[0].gpt_type == p.gpt_type);
    }
}

TEST_CASE("copy_stored_bytes copies data around a skipped range, keeping holes", "[io]") {
    const fs::path dir = fs::temp_directory_path() / ("fsimg-copy-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path src = dir / "src.img";
    {
        std::ofstream(src, std::ios::binary).flush();
        fs::resize_file(src, 8 * kMiB);
        auto f = io::FileImage::open(src, true);
        f->write_at(100, std::vector<std::byte>(10, std::byte{1}));              // before the range
        f->write_at(3 * kMiB, std::vector<std::byte>(kMiB, std::byte{2}));       // inside it
        f->write_at(6 * kMiB + 7, std::vector<std::byte>(70000, std::byte{3}));  // after it
    }
    const auto source = io::FileImage::open(src, false);
    io::MemoryImage target(8 * kMiB);
    io::copy_stored_bytes(*source, target, 2 * kMiB, 3 * kMiB);
    std::vector<std::byte> want(8 * kMiB), got(8 * kMiB);
    source->read_at(0, want);
    std::fill(want.begin() + 2 * kMiB, want.begin() + 5 * kMiB, std::byte{0});
    target.read_at(0, got);
    CHECK(got == want);
    fs::remove_all(dir);
}

TEST_CASE("partition_overlaps names shared sectors and EBRs, not a logical's container", "[io][partition]") {
    const auto part = [](unsigned index, std::uint64_t first, std::uint64_t count, std::uint8_t type = 0x0C,
                         std::uint64_t ebr = 0) {
        io::Partition p;
        p.index = index;
        p.first_lba = first;
        p.sector_count = count;
        p.mbr_type = type;
        p.ebr_lba = ebr;
        p.entry_offset = 446 + 16 * std::uint64_t(index - 1);
        return p;
    };
    io::PartitionTable t;
    t.kind = io::PartitionTableKind::mbr;
    t.partitions = {part(1, 2048, 8192), part(2, 10240, 20480, 0x0F), part(5, 12288, 4096, 0x0C, 10240),
                    part(6, 18432, 4096, 0x0C, 16384)};
    // A sound table: nothing shared; logical 5 lies in its extended container 2.
    for (const auto& p : t.partitions) CHECK(io::partition_overlaps(t, p).empty());
    // Partition 1 grown into the extended partition and the first EBR.
    t.partitions[0].sector_count = 8193;
    CHECK(io::partition_overlaps(t, t.partitions[0]) ==
          std::vector<std::string>{"partition 2 (LBA 10240..30719)", "the EBR of partition 5 (LBA 10240)"});
    CHECK(io::partition_overlaps(t, t.partitions[2]).empty());  // 5 still clear of 1
    t.partitions[0].sector_count = 8192;
    // Logical 5 grown over the EBR of logical 6 and into 6.
    t.partitions[2].sector_count = 6145;
    CHECK(io::partition_overlaps(t, t.partitions[2]) ==
          std::vector<std::string>{"partition 6 (LBA 18432..22527)", "the EBR of partition 6 (LBA 16384)"});
    CHECK(io::partition_overlaps(t, t.partitions[3]) ==
          std::vector<std::string>{"partition 5 (LBA 12288..18432)"});
    // An empty entry overlaps nothing.
    CHECK(io::partition_overlaps(t, part(3, 0, 0)).empty());
}

TEST_CASE("MBR of several partitions: primaries, an extended one, logical ones read back",
          "[io][partition][mbr]") {
    io::MemoryImage disk(64 * kMiB);
    std::vector<io::Partition> parts(5);
    parts[0] = one_partition(2048, 8192);
    parts[0].index = 1;
    parts[0].mbr_type = 0x0C;
    parts[0].bootable = true;
    parts[1] = one_partition(10240, 4096);
    parts[1].index = 2;
    parts[1].mbr_type = 0x83;
    parts[2] = one_partition(14336, 40960);  // the extended partition: EBRs at 14336 and 30720
    parts[2].index = 4;
    parts[2].mbr_type = 0x0F;
    parts[3] = one_partition(16384, 14336);
    parts[3].index = 5;
    parts[3].mbr_type = 0x07;
    parts[3].ebr_lba = 14336;
    parts[4] = one_partition(32768, 22528);
    parts[4].index = 6;
    parts[4].mbr_type = 0x0E;
    parts[4].ebr_lba = 30720;
    io::write_mbr(disk, 512, parts, 0x5EED0001u);

    const io::PartitionTable t = io::read_partition_table(disk);
    REQUIRE(t.kind == io::PartitionTableKind::mbr);
    CHECK(t.mbr_disk_signature == 0x5EED0001u);
    CHECK(t.problems.empty());
    REQUIRE(t.partitions.size() == 5);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        CHECK(t.partitions[i].index == parts[i].index);
        CHECK(t.partitions[i].first_lba == parts[i].first_lba);
        CHECK(t.partitions[i].sector_count == parts[i].sector_count);
        CHECK(t.partitions[i].mbr_type == parts[i].mbr_type);
        CHECK(t.partitions[i].bootable == parts[i].bootable);
    }
    // The second EBR's link: type 05 at 30720 - 14336 relative to the extended start.
    CHECK(read(disk, 14336 * 512 + 446 + 16 + 4, 1) == hex({0x05}));
    CHECK(core::load_le32(read(disk, 14336 * 512 + 446 + 16 + 8, 4), 0) == 30720u - 14336u);
    CHECK(core::load_le32(read(disk, 14336 * 512 + 446 + 16 + 12, 4), 0) == 32768u + 22528u - 30720u);
    // Entry 0 of the last EBR: the partition relative to its EBR; entry 1 empty ends the chain.
    CHECK(core::load_le32(read(disk, 30720 * 512 + 446 + 8, 4), 0) == 2048u);
    CHECK(read(disk, 30720 * 512 + 446 + 16, 16) == std::vector<std::byte>(16));
}

TEST_CASE("MBR of several partitions: what cannot be written is refused before any write",
          "[io][partition][mbr]") {
    io::MemoryImage disk(16 * kMiB);
    auto logical = one_partition(4096, 2048);
    logical.index = 5;
    logical.ebr_lba = 2048;
    logical.mbr_type = 0x83;
    // A logical partition without an extended one.
    CHECK_THROWS_WITH(io::write_mbr(disk, 512, std::vector<io::Partition>{logical}, 1),
                      Catch::Contains("needs an extended partition"));
    auto ext = one_partition(2048, 8192);
    ext.index = 4;
    ext.mbr_type = 0x05;
    // Its EBR after it, or the partition outside the extended one.
    auto bad = logical;
    bad.ebr_lba = 5000;
    CHECK_THROWS_WITH(io::write_mbr(disk, 512, std::vector<io::Partition>{ext, bad}, 1),
                      Catch::Contains("inside the extended partition"));
    bad = logical;
    bad.sector_count = 9000;
    CHECK_THROWS_WITH(io::write_mbr(disk, 512, std::vector<io::Partition>{ext, bad}, 1),
                      Catch::Contains("inside the extended partition"));
    // Numbered with a gap; a number given twice.
    bad = logical;
    bad.index = 6;
    CHECK_THROWS_WITH(io::write_mbr(disk, 512, std::vector<io::Partition>{ext, bad}, 1),
                      Catch::Contains("without a gap"));
    auto twice = ext;
    twice.mbr_type = 0x83;
    CHECK_THROWS_WITH(io::write_mbr(disk, 512, std::vector<io::Partition>{ext, twice}, 1),
                      Catch::Contains("given twice"));
    CHECK(read(disk, 0, 512) == std::vector<std::byte>(512));  // nothing written
}

TEST_CASE("GPT of several partitions: entries in their slots, overlaps refused", "[io][partition][gpt]") {
    io::MemoryImage disk(64 * kMiB);
    std::vector<io::Partition> parts(2);
    parts[0] = one_partition(2048, 4096);
    parts[0].index = 1;
    parts[0].gpt_type = io::named_partition_type("esp")->gpt;
    parts[0].gpt_unique = io::guid_from_seed(3, 2);
    parts[0].name = "EFI";
    parts[1] = one_partition(8192, 8192);
    parts[1].index = 3;  // slot 2 stays empty
    parts[1].gpt_unique = io::guid_from_seed(3, 4);
    io::write_gpt(disk, 512, parts, io::guid_from_seed(3, 1));
    const io::PartitionTable t = io::read_partition_table(disk);
    REQUIRE(t.kind == io::PartitionTableKind::gpt);
    REQUIRE(t.partitions.size() == 2);
    CHECK(t.partitions[0].index == 1);
    CHECK(t.partitions[0].name == "EFI");
    CHECK(t.partitions[0].gpt_type == io::named_partition_type("esp")->gpt);
    CHECK(t.partitions[1].index == 3);
    CHECK(t.partitions[1].name.empty());
    CHECK(t.partitions[1].gpt_type == io::kGptBasicDataType);
    CHECK(t.partitions[1].gpt_unique == io::guid_from_seed(3, 4));

    io::MemoryImage other(64 * kMiB);
    parts[1].first_lba = 4096;
    CHECK_THROWS_WITH(io::write_gpt(other, 512, parts, io::guid_from_seed(3, 1)), Catch::Contains("overlap"));
    CHECK(read(other, 0, 512) == std::vector<std::byte>(512));
}
