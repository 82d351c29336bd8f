#!/usr/bin/env bash
# mkfs never loses data: an existing filesystem or partition table is not
# overwritten without --force, devices are refused, a failed run leaves
# nothing behind, and errors name the offending value.
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"

# An existing FAT image is kept without --force.
"$FSIMG" mkfs -q -t fat32 -s 64M -c 512 --volume-id 11112222 a.img || fail "mkfs a.img"
sum=$(sha256sum < a.img)
expect_fail 3 "a.img already holds a FAT filesystem; pass --force" "$FSIMG" mkfs -q -t fat16 -s 32M a.img
[ "$(sha256sum < a.img)" = "$sum" ] && pass || fail "a.img changed although mkfs refused"
# A wrong argument is reported as such (exit 2), not as "pass --force", on
# every filesystem type; the refusal to overwrite still follows for exFAT and NTFS.
expect_fail 2 'invalid size "4X"' "$FSIMG" mkfs -q -t fat32 -s 4X a.img
expect_fail 2 "3K" "$FSIMG" mkfs -q -t exfat -s 64M -c 3K a.img
expect_fail 2 "3K" "$FSIMG" mkfs -q -t ntfs -s 64M -c 3K a.img
expect_fail 3 "a.img already holds a FAT filesystem; pass --force" "$FSIMG" mkfs -q -t exfat -s 64M a.img
expect_fail 3 "a.img already holds a FAT filesystem; pass --force" "$FSIMG" mkfs -q -t ntfs -s 64M a.img
[ "$(sha256sum < a.img)" = "$sum" ] && pass || fail "a.img changed although mkfs refused"
"$FSIMG" mkfs -q --force -t fat16 -s 32M a.img && pass || fail "--force did not overwrite"
"$FSIMG" dump a.img | grep "FAT type          FAT16" >/dev/null && pass || fail "a.img is not FAT16 after --force"

# A file holding a partition table (written by sfdisk) is kept too.
truncate -s 16M p.img
echo 'start=2048, type=83' | sfdisk -q p.img >/dev/null 2>&1 || fail "sfdisk"
expect_fail 3 "MBR partition table" "$FSIMG" mkfs -q -t fat -s 16M p.img
truncate -s 8M g.img
sgdisk -o -n 1:2048:0 g.img >/dev/null 2>&1 || fail "sgdisk"
expect_fail 3 "a GPT partition table" "$FSIMG" mkfs -q -t fat g.img

# An existing file without a filesystem is replaced, keeping its size without -s.
head -c 5000000 /dev/zero > z.img
"$FSIMG" mkfs -q -t fat z.img && pass || fail "mkfs on a zero file"
[ "$(stat -c %s z.img)" = 5000000 ] && pass || fail "z.img size changed: $(stat -c %s z.img)"

# Devices are refused.
expect_fail 3 "/dev/null is a device" "$FSIMG" mkfs -q -t fat32 -s 64M /dev/null

# Errors name the offending value.
expect_fail 2 "4X" "$FSIMG" mkfs -q -t fat32 -s 4X n1.img
expect_fail 2 "3K" "$FSIMG" mkfs -q -t fat32 -s 1G -c 3K n2.img
expect_fail 2 "ZZZ" "$FSIMG" mkfs -q -t fat32 -s 1G --volume-id ZZZ n3.img
expect_fail 2 "A*B" "$FSIMG" mkfs -q -t fat32 -s 1G -L 'A*B' n4.img
expect_fail 2 "TOOLONGLABEL" "$FSIMG" mkfs -q -t fat32 -s 1G -L TOOLONGLABEL n5.img
expect_fail 2 "n6.img does not exist" "$FSIMG" mkfs -q -t fat32 n6.img
expect_fail 2 "--sector-size 1000" "$FSIMG" mkfs -q -t fat32 -s 1G --sector-size 1000 n7.img
expect_fail 2 "65,524" "$FSIMG" mkfs -q -t fat16 -s 1G -c 512 n8.img
ls n*.img >/dev/null 2>&1 && fail "a refused mkfs left an image: $(ls n*.img)" || pass

# A failed write leaves nothing behind and keeps the old file.
mkdir ro && chmod 555 ro
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  chown 65534 ro 2>/dev/null; chmod 555 ro
  setpriv --reuid 65534 --regid 65534 --clear-groups "$FSIMG" mkfs -q -t fat32 -s 64M -c 512 ro/x.img 2>err
  rc=$?
else
  "$FSIMG" mkfs -q -t fat32 -s 64M -c 512 ro/x.img 2>err; rc=$?
fi
[ $rc = 1 ] && grep -q "ro" err && pass || fail "read-only folder: exit $rc, $(cat err)"
[ -z "$(ls -A ro)" ] && pass || fail "read-only folder not empty: $(ls -A ro)"
# File-size limit: ftruncate to 2 GiB fails with EFBIG; the old file stays.
echo "precious" > keep.img
(ulimit -f 1024; "$FSIMG" mkfs -q --force -t fat32 -s 2G keep.img 2>err); rc=$?
[ $rc != 0 ] && pass || fail "mkfs beyond the file-size limit succeeded"
[ "$(cat keep.img)" = precious ] && pass || fail "keep.img was changed by a failed mkfs"
[ -z "$(ls -A . | grep fsimg-)" ] && pass || fail "temporary files left: $(ls -A | grep fsimg-)"
finish
