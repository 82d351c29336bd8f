// NTFS files: reparse-point link decoding, streams read through
// read_data (resident, non-resident and compressed), and refusals of
// compression forms NTFS does not write.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "fsimg/core/bytes.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/directory.hpp"
#include "fsimg/ntfs/file.hpp"
#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/populate.hpp"
#include "fsimg/ntfs/volume.hpp"
#include "lznt1_compress.hpp"
#include "ntfs_fixture.hpp"
#include "tree_builder.hpp"

using namespace fsimg;
using namespace fsimg::ntfs;
namespace fs = std::filesystem;

namespace {

/// A reparse value: tag, data length, reserved, then the body.
std::vector<std::byte> reparse(std::uint32_t tag, std::u16string_view sub, std::u16string_view print,
                               std::optional<std::uint32_t> flags) {
    const std::size_t hdr = flags ? 12 : 8;
    std::vector<std::byte> v(8 + hdr + 2 * (sub.size() + print.size()));
    core::store_le32(v, 0, tag);
    core::store_le16(v, 4, static_cast<std::uint16_t>(v.size() - 8));
    core::store_le16(v, 8, 0);
    core::store_le16(v, 10, static_cast<std::uint16_t>(2 * sub.size()));
    core::store_le16(v, 12, static_cast<std::uint16_t>(2 * sub.size()));
    core::store_le16(v, 14, static_cast<std::uint16_t>(2 * print.size()));
    if (flags) core::store_le32(v, 16, *flags);
    std::size_t at = 8 + hdr;
    for (char16_t c : sub) core::store_le16(v, (at += 2) - 2, c);
    for (char16_t c : print) core::store_le16(v, (at += 2) - 2, c);
    return v;
}

}  // namespace

TEST_CASE("ntfs file: symbolic link and junction reparse data", "[ntfs][file]") {
    const auto rel =
        decode_reparse_link(reparse(kReparseTagSymlink, u"..\\dir\\a.txt", u"..\\dir\\a.txt", 1));
    REQUIRE(rel);
    CHECK(rel->relative);
    CHECK(rel->substitute_name == u"..\\dir\\a.txt");
    CHECK(rel->posix_target() == "../dir/a.txt");
    const auto abs =
        decode_reparse_link(reparse(kReparseTagSymlink, u"\\??\\C:\\Users\\x", u"C:\\Users\\x", 0));
    REQUIRE(abs);
    CHECK_FALSE(abs->relative);
    CHECK(abs->posix_target() == "C:/Users/x");
    const auto junction =
        decode_reparse_link(reparse(kReparseTagMountPoint, u"\\??\\D:\\data", u"", std::nullopt));
    REQUIRE(junction);
    CHECK(junction->tag == kReparseTagMountPoint);
    CHECK(junction->posix_target() == "D:/data");
    // Another tag is no link; a name past the buffer is FormatError.
    CHECK_FALSE(decode_reparse_link(reparse(0x80000017, u"x", u"x", 0)));
    auto bad = reparse(kReparseTagSymlink, u"abc", u"abc", 1);
    core::store_le16(bad, 10, 200);
    CHECK_THROWS_AS(decode_reparse_link(bad), FormatError);
    std::vector<std::byte> short_value(12);  // a symlink tag, but shorter than its 20-byte header
    core::store_le32(short_value, 0, kReparseTagSymlink);
    CHECK_THROWS_AS(decode_reparse_link(short_value), FormatError);
    CHECK_FALSE(reparse_tag(std::vector<std::byte>(7)));
}

TEST_CASE("ntfs file: streams read back; compressed data decompressed", "[ntfs][file]") {
    const fs::path host = fs::temp_directory_path() / ("fsimg-ntfs-file-" + std::to_string(::getpid()));
    fs::create_directories(host);
    std::string big;
    for (int i = 0; i < 300000; ++i) big += static_cast<char>('a' + i % 23);
    std::ofstream(host / "big", std::ios::binary) << big;
    std::ofstream(host / "small", std::ios::binary) << "tiny";
    fsimg::test::TreeBuilder b(&check_source_tree);
    const auto nb = b.add(0, "big.bin", false, big.size());
    const auto ns = b.add(0, "small.txt", false, 4);
    source::SourceTree t = b.done();
    t.nodes[nb].host_path = (host / "big").string();
    t.nodes[ns].host_path = (host / "small").string();
    const Layout L = fsimg::ntfs::test::must(16u << 20, 4096);
    io::MemoryImage img(L.volume_bytes());
    format_volume(img, L, fsimg::ntfs::test::opts());
    const auto planned = plan_population(t, L);
    REQUIRE(std::holds_alternative<PopulatePlan>(planned));
    source::PopulateWriteOptions wo;
    wo.creation_time = 1700000000;
    write_population(img, L, t, std::get<PopulatePlan>(planned), wo);
    fs::remove_all(host);

    const Volume v(img);
    const auto pb = resolve_path(v, "/big.bin");
    REQUIRE(pb);
    const MftRecord rb = v.read_record(pb->record);
    const auto streams = data_streams(v, rb);
    REQUIRE(streams.size() == 1);
    CHECK(streams[0].name.empty());
    CHECK(streams[0].size == big.size());
    CHECK_FALSE(streams[0].resident);
    CHECK(streams[0].allocated_size == 303104);  // 74 clusters
    std::string got;
    std::size_t chunks = 0;
    read_data(v, rb, u"", [&](std::span<const std::byte> s) {
        got.append(reinterpret_cast<const char*>(s.data()), s.size());
        ++chunks;
    });
    CHECK(got == big);
    CHECK(chunks == 1);  // below the 1 MiB chunk
    const MftRecord rs = v.read_record(resolve_path(v, "/SMALL.TXT")->record);
    std::string tiny;
    read_data(v, rs, u"", [&](std::span<const std::byte> s) {
        tiny.append(reinterpret_cast<const char*>(s.data()), s.size());
    });
    CHECK(tiny == "tiny");
    CHECK(data_streams(v, rs).at(0).resident);
    CHECK_THROWS_AS(read_data(v, rs, u"nope", [](std::span<const std::byte>) {}), Error);
    CHECK_FALSE(unreadable_reason(v, rb, *load_attribute(v, rb, AttrType::data)));
    CHECK_FALSE(interix_link_target(v, rb));

    // Mark big.bin's $DATA compressed (flag 0x0001) with compression unit 0:
    // a form NTFS never writes, refused rather than read as stored.
    const std::uint64_t R = L.mft_record_bytes;
    std::vector<std::byte> raw(R);
    v.read_stream(v.mft_data(), pb->record * R, raw);
    REQUIRE_FALSE(verify_and_remove_fixups(raw));
    const Attribute* data = rb.find(AttrType::data);
    REQUIRE(data);
    auto rewrite = [&](std::uint16_t unit) {
        std::vector<std::byte> copy = raw;
        core::store_le16(copy, data->offset + 0x0C, 0x0001);
        core::store_le16(copy, data->offset + 0x22, unit);
        REQUIRE(data->length >= 0x48);  // the compressed header (0x48 bytes) still fits
        apply_fixups(copy, core::load_le16(copy, 4), 3);
        img.write_at(*v.device_offset(v.mft_data(), pb->record * R), copy);
        return v.read_record(pb->record);
    };
    auto read_all = [&](const MftRecord& r, std::size_t* chunks_out = nullptr) {
        std::string s;
        read_data(v, r, u"", [&](std::span<const std::byte> c) {
            s.append(reinterpret_cast<const char*>(c.data()), c.size());
            if (chunks_out) ++*chunks_out;
        });
        return s;
    };
    const MftRecord again = rewrite(0);
    CHECK_THAT(unreadable_reason(v, again, *load_attribute(v, again, AttrType::data)).value_or(""),
               Catch::Contains("compressed in units of 2^0 clusters"));
    ErrorCode code = ErrorCode::io;
    try {
        read_all(again);
    } catch (const Error& e) {
        code = e.code();
    }
    CHECK(code == ErrorCode::unsupported);

    // Compression unit 4 (16 clusters): VCNs 0..63 are four fully allocated
    // units (stored as is); VCNs 64..73 are allocated and 74..79 mapped by no
    // run (sparse), so the last unit is compressed: write LZNT1 chunks of
    // its 300000 - 262144 bytes there.
    const MftRecord comp = rewrite(4);
    CHECK_FALSE(unreadable_reason(v, comp, *load_attribute(v, comp, AttrType::data)));
    const std::string tail = big.substr(4 * 65536);
    auto packed = fsimg::test::lznt1_compress(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(tail.data()), tail.size()), 64);
    REQUIRE(packed.size() < 10 * 4096 - 2);
    packed.resize(10 * 4096);  // a zero header after the last chunk
    const std::uint64_t unit4 = *v.device_offset(*load_attribute(v, comp, AttrType::data), 4 * 65536);
    img.write_at(unit4, packed);
    std::size_t units = 0;
    CHECK(read_all(comp, &units) == big);
    CHECK(units == 5);
    // A damaged chunk header: Error(corrupt) at its volume byte.
    img.write_at(unit4, std::vector<std::byte>{std::byte{0x10}, std::byte{0x20}});
    std::optional<std::uint64_t> at;
    code = ErrorCode::io;
    try {
        read_all(comp);
    } catch (const Error& e) {
        code = e.code();
        at = e.byte_offset();
    }
    CHECK(code == ErrorCode::corrupt);
    CHECK(at == unit4);
}
