// Where the slack analyzer's tree comes from: host directories (a parallel
// walk), FAT images (the FAT reader), and listings of "SIZE<TAB>PATH" lines
// (streamed). Every source's top level goes into one root directory, as
// several mkfs --from DIR sources do (same-named top-level directories of
// different sources are charged as separate directories, not merged).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <memory>
#include <string>

#include "fsimg/slack/analyzer.hpp"

namespace fsimg::slack {

struct SourceOptions {
    AnalyzerOptions analyzer;
    unsigned threads = 0;  ///< walker threads for host directories; 0 = one per core
    /// Called now and then from a walker thread with the files seen so far
    /// (never concurrently); may be empty.
    std::function<void(std::uint64_t files)> progress;
};

/// One pass over any number of sources into one Tally.
class Analysis {
public:
    explicit Analysis(SourceOptions options);
    ~Analysis();
    Analysis(const Analysis&) = delete;
    Analysis& operator=(const Analysis&) = delete;

    /// Walks a host directory: directory fan-out in a work queue served by
    /// `threads` workers, openat/fstatat relative to the parent's descriptor,
    /// names sorted per directory (byte order), symlinks never followed
    /// (O_NOFOLLOW). Open descriptors and memory are proportional to the
    /// directories in flight (the queue is LIFO: depth x threads). A
    /// directory that cannot be listed is counted in Tally::unreadable and the
    /// walk goes on. Throws Error(usage) when `dir` does not exist or is not
    /// a directory.
    void add_directory(const std::filesystem::path& dir);

    /// Reads the tree inside a FAT12/16/32 image (IMAGE or IMAGE@N, gzip
    /// allowed) with fat::Volume; long names when present. An exFAT image
    /// ("EXFAT   " at byte 3) goes to add_exfat_image, an NTFS one
    /// ("NTFS    ") to add_ntfs_image. Throws Error(usage) naming the image
    /// when it cannot be opened or is none of them; directories that cannot
    /// be read (broken chains, loops) are counted in Tally::unreadable.
    void add_fat_image(const std::string& spec);
    /// The tree inside an exFAT image, read with exfat::Volume: entry sets
    /// whose SetChecksum does not match are left out (as ls leaves them out)
    /// and counted in Tally::unreadable, as are directories that cannot be
    /// read. Throws Error(usage) when the image is not a readable exFAT volume.
    void add_exfat_image(const std::string& spec);
    /// The tree inside an NTFS image, read with ntfs::Volume and
    /// ntfs/directory.hpp as fsimg ls sees it: every name but DOS-only ones
    /// and the system files (records 0..15); a hard-linked file is charged
    /// under each name (first_link for the first one met), symbolic links and
    /// junctions are not charged (mkfs --from skips them by default),
    /// alternate data streams are not charged (the model has none); sizes
    /// are the unnamed $DATA's. Damaged directories and entries are counted
    /// in Tally::unreadable. Throws Error(usage) when the image is not a
    /// readable NTFS volume.
    void add_ntfs_image(const std::string& spec);

    /// Streams a listing: one "SIZE<TAB>PATH" line per file (find DIR -type f
    /// -printf '%s\t%P\n'); PATH relative, '/'-separated, a leading "./" or
    /// "/" ignored; a PATH ending in '/' names a directory (for empty ones).
    /// Directories are implied by the paths. Memory is proportional to the
    /// open directories: the lines of one directory must not be separated by
    /// lines outside it (find's order and sorted order both keep them
    /// together). Throws Error(usage) "NAME:LINE: ..." on a malformed line
    /// (no tab, a size that is not a decimal number or does not fit 64 bits,
    /// an empty path or component, "." or "..", a directory reopened after
    /// it was left, a file listed where a directory is).
    void add_list(std::istream& in, const std::string& name);

    /// Charges the root directory and returns the totals. Call once.
    Tally finish();

    struct Impl;  ///< internal (src/slack/sources_internal.hpp)

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace fsimg::slack
