#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/io/file_image.hpp"
#include "fsimg/io/undo.hpp"

using namespace fsimg;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string templ = (fs::temp_directory_path() / "fsimg-io-test-XXXXXX").string();
        REQUIRE(::mkdtemp(templ.data()) != nullptr);
        path_ = templ;
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xFF);
    return v;
}

void write_file(const fs::path& p, const std::string& content) {
    std::ofstream out(p, std::ios::binary);
    out << content;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Names in `dir` that look like AtomicImage temporaries.
std::vector<std::string> temporaries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.find(".fsimg-") != std::string::npos) out.push_back(name);
    }
    return out;
}

bool all_zero(const std::vector<std::byte>& v) {
    return std::all_of(v.begin(), v.end(), [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

TEST_CASE("MemoryImage reads, writes and bounds", "[io][image]") {
    io::MemoryImage img(1024);
    CHECK(img.size() == 1024);
    const auto data = pattern(100, 1);
    img.write_at(900, data);
    std::vector<std::byte> back(100);
    img.read_at(900, back);
    CHECK(back == data);
    img.write_at(1024, std::span<const std::byte>{});  // empty at the end is fine

    std::vector<std::byte> buf(200);
    try {
        img.read_at(900, buf);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
        CHECK(e.byte_offset() == 900u);
        CHECK_THAT(e.what(), Catch::Contains("76 bytes missing"));
    }
    CHECK_THROWS_WITH(img.read_at(5000, buf), Catch::Contains("200 bytes missing"));
    CHECK_THROWS_AS(img.read_at(~0ull - 10, buf), Error);  // offset + size wraps
    try {
        img.write_at(1000, data);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::io);
    }

    img.zero_range(950, 50);
    img.read_at(900, back);
    CHECK(std::equal(back.begin(), back.begin() + 50, data.begin()));
    CHECK(all_zero(std::vector<std::byte>(back.begin() + 50, back.end())));
    CHECK_THROWS_AS(img.zero_range(1000, 25), Error);
}

TEST_CASE("SubRange is a bounded window", "[io][image]") {
    io::MemoryImage disk(4096);
    io::SubRange part(disk, 1024, 2048);
    CHECK(part.size() == 2048);
    CHECK(part.offset_in_parent() == 1024);
    const auto data = pattern(16, 7);
    part.write_at(0, data);
    std::vector<std::byte> back(16);
    disk.read_at(1024, back);
    CHECK(back == data);
    part.read_at(0, back);
    CHECK(back == data);

    std::vector<std::byte> big(32);
    try {
        part.read_at(2040, big);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::corrupt);
        CHECK(e.byte_offset() == 1024u + 2040u);  // absolute in the image
        CHECK_THAT(e.what(), Catch::Contains("24 bytes missing"));
    }
    CHECK_THROWS_AS(part.write_at(2040, big), Error);  // would still fit the parent
    CHECK_THROWS_AS(part.zero_range(2000, 100), Error);
    part.zero_range(0, 8);
    disk.read_at(1024, back);
    CHECK(all_zero(std::vector<std::byte>(back.begin(), back.begin() + 8)));
    CHECK(back[8] == data[8]);

    CHECK_THROWS_AS(io::SubRange(disk, 4000, 200), Error);
    CHECK_THROWS_AS(io::SubRange(disk, 5000, 0), Error);
}

TEST_CASE("FileImage opens regular files only", "[io][image]") {
    TempDir dir;
    const fs::path missing = dir.path() / "missing.img";
    try {
        io::FileImage::open(missing, false);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::io);
        CHECK_THAT(e.what(),
                   Catch::Contains(missing.string()) && Catch::Contains("No such file or directory"));
    }
    // A directory cannot be read as an image: a failure, not a safety refusal.
    try {
        io::FileImage::open(dir.path(), false);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::io);
        CHECK_THAT(e.what(), Catch::Contains(dir.path().string()));
    }
    const fs::path fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(io::FileImage::open(fifo, false), Catch::Contains("not a regular file"));
    try {
        io::FileImage::open("/dev/null", false);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::refused);
        CHECK_THAT(e.what(), Catch::Contains("/dev/null") && Catch::Contains("character device"));
    }
    auto dev = io::FileImage::open("/dev/null", false, /*allow_device=*/true);
    CHECK(dev->size() == 0);
}

TEST_CASE("FileImage reads, writes and reports truncation", "[io][image]") {
    TempDir dir;
    const fs::path p = dir.path() / "disk.img";
    write_file(p, std::string(10000, 'A'));
    {
        auto img = io::FileImage::open(p, false);
        CHECK(img->size() == 10000);
        CHECK(img->path() == p);
        std::vector<std::byte> buf(600);
        img->read_at(9400, buf);
        CHECK(buf[599] == std::byte{'A'});
        try {
            img->read_at(9500, buf);
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::corrupt);
            CHECK(e.byte_offset() == 9500u);
            CHECK_THAT(e.what(), Catch::Contains(p.string()) && Catch::Contains("100 bytes"));
        }
        const auto data = pattern(10, 3);
        try {
            img->write_at(0, data);
            FAIL("expected an Error");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::io);
            CHECK_THAT(e.what(), Catch::Contains("read-only"));
        }
    }
    {
        auto img = io::FileImage::open(p, true);
        const auto data = pattern(3000, 9);
        img->write_at(7000, data);
        CHECK_THROWS_WITH(img->write_at(7001, data), Catch::Contains("passes the end"));
        img->zero_range(7000, 4096 - 7000 % 4096 + 100);  // crosses a 4 KiB boundary
        img->sync();
        std::vector<std::byte> back(3000);
        img->read_at(7000, back);
        const std::size_t zeroed = 4096 - 7000 % 4096 + 100;
        CHECK(all_zero(std::vector<std::byte>(back.begin(), back.begin() + zeroed)));
        CHECK(std::equal(back.begin() + zeroed, back.end(), data.begin() + zeroed));
        CHECK_THROWS_AS(img->zero_range(9999, 2), Error);
    }
    CHECK(fs::file_size(p) == 10000);  // never grows
}

TEST_CASE("FileImage reads holes as zeros, around and between data, at any offset", "[io][image]") {
    TempDir dir;
    const fs::path p = dir.path() / "sparse.img";
    // 8 MiB, mostly holes: data at 1 MiB (100 KiB), at 3 MiB - 10 bytes (20 KiB, across the
    // boundary) and the last 5 bytes; everything else never written.
    constexpr std::size_t kSize = 8u << 20;
    std::vector<std::byte> expect(kSize, std::byte{0});
    {
        write_file(p, "");
        fs::resize_file(p, kSize);  // sparse: no block allocated
        auto img = io::FileImage::open(p, true);
        const auto put = [&](std::size_t at, std::size_t n, int seed) {
            const auto d = pattern(n, seed);
            img->write_at(at, d);
            std::copy(d.begin(), d.end(), expect.begin() + static_cast<std::ptrdiff_t>(at));
        };
        put(1u << 20, 100u << 10, 1);
        put((3u << 20) - 10, 20u << 10, 2);
        put(kSize - 5, 5, 3);
        img->sync();
    }
    auto img = io::FileImage::open(p, false);
    // Whole, and windows that start and end in holes, in data, and at the edges.
    const std::pair<std::size_t, std::size_t> windows[] = {{0, kSize},
                                                           {0, 1u << 20},
                                                           {(1u << 20) - 300000, 700000},
                                                           {(1u << 20) + 5000, 400000},
                                                           {(3u << 20) - 300000, 300005},
                                                           {(3u << 20) + 100, (5u << 20) - 100},
                                                           {kSize - 300000, 300000},
                                                           {12345, 262144},
                                                           {(1u << 20) + 1, 262143}};
    for (const auto& [at, n] : windows) {
        INFO(at << " + " << n);
        std::vector<std::byte> got(n, std::byte{0x5A});
        img->read_at(at, got);
        CHECK(std::equal(got.begin(), got.end(), expect.begin() + static_cast<std::ptrdiff_t>(at)));
    }
}

TEST_CASE("AtomicImage leaves the destination alone until commit", "[io][atomic]") {
    TempDir dir;
    const fs::path dest = dir.path() / "out.img";
    write_file(dest, "precious");
    {
        io::AtomicImage img(dest, 1 << 20);
        CHECK(img.temporary_path().parent_path() == dir.path());
        CHECK(img.temporary_path().filename().string().rfind(".out.img.fsimg-", 0) == 0);
        CHECK(fs::exists(img.temporary_path()));
        CHECK(img.device().size() == 1 << 20);
        img.device().write_at(0, pattern(512, 1));
        CHECK(temporaries(dir.path()).size() == 1);
    }
    CHECK(read_file(dest) == "precious");
    CHECK(temporaries(dir.path()).empty());

    // An exception between creation and commit also cleans up.
    try {
        io::AtomicImage img(dest, 4096);
        img.device().write_at(4000, pattern(200, 1));  // passes the end: throws
        FAIL("expected an Error");
    } catch (const Error&) {
    }
    CHECK(read_file(dest) == "precious");
    CHECK(temporaries(dir.path()).empty());
}

TEST_CASE("AtomicImage commit renames a sparse file into place", "[io][atomic]") {
    TempDir dir;
    const fs::path dest = dir.path() / "big.img";
    write_file(dest, "old content");
    constexpr std::uint64_t kSize = 1ull << 30;
    const auto data = pattern(4096, 5);
    {
        io::AtomicImage img(dest, kSize);
        img.device().write_at(0, data);
        img.device().write_at(kSize - 4096, data);
        img.commit();
        CHECK_FALSE(fs::exists(img.temporary_path()));
        img.commit();  // a second commit is harmless
    }
    CHECK(temporaries(dir.path()).empty());
    struct stat st {};
    REQUIRE(::stat(dest.c_str(), &st) == 0);
    CHECK(static_cast<std::uint64_t>(st.st_size) == kSize);
    CHECK(static_cast<std::uint64_t>(st.st_blocks) * 512 < (4u << 20));  // sparse: far below 1 GiB
    const mode_t mask = ::umask(0);
    ::umask(mask);
    CHECK((st.st_mode & 0777) == (0666 & ~mask));
    auto img = io::FileImage::open(dest, false);
    std::vector<std::byte> back(4096);
    img->read_at(kSize - 4096, back);
    CHECK(back == data);
    img->read_at(1 << 20, back);
    CHECK(all_zero(back));
}

TEST_CASE("AtomicImage names the folder it cannot write to", "[io][atomic]") {
    TempDir dir;
    const fs::path nowhere = dir.path() / "no" / "such" / "folder";
    try {
        io::AtomicImage img(nowhere / "x.img", 4096);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::io);
        CHECK_THAT(e.what(),
                   Catch::Contains(nowhere.string()) && Catch::Contains("No such file or directory"));
    }
    CHECK_THROWS_WITH(io::AtomicImage("/proc/x.img", 4096), Catch::Contains("\"/proc\""));
    CHECK_THROWS_AS(io::AtomicImage(dir.path(), 4096), Error);  // a directory is not an image file
    // ftruncate refused (a file size limit, RLIMIT_FSIZE, makes it fail on every filesystem: tmpfs
    // takes a 4 EiB file, ext4 does not); the temporary goes away.
    {
        ::rlimit old{};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        ::rlimit small = old;
        small.rlim_cur = 1 << 20;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        std::string what;
        try {
            io::AtomicImage(dir.path() / "huge.img", 1ull << 30);
        } catch (const Error& e) {
            what = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, old_handler);
        CHECK_THAT(what, Catch::Contains("cannot size"));
    }
    CHECK(temporaries(dir.path()).empty());

    if (::geteuid() == 0) {
        WARN("running as root: read-only folder check skipped (root ignores permissions)");
        return;
    }
    const fs::path ro = dir.path() / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    try {
        io::AtomicImage img(ro / "x.img", 4096);
        FAIL("expected an Error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::io);
        CHECK_THAT(e.what(), Catch::Contains(ro.string()) && Catch::Contains("Permission denied"));
    }
    fs::permissions(ro, fs::perms::owner_all);
}

TEST_CASE("AtomicImage temporaries are removed on SIGINT, SIGTERM and SIGHUP", "[io][atomic]") {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        TempDir dir;
        const fs::path dest = dir.path() / "sig.img";
        int pipefd[2];
        REQUIRE(::pipe(pipefd) == 0);
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::close(pipefd[0]);
            // As in the real program: default dispositions (Catch2 installs its own handlers).
            for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
            try {
                io::AtomicImage img(dest, 64 << 20);
                img.device().write_at(0, pattern(512, 2));
                const char ok = fs::exists(img.temporary_path()) ? 'y' : 'n';
                (void)!::write(pipefd[1], &ok, 1);
                ::raise(sig);
            } catch (...) {
            }
            ::_exit(3);  // only reached when the signal did not kill us
        }
        ::close(pipefd[1]);
        char created = 0;
        CHECK(::read(pipefd[0], &created, 1) == 1);
        ::close(pipefd[0]);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        INFO("signal " << sig);
        CHECK(created == 'y');
        CHECK(WIFSIGNALED(status));
        if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);  // re-raised with the default action
        CHECK(temporaries(dir.path()).empty());
        CHECK_FALSE(fs::exists(dest));
    }
}

TEST_CASE("undo file: saved before each write, put back last write first, refused on a changed image",
          "[io][undo]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("fsimg-undo-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / "u.undo";
    fs::remove(file);
    std::vector<std::byte> original(8192);
    for (std::size_t i = 0; i < original.size(); ++i) original[i] = std::byte(i * 7 + 1);
    io::MemoryImage image(original);
    io::SubRange window(image, 4096, 4096);  // a partition: records hold image offsets
    {
        io::UndoDevice undo(window, 4096, image.size(), file);
        const std::vector<std::byte> a(100, std::byte{0xAA}), b(50, std::byte{0xBB});
        undo.write_at(10, a);
        undo.write_at(60, b);  // overlaps the first write
        undo.zero_range(1000, 300);
        CHECK(undo.records() == 3);
        // An undo file is never overwritten.
        CHECK_THROWS_AS(io::UndoDevice(window, 4096, image.size(), file), Error);
    }
    CHECK(image.bytes() != original);
    {
        io::MemoryImage other(original);  // not the image it was made for: refused, nothing written
        try {
            io::undo_image(file, other);
            FAIL("expected a refusal");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::refused);
        }
        CHECK(other.bytes() == original);
    }
    const auto r = io::undo_image(file, image);
    CHECK(r.records == 3);
    CHECK(r.bytes == 450);
    CHECK_FALSE(r.cut_short);
    CHECK(image.bytes() == original);
    // A second undo: the image no longer holds what the repair wrote.
    CHECK_THROWS_AS(io::undo_image(file, image), Error);
    // A record cut short (the process ended while saving it) is skipped.
    fs::resize_file(file, fs::file_size(file) - 10);
    io::MemoryImage again(original);
    {
        io::SubRange w2(again, 4096, 4096);
        const fs::path f2 = dir / "v.undo";
        fs::remove(f2);
        io::UndoDevice undo(w2, 4096, again.size(), f2);
        const std::vector<std::byte> a(100, std::byte{0xAA});
        undo.write_at(10, a);
        undo.write_at(500, a);
        fs::resize_file(f2, fs::file_size(f2) - 1);  // as if cut inside the second record's save...
        // ...before its write reached the image.
        again.write_at(4096 + 500, std::span(original).subspan(4096 + 500, 100));
        const auto r2 = io::undo_image(f2, again);
        CHECK(r2.cut_short);
        CHECK(r2.records == 1);
        CHECK(again.bytes() == original);
    }
    fs::remove_all(dir);
}
