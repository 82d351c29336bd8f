// Fuzz target over the command line's walk paths (issue 18): the input is an
// image file; `fsimg ls -R`, `ls -R --json`, `extract` into a scratch
// directory and `slack` run on it in-process (fsimg::cli::run_cli), as a
// user would run them. Any exit status is fine; a crash, a hang, a sanitizer
// report, an allocation beyond the limits or an "internal error" is a bug
// (libFuzzer's -timeout and -rss_limit_mb bound time and memory).
// libFuzzer (clang, -DFSIMG_FUZZ=ON): fsimg_fuzz_cli; any compiler:
// fsimg_fuzz_cli_replay FILE... (replay_main.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../../src/cli/common.hpp"

namespace {

/// A private scratch directory, made once and removed at exit.
const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        std::string t = (std::filesystem::temp_directory_path() / "fsimg-cli-fuzz-XXXXXX").string();
        if (::mkdtemp(t.data()) == nullptr) std::abort();
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(scratch(), ec);
        });
        return std::filesystem::path(t);
    }();
    return dir;
}

int run(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return fsimg::cli::run_cli(static_cast<int>(args.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool setup = [] {
        ::setenv("FSIMG_ABORT_ON_INTERNAL_ERROR", "1", 1);  // an internal error aborts
#ifdef FSIMG_FUZZ_REPLAY
        // The replay sends the commands' listings nowhere and keeps stderr
        // (warnings, sanitizer reports). Under libFuzzer, -close_fd_mask=3
        // silences both while libFuzzer and the sanitizers keep a copy of
        // stderr for their reports (redirecting stderr here would lose them).
        const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
            ::dup2(null, STDOUT_FILENO);
            ::close(null);
        }
#endif
        return true;
    }();
    (void)setup;
    const std::filesystem::path img = scratch() / "image.img";
    const std::filesystem::path out = scratch() / "out";
    {
        std::FILE* f = std::fopen(img.c_str(), "wb");
        if (f == nullptr) std::abort();
        if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
        std::fclose(f);
    }
    run({"fsimg", "ls", "-R", "-l", img.string()});
    run({"fsimg", "ls", "-R", "--json", img.string()});
    run({"fsimg", "extract", "-q", img.string(), "-C", out.string()});
    std::error_code ec;
    std::filesystem::remove_all(out, ec);
    run({"fsimg", "slack", "-q", "-t", "fat32,exfat,ntfs", "-c", "4K", img.string()});
    return 0;
}
