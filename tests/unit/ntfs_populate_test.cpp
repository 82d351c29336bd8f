// NTFS populate: resident limit, name rules, B-tree shapes, and a small tree
// planned, written onto a MemoryImage and read back with ntfs::Volume.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/check/finding.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "ntfs_fixture.hpp"
#include "tree_builder.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
using fsimg::ntfs::test::must;
namespace fs = std::filesystem;

TEST_CASE("ntfs populate: resident limit from the record layout", "[ntfs][populate]") {
    // formats.md §5.1: 840 - r8(90 + 2L) for a Windows-style 1 KiB record.
    CHECK(resident_limit(1024, 8) == 728);
    CHECK(resident_limit(1024, 11) == 728);
    CHECK(resident_limit(1024, 12) == 720);
    CHECK(resident_limit(1024, 5) == 736);
    CHECK(resident_limit(1024, 18) == 712);
    CHECK(resident_limit(1024, 20) == 704);
    CHECK(resident_limit(4096, 5) == 3792);
    CHECK(resident_limit(1024, 255) == 816 - 576);
}

TEST_CASE("ntfs populate: name rules", "[ntfs][populate]") {
    CHECK(is_win32_name(u"readme.txt"));
    CHECK_FALSE(is_win32_name(u"a:b"));
    CHECK_FALSE(is_win32_name(u"trailing."));
    CHECK_FALSE(is_win32_name(u"trailing "));
    CHECK_FALSE(is_win32_name(u"tab\tname"));
    CHECK(is_dos_name(u"README.TXT"));
    CHECK(is_dos_name(u"A"));
    CHECK_FALSE(is_dos_name(u"readme.txt"));
    CHECK_FALSE(is_dos_name(u"LONGNAME9.TXT"));
    CHECK_FALSE(is_dos_name(u"A.TEXT"));
    CHECK_FALSE(is_dos_name(u"A."));
    CHECK_FALSE(is_dos_name(u"A B.TXT"));
    CHECK_FALSE(utf8_name_problem("ordinary name.txt"));
    CHECK(utf8_name_problem("bad\xff"));
    CHECK_FALSE(utf8_name_problem(std::string(255, 'a')));
    CHECK(utf8_name_problem(std::string(256, 'a')));
}

namespace {

/// Walks a shape in key order: every entry index once, ascending; returns
/// leaf depths.
void walk(const IndexShape& s, const IndexNode& node, std::size_t depth, std::vector<std::uint32_t>& order,
          std::vector<std::size_t>& leaf_depths) {
    for (std::size_t k = 0; k <= node.entries.size(); ++k) {
        if (!node.children.empty()) {
            REQUIRE(node.children.size() == node.entries.size() + 1);
            REQUIRE(node.children[k] < s.blocks.size());
            walk(s, s.blocks[node.children[k]], depth + 1, order, leaf_depths);
        }
        if (k < node.entries.size()) order.push_back(node.entries[k]);
    }
    if (node.children.empty()) leaf_depths.push_back(depth);
}

std::uint64_t node_bytes(const IndexNode& n, const std::vector<std::uint32_t>& bytes) {
    std::uint64_t sum = n.children.empty() ? 16 : 24;
    for (const std::uint32_t e : n.entries) sum += bytes[e] + (n.children.empty() ? 0 : 8);
    return sum;
}

}  // namespace

TEST_CASE("ntfs populate: index B-tree shapes", "[ntfs][populate]") {
    const std::uint32_t seed = GENERATE(take(6, random(1u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    const std::size_t n = GENERATE(0u, 1u, 5u, 40u, 41u, 42u, 500u, 20000u);
    std::uniform_int_distribution<std::uint32_t> units(1, 255);
    std::vector<std::uint32_t> bytes(n);
    for (auto& b : bytes) b = (82 + 2 * units(rng) + 7) / 8 * 8;
    const std::uint32_t root = GENERATE(24u, 200u, 600u);
    const IndexRoom room{std::int64_t{root} - 16, std::int64_t{root} - 24, 4096 - 64 - 16, 4096 - 64 - 24};
    const IndexShape s = grow_index(bytes, room, root == 600);
    std::vector<std::uint32_t> order;
    std::vector<std::size_t> depths;
    walk(s, s.root, 0, order, depths);
    std::vector<std::uint32_t> want(n);
    for (std::uint32_t i = 0; i < n; ++i) want[i] = i;
    CHECK(order == want);
    REQUIRE(!depths.empty());
    CHECK(std::all_of(depths.begin(), depths.end(), [&](std::size_t d) { return d == depths.front(); }));
    CHECK(node_bytes(s.root, bytes) <= root);
    for (const IndexNode& b : s.blocks) {
        CHECK(node_bytes(b, bytes) <= 4096 - 64);
        CHECK((!b.entries.empty() || s.blocks.size() == 1));
    }
}

TEST_CASE("ntfs populate: a small tree written and read back", "[ntfs][populate]") {
    const fs::path dir = fs::temp_directory_path() / ("fsimg-ntfs-pop-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto file = [&](const std::string& name, std::size_t size) {
        std::string s;
        for (std::size_t i = 0; i < size; ++i) s += static_cast<char>('a' + i % 26);
        std::ofstream(dir / name, std::ios::binary) << s;
        return (dir / name).string();
    };
    fsimg::test::TreeBuilder b(&check_source_tree);
    const auto d = b.add(0, "Dir", true);
    const auto small = b.add(d, "small.txt", false, 736);  // 9 units: limit 728
    const auto big = b.add(d, "big.bin", false, 100000);
    const auto dos = b.add(0, "README.TXT", false, 5);
    for (int i = 0; i < 60; ++i) b.add(d, "entry" + std::to_string(100 + i), false, 0);
    source::SourceTree t = b.done();
    t.nodes[small].host_path = file("small.txt", 736);
    t.nodes[big].host_path = file("big.bin", 100000);
    t.nodes[dos].host_path = file("README.TXT", 5);
    for (auto& n : t.nodes)
        if (!n.is_dir && n.host_path.empty()) n.host_path = file("empty", 0);

    const Layout L = must(16u << 20, 4096);
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, fsimg::ntfs::test::opts());
    const auto planned = plan_population(t, L);
    REQUIRE(std::holds_alternative<PopulatePlan>(planned));
    const auto& plan = std::get<PopulatePlan>(planned);
    CHECK(plan.nodes[d].record == kFirstUserRecord);  // depth first, in the order added
    CHECK(plan.nodes[small].record == kFirstUserRecord + 1);
    CHECK(plan.nodes[dos].name_space == Namespace::win32_and_dos);
    CHECK(plan.nodes[big].name_space == Namespace::win32);
    CHECK_FALSE(plan.nodes[small].resident);
    CHECK(plan.nodes[big].extents.size() == 1);
    CHECK(!plan.nodes[d].index.blocks.empty());
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    write_population(img, L, t, plan, wo);

    const Volume vol(img);
    CHECK(vol.record_count() == plan.mft_records);
    const MftRecord r = vol.read_record(plan.nodes[big].record);
    const Attribute* data = r.find(AttrType::data);
    REQUIRE(data != nullptr);
    CHECK(data->non_resident);
    const auto bytes = vol.read_stream(*data, 1u << 20);
    REQUIRE(bytes.size() == 100000);
    CHECK(bytes[99999] == std::byte{'a' + 99999 % 26});
    const MftRecord dir_rec = vol.read_record(plan.nodes[d].record);
    CHECK(dir_rec.is_directory());
    CHECK(dir_rec.find(AttrType::index_allocation, u"$I30") != nullptr);
    fs::remove_all(dir);
}

namespace {

/// The (tag, MFT reference) keys of $Extend/$Reparse:$R (record 26), in walk order.
std::vector<std::pair<std::uint32_t, std::uint64_t>> reparse_keys(const Volume& vol) {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> keys;
    for_each_index_entry(vol, vol.read_record(kReparseRecord), kReparseIndex,
                         [&](const IndexEntry& e, const IndexEntryLocation&) {
                             REQUIRE(e.key.size() == 12);
                             CHECK(e.length == kReparseIndexEntryBytes);
                             keys.emplace_back(core::load_le32(e.key, 0), core::load_le64(e.key, 4));
                             return true;
                         });
    return keys;
}

std::vector<std::string> check_codes(const io::BlockDevice& d) {
    check::Findings f;
    (void)check_volume(d, f);
    std::vector<std::string> out;
    for (const auto& x : f.all()) out.emplace_back(x.code);
    return out;
}

}  // namespace

TEST_CASE("ntfs populate: stored symbolic links are listed in $Extend/$Reparse:$R", "[ntfs][populate]") {
    // 5 links fit in $INDEX_ROOT; 60 need INDX blocks (32 bytes each, about
    // 18 in the root of a 1 KiB record).
    for (const std::size_t links : {std::size_t{5}, std::size_t{60}}) {
        CAPTURE(links);
        fsimg::test::TreeBuilder b(&check_source_tree);
        const auto d = b.add(0, "links", true);
        std::vector<std::uint32_t> nodes;
        for (std::size_t i = 0; i < links; ++i)
            nodes.push_back(b.add(d, "l" + std::to_string(1000 + i), false));
        source::SourceTree t = b.done();
        for (const auto n : nodes) t.nodes[n].symlink_target = "../target";

        const Layout L = must(16u << 20, 4096);
        io::MemoryImage img(L.volume_bytes());
        format_volume(img, L, fsimg::ntfs::test::opts());
        CHECK(check_codes(img).empty());
        const auto planned = plan_population(t, L);
        REQUIRE(std::holds_alternative<PopulatePlan>(planned));
        const auto& plan = std::get<PopulatePlan>(planned);
        CHECK(plan.reparse.nodes == nodes);  // depth-first records are ascending
        CHECK(plan.reparse.index.blocks.empty() == (links == 5));
        CHECK(plan.reparse.extents.empty() == (links == 5));
        source::PopulateWriteOptions wo;
        wo.creation_time = 1700000000;
        write_population(img, L, t, plan, wo);

        const Volume vol(img);
        const auto keys = reparse_keys(vol);
        REQUIRE(keys.size() == links);
        for (std::size_t i = 0; i < links; ++i) {
            CHECK(keys[i].first == 0xA000000Cu);  // IO_REPARSE_TAG_SYMLINK
            CHECK(keys[i].second == FileReference{plan.nodes[nodes[i]].record, 1}.packed());
        }
        CHECK((vol.read_record(kReparseRecord).find(AttrType::index_allocation, u"$R") != nullptr) ==
              (links == 60));
        CHECK(check_codes(img).empty());

        if (links != 5) continue;
        // fsck notices a reparse point the index does not list, and an entry
        // naming a file without one: point the first entry at $Boot.
        std::vector<std::byte> rec(L.mft_record_bytes);
        const std::uint64_t at = L.mft.lcn * L.cluster_bytes + kReparseRecord * L.mft_record_bytes;
        img.read_at(at, rec);
        std::vector<std::byte> copy(rec);
        const MftRecord r = parse_mft_record(copy, kReparseRecord);
        const Attribute* root = r.find(AttrType::index_root, u"$R");
        REQUIRE(root != nullptr);
        const IndexRoot ir = decode_index_root(root->value);
        REQUIRE(!ir.entries.front().last());
        // value + root header 0x10 + entry + entry header 16 + tag 4: the file reference
        const std::size_t ref_at = root->offset + root->value_offset + 0x10 + ir.entries.front().offset + 20;
        REQUIRE((ref_at % 512 < 502));  // clear of the sector's update sequence number
        CHECK(core::load_le64(rec, ref_at) == FileReference{plan.nodes[nodes[0]].record, 1}.packed());
        core::store_le64(rec, ref_at, FileReference{7, 7}.packed());
        img.write_at(at, rec);
        const auto codes = check_codes(img);
        CHECK(codes == std::vector<std::string>{"ntfs.reparse.missing-entry", "ntfs.reparse.stale-entry"});
    }
}

TEST_CASE("ntfs populate: Win32 names get DOS names, both indexed, both in the record", "[ntfs][populate]") {
    fsimg::test::TreeBuilder b(&check_source_tree);
    const auto d = b.add(0, "Program Files", true);
    const auto upper = b.add(d, "README.TXT", false);
    const auto lower = b.add(d, "notes.txt", false);
    const auto posix = b.add(d, "a:b", false);
    std::vector<std::uint32_t> many;
    for (int i = 0; i < 6; ++i)
        many.push_back(b.add(d, "Long File Name " + std::to_string(i) + ".txt", false));
    source::SourceTree t = b.done();
    // Every file empty: one empty host file (the source reader opens regular files only).
    const fs::path empty = fs::temp_directory_path() / ("fsimg-ntfs-empty-" + std::to_string(::getpid()));
    std::ofstream(empty, std::ios::binary).flush();
    for (auto& n : t.nodes)
        if (!n.is_dir) n.host_path = empty.string();

    const Layout L = must(16u << 20, 4096);
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, fsimg::ntfs::test::opts());
    const auto planned = plan_population(t, L);
    REQUIRE(std::holds_alternative<PopulatePlan>(planned));
    const auto& plan = std::get<PopulatePlan>(planned);
    CHECK(plan.nodes[d].dos_name == u"PROGRA~1");
    CHECK(plan.nodes[upper].name_space == Namespace::win32_and_dos);
    CHECK(plan.nodes[upper].dos_name.empty());
    CHECK(plan.nodes[lower].dos_name == u"NOTES~1.TXT");
    CHECK(plan.nodes[posix].name_space == Namespace::posix);
    CHECK(plan.nodes[many[0]].dos_name == u"LONGFI~1.TXT");
    CHECK(plan.nodes[many[3]].dos_name == u"LONGFI~4.TXT");
    CHECK(plan.nodes[many[4]].dos_name.substr(0, 2) == u"LO");  // the hashed form
    CHECK(plan.nodes[many[4]].dos_name.substr(6) == u"~1.TXT");
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    write_population(img, L, t, plan, wo);
    CHECK(check_codes(img).empty());

    const Volume vol(img);
    const MftRecord r = vol.read_record(plan.nodes[d].record);
    CHECK(r.header.link_count == 2);
    std::vector<std::pair<std::u16string, Namespace>> names;
    for (const Attribute& a : r.attributes)
        if (a.kind() == AttrType::file_name) {
            const FileName fn = decode_file_name(a.value);
            names.emplace_back(fn.name, fn.name_space);
        }
    REQUIRE(names.size() == 2);
    CHECK(names[0] == std::pair<std::u16string, Namespace>{u"PROGRA~1", Namespace::dos});  // shorter first
    CHECK(names[1] == std::pair<std::u16string, Namespace>{u"Program Files", Namespace::win32});
    // The directory's index: every name and every DOS name, in collation order.
    std::vector<std::u16string> listed;
    for (const IndexEntry& e : list_directory(vol, r)) listed.push_back(e.file_name->name);
    CHECK(listed.size() == 9 + 7);  // 9 names, 7 DOS names (README.TXT and a:b have none)
    CHECK(std::is_sorted(listed.begin(), listed.end(),
                         [](const auto& x, const auto& y) { return collate_file_names(x, y) < 0; }));
    CHECK(std::find(listed.begin(), listed.end(), u"NOTES~1.TXT") != listed.end());
    fs::remove(empty);
}

TEST_CASE("ntfs populate: an index the record cannot hold moves its $BITMAP, then its attributes, out",
          "[ntfs][populate]") {
    // 60,000 96-byte entries: ~3,000 blocks; a resident $BITMAP of 376 bytes
    // does not leave the record its reserve.
    const std::vector<std::uint32_t> wide(60000, 96);
    const IndexShape s = directory_index(wide, 1024, 4096, 4, false, 4);
    CHECK(s.blocks.size() > 2000);
    CHECK(s.storage == IndexStorage::bitmap_outside);
    CHECK(index_storage_fits(1024, 4, index_bitmap_bytes(s.blocks.size()), 4, IndexStorage::bitmap_outside));
    CHECK_FALSE(index_storage_fits(1024, 4, index_bitmap_bytes(s.blocks.size()), 4, IndexStorage::in_record));
    // A 220-unit name with a 12-unit DOS name: even a non-resident $BITMAP
    // leaves no room, so the names and the allocation go to an extension record.
    const std::vector<std::uint32_t> some(200, 96);
    const IndexShape e = directory_index(some, 1024, 4096, 220, false, 12);
    CHECK(e.storage == IndexStorage::extension);
    CHECK(directory_index(some, 4096, 4096, 220, false, 12).storage == IndexStorage::in_record);
    // Few entries stay in the root, whatever the name.
    CHECK(directory_index(std::vector<std::uint32_t>(1, 96), 1024, 4096, 220, false, 12).blocks.empty());
}

TEST_CASE("ntfs populate: a directory with an extension record is written and read back",
          "[ntfs][populate]") {
    fsimg::test::TreeBuilder b(&check_source_tree);
    const std::string long_name = "directory " + std::string(210, 'x');
    const auto d = b.add(0, long_name, true);
    const auto sub = b.add(d, "sub", true);
    std::vector<std::uint32_t> files;
    for (int i = 0; i < 150; ++i)
        files.push_back(b.add(d, "file " + std::to_string(1000 + i) + ".txt", false));
    b.add(sub, "inside.txt", false);
    source::SourceTree t = b.done();
    // Every file empty: one empty host file (the source reader opens regular files only).
    const fs::path empty = fs::temp_directory_path() / ("fsimg-ntfs-empty-" + std::to_string(::getpid()));
    std::ofstream(empty, std::ios::binary).flush();
    for (auto& n : t.nodes)
        if (!n.is_dir) n.host_path = empty.string();

    const Layout L = must(16u << 20, 4096);
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, fsimg::ntfs::test::opts());
    const auto planned = plan_population(t, L);
    REQUIRE(std::holds_alternative<PopulatePlan>(planned));
    const auto& plan = std::get<PopulatePlan>(planned);
    REQUIRE(plan.nodes[d].index.storage == IndexStorage::extension);
    CHECK(plan.nodes[d].extension_record == plan.nodes[d].record + 1);
    CHECK(plan.nodes[sub].record == plan.nodes[d].record + 2);
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    write_population(img, L, t, plan, wo);
    CHECK(check_codes(img).empty());

    const Volume vol(img);
    const MftRecord base = vol.read_record(plan.nodes[d].record);
    CHECK(base.find(AttrType::attribute_list) != nullptr);
    CHECK(base.find(AttrType::file_name) == nullptr);
    const MftRecord ext = vol.read_record(plan.nodes[d].extension_record);
    CHECK(FileReference::unpack(ext.header.base_record).record == plan.nodes[d].record);
    CHECK(ext.find(AttrType::index_allocation, u"$I30") != nullptr);
    // Paths resolve through the extension record's $FILE_NAMEs and index blocks.
    const auto found = resolve_path(vol, "/" + long_name + "/file 1149.txt");
    REQUIRE(found.has_value());
    CHECK(found->record == plan.nodes[files.back()].record);
    REQUIRE(resolve_path(vol, "/" + long_name + "/sub/inside.txt").has_value());
    fs::remove(empty);
}
