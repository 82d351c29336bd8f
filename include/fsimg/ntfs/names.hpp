// The names of one NTFS directory as Windows stores them with 8.3 names
// enabled: the namespace of every name and the DOS (8.3) name generated
// beside it. Populate (ntfs/populate.hpp) and the slack analyzer
// (ntfs/cost.hpp) both decide names here, so the index entries and
// records they count are the same. Pure.
//
// Why: ntfs-3g removes a Win32 name together with the DOS name it expects
// beside it (libntfs-3g/dir.c ntfs_delete: a name in namespace 1 starts a
// search for the record's namespace-2 name, and a record without one fails
// with ENOENT), so a Win32 name without a DOS name can be read but never
// deleted or renamed through ntfs-3g. Windows, with 8.3 names on, gives every
// Win32 name that is not itself an upper-case 8.3 name a DOS name
// [MS-KB142982; WIKI-83]. docs/ntfs-notes.md ("Names") lists the sources.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "fsimg/fat/names.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

/// One name of a directory for plan_directory_names.
struct NameRequest {
    std::u16string_view name;  ///< 1..255 UTF-16 units
    /// No Win32/DOS pair: a name of a file with several host links. ntfs-3g's
    /// ntfs_delete takes the record's first DOS and first Win32 name wherever
    /// they are, so a file with two Win32 names would lose the wrong one, and
    /// ntfs-3g refuses a DOS name on a file with several names (get_dos_name:
    /// EMLINK); every name of such a file is POSIX, as ntfs-3g's own links
    /// (ntfs_link) are.
    bool posix_only = false;
};

/// What one name becomes.
struct NamePlan {
    Namespace name_space = Namespace::win32;
    /// The DOS name stored beside a Win32 name ("PROGRA~1", "README~1.TXT"):
    /// upper case, 1-8 characters, an optional period and 1-3 characters.
    /// Empty unless name_space is win32.
    std::u16string dos;
    /// The name equals one of `reserved` but for letter case.
    bool equals_reserved = false;
};

/// Decides every name of one directory; `names` in the order the names are
/// created, which is the order DOS names are generated in (the first of
/// several names with one basis gets ~1):
///  - POSIX (0): a name equal to another of `names` or `reserved` but for
///    letter case (collate_file_names: both stay apart, case-sensitively), a
///    name Win32 cannot hold (is_win32_name), and every posix_only name;
///  - Win32&DOS (3): a valid upper-case 8.3 name (is_dos_name), which is its
///    own DOS name;
///  - Win32 (1) + a DOS name (2): every other name, an 8.3-shaped name in
///    lower or mixed case included ("readme.txt" -> README~1.TXT: a name
///    that is not upper case gets a tilde alias [Galvin 2015]), generated as
///    RtlGenerate8dot3Name does (fat::ShortNameAllocator with a tail always:
///    the basis cut to 6 + ~1 .. ~4, then 2 basis characters + the
///    4-hex-digit hash of the long name + ~1, ~2 ... [MS-KB142982; WIKI-83;
///    the hash: T. Galvin 2015, maxpat78's RtlGenerate8dot3Name notes]).
///    An untailed alias would also break ntfs-3g's case changes: renaming
///    "readme.txt" to "README.TXT" would find README.TXT taken by the file
///    itself and do nothing.
/// Every DOS name is unique in the directory: it differs from every other
/// DOS name, from the upper-case form of every 8.3-shaped name there (any
/// namespace, `reserved` included) and, through the $UpCase collation, from
/// every long name. `reserved`: names the directory already holds (the
/// root's system files). Memory and time: O(n log n) in the names.
std::vector<NamePlan> plan_directory_names(std::span<const NameRequest> names,
                                           std::span<const std::u16string_view> reserved = {});

/// plan_directory_names for names added one at a time to one directory:
/// plan({request}) is plan_directory_names({request}, held) for the names
/// held so far (the reserved ones, then each add()ed), in O(1) instead of
/// O(n log n) per name after O(n) to start, so that copying n files into a
/// directory plans their names in O(n) and not O(n^2).
class DirectoryNames {
public:
    explicit DirectoryNames(std::span<const std::u16string_view> reserved);
    /// What `request` becomes beside the names held. Changes nothing.
    NamePlan plan(const NameRequest& request) const;
    /// A name the directory now holds (a long name and, separately, its DOS name).
    void add(std::u16string_view name);
    /// How many names are held.
    std::size_t size() const noexcept { return held_; }

private:
    fat::ShortNameAllocator alloc_;            ///< the upper-case form of every 8.3-shaped name held
    std::unordered_set<std::u16string> keys_;  ///< the collation key of every name held
    std::size_t held_ = 0;
};

/// Bytes of a resident $FILE_NAME attribute for a name of `units` UTF-16
/// units: 24-byte header + r8(66 + 2 * units) (formats.md §3.7).
constexpr std::uint32_t file_name_attribute_bytes(std::size_t units) noexcept {
    return 24 + static_cast<std::uint32_t>((66 + 2 * units + 7) & ~std::size_t{7});
}

}  // namespace fsimg::ntfs
