// NTFS directory reader: $I30 walks over directories populate writes (root
// only, two and three levels, 20,000 entries), path resolution, and damaged
// indexes (sub-node loops, blocks past the allocation or free in the bitmap,
// torn fixups, wrong block VCNs) giving clean errors.
#include <fmt/format.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/describe.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "ntfs_fixture.hpp"
#include "tree_builder.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
using fsimg::ntfs::test::must;
namespace fs = std::filesystem;

namespace {

/// A volume with /Dir holding `n` empty files "file_with_name_NNNNN.txt",
/// /Small holding "b.txt" and "A.txt" (5 bytes "hello"), on `bytes` bytes.
struct DirImage {
    Layout layout;
    io::MemoryImage img;
    std::uint64_t dir_record = 0, small_record = 0, hello_record = 0;
    std::vector<std::string> names;  ///< /Dir's names as added

    DirImage(std::size_t n, std::uint64_t bytes, std::uint32_t cluster = 4096)
        : layout(must(bytes, cluster)), img(layout.volume_bytes()) {
        const fs::path host = fs::temp_directory_path() / ("fsimg-ntfs-dir-" + std::to_string(::getpid()));
        fs::create_directories(host);
        std::ofstream(host / "empty", std::ios::binary).flush();
        std::ofstream(host / "hello", std::ios::binary) << "hello";
        fsimg::test::TreeBuilder b(&check_source_tree);
        const auto d = b.add(0, "Dir", true);
        for (std::size_t i = 0; i < n; ++i) {
            char name[40];
            std::snprintf(name, sizeof name, "file_with_name_%05zu.txt", i);
            names.emplace_back(name);
            b.add(d, name, false, 0);
        }
        const auto s = b.add(0, "Small", true);
        b.add(s, "b.txt", false, 0);
        const auto hello = b.add(s, "A.txt", false, 5);
        source::SourceTree t = b.done();
        for (auto& node : t.nodes)
            if (!node.is_dir) node.host_path = (host / "empty").string();
        t.nodes[hello].host_path = (host / "hello").string();
        format_volume(img, layout, fsimg::ntfs::test::opts());
        const auto planned = plan_population(t, layout);
        REQUIRE(std::holds_alternative<PopulatePlan>(planned));
        const auto& plan = std::get<PopulatePlan>(planned);
        source::PopulateWriteOptions wo;
        wo.creation_time = 1700000000;
        write_population(img, layout, t, plan, wo);
        dir_record = plan.nodes[d].record;
        small_record = plan.nodes[s].record;
        hello_record = plan.nodes[hello].record;
        fs::remove_all(host);
    }
};

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
        return e.what();
    }
    return "(no error)";
}

/// The entries without DOS names (namespace 2), which populate stores beside
/// each Win32 name: what a directory listing shows.
std::vector<IndexEntry> without_dos(std::vector<IndexEntry> entries) {
    std::erase_if(entries, [](const IndexEntry& e) {
        return e.file_name && e.file_name->name_space == Namespace::dos;
    });
    return entries;
}

std::vector<std::string> names_of(const std::vector<IndexEntry>& entries) {
    std::vector<std::string> out;
    for (const IndexEntry& e : entries) out.push_back(core::utf16_to_utf8(e.file_name.value().name));
    return out;
}

/// Rewrites INDX block `block` of the directory: fixups removed, `edit`
/// applied to the plain block, fixups applied again (usn 7).
void patch_block(io::MemoryImage& img, std::uint64_t dir_record, std::uint64_t block,
                 const std::function<void(std::span<std::byte>)>& edit) {
    const Volume v(img);
    const MftRecord r = v.read_record(dir_record);
    const auto alloc = load_attribute(v, r, AttrType::index_allocation, u"$I30");
    REQUIRE(alloc);
    std::vector<std::byte> raw(4096);
    v.read_stream(*alloc, block * 4096, raw);
    REQUIRE_FALSE(verify_and_remove_fixups(raw));
    edit(raw);
    apply_fixups(raw, core::load_le16(raw, 4), 7);
    const auto at = v.device_offset(*alloc, block * 4096);
    REQUIRE(at);
    img.write_at(*at, raw);
}

/// Offset (within the block) of the first entry of block `block` that has a
/// sub-node, and that entry's child VCN.
std::pair<std::uint32_t, std::uint64_t> first_parent_entry(const Volume& v, std::uint64_t dir_record,
                                                           std::uint64_t block) {
    const MftRecord r = v.read_record(dir_record);
    const auto alloc = load_attribute(v, r, AttrType::index_allocation, u"$I30");
    const IndexBlock b = v.read_index_block(*alloc, block, 4096, true);
    for (const IndexEntry& e : b.entries)
        if (e.child_vcn) return {e.offset + 0x18 + e.length - 8, *e.child_vcn};
    FAIL("block " << block << " has no entry with a sub-node");
    return {};
}

}  // namespace

TEST_CASE("ntfs directory: names in collation order, every block once", "[ntfs][directory]") {
    DirImage d(2000, 32u << 20);
    const Volume v(d.img);
    const MftRecord dir = v.read_record(d.dir_record);
    std::vector<std::optional<std::uint64_t>> blocks;
    std::uint32_t max_depth = 0;
    std::size_t count = 0;
    std::size_t dos = 0;
    for_each_index_entry(v, dir, [&](const IndexEntry& e, const IndexEntryLocation& loc) {
        ++count;
        if (e.file_name->name_space == Namespace::dos) ++dos;
        if (blocks.empty() || blocks.back() != loc.block) blocks.push_back(loc.block);
        max_depth = std::max(max_depth, loc.depth);
        // The location points at the entry's bytes: its reference is there.
        if (loc.block) {
            const auto alloc = load_attribute(v, dir, AttrType::index_allocation, u"$I30");
            const auto b = v.read_index_block(*alloc, *loc.block, 4096, true);
            const auto it = std::find_if(b.entries.begin(), b.entries.end(),
                                         [&](const IndexEntry& x) { return x.offset + 0x18 == loc.offset; });
            REQUIRE(it != b.entries.end());
            CHECK(it->reference == e.reference);
        }
        return true;
    });
    CHECK(count == 4000);  // each name and its DOS name
    CHECK(dos == 2000);
    CHECK(max_depth >= 2);  // root, inner blocks (entries with sub-nodes), leaves

    const auto listed = without_dos(list_directory(v, dir));
    auto sorted = d.names;
    std::sort(sorted.begin(), sorted.end());  // ASCII, no case pairs: collation = byte order
    CHECK(names_of(listed) == sorted);
    for (const IndexEntry& e : listed) {
        CHECK(e.file_name->parent.record == d.dir_record);
        CHECK(FileReference::unpack(e.reference).sequence == 1);
    }

    // The root holds the system files, "." and the two directories.
    const auto root = without_dos(list_directory(v, v.read_record(kRootRecord)));
    CHECK(names_of(root) == std::vector<std::string>{"$AttrDef", "$BadClus", "$Bitmap", "$Boot", "$Extend",
                                                     "$LogFile", "$MFT", "$MFTMirr", "$Secure", "$UpCase",
                                                     "$Volume", ".", "Dir", "Small"});
    // A stop after the third entry.
    std::size_t seen = 0;
    for_each_index_entry(v, dir, [&](const IndexEntry&, const IndexEntryLocation&) { return ++seen < 3; });
    CHECK(seen == 3);
}

TEST_CASE("ntfs directory: 20,000 entries (make-tree wide)", "[ntfs][directory]") {
    DirImage d(20000, 96u << 20);
    const Volume v(d.img);
    const MftRecord dir = v.read_record(d.dir_record);
    std::set<std::uint64_t> blocks;
    std::uint32_t max_depth = 0;
    std::vector<std::string> names;
    for_each_index_entry(v, dir, [&](const IndexEntry& e, const IndexEntryLocation& loc) {
        if (loc.block) blocks.insert(*loc.block);
        max_depth = std::max(max_depth, loc.depth);
        if (e.file_name->name_space != Namespace::dos)
            names.push_back(core::utf16_to_utf8(e.file_name->name));
        return true;
    });
    auto sorted = d.names;
    std::sort(sorted.begin(), sorted.end());
    CHECK(names == sorted);
    CHECK(max_depth >= 2);
    const auto alloc = load_attribute(v, dir, AttrType::index_allocation, u"$I30");
    CHECK(blocks.size() == alloc->size() / 4096);  // every allocated block holds entries
    const auto t = resolve_path(v, "/dir/FILE_WITH_NAME_19999.TXT");
    REQUIRE(t);
    CHECK(t->name.name == u"file_with_name_19999.txt");
}

TEST_CASE("ntfs directory: paths resolve case-insensitively", "[ntfs][directory]") {
    DirImage d(40, 16u << 20);
    const Volume v(d.img);
    std::vector<std::string> notes;
    const auto hello = resolve_path(v, "/small/a.TXT", &notes);
    CHECK(notes.empty());  // $UpCase read from record 10
    REQUIRE(hello);
    CHECK(hello->record == d.hello_record);
    CHECK(hello->reference == FileReference{d.hello_record, 1});
    CHECK(hello->name.name == u"A.txt");
    CHECK(hello->name.data_size == 5);
    CHECK(hello->name.parent.record == d.small_record);
    const auto root = resolve_path(v, "/");
    REQUIRE(root);
    CHECK(root->record == kRootRecord);
    CHECK(root->name.name == u".");
    const auto dir = resolve_path(v, "//Dir//");
    REQUIRE(dir);
    CHECK(dir->record == d.dir_record);
    CHECK_FALSE(resolve_path(v, "/Small/c.txt"));
    CHECK_FALSE(resolve_path(v, "/Small/A.txt/x"));  // a file is no directory
    CHECK_FALSE(resolve_path(v, "/Nothing/A.txt"));
    CHECK(resolve_path(v, "/$MFT")->record == 0);
    // Root-only directory: /Small's two entries sit in $INDEX_ROOT.
    const auto small = v.read_record(d.small_record);
    CHECK(small.find(AttrType::index_allocation, u"$I30") == nullptr);
    for_each_index_entry(v, small, [](const IndexEntry&, const IndexEntryLocation& loc) {
        CHECK_FALSE(loc.block);
        CHECK(loc.depth == 0);
        CHECK(loc.offset >= 0x20);
        return true;
    });
    CHECK(names_of(list_directory(v, small)) ==
          std::vector<std::string>{"A.txt", "A~1.TXT", "b.txt", "B~1.TXT"});
    CHECK(names_of(without_dos(list_directory(v, small))) == std::vector<std::string>{"A.txt", "b.txt"});
    // A file is not a directory for the walk.
    CHECK_THAT(error_of([&] { list_directory(v, v.read_record(d.hello_record)); }),
               Catch::Contains("no $INDEX_ROOT:$I30"));
}

TEST_CASE("ntfs directory: a stale entry and a damaged $UpCase", "[ntfs][directory]") {
    DirImage d(40, 16u << 20);
    const std::uint64_t rs = d.layout.mft_record_bytes;
    {
        // $UpCase's $DATA renamed: the built-in table stands in, with a note.
        const Volume v(d.img);
        const MftRecord up = v.read_record(kUpcaseRecord);
        const Attribute* data = up.find(AttrType::data);
        REQUIRE(data);
        std::vector<std::byte> raw(rs);
        v.read_stream(v.mft_data(), kUpcaseRecord * rs, raw);
        REQUIRE_FALSE(verify_and_remove_fixups(raw));
        raw[data->offset] = std::byte{0x81};  // type 0x81: no $DATA any more
        apply_fixups(raw, core::load_le16(raw, 4), 9);
        d.img.write_at(*v.device_offset(v.mft_data(), kUpcaseRecord * rs), raw);
    }
    const Volume v(d.img);
    std::vector<std::string> notes;
    REQUIRE(resolve_path(v, "/SMALL/A.TXT", &notes));
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("has no $DATA") && Catch::Contains("built-in"));
    {
        // The file's record gets sequence 2: the entry (sequence 1) is stale.
        std::vector<std::byte> raw(rs);
        v.read_stream(v.mft_data(), d.hello_record * rs, raw);
        REQUIRE_FALSE(verify_and_remove_fixups(raw));
        core::store_le16(raw, 0x10, 2);
        apply_fixups(raw, core::load_le16(raw, 4), 9);
        d.img.write_at(*v.device_offset(v.mft_data(), d.hello_record * rs), raw);
    }
    CHECK_THAT(error_of([&] { resolve_path(v, "/Small/A.txt"); }),
               Catch::Contains(fmt::format("refers to record {} sequence 1", d.hello_record)) &&
                   Catch::Contains("sequence 2 (a stale entry)"));
}

TEST_CASE("ntfs directory: damaged indexes give errors, never a crash", "[ntfs][directory]") {
    DirImage d(2000, 32u << 20);
    std::uint64_t inner = 0;  // an inner block (entries with sub-nodes)
    std::uint32_t child_at = 0;
    std::uint64_t child_vcn = 0;
    {
        const Volume v(d.img);
        const MftRecord dir = v.read_record(d.dir_record);
        const auto root = decode_index_root(dir.find(AttrType::index_root, u"$I30")->value);
        REQUIRE(root.entries.front().child_vcn);
        inner = *root.entries.front().child_vcn;  // 4 KiB clusters: VCN = block
        std::tie(child_at, child_vcn) = first_parent_entry(v, d.dir_record, inner);
    }
    auto walk = [&] {
        const Volume v(d.img);
        list_directory(v, v.read_record(d.dir_record));
    };
    auto set_child = [&](std::uint64_t vcn) {
        patch_block(d.img, d.dir_record, inner,
                    [&](std::span<std::byte> b) { core::store_le64(b, child_at, vcn); });
    };
    const std::string rec = fmt::format("MFT record {}", d.dir_record);
    SECTION("a sub-node loop back to its own block") {
        set_child(inner);
        CHECK_THAT(error_of(walk), Catch::Contains(rec) &&
                                       Catch::Contains(fmt::format("index block {}", inner)) &&
                                       Catch::Contains("already visited"));
    }
    SECTION("a block referenced twice") {
        // The second parent entry points at the first one's child.
        const Volume v(d.img);
        const auto alloc =
            load_attribute(v, v.read_record(d.dir_record), AttrType::index_allocation, u"$I30");
        const IndexBlock b = v.read_index_block(*alloc, inner, 4096, true);
        REQUIRE(b.entries.size() >= 2);
        const IndexEntry& second = b.entries[1];
        REQUIRE(second.child_vcn);
        patch_block(d.img, d.dir_record, inner, [&](std::span<std::byte> raw) {
            core::store_le64(raw, second.offset + 0x18 + second.length - 8, child_vcn);
        });
        CHECK_THAT(error_of(walk), Catch::Contains("already visited") &&
                                       Catch::Contains(fmt::format("sub-node VCN {}", child_vcn)));
    }
    SECTION("a sub-node past the allocation") {
        set_child(1000000);
        CHECK_THAT(error_of(walk), Catch::Contains("sub-node VCN 1000000") && Catch::Contains("past"));
    }
    SECTION("a sub-node free in $BITMAP:$I30") {
        const Volume v(d.img);
        const MftRecord dir = v.read_record(d.dir_record);
        const auto bm = load_attribute(v, dir, AttrType::bitmap, u"$I30");
        REQUIRE(bm);
        REQUIRE_FALSE(bm->non_resident);
        // Clear the child's bit in the resident value inside the record.
        const std::uint64_t rs = d.layout.mft_record_bytes;
        std::vector<std::byte> raw(rs);
        v.read_stream(v.mft_data(), d.dir_record * rs, raw);
        REQUIRE_FALSE(verify_and_remove_fixups(raw));
        const std::size_t at = bm->offset + bm->value_offset + child_vcn / 8;
        raw[at] &= ~std::byte(1u << (child_vcn % 8));
        apply_fixups(raw, core::load_le16(raw, 4), 9);
        d.img.write_at(*v.device_offset(v.mft_data(), d.dir_record * rs), raw);
        CHECK_THAT(error_of(walk),
                   Catch::Contains(fmt::format("index block {}), free in $BITMAP:$I30", child_vcn)));
    }
    SECTION("a torn stride in a leaf block") {
        const Volume v(d.img);
        const auto alloc =
            load_attribute(v, v.read_record(d.dir_record), AttrType::index_allocation, u"$I30");
        const auto at = v.device_offset(*alloc, child_vcn * 4096 + 3 * 512 - 2);
        REQUIRE(at);
        const std::array<std::byte, 2> junk{std::byte{0xEE}, std::byte{0xEE}};
        d.img.write_at(*at, junk);
        CHECK_THAT(error_of(walk), Catch::Contains(rec) &&
                                       Catch::Contains(fmt::format("index block {}", child_vcn)) &&
                                       Catch::Contains("fixup"));
    }
    SECTION("a block that names another VCN") {
        patch_block(d.img, d.dir_record, child_vcn,
                    [](std::span<std::byte> b) { core::store_le64(b, 0x10, 4242); });
        CHECK_THAT(error_of(walk), Catch::Contains(fmt::format("index block {} says VCN 4242", child_vcn)));
    }
    SECTION("a VCN that is no multiple of the block's VCNs") {
        // 512-byte clusters: 8 VCNs per 4 KiB block.
        DirImage s(400, 16u << 20, 512);
        const Volume v(s.img);
        CHECK(index_vcns_per_block(v, 4096) == 8);
        const MftRecord dir = v.read_record(s.dir_record);
        const auto root = decode_index_root(dir.find(AttrType::index_root, u"$I30")->value);
        REQUIRE(root.entries.front().child_vcn);
        CHECK(*root.entries.front().child_vcn % 8 == 0);
        CHECK(without_dos(list_directory(v, dir)).size() == 400);
        // Patch the root entry's child VCN inside the record.
        const std::uint64_t rs = s.layout.mft_record_bytes;
        std::vector<std::byte> raw(rs);
        v.read_stream(v.mft_data(), s.dir_record * rs, raw);
        REQUIRE_FALSE(verify_and_remove_fixups(raw));
        const Attribute* ir = dir.find(AttrType::index_root, u"$I30");
        const IndexEntry& e0 = root.entries.front();
        core::store_le64(raw, ir->offset + ir->value_offset + 0x10 + e0.offset + e0.length - 8, 3);
        apply_fixups(raw, core::load_le16(raw, 4), 9);
        s.img.write_at(*v.device_offset(v.mft_data(), s.dir_record * rs), raw);
        CHECK_THAT(error_of([&] { list_directory(v, v.read_record(s.dir_record)); }),
                   Catch::Contains("$INDEX_ROOT:$I30 has sub-node VCN 3, not a multiple of 8"));
    }
}

TEST_CASE("ntfs directory: random index damage never crashes", "[ntfs][directory]") {
    DirImage d(600, 16u << 20);
    const Volume v0(d.img);
    const MftRecord dir = v0.read_record(d.dir_record);
    const auto alloc = load_attribute(v0, dir, AttrType::index_allocation, u"$I30");
    REQUIRE(alloc);
    const std::uint64_t first = *v0.device_offset(*alloc, 0);
    const std::uint64_t span = alloc->size();
    std::vector<std::byte> saved(span);
    d.img.read_at(first, saved);  // contiguous: populate places a directory's blocks in one run
    std::uint32_t state = 12345;
    int errors = 0, clean = 0;
    for (int round = 0; round < 300; ++round) {
        d.img.write_at(first, saved);
        for (int k = 0; k < 4; ++k) {
            state = state * 1103515245u + 12345u;
            const std::uint64_t at = (state >> 8) % span;
            state = state * 1103515245u + 12345u;
            const std::array<std::byte, 1> b{std::byte(state >> 16)};
            d.img.write_at(first + at, b);
        }
        try {
            const Volume v(d.img);
            const auto entries = list_directory(v, v.read_record(d.dir_record));
            CHECK(entries.size() <= 1200 * 2);  // 600 names and their DOS names, each at most twice
            ++clean;
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::corrupt);
            ++errors;
        }
    }
    CHECK(errors > 0);
    CHECK(errors + clean == 300);
}

TEST_CASE("ntfs describe: boot sector fields as formatted", "[ntfs][describe]") {
    DirImage d(0, 16u << 20);
    std::array<std::byte, kBootSectorSize> sector{};
    d.img.read_at(0, sector);
    std::map<std::string, BootField> f;
    for (BootField& b : boot_fields(sector)) f.emplace(std::string(b.name), std::move(b));
    CHECK(f.at("OemId").text == "NTFS    ");
    CHECK(f.at("BytesPerSector").number == 512);
    CHECK(f.at("SectorsPerCluster").number == 8);
    CHECK(f.at("TotalSectors").number == d.layout.total_sectors);
    CHECK(f.at("MftLcn").number == d.layout.mft.lcn);
    CHECK(f.at("MftMirrLcn").number == d.layout.mftmirr.lcn);
    CHECK(f.at("ClustersPerMftRecord").size_code() == -10);  // 2^10 = 1024-byte records
    CHECK(f.at("ClustersPerIndexBlock").size_code() == 1);   // one 4 KiB cluster
    CHECK(f.at("VolumeSerialNumber").number == 0x0123456789ABCDEFull);
    CHECK(f.at("VolumeSerialNumber").offset == 0x48);
    CHECK(f.at("Signature").number == 0xAA55);
}

TEST_CASE("ntfs describe: flag names", "[ntfs][describe]") {
    CHECK(file_attribute_names(0) == "none");
    CHECK(file_attribute_names(0x3) == "read-only, hidden");
    CHECK(file_attribute_names(0x10000020) == "archive, directory");
    CHECK(file_attribute_names(0x80000) == "0x80000");
    CHECK(attribute_flag_names(0x8001) == "compressed, sparse");
    CHECK(record_flag_names(0x3) == "in use, directory");
    CHECK(volume_flag_names(0x8001) == "dirty, modified by chkdsk");
    CHECK(volume_flag_names(0x40) == "0x40");
    CHECK(namespace_name(Namespace::win32_and_dos) == "Win32&DOS");
    CHECK(index_keys(u"$I30", 0x30) == IndexKeys::file_name);
    CHECK(index_keys(u"$R", 0) == IndexKeys::reparse);
    CHECK(index_keys(u"$O", 0) == IndexKeys::raw);
}

TEST_CASE("ntfs describe: the INDX blocks of a directory", "[ntfs][describe]") {
    DirImage d(2000, 32u << 20);
    const auto blocks = [&](bool with_bitmap, std::uint64_t max_blocks) {
        const Volume v(d.img);
        const MftRecord r = v.read_record(d.dir_record);
        const auto alloc = load_attribute(v, r, AttrType::index_allocation, u"$I30");
        REQUIRE(alloc);
        const auto bitmap = load_attribute(v, r, AttrType::bitmap, u"$I30");
        REQUIRE(bitmap);
        return read_index_blocks(v, *alloc, with_bitmap ? &*bitmap : nullptr, 4096, IndexKeys::file_name,
                                 max_blocks);
    };
    const IndexBlocks all = blocks(true, 1000);
    CHECK(all.block_bytes == 4096);
    CHECK_FALSE(all.bitmap_error);
    REQUIRE(all.slots.size() == all.in_use.size());
    REQUIRE(all.slots.size() >= 2);
    // Every non-DOS name of /Dir lies in exactly one block or in the root.
    std::set<std::string> seen;
    std::size_t names = 0;
    for (const IndexBlockSlot& s : all.slots) {
        REQUIRE(s.decoded);
        CHECK(s.error.empty());
        CHECK(s.vcn == s.block);  // 4 KiB clusters and blocks
        CHECK(s.decoded->vcn == s.vcn);
        for (const IndexEntry& e : without_dos(s.decoded->entries))
            if (!e.last()) {
                seen.insert(core::utf16_to_utf8(e.file_name.value().name));
                ++names;
            }
    }
    const Volume v(d.img);
    const auto root =
        decode_index_root(v.read_record(d.dir_record).find(AttrType::index_root, u"$I30")->value);
    for (const IndexEntry& e : without_dos(root.entries))
        if (!e.last()) {
            seen.insert(core::utf16_to_utf8(e.file_name.value().name));
            ++names;
        }
    CHECK(names == 2000);
    CHECK(seen.size() == 2000);
    // No bitmap: every whole block of the allocation is shown.
    const IndexBlocks unmapped = blocks(false, 1000);
    CHECK(unmapped.bitmap_error == "no $BITMAP");
    CHECK(unmapped.in_use.size() == unmapped.blocks);
    // The limit, and damage confined to its slot.
    CHECK(blocks(true, 1).slots.size() == 1);
    const std::uint64_t torn = all.in_use[1];
    patch_block(d.img, d.dir_record, torn, [](std::span<std::byte> b) { b[0] = std::byte{'X'}; });
    const IndexBlocks damaged = blocks(true, 1000);
    REQUIRE(damaged.slots.size() == all.slots.size());
    for (const IndexBlockSlot& s : damaged.slots) {
        CHECK(s.decoded.has_value() == (s.block != torn));
        CHECK(s.error.empty() == (s.block != torn));
    }
}
