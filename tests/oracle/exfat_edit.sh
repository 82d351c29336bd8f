#!/usr/bin/env bash
# fsimg cp, rm, mkdir, mv, label and attrib change exFAT images made by fsimg
# AND by mkfs.exfat (files put in by exfat-fuse where it can run: root,
# /dev/fuse, a loop device), at 512 B, 4 KiB and 64 KiB clusters. The same
# operations run on a host mirror of the tree; then every independent reader
# (exfat-fuse, sleuthkit, dump.exfat...) must read exactly the mirror
# (check-image --manifest), fsck.exfat -n and our fsck must call the image
# clean, exfatlabel must show the label, and (as root) the real writer must
# be able to go on changing it (write-exercise).
# cost: 32
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
TREES=$WORK/trees
cd "$WORK"
"$SHARED/trees/make-tree" small "$TREES/small" --scale 0.05 >/dev/null 2>&1 || { fail "make-tree small"; finish; exit; }

# fuse_put IMG DIR: copies DIR's content into IMG through exfat-fuse (returns 1 when it cannot run here).
fuse_put() {
  [ "$(id -u)" = 0 ] && [ -w /dev/fuse ] || return 1
  local lo; lo=$(losetup -f --show "$1" 2>/dev/null) || return 1
  mkdir -p "$WORK/mnt"
  if ! timeout 30 mount.exfat-fuse "$lo" "$WORK/mnt" >/dev/null 2>&1; then losetup -d "$lo"; return 1; fi
  # In sorted order, so that the layout does not follow the host's directory order.
  local rc=0 f
  while IFS= read -r f; do mkdir -p "$WORK/mnt/$f" || rc=1; done < <(cd "$2" && find . -mindepth 1 -type d | LC_ALL=C sort)
  while IFS= read -r f; do cp "$2/$f" "$WORK/mnt/$f" || rc=1; done < <(cd "$2" && find . -type f | LC_ALL=C sort)
  umount "$WORK/mnt"; losetup -d "$lo"
  return $rc
}

# ops IMG MIRROR: the same sequence on the image and on the mirror.
ops() {
  local img=$1 m=$2 rc
  run() { "$FSIMG" "$@" >"$WORK/op.out" 2>"$WORK/op.err" || fail "fsimg $*: exit $?: $(head -3 "$WORK/op.err")"; }
  run mkdir -p "$img" /new/deep/dir;                 mkdir -p "$m/new/deep/dir"
  run cp -r "$img" "$TREES/small" /new;             cp -r "$TREES/small" "$m/new/"
  printf 'first version\n' > "$WORK/f1"; head -c 100000 /dev/urandom > "$WORK/f2"
  run cp "$img" "$WORK/f1" "/A file with a long name.txt"; cp "$WORK/f1" "$m/A file with a long name.txt"
  # Names are compared up-cased: another case of an existing name is that name; replacing needs -f.
  "$FSIMG" cp "$img" "$WORK/f2" "/A FILE WITH A LONG NAME.TXT" 2>"$WORK/err"; rc=$?
  [ $rc = 1 ] && grep -q 'exists (cp -f replaces it)' "$WORK/err" && pass || fail "cp over a file without -f: exit $rc $(cat "$WORK/err")"
  run cp -f "$img" "$WORK/f2" "/a file with a long name.TXT"; cp "$WORK/f2" "$m/A file with a long name.txt"
  run mv "$img" "/A file with a long name.txt" /new/deep/dir; mv "$m/A file with a long name.txt" "$m/new/deep/dir/"
  run mv "$img" /new/deep /new/Deeper;               mv "$m/new/deep" "$m/new/Deeper"
  run mv "$img" /new/Deeper /new/DEEPER;             mv "$m/new/Deeper" "$m/new/DEEPER.tmp"; mv "$m/new/DEEPER.tmp" "$m/new/DEEPER"
  # A directory grown past one cluster (several at 512 B and 4 KiB): 300 sets of four entries.
  mkdir -p "$WORK/many"; for i in $(seq 1 300); do printf '%s\n' "$i" > "$WORK/many/a long file name number $i.txt"; done
  run cp -r "$img" "$WORK/many" /;                   cp -r "$WORK/many" "$m/"
  run rm "$img" "/many/a long file name number 7.txt"; rm "$m/many/a long file name number 7.txt"
  local victim; victim=$(cd "$m/new/small" && ls | head -1)
  run rm -r "$img" "/new/small/$victim";            rm -r "$m/new/small/$victim"
  run label "$img" "New Label"
  run attrib "$img" +r +h /new/DEEPER/dir/
  run attrib "$img" +r "/new/DEEPER/dir/A file with a long name.txt"
}

# edit LABEL IMG MIRROR [exercise]: the sequence, then the judges (write-exercise when asked).
edit() {
  local label=$1 img=$2 m=$3 exercise=${4:-} out
  ops "$img" "$m"
  "$SHARED/oracles/make-manifest" "$m" > "$WORK/$label.manifest" || { fail "make-manifest $label"; return; }
  check "$img" --manifest "$WORK/$label.manifest"
  fsck.exfat -n "$img" > "$WORK/fsck.out" 2>&1 && pass || { fail "$label: fsck.exfat -n"; sed 's/^/    /' "$WORK/fsck.out" | head; }
  "$FSIMG" fsck "$img" > "$WORK/fsck.out" 2>&1 && pass || { fail "$label: fsimg fsck"; sed 's/^/    /' "$WORK/fsck.out" | head; }
  [ "$("$FSIMG" label "$img")" = "New Label" ] && pass || fail "$label: label reads $("$FSIMG" label "$img")"
  exfatlabel "$img" 2>/dev/null | grep -q '^label: New Label$' && pass || fail "$label: exfatlabel: $(exfatlabel "$img" 2>&1)"
  out=$("$FSIMG" attrib "$img" "/new/DEEPER/dir/A file with a long name.txt" /new/DEEPER/dir)
  [ "$out" = "A--R  /new/DEEPER/dir/A file with a long name.txt
--HR  /new/DEEPER/dir" ] && pass || fail "$label: attrib reads: $out"
  # The serial, as tune.exfat reads it.
  "$FSIMG" label "$img" --volume-id 1234ABCD >/dev/null || fail "$label: --volume-id"
  tune.exfat -i "$img" 2>&1 | grep -qi '0x1234abcd' && pass || fail "$label: tune.exfat -i: $(tune.exfat -i "$img" 2>&1)"
  fsck.exfat -n "$img" > "$WORK/fsck.out" 2>&1 && pass || { fail "$label: fsck.exfat -n after --volume-id"; sed 's/^/    /' "$WORK/fsck.out" | head; }
  if [ -n "$exercise" ] && [ "$(id -u)" = 0 ] && [ -w /dev/fuse ] && [ -x "$SHARED/oracles/write-exercise" ]; then
    out=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" --seed 3 "$img" 2>&1) && pass \
      || { fail "write-exercise $label"; echo "$out" | grep -v ': PASS' | sed 's/^/    /'; }
  fi
}

# fsimg-made images (empty, and populated from the tree); 4 KiB clusters are
# the populated image's and a mkfs.exfat image's.
for spec in "exfat-512:x:-s 48M -c 512" "exfat-64k::-s 300M -c 64K"; do
  IFS=: read -r label exercise args <<< "$spec"
  img=$WORK/$label.img; m=$WORK/$label.mirror; mkdir -p "$m"
  # shellcheck disable=SC2086
  "$FSIMG" mkfs -q -t exfat $args -L OLD "$img" || { fail "mkfs $label"; continue; }
  edit "$label" "$img" "$m" "$exercise"
  rm -rf "$img" "$m"
done
img=$WORK/populated.img; m=$WORK/populated.mirror; mkdir -p "$m/base"; cp -r "$TREES/small/." "$m/base/"
"$FSIMG" mkfs -q -t exfat -s 100M -c 4K --from "$m" "$img" || fail "mkfs --from"
edit populated "$img" "$m"; rm -rf "$img" "$m"
# Images the reference tools made: mkfs.exfat, then exfat-fuse (where it runs here).
for spec in "ref-exfat-512:512:48:" "ref-exfat-4k:4K:64:x"; do
  IFS=: read -r label cluster mib exercise <<< "$spec"
  img=$WORK/$label.img; m=$WORK/$label.mirror; mkdir -p "$m/pre"
  truncate -s "${mib}M" "$img"
  mkfs.exfat -c "$cluster" -L OLD "$img" >/dev/null || { fail "mkfs.exfat $label"; continue; }
  printf 'there before\n' > "$m/pre/Existing File.txt"; head -c 30000 /dev/urandom > "$m/pre/DATA.BIN"
  fuse_put "$img" "$m" || { echo "exfat-fuse cannot run here: $label starts empty"; rm -rf "$m/pre"; }
  edit "$label" "$img" "$m" "$exercise"
  rm -rf "$img" "$m"
done
# What cannot be changed is refused before anything is written.
"$FSIMG" mkfs -q -t exfat -s 40M "$WORK/g.img" && gzip "$WORK/g.img"
expect_fail 2 'gzip-compressed' "$FSIMG" cp "$WORK/g.img.gz" "$WORK/f1" /
"$FSIMG" mkfs -q -t exfat -s 40M "$WORK/n.img"
expect_fail 1 '"/DIR" exists' "$FSIMG" mkdir "$WORK/n.img" /Dir /DIR
expect_fail 1 "holds ':', which exFAT forbids" "$FSIMG" mkdir "$WORK/n.img" '/a:b'
finish
