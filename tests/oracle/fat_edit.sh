#!/usr/bin/env bash
# fsimg cp, rm, mkdir, mv, label and attrib change FAT12/16/32 images made by
# fsimg AND by mkfs.fat + mcopy, at 512 B, 4 KiB and 64 KiB clusters. The same
# operations run on a host mirror of the tree; then every independent reader
# (mtools, sleuthkit, 7-Zip) must read exactly the mirror (check-image
# --manifest), fsck.fat and our fsck must call the image clean, mtools must
# show the label and attributes set, and (as root) the real writers must be
# able to go on changing it (write-exercise).
# cost: 68
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
TREES=$WORK/trees
cd "$WORK"
"$SHARED/trees/make-tree" small "$TREES/small" --scale 0.05 >/dev/null 2>&1 || { fail "make-tree small"; finish; exit; }

# ops IMG MIRROR: the same sequence on the image and on the mirror.
ops() {
  local img=$1 m=$2 rc
  run() { "$FSIMG" "$@" >"$WORK/op.out" 2>"$WORK/op.err" || fail "fsimg $*: exit $?: $(head -3 "$WORK/op.err")"; }
  run mkdir -p "$img" /new/deep/dir;                 mkdir -p "$m/new/deep/dir"
  run cp -r "$img" "$TREES/small" /new;             cp -r "$TREES/small" "$m/new/"
  printf 'first version\n' > "$WORK/f1"; head -c 100000 /dev/urandom > "$WORK/f2"
  run cp "$img" "$WORK/f1" "/A file with a long name.txt"; cp "$WORK/f1" "$m/A file with a long name.txt"
  # Replacing needs -f.
  "$FSIMG" cp "$img" "$WORK/f2" "/A file with a long name.txt" 2>"$WORK/err"; rc=$?
  [ $rc = 1 ] && grep -q 'exists (cp -f replaces it)' "$WORK/err" && pass || fail "cp over a file without -f: exit $rc $(cat "$WORK/err")"
  # Names Windows folds to one (its up-case table: Greek with tonos, U+03AD -> U+0388) are one name.
  run cp "$img" "$WORK/f1" "/Ωμέγα.txt"
  "$FSIMG" cp "$img" "$WORK/f2" "/ΩΜΈΓΑ.TXT" 2>"$WORK/err"; rc=$?
  [ $rc = 1 ] && grep -q 'exists (cp -f replaces it)' "$WORK/err" && pass || fail "cp of a name Windows folds to an existing one: exit $rc $(cat "$WORK/err")"
  run rm "$img" "/ΩΜΈΓΑ.TXT"
  run cp -f "$img" "$WORK/f2" "/a file with a long name.TXT"; cp "$WORK/f2" "$m/A file with a long name.txt"
  run mv "$img" "/A file with a long name.txt" /new/deep/dir; mv "$m/A file with a long name.txt" "$m/new/deep/dir/"
  run mv "$img" /new/deep /new/Deeper;               mv "$m/new/deep" "$m/new/Deeper"
  run mv "$img" /new/Deeper /new/DEEPER;             mv "$m/new/Deeper" "$m/new/DEEPER.tmp"; mv "$m/new/DEEPER.tmp" "$m/new/DEEPER"
  # A directory grown past one cluster: 300 names of three entries each.
  mkdir -p "$WORK/many"; for i in $(seq 1 300); do printf '%s\n' "$i" > "$WORK/many/a long file name number $i.txt"; done
  run cp -r "$img" "$WORK/many" /;                   cp -r "$WORK/many" "$m/"
  run rm "$img" "/many/a long file name number 7.txt"; rm "$m/many/a long file name number 7.txt"
  local victim; victim=$(cd "$m/new/small" && ls | head -1)
  run rm -r "$img" "/new/small/$victim";            rm -r "$m/new/small/$victim"
  run label "$img" NEWLABEL
  run attrib "$img" +r +h /new/DEEPER/dir/
  run attrib "$img" +r "/new/DEEPER/dir/A file with a long name.txt"
}

# edit LABEL IMG MIRROR: the sequence, then the judges.
edit() {
  local label=$1 img=$2 m=$3
  ops "$img" "$m"
  "$SHARED/oracles/make-manifest" "$m" > "$WORK/$label.manifest" || { fail "make-manifest $label"; return; }
  check "$img" --manifest "$WORK/$label.manifest"
  "$FSIMG" fsck "$img" > "$WORK/fsck.out" 2>&1 && pass || { fail "$label: fsimg fsck"; sed 's/^/    /' "$WORK/fsck.out" | head; }
  [ "$("$FSIMG" label "$img")" = NEWLABEL ] && pass || fail "$label: label reads $("$FSIMG" label "$img")"
  mlabel -s -i "$img" :: 2>/dev/null | grep -q 'Volume label is NEWLABEL' && pass || fail "$label: mlabel -s: $(mlabel -s -i "$img" :: 2>&1)"
  mattrib -i "$img" "::/new/DEEPER/dir/A file with a long name.txt" 2>/dev/null | grep -qE '^ *A +R +::' && pass \
    || fail "$label: mattrib: $(mattrib -i "$img" "::/new/DEEPER/dir/A file with a long name.txt" 2>&1)"
  if [ "$(id -u)" = 0 ] && [ -w /dev/fuse ] && [ -x "$SHARED/oracles/write-exercise" ]; then
    local out
    out=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" --seed 3 "$img" 2>&1) && pass \
      || { fail "write-exercise $label"; echo "$out" | grep -v ': PASS' | sed 's/^/    /'; }
  fi
}

# fsimg-made images (empty, and populated from the tree).
for spec in "fat32-512:-t fat32 -s 48M -c 512" "fat16-4k:-t fat16 -s 64M -c 4K" "fat16-64k:-t fat16 -s 300M -c 64K" \
            "fat12-4k:-t fat12 -s 15M -c 4K"; do
  label=${spec%%:*}; args=${spec#*:}
  img=$WORK/$label.img; m=$WORK/$label.mirror; mkdir -p "$m"
  # shellcheck disable=SC2086
  "$FSIMG" mkfs -q $args -L OLD "$img" || { fail "mkfs $label"; continue; }
  edit "$label" "$img" "$m"
  rm -rf "$img" "$m"
done
# The tree put in by mkfs --from, then changed.
img=$WORK/populated.img; m=$WORK/populated.mirror; mkdir -p "$m/base"; cp -r "$TREES/small/." "$m/base/"
"$FSIMG" mkfs -q -t fat32 -s 300M -c 4K --from "$m" "$img" || fail "mkfs --from"
edit populated "$img" "$m"; rm -rf "$img" "$m"
# Images the reference tools made: mkfs.fat, then mcopy.
for spec in "ref-fat32-512:-F 32 -S 512 -s 1:48" "ref-fat16-4k:-F 16 -s 8:64" "ref-fat12-4k:-F 12 -s 8:15"; do
  label=${spec%%:*}; rest=${spec#*:}; args=${rest%:*}; mib=${rest##*:}
  img=$WORK/$label.img; m=$WORK/$label.mirror; mkdir -p "$m/pre"
  truncate -s "${mib}M" "$img"
  # shellcheck disable=SC2086
  mkfs.fat $args -n OLD "$img" >/dev/null || { fail "mkfs.fat $label"; continue; }
  printf 'there before\n' > "$m/pre/Existing File.txt"; head -c 30000 /dev/urandom > "$m/pre/DATA.BIN"
  mcopy -s -i "$img" "$m/pre" :: || fail "mcopy $label"
  edit "$label" "$img" "$m"
  rm -rf "$img" "$m"
done
# What cannot be changed is refused before anything is written.
"$FSIMG" mkfs -q -t fat32 -s 40M "$WORK/g.img" && gzip "$WORK/g.img"
expect_fail 2 'gzip-compressed' "$FSIMG" cp "$WORK/g.img.gz" "$WORK/f1" /
finish
