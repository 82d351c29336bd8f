// source/file.hpp: race-free re-opening of scanned files, data segments
// (SEEK_DATA / SEEK_HOLE), and the "changed as we read it" checks.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/io/stream_writer.hpp"
#include "fsimg/source/file.hpp"
#include "fsimg/source/tree.hpp"

namespace fs = std::filesystem;
using namespace fsimg;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string t = (fs::temp_directory_path() / "fsimg-source-XXXXXX").string();
        path = ::mkdtemp(t.data());
    }
    ~TempDir() { fs::remove_all(path); }
};

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// The node of host file `name` at the top of the scanned tree.
std::uint32_t node_named(const source::SourceTree& t, const std::string& name) {
    for (std::uint32_t i = 0; i < t.nodes.size(); ++i)
        if (t.nodes[i].name == name) return i;
    FAIL("no node " << name);
    return 0;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("segments of a sparse source file are its data, holes skipped") {
    TempDir d;
    const fs::path f = d.path / "sparse";
    const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 64 << 20) == 0);  // 64 MiB, all hole
    const char x[4096] = {'x'};
    REQUIRE(::pwrite(fd, x, sizeof x, 32 << 20) == 4096);           // data at 32 MiB
    REQUIRE(::pwrite(fd, x, sizeof x, (64 << 20) - 4096) == 4096);  // and in the last block
    ::close(fd);
    auto tree = source::scan_host_trees({{d.path, "/"}}, source::SymlinkPolicy::skip);
    source::SourceReader reader(tree);
    const source::SourceFile sf = reader.open(node_named(tree, "sparse"));
    const auto segs = sf.segments();
    // The host filesystem's allocation unit bounds the segments; tmpfs and ext4 both give 4 KiB here.
    REQUIRE(segs.size() == 2);
    CHECK(segs[0].offset <= (32u << 20));
    CHECK(segs[0].offset + segs[0].length >= (32u << 20) + 4096);
    CHECK(segs[0].length <= (1u << 20));
    CHECK(segs[1].offset + segs[1].length == (64u << 20));

    // Copied into a zeroed device, only the data is written; the holes stay zeros.
    io::MemoryImage dev(64 << 20);
    io::StreamWriter w(dev, true);
    source::copy_file(sf, 64 << 20, w, nullptr);
    w.flush();
    std::array<std::byte, 1> b{};
    dev.read_at(32 << 20, b);
    CHECK(b[0] == std::byte{'x'});
    dev.read_at(16 << 20, b);
    CHECK(b[0] == std::byte{0});
}

TEST_CASE("a file swapped after the scan is refused, naming what changed") {
    TempDir d;
    write_file(d.path / "a", "0123456789");
    write_file(d.path / "secret", "TOPSECRET");
    fs::create_directory(d.path / "sub");
    write_file(d.path / "sub" / "b", "bbb");
    auto tree = source::scan_host_trees({{d.path, "/"}}, source::SymlinkPolicy::skip);
    const std::uint32_t a = node_named(tree, "a"), b = node_named(tree, "b");

    SECTION("unchanged: read back exactly") {
        source::SourceReader reader(tree);
        const auto bytes = reader.open(a).read_all();
        CHECK(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()) == "0123456789");
        CHECK(reader.open(b).size() == 3);
    }
    SECTION("a symbolic link") {
        fs::remove(d.path / "a");
        fs::create_symlink(d.path / "secret", d.path / "a");
        source::SourceReader reader(tree);
        CHECK_THAT(message_of([&] { reader.open(a); }), Catch::Contains("was replaced by a symbolic link"));
    }
    SECTION("a FIFO: refused at once, never waited on") {
        fs::remove(d.path / "a");
        REQUIRE(::mkfifo((d.path / "a").c_str(), 0644) == 0);
        source::SourceReader reader(tree);
        CHECK_THAT(message_of([&] { reader.open(a); }), Catch::Contains("is now a FIFO"));
    }
    SECTION("a bigger file") {
        write_file(d.path / "a", "0123456789ABC");
        source::SourceReader reader(tree);
        CHECK_THAT(message_of([&] { reader.open(a); }),
                   Catch::Contains("it is 13 bytes now, 10 when scanned"));
    }
    SECTION("another file of the same size") {
        write_file(d.path / "a2", "9876543210");
        fs::rename(d.path / "a2", d.path / "a");
        source::SourceReader reader(tree);
        CHECK_THAT(message_of([&] { reader.open(a); }), Catch::Contains("was replaced by another file"));
    }
    SECTION("a directory swapped for a link to another") {
        fs::rename(d.path / "sub", d.path / "sub.old");
        fs::create_directory_symlink(d.path / "sub.old", d.path / "sub");
        source::SourceReader reader(tree);
        CHECK_THAT(message_of([&] { reader.open(b); }),
                   Catch::Contains("sub was replaced by a symbolic link"));
    }
    SECTION("grown while it was read") {
        source::SourceReader reader(tree);
        const source::SourceFile f = reader.open(a);
        std::array<std::byte, 10> buf{};
        f.read_at(0, buf);
        std::ofstream(d.path / "a", std::ios::app) << "MORE";
        CHECK_THAT(message_of([&] { f.finish(); }), Catch::Contains("it grew past the 10 bytes scanned"));
    }
    SECTION("shrunk while it was read") {
        source::SourceReader reader(tree);
        const source::SourceFile f = reader.open(a);
        REQUIRE(::truncate((d.path / "a").c_str(), 4) == 0);
        std::array<std::byte, 10> buf{};
        CHECK_THAT(message_of([&] { f.read_at(0, buf); }), Catch::Contains("it shrank to 4 bytes"));
    }
    SECTION("the test hook runs once, before the first open") {
        int calls = 0;
        source::ReadOptions o;
        o.before_first_open = [&] { ++calls; };
        source::SourceReader reader(tree, o);
        reader.open(a);
        reader.open(b);
        CHECK(calls == 1);
    }
}

TEST_CASE("the image being written is left out of its own --from tree") {
    TempDir d;
    write_file(d.path / "keep.txt", "k");
    write_file(d.path / "out.img", "old image");
    auto tree = source::scan_host_trees({{d.path, "/"}}, source::SymlinkPolicy::skip, {d.path / "out.img"});
    bool found = false;
    for (const auto& n : tree.nodes) found = found || n.name == "out.img";
    CHECK_FALSE(found);
    REQUIRE(tree.warnings.size() == 1);
    CHECK_THAT(tree.warnings[0], Catch::Contains("it is the image being written"));
    CHECK(tree.files == 1);
}

TEST_CASE("a file that reports 0 bytes is read to its end when asked (procfs), else refused at finish") {
    // /proc/version: st_size 0, a stable line of text on read.
    std::string expected;
    {
        std::ifstream in("/proc/version", std::ios::binary);
        if (!in) return;  // no procfs here: nothing to test
        expected.assign(std::istreambuf_iterator<char>(in), {});
    }
    REQUIRE(fs::file_size("/proc/version") == 0);
    REQUIRE(!expected.empty());
    // The tree of one file, as fsimg cp makes it (a node opened by its host path).
    source::SourceTree tree;
    tree.nodes.resize(2);
    tree.nodes[0].is_dir = true;
    tree.nodes[0].children = {1};
    tree.nodes[1].name = "version";
    tree.nodes[1].host_path = "/proc/version";
    tree.nodes[1].size = 0;  // what stat says
    const std::uint32_t node = 1;
    {
        source::ReadOptions o;
        o.unsized_limit = 1 << 20;
        source::SourceReader reader(tree, o);
        const source::SourceFile f = reader.open(node);
        CHECK(f.size() == expected.size());
        CHECK(f.segments() == std::vector<source::Segment>{{0, expected.size()}});
        std::string got(expected.size(), '\0');
        f.read_at(0, std::as_writable_bytes(std::span(got)));
        CHECK(got == expected);
        CHECK_NOTHROW(f.finish());
    }
    {
        source::ReadOptions o;
        o.unsized_limit = 8;  // less than the line holds
        source::SourceReader reader(tree, o);
        CHECK(message_of([&] { (void)reader.open(node); })
                  .find("reports 0 bytes (a procfs, sysfs or FUSE file) but "
                        "holds more than 8 bytes") != std::string::npos);
    }
    {
        source::SourceReader reader(tree);  // mkfs --from: the size was planned at the scan
        const source::SourceFile f = reader.open(node);
        CHECK(f.size() == 0);
        CHECK(message_of([&] { f.finish(); }).find("reports 0 bytes but holds data") != std::string::npos);
    }
}
