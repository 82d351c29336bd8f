// exfat::Volume (include/fsimg/exfat/volume.hpp) and the entry-set parser
// (exfat/directory.hpp) on volumes built in memory by exfat::format_volume,
// filled with hand-made entry sets, FAT chains and bitmap bits: contiguous and
// fragmented files, ValidDataLength, vendor entries, case-insensitive lookup,
// timestamps; damaged and hostile images (loops, lengths larger than the
// image, random corruption) end in fsimg::Error, never a crash or a hang.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <variant>

#include "exfat_test_volume.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/format.hpp"
#include "fsimg/exfat/layout.hpp"
#include "fsimg/exfat/structs.hpp"
#include "fsimg/exfat/volume.hpp"
#include "fsimg/io/block_device.hpp"

using namespace fsimg;
using namespace fsimg::exfat;
using fsimg::exfat::test::corrupt;
using fsimg::exfat::test::pattern;
using fsimg::exfat::test::TestVolume;

namespace {

std::vector<std::byte> read_all(const Volume& v, const FileRecord& r) {
    std::vector<std::byte> out;
    v.read_file(r, [&](std::span<const std::byte> s) { out.insert(out.end(), s.begin(), s.end()); });
    return out;
}

std::vector<std::string> names(const ParsedDirectory& d) {
    std::vector<std::string> n;
    for (const auto& f : d.files) n.push_back(f.name);
    return n;
}

/// Walks every directory (ancestor set + depth limit, like the CLI) and reads
/// every file; returns the number of records seen. Errors are the caller's.
std::size_t walk(const Volume& v, const FileRecord& dir, std::vector<std::uint32_t>& ancestors,
                 unsigned depth) {
    if (depth > Volume::kMaxDepth) return 0;
    for (auto a : ancestors) {
        if (a == dir.first_cluster) return 0;
    }
    std::size_t n = 0;
    ancestors.push_back(dir.first_cluster);
    for (const auto& r : v.read_directory(dir).files) {
        ++n;
        try {
            if (r.is_directory()) {
                n += walk(v, r, ancestors, depth + 1);
            } else {
                std::uint64_t got = 0;
                v.read_file(r, [&](std::span<const std::byte> s) { got += s.size(); });
                REQUIRE(got == r.data_length);
            }
        } catch (const Error& e) {
            REQUIRE(e.code() != ErrorCode::io);
        }
    }
    ancestors.pop_back();
    return n;
}

}  // namespace

TEST_CASE("exfat reader: an empty volume", "[exfat_reader]") {
    for (std::uint32_t bps : {512u, 4096u}) {
        TestVolume t(8u << 20, 4096, bps);
        const Volume v(t.dev);
        INFO("bps " << bps);
        CHECK(v.bytes_per_sector() == bps);
        CHECK(v.cluster_bytes() == 4096);
        CHECK(v.cluster_count() == t.l.cluster_count);
        CHECK(v.root_cluster() == t.l.root_first_cluster);
        CHECK(v.cluster_offset(2) == std::uint64_t(t.l.cluster_heap_offset) * bps);
        CHECK(v.fat_entry(0) == 0xFFFFFFF8);
        CHECK(v.fat_entry(1) == 0xFFFFFFFF);
        CHECK_THROWS_AS(v.fat_entry(v.max_cluster() + 1), Error);
        CHECK_FALSE(v.upcase_problem());
        CHECK(v.upcase_table()[u'a'] == u'A');
        CHECK(v.upcase_table()[u'\u00e9'] == u'\u00c9');
        const ParsedDirectory root = v.read_directory(v.root_record());
        CHECK(root.files.empty());
        CHECK(root.anomalies.empty());
        REQUIRE(root.system.size() == 3);
        CHECK(root.system[0].entry_type == kEntryVolumeLabel);
        CHECK(root.system[1].entry_type == kEntryAllocationBitmap);
        CHECK(root.system[2].entry_type == kEntryUpcaseTable);
        CHECK(root.end_marker);
        CHECK(root.entries_scanned == 3);
        // The bitmap: exactly the system objects' clusters.
        CHECK(v.used_clusters() == t.l.used_clusters());
        const auto runs = v.used_runs(10);
        REQUIRE(runs.size() == 1);
        CHECK(runs[0].first == 2);
        CHECK(runs[0].count == t.l.used_clusters());
        CHECK(v.cluster_in_use(t.l.root_first_cluster));
        CHECK_FALSE(v.cluster_in_use(t.l.root_first_cluster + 1));
        // The up-case table is FAT-chained: 2 clusters of 4 KiB.
        const Chain c = v.follow_chain(t.l.upcase_first_cluster, 100);
        CHECK(c.clusters == 2);
        CHECK(c.end == ChainEnd::end_of_chain);
        CHECK(v.lookup("/")->is_root);
        CHECK_FALSE(v.lookup("nothing"));
    }
}

TEST_CASE("exfat reader: contiguous, fragmented, sparse-tail and empty files", "[exfat_reader]") {
    TestVolume t;
    const auto a = pattern(10000, 1);
    t.add_file(t.root_at(), u"contiguous.bin", a);
    // Fragmented: clusters out of order, FAT-chained.
    const std::uint32_t base = t.next_free + 10;
    const std::vector<std::uint32_t> frag{base + 5, base, base + 9, base + 1};
    const auto b = pattern(4 * 4096 - 100, 2);
    t.add_chained_file(t.root_at(), u"Fragmented File.dat", frag, b, b.size());
    // ValidDataLength 5000 of DataLength 9000: the rest reads as zeros.
    const std::vector<std::uint32_t> tail{base + 20, base + 21, base + 22};
    auto c = pattern(9000, 3);
    t.add_chained_file(t.root_at(), u"tail.log", tail, c, 5000);
    std::fill(c.begin() + 5000, c.end(), std::byte{0});
    t.add_file(t.root_at(), u"empty", {});

    const Volume v(t.dev);
    const ParsedDirectory root = v.read_directory(v.root_record());
    CHECK(root.anomalies.empty());
    REQUIRE(names(root) ==
            std::vector<std::string>{"contiguous.bin", "Fragmented File.dat", "tail.log", "empty"});
    for (const auto& r : root.files) {
        CHECK(r.checksum_ok());
        CHECK(r.name_hash_ok());
        CHECK(r.name_hash_computed.has_value());
    }
    CHECK(root.files[0].no_fat_chain());
    CHECK_FALSE(root.files[1].no_fat_chain());
    CHECK(root.files[1].entries == 4);  // File, Stream, 2 File Name entries (19 units)
    CHECK(read_all(v, root.files[0]) == a);
    CHECK(read_all(v, root.files[1]) == b);
    CHECK(read_all(v, root.files[2]) == c);
    CHECK(read_all(v, root.files[3]).empty());
    const auto runs = v.allocation(frag[0], b.size(), false, "x");
    REQUIRE(runs.size() == 4);  // no two links are consecutive
    CHECK(runs[0].first == base + 5);
    CHECK(runs[1].first == base);
    CHECK(runs[3].first == base + 1);
    CHECK(runs[3].count == 1);
    const Chain ch = v.follow_chain(frag[0], 100);
    CHECK(ch.clusters == 4);
    CHECK(ch.end == ChainEnd::end_of_chain);
    // A chain of consecutive links is one run.
    const auto contiguous = v.allocation(tail[0], 9000, false, "tail");
    REQUIRE(contiguous.size() == 1);
    CHECK(contiguous[0].count == 3);
}

TEST_CASE("exfat reader: directories, long and Unicode names, case-insensitive lookup", "[exfat_reader]") {
    TestVolume t;
    const std::uint64_t sub = t.add_dir(t.root_at(), u"Sub Dir");
    const std::uint64_t deep = t.add_dir(sub, u"\u00e9cole");
    const auto data = pattern(5000, 4);
    const std::u16string long_name =
        u"A very long file name that needs three File Name entries.txt";  // 60 units: 4 entries
    t.add_file(deep, long_name, data);
    t.add_file(sub, u"note45.txt", pattern(10, 5));

    const Volume v(t.dev);
    const auto r =
        v.lookup("/SUB DIR/\u00c9COLE/a VERY long FILE name that needs three file name entries.TXT");
    REQUIRE(r);
    CHECK(r->name == core::utf16_to_utf8(long_name));
    CHECK(r->entries == 2 + 4);
    CHECK(read_all(v, *r) == data);
    CHECK(v.lookup("sub dir/")->is_directory());
    CHECK(v.lookup("//Sub Dir//\u00e9cole")->name == "\u00e9cole");
    CHECK_FALSE(v.lookup("/Sub Dir/ecole"));
    CHECK_THROWS_AS(v.lookup("/Sub Dir/note45.txt/x"), Error);
    CHECK_THROWS_AS(v.lookup("/Sub Dir/../x"), Error);
    // NameHash of "note45.txt" is 0x6039 (formats.md §2.5, exfat-fuse's value).
    const auto n = v.lookup("/sub dir/NOTE45.TXT");
    REQUIRE(n);
    CHECK(n->name_hash == 0x6039);
    CHECK(*n->name_hash_computed == 0x6039);
    CHECK(name_hash(u"NOTE45.TXT", v.upcase_table()) == 0x6039);
}

TEST_CASE("exfat reader: vendor entries are kept, damaged sets reported", "[exfat_reader]") {
    TestVolume t;
    // A set with a Vendor Extension entry: SecondaryCount + 1, checksum redone.
    auto set = encode_file_entry_set(TestVolume::info(u"vendor.txt", kFileAttrArchive, 0x01, 0, 0, 0));
    std::array<std::byte, 32> vendor{};
    vendor[0] = std::byte{kEntryVendorExtension};
    set.insert(set.end(), vendor.begin(), vendor.end());
    set[1] = std::byte(std::to_integer<unsigned>(set[1]) + 1);
    core::store_le16(set, 2, entry_set_checksum(set));
    t.append(t.root_at(), set);
    // A set whose checksum is wrong.
    const std::uint64_t bad = t.add_file(t.root_at(), u"badsum", pattern(10, 6));
    t.poke(bad + 2, {0x00, 0x00});
    // A set whose NameHash is wrong (checksum fixed).
    const std::uint64_t hash = t.add_file(t.root_at(), u"badhash", {});
    t.poke(hash + 32 + 4, {0x12, 0x34});
    t.fix_checksum(hash, 3);
    // Orphan secondaries, an unknown critical primary, a NameLength too long.
    std::array<std::byte, 64> orphan{};
    orphan[0] = std::byte{kEntryStreamExtension};
    orphan[32] = std::byte{kEntryFileName};
    t.append(t.root_at(), orphan);
    std::array<std::byte, 32> unknown{};
    unknown[0] = std::byte{0x86};
    t.append(t.root_at(), unknown);
    const std::uint64_t longname = t.add_file(t.root_at(), u"short", {});
    t.poke(longname + 32 + 3, {40});
    t.fix_checksum(longname, 3);
    // Finally a set whose SecondaryCount runs into the end of the directory.
    const std::uint64_t last = t.add_file(t.root_at(), u"last", {});
    t.poke(last + 1, {5});

    const Volume v(t.dev);
    const ParsedDirectory d = v.read_directory(v.root_record());
    REQUIRE(names(d) == std::vector<std::string>{"vendor.txt", "badsum", "badhash"});
    CHECK(d.files[0].checksum_ok());
    REQUIRE(d.files[0].benign.size() == 1);
    CHECK(d.files[0].benign[0].entry_type == kEntryVendorExtension);
    CHECK(d.files[0].entries == 4);
    CHECK_FALSE(d.files[1].checksum_ok());
    CHECK(d.files[2].checksum_ok());
    CHECK_FALSE(d.files[2].name_hash_ok());
    std::vector<SetAnomaly::Kind> kinds;
    for (const auto& a : d.anomalies) kinds.push_back(a.kind);
    CHECK(kinds == std::vector<SetAnomaly::Kind>{SetAnomaly::Kind::orphan_secondary,
                                                 SetAnomaly::Kind::unknown_critical,
                                                 SetAnomaly::Kind::name_length, SetAnomaly::Kind::truncated});
    // Lookup skips a set with a bad checksum (exfat-fuse and Linux refuse it too).
    CHECK_FALSE(v.lookup("badsum"));
    CHECK(v.lookup("badhash"));
    CHECK(v.lookup("VENDOR.TXT"));
}

TEST_CASE("exfat reader: timestamps with 10 ms increments and UTC offsets", "[exfat_reader]") {
    // 2024-05-01 12:34:56.78 UTC written as local time at UTC+2.
    const EntryTimestamp t = entry_timestamp(1714566896, 780000000, 7200);
    CHECK(timestamp_text(t) == "2024-05-01 14:34:56.78 +02:00");
    CHECK(timestamp_text(t, false) == "2024-05-01 14:34:56 +02:00");
    const auto u = timestamp_unix(t);
    REQUIRE(u);
    CHECK(u->first == 1714566896);
    CHECK(u->second == 780000000);
    const EntryTimestamp w = entry_timestamp(1714566897, 10000000, -5 * 3600 - 1800);
    CHECK(timestamp_text(w) == "2024-05-01 07:04:57.01 -05:30");
    CHECK(timestamp_unix(w)->first == 1714566897);
    // OffsetValid clear: the local time as stored, no offset; unix by assumption.
    EntryTimestamp x = t;
    x.utc_offset = 0;
    CHECK(timestamp_text(x) == "2024-05-01 14:34:56.78");
    CHECK(timestamp_unix(x)->first == 1714566896 + 7200);
    CHECK(timestamp_unix(x, 120)->first == 1714566896);
    // Invalid fields.
    CHECK(timestamp_text(EntryTimestamp{}) == "-");
    CHECK_FALSE(decode_timestamp(EntryTimestamp{t.timestamp, 200, 0x80}));
    CHECK_FALSE(decode_timestamp(EntryTimestamp{(t.timestamp & ~0x1Fu) | 30u, 0, 0x80}));
}

TEST_CASE("exfat reader: a multi-cluster root and a FAT-chained directory", "[exfat_reader]") {
    TestVolume t(8u << 20, 512);
    // The root: two clusters far apart, an entry set straddling the boundary.
    const std::uint32_t more = t.next_free + 50;
    t.chain({t.l.root_first_cluster, more});
    // Root: system entries, f0..f7, then a subdirectory on a FAT chain
    // (flags 0x01, DataLength two clusters): 30 entries over two clusters.
    const std::vector<std::uint32_t> dc{t.next_free + 3, t.next_free + 1};
    t.chain(dc);
    std::vector<std::byte> root(96);
    t.dev.read_at(t.root_at(), root);
    for (int i = 0; i < 8; ++i) {
        const std::u16string name = std::u16string(u"f") + char16_t(u'0' + i);
        const auto set = encode_file_entry_set(TestVolume::info(name, kFileAttrArchive, 0x01, 0, 0, 0));
        root.insert(root.end(), set.begin(), set.end());
    }
    const auto sub =
        encode_file_entry_set(TestVolume::info(u"chained", kFileAttrDirectory, 0x01, dc[0], 1024, 1024));
    root.insert(root.end(), sub.begin(), sub.end());
    root.resize(1024);
    t.dev.write_at(t.root_at(), std::span<const std::byte>(root).first(512));
    t.dev.write_at(t.l.cluster_offset(more), std::span<const std::byte>(root).subspan(512));
    std::vector<std::byte> dir(1024);
    std::size_t at = 0;
    for (int i = 0; i < 12; ++i) {  // 10 sets of 3 entries fit; the fourth straddles the clusters
        const auto set = encode_file_entry_set(
            TestVolume::info(std::u16string(u"g") + char16_t(u'a' + i), kFileAttrArchive, 0x01, 0, 0, 0));
        if (at + set.size() > dir.size()) break;
        std::copy(set.begin(), set.end(), dir.begin() + static_cast<std::ptrdiff_t>(at));
        at += set.size();
    }
    t.dev.write_at(t.l.cluster_offset(dc[0]), std::span<const std::byte>(dir).first(512));
    t.dev.write_at(t.l.cluster_offset(dc[1]), std::span<const std::byte>(dir).subspan(512));

    const Volume v(t.dev);
    const ParsedDirectory d = v.read_directory(v.root_record());
    CHECK(d.anomalies.empty());
    REQUIRE(d.files.size() == 9);
    CHECK(d.files[4].name == "f4");  // entries 15..17 straddle the two clusters
    CHECK(d.files[8].name == "chained");
    const auto c = v.lookup("/CHAINED");
    REQUIRE(c);
    CHECK_FALSE(c->no_fat_chain());
    const ParsedDirectory s = v.read_directory(*c);
    CHECK(s.anomalies.empty());
    CHECK(s.files.size() == 10);  // 10 sets of 3 entries fit in 32 entries
    CHECK(s.files.back().name == "gj");
}

TEST_CASE("exfat reader: hostile lengths, chains and clusters end in errors", "[exfat_reader][hostile]") {
    TestVolume t;
    const std::uint64_t root = t.root_at();
    auto add = [&](const std::u16string& name, std::uint16_t attr, std::uint8_t flags, std::uint32_t first,
                   std::uint64_t valid, std::uint64_t length) {
        t.append(root, encode_file_entry_set(TestVolume::info(name, attr, flags, first, valid, length)));
    };
    const std::uint32_t c = t.alloc_contiguous(1);
    add(u"dir4g", kFileAttrDirectory, 0x03, c, 4ull << 30, 4ull << 30);        // over 256 MiB
    add(u"dir200m", kFileAttrDirectory, 0x03, c, 200ull << 20, 200ull << 20);  // more than the volume
    add(u"dir2", kFileAttrDirectory, 0x01, c, 8192, 8192);                     // FAT chain: c's entry is 0
    add(u"file4g", kFileAttrArchive, 0x03, c, 4ull << 30, 4ull << 30);
    add(u"zero-first", kFileAttrArchive, 0x03, 0, 100, 100);
    add(u"past-heap", kFileAttrArchive, 0x03, t.l.cluster_count, 3 * 4096, 3 * 4096);
    const std::uint32_t a = t.next_free + 5, b = t.next_free + 9;
    t.chain({a, b});
    t.set_fat(b, a);  // a -> b -> a
    add(u"loop", kFileAttrArchive, 0x01, a, 5 * 4096, 5 * 4096);
    const std::uint32_t bad = t.next_free + 12;
    t.chain({bad});
    t.set_fat(bad, kFatBadCluster);
    add(u"bad", kFileAttrArchive, 0x01, bad, 2 * 4096, 2 * 4096);
    add(u"cycle", kFileAttrDirectory, 0x03, t.l.root_first_cluster, 4096, 4096);  // the root itself
    add(u"notdir", kFileAttrArchive, 0x03, c, 4096, 4096);

    const Volume v(t.dev);
    auto fails = [&](const char* path, const char* words, bool directory) {
        INFO(path);
        const auto r = v.lookup(path);
        REQUIRE(r);
        try {
            if (directory) {
                (void)v.read_directory(*r);
            } else {
                (void)read_all(v, *r);
            }
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::corrupt);
            CHECK_THAT(e.what(), Catch::Contains(words));
        }
    };
    fails("dir4g", "more than the 256 MiB", true);
    fails("dir200m", "more than the volume's", true);
    fails("dir2", "the FAT chain from cluster", true);
    fails("file4g", "more than the volume's", false);
    fails("zero-first", "leave the cluster heap", false);
    fails("past-heap", "leave the cluster heap", false);
    fails("loop", "it loops", false);
    fails("bad", "bad-cluster mark", false);
    const auto l = v.follow_chain(a, 1000);
    CHECK(l.end == ChainEnd::loop);
    CHECK(l.clusters == 2);
    // A directory whose cluster is the root's: read (it is the root), and a
    // walk with an ancestor set stops there.
    CHECK(v.read_directory(*v.lookup("cycle")).files.size() == 10);
    std::vector<std::uint32_t> ancestors;
    CHECK(walk(v, v.root_record(), ancestors, 0) == 10);
    CHECK_THROWS_AS(v.read_directory(*v.lookup("notdir")), Error);
}

TEST_CASE("exfat reader: truncated images and broken boot sectors", "[exfat_reader][hostile]") {
    {
        TestVolume t;
        t.dev.write_at(off::BytesPerSectorShift, std::array<std::byte, 1>{std::byte{20}});
        CHECK(Volume(t.dev).boot().use_backup);  // the backup region is whole
        t.dev.write_at(12 * 512 + off::BytesPerSectorShift, std::array<std::byte, 1>{std::byte{20}});
        CHECK_THROWS_WITH(Volume(t.dev), Catch::Contains("BytesPerSectorShift"));
        t.dev.write_at(off::FileSystemName, std::array<std::byte, 1>{std::byte{'N'}});
        try {
            Volume v(t.dev);
            FAIL("opened");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::not_this_fs);
        }
    }
    TestVolume t;
    t.next_free = t.l.cluster_count - 10;
    const auto data = pattern(20000, 7);
    t.add_file(t.root_at(), u"at the end", data);
    {
        const Volume v(t.dev);
        CHECK(read_all(v, *v.lookup("AT THE END")) == data);
    }
    std::vector<std::byte> half(t.dev.bytes().begin(), t.dev.bytes().begin() + (4u << 20));
    io::MemoryImage cut(half);
    const Volume v(cut);
    CHECK_THROWS_WITH(read_all(v, *v.lookup("at the end")), Catch::Contains("past the end of the image"));
    CHECK(v.used_clusters() == t.l.used_clusters() + 5);  // the bitmap lies in the first half
    std::vector<std::byte> tiny(t.dev.bytes().begin(), t.dev.bytes().begin() + 6000);
    io::MemoryImage short_dev(tiny);
    CHECK_THROWS_AS(Volume(short_dev), Error);  // shorter than a boot region pair... or the root is missing
}

TEST_CASE("exfat reader: a damaged main boot region is read through a whole backup",
          "[exfat_reader][hostile]") {
    for (const std::uint32_t bps : {512u, 4096u}) {
        TestVolume t(16u << 20, 4096, bps);
        const auto data = pattern(30000, 3);
        t.add_file(t.add_dir(t.root_at(), u"dir"), u"file.bin", data);
        const auto read_back = [&](const Volume& v) {
            CHECK(v.bytes_per_sector() == bps);
            CHECK(v.boot_sector().cluster_count == t.l.cluster_count);
            CHECK(v.boot().label);
            const auto r = v.lookup("/DIR/FILE.BIN");
            REQUIRE(r);
            CHECK(read_all(v, *r) == data);
            CHECK(v.used_clusters() == t.l.used_clusters() + 9);  // dir 1 + file 8
        };
        INFO("bytes per sector " << bps);
        SECTION("the main region is whole: it is used") {
            const Volume v(t.dev);
            CHECK_FALSE(v.boot().use_backup);
            CHECK(v.boot().main_damage.empty());
            read_back(v);
        }
        SECTION("BootSignature of the main boot sector zeroed") {
            t.poke(510, {0, 0});
            const Volume v(t.dev);
            CHECK(v.boot().use_backup);
            CHECK_THAT(v.boot().main_damage, Catch::Contains("exfat.boot.signature"));
            CHECK(probe(t.dev));
            read_back(v);
        }
        SECTION("the main checksum sector is wrong") {
            t.poke(11 * bps, {1, 2, 3, 4});
            const Volume v(t.dev);
            CHECK(v.boot().use_backup);
            CHECK(v.boot().problems.empty());
            CHECK_THAT(v.boot().main_damage, Catch::Contains("exfat.boot.checksum"));
            read_back(v);
        }
        SECTION("sector 0 zeroed: the sector size is found from the backup") {
            t.dev.write_at(0, std::vector<std::byte>(bps));
            CHECK(probe(t.dev));
            const Volume v(t.dev);
            CHECK(v.boot().use_backup);
            // Not an exFAT boot sector any more: its VolumeFlags are not used.
            CHECK(v.boot().active.volume_flags == 0);
            read_back(v);
            // A FAT or NTFS BytesPerSector at byte 11: another filesystem, not a damaged exFAT.
            t.poke(11, {0x00, 0x02});
            CHECK_FALSE(probe(t.dev));
        }
        SECTION("VolumeFlags and PercentInUse come from a main sector that still says EXFAT") {
            t.poke(106, {0x02, 0x00});
            t.poke(112, {42});
            t.poke(510, {0, 0});
            const Volume v(t.dev);
            CHECK(v.boot().use_backup);
            CHECK(v.boot_sector().volume_flags == 0x0002);
            CHECK(v.boot_sector().percent_in_use == 42);
        }
        SECTION("both regions damaged: no fallback") {
            t.poke(510, {0, 0});
            t.poke(12 * bps + 11, {1});  // MustBeZero of the backup boot sector
            CHECK_THROWS_WITH(Volume(t.dev), Catch::Contains("BootSignature"));
            t.dev.write_at(0, std::vector<std::byte>(bps));
            CHECK_FALSE(probe(t.dev));
            try {
                Volume v(t.dev);
                FAIL("opened");
            } catch (const Error& e) {
                CHECK(e.code() == ErrorCode::not_this_fs);
            }
        }
    }
}

/// A device that claims `claimed` bytes but keeps (and later yields) only the
/// first `kept`: to format a large volume and cut the image short.
class KeepFirst final : public io::BlockDevice {
public:
    KeepFirst(std::uint64_t claimed, std::size_t kept) : claimed_(claimed), data_(kept) {}
    std::uint64_t size() const override { return claimed_; }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
        for (std::size_t i = 0; i < out.size(); ++i) {
            out[i] = offset + i < data_.size() ? data_[offset + i] : std::byte{0};
        }
    }
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override {
        for (std::size_t i = 0; i < in.size() && offset + i < data_.size(); ++i) data_[offset + i] = in[i];
    }
    std::vector<std::byte> take() { return std::move(data_); }

private:
    std::uint64_t claimed_;
    std::vector<std::byte> data_;
};

TEST_CASE("exfat reader: a 1 GiB volume cut to 10 MiB: lengths beyond the image are errors, not allocations",
          "[exfat_reader][hostile]") {
    LayoutRequest req;
    req.volume_bytes = 1ull << 30;
    req.cluster_bytes = 4096;
    const Layout l = std::get<Layout>(plan_layout(req));
    KeepFirst big(req.volume_bytes, 10u << 20);
    format_volume(big, l, FormatOptions{1, "", true});
    io::MemoryImage dev(big.take());
    const std::uint64_t root = l.cluster_offset(l.root_first_cluster);
    REQUIRE(root + 4096 <= dev.size());
    // Sets claiming 200 MiB (a directory, NoFatChain and FAT-chained) and a
    // 900 MiB file: their clusters lie in the volume but not in the image.
    std::vector<std::byte> sets;
    auto add = [&](const std::u16string& name, std::uint16_t attr, std::uint8_t flags, std::uint64_t length) {
        const auto s = encode_file_entry_set(TestVolume::info(name, attr, flags, 100, length, length));
        sets.insert(sets.end(), s.begin(), s.end());
    };
    add(u"dir", kFileAttrDirectory, 0x03, 200ull << 20);
    add(u"chained", kFileAttrDirectory, 0x01, 200ull << 20);
    add(u"file", kFileAttrArchive, 0x03, 900ull << 20);
    dev.write_at(root + 96, sets);
    std::array<std::byte, 4> link{};  // cluster 100 -> 101 -> ... as far as the FAT in the image goes
    for (std::uint32_t n = 100; n < 200; ++n) {
        core::store_le32(link, 0, n + 1);
        dev.write_at(std::uint64_t(l.fat_offset) * 512 + 4ull * n, link);
    }
    const Volume v(dev);
    CHECK(v.cluster_count() == l.cluster_count);
    CHECK_THROWS_WITH(v.read_directory(*v.lookup("dir")), Catch::Contains("past the end of the image"));
    CHECK_THROWS_WITH(v.read_directory(*v.lookup("chained")), Catch::Contains("FAT chain from cluster 100"));
    CHECK_THROWS_WITH(read_all(v, *v.lookup("file")), Catch::Contains("past the end of the image"));
}

TEST_CASE("exfat reader: random corruption never crashes, hangs or over-allocates",
          "[exfat_reader][hostile]") {
    TestVolume base(2u << 20, 1024);
    const std::uint64_t sub = base.add_dir(base.root_at(), u"sub");
    const std::uint64_t sub2 = base.add_dir(sub, u"deeper");
    for (int i = 0; i < 6; ++i) {
        base.add_file(i % 2 ? sub : sub2, std::u16string(u"file") + char16_t(u'0' + i), pattern(3000 * i, i));
    }
    const std::uint32_t f = base.next_free + 2;
    base.add_chained_file(base.root_at(), u"chained.bin", {f + 3, f, f + 1}, pattern(2500, 9), 2500);
    const std::uint64_t bps = base.l.bytes_per_sector;
    const std::uint64_t fat = std::uint64_t(base.l.fat_offset) * bps;
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> regions{
        {0, 120},                                 // boot sector fields
        {fat, 256},                               // FAT
        {base.l.cluster_offset(2), 3 * 1024ull},  // bitmap, up-case table
        {base.root_at(), 1024},                   // root
        {sub, 1024},                              // subdirectories
        {sub2, 1024},
    };
    const auto& bytes = base.dev.bytes();
    const std::uint32_t seed = Catch::rngSeed();
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    int opened = 0, walked = 0;
    io::MemoryImage dev(bytes);
    for (int round = 0; round < 400; ++round) {
        corrupt(dev, bytes, regions, rng);
        try {
            const Volume v(dev);
            ++opened;
            std::vector<std::uint32_t> ancestors;
            walk(v, v.root_record(), ancestors, 0);
            (void)v.used_runs(1000);
            (void)v.lookup("/sub/deeper/file2");
            ++walked;
        } catch (const Error& e) {
            REQUIRE(e.code() != ErrorCode::io);
        }
    }
    CHECK(opened > 100);  // most damage leaves the volume readable
    CHECK(walked > 50);
}

TEST_CASE("exfat reader: TexFAT volumes use the active FAT and its bitmap", "[exfat_reader]") {
    TestVolume t;
    const std::uint64_t bps = t.l.bytes_per_sector;
    const std::uint64_t fat1 = std::uint64_t(t.l.fat_offset) * bps;
    const std::uint64_t fat_bytes = std::uint64_t(t.l.fat_length) * bps;
    REQUIRE(t.l.fat_offset + 2ull * t.l.fat_length <= t.l.cluster_heap_offset);
    // A second bitmap in a new cluster, every cluster marked in use.
    const std::uint32_t second = t.alloc_contiguous(1);
    t.set_fat(second, kFatEndOfChain);
    std::vector<std::byte> ones((t.l.cluster_count + 7) / 8, std::byte{0xFF});
    t.dev.write_at(t.l.cluster_offset(second), ones);
    std::array<std::byte, 32> entry{};
    encode_allocation_bitmap_entry(AllocationBitmapEntry{1, second, ones.size()}, entry);
    t.append(t.root_at(), entry);
    // FAT 2 = FAT 1, then a file chained only in FAT 2.
    std::vector<std::byte> fat(fat_bytes);
    t.dev.read_at(fat1, fat);
    const std::uint32_t a = t.next_free + 3, b = t.next_free + 7;
    core::store_le32(fat, 4ull * a, b);
    core::store_le32(fat, 4ull * b, kFatEndOfChain);
    t.dev.write_at(fat1 + fat_bytes, fat);
    const auto data = pattern(8000, 11);
    t.write_runs({a, b}, data);
    t.append(t.root_at(),
             encode_file_entry_set(TestVolume::info(u"texfat", kFileAttrArchive, 0x01, a, 8000, 8000)));
    {
        const Volume v(t.dev);  // one FAT: the first bitmap, FAT 1 (where a's entry is 0)
        CHECK(v.used_clusters() == t.l.used_clusters() + 1);
        CHECK_THROWS_AS(read_all(v, *v.lookup("texfat")), Error);
    }
    t.dev.write_at(off::NumberOfFats, std::array<std::byte, 1>{std::byte{2}});
    t.dev.write_at(off::VolumeFlags, std::array<std::byte, 2>{std::byte{kVolumeFlagActiveFat}, std::byte{0}});
    {  // NumberOfFats is under the boot checksum: a wrong one would send readers to the backup
        std::vector<std::byte> region(11 * bps), sum(bps);
        t.dev.read_at(0, region);
        encode_checksum_sector(boot_checksum(region), sum);
        t.dev.write_at(11 * bps, sum);
    }
    const Volume v(t.dev);
    CHECK_FALSE(v.boot().use_backup);
    REQUIRE(v.bitmap_entry());
    CHECK(v.bitmap_entry()->first_cluster == second);
    CHECK(v.used_clusters() == t.l.cluster_count);
    CHECK(read_all(v, *v.lookup("texfat")) == data);
}
