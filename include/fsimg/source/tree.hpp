// The host directory trees mkfs --from copies into an image: reading them
// (names, sizes, times, permissions, readability), and the checks every
// filesystem makes the same way (depth, path length, case-only duplicates,
// file size), parameterised by the filesystem's name rules. FAT
// (fat/populate.hpp) and exFAT (exfat/populate.hpp) both scan with this, so
// that a tree is read, refused and ordered alike for both.
//
// Nothing here writes; every offender is collected in SourceTree::problems
// so that a refusal lists them all up front.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fsimg/core/progress.hpp"

namespace fsimg::source {

/// What to do with a symbolic link in the source tree.
enum class SymlinkPolicy : std::uint8_t {
    skip,    ///< leave it out, with a warning naming it (default)
    follow,  ///< store what it points to; dangling links and loops are problems
    error,   ///< every symbolic link is a problem
    store,   ///< keep it as a link (NTFS: a reparse point); relative targets only
};

/// Limits of the tree (not of the filesystems, which have none for depth): a
/// path deeper than kMaxTreeDepth directories, or longer than kMaxPathBytes
/// UTF-8 bytes ('/'-separated, from the image root), is refused so that the
/// path plus a mount point stays under Linux's PATH_MAX (4,096) and readers
/// such as mtools and 7-Zip can extract it.
inline constexpr std::uint32_t kMaxTreeDepth = 128;
inline constexpr std::size_t kMaxPathBytes = 3840;

/// One --from: a host directory whose content goes to `image_dir`.
struct TreeSource {
    std::filesystem::path host_dir;
    std::string image_dir = "/";  ///< "/" or "/a/b" (UTF-8); missing directories are created
    /// mkfs --overlay: a file (or stored link) of this source replaces one of
    /// the same name an earlier source gave, as a second `cp -r` over the
    /// first would; a file and a directory of one name stay a problem.
    bool overlay = false;
};

/// Why part of a tree cannot be stored: the image path ("/a/b.txt") and the
/// reason ("the name holds ':' ..."). Every offender gets its own entry.
struct TreeProblem {
    std::string path;
    std::string reason;
};

inline constexpr std::uint32_t kNoHostDir = 0xFFFFFFFF;

/// A host directory the scan listed, so that the copy re-opens its files
/// relative to it (source/file.hpp): a --from root (parent kNoHostDir,
/// name the path as given) or a directory inside one.
struct HostDirectory {
    std::uint32_t parent = kNoHostDir;  ///< index in SourceTree::host_dirs
    std::string name;                   ///< name in the parent; the path for a root
    std::string path;                   ///< the host path, for messages
    std::uint64_t dev = 0;              ///< st_dev at the scan
    std::uint64_t ino = 0;              ///< st_ino at the scan
    bool followed = false;              ///< reached through a symbolic link (--symlinks follow)
};

/// Bytes [offset, offset+length) of a source file that hold data; the bytes
/// between segments are holes and read as zeros.
struct Segment {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    bool operator==(const Segment&) const = default;
};

/// The most data segments the scan records for one file (TreeNode::
/// data_segments); past it the rest of the file counts as data.
inline constexpr std::size_t kMaxScannedSegments = 4096;

/// The data segments of open file `fd` inside [0, size), in order, found
/// with lseek(SEEK_DATA / SEEK_HOLE) (source/file.hpp says why not
/// FIEMAP); one segment [0, size) where the host filesystem cannot tell
/// holes; at most `max_segments` (the last one then runs to the end).
/// Throws Error(io) naming `path` when lseek fails otherwise.
std::vector<Segment> find_data_segments(int fd, std::uint64_t size, const std::string& path,
                                        std::size_t max_segments = SIZE_MAX);

/// The data segments (at most kMaxScannedSegments) of the regular file
/// `name` in directory `dirfd` when it has holes, or nothing when it has
/// none. `st` is its lstat/fstatat from the scan and `size` its size in
/// bytes: only a file the host stores in fewer bytes than its size
/// (st_blocks * 512 < size) is opened, with O_NOFOLLOW unless `follow`, and
/// only when fstat shows the same device, inode and size. Never throws: any
/// failure (open, lseek) leaves the file as all data, and the copy reports
/// a real read error. `path` names the file in messages.
std::optional<std::vector<Segment>> probe_holes(int dirfd, const char* name, const struct stat& st,
                                                std::uint64_t size, bool follow, const std::string& path);

/// The most a file whose reported size cannot be trusted is read to at the
/// scan (TreeNode::snapshot); a larger one is a problem of the tree.
inline constexpr std::uint64_t kMaxSnapshotBytes = 64 << 20;

/// One file or directory of the tree to store.
struct TreeNode {
    std::string name;       ///< UTF-8 (empty for the root)
    std::u16string name16;  ///< the same in UTF-16 (empty when the name is invalid)
    bool is_dir = false;
    std::uint64_t size = 0;        ///< bytes (files)
    std::string host_path;         ///< where the content is read from; empty for created directories
    std::int64_t mtime = 0;        ///< Unix seconds (UTC): modification
    std::int64_t atime = 0;        ///< Unix seconds: last access
    std::int64_t btime = 0;        ///< Unix seconds: creation (birth time, or mtime when the host has none)
    std::uint32_t btime_ns = 0;    ///< nanoseconds of btime
    std::uint32_t mtime_ns = 0;    ///< nanoseconds of mtime
    bool has_times = false;        ///< false for created directories: they get the creation time
    bool read_only = false;        ///< the source file has no write permission
    std::uint64_t host_dev = 0;    ///< files: st_dev, with host_ino the host file's identity
    std::uint64_t host_ino = 0;    ///< files: st_ino (hard links share it; NTFS stores them as links)
    std::uint32_t host_links = 1;  ///< files: st_nlink on the host (links outside the tree count too)
    /// Files: the host directory holding it (SourceTree::host_dirs), and its
    /// name there; kNoHostDir for nodes no scan made (then host_path is opened).
    std::uint32_t host_dir = kNoHostDir;
    std::string host_name;
    bool host_followed = false;  ///< reached through a symbolic link (--symlinks follow)
    std::string symlink_target;  ///< a symbolic link kept as one (SymlinkPolicy::store): its target
    /// Files: true when the scan found holes (the host allocates fewer bytes
    /// than the size, st_blocks, and SEEK_HOLE confirms it); then
    /// data_segments lists the bytes holding data at the scan (empty: all
    /// hole; at most kMaxScannedSegments). NTFS stores such files sparse
    /// (ntfs/populate.hpp); FAT and exFAT allocate every cluster.
    bool has_holes = false;
    std::vector<Segment> data_segments;
    /// Files whose reported size the host does not hold (st_size 0 with
    /// content, as procfs and some FUSE files have; any file of procfs or
    /// sysfs, whose sizes are 0 or 4096 whatever they hold): the content,
    /// read to its end at the scan (at most kMaxSnapshotBytes) and copied as
    /// read, as GNU cp and mcopy read to the end; `size` is its length.
    /// Null for other files (and for an empty file that read empty).
    std::shared_ptr<const std::vector<std::byte>> snapshot;
    std::uint32_t parent = 0;             ///< index in SourceTree::nodes
    std::vector<std::uint32_t> children;  ///< indices, sorted by the UTF-8 bytes of the names
};

struct SourceTree {
    std::vector<TreeNode> nodes;           ///< nodes[0] is the image root
    std::vector<HostDirectory> host_dirs;  ///< every host directory listed, roots first in their turn
    std::vector<TreeProblem> problems;
    std::vector<std::string> warnings;  ///< skipped symlinks and special files, device names
    /// Where names were changed (FAT --rename): (image path as the host names
    /// it, image path stored), in tree order.
    std::vector<std::pair<std::string, std::string>> renamed;
    std::uint64_t files = 0;
    std::uint64_t directories = 0;  ///< not counting the root
    std::uint64_t data_bytes = 0;

    /// "/a/b" path of node i in the image.
    std::string image_path(std::uint32_t i) const;
};

/// Reads the host trees into a new tree (sources merged into its root in
/// order). Directory listings are sorted by the UTF-8 bytes of the names
/// (never readdir order), so the result depends only on the trees' content.
/// Problems: unreadable files and directories (faccessat with the effective
/// IDs), a file and a directory of the same name from two sources, symbolic
/// links per `symlinks` (dangling or looping links when followed). Devices,
/// FIFOs and sockets are skipped with a warning. Directories deeper than
/// kMaxTreeDepth are not descended into. Hard links become separate nodes
/// with the same host_dev and host_ino: FAT and exFAT, which have no hard
/// links, store each as a copy; NTFS stores one record with a $FILE_NAME per
/// name (ntfs/populate.hpp). Name and size rules are not applied here: see
/// check_tree. Throws Error(usage) when a source is not a directory or an
/// image_dir is malformed, Error(io) when a source cannot be opened.
/// `exclude`: host paths left out of the tree with a warning wherever they
/// appear in it (matched by device and inode): the image being written,
/// when it lies inside its own --from tree.
SourceTree scan_host_trees(const std::vector<TreeSource>& sources, SymlinkPolicy symlinks,
                           const std::vector<std::filesystem::path>& exclude = {});

/// A filesystem's rules for check_tree.
struct TreeRules {
    /// Why a UTF-8 name cannot be stored (invalid UTF-8 included), or nullopt.
    std::optional<std::string> (*name_problem)(std::string_view utf8) = nullptr;
    /// The key under which two names collide in one directory.
    std::u16string (*case_key)(std::u16string_view utf16) = nullptr;
    /// Names that earn a warning (Windows device names), or nullptr.
    bool (*reserved_name)(std::u16string_view utf16) = nullptr;
    std::uint64_t max_file_bytes = UINT64_MAX;  ///< larger files are problems
    std::string_view
        file_limit;  ///< for the message: "a FAT file holds at most 4,294,967,295 bytes (4 GiB - 1)"
    std::string_view case_note;  ///< for the message: "FAT names are case-insensitive"
};

/// What `rules` refuse about one entry, every reason in this order: its name
/// (rules.name_problem), a file's size (max_file_bytes), its depth past
/// kMaxTreeDepth and its path past kMaxPathBytes. The depth and path reasons
/// are given only where the limit is first passed (once per subtree).
/// `depth` counts the entry itself (a child of the root is 1); `path_bytes`
/// is its image path's length ("/a/b" is 4), `parent_path_bytes` its
/// parent's (0 for the root). Sets *name_refused when the name is one of the
/// reasons. The per-entry part of check_tree, for callers that stream a
/// tree instead of holding it (slack's analyzer); letter-case collisions
/// need the directory and are the caller's (rules.case_key).
std::vector<std::string> entry_problems(const TreeRules& rules, std::string_view utf8_name, bool is_file,
                                        std::uint64_t size, std::uint32_t depth, std::size_t path_bytes,
                                        std::size_t parent_path_bytes, bool* name_refused = nullptr);

/// Applies `rules` to every node: names (filling name16 for valid ones,
/// clearing it for invalid ones), file sizes, depth past kMaxTreeDepth and
/// paths past kMaxPathBytes (once per subtree), names that collide under
/// case_key in one directory (the later one in UTF-8 byte order is the
/// offender). Appends problems and warnings; does not sort them.
void check_tree(SourceTree& tree, const TreeRules& rules);

/// How the files of a tree are read (source/file.hpp).
struct ReadOptions {
    /// Test-only (the race test): called once, after the scan and before
    /// the first source file is opened. Empty in normal use.
    std::function<void()> before_first_open;
    /// A regular file that reports 0 bytes when opened (procfs, sysfs and
    /// some FUSE files: st_size 0, content on read) is read to its end when
    /// opened, up to this many bytes, and copied as read, as GNU cp and mcopy
    /// do; more than this is Error(io) naming the limit, nothing copied.
    /// 0 (mkfs --from, whose plan needs every size at the scan): the scan
    /// read such files already (TreeNode::snapshot); one that gains data
    /// after the scan is refused when its data shows up (SourceFile::finish).
    std::uint64_t unsized_limit = 0;
};

/// How populate writes what it copies (FAT, exFAT and NTFS alike).
struct PopulateWriteOptions {
    std::int64_t creation_time = 0;     ///< Unix seconds for created directories (SOURCE_DATE_EPOCH or now)
    std::optional<std::int64_t> clamp;  ///< SOURCE_DATE_EPOCH: no timestamp is later than this
    bool local_time = false;            ///< timestamps in the host's local time zone instead of UTC
    bool dot_hidden = false;            ///< names starting with '.' get the hidden attribute
    /// The volume reads as zeros outside what format wrote (a fresh sparse
    /// image): all-zero blocks of file data are left as holes.
    bool device_is_zeroed = true;
    /// Advanced by the bytes of file data copied (nullable); the caller
    /// begins and ends the phase (total: SourceTree::data_bytes).
    core::Progress* progress = nullptr;
    ReadOptions source;  ///< how the source files are opened
};

/// Calls visit(i) for every node below the root, depth first in children
/// order: a directory, then everything below it, then its next sibling (the
/// order populate allocates in). An explicit stack: depth is bounded by
/// kMaxTreeDepth for scanned trees, and synthetic trees stay safe too.
template <typename Visit>
void visit_depth_first(const SourceTree& tree, Visit visit) {
    std::vector<std::pair<std::uint32_t, std::size_t>> stack{{0, 0}};  // (directory, next child)
    while (!stack.empty()) {
        auto& [dir, pos] = stack.back();
        if (pos == tree.nodes[dir].children.size()) {
            stack.pop_back();
            continue;
        }
        const std::uint32_t c = tree.nodes[dir].children[pos++];
        visit(c);
        if (tree.nodes[c].is_dir) stack.emplace_back(c, 0);
    }
}

/// Orders problems by image path (stable), as refusals list them.
void sort_problems(SourceTree& tree);

}  // namespace fsimg::source
