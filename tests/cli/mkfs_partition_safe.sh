#!/usr/bin/env bash
# mkfs IMAGE@N never touches a neighbour (issue 40): a partition whose
# sectors another entry (or an EBR) shares is refused, with or without
# --force, naming the other, and the disk stays byte-identical; formatting a
# sound partition changes only that partition's sectors and its table entry
# (every other byte hashed before and after), so the files of the other
# partition still read; a symbolic link to the disk stays a link and the disk
# it names is the one changed.
here=$(dirname "$0"); . "$here/../lib.sh"
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p tree
printf 'keep me\n' > tree/keep.txt
head -c 20000 /dev/urandom > tree/data.bin
entry() {  # entry IMG N TYPE START COUNT: writes MBR entry N (1..4)
  python3 -c '
import struct, sys
img, n, t, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16), int(sys.argv[4]), int(sys.argv[5])
with open(img, "r+b") as f:
    f.seek(446 + 16 * (n - 1))
    f.write(struct.pack("<B3sB3sII", 0, b"\0\0\0", t, b"\0\0\0", start, count))' "$@"; }
# hash_except IMG START COUNT: sha256 of every byte outside LBA START..START+COUNT-1 and outside the MBR sector
hash_except() {
  { dd if="$1" bs=512 skip=1 count=$(($2 - 1)) status=none; dd if="$1" bs=512 skip=$(($2 + $3)) status=none; } | sha256sum
}

# Partition 1 holds files; partition 2 is made to overlap it.
"$FSIMG" mkfs -q -t fat32 -s 128M --partition-table mbr --from tree disk.img || fail "mkfs disk"
p1_start=$(sfdisk -J disk.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitiontable"]["partitions"][0]["start"])')
cp disk.img sound.img
entry disk.img 2 0c 100000 100000   # LBA 100000..199999: inside partition 1
sha=$(sha256sum < disk.img)
expect_fail 3 "partition 2 of \"disk.img\" (LBA 100000..199999) overlaps partition 1 (LBA $p1_start.." \
  "$FSIMG" mkfs -q -t fat32 disk.img@2
expect_fail 3 "fix the partition table first" "$FSIMG" mkfs -q -t fat32 --force disk.img@2
expect_fail 3 "partition 1 of \"disk.img\" (LBA $p1_start..$((p1_start + 262144 - 2048 - 1))) overlaps partition 2 (LBA 100000..199999)" \
  "$FSIMG" mkfs -q -t exfat --force disk.img@1
[ "$(sha256sum < disk.img)" = "$sha" ] && pass || fail "a refused mkfs changed the disk"
"$FSIMG" cat disk.img@1 /keep.txt | cmp -s - tree/keep.txt && pass || fail "partition 1 unreadable after the refusals"

# A sound second partition (the image grown): only its sectors and its entry change.
truncate -s 192M sound.img
entry sound.img 2 0c 262144 131072
before=$(hash_except sound.img 262144 131072)
mbr_before=$(dd if=sound.img bs=1 count=446 status=none | sha256sum)
"$FSIMG" mkfs -q -t fat32 -L SECOND sound.img@2 || fail "mkfs sound.img@2"
[ "$(hash_except sound.img 262144 131072)" = "$before" ] && pass || fail "bytes outside partition 2 changed"
[ "$(dd if=sound.img bs=1 count=446 status=none | sha256sum)" = "$mbr_before" ] && pass || fail "the boot code changed"
"$FSIMG" fsck -n sound.img@2 > fsck.out 2>&1 && pass || fail "partition 2: $(cat fsck.out)"
"$FSIMG" cat sound.img@1 /data.bin | cmp -s - tree/data.bin && pass || fail "partition 1's file changed"

# A symbolic link to the disk stays a link; the disk it names is changed.
mkdir -p real
mv sound.img real/disk.img
ln -s real/disk.img link.img
"$FSIMG" mkfs -q -t exfat --force link.img@2 || fail "mkfs through the link"
[ -L link.img ] && [ "$(readlink link.img)" = real/disk.img ] && pass || fail "link.img is no longer the link"
"$FSIMG" fsck -n real/disk.img@2 > fsck.out 2>&1 && grep -q "exFAT" fsck.out && pass || fail "the linked disk was not changed: $(cat fsck.out)"
[ -z "$(ls -A real | grep -v '^disk.img$')" ] && [ -z "$(ls -A . | grep fsimg)" ] && pass || fail "a temporary file was left: $(ls -A . real)"
finish
