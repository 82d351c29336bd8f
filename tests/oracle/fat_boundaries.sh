#!/usr/bin/env bash
# Volumes at the very edge of each FAT type's range: the largest FAT12 and
# FAT16 and the smallest FAT16 and FAT32 volume fsimg accepts for a cluster
# size must hold exactly the limit cluster count (FAT12 4084, FAT16 4087 and
# 65524, FAT32 65527), one sector more or less is refused, and the image
# passes every independent checker.
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
ok() { "$FSIMG" mkfs -q --force -t "$1" -c "$2" -s $(($3 * 512)) "$WORK/b.img" >/dev/null 2>&1; }
count() { "$FSIMG" dump --json "$WORK/b.img" | python3 -c 'import json,sys; print(json.load(sys.stdin)["geometry"]["cluster_count"])'; }
for spec in "fat12 512 max 4084" "fat12 4096 max 4084" "fat16 512 min 4087" "fat16 2048 max 65524" \
            "fat16 512 max 65524" "fat32 512 min 65527" "fat32 1024 min 65527"; do
  set -- $spec
  type=$1; c=$2; edge=$3; target=$4
  guess=$(( target * c / 512 ))
  lo=$(( guess - guess / 16 )); hi=$(( guess + guess / 16 + 4096 ))
  if [ "$edge" = min ]; then   # smallest accepted: lo refused, hi accepted
    ok $type $c $lo && { fail "$spec: $lo sectors unexpectedly accepted"; continue; }
    ok $type $c $hi || { fail "$spec: $hi sectors refused"; continue; }
    while [ $((hi - lo)) -gt 1 ]; do mid=$(( (lo + hi) / 2 )); if ok $type $c $mid; then hi=$mid; else lo=$mid; fi; done
    size=$hi
  else                         # largest accepted: lo accepted, hi refused
    ok $type $c $lo || { fail "$spec: $lo sectors refused"; continue; }
    ok $type $c $hi && { fail "$spec: $hi sectors unexpectedly accepted"; continue; }
    while [ $((hi - lo)) -gt 1 ]; do mid=$(( (lo + hi) / 2 )); if ok $type $c $mid; then lo=$mid; else hi=$mid; fi; done
    size=$lo
  fi
  ok $type $c $size || { fail "$spec: mkfs at $size sectors"; continue; }
  got=$(count)
  if [ "$got" = "$target" ]; then pass; else fail "$spec: edge volume of $size sectors has $got clusters, expected $target"; fi
  echo "$type -c $c $edge: $size sectors -> $got clusters"
  check "$WORK/b.img"
done
finish
