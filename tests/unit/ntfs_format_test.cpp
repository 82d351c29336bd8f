// NTFS format (include/fsimg/ntfs/format.hpp) on a MemoryImage: the boot
// sector and its backup, every record's fixups and header, $MFTMirr, the
// root index, $Bitmap exactly the allocated clusters, reproducible bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <variant>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/structs.hpp"
#include "ntfs_fixture.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
using fsimg::ntfs::test::must;
using fsimg::ntfs::test::opts;

namespace {

std::vector<std::byte> read(const io::MemoryImage& img, std::uint64_t off, std::size_t n) {
    std::vector<std::byte> v(n);
    img.read_at(off, v);
    return v;
}

bool bit(const std::vector<std::byte>& bm, std::uint64_t i) {
    return (static_cast<std::uint8_t>(bm[i / 8]) >> (i % 8)) & 1;
}

}  // namespace

TEST_CASE("ntfs format: a 16 MiB volume, structure by structure", "[ntfs][format]") {
    const auto bps = GENERATE(512u, 4096u);
    const auto cluster = GENERATE(512u, 4096u, 65536u);
    if (cluster < bps) return;
    INFO("sector " << bps << " cluster " << cluster);
    const Layout L = must(16u << 20, cluster, bps);
    io::MemoryImage img(16u << 20);
    format_volume(img, L, opts());

    const auto boot = read(img, 0, 512);
    const auto backup = read(img, (L.device_sectors - 1) * bps, 512);
    CHECK(boot == backup);
    const BootSector b = decode_boot_sector(std::span<const std::byte>(boot).first<512>());
    CHECK(b.mft_lcn == L.mft.lcn);
    CHECK(b.mftmirr_lcn == L.mftmirr.lcn);
    CHECK(b.total_sectors == L.total_sectors);
    CHECK(b.volume_serial_number == 0x0123456789ABCDEFull);
    CHECK(decode_cluster_bytes(b.sectors_per_cluster_raw, bps) == cluster);
    CHECK(decode_record_size(b.clusters_per_mft_record, cluster) == L.mft_record_bytes);
    CHECK(decode_record_size(b.clusters_per_index_block, cluster) == 4096u);

    // Every record: fixups verify, the header names it, the in-use flag
    // matches the MFT bitmap (0..15 and 24..26).
    const auto mft = read(img, L.mft.lcn * cluster, L.mft_bytes());
    const auto mbm = read(img, L.mft_bitmap.lcn * cluster, 8);
    for (std::uint32_t n = 0; n < L.mft_records; ++n) {
        INFO("record " << n);
        std::vector<std::byte> r(mft.begin() + std::ptrdiff_t(n) * L.mft_record_bytes,
                                 mft.begin() + std::ptrdiff_t(n + 1) * L.mft_record_bytes);
        REQUIRE(!verify_and_remove_fixups(r));
        const auto h = decode_mft_record_header(r);
        CHECK(h.record_number == n);
        CHECK(h.bytes_allocated == L.mft_record_bytes);
        const bool in_use = n < 16 || (n >= 24 && n < 27);
        CHECK(((h.flags & record_flag::in_use) != 0) == in_use);
        if (n < 64) CHECK(bit(mbm, n) == in_use);
        if (n == 5 || n == 11) CHECK((h.flags & record_flag::directory));
        if (n >= 24 && n < 27) CHECK(h.flags == 0x0D);
    }
    // $MFTMirr holds the first records.
    CHECK(read(img, L.mftmirr.lcn * cluster, L.mftmirr_bytes()) ==
          std::vector<std::byte>(mft.begin(), mft.begin() + std::ptrdiff_t(L.mftmirr_bytes())));

    // $Bitmap: exactly the allocated clusters, plus the bits past the end.
    std::vector<std::byte> bm;
    for (const Extent& e : L.bitmap) {
        const auto part = read(img, e.lcn * cluster, e.clusters * cluster);
        bm.insert(bm.end(), part.begin(), part.end());
    }
    std::vector<bool> expect(L.bitmap_bytes * 8, false);
    for (const Extent& e : L.allocated())
        for (std::uint64_t c = e.lcn; c < e.lcn + e.clusters; ++c) expect[c] = true;
    for (std::uint64_t c = L.cluster_count; c < expect.size(); ++c) expect[c] = true;
    std::uint64_t wrong = 0;
    for (std::uint64_t c = 0; c < expect.size(); ++c) wrong += bit(bm, c) != expect[c];
    CHECK(wrong == 0);

    // $LogFile is all 0xFF; the root INDX block verifies.
    const auto log = read(img, L.logfile.lcn * cluster, 4096);
    CHECK(std::all_of(log.begin(), log.end(), [](std::byte x) { return x == std::byte{0xFF}; }));
    auto indx = read(img, L.root_index.at(0).lcn * cluster, 4096);
    CHECK(!verify_and_remove_fixups(indx));
    CHECK(core::load_string(std::span(indx).first(4)) == "INDX");
}

TEST_CASE("ntfs format: the same options give the same bytes", "[ntfs][format]") {
    const Layout L = must(8u << 20);
    io::MemoryImage a(8u << 20), b(8u << 20);
    format_volume(a, L, opts());
    format_volume(b, L, opts());
    CHECK(a.bytes() == b.bytes());
    io::MemoryImage c(8u << 20);
    auto o = opts();
    o.volume_serial_number ^= 1;
    format_volume(c, L, o);
    CHECK(a.bytes() != c.bytes());
}

TEST_CASE("ntfs format: refusals", "[ntfs][format]") {
    const Layout L = must(8u << 20);
    io::MemoryImage small(4u << 20);
    CHECK_THROWS_AS(format_volume(small, L, opts()), Error);
    io::MemoryImage img(8u << 20);
    auto o = opts();
    o.label.assign(129, u'x');
    CHECK_THROWS_AS(format_volume(img, L, o), Error);
    o.label.assign(128, u'x');
    CHECK_NOTHROW(format_volume(img, L, o));
}

TEST_CASE("ntfs format: a reused device gets the same metadata as a fresh one", "[ntfs][format]") {
    const Layout L = must(8u << 20);
    io::MemoryImage fresh(8u << 20);
    format_volume(fresh, L, opts());
    io::MemoryImage reused(std::vector<std::byte>(8u << 20, std::byte{0xAA}));
    auto o = opts();
    o.device_is_zeroed = false;
    format_volume(reused, L, o);
    const auto& a = fresh.bytes();
    const auto& b = reused.bytes();
    for (const Extent& e : L.allocated()) {
        INFO("extent at LCN " << e.lcn);
        const auto from = static_cast<std::ptrdiff_t>(e.lcn * L.cluster_bytes);
        const auto to = from + static_cast<std::ptrdiff_t>(e.clusters * L.cluster_bytes);
        CHECK(std::equal(a.begin() + from, a.begin() + to, b.begin() + from));
    }
    CHECK(std::equal(a.end() - 512, a.end(), b.end() - 512));  // backup boot sector
}
