#!/usr/bin/env bash
# fsck -a/-p/-y (issue 23, the preen repairs): on FAT32 and FAT16 images made
# by mkfs.fat + mcopy and an exFAT image made by mkfs.exfat, each damaged the
# way an unclean unmount and a stale count leave them (dirty flags, FSInfo's
# free count and next-free hint, a FAT32 backup boot sector that differs,
# exFAT VolumeDirty and PercentInUse), fsimg fsck -p must exit 1 (errors
# corrected), leave an image the reference checker (fsck.fat -n, fsck.exfat
# -n) and our own fsck -n call clean, with every file byte-exact (mtools /
# check-image --manifest), change nothing on a second run (exit 0, same
# sha256), and `fsimg undo` must put back the original bytes exactly. Cut
# after every write of the repair (FSIMG_TEST_CUT_AFTER_WRITES), the image
# must read as before, no worse than the damage plus the dirty flag. A volume
# with an error preen does not repair keeps its dirty flag and exits 4. On
# NTFS (made by fsimg), $MFTMirr and the backup boot sector are rewritten
# from their twins and ntfsfix -n agrees; $Bitmap and $MFT's $BITMAP bits
# are made what the records say (-p sets, -y clears).
# cost: 25
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p tree/dir
printf 'hello\n' > tree/a.txt
head -c 50000 /dev/urandom > tree/dir/b.bin
files_ok() {  # files_ok IMG TYPE [ours]: every file reads back byte-exact (mtools for FAT unless "ours")
  if [ "$2" = exfat ] || [ "${3:-}" = ours ]; then
    "$FSIMG" cat "$1" /a.txt | cmp -s - tree/a.txt && "$FSIMG" cat "$1" /dir/b.bin | cmp -s - tree/dir/b.bin
  else
    mtype -i "$1" ::a.txt | cmp -s - tree/a.txt && mtype -i "$1" ::dir/b.bin | cmp -s - tree/dir/b.bin
  fi
}
ref_check() {  # ref_check IMG TYPE
  if [ "$2" = exfat ]; then fsck.exfat -n "$1" >/dev/null 2>&1; else fsck.fat -n "$1" >/dev/null 2>&1; fi
}

make_fat() {  # make_fat IMG BITS
  truncate -s 64M "$1"
  mkfs.fat -F "$2" -i 12345678 "$1" >/dev/null
  mcopy -s -i "$1" tree/a.txt tree/dir :: || fail "mcopy"
}
make_fat f32.img 32
poke f32.img 0x41 01                  # BS_Reserved1 dirty bit
poke f32.img $((512 * 2 + 4 + 3)) 00  # FAT 1 entry 1: clean-shutdown bit cleared (top byte 0x0F -> 0x00 keeps no-error clear too)
poke f32.img $((512 * 2 + 4 + 3)) 07  #   ... clean bit (0x08) off, no-error bit (0x04) on
poke f32.img $((512 + 0x1E8)) 05000000    # FSI_Free_Count 5
poke f32.img $((512 + 0x1EC)) ffffff7f    # FSI_Nxt_Free far past the volume
poke f32.img $((512 * 6 + 0x2B)) 4f4c44   # backup boot sector: a label byte differs ("OLD")
make_fat f16.img 16
poke f16.img 0x25 01
# FAT[1] 0xFFFF -> 0x7FFF in both FATs (clean bit off), as Windows leaves a volume it had mounted.
for k in 0 1; do
  at=$(python3 -c 'import struct, sys; b = open("f16.img", "rb").read(24)
print((struct.unpack_from("<H", b, 14)[0] + int(sys.argv[1]) * struct.unpack_from("<H", b, 22)[0]) * 512 + 3)' $k)
  poke f16.img "$at" 7f
done
truncate -s 64M ex.img && mkfs.exfat -q ex.img >/dev/null 2>&1 || mkfs.exfat ex.img >/dev/null
# (exFAT content through fsimg cp: the repair must keep it)
"$FSIMG" cp -r ex.img tree/a.txt tree/dir / >/dev/null || fail "fsimg cp into ex.img"
poke ex.img 106 0200   # VolumeDirty
poke ex.img 112 4d     # PercentInUse 77

for pair in "f32.img fat" "f16.img fat" "ex.img exfat"; do
  set -- $pair; img=$1 type=$2
  # (mtools refuses a FAT16 whose FAT[1] is 0x7FFF, "Error reading FAT": fsimg reads it)
  files_ok "$img" $type ours && pass || fail "$img: files unreadable before the repair"
  before=$(fsck_codes "$img")
  [ -n "$before" ] && pass || fail "$img: no findings before the repair"
  cp "$img" orig-$img
  sha_orig=$(sha256sum < "$img")
  # Every cut of the repair leaves the files readable and the image no worse.
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" fsck -p "$img" > /dev/null 2> count.err
  total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  cp orig-$img "$img"
  [ -n "$total" ] && [ "$total" -ge 2 ] && pass || fail "$img: write count: $(cat count.err)"
  for n in $(seq 1 $((total - 1))); do
    cp orig-$img cut-$img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" fsck -p cut-$img >/dev/null 2>&1; rc=$?
    [ $rc = 99 ] || fail "$img: cut after write $n: exit $rc"
    files_ok cut-$img $type || fail "$img: files unreadable after cut $n"
    after=$(fsck_codes cut-$img)
    for c in $after; do
      case " $before fat.fat.dirty fat.boot.dirty exfat.boot.dirty " in *" $c "*) ;; *) fail "$img: cut $n added $c" ;; esac
    done
    "$FSIMG" fsck -p cut-$img > /dev/null 2>&1; rc=$?
    [ $rc = 1 ] && [ -z "$(fsck_codes cut-$img)" ] && pass || fail "$img: repair after cut $n: exit $rc, left $(fsck_codes cut-$img)"
  done
  # The repair itself, with an undo file.
  "$FSIMG" fsck -p --undo $img.undo "$img" > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && pass || fail "$img: fsck -p exit $rc: $(cat rep.out)"
  grep -q "^$img: [0-9]* repairs\? made; clean" rep.out && pass || fail "$img: $(cat rep.out)"
  [ -z "$(fsck_codes "$img")" ] && pass || fail "$img: left $(fsck_codes "$img")"
  ref_check "$img" $type && pass || fail "$img: the reference checker objects"
  files_ok "$img" $type && pass || fail "$img: files differ"
  sha_fixed=$(sha256sum < "$img")
  "$FSIMG" fsck -p "$img" > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < "$img")" = "$sha_fixed" ] && pass || fail "$img: second -p: exit $rc or changed"
  "$FSIMG" fsck -y "$img" > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < "$img")" = "$sha_fixed" ] && pass || fail "$img: -y after -p: exit $rc or changed"
  "$FSIMG" undo $img.undo "$img" > /dev/null 2> undo.err && pass || fail "$img: undo: $(cat undo.err)"
  [ "$(sha256sum < "$img")" = "$sha_orig" ] && pass || fail "$img: undo did not restore the original bytes"
  # Undo refuses twice (the bytes no longer hold what the repair wrote) and an existing undo file.
  expect_fail 3 "no longer hold what the repair wrote" "$FSIMG" undo $img.undo "$img"
  expect_fail 8 "never overwritten" "$FSIMG" fsck -p --undo $img.undo "$img"
  [ "$(sha256sum < "$img")" = "$sha_orig" ] && pass || fail "$img: a refused command changed the image"
done
files_ok ex.img exfat && pass || fail "ex.img files after undo"

# NTFS: $MFTMirr and the backup boot sector rewritten from their twins;
# ntfsfix -n (ntfs-3g's check of the mirror) and our fsck agree afterwards,
# ntfs-3g reads every file, and undo restores the bytes.
"$FSIMG" mkfs -q -t ntfs -s 32M --from tree nt.img || fail "mkfs ntfs"
python3 "$here/../tools/ntfs_damage.py" nt.img mftmirr-differs > /dev/null || fail "damage mftmirr"
python3 "$here/../tools/ntfs_damage.py" nt.img boot-backup-differs > /dev/null || fail "damage boot backup"
[ "$(fsck_codes nt.img)" = "ntfs.boot.backup-differs ntfs.mftmirr.differs" ] && pass || fail "nt.img before: $(fsck_codes nt.img)"
ntfsfix -n nt.img > /dev/null 2>&1 && fail "ntfsfix -n does not see the mirror damage" || pass
sha_orig=$(sha256sum < nt.img)
"$FSIMG" fsck -p --undo nt.undo nt.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired ntfs.mftmirr.differs: \$MFTMirr rewritten from \$MFT: records 0..3" rep.out && pass ||
  fail "nt.img: exit $rc: $(cat rep.out)"
[ -z "$(fsck_codes nt.img)" ] && pass || fail "nt.img left $(fsck_codes nt.img)"
ntfsfix -n nt.img > ntfsfix.out 2>&1 && pass || fail "ntfsfix -n after the repair: $(cat ntfsfix.out)"
ntfscat nt.img /a.txt 2>/dev/null | cmp -s - tree/a.txt && ntfscat nt.img /dir/b.bin 2>/dev/null | cmp -s - tree/dir/b.bin &&
  pass || fail "ntfs-3g does not read the files back"
"$FSIMG" fsck -y nt.img > /dev/null 2>&1; [ $? = 0 ] && pass || fail "nt.img: second run"
"$FSIMG" undo nt.undo nt.img > /dev/null && [ "$(sha256sum < nt.img)" = "$sha_orig" ] && pass || fail "nt.img: undo"

# NTFS: $Bitmap and $MFT's $BITMAP made what the records say. A cluster of A.TXT or E.TXT's
# record marked free: -p marks it (nothing is given up), and the image is byte for byte the one
# before the damage. A cluster nothing owns, a record not in use marked in use: -p leaves them
# (exit 4, unchanged), -y clears the bit (the cluster's image again; for the record, one byte
# changed). ntfsfix -n clean, ntfs-3g reads A.TXT.
mkdir -p ntree; head -c 7000 /dev/urandom > ntree/A.TXT; : > ntree/E.TXT
"$FSIMG" mkfs -q -t ntfs -s 32M --volume-id 0123456789ABCDEF --from ntree nb.img || fail "mkfs ntfs nb.img"
cp nb.img clean.img
for kind in bitmap-free-in-use mft-bitmap-unmarked bitmap-lost mft-bitmap-marked-free; do
  cp clean.img nb.img
  python3 "$here/../tools/ntfs_damage.py" nb.img $kind > /dev/null || fail "ntfs $kind: damage"
  cp nb.img damaged.img
  case $kind in mft-bitmap-*) code=ntfs.mft-bitmap.${kind#mft-bitmap-} ;; *) code=ntfs.${kind/-/.} ;; esac
  "$FSIMG" fsck -p nb.img > rep.out 2>&1; rc=$?
  case $kind in
    bitmap-free-in-use | mft-bitmap-unmarked)
      [ $rc = 1 ] && grep -q "^repaired $code: 1 " rep.out && cmp -s nb.img clean.img && pass ||
        fail "ntfs $kind: -p exit $rc, or not the image before the damage: $(cat rep.out)" ;;
    *)
      [ $rc = 4 ] && cmp -s nb.img damaged.img && pass || fail "ntfs $kind: -p exit $rc or changed"
      rm -f nb.undo
      "$FSIMG" fsck -y --undo nb.undo nb.img > rep.out 2>&1; rc=$?
      [ $rc = 1 ] && grep -q "^repaired $code: 1 " rep.out && pass || fail "ntfs $kind: -y exit $rc: $(cat rep.out)"
      if [ $kind = bitmap-lost ]; then cmp -s nb.img clean.img && pass || fail "ntfs $kind: not the image before the damage"
      else [ "$(cmp -l nb.img damaged.img | wc -l)" = 1 ] && pass || fail "ntfs $kind: more than the bitmap byte changed"; fi
      "$FSIMG" undo nb.undo nb.img > /dev/null && cmp -s nb.img damaged.img && pass || fail "ntfs $kind: undo"
      "$FSIMG" fsck -y nb.img > /dev/null 2>&1 ;;
  esac
  [ -z "$(fsck_codes nb.img)" ] && pass || fail "ntfs $kind: left $(fsck_codes nb.img)"
  ntfsfix -n nb.img > ntfsfix.out 2>&1 && ntfscat nb.img /A.TXT 2>/dev/null | cmp -s - ntree/A.TXT && pass ||
    fail "ntfs $kind: ntfsfix -n or ntfs-3g: $(cat ntfsfix.out)"
done

# NTFS record headers: A.TXT's link count 3 (it has one name), its $DATA given the instance of its
# $STANDARD_INFORMATION. -p sets the link count to its names and gives $DATA a new instance
# above the others (the record's next instance raised past it); each repair is the image before
# the damage but for those bytes; ntfsfix -n clean, ntfs-3g reads A.TXT; a cut after any write
# leaves A.TXT readable and -y finishes.
for kind in rec-link-count attr-instance; do
  cp clean.img nb.img
  python3 "$here/../tools/ntfs_damage.py" nb.img $kind > /dev/null || fail "ntfs $kind: damage"
  case $kind in rec-link-count) code=ntfs.record.link-count ;; *) code=ntfs.attr.instance ;; esac
  [ "$(fsck_codes nb.img)" = $code ] && pass || fail "ntfs $kind: fsck finds $(fsck_codes nb.img)"
  cp nb.img damaged.img
  "$FSIMG" fsck -p nb.img > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired $code: 1 record given " rep.out && pass || fail "ntfs $kind: -p exit $rc: $(cat rep.out)"
  [ -z "$(fsck_codes nb.img)" ] && pass || fail "ntfs $kind: left $(fsck_codes nb.img)"
  ntfsfix -n nb.img > ntfsfix.out 2>&1 && ntfscat nb.img /A.TXT 2>/dev/null | cmp -s - ntree/A.TXT && pass ||
    fail "ntfs $kind: ntfsfix -n or ntfs-3g: $(cat ntfsfix.out)"
  # What ntfs-3g reads of the record: one hard link; instances unique, each below the next one.
  ntfsinfo -F /A.TXT nb.img > info.out 2>&1
  next=$(sed -n 's/^Next Attribute Instance:[^(]*(0x\([0-9a-f]*\)).*/\1/p' info.out)
  inst=$(sed -n 's/^[[:space:]]*Attribute instance:[^(]*(0x\([0-9a-f]*\)).*/\1/p' info.out)
  grep -q "^Number of Hard Links:[[:space:]]*1 " info.out && [ -n "$next" ] &&
    [ "$(echo "$inst" | sort -u | wc -l)" = "$(echo "$inst" | wc -l)" ] &&
    [ -z "$(for i in $inst; do [ $((16#$i)) -lt $((16#$next)) ] || echo $i; done)" ] && pass ||
    fail "ntfs $kind: ntfsinfo reads: $(grep -E 'Hard Links|nstance' info.out | tr '\n' ' ')"
  "$FSIMG" fsck -y nb.img > /dev/null 2>&1; [ $? = 0 ] && pass || fail "ntfs $kind: second run"
  repair_cuts damaged.img "ntfs $kind" /A.TXT:ntree/A.TXT
done

# NTFS attribute sizes (-y only): A.TXT's $DATA initialized size one past its data size. -p
# leaves it (exit 4, unchanged); -y sets it to the data size (7000: what the file holds), ntfs-3g
# then reads every byte of A.TXT and ntfsinfo gives allocated 8192, data and initialized 7000.
cp clean.img nb.img
python3 "$here/../tools/ntfs_damage.py" nb.img attr-sizes > /dev/null || fail "ntfs attr-sizes: damage"
[ "$(fsck_codes nb.img)" = ntfs.attr.sizes ] && pass || fail "ntfs attr-sizes: fsck finds $(fsck_codes nb.img)"
cp nb.img damaged.img
"$FSIMG" fsck -p nb.img > rep.out 2>&1; rc=$?
[ $rc = 4 ] && cmp -s nb.img damaged.img && pass || fail "ntfs attr-sizes: -p exit $rc or changed"
"$FSIMG" fsck -y nb.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired ntfs.attr.sizes: 1 attribute given " rep.out && [ -z "$(fsck_codes nb.img)" ] && pass ||
  fail "ntfs attr-sizes: -y exit $rc, left $(fsck_codes nb.img): $(cat rep.out)"
ntfsfix -n nb.img > ntfsfix.out 2>&1 && ntfscat nb.img /A.TXT 2>/dev/null | cmp -s - ntree/A.TXT && pass ||
  fail "ntfs attr-sizes: ntfsfix -n or ntfs-3g: $(cat ntfsfix.out)"
ntfsinfo -F /A.TXT nb.img 2>/dev/null | tr -d '\t' | grep -E '^(Allocated size|Data size|Initialized size):' | tail -3 |
  tr '\n' ' ' | grep -q "^Data size: 7000 (0x1b58) Allocated size: 8192 (0x2000) Initialized size: 7000 (0x1b58) $" && pass ||
  fail "ntfs attr-sizes: ntfsinfo reads $(ntfsinfo -F /A.TXT nb.img 2>&1 | grep -i 'size:' | tr -d '\t' | tr '\n' ' ')"
repair_cuts damaged.img "ntfs attr-sizes" /A.TXT:ntree/A.TXT

# NTFS's dirty flag: cleared by -p last, only when nothing else is wrong
# (ntfsinfo refuses a dirty volume: it opens it after), and left by -p with
# a lost cluster beside it (exit 4); -y clears both.
cp clean.img nb.img
python3 "$here/../tools/ntfs_damage.py" nb.img volume-dirty > /dev/null || fail "ntfs volume-dirty: damage"
ntfsinfo -m nb.img > /dev/null 2>&1 && fail "ntfsinfo opens the dirty volume" || pass
rm -f nb.undo; cp nb.img damaged.img
"$FSIMG" fsck -p --undo nb.undo nb.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired ntfs.volume.dirty: \$Volume's dirty flag cleared" rep.out && [ -z "$(fsck_codes nb.img)" ] &&
  pass || fail "ntfs volume-dirty: -p exit $rc: $(cat rep.out)"
ntfsinfo -m nb.img > /dev/null 2>&1 && ntfsfix -n nb.img > /dev/null 2>&1 && pass || fail "ntfs volume-dirty: ntfsinfo or ntfsfix -n after -p"
"$FSIMG" undo nb.undo nb.img > /dev/null && cmp -s nb.img damaged.img && pass || fail "ntfs volume-dirty: undo"
python3 "$here/../tools/ntfs_damage.py" nb.img bitmap-lost > /dev/null || fail "ntfs volume-dirty + bitmap-lost: damage"
cp nb.img damaged.img
"$FSIMG" fsck -p nb.img > rep.out 2>&1; rc=$?
[ $rc = 4 ] && cmp -s nb.img damaged.img && pass || fail "ntfs dirty + lost: -p exit $rc or changed: $(cat rep.out)"
"$FSIMG" fsck -y nb.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired ntfs.volume.dirty" rep.out && grep -q "^repaired ntfs.bitmap.lost" rep.out &&
  [ -z "$(fsck_codes nb.img)" ] && pass || fail "ntfs dirty + lost: -y exit $rc: $(cat rep.out)"

# ntfs.index.sizes: an index entry whose data size is not its file's gets the
# file's sizes at -p (one in $INDEX_ROOT by ntfs_damage.py, one in an INDX
# block of a 60-file directory); only the entry's bytes and the node's
# update sequence number change; ntfs-3g reads the files.
cp clean.img nb.img
python3 "$here/../tools/ntfs_damage.py" nb.img index-sizes > /dev/null || fail "ntfs index-sizes: damage"
mkdir -p itree/many; for i in $(seq 1 60); do printf '%s\n' "$i" > "itree/many/file $i.txt"; done
"$FSIMG" mkfs -q -t ntfs -s 32M --from itree ni.img || fail "mkfs ntfs ni.img"
cp ni.img ni-clean.img
python3 - ni.img <<'EOF2'
import struct, sys
# "file 37.txt" in /many's INDX blocks: its key's data size (key at entry + 16, size at key + 0x30) + 1000.
data = bytearray(open(sys.argv[1], "rb").read())
i = data.find("file 37.txt".encode("utf-16-le"))
while i >= 0 and data[i // 4096 * 4096:i // 4096 * 4096 + 4] != b"INDX":  # the one in an INDX block
    i = data.find("file 37.txt".encode("utf-16-le"), i + 1)
o = i - 0x42 + 0x30
assert o % 512 < 504
struct.pack_into("<Q", data, o, struct.unpack_from("<Q", data, o)[0] + 1000)
open(sys.argv[1], "r+b").write(data)
EOF2
for img in nb.img ni.img; do
  [ "$(fsck_codes $img)" = ntfs.index.sizes ] && pass || fail "ntfs index-sizes $img before: $(fsck_codes $img)"
  "$FSIMG" fsck -p $img > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired ntfs.index.sizes: 1 index entry given" rep.out && [ -z "$(fsck_codes $img)" ] &&
    pass || fail "ntfs index-sizes $img: -p exit $rc: $(cat rep.out)"
  ntfsfix -n $img > /dev/null 2>&1 && pass || fail "ntfs index-sizes $img: ntfsfix -n"
done
[ "$(cmp -l ni.img ni-clean.img | wc -l)" -le 10 ] && pass || fail "ntfs index-sizes: more than the entry and the fixups changed"
ntfscat ni.img "/many/file 37.txt" 2>/dev/null | cmp -s - "itree/many/file 37.txt" && pass || fail "ntfs-3g reads file 37"

# An error preen does not repair: the dirty flag stays; the free count it
# does repair (exit 1|4 = 5), JSON says so.
make_fat bad.img 32
poke bad.img 0x41 01
mdel -i bad.img ::a.txt 2>/dev/null
poke bad.img $((512 * 32 + 4 * 3)) ffffff0f  # a lost cluster (FAT 1 entry 3: end of chain, owned by nothing)
"$FSIMG" fsck -a --json bad.img > bad.json; rc=$?
[ $rc = 5 ] && pass || fail "bad.img: exit $rc"
python3 - bad.json <<'PY' && pass || fail "bad.img JSON: $(cat bad.json)"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["mode"] == "preen" and j["status"] == "errors" and j["exit_code"] == 5, j
assert [r["code"] for r in j["repairs"]] == ["fat.fsinfo.free-count"], j["repairs"]
assert "fat.boot.dirty" in [f["code"] for f in j["findings"]], j["findings"]
PY
# fsck(8) conventions: several images, exit statuses OR-ed; modes exclusive.
cp orig-f16.img one.img
"$FSIMG" fsck -p one.img bad.img > /dev/null 2>&1; rc=$?
[ $rc = 5 ] && pass || fail "two images: exit $rc, expected 1|4"
cp orig-f16.img one.img
expect_fail 16 "exclude each other" "$FSIMG" fsck -n -y one.img
expect_fail 16 "gunzip it first" sh -c "gzip -c one.img > one.img.gz && '$FSIMG' fsck -p one.img.gz"
finish
