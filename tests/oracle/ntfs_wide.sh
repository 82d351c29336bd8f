#!/usr/bin/env bash
# labels: slow
# NTFS directories far past one MFT record's reach: 100,000 files in one
# directory (its $I30 index grows to thousands of INDX blocks, its $BITMAP
# non-resident, $MFT to ~100,000 records), a directory whose long name and
# DOS name leave its record no room for the index (kept in an extension
# record named by an $ATTRIBUTE_LIST), both built by mkfs -s auto. Checked:
# our fsck clean, slack --verify (prediction == populate), the reference
# checkers (ntfsfix, ntfsresize, ntfsls, sleuthkit), ntfs-3g lists every name
# and deletes and renames in both directories, and write-exercise.
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
T=$WORK/wide
long="$(printf 'deep name %.0s' $(seq 1 22))end"  # 223 units: Win32, with a DOS name
mkdir -p "$T/many" "$T/$long"
( cd "$T/many" && seq -f 'f%06g' 0 99999 | xargs touch ) || fail "touch"
for i in $(seq 1 400); do : > "$T/$long/Entry number $i.txt"; done
[ "$(ls "$T/many" | wc -l)" = 100000 ] && pass || fail "tree: $(ls "$T/many" | wc -l) files"

img=$WORK/wide.img
if out=$("$FSIMG" mkfs -q -t ntfs --from "$T" "$img" 2>&1); then pass; else fail "mkfs: $out"; finish; exit; fi
out=$("$FSIMG" fsck "$img" 2>&1) && pass || fail "fsck: $out"
out=$("$FSIMG" slack -t ntfs -c 4K --verify "$T" 2>&1) && pass || fail "slack --verify: $out"
check "$img" -j 2 --quick --timeout 900

mkdir -p "$WORK/mnt"
if ntfs-3g "$img" "$WORK/mnt" 2>"$WORK/err"; then
  m=$WORK/mnt
  [ "$(ls "$m/many" | wc -l)" = 100000 ] && pass || fail "ntfs-3g lists $(ls "$m/many" | wc -l) names in many"
  [ "$(ls "$m/$long" | wc -l)" = 400 ] && pass || fail "ntfs-3g lists $(ls "$m/$long" | wc -l) names in $long"
  rm "$m/many/f000000" "$m/many/f050000" "$m/$long/Entry number 7.txt" && mv "$m/many/f099999" "$m/many/last" \
    && mv "$m/$long/Entry number 8.txt" "$m/$long/eight" && rm -r "$m/$long" && pass || fail "ntfs-3g rm/mv"
  fusermount -u "$m" || umount -l "$m"
  out=$("$FSIMG" fsck "$img" 2>&1) && pass || fail "fsck after ntfs-3g: $out"
else
  fail "ntfs-3g mount: $(cat "$WORK/err")"
fi
"$FSIMG" mkfs -q -t ntfs --from "$T" "$WORK/wide2.img" --force && exercise "$WORK/wide2.img" wide --no-fill --timeout 1800
finish
