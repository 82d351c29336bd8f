// NTFS label, serial and attributes (include/fsimg/ntfs/edit.hpp) on
// MemoryImages made by format_volume: the values read back through Volume,
// the dirty flag set while changing and cleared at finish, both copies of
// record 3 alike, the checker clean, and the $LogFile refusal.
#include <fmt/format.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <variant>

#include "edit_test_support.hpp"
#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/edit.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/repair.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "ntfs_fixture.hpp"
#include "tree_builder.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;

namespace {

io::MemoryImage edit_image() {
    io::MemoryImage img(8u << 20);
    format_volume(img, ntfs::test::must(8u << 20), ntfs::test::opts());
    return img;
}

std::set<std::string> edit_codes(const io::BlockDevice& d) {
    check::Findings f;
    (void)check_volume(d, f);
    std::set<std::string> out;
    for (const auto& x : f.all()) out.insert(std::string(x.code));
    return out;
}

std::uint16_t volume_flags(const io::BlockDevice& d) {
    const Volume v(d);
    const MftRecord r = v.read_record(kVolumeRecord);
    return decode_volume_information(r.find(AttrType::volume_information)->value).flags;
}

/// $MFT's and $MFTMirr's copies of record 3 hold the same bytes.
bool mirror_matches(const io::BlockDevice& d) {
    const Volume v(d);
    const Attribute mirror = *v.read_record(1).find(AttrType::data);
    const std::uint32_t rs = v.geometry().mft_record_bytes;
    std::vector<std::byte> a(rs), b(rs);
    v.read_stream(v.mft_data(), 3 * rs, a);
    v.read_stream(mirror, 3 * rs, b);
    return a == b;
}

/// Writes one restart page of $LogFile at stream offset `at`: "RSTR", page
/// size 4096, the restart area at 0x30 with the given LSN, client in-use
/// list and flags, fixups applied.
void put_restart_page(io::BlockDevice& d, std::uint64_t at, std::uint64_t lsn, std::uint16_t in_use,
                      std::uint16_t flags) {
    const Volume v(d);
    const auto log = load_attribute(v, v.read_record(kLogFileRecord), AttrType::data);
    REQUIRE(log);
    std::vector<std::byte> p(4096);
    std::memcpy(p.data(), "RSTR", 4);
    core::store_le16(p, 4, 0x1E);  // update sequence array
    core::store_le16(p, 6, 9);
    core::store_le32(p, 0x10, 4096);  // system page size
    core::store_le32(p, 0x14, 4096);  // log page size
    core::store_le16(p, 0x18, 0x30);  // restart area
    core::store_le16(p, 0x1C, 1);     // major version
    core::store_le64(p, 0x30, lsn);
    core::store_le16(p, 0x30 + 0x08, 1);  // log clients
    core::store_le16(p, 0x30 + 0x0A, 0xFFFF);
    core::store_le16(p, 0x30 + 0x0C, in_use);
    core::store_le16(p, 0x30 + 0x0E, flags);
    apply_fixups(p, 0x1E, 7);
    for (std::uint64_t i = 0; i < p.size(); i += 512) {
        const auto off = v.device_offset(*log, at + i);
        REQUIRE(off);
        d.write_at(*off, std::span(p).subspan(i, 512));
    }
}

}  // namespace

TEST_CASE("ntfs edit: label set, emptied, at its limit and past it", "[ntfs][edit]") {
    io::MemoryImage img = edit_image();
    {
        Editor ed(img, {});
        CHECK(ed.label() == "TEST");
        ed.set_label("Caf\xC3\xA9 \xCE\xA9 data");
        // Changing: the dirty flag is set in both copies of record 3.
        CHECK((volume_flags(img) & 1) == 1);
        CHECK(mirror_matches(img));
        ed.finish();
    }
    CHECK(volume_flags(img) == 0);
    CHECK(mirror_matches(img));
    CHECK(edit_codes(img).empty());
    {
        Editor ed(img, {});
        CHECK(ed.label() == "Caf\xC3\xA9 \xCE\xA9 data");
        ed.set_label("");
        ed.finish();
    }
    {
        const Volume v(img);
        const MftRecord r = v.read_record(kVolumeRecord);
        REQUIRE(r.find(AttrType::volume_name) != nullptr);
        CHECK(r.find(AttrType::volume_name)->value.empty());
        CHECK(r.find(AttrType::volume_information) != nullptr);
        CHECK(Editor(img, {}).label().empty());
    }
    CHECK(edit_codes(img).empty());
    const std::string longest(kMaxLabelUnits, 'L');
    {
        Editor ed(img, {});
        ed.set_label(longest);
        ed.finish();
    }
    CHECK(Editor(img, {}).label() == longest);
    CHECK(edit_codes(img).empty());
    const std::vector<std::byte> before = img.bytes();
    {
        Editor ed(img, {});
        CHECK_THROWS_MATCHES(ed.set_label(longest + "L"), Error,
                             Catch::Matchers::Predicate<Error>(
                                 [](const Error& e) { return e.code() == ErrorCode::usage; }, "usage"));
        ed.finish();
    }
    CHECK(img.bytes() == before);  // nothing written
}

TEST_CASE("ntfs edit: a $VOLUME_NAME that is missing is added", "[ntfs][edit]") {
    io::MemoryImage img = edit_image();
    // Remove record 3's $VOLUME_NAME by hand: the attributes after it moved down.
    {
        const Volume v(img);
        const std::uint32_t rs = v.geometry().mft_record_bytes;
        std::vector<std::byte> raw(rs);
        const std::uint64_t at = *v.device_offset(v.mft_data(), 3 * rs);
        img.read_at(at, raw);
        const MftRecord r = parse_mft_record(raw, 3);
        const Attribute* name = r.find(AttrType::volume_name);
        REQUIRE(name != nullptr);
        std::vector<std::byte> out(raw.begin(), raw.begin() + name->offset);
        out.insert(out.end(), raw.begin() + name->offset + name->length, raw.begin() + r.header.bytes_in_use);
        core::store_le32(out, 0x18, r.header.bytes_in_use - name->length);
        out.resize(rs);
        apply_fixups(out, r.header.usa_offset, 5);
        img.write_at(at, out);
        const auto mirror = v.device_offset(*v.read_record(1).find(AttrType::data), 3 * rs);
        img.write_at(*mirror, out);
    }
    CHECK(Editor(img, {}).label().empty());
    {
        Editor ed(img, {});
        ed.set_label("ADDED");
        ed.finish();
    }
    const Volume v(img);
    const MftRecord r = v.read_record(kVolumeRecord);
    std::vector<std::uint32_t> types;
    for (const Attribute& a : r.attributes) types.push_back(a.type);
    CHECK(std::is_sorted(types.begin(), types.end()));
    CHECK(Editor(img, {}).label() == "ADDED");
    CHECK(edit_codes(img).empty());
}

TEST_CASE("ntfs edit: serial number in both boot sectors", "[ntfs][edit]") {
    io::MemoryImage img = edit_image();
    {
        Editor ed(img, {});
        CHECK(ed.serial() == 0x0123456789ABCDEFull);
        ed.set_serial(0x1122334455667788ull);
        ed.finish();
    }
    const Volume v(img);
    CHECK(core::load_le64(v.boot_sector_bytes(), off::VolumeSerialNumber) == 0x1122334455667788ull);
    CHECK(v.backup_boot_matches() == std::optional<bool>(true));
    CHECK(volume_flags(img) == 0);
    CHECK(edit_codes(img).empty());
}

TEST_CASE("ntfs edit: attributes of the root, and its entry in its own index", "[ntfs][edit]") {
    io::MemoryImage img = edit_image();
    {
        Editor ed(img, {});
        const auto root = ed.lookup("/");
        REQUIRE(root);
        CHECK(root->is_root);
        CHECK(root->is_directory);
        const std::uint32_t before = root->attributes;
        REQUIRE((before & (file_attr::read_only | file_attr::archive)) == 0);  // mkntfs: hidden, system
        ed.set_attributes(*root, file_attr::read_only | file_attr::archive, 0);
        CHECK(ed.lookup("/")->attributes == (before | file_attr::read_only | file_attr::archive));
        CHECK_THROWS_AS(ed.set_attributes(*root, 0x100, 0), Error);
        ed.finish();
    }
    const Volume v(img);
    bool seen = false;
    for_each_index_entry(v, v.read_record(kRootRecord), [&](const IndexEntry& e, const IndexEntryLocation&) {
        if (FileReference::unpack(e.reference).record == kRootRecord) {
            seen = true;
            CHECK((e.file_name->file_attributes & (file_attr::read_only | file_attr::archive)) ==
                  (file_attr::read_only | file_attr::archive));
        }
        return true;
    });
    CHECK(seen);
    CHECK(volume_flags(img) == 0);
    CHECK(edit_codes(img).empty());
    // Clearing them again gives back the bytes of the attributes (not the update sequence numbers).
    Editor ed(img, {});
    ed.set_attributes(*ed.lookup("/"), 0, file_attr::read_only | file_attr::archive);
    ed.finish();
    CHECK((ed.lookup("/")->attributes & (file_attr::read_only | file_attr::archive)) == 0);
}

TEST_CASE("ntfs edit: $LogFile states, and the refusal before any write", "[ntfs][edit]") {
    io::MemoryImage img = edit_image();
    CHECK(logfile_state(Volume(img)) == LogFileState::empty);
    SECTION("clean: the newest restart area has no client in use") {
        put_restart_page(img, 0, 100, 0, 0);
        put_restart_page(img, 4096, 200, 0xFFFF, 0);
        CHECK(logfile_state(Volume(img)) == LogFileState::clean);
        Editor ed(img, {});
        ed.set_label("OK");
        ed.finish();
        CHECK(Editor(img, {}).label() == "OK");
    }
    SECTION("clean flag with a client in use") {
        put_restart_page(img, 0, 300, 0, 0x0002);
        put_restart_page(img, 4096, 200, 0, 0);
        CHECK(logfile_state(Volume(img)) == LogFileState::clean);
    }
    SECTION("unclean: refused, nothing written") {
        put_restart_page(img, 0, 100, 0xFFFF, 0x0002);
        put_restart_page(img, 4096, 200, 0, 0);  // the newer page decides
        CHECK(logfile_state(Volume(img)) == LogFileState::unclean);
        const std::vector<std::byte> before = img.bytes();
        Editor ed(img, {});
        CHECK_THROWS_MATCHES(ed.set_label("NO"), Error,
                             Catch::Matchers::Predicate<Error>(
                                 [](const Error& e) { return e.code() == ErrorCode::refused; }, "refused"));
        CHECK_THROWS_AS(ed.set_serial(1), Error);
        CHECK_THROWS_AS(ed.set_attributes(*ed.lookup("/"), file_attr::read_only, 0), Error);
        ed.finish();
        CHECK(img.bytes() == before);
    }
    SECTION("unknown: a first page that is neither empty nor a restart page") {
        const Volume v(img);
        const auto log = load_attribute(v, v.read_record(kLogFileRecord), AttrType::data);
        std::vector<std::byte> junk(512, std::byte{0x42});
        img.write_at(*v.device_offset(*log, 0), junk);
        CHECK(logfile_state(Volume(img)) == LogFileState::unknown);
        Editor ed(img, {});
        CHECK_THROWS_AS(ed.set_label("NO"), Error);
    }
}

TEST_CASE("ntfs repair: an unclean $LogFile found, emptied by -y with the dirty flag set",
          "[ntfs][edit][repair]") {
    io::MemoryImage img = edit_image();
    put_restart_page(img, 0, 100, 0, 0);
    put_restart_page(img, 4096, 90, 0, 0);
    CHECK(edit_codes(img) == std::set<std::string>{"ntfs.logfile.unclean"});
    check::Findings found;
    (void)check_volume(img, found);
    check::RepairOptions preen;
    CHECK(repair_volume(img, found, preen).empty());  // -p leaves it
    check::RepairOptions all;
    all.level = check::RepairLevel::all;
    const auto done = repair_volume(img, found, all);
    REQUIRE(done.size() == 1);
    CHECK(done[0].code == "ntfs.logfile.unclean");
    CHECK(logfile_state(Volume(img)) == LogFileState::empty);
    CHECK(edit_codes(img) == std::set<std::string>{"ntfs.volume.dirty"});
    // A later -p finds the volume clean but dirty: the flag is cleared.
    check::Findings again;
    (void)check_volume(img, again);
    const auto second = repair_volume(img, again, preen);
    REQUIRE(second.size() == 1);
    CHECK(second[0].code == "ntfs.volume.dirty");
    CHECK(edit_codes(img).empty());
    // A page that is neither empty nor a restart page: found, and emptied by -y too.
    const Volume v(img);
    const auto log = load_attribute(v, v.read_record(kLogFileRecord), AttrType::data);
    std::vector<std::byte> junk(512, std::byte{0x42});
    img.write_at(*v.device_offset(*log, 0), junk);
    CHECK(edit_codes(img) == std::set<std::string>{"ntfs.logfile.unknown"});
    check::Findings third;
    (void)check_volume(img, third);
    CHECK(repair_volume(img, third, all).at(0).code == "ntfs.logfile.unknown");
    CHECK(logfile_state(Volume(img)) == LogFileState::empty);
}

namespace {

/// A volume whose /many holds `files` empty files "name NNN" (an index in
/// INDX blocks, DOS names beside the long ones), written by populate; with
/// `first_bytes`, "name 000" holds that many bytes 'x' instead.
io::MemoryImage many_files_image(int files, std::uint64_t first_bytes = 0) {
    fsimg::test::TreeBuilder b(&check_source_tree);
    const auto d = b.add(0, "many", true);
    for (int i = 0; i < files; ++i) b.add(d, fmt::format("name {:03}", i), false, i == 0 ? first_bytes : 0);
    source::SourceTree t = b.done();
    const auto tmp = std::filesystem::temp_directory_path();
    const std::string empty = (tmp / ("fsimg-ntfs-edit-empty-" + std::to_string(::getpid()))).string();
    const std::string first = (tmp / ("fsimg-ntfs-edit-first-" + std::to_string(::getpid()))).string();
    { std::ofstream(empty, std::ios::binary); }
    { std::ofstream(first, std::ios::binary) << std::string(first_bytes, 'x'); }
    for (auto& n : t.nodes)
        if (!n.is_dir) n.host_path = n.name == "name 000" ? first : empty;
    const Layout L = ntfs::test::must(16u << 20, 4096);
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, ntfs::test::opts());
    const auto planned = plan_population(t, L);
    REQUIRE(std::holds_alternative<PopulatePlan>(planned));
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    write_population(img, L, t, std::get<PopulatePlan>(planned), wo);
    std::filesystem::remove(empty);
    std::filesystem::remove(first);
    return img;
}

/// fsck -y's repairs of what a check of `img` finds (times: 2023-11-14 22:13:20 UTC).
std::vector<check::Repair> repair_all(io::MemoryImage& img) {
    check::Findings found;
    (void)check_volume(img, found);
    check::RepairOptions all;
    all.level = check::RepairLevel::all;
    all.now = 1700000000;
    return repair_volume(img, found, all);
}

/// The device offset of MFT record `n` of `v` (its first byte); fails the test when it is not mapped.
std::uint64_t record_offset(const Volume& v, std::uint64_t n) {
    const auto at = v.device_offset(v.mft_data(), n * v.geometry().mft_record_bytes);
    REQUIRE(at);
    return *at;
}

/// The Win32 names /many lists, in walk order.
std::vector<std::string> many_names(const io::BlockDevice& d) {
    const Volume v(d);
    const auto dir = resolve_path(v, "/many");
    REQUIRE(dir);
    std::vector<std::string> out;
    for_each_index_entry(v, v.read_record(dir->record), [&](const IndexEntry& e, const IndexEntryLocation&) {
        if (e.file_name && e.file_name->name_space != Namespace::dos)
            out.push_back(core::utf16_to_utf8_lossy(e.file_name->name));
        return true;
    });
    return out;
}

/// A separator of /many's B+ tree: an entry with a sub-node.
std::string many_separator(const io::BlockDevice& d) {
    const Volume v(d);
    std::string name;
    for_each_index_entry(v, v.read_record(resolve_path(v, "/many")->record),
                         [&](const IndexEntry& e, const IndexEntryLocation&) {
                             if ((e.flags & 0x01) && e.file_name && e.file_name->name_space != Namespace::dos)
                                 name = core::utf16_to_utf8_lossy(e.file_name->name);
                             return name.empty();
                         });
    return name;
}

}  // namespace

TEST_CASE("ntfs edit: every file of a directory in INDX blocks removed, separators too", "[ntfs][edit]") {
    io::MemoryImage img = many_files_image(150);
    REQUIRE(edit_codes(img).empty());
    std::vector<std::string> left = many_names(img);
    REQUIRE(left.size() == 150);
    REQUIRE_FALSE(many_separator(img).empty());
    // In an order that reaches the root's separators early: every seventh first.
    std::vector<std::string> order;
    for (int k = 0; k < 7; ++k)
        for (int i = k; i < 150; i += 7) order.push_back(fmt::format("name {:03}", i));
    Editor e(img, {});
    const std::uint64_t many = e.lookup("/many")->record;
    for (const std::string& name : order) {
        const auto f = e.find(many, name);
        REQUIRE(f);
        e.remove(many, *f);
        left.erase(std::find(left.begin(), left.end(), name));
        if (left.size() % 25 == 0) {
            CHECK(many_names(img) == left);
            CHECK(edit_codes(img) == std::set<std::string>{"ntfs.volume.dirty"});
        }
    }
    e.finish();
    CHECK(many_names(img).empty());
    CHECK(edit_codes(img).empty());
    // Emptied, the index is back in $INDEX_ROOT and its blocks' clusters are free.
    const Volume v(img);
    const MftRecord dir = v.read_record(many);
    CHECK(dir.find(AttrType::index_allocation, u"$I30") == nullptr);
    CHECK(dir.find(AttrType::bitmap, u"$I30") == nullptr);
}

TEST_CASE("ntfs edit: removing a separator, cut after every write, leaves the old index or the new one",
          "[ntfs][edit]") {
    const io::MemoryImage base = many_files_image(120);
    const std::string sep = many_separator(base);
    REQUIRE_FALSE(sep.empty());
    std::vector<std::string> before = many_names(base), after = before;
    after.erase(std::find(after.begin(), after.end(), sep));
    std::uint64_t total = 0;
    {
        io::MemoryImage full = base;
        fsimg::test::CutAfter dev(full, UINT64_MAX);
        Editor e(dev, {});
        const std::uint64_t many = e.lookup("/many")->record;
        e.remove(many, *e.find(many, sep));
        e.finish();
        total = dev.writes();
        CHECK(many_names(full) == after);
        CHECK(edit_codes(full).empty());
    }
    REQUIRE(total >= 6);
    io::MemoryImage img = base;
    fsimg::test::WrittenRanges written;
    for (std::uint64_t n = 1; n < total; ++n) {
        INFO("cut after write " << n << " of " << total);
        {
            fsimg::test::CutAfter dev(img, n, &written);
            Editor e(dev, {});
            const std::uint64_t many = e.lookup("/many")->record;
            CHECK_THROWS_AS(
                [&] {
                    e.remove(many, *e.find(many, sep));
                    e.finish();
                }(),
                Error);
        }
        const std::vector<std::string> names = many_names(img);
        CHECK((names == before || names == after));
        for (const std::string& code : edit_codes(img)) {
            INFO(code);
            CHECK((code == "ntfs.volume.dirty" || code == "ntfs.bitmap.lost" || code == "ntfs.tree.orphan" ||
                   code == "ntfs.mft-bitmap.marked-free" || code == "ntfs.mftmirr.differs"));
        }
        // fsck -y settles every cut: nothing is left.
        {
            io::MemoryImage copy = img;
            check::Findings found;
            (void)check_volume(copy, found);
            check::RepairOptions ro;
            ro.level = check::RepairLevel::all;
            (void)repair_volume(copy, found, ro);
            check::Findings again;
            (void)check_volume(copy, again);
            (void)repair_volume(copy, again, ro);
            CHECK(edit_codes(copy).empty());
        }
        fsimg::test::rewind(img, base, written);
    }
}

TEST_CASE("ntfs edit: directories made in the root and in an index of INDX blocks", "[ntfs][edit]") {
    io::MemoryImage img = many_files_image(150);
    std::vector<std::string> want = many_names(img);
    {
        Editor e(img, {});
        const std::uint64_t many = e.lookup("/many")->record;
        for (int i = 0; i < 30; ++i) {
            const std::string name = fmt::format("made directory {:02}", i);
            const FileEntry made = e.make_directory(many, name, 1700000000);
            CHECK(made.is_directory);
            CHECK(made.name == name);
            want.push_back(name);
        }
        const FileEntry top = e.make_directory(kRootRecord, "top", 1700000000);
        (void)e.make_directory(top.record, "inner", 1700000000);
        CHECK_THROWS_AS(e.make_directory(many, "NAME 007", 1700000000), Error);  // exists, in another case
        CHECK_THROWS_AS(e.make_directory(many, "", 1700000000), Error);
        e.finish();
    }
    CHECK(edit_codes(img).empty());
    std::vector<std::string> have = many_names(img);
    std::sort(have.begin(), have.end());
    std::sort(want.begin(), want.end());
    CHECK(have == want);
    const Volume v(img);
    const auto inner = resolve_path(v, "/TOP/inner");
    REQUIRE(inner);
    const MftRecord r = v.read_record(inner->record);
    CHECK(r.is_directory());
    CHECK(list_directory(v, r).empty());
    CHECK(inner->name.parent.record == resolve_path(v, "/top")->record);
}

TEST_CASE("ntfs repair: an index with a damaged INDX block is rebuilt from the records' names",
          "[ntfs][edit][repair]") {
    io::MemoryImage img = many_files_image(150);
    const std::vector<std::string> names = many_names(img);
    REQUIRE(names.size() == 150);
    {
        const Volume v(img);
        const std::uint64_t many = resolve_path(v, "/many")->record;
        const auto alloc = load_attribute(v, v.read_record(many), AttrType::index_allocation, u"$I30");
        REQUIRE(alloc);
        const auto at = v.device_offset(*alloc, 0);
        REQUIRE(at);
        img.write_at(*at, std::as_bytes(std::span("INDY", 4)));  // block 0's signature
    }
    REQUIRE(edit_codes(img).count("ntfs.index.corrupt") == 1);
    Editor e(img, {});
    std::vector<std::string> left;
    CHECK(e.rebuild_indexes(&left) == 1);
    e.finish();
    CHECK(left.empty());
    CHECK(edit_codes(img).empty());
    std::vector<std::string> sorted = many_names(img);
    CHECK(sorted.size() == 150);
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == names);  // populate wrote them in order: the same 150 names
}

TEST_CASE("ntfs repair: a link count and a repeated attribute instance set right", "[ntfs][edit][repair]") {
    io::MemoryImage img = many_files_image(3);
    std::uint64_t rec = 0;
    {
        const Volume v(img);
        rec = resolve_path(v, "/many/name 001")->record;
        const std::uint64_t at = record_offset(v, rec);
        const MftRecord r = v.read_record(rec);
        REQUIRE(r.attributes.size() >= 2);
        std::array<std::byte, 2> two{};
        core::store_le16(two, 0, 5);
        img.write_at(at + 0x12, two);  // the link count (the file has one name outside DOS)
        core::store_le16(two, 0, r.attributes[0].instance);
        img.write_at(at + r.attributes[1].offset + 0x0E, two);  // the second attribute repeats the first's
    }
    REQUIRE(edit_codes(img) == std::set<std::string>{"ntfs.record.link-count", "ntfs.attr.instance"});
    Editor e(img, {});
    const Editor::HeaderRepairs done = e.repair_record_headers();
    e.finish();
    CHECK(done.link_counts == 1);
    CHECK(done.instances == 1);
    CHECK(edit_codes(img).empty());
    const Volume v(img);
    const MftRecord r = v.read_record(rec);
    CHECK(r.header.link_count == 1);
    std::set<std::uint16_t> ids;
    for (const Attribute& a : r.attributes) {
        CHECK(a.instance < r.header.next_instance);
        ids.insert(a.instance);
    }
    CHECK(ids.size() == r.attributes.size());
}

TEST_CASE("ntfs repair: orphans whose directory is gone are linked into found.000", "[ntfs][edit][repair]") {
    io::MemoryImage img = many_files_image(3);
    std::uint64_t many = 0;
    {
        const Volume v(img);
        many = resolve_path(v, "/many")->record;
        const std::uint64_t at = record_offset(v, many);
        std::array<std::byte, 2> flags{};
        img.read_at(at + 0x16, flags);
        core::store_le16(flags, 0, core::load_le16(flags, 0) & ~1u);  // not in use
        img.write_at(at + 0x16, flags);
    }
    REQUIRE(edit_codes(img).count("ntfs.tree.orphan") == 1);
    const auto done = repair_all(img);
    const auto orphan = std::find_if(done.begin(), done.end(),
                                     [](const check::Repair& r) { return r.code == "ntfs.tree.orphan"; });
    REQUIRE(orphan != done.end());
    CHECK(orphan->done == "3 records whose directory is gone linked into /found.000");
    CHECK(edit_codes(img).empty());
    const Volume v(img);
    const auto dir = resolve_path(v, "/found.000");
    REQUIRE(dir);
    CHECK(dir->record != many);
    for (int i = 0; i < 3; ++i) {
        const auto f = resolve_path(v, fmt::format("/found.000/name {:03}", i));
        REQUIRE(f);
        const MftRecord r = v.read_record(f->record);
        CHECK(r.header.link_count == 2);  // the Win32 name and its DOS name
    }
    // Nothing is left to link: a second pass writes nothing.
    Editor e(img, {});
    const Editor::Relinked again = e.relink_orphans(true, 1700000000);
    CHECK(again.back + again.found == 0);
}

TEST_CASE("ntfs repair: a directory with no $INDEX_ROOT gets one, filled from its files' names",
          "[ntfs][edit][repair]") {
    io::MemoryImage img = many_files_image(3);
    {
        const Volume v(img);
        const std::uint64_t many = resolve_path(v, "/many")->record;
        const MftRecord r = v.read_record(many);
        const auto root = std::find_if(r.attributes.begin(), r.attributes.end(), [](const Attribute& a) {
            return a.kind() == AttrType::index_root && a.name == u"$I30";
        });
        REQUIRE(root != r.attributes.end());
        const std::uint64_t at = record_offset(v, many);
        std::array<std::byte, 4> type{};
        core::store_le32(type, 0, 0x91);  // an unknown type: the record has no $INDEX_ROOT
        img.write_at(at + root->offset, type);
    }
    REQUIRE(edit_codes(img).count("ntfs.index.root-missing") == 1);
    const auto done = repair_all(img);
    REQUIRE_FALSE(done.empty());
    CHECK(done.front().code == "ntfs.index.root-missing");
    CHECK(edit_codes(img).empty());
    CHECK(many_names(img) == std::vector<std::string>{"name 000", "name 001", "name 002"});
}

TEST_CASE("ntfs repair: a file with no $FILE_NAME gets its index entries' names back, or is freed",
          "[ntfs][edit][repair]") {
    io::MemoryImage img = many_files_image(3);
    std::uint64_t kept = 0, gone = 0;
    {
        const Volume v(img);
        kept = resolve_path(v, "/many/name 000")->record;
        gone = resolve_path(v, "/many/name 001")->record;
        // Every $FILE_NAME of both turned into an unknown type: the records have no name.
        for (const std::uint64_t n : {kept, gone}) {
            const MftRecord r = v.read_record(n);
            for (const Attribute& a : r.attributes) {
                if (a.kind() != AttrType::file_name) continue;
                std::array<std::byte, 4> type{};
                core::store_le32(type, 0, 0x31);
                img.write_at(record_offset(v, n) + a.offset, type);
            }
        }
        // The entries naming "name 001" (Win32 and DOS) name another sequence number: nothing names it.
        const std::uint64_t many = resolve_path(v, "/many")->record;
        const MftRecord dir = v.read_record(many);
        const Attribute* root = dir.find(AttrType::index_root, u"$I30");
        REQUIRE(root);
        const auto alloc = load_attribute(v, dir, AttrType::index_allocation, u"$I30");
        const std::uint32_t block_bytes = decode_index_root(root->value).index_block_bytes;
        std::vector<std::uint64_t> at;
        for_each_index_entry(v, dir, [&](const IndexEntry& e, const IndexEntryLocation& where) {
            if (FileReference::unpack(e.reference).record != gone) return true;
            if (!where.block) {
                at.push_back(record_offset(v, many) + root->offset + root->value_offset + where.offset);
            } else {
                REQUIRE(alloc);
                const auto block = v.device_offset(*alloc, *where.block * block_bytes);
                REQUIRE(block);
                at.push_back(*block + where.offset);
            }
            return true;
        });
        REQUIRE(at.size() == 2);
        for (const std::uint64_t o : at) {
            REQUIRE(o % 512 < 504);  // the reference is not under a sector's update sequence number
            std::array<std::byte, 8> ref{};
            img.read_at(o, ref);
            core::store_le64(ref, 0, core::load_le64(ref, 0) + (std::uint64_t{1} << 48));
            img.write_at(o, ref);
        }
    }
    const auto codes = edit_codes(img);
    REQUIRE(codes.count("ntfs.filename.missing") == 1);
    REQUIRE(codes.count("ntfs.index.stale-entry") == 1);
    const auto done = repair_all(img);
    std::vector<std::string> said;
    for (const check::Repair& r : done)
        if (r.code == "ntfs.filename.missing") said.push_back(r.done);
    CHECK(said == std::vector<std::string>{
                      "1 record with no $FILE_NAME given back the names the index entries naming it hold",
                      "1 record with no $FILE_NAME that held nothing (no data, no cluster, no entry) marked "
                      "not in use"});
    CHECK(edit_codes(img).empty());
    const Volume v(img);
    const auto back = resolve_path(v, "/many/name 000");
    REQUIRE(back);
    CHECK(back->record == kept);
    CHECK(v.read_record(kept).header.link_count == 2);  // the Win32 name and its DOS name
    CHECK_FALSE(v.read_record(gone).in_use());
    CHECK_FALSE(resolve_path(v, "/many/name 001"));
    CHECK_FALSE(resolve_path(v, "/found.000"));
    CHECK(many_names(img) == std::vector<std::string>{"name 000", "name 002"});
    // Nothing is left: a second pass writes nothing.
    Editor e(img, {});
    const Editor::NamesRestored again = e.restore_file_names(true, 1700000000);
    CHECK(again.restored + again.found + again.freed + again.unnamed == 0);
}

/// Sets the type code of every $FILE_NAME of record `n` to `type` (on the device, fixups untouched).
void retype_file_names(io::MemoryImage& img, std::uint64_t n, std::uint32_t type) {
    const Volume v(img);
    const MftRecord r = v.read_record(n);
    for (const Attribute& a : r.attributes) {
        if (a.kind() != AttrType::file_name) continue;
        std::array<std::byte, 4> bytes{};
        core::store_le32(bytes, 0, type);
        img.write_at(record_offset(v, n) + a.offset, bytes);
    }
}

TEST_CASE("ntfs repair: attributes out of type order; names that fit once the data moves out",
          "[ntfs][edit][repair]") {
    SECTION("a $FILE_NAME turned into type 0 is left out, the name comes back from the index") {
        io::MemoryImage img = many_files_image(3);
        const std::uint64_t n = resolve_path(Volume(img), "/many/name 001")->record;
        retype_file_names(img, n, 0);
        const auto codes = edit_codes(img);
        REQUIRE(codes.count("ntfs.attr.order") == 1);
        REQUIRE(codes.count("ntfs.filename.missing") == 1);
        const auto done = repair_all(img);
        const auto order = std::find_if(done.begin(), done.end(),
                                        [](const check::Repair& r) { return r.code == "ntfs.attr.order"; });
        REQUIRE(order != done.end());
        CHECK(
            order->done ==
            "1 record rewritten with its attributes in ascending type order (2 attributes of a type no NTFS "
            "version defines left out)");
        CHECK(edit_codes(img).empty());
        const Volume v(img);
        const MftRecord r = v.read_record(n);
        std::vector<std::uint32_t> types;
        for (const Attribute& a : r.attributes) types.push_back(a.type);
        CHECK(std::is_sorted(types.begin(), types.end()));
        CHECK(resolve_path(v, "/many/name 001")->record == n);
        CHECK(r.header.link_count == 2);
    }
    SECTION("a full record's resident $DATA goes out to a cluster, then its names fit") {
        // 500 bytes resident in "name 000"; its two $FILE_NAMEs turned into type 0x31 (in
        // order: kept) take the room two new ones would need.
        io::MemoryImage img = many_files_image(3, 500);
        const std::uint64_t n = resolve_path(Volume(img), "/many/name 000")->record;
        {
            const MftRecord r = Volume(img).read_record(n);
            REQUIRE_FALSE(r.find(AttrType::data)->non_resident);
            REQUIRE(r.header.bytes_allocated - r.header.bytes_in_use < 2 * 104);
        }
        retype_file_names(img, n, 0x31);
        REQUIRE(edit_codes(img) == std::set<std::string>{"ntfs.filename.missing"});
        const auto done = repair_all(img);
        REQUIRE(done.size() >= 1);
        CHECK(done[0].done ==
              "1 record with no $FILE_NAME given back the names the index entries naming it hold");
        CHECK(edit_codes(img).empty());
        const Volume v(img);
        const auto f = resolve_path(v, "/many/name 000");
        REQUIRE(f);
        const MftRecord r = v.read_record(n);
        const Attribute* data = r.find(AttrType::data);
        REQUIRE(data);
        CHECK(data->non_resident);
        CHECK(data->data_size == 500);
        CHECK(data->allocated_size == 4096);
        const auto bytes = v.read_stream(*data, 600);
        CHECK(bytes == std::vector<std::byte>(500, std::byte{'x'}));
        CHECK(f->name.data_size == 500);  // the index entry's sizes follow the data
        CHECK(f->name.allocated_size == 4096);
        // Nothing is left: a second pass writes nothing.
        Editor e(img, {});
        const Editor::NamesRestored again = e.restore_file_names(true, 1700000000);
        CHECK(again.restored + again.found + again.freed + again.unnamed == 0);
    }
}

TEST_CASE("ntfs scramble: every name made up, the index rebuilt in order, the old blocks zeroed",
          "[ntfs][edit][scramble]") {
    io::MemoryImage img = many_files_image(150);
    const std::vector<std::string> before = many_names(img);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> old_runs;
    std::uint64_t many = 0;
    {
        const Volume v(img);
        many = resolve_path(v, "/many")->record;
        const auto ia = load_attribute(v, v.read_record(many), AttrType::index_allocation, u"$I30");
        REQUIRE(ia);
        for (const MappedRun& m : ia->runs)
            old_runs.emplace_back(static_cast<std::uint64_t>(*m.lcn), m.length);
    }
    EditOptions o;
    o.metadata_copy = true;
    Editor e(img, o);
    const Editor::Scrambled done = e.scramble_names(core::NameScrambler(42));
    e.finish();
    CHECK(done.names == 2 + 2 * 150);  // the Win32 and DOS names of "many" and of each file
    CHECK(done.indexes == 2);          // the root and /many
    CHECK(edit_codes(img).empty());    // entries sorted, unique, matching the records
    std::vector<std::string> after;
    {
        const Volume v(img);
        for_each_index_entry(v, v.read_record(many), [&](const IndexEntry& x, const IndexEntryLocation&) {
            if (x.file_name && x.file_name->name_space != Namespace::dos)
                after.push_back(core::utf16_to_utf8_lossy(x.file_name->name));
            return true;
        });
    }
    REQUIRE(after.size() == before.size());
    std::set<std::string> old_set(before.begin(), before.end());
    for (const std::string& n : after) {
        CHECK(n.size() == std::string("name 000").size());
        CHECK_FALSE(old_set.count(n));
    }
    // The clusters of the old INDX blocks that are free now hold zeros.
    const Volume v(img);
    const auto bitmap = load_attribute(v, v.read_record(6), AttrType::data);
    REQUIRE(bitmap);
    const std::uint64_t cb = v.geometry().cluster_bytes;
    for (const auto& [lcn, length] : old_runs)
        for (std::uint64_t c = lcn; c < lcn + length; ++c) {
            std::array<std::byte, 1> bit{};
            v.read_stream(*bitmap, c / 8, bit);
            if ((std::to_integer<unsigned>(bit[0]) >> (c % 8)) & 1) continue;
            std::vector<std::byte> bytes(cb);
            img.read_at(c * cb, bytes);
            CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }));
        }
}
