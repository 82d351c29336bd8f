#!/usr/bin/env bash
# mkfs IMAGE@N (issue 24): partition N of a disk made by sfdisk (MBR:
# primaries, an extended partition and logical ones) or sgdisk (GPT) is
# formatted and filled in place with FAT32, FAT16, exFAT and NTFS. Every byte
# outside the partition stays as it was (sha256 of the rest), the table
# changes only in the partition's type (sfdisk -d, sgdisk -v with its CRCs),
# and every independent checker and reader finds the tree in the partition
# (check-image --partition N --manifest). --keep-type keeps the type.
# Refused, leaving the disk byte-identical: an extended partition, a
# partition too small for the filesystem, one that holds a filesystem
# without --force, one past the image's end, a disk without a table, and
# the options that make a new disk (--partition-table, --gzip, -s auto).
# cost: 27
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
tools=$(cd "$here/../tools" && pwd)
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
"$SHARED/trees/make-tree" small tree --scale 0.05 --manifest tree.manifest >/dev/null

# table IMG: sfdisk's dump without the type column.
table() { sfdisk -d "$1" | grep start= | sed 's/, type=[^,]*//'; }
type_of() { sfdisk --part-type "$1" "$2" | tr -d ' '; }
# format IMG N FIRST COUNT EXPECTED_TYPE MKFS_ARGS...: formats IMG@N, checks
# the rest of the disk (tests/tools/changed_outside.py), the table and the
# partition's content (check-image --offset; its own table checks do not
# follow MBR logical partitions, so sfdisk --verify judges the table, and a
# logical partition is checked as a copy of its sectors).
format() {
  local img=$1 n=$2 first=$3 count=$4 want=$5; shift 5
  local kind table_before changed got
  kind=$(sfdisk -d "$img" | sed -n 's/^label: //p'); cp --sparse=always "$img" before.img
  table_before=$(table "$img")
  if ! "$FSIMG" mkfs -q "$@" "$img@$n" 2>err; then fail "mkfs $* $img@$n: $(cat err)"; return; fi
  changed=$(python3 "$tools/changed_outside.py" before.img "$img" "$first" "$count" "$kind")
  [ -z "$changed" ] && pass || fail "$img@$n ($*): bytes outside the partition changed at $changed"
  [ "$(table "$img")" = "$table_before" ] && pass || fail "$img@$n ($*): the table changed beyond the type"
  got=$(type_of "$img" "$n")
  [ "${got,,}" = "${want,,}" ] && pass || fail "$img@$n ($*): type $got, expected $want"
  sfdisk --verify "$img" >/dev/null 2>&1 && pass || fail "sfdisk --verify $img: $(sfdisk --verify "$img" 2>&1)"
  if [ "$n" -ge 5 ]; then  # check-image sizes an --offset view by the primary entries: the extended one here
    dd if="$img" of=logical.img bs=512 skip="$first" count="$count" conv=sparse status=none
    check logical.img --manifest tree.manifest
  else
    check "$img" --offset $((first * 512)) --skip ptable-layout,ptable-sfdisk --manifest tree.manifest
  fi
  "$FSIMG" fsck -q "$img@$n" >/dev/null 2>&1 && pass || fail "fsimg fsck $img@$n after mkfs $*: $("$FSIMG" fsck "$img@$n" 2>&1)"
}

# MBR: 1 and 2 primary, 3 extended holding 5 and 6, 4 tiny.
truncate -s 192M mbr.img
sfdisk -q mbr.img <<'EOF'
label: dos
label-id: 0x1234abcd
start=2048, size=90000, type=83, bootable
start=94208, size=40960, type=83
start=137216, size=253952, type=5
start=139264, size=81920, type=83
start=223232, size=131072, type=83
start=391168, size=64, type=83
EOF
format mbr.img 1 2048 90000 c -t fat32 --from tree
format mbr.img 2 94208 40960 7 -t exfat --from tree
format mbr.img 5 139264 81920 7 -t ntfs --from tree
format mbr.img 6 223232 131072 e -t fat16 -L DATA --from tree
sfdisk -d mbr.img | grep -q 'start=        2048, size=       90000, type=c, bootable' && pass ||
  fail "partition 1 lost its bootable flag: $(sfdisk -d mbr.img)"
[ "$(sfdisk -d mbr.img | grep -c '^label-id: 0x1234abcd')" = 1 ] && pass || fail "the disk signature changed"

# Refusals leave the disk byte-identical.
sum=$(sha256sum < mbr.img)
expect_fail 2 "extended partition" "$FSIMG" mkfs -t fat mbr.img@3
expect_fail 3 "partition 2 of mbr.img already holds an exFAT filesystem" "$FSIMG" mkfs -t fat mbr.img@2
expect_fail 2 "cannot make -t ntfs" "$FSIMG" mkfs -t ntfs --force mbr.img@4
expect_fail 2 "no partition 7" "$FSIMG" mkfs -t fat mbr.img@7
expect_fail 2 "--partition-table with mbr.img@2" "$FSIMG" mkfs -t fat --partition-table gpt --force mbr.img@2
expect_fail 2 "-s auto with mbr.img@2" "$FSIMG" mkfs -t fat -s auto --from tree --force mbr.img@2
expect_fail 2 "--gzip with mbr.img@2" "$FSIMG" mkfs -t fat -s 1M --gzip --force mbr.img@2
expect_fail 2 "is larger than partition 2" "$FSIMG" mkfs -t fat -s 100M --force mbr.img@2
expect_fail 2 "--keep-type is for IMAGE@N" "$FSIMG" mkfs -t fat -s 1M --keep-type plain.img
[ "$(sha256sum < mbr.img)" = "$sum" ] && pass || fail "a refused mkfs changed mbr.img"
# --force formats over a filesystem; -s leaves the rest of the partition zeros.
format mbr.img 2 94208 40960 e --force -t fat16 -s 16M --from tree
"$FSIMG" fsck mbr.img@2 2>&1 | grep -q '^mbr.img@2: FAT16, 32,481 clusters of 512 B' && pass ||
  fail "mbr.img@2 is not the FAT16 of -s 16M: $("$FSIMG" fsck mbr.img@2 2>&1)"

# A partition past the end of the image, a disk without a table.
truncate -s 100M cut.img
python3 - cut.img <<'EOF2'
import struct, sys
with open(sys.argv[1], "r+b") as f:  # one entry, LBA 2048 + 300000 sectors, past the 100 MiB image
    f.seek(446); f.write(bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + struct.pack("<II", 2048, 300000))
    f.seek(510); f.write(b"\x55\xaa")
EOF2
expect_fail 2 "runs past the end of the image" "$FSIMG" mkfs -t fat cut.img@1
"$FSIMG" mkfs -q -t fat -s 8M plain.img
expect_fail 2 "has no partition table" "$FSIMG" mkfs -t fat --force plain.img@1

# GPT by sgdisk: three partitions, the second formatted twice.
truncate -s 160M gpt.img
sgdisk -n 1:2048:+64M -t 1:ef00 -c 1:ESP -n 2:0:+48M -t 2:8300 -c 2:data -n 3:0:+40M -t 3:8300 gpt.img >/dev/null
read -r f2 l2 < <(sgdisk -i 2 gpt.img | awk '/First sector/ {f=$3} /Last sector/ {l=$3} END {print f, l}')
format gpt.img 2 "$f2" $((l2 - f2 + 1)) EBD0A0A2-B9E5-4433-87C0-68B6B72699C7 -t exfat --from tree
check gpt.img --only ptable-layout,ptable-sfdisk,ptable-sgdisk,ptable-mmls --partition 2
sgdisk -i 2 gpt.img | grep -q "Partition name: 'data'" && pass || fail "the GPT name of partition 2 changed"
format gpt.img 2 "$f2" $((l2 - f2 + 1)) EBD0A0A2-B9E5-4433-87C0-68B6B72699C7 --force -t ntfs --from tree
read -r f1 l1 < <(sgdisk -i 1 gpt.img | awk '/First sector/ {f=$3} /Last sector/ {l=$3} END {print f, l}')
format gpt.img 1 "$f1" $((l1 - f1 + 1)) C12A7328-F81F-11D2-BA4B-00A0C93EC93B --keep-type -t fat32 --from tree
check gpt.img --only ptable-layout,ptable-sfdisk,ptable-sgdisk,ptable-mmls --partition 1
finish
