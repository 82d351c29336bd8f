// ntfs::ReparseLink::posix_target: absolute targets stay absolute (issue 18).
#include <catch2/catch.hpp>

#include "fsimg/ntfs/file.hpp"

using namespace fsimg;

namespace {

std::string target(std::u16string substitute, bool relative = false) {
    ntfs::ReparseLink l;
    l.tag = ntfs::kReparseTagMountPoint;
    l.substitute_name = std::move(substitute);
    l.relative = relative;
    return l.posix_target();
}

}  // namespace

TEST_CASE("reparse targets that name no drive stay absolute") {
    CHECK(target(u"\\??\\C:\\Users\\me") == "C:/Users/me");
    // A UNC path is "//server/share" in POSIX spelling: absolute, never "UNC/server/share".
    CHECK(target(u"\\??\\UNC\\server\\share\\dir") == "//server/share/dir");
    // A volume GUID path keeps its NT prefix: absolute, never "Volume{...}/dir".
    CHECK(target(u"\\??\\Volume{0b1c2d3e-0000-0000-0000-000000000000}\\dir") ==
          "/?\?/Volume{0b1c2d3e-0000-0000-0000-000000000000}/dir");
    CHECK(target(u"..\\a\\b", true) == "../a/b");
}
