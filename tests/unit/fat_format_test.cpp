#include <catch2/catch.hpp>

#include <variant>

#include "fsimg/fat/format.hpp"
#include "fsimg/fat/layout.hpp"
#include "fsimg/fat/structs.hpp"
#include "fsimg/fat/volume.hpp"
#include "fsimg/io/block_device.hpp"

using namespace fsimg;
using namespace fsimg::fat;

namespace {
Layout plan(std::uint64_t bytes, FatType type, std::uint32_t cluster, std::uint32_t bps = 512) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.type = type;
    r.cluster_bytes = cluster;
    r.bytes_per_sector = bps;
    auto v = plan_layout(r);
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}
std::uint32_t fat_entry_on_disk(const io::BlockDevice& dev, const Layout& l, unsigned copy, std::uint32_t n) {
    std::vector<std::byte> fat(l.fat_bytes());
    dev.read_at((l.first_fat_sector + std::uint64_t(copy) * l.fat_size_sectors) * l.bytes_per_sector, fat);
    return get_fat_entry(fat, l.type, n);
}
}  // namespace

TEST_CASE("formatted volumes read back with the same geometry", "[fat_format]") {
    struct Case {
        std::uint64_t bytes;
        FatType type;
        std::uint32_t cluster;
        std::uint32_t bps;
    };
    for (const Case& c :
         {Case{4u << 20, FatType::fat12, 1024, 512}, Case{64u << 20, FatType::fat16, 2048, 512},
          Case{300u << 20, FatType::fat32, 4096, 512}, Case{600u << 20, FatType::fat32, 8192, 4096}}) {
        const Layout l = plan(c.bytes, c.type, c.cluster, c.bps);
        io::MemoryImage dev(c.bytes);
        FormatOptions o;
        o.volume_id = 0x12345678;
        o.label = "Test";
        o.timestamp_unix = 1700000000;
        format_volume(dev, l, o);

        const BootRegion r = read_boot_region(dev);
        REQUIRE(r.layout);
        CHECK(*r.layout == l);
        CHECK(r.boot.volume_id == 0x12345678);
        CHECK(r.boot.volume_label == "TEST       ");
        REQUIRE(r.root_label);
        CHECK(*r.root_label == "TEST       ");
        CHECK(fat_entry_on_disk(dev, l, 0, 0) == fat0_value(l.type, 0xF8));
        CHECK(fat_entry_on_disk(dev, l, 1, 1) == end_of_chain(l.type));
        if (l.type == FatType::fat32) {
            CHECK(fat_entry_on_disk(dev, l, 0, 2) == 0x0FFFFFFF);  // the root directory's cluster
            CHECK(fat_entry_on_disk(dev, l, 1, 3) == 0);
            REQUIRE(r.fsinfo);
            CHECK(r.fsinfo->free_count == l.cluster_count - 1);
            CHECK(r.fsinfo->next_free == 3);
            CHECK(r.fsinfo->lead_signature == kFsInfoLeadSig);
            REQUIRE(r.backup);
            CHECK(r.backup_identical);
        } else {
            CHECK(fat_entry_on_disk(dev, l, 0, 2) == 0);
        }
    }
}

TEST_CASE("format refuses a device smaller than the layout", "[fat_format]") {
    const Layout l = plan(8u << 20, FatType::fat12, 2048);
    io::MemoryImage small(4u << 20);
    CHECK_THROWS_WITH(format_volume(small, l, FormatOptions{}), Catch::Contains("4194304"));
}

TEST_CASE("a reused device gets its metadata zeroed", "[fat_format]") {
    const Layout l = plan(32u << 20, FatType::fat16, 2048);
    io::MemoryImage dev(std::vector<std::byte>(32u << 20, std::byte{0xAB}));
    FormatOptions o;
    o.device_is_zeroed = false;
    format_volume(dev, l, o);
    CHECK(fat_entry_on_disk(dev, l, 0, 2) == 0);
    CHECK(fat_entry_on_disk(dev, l, 1, l.cluster_count + 1) == 0);
    std::array<std::byte, 32> first_root{};
    dev.read_at(l.first_root_dir_sector * 512, first_root);
    CHECK(first_root[0] == std::byte{0});  // end of directory: no label was asked for
}
