#!/usr/bin/env bash
# The mkfs overwrite guard (issue 18): libblkid's probe plus the container
# magics it misses and the volumes fsimg reads through a backup. Without
# --force, mkfs refuses (exit 3, file unchanged) any existing file holding
# anything but zeros, naming what it holds; a file of zeros and an empty
# sparse file are fine; --force keeps the file's mode and owner.
# cost: 10
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"

# refused FILE TEXT: mkfs without --force exits 3, names TEXT, leaves FILE as it was.
refused() {
  local f=$1 text=$2 sum
  sum=$(sha256sum < "$f")
  "$FSIMG" mkfs -q -t fat32 -s 64M "$f" >out 2>err; local rc=$?
  [ $rc = 3 ] && pass || fail "$f: exit $rc, expected 3 ($(cat err))"
  grep -qF -- "$f already holds $text" err && grep -qF "pass --force" err && pass || fail "$f: stderr lacks '$text': $(cat err)"
  [ "$(sha256sum < "$f")" = "$sum" ] && pass || fail "$f changed although mkfs refused"
}
mib() { truncate -s "${2:-8M}" "$1"; }

# Filesystems and signatures libblkid knows.
if command -v mkfs.ext4 >/dev/null; then
  mib ext4.img 8M && mkfs.ext4 -q -F -L rootfs ext4.img && refused ext4.img "an ext4 filesystem (label rootfs)"
fi
if command -v mkswap >/dev/null; then
  mib swap.img 8M && mkswap -q swap.img >/dev/null && refused swap.img "a swap area"
fi
# ISO 9660: a primary volume descriptor at 32 KiB (ECMA-119 8.4).
mib iso.img 1M && printf '\001CD001\001' | dd of=iso.img bs=1 seek=32768 conv=notrunc status=none
printf '\377CD001\001' | dd of=iso.img bs=1 seek=34816 conv=notrunc status=none
refused iso.img "an ISO 9660 filesystem"
# LUKS1 header magic and version (LUKS On-Disk Format 1.2.3).
mib luks.img 4M && printf 'LUKS\272\276\000\001aes' | dd of=luks.img conv=notrunc status=none
refused luks.img "a LUKS encrypted volume"
# An fsimg NTFS, exFAT and FAT32 image and partition tables (sfdisk, sgdisk).
"$FSIMG" mkfs -q -t ntfs -s 16M n.img && refused n.img "an NTFS filesystem"
"$FSIMG" mkfs -q -t exfat -s 16M x.img && refused x.img "an exFAT filesystem"
mib p.img 16M && echo 'start=2048, type=83' | sfdisk -q p.img >/dev/null 2>&1 && refused p.img "an MBR partition table"

# Containers libblkid does not know, each by its own magic.
mib q.img 1M && printf 'QFI\373\000\000\000\003' | dd of=q.img conv=notrunc status=none && refused q.img "qcow2 data"
mib vhdx.img 1M && printf 'vhdxfile' | dd of=vhdx.img conv=notrunc status=none && refused vhdx.img "VHDX data"
mib vmdk.img 1M && printf 'KDMV\001\000\000\000' | dd of=vmdk.img conv=notrunc status=none && refused vmdk.img "VMDK data"
# A fixed VHD: raw disk bytes, then the 512-byte footer "conectix".
mib vhd.img 1M && { cat vhd.img; printf 'conectix'; head -c 504 /dev/zero; } > v2.img && mv v2.img vhd.img
refused vhd.img "VHD data"
head -c 300000 /dev/urandom > r.bin
xz -c r.bin > r.xz && refused r.xz "xz-compressed data"
zstd -q -c r.bin > r.zst && refused r.zst "zstd-compressed data"
bzip2 -c r.bin > r.bz2 && refused r.bz2 "bzip2-compressed data"
gzip -c r.bin > r.gz && refused r.gz "gzip-compressed data"
tar cf r.tar r.bin && refused r.tar "a tar archive"
# Plain text: unrecognised data, named by its size.
yes "a line of a plain text file that someone wants to keep" | head -c 3250586 > notes.txt
refused notes.txt "3.1 MiB of unrecognised data"

# Volumes fsimg reads through a backup: sector 0 damaged.
"$FSIMG" mkfs -q -t ntfs -s 16M nb.img && dd if=/dev/zero of=nb.img bs=512 count=1 conv=notrunc status=none
refused nb.img "an NTFS filesystem, readable through its backup boot sector in the last sector"
"$FSIMG" mkfs -q -t exfat -s 16M xb.img && dd if=/dev/zero of=xb.img bs=512 count=1 conv=notrunc status=none
refused xb.img "an exFAT filesystem, readable through its backup boot sector at sector 12"
"$FSIMG" mkfs -q -t fat32 -s 64M -c 512 fb.img && dd if=/dev/zero of=fb.img bs=512 count=1 conv=notrunc status=none
refused fb.img "a FAT filesystem, readable through its backup boot sector at sector 6"
mib gb.img 8M && sgdisk -o -n 1:2048:0 gb.img >/dev/null 2>&1 && dd if=/dev/zero of=gb.img bs=512 count=34 conv=notrunc status=none
refused gb.img "a GPT partition table"

# Zeros and holes are nothing: mkfs goes ahead, keeping the size.
head -c 3000000 /dev/zero > zeros.img && "$FSIMG" mkfs -q -t fat zeros.img && pass || fail "mkfs over zeros"
truncate -s 2T sparse.img && "$FSIMG" mkfs -q -t exfat sparse.img && pass || fail "mkfs over an empty sparse file"
[ "$(stat -c %s sparse.img)" = 2199023255552 ] && pass || fail "sparse.img size changed"

# --force replaces, keeping the mode (and the owner, when we may set it).
chmod 640 notes.txt
if [ "$(id -u)" = 0 ]; then chown 65534:65534 notes.txt; fi
before=$(stat -c '%a %u %g' notes.txt)
"$FSIMG" mkfs -q --force -t fat32 -s 64M notes.txt && pass || fail "mkfs --force"
[ "$(stat -c '%a %u %g' notes.txt)" = "$before" ] && pass || fail "--force changed mode/owner: $before -> $(stat -c '%a %u %g' notes.txt)"
"$FSIMG" dump notes.txt | grep -q "FAT32" && pass || fail "notes.txt is not FAT32 after --force"

# The image inside its own --from tree is left out with a warning.
mkdir tree && echo data > tree/a.txt
"$FSIMG" mkfs -q -t fat32 -s 64M tree/self.img || fail "mkfs tree/self.img"
"$FSIMG" mkfs --force -t fat32 -s 64M --from tree tree/self.img >out 2>err && pass || fail "mkfs --from its own folder: $(cat err)"
grep -qF "left out tree/self.img: it is the image being written" err && pass || fail "no warning for the image in its tree: $(cat err)"
"$FSIMG" ls tree/self.img > list
grep -qx "a.txt" list && ! grep -qi "self.img" list && pass || fail "self.img listing: $(cat list)"
finish
