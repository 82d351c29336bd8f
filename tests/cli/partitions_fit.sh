#!/usr/bin/env bash
# A partition table and its filesystems that disagree (issue 21). Each case
# is what the kernel does with the same bytes: Linux truncates a partition
# running past the end of the disk to the disk ("p2 size N extends beyond
# EOD, truncated", block/partitions/core.c) and skips one starting past it;
# the filesystem drivers do not read BPB_HiddSec, PartitionOffset or NTFS's
# hidden sectors, which the boot code adds to find its volume (FATGEN
# "BPB_HiddSec"; exFAT spec 3.1.6 "PartitionOffset ... shall aid
# boot-strapping", 0 = ignore). fsimg lists every partition with the part
# the image holds, reports the disagreement once (part.entry.past-image,
# part.entry.outside, part.gpt.past-image) and keeps the other partitions
# readable; a filesystem larger than its partition is reported as the
# partition being short, not the image.
# cost: 11
here=$(dirname "$0"); . "$here/../lib.sh"
command -v sfdisk >/dev/null || { echo "sfdisk missing (scripts/install-deps): skipped"; exit 77; }
cd "$WORK"
export SOURCE_DATE_EPOCH=1700000000
fsck_codes() {  # fsck_codes IMAGE@N: "severity code" per finding, sorted
  "$FSIMG" fsck --json "$1" 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]: print(f["severity"], f["code"])' | sort | tr '\n' ' ' | sed 's/ $//'
}
fsck_message() {  # fsck_message IMAGE@N CODE
  "$FSIMG" fsck --json "$1" 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if f["code"] == sys.argv[1]: print(f["message"])' "$2"
  return 0  # fsck's own exit status (4) is not the point here
}
put32() { python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[3])); f.write(struct.pack("<I", int(sys.argv[2])))' "$@"; }

# A 64 MiB card: FAT16 in 2048 + 40960, exFAT in 43008 + 88064 (to the end).
truncate -s 64M disk.img
sfdisk -q disk.img <<'EOF' >/dev/null
label: dos
start=2048, size=40960, type=6
start=43008, size=88064, type=7
EOF
printf 'first\n' > one.txt; mkdir -p t1 && cp one.txt t1/
"$FSIMG" mkfs -q -t fat16 -s $((40960 * 512)) --from t1 v1.img || fail "mkfs v1"
"$FSIMG" mkfs -q -t exfat -s $((88064 * 512)) v2.img || fail "mkfs v2"
dd if=v1.img of=disk.img bs=512 seek=2048 conv=notrunc status=none
dd if=v2.img of=disk.img bs=512 seek=43008 conv=notrunc status=none
[ -z "$(fsck_codes disk.img@1)" ] && [ -z "$(fsck_codes disk.img@2)" ] && pass ||
  fail "the sound disk: $(fsck_codes disk.img@1) / $(fsck_codes disk.img@2)"

# The image cut inside partition 2 (a dd that stopped at 48 MiB): partition 1
# is whole and reads; partition 2 is read as far as the image goes.
cp disk.img cut.img && truncate -s 48M cut.img
[ "$(fsck_codes cut.img@1)" = "warning part.entry.past-image" ] && pass || fail "cut.img@1: $(fsck_codes cut.img@1)"
"$FSIMG" fsck cut.img@1 > /dev/null 2>&1 && pass || fail "fsck cut.img@1 is not clean (exit $?)"
fsck_message cut.img@1 part.entry.past-image | grep "^MBR entry 2 (type 0x07) spans LBA 43008 + 88064 sectors, 32768 sectors past the end of the image (98304 sectors of 512 bytes)" >/dev/null &&
  pass || fail "past-image message: $(fsck_message cut.img@1 part.entry.past-image)"
"$FSIMG" cat cut.img@1 /one.txt | cmp -s - one.txt && pass || fail "cat cut.img@1"
[ "$(fsck_codes cut.img@2)" = "error exfat.boot.image-truncated warning part.entry.past-image" ] && pass ||
  fail "cut.img@2: $(fsck_codes cut.img@2)"
msg=$(fsck_message cut.img@2 exfat.boot.image-truncated)
case $msg in "the image's part of partition 2 holds $(((98304 - 43008) * 512)) bytes, VolumeLength 88064 sectors"*) pass ;;
  *) fail "exfat truncation message: $msg" ;; esac
case $msg in *"shorter than its filesystem"*) fail "the image is short, not the partition: $msg" ;; *) pass ;; esac
"$FSIMG" dump cut.img > cut.txt || fail "dump cut.img: exit $?"
grep -q "problem: MBR entry 2 .* past the end of the image" cut.txt && pass || fail "dump cut.img: $(cat cut.txt)"

# Partition 2's entry moved past the end of the image: listed, not readable,
# an error of the table on every partition; partition 1 still reads.
cp disk.img far.img && put32 far.img 400000 $((446 + 16 + 8))
[ "$(fsck_codes far.img@1)" = "error part.entry.outside" ] && pass || fail "far.img@1: $(fsck_codes far.img@1)"
"$FSIMG" ls far.img@1 > /dev/null && pass || fail "ls far.img@1"
expect_fail 8 "partition 2 of \"far.img\" lies outside the image (LBA 400000 + 88064 sectors" "$FSIMG" fsck far.img@2
expect_fail 1 "lies outside the image" "$FSIMG" ls far.img@2
cp disk.img zero.img && put32 zero.img 0 $((446 + 16 + 8))  # starts on the MBR itself
fsck_message zero.img@1 part.entry.outside | grep "^MBR entry 2 (type 0x07) starts at LBA 0, on the partition table itself" >/dev/null &&
  pass || fail "zero.img: $(fsck_codes zero.img@1)"

# A filesystem larger than its partition: the entry is what is short (the
# image holds the rest), said as such, once, for FAT and NTFS.
for t in fat16 ntfs; do
  truncate -s 64M big-$t.img
  printf 'label: dos\nstart=2048, size=40960, type=7\n' | sfdisk -q big-$t.img >/dev/null
  "$FSIMG" mkfs -q -t $t -s $((43008 * 512)) vb-$t.img || fail "mkfs vb-$t"
  dd if=vb-$t.img of=big-$t.img bs=512 seek=2048 conv=notrunc status=none
  code=${t%16}.boot.image-truncated
  [ "$(fsck_codes big-$t.img@1)" = "error $code" ] && pass || fail "big-$t.img: $(fsck_codes big-$t.img@1)"
  msg=$(fsck_message big-$t.img@1 $code)
  case $msg in *"partition 1 holds 20971520 bytes"*"; partition 1 is "*" sectors of 512 bytes shorter than its filesystem (the image holds the missing bytes after the partition's end"*) pass ;;
    *) fail "$t: the partition is not named as short: $msg" ;; esac
done

# Boot sectors that record another start than their partition's: a warning
# (boot code would miss the volume; the drivers mount it). 0 = not recorded.
truncate -s 64M hid.img
printf 'label: dos\nstart=2048, size=40960, type=6\nstart=43008, size=40960, type=7\nstart=83968, size=40960, type=7\n' |
  sfdisk -q hid.img >/dev/null
truncate -s $((40960 * 512)) h1.img h3.img
mkfs.fat -F 16 -h 63 h1.img >/dev/null || fail "mkfs.fat -h 63"
dd if=h1.img of=hid.img bs=512 seek=2048 conv=notrunc status=none
[ "$(fsck_codes hid.img@1)" = "warning fat.boot.hidden-sectors" ] && pass || fail "hid.img@1: $(fsck_codes hid.img@1)"
fsck_message hid.img@1 fat.boot.hidden-sectors | grep "^BPB_HiddSec is 63, the partition starts at sector 2048" >/dev/null &&
  pass || fail "hidden-sectors message: $(fsck_message hid.img@1 fat.boot.hidden-sectors)"
truncate -s 0 h1.img && truncate -s $((40960 * 512)) h1.img && mkfs.fat -F 16 h1.img >/dev/null  # HiddSec 0
dd if=h1.img of=hid.img bs=512 seek=2048 conv=notrunc status=none
[ -z "$(fsck_codes hid.img@1)" ] && pass || fail "HiddSec 0 is not recorded, not wrong: $(fsck_codes hid.img@1)"
"$FSIMG" mkfs -q -t exfat -s $((40960 * 512)) h2.img || fail "mkfs h2"
# PartitionOffset 63 and the boot checksum over sectors 0..10 recomputed
# (exFAT spec 3.4: VolumeFlags and PercentInUse left out), both regions.
python3 - h2.img <<'PY' || fail "patch PartitionOffset"
import struct, sys
f = open(sys.argv[1], "r+b")
for region in (0, 12):
    f.seek(region * 512); b = bytearray(f.read(11 * 512))
    b[64:72] = struct.pack("<Q", 63)
    s = 0
    for i, x in enumerate(b):
        if i in (106, 107, 112): continue
        s = (((s & 1) << 31) | (s >> 1)) + x & 0xFFFFFFFF
    f.seek(region * 512); f.write(b); f.write(struct.pack("<I", s) * 128)
PY
dd if=h2.img of=hid.img bs=512 seek=43008 conv=notrunc status=none
[ "$(fsck_codes hid.img@2)" = "warning exfat.boot.partition-offset" ] && pass || fail "hid.img@2: $(fsck_codes hid.img@2)"
"$FSIMG" fsck h2.img > /dev/null && pass || fail "a bare image may record its partition's start (exit $?)"
mkntfs -q -F -Q -p 63 h3.img >/dev/null 2>&1 || fail "mkntfs -p 63"
dd if=h3.img of=hid.img bs=512 seek=83968 conv=notrunc status=none
[ "$(fsck_codes hid.img@3)" = "warning ntfs.boot.hidden-sectors" ] && pass || fail "hid.img@3: $(fsck_codes hid.img@3)"
# A logical drive's hidden sectors: DOS recorded the start relative to the
# EBR, later Windows the absolute one; both are accepted, nothing else.
truncate -s 64M log.img
printf 'label: dos\nstart=2048, size=129024, type=5\nstart=4096, size=40960, type=6\n' | sfdisk -q log.img >/dev/null
for h in 2048 4096 63; do
  truncate -s 0 h5.img && truncate -s $((40960 * 512)) h5.img && mkfs.fat -F 16 -h $h h5.img >/dev/null
  dd if=h5.img of=log.img bs=512 seek=4096 conv=notrunc status=none
  want=; [ $h = 63 ] && want="warning fat.boot.hidden-sectors"
  [ "$(fsck_codes log.img@5)" = "$want" ] && pass || fail "log.img@5 with HiddSec $h: $(fsck_codes log.img@5)"
done
# What fsimg writes into a table records the partition's start.
"$FSIMG" mkfs -q -t fat32 --partition-table mbr -s 64M own.img || fail "mkfs --table mbr"
[ -z "$(fsck_codes own.img)" ] && pass || fail "own.img: $(fsck_codes own.img)"

# A GPT disk cut short: the primary header is used, the cut said once.
"$FSIMG" mkfs -q -t fat32 --partition-table gpt -s 64M gpt.img || fail "mkfs --table gpt"
truncate -s 40M gpt.img
[ "$(fsck_codes gpt.img)" = "error fat.boot.image-truncated warning part.gpt.past-image" ] && pass ||
  fail "gpt.img: $(fsck_codes gpt.img)"
fsck_message gpt.img part.gpt.past-image | grep "), the image holds 81920: the image is cut short; partition 1 runs past its end" >/dev/null &&
  pass || fail "gpt message: $(fsck_message gpt.img part.gpt.past-image)"
fsck_message gpt.img fat.boot.image-truncated | grep "but the image's part of partition 1 holds" >/dev/null && pass ||
  fail "gpt fat message: $(fsck_message gpt.img fat.boot.image-truncated)"
finish
