#!/usr/bin/env bash
# fsimg cp of a host file that reports 0 bytes but holds data (procfs,
# sysfs, FUSE; issue 40): read to its end and copied as read, as GNU cp and
# mcopy copy it, on FAT32 and exFAT; before, FAT got an empty file with exit
# 0 and exFAT refused it as "changed as it was read". mkfs --from (FAT32,
# exFAT, NTFS) reads such files at the scan: a tree whose files are links
# (--symlinks follow) to /proc/version (st_size 0) and to a sysfs file
# (st_size 4096, holding fewer bytes) stores what they hold; before, the
# first was stored empty with exit 0 and the second refused as "shrank". A
# truly empty file stays empty.
here=$(dirname "$0"); . "$here/../lib.sh"
[ -r /proc/version ] && [ "$(stat -c %s /proc/version)" = 0 ] || { echo "no procfs: skipped"; exit 77; }
cd "$WORK"
cat /proc/version > expected
[ -s expected ] || { echo "empty /proc/version: skipped"; exit 77; }
for t in fat32 exfat; do
  "$FSIMG" mkfs -q -t $t -s 64M $t.img || fail "mkfs $t"
  "$FSIMG" cp $t.img /proc/version /VERSION.TXT > out 2> err; rc=$?
  [ $rc = 0 ] && pass || fail "$t: cp exit $rc: $(cat err)"
  "$FSIMG" cat $t.img /VERSION.TXT | cmp -s - expected && pass || fail "$t: the copy differs from /proc/version"
  "$FSIMG" fsck -n $t.img > fsck.out 2>&1 && pass || fail "$t: fsck: $(cat fsck.out)"
done
if command -v mtype > /dev/null; then
  MTOOLS_SKIP_CHECK=1 mtype -i fat32.img ::VERSION.TXT | cmp -s - expected && pass || fail "mtools reads a different copy"
fi

mkdir -p tree
ln -s /proc/version tree/version.txt
: > tree/empty.txt
sysfs=""
for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/osrelease /sys/power/state; do
  if [ -r "$f" ] && [ "$(stat -c %s "$f")" = 4096 ] && [ -s "$f" ]; then sysfs=$f; break; fi
done
[ -n "$sysfs" ] && ln -s "$sysfs" tree/sysfs.txt && cat "$sysfs" > sysfs.expected
for t in fat32 exfat ntfs; do
  "$FSIMG" mkfs -q -t $t -s 64M --symlinks follow --from tree from-$t.img 2> err && pass || fail "mkfs -t $t --from: $(cat err)"
  "$FSIMG" cat from-$t.img /version.txt | cmp -s - expected && pass || fail "$t: mkfs --from stored another /proc/version"
  [ -n "$sysfs" ] && { "$FSIMG" cat from-$t.img /sysfs.txt | cmp -s - sysfs.expected && pass ||
    fail "$t: mkfs --from stored another $sysfs"; }
  [ "$("$FSIMG" cat from-$t.img /empty.txt | wc -c)" = 0 ] && pass || fail "$t: the empty file is not empty"
  "$FSIMG" fsck -n from-$t.img > fsck.out 2>&1 && pass || fail "$t: fsck after mkfs --from: $(cat fsck.out)"
done
if command -v mtype > /dev/null; then
  MTOOLS_SKIP_CHECK=1 mtype -i from-fat32.img ::version.txt | cmp -s - expected && pass || fail "mtools reads another version.txt"
fi
finish
