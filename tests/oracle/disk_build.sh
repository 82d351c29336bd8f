#!/usr/bin/env bash
# fsimg disk (issue 24): whole disks in one command.
# - A Raspberry-Pi-like card (MBR: FAT32 boot partition, bootable, filled
#   from a tree; exFAT data partition of the rest): sfdisk --verify, the same
#   table (start, size, type, bootable) as sfdisk makes for the same layout,
#   every independent checker and reader finds each tree
#   (check-image --partition N --manifest), the real writers go on changing
#   it (write-exercise --fsck 'fsimg fsck'; also the UEFI disk's NTFS),
#   fsimg fsck clean, byte-identical
#   when built twice with SOURCE_DATE_EPOCH, each volume its own serial.
# - A UEFI disk (GPT: ESP FAT32, basic-data NTFS, a raw Linux partition from
#   an image file, given PARTUUID and names): sgdisk -v, mmls, the types,
#   names and GUIDs sgdisk reads, the raw partition byte-exact, the same
#   table as sgdisk makes for the same layout; mkfs IMAGE@N on the Pi card
#   changes nothing outside partition N.
# - An MBR of six partitions: the fourth and later logical (5, 6, 7) in an
#   extended partition 4 whose EBRs are byte-identical to sfdisk's for the
#   same layout; the logical exFAT and NTFS partitions read by the checkers.
# - Refusals that create nothing and change nothing: a file that holds data
#   (without --force), size=rest without -s, partitions larger than -s, an
#   unknown key, fs= with image=, MBR-only and GPT-only keys on the other
#   table, a filesystem that does not fit its partition (no temporary left).
# cost: 45
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
for t in sfdisk sgdisk mmls; do command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }; done
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
"$SHARED/trees/make-tree" small boot --scale 0.05 --manifest boot.manifest >/dev/null
"$SHARED/trees/make-tree" mixed data --scale 0.03 --seed 7 --manifest data.manifest >/dev/null
# parts IMG: sfdisk's partition lines without the device name.
parts() { sfdisk -d "$1" | grep start= | sed 's/^[^:]*: //'; }

# The Pi-like card.
pi() {
  "$FSIMG" disk -q --table mbr -s 1G --volume-id 0123456789ABCDEF \
    --part size=256M,fs=fat32,label=BOOT,from=boot,bootable --part size=rest,fs=exfat,label=DATA,from=data "$1"
}
pi sd.img && pass || fail "fsimg disk (Pi card) failed"
sfdisk --verify sd.img >/dev/null 2>&1 && pass || fail "sfdisk --verify sd.img: $(sfdisk --verify sd.img 2>&1)"
truncate -s 1G sf.img
printf 'label: dos\n,256M,c,*\n,,7\n' | sfdisk -q sf.img >/dev/null 2>&1
[ "$(parts sd.img)" = "$(parts sf.img)" ] && pass || fail "the Pi card's table differs from sfdisk's: $(parts sd.img) / $(parts sf.img)"
check sd.img --partition 1 --manifest boot.manifest
check sd.img --partition 2 --manifest data.manifest
for n in 1 2; do
  "$FSIMG" fsck -q sd.img@$n >/dev/null 2>&1 && pass || fail "fsimg fsck sd.img@$n: $("$FSIMG" fsck sd.img@$n 2>&1)"
done
"$FSIMG" fsck sd.img@1 2>&1 | grep -q '^sd.img@1: FAT32' && pass || fail "sd.img@1 is not FAT32: $("$FSIMG" fsck sd.img@1 2>&1)"
"$FSIMG" fsck sd.img@2 2>&1 | grep -q '^sd.img@2: exFAT' && pass || fail "sd.img@2 is not exFAT: $("$FSIMG" fsck sd.img@2 2>&1)"
s1=$("$FSIMG" label --json sd.img@1 | grep volume_id); s2=$("$FSIMG" label --json sd.img@2 | grep volume_id)
[ -n "$s1" ] && [ "$s1" != "$s2" ] && pass || fail "the two volumes share a serial: '$s1' '$s2'"
# The real writers (mtools, exfat-fuse) go on changing what fsimg made, and fsck finds the result clean.
for n in 1 2; do
  "$SHARED/oracles/write-exercise" --partition $n --fsck "$FSIMG fsck" sd.img > we.out 2>&1 && pass ||
    fail "write-exercise --partition $n sd.img: $(grep -v ': PASS\|: SKIP' we.out)"
done
mv sd.img sd1.img
pi sd.img && cmp -s sd.img sd1.img && pass || fail "the Pi card is not byte-identical when built again"
# The summary names each partition as IMAGE@N names it.
"$FSIMG" disk --table mbr --volume-id 1 --part size=8M,fs=fat,label=A --part size=4M out.img > out.txt 2>&1
grep -q '^out.img: mbr disk 13 MiB' out.txt && grep -q '^out.img@1: FAT16 8 MiB.*label "A", in mbr partition 1 at sector 2048' out.txt &&
  grep -q "^out.img@2: empty, in mbr partition 2 at sector 18432, 4 MiB" out.txt && pass || fail "summary: $(cat out.txt)"

# --json: the table and each partition's content, read back (values against sfdisk and mtools).
"$FSIMG" disk --json --table mbr -s 96M --disk-id 5eed0001 --part size=40M,fs=fat32,label=BOOT,from=boot,bootable \
  --part size=8M --part size=rest,fs=exfat,label=DATA js.img > js.json 2>err && pass || fail "disk --json: $(cat err)"
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["disk"]["disk_signature"], d["disk"]["size"])
for p in d["partitions"]:
    f = p["filesystem"] or {}
    print(p["number"], p["offset"] // 512, p["size"] // 512, p["type"], p["partuuid"], p["content"], f.get("filesystem"), f.get("label"), f.get("files"))
' js.json)
want="5eed0001 $((96 << 20))
$(sfdisk -d js.img | awk -F'[=,]' '/^js.img1 / {print 1, $2 + 0, $4 + 0, "0x0C", "5eed0001-01", "filesystem", "FAT32", "BOOT", '"$(mdir -/ -b -i js.img@@1M :: | grep -c '[^/]$')"'}')
$(sfdisk -d js.img | awk -F'[=,]' '/^js.img2 / {print 2, $2 + 0, $4 + 0, "0x83", "5eed0001-02", "empty", "None", "None", "None"}')
$(sfdisk -d js.img | awk -F'[=,]' '/^js.img3 / {print 3, $2 + 0, $4 + 0, "0x07", "5eed0001-03", "filesystem", "exFAT", "DATA", 0}')"
[ "$got" = "$want" ] && pass || fail "disk --json: got
$got
want
$want"

# The UEFI disk.
head -c 3000000 /dev/urandom > rootfs.ext4
uuid=6A1F3B5C-0D2E-4F70-8192-A3B4C5D6E7F8
"$FSIMG" disk -q --table gpt --disk-id 11111111-2222-4333-8444-555555555555 \
  --part size=100M,type=esp,fs=fat32,from=boot,name=EFI\ system \
  --part size=300M,fs=ntfs,label=Data,from=data \
  --part size=8M,type=linux,image=rootfs.ext4,uuid=$uuid uefi.img && pass || fail "fsimg disk (UEFI) failed"
sgdisk -v uefi.img | grep -q 'No problems found' && pass || fail "sgdisk -v uefi.img: $(sgdisk -v uefi.img)"
mmls uefi.img > mmls.txt 2>&1 && [ "$(grep -c '^[0-9]*:  00[0-2] ' mmls.txt)" = 3 ] && pass || fail "mmls uefi.img: $(cat mmls.txt)"
sgdisk -p uefi.img | grep -q 'Disk identifier (GUID): 11111111-2222-4333-8444-555555555555' && pass || fail "disk GUID: $(sgdisk -p uefi.img)"
sgdisk -i 1 uefi.img | grep -q "Partition GUID code: C12A7328-F81F-11D2-BA4B-00A0C93EC93B" &&
  sgdisk -i 1 uefi.img | grep -q "Partition name: 'EFI system'" && pass || fail "partition 1: $(sgdisk -i 1 uefi.img)"
sgdisk -i 2 uefi.img | grep -q "Partition GUID code: EBD0A0A2-B9E5-4433-87C0-68B6B72699C7" &&
  sgdisk -i 2 uefi.img | grep -q "Partition name: 'Data'" && pass || fail "partition 2: $(sgdisk -i 2 uefi.img)"
sgdisk -i 3 uefi.img | grep -q "Partition GUID code: 0FC63DAF-8483-4772-8E79-3D69D8477DE4" &&
  sgdisk -i 3 uefi.img | grep -q "Partition unique GUID: $uuid" && pass || fail "partition 3: $(sgdisk -i 3 uefi.img)"
read -r f3 l3 < <(sgdisk -i 3 uefi.img | awk '/First sector/ {f=$3} /Last sector/ {l=$3} END {print f, l}')
{ cat rootfs.ext4; head -c $(((l3 - f3 + 1) * 512 - 3000000)) /dev/zero; } > want3
cmp -s want3 <(dd if=uefi.img bs=512 skip="$f3" count=$((l3 - f3 + 1)) status=none) && pass || fail "partition 3 is not rootfs.ext4"
check uefi.img --partition 1 --manifest boot.manifest
check uefi.img --partition 2 --manifest data.manifest
"$SHARED/oracles/write-exercise" --partition 2 --fsck "$FSIMG fsck" uefi.img > we.out 2>&1 && pass ||
  fail "write-exercise --partition 2 uefi.img (ntfs-3g): $(grep -v ': PASS\|: SKIP' we.out)"

# sgdisk with the same layout (1 MiB alignment) makes the same table.
truncate -s "$(stat -c %s uefi.img)" sg.img
sgdisk -n 1:0:+100M -t 1:ef00 -n 2:0:+300M -t 2:0700 -n 3:0:+8M -t 3:8300 sg.img >/dev/null
lay() { sgdisk -p "$1" | awk '/^ +[0-9]/ {print $1, $2, $3, $6}' | tr '\n' ';'; }
[ "$(lay uefi.img)" = "$(lay sg.img)" ] && pass || fail "uefi.img's table differs from sgdisk's: $(lay uefi.img) / $(lay sg.img)"
# mkfs IMAGE@N on a disk fsimg disk made: only that partition changes.
tools=$(cd "$here/../tools" && pwd)
cp --sparse=always sd.img before.img
"$FSIMG" mkfs -q -t ntfs --force sd.img@2 && pass || fail "mkfs -t ntfs sd.img@2 failed"
read -r f2 n2 < <(sfdisk -d sd.img | awk -F'[=,]' '/^sd.img2 / {print $2 + 0, $4 + 0}')
changed=$(python3 "$tools/changed_outside.py" before.img sd.img "$f2" "$n2" mbr)
[ -z "$changed" ] && pass || fail "mkfs sd.img@2 changed bytes outside the partition at $changed"
"$FSIMG" fsck sd.img@2 2>&1 | grep -q '^sd.img@2: NTFS' && pass || fail "sd.img@2 is not NTFS: $("$FSIMG" fsck sd.img@2 2>&1)"

# --align: 4 MiB (an SD card's allocation unit): starts, the rest and the
# EBRs on 4 MiB; 4 KiB on a GPT: the first partition after the table at 40.
"$FSIMG" disk -q --table mbr -s 1G --align 4M --part size=256M,fs=fat32 --part size=8M --part size=8M \
  --part size=8M --part size=rest a4.img && pass || fail "--align 4M failed"
got=$(parts a4.img | awk -F'[=,]' '{printf "%d+%d ", $2, $4}')
[ "$got" = "8192+524288 532480+16384 548864+16384 565248+1531904 573440+16384 598016+1499136 " ] && pass || fail "--align 4M: $got"
sfdisk --verify a4.img >/dev/null 2>&1 && pass || fail "sfdisk --verify a4.img: $(sfdisk --verify a4.img 2>&1)"
"$FSIMG" disk -q --table gpt --align 4K --part size=8M --part size=8M a5.img && pass || fail "--align 4K failed"
[ "$(sgdisk -p a5.img | awk '/^ +[0-9]/ {print $2, $3}' | tr '\n' ';')" = "40 16423;16424 32807;" ] &&
  [ "$(stat -c %s a5.img)" = $((32848 * 512)) ] && pass || fail "--align 4K: $(sgdisk -p a5.img | tail -2)"

# Six partitions on an MBR: 1-3 primary, 4 extended, 5-7 logical.
"$FSIMG" disk -q --table mbr --part size=16M,fs=fat16 --part size=16M --part size=16M,fs=fat12 \
  --part size=32M,fs=exfat,from=data --part size=8M,image=rootfs.ext4 --part size=40M,fs=ntfs,from=data ext.img &&
  pass || fail "fsimg disk (logical partitions) failed"
sfdisk --verify ext.img >/dev/null 2>&1 && pass || fail "sfdisk --verify ext.img: $(sfdisk --verify ext.img 2>&1)"
truncate -s "$(stat -c %s ext.img)" sfe.img
printf 'label: dos\n,16M,e\n,16M,83\n,16M,1\n,,f\n,32M,7\n,8M,83\n,40M,7\n' | sfdisk -q sfe.img >/dev/null 2>&1
[ "$(parts ext.img)" = "$(parts sfe.img)" ] && pass || fail "ext.img's table differs from sfdisk's: $(parts ext.img) / $(parts sfe.img)"
ebrs=$(sfdisk -d sfe.img | awk -F'[=,]' '/^sfe.img[5-9] / {print $2 - 2048}')
[ "$(echo $ebrs)" = "100352 167936 186368" ] && pass || fail "sfdisk put the EBRs at $(echo $ebrs)"
for lba in $ebrs; do
  cmp -s <(dd if=ext.img bs=512 skip="$lba" count=1 status=none) <(dd if=sfe.img bs=512 skip="$lba" count=1 status=none) &&
    pass || fail "the EBR at sector $lba differs from sfdisk's"
done
for n in 5 7; do
  read -r first count < <(sfdisk -d ext.img | awk -F'[=,]' -v d="ext.img$n " 'index($0, d) == 1 {print $2 + 0, $4 + 0}')
  dd if=ext.img of=logical$n.img bs=512 skip="$first" count="$count" conv=sparse status=none
  check logical$n.img --manifest data.manifest
done

# size=auto: each partition as large as mkfs -s auto makes it for the same
# tree at the same start (--partition-table mbr --partition-start), free=
# as --free; the trees read back by every checker.
"$FSIMG" disk -q --table gpt --part size=auto,fs=exfat,from=data --part size=auto,fs=ntfs,from=boot,free=3M auto.img &&
  pass || fail "fsimg disk size=auto failed"
read -r a1 e1 < <(sgdisk -i 1 auto.img | awk '/First sector/ {f=$3} /Last sector/ {l=$3} END {print f, l}')
read -r a2 e2 < <(sgdisk -i 2 auto.img | awk '/First sector/ {f=$3} /Last sector/ {l=$3} END {print f, l}')
"$FSIMG" mkfs -q -t exfat --partition-table mbr --from data m1.img
"$FSIMG" mkfs -q -t ntfs --partition-table mbr --partition-start "${a2}s" --free 3M --from boot m2.img
[ $(((e1 - a1 + 1) * 512)) = $(($(stat -c %s m1.img) - 2048 * 512)) ] && pass ||
  fail "size=auto exFAT: $(((e1 - a1 + 1) * 512)) bytes, mkfs -s auto: $(($(stat -c %s m1.img) - 2048 * 512))"
[ $(((e2 - a2 + 1) * 512)) = $(($(stat -c %s m2.img) - a2 * 512)) ] && pass ||
  fail "size=auto NTFS: $(((e2 - a2 + 1) * 512)) bytes, mkfs -s auto: $(($(stat -c %s m2.img) - a2 * 512))"
check auto.img --partition 1 --manifest data.manifest
check auto.img --partition 2 --manifest boot.manifest

# systemd-repart definition files (--definitions, --copy-source): files in
# name order; a fixed ESP (SizeMinBytes = SizeMaxBytes), a root partition
# from CopyBlocks= that grows with Weight=500 up to SizeMaxBytes=, an exFAT
# data partition (Format=exfat, an fsimg extension) taking the rest; types,
# names and the UUID as sgdisk reads them; the trees through check-image.
mkdir -p repart.d src
ln -s "$PWD/boot" src/boot; ln -s "$PWD/data" src/data
printf '# the ESP\n[Partition]\nType=esp\nLabel=ESP\nFormat=vfat\nCopyFiles=/boot:/\nSizeMinBytes=64M\nSizeMaxBytes=64M\n' > repart.d/10-esp.conf
printf '[Partition]\nType=root-x86-64\nCopyBlocks=rootfs.ext4\nWeight=500\nSizeMaxBytes=100M\n' > repart.d/20-root.conf
printf '[Partition]\nType=basic-data\nLabel=Data\nFormat=exfat\nCopyFiles=/data:/\nUUID=%s\n' $uuid > repart.d/30-data.conf
"$FSIMG" disk -q --definitions repart.d --copy-source src -s 512M repart.img && pass || fail "fsimg disk --definitions failed"
sgdisk -v repart.img | grep -q 'No problems found' && pass || fail "sgdisk -v repart.img: $(sgdisk -v repart.img)"
got=$(sgdisk -p repart.img | awk '/^ +[0-9]/ {print $1, $2, $3, $6, $7}' | tr '\n' ';')
[ "$got" = "1 2048 133119 EF00 ESP;2 133120 337919 8304 root-x86-64;3 337920 1046527 0700 Data;" ] && pass ||
  fail "repart.img table: $got"
sgdisk -i 3 repart.img | grep -q "Partition unique GUID: $uuid" && pass || fail "UUID=: $(sgdisk -i 3 repart.img)"
check repart.img --partition 1 --manifest boot.manifest
check repart.img --partition 3 --manifest data.manifest
read -r f2 l2 < <(sgdisk -i 2 repart.img | awk '/First sector/ {f=$3} /Last sector/ {l=$3} END {print f, l}')
cmp -s rootfs.ext4 <(dd if=repart.img bs=512 skip="$f2" count=$((3000000 / 512 + 1)) status=none | head -c 3000000) &&
  pass || fail "CopyBlocks= did not copy rootfs.ext4"
# Two growing partitions share the space by weight (1:3, each share at
# least the partition's minimum), in whole MiBs but the last; without -s each
# is at its minimum (SizeMinBytes=, 10M by default).
mkdir w.d
printf '[Partition]\nType=linux-generic\n' > w.d/1.conf
printf '[Partition]\nType=home\nWeight=3000\n' > w.d/2.conf
"$FSIMG" disk -q --definitions w.d -s 402M w.img && pass || fail "weights: fsimg disk failed"
got=$(sgdisk -p w.img | awk '/^ +[0-9]/ {print $1, $2, $3}' | tr '\n' ';')
[ "$got" = "1 2048 206847;2 206848 821247;" ] && pass || fail "weights 1000:3000 of 400 MiB: $got"
"$FSIMG" disk -q --definitions w.d wmin.img && pass || fail "weights without -s: fsimg disk failed"
got=$(sgdisk -p wmin.img | awk '/^ +[0-9]/ {print $1, $2, $3}' | tr '\n' ';')
[ "$got" = "1 2048 22527;2 22528 43007;" ] && pass || fail "minimum sizes without -s: $got"

# Refusals: nothing created or changed, no temporary left.
head -c 4096 /dev/urandom > data.bin; sum=$(sha256sum < data.bin)
expect_fail 3 "data.bin" "$FSIMG" disk --table mbr --part size=4M data.bin
[ "$(sha256sum < data.bin)" = "$sum" ] && pass || fail "a refused disk changed data.bin"
expect_fail 2 "size=rest is what the other partitions leave" "$FSIMG" disk --table gpt --part size=rest new.img
expect_fail 2 "the partitions need" "$FSIMG" disk --table mbr -s 4M --part size=8M new.img
expect_fail 2 "unknown key \"colour\"" "$FSIMG" disk --table mbr --part size=4M,colour=red new.img
expect_fail 2 "not both" "$FSIMG" disk --table mbr --part size=4M,fs=fat,image=rootfs.ext4 new.img
expect_fail 2 "name= and uuid= are GPT fields" "$FSIMG" disk --table mbr --part size=4M,name=x new.img
expect_fail 2 "bootable is the MBR active flag" "$FSIMG" disk --table gpt --part size=4M,bootable new.img
expect_fail 2 "extended partition" "$FSIMG" disk --table mbr --part size=4M,type=05 new.img
expect_fail 2 "image=rootfs.ext4 holds" "$FSIMG" disk --table mbr --part size=2M,image=rootfs.ext4 new.img
expect_fail 2 "--part 1: cannot make -t fat32" "$FSIMG" disk --table mbr --part size=4M,fs=fat32 new.img
expect_fail 2 "size=auto sizes the filesystem to its from= trees" "$FSIMG" disk --table mbr --part size=auto,fs=fat new.img
expect_fail 2 "free= is the room size=auto leaves" "$FSIMG" disk --table mbr --part size=4M,fs=fat,from=boot,free=1M new.img
mkdir bad.d
printf '[Partition]\nType=esp\nEncrypt=tpm2\n' > bad.d/1.conf
expect_fail 2 "bad.d/1.conf:3: Encrypt= is not supported" "$FSIMG" disk --definitions bad.d new.img
printf '[Partition]\nType=linux-generic\nFormat=ext4\n' > bad.d/1.conf
expect_fail 2 "Format=ext4: fsimg makes vfat, exfat and ntfs" "$FSIMG" disk --definitions bad.d new.img
printf '[Partition]\nType=esp\nCopyFiles=boot:/\n' > bad.d/1.conf
expect_fail 2 "both paths are absolute" "$FSIMG" disk --definitions bad.d new.img
expect_fail 2 "repart.d files describe GPT partitions" "$FSIMG" disk --table mbr --definitions w.d new.img
expect_fail 2 "not both" "$FSIMG" disk --definitions w.d --part size=4M new.img
[ ! -e new.img ] && [ -z "$(ls -A | grep '^\.new\.img\.fsimg-')" ] && pass || fail "a refused disk left files: $(ls -A)"
finish
