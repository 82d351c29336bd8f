// The test-only switch that proves a writer's order (docs/editing.md
// "Interrupted at any write", docs/fsck.md "Repair"):
// FSIMG_TEST_CUT_AFTER_WRITES=N ends the process with exit status 99 right
// after the Nth write reaches the image (no later write, no cleanup), as a
// crash or power cut would; FSIMG_TEST_COUNT_WRITES=1 prints how many writes
// a command made ("fsimg: test: N writes") so that a test can cut at each.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>

#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"

namespace fsimg::cli {

class CutDevice final : public io::BlockDevice {
public:
    CutDevice(io::BlockDevice& inner, std::uint64_t cut_after) : inner_(inner), cut_after_(cut_after) {}
    std::uint64_t size() const override { return inner_.size(); }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override {
        inner_.read_at(offset, out);
    }
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override {
        inner_.write_at(offset, in);
        count();
    }
    void zero_range(std::uint64_t offset, std::uint64_t length) override {
        inner_.zero_range(offset, length);
        count();
    }
    std::uint64_t writes() const noexcept { return writes_; }

    /// The number in environment variable `name`, nullopt when unset or
    /// empty; Error(usage) when it is not a number.
    static std::optional<std::uint64_t> env_number(const char* name) {
        const char* v = std::getenv(name);
        if (v == nullptr || *v == '\0') return std::nullopt;
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v, &end, 10);
        if (*end != '\0') throw Error(ErrorCode::usage, fmt::format("{}={} is not a number", name, v));
        return n;
    }
    /// A CutDevice over `inner` when either test variable is set, else null.
    static std::unique_ptr<CutDevice> from_environment(io::BlockDevice& inner) {
        const std::uint64_t cut_after = env_number("FSIMG_TEST_CUT_AFTER_WRITES").value_or(0);
        if (cut_after == 0 && !env_number("FSIMG_TEST_COUNT_WRITES")) return nullptr;
        return std::make_unique<CutDevice>(inner, cut_after);
    }
    /// Prints "fsimg: test: N writes" when FSIMG_TEST_COUNT_WRITES is set.
    static void report(const CutDevice* cut) {
        if (env_number("FSIMG_TEST_COUNT_WRITES"))
            fmt::print(stderr, "fsimg: test: {} writes\n", cut ? cut->writes() : 0);
    }

private:
    void count() {
        if (++writes_ == cut_after_) ::_exit(99);
    }
    io::BlockDevice& inner_;
    std::uint64_t cut_after_;
    std::uint64_t writes_ = 0;
};

}  // namespace fsimg::cli
