// exfat/deleted.hpp: deleted entry sets (InUse cleared) read back whole, as
// encode_file_entry_set wrote them before deletion.
#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

#include "fsimg/exfat/deleted.hpp"
#include "fsimg/exfat/entry_set.hpp"
#include "fsimg/exfat/structs.hpp"

using namespace fsimg;

namespace {

std::vector<std::byte> set_of(std::u16string_view name, std::uint32_t cluster, std::uint64_t bytes) {
    exfat::FileEntrySetInfo f;
    f.name = name;
    f.attributes = exfat::kFileAttrArchive;
    f.secondary_flags = exfat::kSecondaryAllocationPossible | exfat::kSecondaryNoFatChain;
    f.first_cluster = cluster;
    f.valid_data_length = f.data_length = bytes;
    return exfat::encode_file_entry_set(f);
}

void unset_in_use(std::vector<std::byte>& set) {
    for (std::size_t i = 0; i < set.size(); i += exfat::kDirEntrySize) set[i] &= std::byte{0x7F};
}

}  // namespace

TEST_CASE("exfat deleted: sets with InUse clear come back whole; live and damaged ones do not",
          "[exfat][deleted]") {
    std::vector<std::byte> dir;
    auto gone = set_of(u"Photo 0001.jpg", 7, 70000);
    unset_in_use(gone);
    auto live = set_of(u"live.txt", 30, 5);
    auto broken = set_of(u"broken name.bin", 40, 100);
    unset_in_use(broken);
    broken[exfat::kDirEntrySize * 2 + 4] ^= std::byte{0x01};  // a name unit changed: the checksum fails
    for (const auto* s : {&gone, &live, &broken}) dir.insert(dir.end(), s->begin(), s->end());
    dir.resize(dir.size() + exfat::kDirEntrySize);  // end of directory
    const auto d = exfat::parse_deleted(dir);
    REQUIRE(d.size() == 1);
    CHECK(d[0].name == "Photo 0001.jpg");
    CHECK(d[0].first_cluster == 7);
    CHECK(d[0].data_length == 70000);
    CHECK(d[0].no_fat_chain());
    CHECK(d[0].index == 0);
}
