#!/usr/bin/env bash
# Clean images report clean: mkfs.fat FAT12/16/32 across cluster sizes,
# populated with mtools (mcopy -s) from make-tree trees, and fsimg's own mkfs
# output. Each is also accepted by fsck.fat, so a failure is ours.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
command -v mkfs.fat >/dev/null && command -v mcopy >/dev/null || { echo "mkfs.fat/mtools missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000 MTOOLS_SKIP_CHECK=1
tree="$WORK/tree"
"$SHARED/trees/make-tree" small "$tree" --scale 0.05 >/dev/null || { fail "make-tree small"; finish; exit; }
# Long names from the "names" tree that FAT can hold (no \ / : * ? " < > |,
# control characters, leading/trailing spaces or dots, device names, or names
# that clash case-insensitively).
"$SHARED/trees/make-tree" names "$WORK/names" --scale 0.05 >/dev/null || { fail "make-tree names"; finish; exit; }
mkdir -p "$tree/names"
cp -r "$WORK/names/shortnames" "$tree/names/"
for f in "$WORK/names/names/"*; do
  b=$(basename "$f")
  case "$b" in *[\\/:*?\"\<\>\|]*|*$'\t'*|" "*|*" "|*.|CON|aux.txt|nul.c|casename.TXT) continue ;; esac
  cp -r "$f" "$tree/names/"
done
# FAT12 volumes are small: a smaller tree for them.
small="$WORK/small"
"$SHARED/trees/make-tree" small "$small" --scale 0.005 >/dev/null || { fail "make-tree small 0.005"; finish; exit; }
cp -r "$tree/names" "$small/"
clean() {  # clean NAME IMAGE: fsimg fsck must exit 0 with no error finding
  local out rc
  out=$("$FSIMG" fsck -n "$2" 2>&1); rc=$?
  if [ $rc = 0 ]; then pass; else fail "$1: fsck exit $rc"; echo "$out" | sed 's/^/    /' | head -20; fi
}
n=0
mkfat() {  # mkfat NAME SIZE_MIB MKFS_ARGS...
  local name=$1 size=$2; shift 2
  local src=$tree
  case "$name" in fat12*) src=$small ;; esac
  local img="$WORK/$name.img"
  rm -f "$img"; truncate -s "${size}M" "$img"
  if ! mkfs.fat -i 12345678 "$@" "$img" >/dev/null 2>&1; then fail "mkfs.fat $* ($name)"; return; fi
  if ! mcopy -s -i "$img" "$src"/* ::/ 2>"$WORK/mcopy.err"; then fail "mcopy into $name: $(head -3 "$WORK/mcopy.err")"; return; fi
  if ! fsck.fat -n "$img" >/dev/null 2>&1; then fail "$name: fsck.fat -n rejects it (test setup)"; return; fi
  n=$((n + 1))
  clean "$name" "$img"
  rm -f "$img"
}
mkfat fat12-s1 2 -F 12 -s 1
mkfat fat12-s2 4 -F 12 -s 2
mkfat fat12-s4 8 -F 12 -s 4
mkfat fat12-s8 12 -F 12 -s 8
mkfat fat16-s1 24 -F 16 -s 1
for s in 4 16; do mkfat "fat16-s$s" 64 -F 16 -s $s; done
mkfat fat16-s64 256 -F 16 -s 64
mkfat fat16-s128 600 -F 16 -s 128
for s in 1 8; do mkfat "fat32-s$s" 300 -F 32 -s $s; done
# mtools takes the type from the cluster count: FAT32 needs 65,525 clusters.
mkfat fat32-s32 1100 -F 32 -s 32
mkfat fat32-s64 2100 -F 32 -s 64
mkfat fat32-s8-4kn 300 -F 32 -S 4096 -s 1
mkfat fat12-floppy 2 -F 12 -r 224 -s 2 -n FLOPPY
mkfat fat16-onefat 32 -F 16 -f 1 -n ONEFAT
mkfat fat32-label 300 -F 32 -n "MY LABEL"
# Our own mkfs, empty and at the type limits.
for args in "-t fat12 -s 4M" "-t fat16 -s 64M" "-t fat32 -s 600M" "-t fat32 -s 4G -c 32K -L DATA" \
            "-t fat16 -s 128M --partition-table mbr" "-t fat32 -s 1G --partition-table gpt" \
            "-t fat16 -s 64M --sector-size 4096"; do
  img="$WORK/own.img"; rm -f "$img"
  if "$FSIMG" mkfs -q --volume-id 1234ABCD $args "$img" >/dev/null 2>&1; then
    n=$((n + 1)); clean "mkfs $args" "$img"
  else
    fail "fsimg mkfs $args"
  fi
done
echo "$n images"
finish
