// Shared by the NTFS unit tests: a layout that must exist, and the format
// options every test volume uses.
#pragma once

#include <catch2/catch.hpp>

#include <variant>

#include "fsimg/ntfs/format.hpp"
#include "fsimg/ntfs/layout.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs::test {

/// plan_layout for these values; the test fails when it refuses.
inline Layout must(std::uint64_t bytes, std::uint32_t cluster = 4096, std::uint32_t bps = 512,
                   std::optional<std::uint32_t> record = std::nullopt) {
    LayoutRequest r;
    r.volume_bytes = bytes;
    r.cluster_bytes = cluster;
    r.bytes_per_sector = bps;
    r.mft_record_bytes = record;
    auto v = plan_layout(r, secure_sds_bytes());
    REQUIRE(std::holds_alternative<Layout>(v));
    return std::get<Layout>(v);
}

/// Serial 0123456789ABCDEF, label "TEST", every time 2023-11-14 22:13:20 UTC.
inline FormatOptions opts() {
    FormatOptions o;
    o.volume_serial_number = 0x0123456789ABCDEFull;
    o.label = u"TEST";
    o.creation_filetime = filetime_from_unix(1700000000);
    return o;
}

}  // namespace fsimg::ntfs::test
