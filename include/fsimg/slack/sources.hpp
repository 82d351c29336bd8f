// Where the slack analyzer's tree comes from: host directories (a parallel
// walk), FAT, exFAT and NTFS images (fs::View), and listings of "SIZE<TAB>PATH" lines
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
#include "fsimg/slack/report.hpp"

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

    /// Reads the tree inside a FAT12/16/32, exFAT or NTFS image (IMAGE or
    /// IMAGE@N, gzip allowed) through fs::open_view, as fsimg ls sees it:
    /// FAT long names; exFAT entry sets with a good SetChecksum; NTFS names
    /// but DOS-only ones and system files, a hard-linked file charged under
    /// each name (first_link for the first one met). Symbolic links and
    /// junctions are not charged (mkfs --from skips them by default), nor are
    /// alternate data streams (the model has none). Every problem the view
    /// reports and every directory that cannot be read (broken chains,
    /// loops, damaged indexes) is counted in Tally::unreadable. Throws
    /// Error(usage) naming the image when it cannot be opened as any of them.
    void add_image(const std::string& spec);

    /// The layout of the last image add_image() read, from its reader
    /// (fs::View::cluster_bytes, type_name): FAT32, exFAT or NTFS and the
    /// cluster size in bytes, for the image's own row (ReportOptions::
    /// current); nullopt when no image was added or for FAT12/16, which have
    /// no row: `other` then names it ("FAT16 with 4 KiB clusters").
    std::optional<CurrentLayout> image_layout(std::string& other) const;

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
