"""Where a sparse file holds data: the tests compare and hash images only
there (where both files have a hole both hold zeros; reading holes through
the kernel cost seconds of system time per call, issue 43)."""
import os


def data_runs(f, size):
    """The [start, end) byte ranges of open file f (size bytes) that hold data (SEEK_DATA/SEEK_HOLE)."""
    runs, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(f.fileno(), pos, os.SEEK_DATA)
        except OSError:  # ENXIO: only a hole is left
            break
        pos = os.lseek(f.fileno(), start, os.SEEK_HOLE)
        runs.append((start, pos))
    return runs
