#!/usr/bin/env bash
# Replays the CLI walk fuzz target (tests/fuzz/cli_walk_fuzz.cpp: ls -R,
# ls -R --json, extract into a scratch directory and slack, in-process) over
# the seeds of tests/fuzz/make-cli-seeds (FAT, exFAT and NTFS trees, their
# DAGs, cross-linked FAT files) and tests/fuzz/regressions/cli-*. An internal
# error aborts the target. With -DFSIMG_SANITIZE=ON this runs under ASan/UBSan.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
replay="$(dirname "$FSIMG")/tests/fuzz/fsimg_fuzz_cli_replay"
[ -x "$replay" ] || { echo "no $replay: skipped"; exit 77; }
FSIMG="$FSIMG" "$here/../fuzz/make-cli-seeds" "$WORK/seeds" >/dev/null 2>&1 || { fail "make-cli-seeds"; finish; exit; }
inputs=("$WORK/seeds"/*/*)
[ "${#inputs[@]}" -ge 8 ] && pass || fail "only ${#inputs[@]} seeds"
for f in "$here/../fuzz/regressions"/cli-*; do [ -e "$f" ] && inputs+=("$f"); done
if out=$(timeout 600 "$replay" "${inputs[@]}" 2>&1); then pass; echo "$out" | tail -1
else fail "replay: $(echo "$out" | tail -20)"; fi
finish
