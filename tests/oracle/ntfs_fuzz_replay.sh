#!/usr/bin/env bash
# Replays the NTFS fuzz target (tests/fuzz/ntfs_volume_fuzz.cpp: open, read
# the first records, decode every value, read every stream and index block)
# over the seed corpus from tests/fuzz/make-ntfs-seeds (fsimg, mkntfs and
# ntfs-3g-filled images, each damaged in every NTFS way corrupt-image knows)
# and the saved regression inputs tests/fuzz/regressions/ntfs-*. With a
# -DFSIMG_SANITIZE=ON build this runs them under ASan/UBSan.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
replay="$(dirname "$FSIMG")/tests/fuzz/fsimg_fuzz_ntfs_replay"
[ -x "$replay" ] || { echo "no $replay: skipped"; exit 77; }
SHARED="$SHARED" FSIMG="$FSIMG" "$here/../fuzz/make-ntfs-seeds" "$WORK/seeds" >/dev/null 2>&1 || { fail "make-ntfs-seeds"; finish; exit; }
inputs=("$WORK/seeds"/*)
[ "${#inputs[@]}" -ge 20 ] && pass || fail "only ${#inputs[@]} seeds"
for f in "$here/../fuzz/regressions"/ntfs-*; do [ -e "$f" ] && inputs+=("$f"); done
if out=$(timeout 600 "$replay" "${inputs[@]}" 2>&1); then pass; echo "$out" | tail -1
else fail "replay: $(echo "$out" | tail -20)"; fi
finish
