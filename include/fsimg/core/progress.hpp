// Progress of long work (populating an image, checking one, walking a tree,
// extracting): the library counts, the command line draws.
//
// A Progress is told the phase and its total once (begin), then how much
// more is done (advance). It hands a snapshot (ProgressState) to its sink
// when at least `interval` has passed since the last one, and once more at
// the end of each phase, so a caller may advance() per file or per buffer
// without paying for a clock read or a redraw each time. Not thread-safe:
// one thread advances (a parallel walk serializes its own calls).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace fsimg::core {

/// What `done` and `total` count.
enum class ProgressUnit {
    bytes,  ///< shown as sizes (KiB, MiB, ...) and a byte rate
    items,  ///< files, entries, clusters: shown as counts and a count rate
};

/// One snapshot of the current phase.
struct ProgressState {
    std::string phase;  ///< what is being done: "copying files", "checking the FAT"
    ProgressUnit unit = ProgressUnit::items;
    std::uint64_t done = 0;   ///< units done so far in this phase (may exceed total when it was an estimate)
    std::uint64_t total = 0;  ///< units in the phase; 0 = not known (no bar, no ETA)
    double elapsed_seconds = 0;  ///< since begin() of this phase
    bool finished = false;       ///< the phase ended (the last snapshot of it)
};

class Progress {
public:
    using Sink = std::function<void(const ProgressState&)>;

    /// `sink` receives the snapshots; it must not throw.
    explicit Progress(Sink sink, std::chrono::milliseconds interval = std::chrono::milliseconds(100));
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    /// Starts a phase (ending the previous one if it was not ended): `total`
    /// units of `unit`, 0 when unknown. Sends a first snapshot.
    void begin(std::string phase, std::uint64_t total, ProgressUnit unit);
    /// `n` more units done. Cheap: the clock is read every 64 calls or
    /// after 1 MiB worth of units, whichever comes first.
    void advance(std::uint64_t n);
    /// Ends the phase with a final snapshot (finished = true). No-op when no
    /// phase is running.
    void end();

private:
    void send(bool finished);

    Sink sink_;
    std::chrono::steady_clock::duration interval_;
    ProgressState state_;
    bool running_ = false;
    std::chrono::steady_clock::time_point start_{};
    std::chrono::steady_clock::time_point last_sent_{};
    std::uint32_t calls_since_check_ = 0;
    std::uint64_t units_since_check_ = 0;
};

/// Calls p->advance(n) when p is not null (library code takes a nullable Progress*).
inline void advance(Progress* p, std::uint64_t n) {
    if (p) p->advance(n);
}

/// One terminal line for `s`, at most `width` columns (no newline, no
/// carriage return), e.g.
///   "copying files [#########.........] 48%  113.2 MiB / 236.0 MiB  95.1 MiB/s  ETA 0:01"
/// and, without a total, "walking the tree  120,301 items  40,100 items/s".
/// The rate is done / elapsed (omitted before 0.2 s); the ETA is
/// (total - done) / rate, shown as M:SS or H:MM:SS, omitted when unknown.
/// The bar shrinks first, then the phase text is cut, to fit `width`.
std::string render_progress_line(const ProgressState& s, unsigned width);

}  // namespace fsimg::core
