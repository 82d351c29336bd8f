#!/usr/bin/env bash
# mkfs -t exfat on the command line: byte-reproducible with SOURCE_DATE_EPOCH
# and --volume-id; the safety rules (existing filesystem, refusals before
# anything is created); refusals name what would work; 2 TiB and 8 TiB
# images are sparse and quick.
# cost: 12
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"

# Reproducible: the same arguments give the same bytes; the serial changes them.
for args in "-s 64M" "-s 100M -L TEST -c 512" "-s 1G --partition-table gpt" \
            "-s 300M --partition-table mbr --sector-size 4096" "-s 2M --align 4K"; do
  SOURCE_DATE_EPOCH=1600000000 "$FSIMG" mkfs -q -t exfat $args --volume-id CAFE0001 r1.img
  sleep 1
  SOURCE_DATE_EPOCH=1600000000 "$FSIMG" mkfs -q -t exfat $args --volume-id CAFE0001 r2.img
  same_bytes r1.img r2.img && pass || fail "$args: two runs differ"
  SOURCE_DATE_EPOCH=1600000000 "$FSIMG" mkfs -q -t exfat $args --volume-id CAFE0002 r3.img
  same_bytes r1.img r3.img && fail "$args: volume ID did not change the image" || pass
  rm -f r1.img r2.img r3.img
done
SOURCE_DATE_EPOCH=1600000000 "$FSIMG" mkfs -q -t exfat -s 64M s1.img
SOURCE_DATE_EPOCH=1600000000 "$FSIMG" mkfs -q -t exfat -s 64M s2.img
same_bytes s1.img s2.img && pass || fail "SOURCE_DATE_EPOCH alone: runs differ"
# The serial is where the spec puts it (VolumeSerialNumber, byte 100).
"$FSIMG" mkfs -q -t exfat -s 64M --volume-id 1234-ABCD --force s1.img
[ "$(od -An -tx4 -j 100 -N 4 s1.img | tr -d ' ')" = 1234abcd ] && pass || fail "serial not at byte 100"

# Safety: an existing filesystem is not overwritten without --force.
"$FSIMG" mkfs -q -t exfat -s 64M s1.img 2>err; rc=$?
[ $rc = 3 ] && grep -q "already holds an exFAT filesystem" err && pass || fail "overwrite without --force: rc $rc $(cat err)"
"$FSIMG" mkfs -q -t fat32 -s 64M --force f.img
"$FSIMG" mkfs -q -t exfat f.img 2>err; rc=$?
[ $rc = 3 ] && grep -q "FAT filesystem" err && pass || fail "exfat over FAT without --force: rc $rc"
"$FSIMG" mkfs -q -t exfat --force f.img && [ "$(head -c 11 f.img | tail -c 8)" = "EXFAT   " ] && pass ||
  fail "--force over an existing file (size taken from it)"

# Refusals: usage exit status 2, the reason and what would work; no file left.
expect_refusal() {  # expect_refusal TEXT ARGS...
  local text=$1; shift
  "$FSIMG" mkfs -q -t exfat "$@" new.img 2>err; local rc=$?
  if [ $rc = 2 ] && grep -qF -- "$text" err && [ ! -e new.img ]; then pass
  else fail "mkfs -t exfat $* -> rc $rc, wanted 2 and \"$text\": $(cat err)"; fi
}
expect_refusal "at least 1 MiB" -s 512K
expect_refusal "a cluster of 3000 bytes is not possible" -s 64M -c 3000
expect_refusal "32 MiB" -s 1G -c 64M
expect_refusal "-c 8M" -s 40M -c 32M
expect_refusal "--align 512K" -s 2M --align 1M
expect_refusal "limit is 11" -s 64M -L "TWELVE CHARS"
expect_refusal "forbids" -s 64M -L "A:B"
expect_refusal "-c 1K" -s 2080G -c 512
"$FSIMG" mkfs -q -t fat32 -s 64M --align 4K new.img 2>err; rc=$?
[ $rc = 2 ] && grep -q "only for -t exfat" err && pass || fail "--align with fat32: rc $rc"

# --explain shows the regions.
"$FSIMG" mkfs -t exfat -s 64M --explain e.img >out 2>&1
grep -q "cluster heap: at sector 4,096 (2 MiB), 15,872 clusters" out && pass || fail "explain: $(cat out)"

# Big images are sparse and quick: only metadata is written.
for size in 2T 8T; do
  start=$(date +%s%N)
  "$FSIMG" mkfs -q -t exfat -s $size -c 4K big.img || fail "mkfs $size"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  used=$(( $(stat -c %b big.img) * $(stat -c %B big.img) ))
  echo "$size exFAT, 4 KiB clusters: ${ms} ms, $used bytes on disk"
  [ "$used" -lt 2097152 ] && pass || fail "$size image occupies $used bytes"
  [ "$ms" -lt 5000 ] && pass || fail "$size image took $ms ms"
  rm -f big.img
done
finish
