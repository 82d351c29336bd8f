#!/usr/bin/env bash
# fsimg cp of a host file that reports 0 bytes but holds data (procfs,
# sysfs, FUSE; issue 40): read to its end and copied as read, as GNU cp and
# mcopy copy it, on FAT32 and exFAT; before, FAT got an empty file with exit
# 0 and exFAT refused it as "changed as it was read".
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
finish
