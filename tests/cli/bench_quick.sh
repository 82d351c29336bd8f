#!/usr/bin/env bash
# The benchmark harness runs (one quick repetition) so it cannot rot.
# labels: bench
# cost: 28
here=$(dirname "$0"); . "$here/../lib.sh"
[ -x "$SHARED/trees/make-tree" ] || { echo "../shared/trees/make-tree missing: skipped"; exit 77; }
python3 "$here/../bench/run" --quick --fsimg "$FSIMG" --out-md "$WORK/b.md" --out-json "$WORK/b.json"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] && grep -q "mkfs-fat32-1G" "$WORK/b.md" && pass || fail "bench --quick (exit $rc)"
finish
