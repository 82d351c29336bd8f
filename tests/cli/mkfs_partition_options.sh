#!/usr/bin/env bash
# The options of the single partition mkfs writes (issue 24), read back by
# sfdisk and sgdisk: --partition-start (a size or sectors, 63s as old DOS
# disks have it), --partition-type (a name or an MBR byte / GPT GUID; a type
# Windows does not mount the filesystem from is warned about),
# --bootable (the MBR active flag, 0x80 at entry offset 0), --disk-id (MBR
# disk signature at offset 440; GPT disk GUID), --partition-uuid and
# --partition-name (GPT entry fields), and --hidden-sectors for an image
# without a table (BPB_HiddSec, exFAT PartitionOffset stays as the spec
# allows, NTFS hidden sectors). sgdisk -v checks the GPT's CRCs and layout.
# The "no partition table" note only where the image looks like a whole disk,
# never after an error.
# Refused with a usage error (exit 2), writing nothing: a type that is
# neither a name nor a byte/GUID, a GPT-only name on MBR and an MBR byte on
# GPT, --bootable on GPT, --partition-uuid/--partition-name on MBR,
# --hidden-sectors in a table, a start in sector 0, inside the GPT or not a
# whole sector, and numbers past their fields.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v sfdisk >/dev/null && command -v sgdisk >/dev/null ||
  { echo "sfdisk/sgdisk missing (scripts/install-deps): skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p tree/d && printf 'hello\n' > tree/d/a.txt && head -c 70000 /dev/zero | tr '\0' 'x' > tree/b.txt

# MBR: start 4 MiB, type 0b, active, disk signature.
"$FSIMG" mkfs -q -t fat32 -s 64M --partition-table mbr --partition-start 4M --partition-type b \
  --bootable --disk-id 5eed0001 --from tree mbr.img || fail "mkfs mbr"
line=$(sfdisk -d mbr.img | grep 'mbr.img1')
[ "$line" = "mbr.img1 : start=        8192, size=      122880, type=b, bootable" ] && pass || fail "mbr entry: $line"
[ "$(sfdisk -d mbr.img | sed -n 's/^label-id: //p')" = 0x5eed0001 ] && pass || fail "mbr disk id: $(sfdisk -d mbr.img)"
sfdisk --verify mbr.img >/dev/null 2>&1 && pass || fail "sfdisk --verify mbr.img"
# The BPB's hidden sectors follow the start (BPB_HiddSec at 0x1C).
hid=$(python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(8192*512+0x1C); print(struct.unpack("<I",f.read(4))[0])' mbr.img)
[ "$hid" = 8192 ] && pass || fail "BPB_HiddSec $hid, expected 8192"
[ "$("$FSIMG" cat mbr.img@1 /d/a.txt)" = hello ] && pass || fail "cat mbr.img@1"
"$FSIMG" fsck -q mbr.img@1 && pass || fail "fsck mbr.img@1"

# An old DOS layout: the partition at sector 63, type by byte with 0x.
"$FSIMG" mkfs -q -t fat16 -s 32M --partition-table mbr --partition-start 63s --partition-type 0x06 \
  --from tree dos.img || fail "mkfs dos"
line=$(sfdisk -d dos.img | grep 'dos.img1')
[ "$line" = "dos.img1 : start=          63, size=       65473, type=6" ] && pass || fail "dos entry: $line"
if [ -x "$SHARED/oracles/check-image" ] && oracles_installed; then
  check dos.img
fi

# GPT: ESP type, unique GUID, name, disk GUID.
"$FSIMG" mkfs -q -t fat32 -s 64M --partition-table gpt --partition-type esp \
  --partition-uuid 11111111-2222-3333-4444-555555555555 --partition-name "EFI sys" \
  --disk-id 01234567-89ab-cdef-0123-456789abcdef gpt.img || fail "mkfs gpt"
sgdisk -v gpt.img 2>&1 | grep -q "No problems found" && pass || fail "sgdisk -v gpt.img: $(sgdisk -v gpt.img 2>&1)"
info=$(sgdisk -i 1 gpt.img)
grep -q "^Partition GUID code: C12A7328-F81F-11D2-BA4B-00A0C93EC93B" <<<"$info" && pass || fail "esp type: $info"
grep -q "^Partition unique GUID: 11111111-2222-3333-4444-555555555555" <<<"$info" && pass || fail "uuid: $info"
grep -q "^Partition name: 'EFI sys'" <<<"$info" && pass || fail "name: $info"
grep -q "^First sector: 2048 " <<<"$info" && pass || fail "start: $info"
sgdisk -p gpt.img | grep -q "Disk identifier (GUID): 01234567-89AB-CDEF-0123-456789ABCDEF" && pass ||
  fail "disk guid: $(sgdisk -p gpt.img)"
# A GPT type GUID given as such, and a start of 1 MiB + 512 (sectors).
"$FSIMG" mkfs -q -t exfat -s 64M --partition-table gpt --partition-start 2049s \
  --partition-type 0FC63DAF-8483-4772-8E79-3D69D8477DE4 gpt2.img || fail "mkfs gpt2"
info=$(sgdisk -i 1 gpt2.img)
grep -q "^Partition GUID code: 0FC63DAF-8483-4772-8E79-3D69D8477DE4" <<<"$info" && pass || fail "linux type: $info"
grep -q "^First sector: 2049 " <<<"$info" && pass || fail "start 2049: $info"
sgdisk -v gpt2.img 2>&1 | grep -q "No problems found" && pass || fail "sgdisk -v gpt2.img"
"$FSIMG" fsck -q gpt2.img@1 && pass || fail "fsck gpt2.img@1"

# A type Windows does not mount the filesystem from is said (Linux reads any type), not refused;
# the types that suit it are taken in silence.
"$FSIMG" mkfs -t exfat -s 64M --partition-table gpt --partition-type esp esp-exfat.img > out 2> err &&
  grep -q "warning: --partition-type esp does not suit exFAT or NTFS" err && pass || fail "esp on exFAT: $(cat err)"
"$FSIMG" mkfs -t fat32 -s 64M --partition-table mbr --partition-type linux linux-fat.img > out 2> err &&
  grep -q "warning: --partition-type linux does not suit FAT" err && pass || fail "linux on FAT: $(cat err)"
for spec in "fat32 gpt esp" "fat32 mbr esp" "fat16 mbr 0x0e" "ntfs mbr 7"; do
  set -- $spec
  "$FSIMG" mkfs -t $1 -s 64M --partition-table $2 --partition-type $3 suit.img --force > out 2> err &&
    ! grep -q "does not suit" err && pass || fail "$spec: $(cat err)"
done

# --hidden-sectors without a table: in the NTFS boot sector (0x1C).
"$FSIMG" mkfs -q -t ntfs -s 64M --hidden-sectors 63 ntfs.img || fail "mkfs ntfs"
hid=$(python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(0x1C); print(struct.unpack("<I",f.read(4))[0])' ntfs.img)
[ "$hid" = 63 ] && pass || fail "NTFS hidden sectors $hid, expected 63"
"$FSIMG" mkfs -q -t fat32 -s 64M --hidden-sectors 2048 fat.img || fail "mkfs fat"
hid=$(python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(0x1C); print(struct.unpack("<I",f.read(4))[0])' fat.img)
[ "$hid" = 2048 ] && pass || fail "BPB_HiddSec $hid, expected 2048"

# Refusals: usage errors, and no image left behind.
refuse() {  # refuse TEXT MKFS_ARGS...
  local text=$1; shift
  expect_fail 2 "$text" "$FSIMG" mkfs -t fat32 -s 64M "$@" refused.img
  [ ! -e refused.img ] && pass || { fail "mkfs $* left refused.img"; rm -f refused.img; }
}
refuse "--partition-type x: give a name" --partition-table mbr --partition-type x
refuse "--partition-type fff: give a name" --partition-table mbr --partition-type fff
refuse "--partition-type 0: give a name" --partition-table mbr --partition-type 0
refuse "--partition-type c: give a name" --partition-table gpt --partition-type c
refuse "--partition-type bios-boot" --partition-table mbr --partition-type bios-boot
refuse "--partition-type needs --partition-table" --partition-type c
refuse "--bootable sets the MBR active flag" --partition-table gpt --bootable
refuse "--partition-uuid is for GPT" --partition-table mbr --partition-uuid 11111111-2222-3333-4444-555555555555
refuse "--partition-name" --partition-table mbr --partition-name x
refuse "--partition-uuid 1234: not a GUID" --partition-table gpt --partition-uuid 1234
refuse "longer than the 36 UTF-16 units" --partition-table gpt --partition-name "$(printf 'x%.0s' {1..37})"
refuse '--disk-id "zz" is not a 32-bit' --partition-table mbr --disk-id zz
refuse "--disk-id zz: a GPT disk ID is a GUID" --partition-table gpt --disk-id zz
refuse "--hidden-sectors is for an image without a partition table" --partition-table mbr --hidden-sectors 63
refuse "--hidden-sectors 4294967296 is not a 32-bit" --hidden-sectors 4294967296
refuse "--hidden-sectors 99999999999999999999999: give a number" --hidden-sectors 99999999999999999999999
refuse "sector 0 holds the partition table" --partition-table mbr --partition-start 0s
refuse "--partition-start 511 is not a whole number of 512-byte sectors" --partition-table mbr --partition-start 511
refuse "give a size (1M) or sectors (2048s)" --partition-table mbr --partition-start 99999999999999999999999s
refuse "cannot start at sector 10: the table takes sectors 0..33" --partition-table gpt --partition-start 10s
refuse "too small for a mbr partition table" --partition-table mbr --partition-start 100M
# The "no partition table" note: only for an image that looks like a whole disk, and never after an
# error (it was printed before the image was written): not for a floppy-sized volume, not for a
# partition image made for a later disk (--hidden-sectors).
nt_note() { "$FSIMG" mkfs "$@" 2>&1 | grep -c "no partition table: Windows handles"; }
[ "$(nt_note -t fat32 -s 64M nn1.img)" = 1 ] && [ "$(nt_note -t exfat -s 64M nn2.img)" = 1 ] && pass ||
  fail "the note is missing on a 64 MiB image"
[ "$(nt_note -t fat12 -s 1440K nn3.img)" = 0 ] && [ "$(nt_note -t fat32 -s 64M --hidden-sectors 2048 nn4.img)" = 0 ] &&
  pass || fail "the note on a floppy or a partition image"
mkdir -p big && head -c 20000000 /dev/zero > big/f
[ "$(nt_note -t fat16 -s 8M --from big nn5.img)" = 0 ] && [ ! -e nn5.img ] && pass || fail "the note after an error"
finish
