#!/usr/bin/env bash
# A disk with several partitions opened without @N: every reading, checking
# and changing command refuses (exit 2; fsck 16, as for any usage error)
# naming what each partition holds, so the user can choose (issue 24): ours
# by filesystem, others as the overwrite guard's probe names them (libblkid),
# zeros as zeros; the disk is not changed. With @N each opens its partition.
here=$(dirname "$0"); . "$here/../lib.sh"
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
command -v sfdisk >/dev/null || { echo "sfdisk missing: skipped"; exit 77; }
truncate -s 96M disk.img
printf 'label: mbr\n2048,40960,c\n43008,40960,7\n83968,20480,83\n,,83\n' | sfdisk -q disk.img || fail "sfdisk"
echo hello > hello.txt
"$FSIMG" mkfs -q -t fat16 --from hello.txt disk.img@1 --force || fail "mkfs @1"
"$FSIMG" mkfs -q -t exfat disk.img@2 --force || fail "mkfs @2"
other="an ext2 filesystem"
if command -v mkfs.ext2 >/dev/null; then
  mkfs.ext2 -q -F -E offset=$((83968 * 512)) disk.img 10240 > /dev/null 2>&1 || fail "mkfs.ext2"
else
  other="nothing but zeros"
fi
sum=$(content_sum disk.img)
want="\"disk.img\" holds 4 partitions; choose one with disk.img@N: 1 (LBA 2048, 20 MiB, type 0x0E): a FAT filesystem; 2 (LBA 43008, 20 MiB, type 0x07): an exFAT filesystem; 3 (LBA 83968, 10 MiB, type 0x83): $other; 4 (LBA 104448, 45 MiB, type 0x83): nothing but zeros"
for cmd in "ls disk.img" "cat disk.img /hello.txt" "extract disk.img -C xo" "mkdir disk.img /new" "label disk.img X"; do
  expect_fail 2 "$want" "$FSIMG" $cmd
done
expect_fail 16 "$want" "$FSIMG" fsck -y disk.img
[ "$(content_sum disk.img)" = "$sum" ] && pass || fail "a refused command changed the disk"
[ ! -e xo ] && pass || fail "extract made xo/ although it refused"
[ "$("$FSIMG" cat disk.img@1 /hello.txt)" = hello ] && "$FSIMG" fsck disk.img@2 > /dev/null && pass || fail "@N opens the partition"
# GPT: each partition by its type's name (else its GUID) and its name when it has one.
truncate -s 64M gpt.img
printf 'label: gpt\nstart=2048, size=40960, type=U, name="boot"\ntype=L\n' | sfdisk -q gpt.img || fail "sfdisk gpt"
"$FSIMG" mkfs -q -t fat16 --keep-type gpt.img@1 --force || fail "mkfs gpt@1"
expect_fail 2 "\"gpt.img\" holds 2 partitions; choose one with gpt.img@N: 1 (LBA 2048, 20 MiB, type esp, \"boot\"): a FAT filesystem; 2 (LBA 43008, 42 MiB, type linux): nothing but zeros" \
  "$FSIMG" ls gpt.img
finish
