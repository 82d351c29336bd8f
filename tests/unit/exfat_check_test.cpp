// exfat::check_volume (include/fsimg/exfat/check.hpp) on volumes built in
// memory (exfat_test_volume.hpp): a clean volume reports nothing and counts
// what it holds; each damage gives its code with the values in the message
// (cross-links name both owners, a truncated image says how many bytes are
// missing); random corruption never crashes, hangs or throws anything but
// "not exFAT".
#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "exfat_test_volume.hpp"
#include "fsimg/check/codes.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/exfat/check.hpp"
#include "fsimg/exfat/directory.hpp"
#include "fsimg/exfat/volume.hpp"

using namespace fsimg;
using namespace fsimg::exfat;
using fsimg::exfat::test::corrupt;
using fsimg::exfat::test::pattern;
using fsimg::exfat::test::TestVolume;

namespace {

/// Error and warning codes (notes left out), in order found.
std::vector<std::string> problems(const check::Findings& f) {
    std::vector<std::string> out;
    for (const auto& x : f.all()) {
        if (x.severity != check::Severity::info) out.emplace_back(x.code);
    }
    return out;
}

const check::Finding& only(const check::Findings& f, std::string_view code) {
    const check::Finding* hit = nullptr;
    for (const auto& x : f.all()) {
        if (x.code == code) hit = &x;
    }
    REQUIRE(hit != nullptr);
    return *hit;
}

using Codes = std::vector<std::string>;

/// root: a.txt (3 clusters, contiguous), b.txt (2 clusters), chained.bin
/// (FAT chain f+1, f, f+2), dir/ with c.txt.
struct Sample {
    TestVolume v{8u << 20, 4096};
    std::uint64_t a_set = 0, b_set = 0, chained_set = 0, dir_at = 0;
    std::uint32_t a_first = 0, chain_first = 0, dir_cluster = 0;
    Sample() {
        a_first = v.next_free;
        a_set = v.add_file(v.root_at(), u"a.txt", pattern(10000, 1));
        b_set = v.add_file(v.root_at(), u"b.txt", pattern(5000, 2));
        const std::uint32_t f = v.next_free;
        v.next_free += 3;
        chain_first = f + 1;
        chained_set =
            v.add_chained_file(v.root_at(), u"chained.bin", {f + 1, f, f + 2}, pattern(9000, 3), 9000);
        dir_cluster = v.next_free;
        dir_at = v.add_dir(v.root_at(), u"dir");
        v.add_file(dir_at, u"c.txt", pattern(100, 4));
    }
    /// The check with CheckOptions::entry_fixes into `fixes`.
    check::Findings check_fixes(std::vector<EntryFix>& fixes) {
        check::Findings f;
        CheckOptions o;
        o.entry_fixes = &fixes;
        check_volume(v.dev, f, o);
        return f;
    }
    check::Findings check(CheckSummary* s = nullptr) {
        check::Findings f;
        const CheckSummary sum = check_volume(v.dev, f);
        if (s) *s = sum;
        return f;
    }
    /// Stream Extension field of the set at `set` (byte offset), SetChecksum fixed.
    void stream_u32(std::uint64_t set, std::size_t off, std::uint32_t value) {
        std::array<std::byte, 4> b{};
        core::store_le32(b, 0, value);
        v.dev.write_at(set + 32 + off, b);
        v.fix_checksum(set, 3);
    }
    void stream_u64(std::uint64_t set, std::size_t off, std::uint64_t value) {
        std::array<std::byte, 8> b{};
        core::store_le64(b, 0, value);
        v.dev.write_at(set + 32 + off, b);
        v.fix_checksum(set, 3);
    }
};

}  // namespace

TEST_CASE("exfat check: a clean volume reports nothing and counts what it holds", "[exfat_check]") {
    Sample s;
    CheckSummary sum;
    const auto f = s.check(&sum);
    CHECK(problems(f) == Codes{});
    CHECK(sum.complete);
    CHECK(sum.files == 4);
    CHECK(sum.directories == 2);
    // bitmap 1 + up-case 2 + root 1 + a 3 + b 2 + chained 3 + dir 1 + c 1
    CHECK(sum.used_clusters == 14);
    CHECK(sum.marked_clusters == 14);
    CHECK(sum.free_clusters == s.v.l.cluster_count - 14);
    CHECK(sum.lost_clusters == 0);
    CHECK(sum.cluster_bytes == 4096);
}

TEST_CASE("exfat check: every exfat.* code is registered", "[exfat_check]") {
    for (const char* code :
         {"exfat.boot.checksum", "exfat.boot.image-truncated", "exfat.chain.cross-link", "exfat.bitmap.lost",
          "exfat.bitmap.free-in-use", "exfat.set.checksum", "exfat.name.duplicate", "exfat.dir.loop",
          "exfat.boot.jump_boot", "exfat.boot.cluster_count", "exfat.stream.valid-length"}) {
        INFO(code);
        CHECK(check::find_code(code) != nullptr);
    }
}

TEST_CASE("exfat check: boot region damage", "[exfat_check]") {
    Sample s;
    SECTION("main checksum sector") {
        s.v.poke(11 * 512, {1, 2, 3, 4});
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.boot.checksum"});
        CHECK_THAT(only(f, "exfat.boot.checksum").message, Catch::Contains("04030201"));
    }
    SECTION("backup differs, both self-consistent") {
        std::vector<std::byte> region(12 * 512);
        s.v.dev.read_at(12 * 512, region);
        region[100] = std::byte{0x77};  // VolumeSerialNumber
        encode_checksum_sector(boot_checksum(std::span<const std::byte>(region).first(11 * 512)),
                               std::span<std::byte>(region).subspan(11 * 512, 512));
        s.v.dev.write_at(12 * 512, region);
        CHECK(problems(s.check()) == Codes{"exfat.boot.backup-differs"});
    }
    SECTION("VolumeDirty and MediaFailure (outside the checksum)") {
        s.v.poke(106, {0x06, 0x00});
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.boot.dirty", "exfat.boot.media-failure"});
        CHECK(only(f, "exfat.boot.media-failure").severity == check::Severity::warning);
    }
    SECTION("a field rule stops the check: the geometry is not trusted") {
        std::vector<std::byte> region(11 * 512);
        for (std::uint64_t first : {0u, 12u}) {
            s.v.dev.read_at(first * 512, region);
            region[off::BytesPerSectorShift] = std::byte{13};
            std::vector<std::byte> sum(512);
            encode_checksum_sector(boot_checksum(region), sum);
            s.v.dev.write_at(first * 512, region);
            s.v.dev.write_at((first + 11) * 512, sum);
        }
        CheckSummary sum;
        const auto f = s.check(&sum);
        CHECK(problems(f) == Codes{"exfat.boot.bytes_per_sector_shift"});
        CHECK(f.all().front().severity == check::Severity::fatal);
        CHECK_FALSE(sum.complete);
    }
}

TEST_CASE("exfat check: a damaged main boot region is reported, the rest checked through the backup",
          "[exfat_check]") {
    Sample s;
    // Damage further in, to show that the walk goes on: b.txt's SetChecksum.
    s.v.poke(s.b_set + 2, {0x55, 0x55});
    SECTION("BootSignature zeroed (the checksum no longer matches either)") {
        s.v.poke(510, {0, 0});
        CheckSummary sum;
        const auto f = s.check(&sum);
        CHECK(problems(f) == Codes{"exfat.boot.signature", "exfat.boot.checksum", "exfat.set.checksum"});
        // Not fatal: the check went on.
        CHECK(f.all().front().severity == check::Severity::error);
        CHECK_THAT(f.all().front().message, Catch::Contains("through the backup boot region"));
        CHECK(sum.complete);
        CHECK(sum.files == 4);
        CHECK(sum.used_clusters == 14);
    }
    SECTION("FileSystemName changed, the main checksum recomputed") {
        std::vector<std::byte> region(11 * 512);
        s.v.dev.read_at(0, region);
        region[off::FileSystemName + 4] = std::byte{'X'};
        std::vector<std::byte> sum(512);
        encode_checksum_sector(boot_checksum(region), sum);
        s.v.dev.write_at(0, region);
        s.v.dev.write_at(11 * 512, sum);
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.boot.file_system_name", "exfat.set.checksum"});
        CHECK_THAT(only(f, "exfat.boot.file_system_name").message, Catch::Contains("EXFAX"));
    }
    SECTION("sector 0 all zeros: one finding, not one per field rule") {
        // fsck.exfat 1.2.0 -n on a mkfs.exfat image with sector 0 zeroed:
        // "Bad fs_name in boot sector, which does not describe a valid exfat
        // filesystem", exit 8, one message; the Linux driver's
        // exfat_read_boot_sector refuses it ("invalid fs_name"). fsimg reads
        // through the whole backup and names the one root cause.
        std::vector<std::byte> zeros(512);
        s.v.dev.write_at(0, zeros);
        CheckSummary sum;
        const auto f = s.check(&sum);
        CHECK(problems(f) == Codes{"exfat.boot.main-zeroed", "exfat.set.checksum"});
        std::size_t notes = 0;
        for (const auto& x : f.all()) notes += x.severity == check::Severity::info;
        CHECK(notes == 0);
        CHECK_THAT(only(f, "exfat.boot.main-zeroed").message, Catch::Contains("through the backup"));
        CHECK(sum.complete);
        CHECK(sum.files == 4);
    }
    SECTION("the backup damaged too: the check stops at the boot region") {
        s.v.poke(510, {0, 0});
        s.v.poke(12 * 512 + 510, {0, 0});
        CheckSummary sum;
        const auto f = s.check(&sum);
        CHECK(problems(f) ==
              Codes{"exfat.boot.signature", "exfat.boot.checksum", "exfat.boot.backup-checksum"});
        CHECK_FALSE(sum.complete);
    }
}

TEST_CASE("exfat check: a truncated image says how many bytes are missing", "[exfat_check]") {
    Sample s;
    const auto& bytes = s.v.dev.bytes();
    const std::size_t keep = bytes.size() - 3 * 65536 - 512;
    io::MemoryImage cut(
        std::vector<std::byte>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    check::Findings f;
    const auto sum = check_volume(cut, f);
    CHECK(problems(f) == Codes{"exfat.boot.image-truncated"});
    CHECK_THAT(only(f, "exfat.boot.image-truncated").message, Catch::Contains("197120 bytes are missing"));
    CHECK(sum.complete);
    // A device shorter than the main boot region is a finding, not a throw.
    io::MemoryImage tiny(std::vector<std::byte>(bytes.begin(), bytes.begin() + 4096));
    check::Findings g;
    CHECK_FALSE(check_volume(tiny, g).complete);
    CHECK(problems(g) == Codes{"exfat.boot.image-truncated"});
}

TEST_CASE("exfat check: chains, cross-links and the bitmap", "[exfat_check]") {
    Sample s;
    SECTION("cross-link names both owners") {
        s.stream_u32(s.b_set, stream_off::FirstCluster, s.a_first);
        s.v.set_fat(s.a_first + 3, 0);  // b's own clusters: now owned by nothing
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.chain.cross-link", "exfat.bitmap.lost"});
        CHECK_THAT(only(f, "exfat.chain.cross-link").message,
                   Catch::Contains("/b.txt") && Catch::Contains("/a.txt") &&
                       Catch::Contains("cluster " + std::to_string(s.a_first)));
        CHECK(only(f, "exfat.bitmap.lost").count == 2);
        // Both owners in the structured location too (fsck --json "other_owner").
        CHECK(only(f, "exfat.chain.cross-link").where.object == "/b.txt");
        CHECK(only(f, "exfat.chain.cross-link").where.other_owner == "/a.txt");
    }
    SECTION("two directories on one cluster: cross-link, the second not walked, nothing lost") {
        const auto set = encode_file_entry_set(
            TestVolume::info(u"dir2", kFileAttrDirectory, 0x03, s.dir_cluster, 4096, 4096));
        s.v.append(s.v.root_at(), set);
        CheckSummary sum;
        const auto f = s.check(&sum);
        CHECK(problems(f) == Codes{"exfat.chain.cross-link"});
        CHECK_THAT(only(f, "exfat.chain.cross-link").message,
                   Catch::Contains("/dir2 and /dir share cluster " + std::to_string(s.dir_cluster)));
        CHECK(sum.files == 4);  // /dir/c.txt counted once
        CHECK(sum.directories == 3);
    }
    SECTION("loop") {
        s.v.set_fat(s.chain_first + 1, s.chain_first);  // third cluster links back to the first
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.chain.loop"});
    }
    SECTION("out of range and bad") {
        s.v.set_fat(s.chain_first + 1, 0x00FFFFFF);
        CHECK(problems(s.check()) == Codes{"exfat.chain.out-of-range"});
        s.v.set_fat(s.chain_first + 1, kFatBadCluster);
        CHECK(problems(s.check()) == Codes{"exfat.chain.bad-cluster"});
    }
    SECTION("DataLength vs chain") {
        s.stream_u64(s.chained_set, stream_off::DataLength, 5 * 4096);
        CHECK(problems(s.check()) == Codes{"exfat.chain.too-short"});
        s.stream_u64(s.chained_set, stream_off::DataLength, 4096);
        s.stream_u64(s.chained_set, stream_off::ValidDataLength, 4096);
        CHECK(problems(s.check()) == Codes{"exfat.chain.too-long"});
    }
    SECTION("lost and marked free") {
        s.v.mark_used(s.v.next_free + 10);
        CheckSummary sum;
        auto f = s.check(&sum);
        CHECK(problems(f) == Codes{"exfat.bitmap.lost"});
        CHECK(sum.lost_clusters == 1);
        const std::uint64_t at = s.v.l.cluster_offset(s.v.l.bitmap_first_cluster) + (s.a_first - 2) / 8;
        std::array<std::byte, 1> b{};
        s.v.dev.read_at(at, b);
        b[0] &= ~std::byte(1u << ((s.a_first - 2) % 8));
        s.v.dev.write_at(at, b);
        f = s.check();
        CHECK(problems(f) == Codes{"exfat.bitmap.free-in-use", "exfat.bitmap.lost"});
        CHECK(only(f, "exfat.bitmap.free-in-use").where.cluster == s.a_first);
    }
    SECTION("NoFatChain run past the heap") {
        s.stream_u64(s.b_set, stream_off::DataLength, std::uint64_t(s.v.l.cluster_count) * 4096);
        s.stream_u64(s.b_set, stream_off::ValidDataLength, 0);
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.stream.outside-heap", "exfat.bitmap.lost"});
    }
}

TEST_CASE("exfat check: entry sets, names, streams, directories", "[exfat_check]") {
    Sample s;
    SECTION("SetChecksum") {
        s.v.poke(s.a_set + 2, {0x12, 0x34});
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.set.checksum"});
        CHECK_THAT(only(f, "exfat.set.checksum").message, Catch::Contains("SetChecksum is 3412"));
    }
    SECTION("NameHash") {
        s.v.poke(s.a_set + 32 + stream_off::NameHash, {0, 0});
        s.v.fix_checksum(s.a_set, 3);
        CHECK(problems(s.check()) == Codes{"exfat.set.name-hash"});
    }
    SECTION("duplicate name after up-casing") {
        s.v.add_file(s.v.root_at(), u"A.TXT", pattern(10, 5));
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.name.duplicate"});
        CHECK(only(f, "exfat.name.duplicate").where.object == "/A.TXT");
    }
    SECTION("invalid names") {
        s.v.add_file(s.v.root_at(), u"..", {});
        s.v.add_file(s.v.root_at(), u"x?y", {});
        CHECK(problems(s.check()) == Codes{"exfat.name.invalid", "exfat.name.invalid"});
    }
    SECTION("ValidDataLength above DataLength") {
        s.stream_u64(s.a_set, stream_off::ValidDataLength, 10001);
        CHECK(problems(s.check()) == Codes{"exfat.stream.valid-length"});
    }
    SECTION("a directory pointing at its parent loops") {
        const auto set = encode_file_entry_set(
            TestVolume::info(u"up", kFileAttrDirectory, 0x03, s.v.l.root_first_cluster, 4096, 4096));
        s.v.append(s.dir_at, set);
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.dir.loop"});
        CHECK(only(f, "exfat.dir.loop").where.object == "/dir/up");
    }
    SECTION("entries after the end of the directory") {
        const auto set = encode_file_entry_set(TestVolume::info(u"late", kFileAttrArchive, 0x01, 0, 0, 0));
        s.v.append(s.dir_at, std::vector<std::byte>(32));  // end-of-directory entry
        s.v.append(s.dir_at, set);
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.dir.entry-after-end"});
        CHECK(only(f, "exfat.dir.entry-after-end").count == 3);
        // fsck -y's fix: the end entry made type 0x7F, the entries after it up to the
        // last in-use one (File, Stream Extension) kept as they are.
        std::vector<EntryFix> fixes;
        (void)s.check_fixes(fixes);
        REQUIRE(fixes.size() == 1);
        CHECK(fixes[0].code == "exfat.dir.entry-after-end");
        CHECK(fixes[0].path == "/dir/");
        REQUIRE(fixes[0].bytes.size() == 3 * 32);
        REQUIRE(fixes[0].entries.size() == 3);
        CHECK(fixes[0].bytes[0] == std::byte{0x7F});
        CHECK(std::all_of(fixes[0].bytes.begin() + 1, fixes[0].bytes.begin() + 32,
                          [](std::byte b) { return b == std::byte{0}; }));
        CHECK(fixes[0].bytes[32] == std::byte{0x85});
        CHECK(fixes[0].bytes[64] == std::byte{0xC0});
        CHECK(
            fixes[0].action ==
            "1 end-of-directory entry before entry 6 made an unused entry (type 0x7F), so that the 3 in-use "
            "entries after it are read");
        // Written, the set after it is read: the directory checks clean and lists it.
        for (std::size_t k = 0; k < fixes[0].entries.size(); ++k)
            s.v.dev.write_at(fixes[0].entries[k], std::span(fixes[0].bytes).subspan(k * 32, 32));
        CHECK(problems(s.check()).empty());
    }
    SECTION(
        "a SetChecksum that fails: the set taken as it is, a NoFatChain DataLength cut to what the "
        "bitmap marks") {
        std::vector<SetFix> fixes;
        const auto fixes_of = [&] {
            fixes.clear();
            check::Findings f;
            CheckOptions o;
            o.set_fixes = &fixes;
            check_volume(s.v.dev, f, o);
            return f;
        };
        // x.bin: 5,000 bytes in 2 clusters, the last ones in use; DataLength raised to 4
        // clusters (the 2 after them are free) and the checksum left as it was.
        const std::uint32_t first = s.v.next_free;
        const std::uint64_t x = s.v.add_file(s.v.root_at(), u"x.bin", pattern(5000, 9));
        std::array<std::byte, 8> b{};
        core::store_le64(b, 0, 4 * 4096);
        s.v.dev.write_at(x + 32 + stream_off::DataLength, b);
        auto f = fixes_of();
        CHECK(problems(f) == Codes{"exfat.set.checksum", "exfat.bitmap.free-in-use"});
        REQUIRE(fixes.size() == 1);
        REQUIRE(fixes[0].data_length);
        CHECK(fixes[0].data_length->first == 4 * 4096);
        CHECK(fixes[0].data_length->second == 2 * 4096);
        CHECK(*fixes[0].valid_data_length == 5000);
        CHECK_FALSE(fixes[0].checksum_was_right);
        // Its own length back, its first cluster's bit cleared (a free cluster amid marked
        // ones): the bitmap is damaged, the DataLength kept.
        core::store_le64(b, 0, 5000);
        s.v.dev.write_at(x + 32 + stream_off::DataLength, b);
        s.v.poke(x + 2, {0x12, 0x34});
        s.v.clear_used(first);
        f = fixes_of();
        REQUIRE(fixes.size() == 1);
        CHECK_FALSE(fixes[0].data_length);
        // None of the extent marked: nothing says which field is wrong; no fix.
        s.v.clear_used(first + 1);
        f = fixes_of();
        CHECK(fixes.empty());
    }
    SECTION("SecondaryCount claiming the next set's File entry") {
        s.v.poke(s.a_set + 1, {3});
        s.v.fix_checksum(s.a_set, 3);
        const auto f = s.check();
        // The set is not recognized, so its clusters are not called lost.
        CHECK(problems(f) == Codes{"exfat.set.secondary-count"});
    }
    SECTION("NameLength shorter than the name the File Name entries hold") {
        // a.txt's NameLength 5 -> 1 with NameHash and SetChecksum to match: Windows reads "a",
        // Linux lists "a.txt" and finds nothing by it.
        std::array<std::byte, 2> h{};
        core::store_le16(h, 0, name_hash(u"a", recommended_upcase_map()));
        s.v.dev.write_at(s.a_set + 32 + stream_off::NameHash, h);
        s.v.poke(s.a_set + 32 + stream_off::NameLength, {1});
        s.v.fix_checksum(s.a_set, 3);
        std::vector<EntryFix> fixes;
        const auto f = s.check_fixes(fixes);
        CHECK(problems(f) == Codes{"exfat.set.name-length"});
        CHECK_THAT(only(f, "exfat.set.name-length").message, Catch::Contains("hold a name of 5 units"));
        REQUIRE(fixes.size() == 1);
        CHECK(fixes[0].path == "/a");
        REQUIRE(fixes[0].bytes.size() == 3 * 32);
        CHECK(std::to_integer<int>(fixes[0].bytes[32 + stream_off::NameLength]) == 5);
        CHECK(core::load_le16(fixes[0].bytes, 32 + stream_off::NameHash) ==
              name_hash(u"a.txt", recommended_upcase_map()));
        CHECK(core::load_le16(fixes[0].bytes, file_off::SetChecksum) == entry_set_checksum(fixes[0].bytes));
        CHECK(fixes[0].entries.front() == s.a_set);
    }
    SECTION("a set no reader takes: the SecondaryCount its checksum was made with, else not in use") {
        s.v.poke(s.a_set + 1, {3});  // one too many, the SetChecksum left as it was
        std::vector<EntryFix> fixes;
        CHECK(problems(s.check_fixes(fixes)) == Codes{"exfat.set.secondary-count"});
        REQUIRE(fixes.size() == 1);
        CHECK(fixes[0].bytes.size() == 32);  // the File entry alone
        CHECK(std::to_integer<int>(fixes[0].bytes[file_off::SecondaryCount]) == 2);
        s.v.fix_checksum(s.a_set, 4);  // the checksum covers b.txt's File entry: the count made 2
        fixes.clear();
        s.check_fixes(fixes);
        REQUIRE(fixes.size() == 1);
        CHECK(fixes[0].bytes.size() == 32);
        CHECK(std::to_integer<int>(fixes[0].bytes[file_off::SecondaryCount]) == 2);
        std::vector<std::byte> set(3 * 32);
        s.v.dev.read_at(s.a_set, set);
        set[file_off::SecondaryCount] = std::byte{2};
        CHECK(core::load_le16(fixes[0].bytes, file_off::SetChecksum) == entry_set_checksum(set));
        s.v.poke(s.a_set + 2, {0x12, 0x34});  // a checksum no count makes: the entries not in use
        fixes.clear();
        s.check_fixes(fixes);
        REQUIRE(fixes.size() == 1);
        REQUIRE(fixes[0].bytes.size() == 3 * 32);  // the File entry and the 2 secondaries that follow it
        for (std::size_t i = 0; i < 3; ++i)
            CHECK((std::to_integer<int>(fixes[0].bytes[i * 32]) & kEntryInUse) == 0);
        CHECK(std::to_integer<int>(fixes[0].bytes[0]) == (kEntryFile & ~kEntryInUse));
    }
    SECTION("empty directory without a cluster is valid [EXFAT §7.6.5]") {
        const auto set = encode_file_entry_set(TestVolume::info(u"empty", kFileAttrDirectory, 0x01, 0, 0, 0));
        s.v.append(s.v.root_at(), set);
        CHECK(problems(s.check()) == Codes{});
    }
}

TEST_CASE("exfat check: random corruption never crashes or hangs", "[exfat_check][hostile]") {
    Sample s;
    const std::uint64_t fat = std::uint64_t(s.v.l.fat_offset) * 512;
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> regions{
        {0, 120},                                // boot sector fields
        {fat, 128},                              // FAT
        {s.v.l.cluster_offset(2), 3 * 4096ull},  // bitmap, up-case table
        {s.v.root_at(), 512},                    // root
        {s.dir_at, 256},                         // subdirectory
    };
    const auto& bytes = s.v.dev.bytes();
    const std::uint32_t seed = Catch::rngSeed();
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    int completed = 0, found = 0;
    io::MemoryImage damaged(bytes);
    for (int round = 0; round < 400; ++round) {
        corrupt(damaged, bytes, regions, rng);
        std::optional<io::MemoryImage> truncated;  // the image cut short, one round in eight
        if (rng() % 8 == 0) {
            const auto& b = damaged.bytes();
            truncated.emplace(
                std::vector<std::byte>(b.begin(), b.begin() + std::ptrdiff_t(b.size() / (2 + rng() % 64))));
        }
        const io::MemoryImage& dev = truncated ? *truncated : damaged;
        check::Findings f;
        try {
            completed += check_volume(dev, f).complete;
            found += !f.empty();
            for (const auto& x : f.all()) {
                INFO(x.code);
                REQUIRE(check::find_code(x.code) != nullptr);
            }
        } catch (const Error& e) {
            REQUIRE(e.code() == ErrorCode::not_this_fs);  // bytes 3..10 were hit
        }
    }
    CHECK(completed > 100);  // most damage leaves the volume checkable
    CHECK(found > 300);      // and almost every change is seen
}

TEST_CASE("exfat check: system entries in a later cluster of the root directory", "[exfat_check]") {
    // The Allocation Bitmap, Up-case Table and Volume Label entries belong
    // "in the root directory" [EXFAT §7.1-7.3], in any of its clusters: the
    // Linux driver (exfat_load_bitmap, exfat_create_upcase_table) and
    // fsck.exfat walk the root's whole chain for them. Here the root's first
    // cluster holds only unused entries (type 0x05) and the entries move to
    // its second cluster.
    Sample s;
    const std::uint32_t root = s.v.l.root_first_cluster;
    const std::uint32_t second = s.v.alloc_contiguous(1);
    std::vector<std::byte> bytes(s.v.l.cluster_bytes());
    s.v.dev.read_at(s.v.l.cluster_offset(root), bytes);
    s.v.dev.write_at(s.v.l.cluster_offset(second), bytes);
    std::vector<std::byte> unused(bytes.size());
    for (std::size_t i = 0; i < unused.size(); i += 32) unused[i] = std::byte{0x05};
    s.v.dev.write_at(s.v.l.cluster_offset(root), unused);
    s.v.chain({root, second});
    CheckSummary sum;
    const auto f = s.check(&sum);
    CHECK(problems(f) == Codes{});
    CHECK(sum.complete);
    CHECK(sum.files == 4);
    Volume v(s.v.dev);
    CHECK(v.boot().bitmap.has_value());
    CHECK(v.boot().upcase.has_value());
    CHECK(v.boot().label.has_value());
}

TEST_CASE("exfat check: timestamps out of range are a warning and shown as invalid", "[exfat_check]") {
    // 10 ms increments run 0..199 and days and months from 1 [EXFAT
    // §7.4.8-7.4.9]; the Linux driver adds increment / 100 seconds unchecked.
    EntryTimestamp t;
    t.timestamp = (44u << 25) | (5u << 21) | (1u << 16) | (12u << 11) | (34u << 5) | 28u;
    t.increment_10ms = 150;
    CHECK(timestamp_text(t) == "2024-05-01 12:34:57.50");
    t.increment_10ms = 250;
    CHECK(timestamp_text(t) == "invalid (0x58A1645C, 10ms 250)");
    CHECK(timestamp_problem(t) == "10ms increment 250");
    CHECK(timestamp_text(EntryTimestamp{}) == "-");
    Sample s;
    s.v.poke(s.a_set + 20, {250});  // Create10msIncrement
    s.v.fix_checksum(s.a_set, 3);
    const auto f = s.check();
    CHECK(problems(f) == Codes{"exfat.set.timestamp"});
    CHECK_THAT(only(f, "exfat.set.timestamp").message, Catch::Contains("a.txt") && Catch::Contains("250"));
}

TEST_CASE("exfat check: a checksum broken by a disk signature says so", "[exfat_check]") {
    // Windows writes an MBR disk signature at 0x1B8 of sector 0 on
    // unpartitioned media, inside the BootCode the boot checksum covers
    // [EXFAT §3.4]; the Linux driver then refuses the main region ("Invalid
    // boot checksum"), fsck.exfat reports the checksum. The finding names
    // the bytes that differ from the backup.
    Sample s;
    SECTION("a disk signature") {
        s.v.poke(0x1B8, {0x12, 0x34, 0x56, 0x78});
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.boot.checksum"});
        CHECK_THAT(
            only(f, "exfat.boot.checksum").message,
            Catch::Contains("disk signature") && Catch::Contains("main 12 34 56 78, backup F4 F4 F4 F4"));
    }
    SECTION("another byte") {
        s.v.poke(0x1F0, {0x99});
        const auto f = s.check();
        CHECK(problems(f) == Codes{"exfat.boot.checksum"});
        CHECK_THAT(only(f, "exfat.boot.checksum").message,
                   Catch::Contains("in 1 byte: sector 0 byte 0x1F0 (99, backup F4)") &&
                       !Catch::Contains("disk signature"));
    }
}
