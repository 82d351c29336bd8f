#!/usr/bin/env bash
# Replays the fuzz target (tests/fuzz/fat_volume_fuzz.cpp: check, walk, read
# every file) over the seed corpus from tests/fuzz/make-seeds and the saved
# regression inputs in tests/fuzz/regressions/. With a -DFSIMG_SANITIZE=ON
# build this is the ASan/UBSan run of the fuzz target for any compiler.
# cost: 34
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
replay="$(dirname "$FSIMG")/tests/fuzz/fsimg_fuzz_fat_replay"
[ -x "$replay" ] || { echo "no $replay: skipped"; exit 77; }
command -v mkfs.fat >/dev/null && command -v mcopy >/dev/null || { echo "mkfs.fat/mtools missing: skipped"; exit 77; }
SHARED="$SHARED" "$here/../fuzz/make-seeds" "$WORK/seeds" >/dev/null 2>&1 || { fail "make-seeds"; finish; exit; }
inputs=("$WORK/seeds"/*)
for f in "$here/../fuzz/regressions"/*; do [ "$(basename "$f")" = README ] || inputs+=("$f"); done
if out=$(timeout 600 "$replay" "${inputs[@]}" 2>&1); then pass; echo "$out" | tail -1
else fail "replay: $(echo "$out" | tail -20)"; fi
finish
