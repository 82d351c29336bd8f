#!/usr/bin/env bash
# Replays the exFAT fuzz target (tests/fuzz/exfat_volume_fuzz.cpp: fsck, open, walk
# every directory, read every file, sum the bitmap, look up a path) over the
# seed corpus from tests/fuzz/make-exfat-seeds (fsimg and mkfs.exfat images,
# each damaged in every exFAT way corrupt-image knows) and the saved
# regression inputs tests/fuzz/regressions/exfat-*. With a
# -DFSIMG_SANITIZE=ON build this runs them under ASan/UBSan.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
replay="$(dirname "$FSIMG")/tests/fuzz/fsimg_fuzz_exfat_replay"
[ -x "$replay" ] || { echo "no $replay: skipped"; exit 77; }
SHARED="$SHARED" FSIMG="$FSIMG" "$here/../fuzz/make-exfat-seeds" "$WORK/seeds" >/dev/null 2>&1 || { fail "make-exfat-seeds"; finish; exit; }
inputs=("$WORK/seeds"/*)
[ "${#inputs[@]}" -ge 3 ] && pass || fail "only ${#inputs[@]} seeds"
for f in "$here/../fuzz/regressions"/exfat-*; do [ -e "$f" ] && inputs+=("$f"); done
if out=$(timeout 600 "$replay" "${inputs[@]}" 2>&1); then pass; echo "$out" | tail -1
else fail "replay: $(echo "$out" | tail -20)"; fi
finish
