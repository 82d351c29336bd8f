# Fixtures for the examples in docs/*.md (sourced by doc_examples.py in an
# empty folder, with SOURCE_DATE_EPOCH=1700000000 and TZ=UTC). Each function
# prepares the files its examples read.

# card.img: a FAT32 camera card made by fsimg from a small tree.
card_tree() {
  mkdir -p tree/DCIM/100CANON
  printf 'hello\n' > tree/README.TXT
  printf 'notes\n' > "tree/Trip notes 2024.txt"
  head -c 70000 /dev/zero | tr '\0' 'x' > tree/DCIM/100CANON/IMG_0001.JPG
  touch -d @1700000000 tree/README.TXT "tree/Trip notes 2024.txt" tree/DCIM/100CANON/IMG_0001.JPG \
    tree/DCIM/100CANON tree/DCIM tree
}
card_fat() {
  card_tree
  fsimg mkfs -q -t fat32 -s 300M --volume-id 1234ABCD -L CARD --from tree card.img
}
# card.img: card_fat whose photo's directory entry was lost (marked deleted,
# 0xE5) while its clusters stayed allocated: a lost chain.
card_lost() {
  card_fat
  python3 - card.img <<'EOF'
import sys
f = open(sys.argv[1], "r+b")
at = 0
while True:
    chunk = f.read(1 << 20)
    if not chunk:
        sys.exit("IMG_0001.JPG not found")
    i = chunk.find(b"IMG_0001JPG")
    while i >= 0 and (at + i) % 32:
        i = chunk.find(b"IMG_0001JPG", i + 1)
    if i >= 0:
        f.seek(at + i); f.write(b"\xe5"); break
    at += len(chunk)
EOF
}
# card.img: card_fat whose photo's chain was cut after 4 of its 18 clusters
# (an end-of-chain mark in both FATs): the other 14 are a lost chain.
card_cut() {
  card_fat
  local first
  first=$(fsimg ls --json card.img /DCIM/100CANON | python3 -c '
import json, sys
print(json.load(sys.stdin)["entries"][0]["first_cluster"])')
  python3 "$(dirname "${BASH_SOURCE[0]}")/fat_entries.py" card.img set all $((first + 3)) 0x0FFFFFFF
}
# card.img: card_fat after fsimg rm of the photo (its clusters free, its entries marked deleted).
card_rm() {
  card_fat
  fsimg rm -q card.img /DCIM/100CANON/IMG_0001.JPG
}
# card.img: card_cut, and "Trip notes 2024.txt" removed (rescuing.md).
card_rescue() {
  card_cut
  fsimg rm -q card.img "/Trip notes 2024.txt"
}
card_exfat() {
  card_tree
  fsimg mkfs -q -t exfat -s 64M --volume-id 1234ABCD -L CARD --from tree card.img
}
# card.img: the tree on exFAT with 1 MiB clusters (slack's own-row example).
card_exfat_1m() {
  card_tree
  fsimg mkfs -q -t exfat -s 64M -c 1M --volume-id 1234ABCD -L CARD --from tree card.img
}
# card.img: the tree on NTFS (fsimg), left dirty, with one lost cluster in $Bitmap.
card_ntfs_damaged() {
  card_tree
  fsimg mkfs -q -t ntfs -s 64M --volume-id 1234ABCD -L CARD --from tree card.img
  python3 "$(dirname "${BASH_SOURCE[0]}")/ntfs_damage.py" card.img volume-dirty >/dev/null
  python3 "$(dirname "${BASH_SOURCE[0]}")/ntfs_damage.py" card.img bitmap-lost >/dev/null
}
# card.img: the tree on NTFS (fsimg), with an alternate data stream
# "Zone.Identifier" on "Trip notes 2024.txt" written by ntfs-3g's ntfscp.
card_ntfs() {
  card_tree
  fsimg mkfs -q -t ntfs -s 64M --volume-id 1234ABCD -L CARD --from tree card.img
  printf '[ZoneTransfer]\r\nZoneId=3\r\n' > zone
  ntfscp -q -N Zone.Identifier card.img zone "/Trip notes 2024.txt"
}
# card.img: the same tree on FAT16 (2 KiB clusters) made by mkfs.fat and filled by mcopy.
card_mtools() {
  card_tree
  truncate -s 64M card.img
  mkfs.fat -F 16 -s 4 -i 1234ABCD -n CARD card.img >/dev/null
  mcopy -s -m -i card.img tree/* ::/
}
# card.img (FAT16, mtools) and sdxc.img (exFAT, fsimg) with the same tree.
cards() {
  card_mtools
  fsimg mkfs -q -t exfat -s 64M --volume-id 1234ABCD --from tree sdxc.img
}
# wex/data: formats.md §5.5's tree (100 files of 45 bytes, 10 of 5,000, one empty).
wex() {
  mkdir -p wex/data
  for i in $(seq -w 1 100); do head -c 45 /dev/zero > "wex/data/file_with_name_0$i.txt"; done
  for i in $(seq -w 1 10); do head -c 5000 /dev/zero > "wex/data/big_00$i.bin"; done
  : > wex/data/empty.txt
}
# seed/: one 45-byte file.
seed() {
  mkdir seed && head -c 45 /dev/zero > seed/note45.txt
}
# huge/: a sparse file of 4 GiB + 1 byte.
huge() {
  mkdir huge && truncate -s 4294967297 huge/over4gib.bin
}
# card.img: card_mtools after an unclean unmount (BS_Reserved1's dirty bit
# set) with a stale FSInfo free count, as an interrupted writer leaves it.
card_dirty() {
  card_tree
  truncate -s 64M card.img
  mkfs.fat -F 32 -i 1234ABCD -n CARD card.img >/dev/null
  mcopy -s -m -i card.img tree/* ::/
  python3 -c '
f = open("card.img", "r+b")
f.seek(0x41); f.write(b"\x01")
f.seek(512 + 0x1E8); f.write((99).to_bytes(4, "little"))'
}
# sd.img: a 256 MiB disk partitioned by sfdisk (two empty Linux partitions),
# and the trees boot/ and data/ for mkfs IMAGE@N.
sd_disk() {
  mkdir -p boot data
  printf 'console=serial0\n' > boot/cmdline.txt
  head -c 100000 /dev/zero | tr '\0' 'd' > data/log.bin
  touch -d @1700000000 boot/cmdline.txt data/log.bin boot data
  truncate -s 256M sd.img
  printf 'label: dos\nlabel-id: 0x5eed0001\nstart=2048, size=131072, type=83\nstart=133120, type=83\n' |
    sfdisk -q sd.img
}
# The trees and the image file of fsimg disk's examples (docs/disk.md).
disk_trees() {
  mkdir -p boot data esp/EFI/BOOT
  printf 'console=serial0 root=PARTUUID=5eed0001-02\n' > boot/cmdline.txt
  head -c 100000 /dev/zero | tr '\0' 'k' > boot/kernel.img
  head -c 100000 /dev/zero | tr '\0' 'd' > data/log.bin
  head -c 50000 /dev/zero | tr '\0' 'e' > esp/EFI/BOOT/BOOTX64.EFI
  head -c 3000000 /dev/zero | tr '\0' 'r' > rootfs.ext4
  touch -d @1700000000 boot/* data/* esp/EFI/BOOT/* esp/EFI/BOOT esp/EFI boot data esp
}
# repart.d/ for fsimg disk --definitions (docs/disk.md), with disk_trees' trees.
disk_repart() {
  disk_trees
  mkdir -p repart.d
  printf '[Partition]\nType=esp\nLabel=ESP\nFormat=vfat\nCopyFiles=/esp:/\nSizeMinBytes=64M\nSizeMaxBytes=64M\n' \
    > repart.d/10-esp.conf
  printf '[Partition]\nType=basic-data\nLabel=Data\nFormat=exfat\nCopyFiles=/data:/\n' > repart.d/20-data.conf
}
# crossed.img: FAT32 (mkfs.fat + mcopy) whose /B.TXT shares its clusters with
# /A.TXT (tests/tools/fat_damage.py chain-cross-link); new.txt to copy in.
edit_damaged() {
  mkdir -p src/DIR
  head -c 5000 /dev/zero | tr '\0' a > src/A.TXT
  head -c 3000 /dev/zero | tr '\0' b > src/B.TXT
  printf 'c\n' > src/DIR/C.TXT
  printf 'long\n' > "src/Long name file.txt"
  truncate -s 40M crossed.img
  mkfs.fat -F 32 -s 1 -i 1234ABCD -n TESTLBL crossed.img >/dev/null
  mcopy -i crossed.img src/A.TXT src/B.TXT src/DIR "src/Long name file.txt" ::/
  python3 "$(dirname "${BASH_SOURCE[0]}")/fat_damage.py" crossed.img chain-cross-link >/dev/null
  printf 'new\n' > new.txt
}
