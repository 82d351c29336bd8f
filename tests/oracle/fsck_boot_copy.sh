#!/usr/bin/env bash
# fsck -p/-y picks the valid copy of the boot sector (issue 40): a copy is
# written over its twin only when it validates (jump, 55 AA, a geometry that
# derives and agrees with the volume: it fits the image, FAT[0] holds its
# media byte; NTFS: every boot rule and $MFT record 0 where it says).
# FAT32 made by mkfs.fat + mcopy: sector 0 without its signature, zeroed,
# with BPB_BytsPerSec 0, or with a media byte the FAT does not hold is
# rewritten from the backup boot sector (before, -p copied the damaged sector
# 0 over the good backup); a damaged backup is rewritten from sector 0; when
# neither copy validates, -p changes nothing (same sha256, exit 4) and -y
# writes the 55 AA that is all sector 0 lacks, then the backup from it. FAT16
# without a signature: -p leaves it, -y writes 55 AA. NTFS made by fsimg: the
# same three cases. exFAT: the main boot region (its checksum wrong, sector 0
# wiped) from a whole backup region, a damaged backup region from the main
# one, neither whole: left. After each repair fsck.fat -n / ntfsfix -n /
# fsck.exfat -n and our fsck
# find nothing, both copies are byte-equal, and mtools / ntfs-3g read every
# file. The FAT32 restore is cut after every write (FSIMG_TEST_CUT_AFTER_WRITES):
# files still read, and -p run again finishes it.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p tree/dir
printf 'hello\n' > tree/a.txt
head -c 50000 /dev/urandom > tree/dir/b.bin
sector() { dd if="$1" bs=512 skip="$2" count=1 status=none | od -An -tx1 | tr -d ' \n'; }
mtools_ok() { mtype -i "$1" ::a.txt | cmp -s - tree/a.txt && mtype -i "$1" ::dir/b.bin | cmp -s - tree/dir/b.bin; }
ours_ok() { "$FSIMG" cat "$1" /a.txt | cmp -s - tree/a.txt && "$FSIMG" cat "$1" /dir/b.bin | cmp -s - tree/dir/b.bin; }

truncate -s 64M f32.img
mkfs.fat -F 32 -i 12345678 f32.img > /dev/null
mcopy -s -i f32.img tree/a.txt tree/dir :: || fail "mcopy"
good=$(sector f32.img 0)

# fat_case NAME OFFSET HEX EXPECTED-BEFORE REPAIRED-CODE: damage, -p, judge.
fat_case() {
  local name=$1 at=$2 hex=$3 want=$4 code=$5 img=$1.img
  cp f32.img "$img"
  poke "$img" "$at" "$hex"
  [ "$(fsck_codes "$img")" = "$want" ] && pass || fail "$name before: $(fsck_codes "$img"), expected $want"
  ours_ok "$img" && pass || fail "$name: fsimg cannot read the files before the repair"
  "$FSIMG" fsck -p "$img" > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && pass || fail "$name: fsck -p exit $rc: $(cat rep.out)"
  grep -q "^repaired $code: sector 0 rewritten from the backup boot sector (sector 6), which validates; sector 0 did not" rep.out &&
    pass || fail "$name: $(cat rep.out)"
  [ "$(sector "$img" 0)" = "$good" ] && [ "$(sector "$img" 6)" = "$good" ] && pass || fail "$name: sector 0 or 6 is not the original"
  [ -z "$(fsck_codes "$img")" ] && pass || fail "$name: left $(fsck_codes "$img")"
  fsck.fat -n "$img" > ref.out 2>&1 && pass || fail "$name: fsck.fat -n: $(cat ref.out)"
  mtools_ok "$img" && pass || fail "$name: mtools reads different files"
}
fat_case nosig 510 0000 "fat.boot.backup-differs fat.boot.signature" fat.boot.signature
fat_case zeroed 0 "$(printf '%01024d' 0)" "fat.boot.main-damaged" fat.boot.main-damaged  # all 512 bytes (a wipe)
fat_case bps0 11 0000 "fat.boot.main-damaged" fat.boot.main-damaged
# BPB_Media F0 is a valid value, but FAT[0] says F8: sector 0 does not agree with its volume.
fat_case media 21 f0 "fat.boot.backup-differs fat.fat.media" fat.boot.backup-differs

# The restore cut after every write: the files read, and -p run again finishes.
cp f32.img cut0.img
poke cut0.img 510 0000
FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" fsck -p cut0.img > /dev/null 2> count.err
total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
[ -n "$total" ] && [ "$total" -ge 3 ] && pass || fail "write count: $(cat count.err)"
cp f32.img cut0.img
poke cut0.img 510 0000
for n in $(seq 1 $((total - 1))); do
  cp cut0.img cut.img
  FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" fsck -p cut.img > /dev/null 2>&1; rc=$?
  [ $rc = 99 ] || fail "cut after write $n: exit $rc"
  ours_ok cut.img || fail "cut $n: files unreadable"
  for c in $(fsck_codes cut.img); do
    case " fat.boot.backup-differs fat.boot.signature fat.fat.dirty " in *" $c "*) ;; *) fail "cut $n added $c" ;; esac
  done
  "$FSIMG" fsck -p cut.img > /dev/null 2>&1; rc=$?
  [ $rc = 1 ] && [ -z "$(fsck_codes cut.img)" ] && [ "$(sector cut.img 6)" = "$good" ] && pass ||
    fail "repair after cut $n: exit $rc, left $(fsck_codes cut.img)"
done

# The backup damaged: rewritten from sector 0, which validates.
cp f32.img bk.img
poke bk.img $((512 * 6 + 510)) 0000
"$FSIMG" fsck -p bk.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired fat.boot.backup-differs: the backup boot sector (sector 6) rewritten from sector 0, which validates; the backup did not: bytes 510-511 are 00 00, not 55 AA" rep.out &&
  pass || fail "backup damaged: exit $rc: $(cat rep.out)"
[ "$(sector bk.img 6)" = "$good" ] && [ -z "$(fsck_codes bk.img)" ] && fsck.fat -n bk.img > /dev/null 2>&1 && pass ||
  fail "backup damaged: left $(fsck_codes bk.img)"

# Neither copy validates: -p changes nothing (both left, exit 4); -y writes
# the 55 AA sector 0 lacks (its BPB agrees with the FAT), then the backup from it.
cp f32.img both.img
poke both.img 510 0000
poke both.img $((512 * 6 + 510)) 0000
poke both.img $((512 * 6 + 0x47)) 4f4c44  # and the backup's label differs
sha=$(sha256sum < both.img)
"$FSIMG" fsck -p both.img > rep.out 2>&1; rc=$?
[ $rc = 4 ] && [ "$(sha256sum < both.img)" = "$sha" ] && ! grep -q '^repaired' rep.out && pass ||
  fail "neither valid, -p: exit $rc or the image changed: $(cat rep.out)"
"$FSIMG" fsck -y both.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired fat.boot.signature: the signature 55 AA written" rep.out &&
  grep -q "^repaired fat.boot.backup-differs: the backup boot sector (sector 6) rewritten from sector 0" rep.out && pass ||
  fail "neither valid, -y: exit $rc: $(cat rep.out)"
[ "$(sector both.img 0)" = "$good" ] && [ "$(sector both.img 6)" = "$good" ] && [ -z "$(fsck_codes both.img)" ] &&
  fsck.fat -n both.img > /dev/null 2>&1 && mtools_ok both.img && pass || fail "neither valid, -y: left $(fsck_codes both.img)"

# FAT16 without a signature (no backup): -p leaves it; -y writes 55 AA, as the BPB agrees with the FAT.
truncate -s 32M f16.img
mkfs.fat -F 16 -i 12345678 f16.img > /dev/null
mcopy -s -i f16.img tree/a.txt tree/dir :: || fail "mcopy f16"
good16=$(sector f16.img 0)
poke f16.img 510 0000
sha=$(sha256sum < f16.img)
"$FSIMG" fsck -p f16.img > rep.out 2>&1; rc=$?
[ $rc = 4 ] && [ "$(sha256sum < f16.img)" = "$sha" ] && pass || fail "f16 -p: exit $rc or changed: $(cat rep.out)"
"$FSIMG" fsck -y f16.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired fat.boot.signature: the signature 55 AA written" rep.out && pass ||
  fail "f16 -y: exit $rc: $(cat rep.out)"
[ "$(sector f16.img 0)" = "$good16" ] && [ -z "$(fsck_codes f16.img)" ] && fsck.fat -n f16.img > /dev/null 2>&1 && mtools_ok f16.img &&
  pass || fail "f16 after -y: left $(fsck_codes f16.img)"

# NTFS: sector 0 from the backup, the backup from sector 0, neither.
"$FSIMG" mkfs -q -t ntfs -s 32M --from tree nt.img || fail "mkfs ntfs"
ntgood=$(sector nt.img 0)
last=$(( $(stat -c %s nt.img) / 512 - 1 ))
ntfs_ok() { ntfscat "$1" /a.txt 2>/dev/null | cmp -s - tree/a.txt && ntfscat "$1" /dir/b.bin 2>/dev/null | cmp -s - tree/dir/b.bin; }
cp nt.img nt0.img
poke nt0.img 510 0000
[ "$(fsck_codes nt0.img)" = "ntfs.boot.signature" ] && pass || fail "nt0 before: $(fsck_codes nt0.img)"
"$FSIMG" fsck -p nt0.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired ntfs.boot.signature: sector 0 rewritten from the backup boot sector at byte $((last * 512)), which is valid" rep.out &&
  pass || fail "nt0: exit $rc: $(cat rep.out)"
[ "$(sector nt0.img 0)" = "$ntgood" ] && [ -z "$(fsck_codes nt0.img)" ] && ntfsfix -n nt0.img > /dev/null 2>&1 && ntfs_ok nt0.img &&
  pass || fail "nt0 after: left $(fsck_codes nt0.img)"
cp nt.img ntb.img
poke ntb.img $((last * 512 + 510)) 0000
"$FSIMG" fsck -p ntb.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired ntfs.boot.backup-differs: the backup boot sector" rep.out && pass || fail "ntb: exit $rc: $(cat rep.out)"
[ "$(sector ntb.img "$last")" = "$ntgood" ] && [ -z "$(fsck_codes ntb.img)" ] && ntfs_ok ntb.img && pass || fail "ntb after: left $(fsck_codes ntb.img)"
cp nt.img ntn.img
poke ntn.img 510 0000
poke ntn.img $((last * 512 + 510)) 0000
sha=$(sha256sum < ntn.img)
for mode in -p -y; do
  "$FSIMG" fsck $mode ntn.img > rep.out 2>&1; rc=$?
  [ $rc = 4 ] && [ "$(sha256sum < ntn.img)" = "$sha" ] && pass || fail "ntfs neither valid, $mode: exit $rc or changed: $(cat rep.out)"
done
# exFAT: the main boot region from the backup, the backup from the main, neither.
"$FSIMG" mkfs -q -t exfat -s 32M --volume-id 12345678 --from tree ex.img || fail "mkfs exfat"
region() { dd if="$1" bs=512 skip="$2" count=12 status=none | cksum; }
exgood=$(region ex.img 0)
cp ex.img ex0.img
poke ex0.img 100 01  # the serial's low byte (0x78): the main checksum no longer matches
[ "$(fsck_codes ex0.img)" = "exfat.boot.checksum" ] && pass || fail "ex0 before: $(fsck_codes ex0.img)"
"$FSIMG" fsck -p ex0.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired exfat.boot.checksum: the main boot region (sectors 0..11) rewritten from the backup boot region (sectors 12..23), which is whole" rep.out &&
  pass || fail "ex0: exit $rc: $(cat rep.out)"
cmp -s ex.img ex0.img && fsck.exfat -n ex0.img > /dev/null 2>&1 && ours_ok ex0.img && pass || fail "ex0 after: not the original"
cp ex.img exz.img
dd if=/dev/zero of=exz.img bs=512 count=1 conv=notrunc status=none  # sector 0 wiped
"$FSIMG" fsck -p exz.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired exfat.boot.main-zeroed: the main boot region" rep.out && cmp -s ex.img exz.img &&
  fsck.exfat -n exz.img > /dev/null 2>&1 && pass || fail "exz: exit $rc: $(cat rep.out)"
cp ex.img exb.img
poke exb.img $((12 * 512 + 100)) 01
"$FSIMG" fsck -p exb.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired exfat.boot.backup-checksum: the backup boot region (sectors 12..23) rewritten from the main one" rep.out &&
  [ "$(region exb.img 12)" = "$exgood" ] && [ -z "$(fsck_codes exb.img)" ] && fsck.exfat -n exb.img > /dev/null 2>&1 &&
  pass || fail "exb: exit $rc: $(cat rep.out)"
cp ex.img exn.img
poke exn.img 100 01
poke exn.img $((12 * 512 + 100)) 02
sum=$(cksum < exn.img)
for mode in -p -y; do
  "$FSIMG" fsck $mode exn.img > rep.out 2>&1; rc=$?
  [ $rc = 4 ] && [ "$(cksum < exn.img)" = "$sum" ] && pass || fail "exfat neither whole, $mode: exit $rc or changed: $(cat rep.out)"
done
finish
