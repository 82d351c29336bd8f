// Helpers the editors' unit tests share (fat_edit_test.cpp,
// exfat_edit_test.cpp): host files to copy from, a SourceFile for one,
// deterministic content, and a device cut after N writes.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fsimg/core/error.hpp"
#include "fsimg/io/block_device.hpp"
#include "fsimg/source/file.hpp"

namespace fsimg::test {

/// Host files to copy from, in a private temporary folder.
struct HostFiles {
    std::filesystem::path dir;
    HostFiles() {
        char tmpl[] = "/tmp/fsimg-edit-test.XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        dir = tmpl;
    }
    ~HostFiles() { std::filesystem::remove_all(dir); }
    std::string make(const std::string& name, const std::string& content) {
        const std::filesystem::path p = dir / name;
        std::ofstream(p, std::ios::binary) << content;
        return p.string();
    }
};

/// A SourceFile for a host file (the tree of one node, as fsimg cp makes it).
struct Source {
    source::SourceTree tree;
    std::unique_ptr<source::SourceReader> reader;
    explicit Source(const std::string& path) {
        tree.nodes.resize(2);
        tree.nodes[0].is_dir = true;
        tree.nodes[0].children = {1};
        tree.nodes[1].name = std::filesystem::path(path).filename().string();
        tree.nodes[1].host_path = path;
        tree.nodes[1].size = std::filesystem::file_size(path);
        reader = std::make_unique<source::SourceReader>(tree);
    }
    source::SourceFile open() { return reader->open(1); }
};

/// n bytes of xorshift output from `seed`.
inline std::string pattern(std::size_t n, unsigned seed) {
    std::string s(n, '\0');
    std::uint32_t x = 2463534242u + seed;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x);
    }
    return s;
}

/// The byte ranges ({offset, length}) a CutAfter passed on to its image.
using WrittenRanges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

/// A device that takes the first `limit` writes and then fails every one
/// (Error(io)): what a process cut after write N leaves behind. With
/// `written`, it records the ranges it let through, for rewind().
class CutAfter final : public io::BlockDevice {
public:
    CutAfter(io::MemoryImage& img, std::uint64_t limit, WrittenRanges* written = nullptr)
        : img_(img), limit_(limit), written_(written) {}
    std::uint64_t size() const override { return img_.size(); }
    void read_at(std::uint64_t o, std::span<std::byte> out) const override { img_.read_at(o, out); }
    void write_at(std::uint64_t o, std::span<const std::byte> in) override {
        if (writes_++ >= limit_) throw Error(ErrorCode::io, "cut");
        if (written_) written_->emplace_back(o, in.size());
        img_.write_at(o, in);
    }
    void zero_range(std::uint64_t o, std::uint64_t n) override {
        if (writes_++ >= limit_) throw Error(ErrorCode::io, "cut");
        if (written_) written_->emplace_back(o, n);
        img_.zero_range(o, n);
    }
    std::uint64_t writes() const { return writes_; }

private:
    io::MemoryImage& img_;
    std::uint64_t limit_;
    WrittenRanges* written_;
    std::uint64_t writes_ = 0;
};

/// Puts back into `img`, from `base`, every range in `written` and clears
/// it: one image serves every cut of a test instead of a fresh copy of the
/// whole image per cut (those copies were most of the cut tests' time).
inline void rewind(io::MemoryImage& img, const io::MemoryImage& base, WrittenRanges& written) {
    const std::span<const std::byte> b(base.bytes());
    for (const auto& [at, len] : written) img.write_at(at, b.subspan(at, len));
    written.clear();
}

}  // namespace fsimg::test
