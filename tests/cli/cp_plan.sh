#!/usr/bin/env bash
# fsimg cp plans what the whole copy allocates before its first write
# (issue 40): data, new directories, the growth of existing ones, for every
# SRC together. On FAT32, FAT16 and exFAT, a tree (nested directories, long
# and short names, files of several sizes) copied into an existing directory
# fits a volume left with exactly the clusters it takes (the copy succeeds,
# no cluster left, fsck clean), and with one cluster fewer is refused with
# "nothing was copied" and the image byte-identical; before, cp -r wrote the
# files that fitted and then failed, leaving half a tree. Files that would
# overflow a FAT12 root are refused before the first is written. mkdir -p
# plans every missing level the same way.
# cost: 14
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
export SOURCE_DATE_EPOCH=1700000000
summary() { "$FSIMG" fsck --json "$1" | python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]; print(s[sys.argv[1]])' "$2"; }
mkdir -p tree/photos/2024 tree/docs
for i in $(seq 1 40); do head -c $((i * 700)) /dev/urandom > "tree/photos/2024/Holiday picture number $i.jpg"; done
for i in $(seq 1 12); do printf 'note %d\n' "$i" > "tree/docs/NOTE$i.TXT"; done
head -c 100000 /dev/urandom > "tree/a rather long file name for the top.bin"
printf 'x' > second.txt
for spec in "fat32 -s 64M -c 512" "fat16 -s 32M -c 2K" "exfat -s 64M -c 4K"; do
  set -- $spec; t=$1
  "$FSIMG" mkfs -q -t $spec --volume-id 1234ABCD base-$t.img || fail "mkfs $spec"
  "$FSIMG" mkdir -q base-$t.img /DCIM && "$FSIMG" cp -q base-$t.img second.txt /DCIM/ || fail "$t: base"
  cb=$(summary base-$t.img cluster_bytes)
  free=$(summary base-$t.img free_clusters)
  # What the copy takes: a trial on a copy of the base.
  cp base-$t.img trial.img
  "$FSIMG" cp -q -r trial.img tree second.txt /DCIM/ 2> /dev/null  # second.txt exists: exit 1
  need=$((free - $(summary trial.img free_clusters)))
  [ "$need" -gt 100 ] || fail "$t: the trial took $need clusters"
  for short in 0 1; do
    # A filler leaves exactly `need - short` clusters free (its entry fits the root's first cluster).
    cp base-$t.img fill.img
    head -c $(((free - need + short) * cb)) /dev/zero > filler.bin
    "$FSIMG" cp -q fill.img filler.bin /FILLER.BIN || fail "$t: filler"
    [ "$(summary fill.img free_clusters)" = $((need - short)) ] || fail "$t: the filler left $(summary fill.img free_clusters) free, not $((need - short))"
    sum=$(cksum < fill.img)
    if [ $short = 0 ]; then
      "$FSIMG" cp -r fill.img tree second.txt /DCIM/ > out 2> err
      rc=$?
      # second.txt exists in /DCIM: reported (exit 1), the tree copied.
      [ $rc = 1 ] && grep -q 'DCIM/second.txt" exists' err && pass || fail "$t: exact fit: exit $rc: $(cat err)"
      [ "$(summary fill.img free_clusters)" = 0 ] && pass || fail "$t: exact fit left $(summary fill.img free_clusters) clusters"
      "$FSIMG" fsck -n fill.img > out 2>&1 && pass || fail "$t: exact fit: fsck: $(tail -3 out)"
      "$FSIMG" cat fill.img "/DCIM/tree/photos/2024/Holiday picture number 40.jpg" |
        cmp -s - "tree/photos/2024/Holiday picture number 40.jpg" && pass || fail "$t: exact fit: a file differs"
    else
      expect_fail 1 "no space left on the volume: $need clusters of $cb bytes are needed, $((need - 1)) are free; nothing was copied" \
        "$FSIMG" cp -r fill.img tree second.txt /DCIM/
      [ "$(cksum < fill.img)" = "$sum" ] && pass || fail "$t: a refused copy changed the image"
    fi
  done
done
# A FAT12 root (fixed entries) that cannot take every SRC: refused before the first, byte-identical.
"$FSIMG" mkfs -q -t fat12 -s 8M root.img || fail "mkfs fat12"
entries=$(python3 -c 'import struct; print(struct.unpack_from("<H", open("root.img", "rb").read(512), 17)[0])')  # BPB_RootEntCnt
mkdir -p many
for i in $(seq 1 $((entries / 2))); do : > "many/a long name number $i.txt"; done  # 3 entries each
sum=$(cksum < root.img)
expect_fail 1 "no space left in the root directory: a FAT12 root holds $entries entries, 0 are in use and the copy needs" \
  "$FSIMG" cp root.img many/* /
[ "$(cksum < root.img)" = "$sum" ] && pass || fail "fat12: a refused copy into the full root changed the image"
# mkdir -p plans every missing level: two free clusters do not make /a/b/c (three), nothing made;
# they make /a/b.
for spec in "fat32 512" "exfat 4096"; do
  set -- $spec; t=$1 cb=$2
  "$FSIMG" mkfs -q -t $t -s 64M -c $cb levels-$t.img || fail "mkfs $t"
  free=$(summary levels-$t.img free_clusters)
  head -c $(((free - 2) * cb)) /dev/zero > filler.bin
  "$FSIMG" cp -q levels-$t.img filler.bin /FILLER.BIN || fail "$t: filler"
  sum=$(cksum < levels-$t.img)
  expect_fail 1 "no space left on the volume: 3 clusters of $cb bytes are needed, 2 are free" "$FSIMG" mkdir -p levels-$t.img /a/b/c
  [ "$(cksum < levels-$t.img)" = "$sum" ] && pass || fail "$t: a refused mkdir -p changed the image"
  "$FSIMG" mkdir -p levels-$t.img /a/b 2> err && [ "$(summary levels-$t.img free_clusters)" = 0 ] && pass ||
    fail "$t: mkdir -p /a/b into two free clusters: $(cat err)"
done
finish
