#!/usr/bin/env bash
# dump --metadata-image (issue 25): a sparse copy of an image holding only
# its filesystem's metadata. For FAT12, FAT16, FAT32 (made by mkfs.fat +
# mcopy), exFAT and NTFS (made by fsimg), each filled with files whose
# content is a marker: the copy has the image's size, holds no byte of any
# file's content (resident NTFS data zeroed too), fsimg fsck finds in it what
# it finds in the original (clean, and on a damaged FAT32, exFAT and NTFS
# the same findings), The Sleuth Kit lists the same tree, and every independent
# checker passes on it (check-image). With --scramble-names no original
# name is left, each made-up one has the original's length and extension,
# and fsck and the checkers still find the copy clean (unique names,
# long-name checksums, NameHash and SetChecksum right; NTFS indexes rebuilt
# in collation order, a stored link's target scrambled). A partition of a disk image keeps its
# place and the partition table. OUT is never written over without --force,
# and never when it is the image itself.
# cost: 17
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_oracles
command -v fls > /dev/null || { echo "sleuthkit missing: skipped"; exit 77; }
export MTOOLS_SKIP_CHECK=1
cd "$WORK"
mkdir -p src/d1/d2/d3
for i in $(seq 1 40); do printf 'SECRET-CONTENT-%04d\n' $i > "src/d1/file number $i.txt"; done
printf 'SECRET-CONTENT-top\n' > src/top.txt
{ printf 'SECRET-CONTENT-big\n'; head -c 300000 /dev/zero | tr '\0' 'S'; } > src/d1/d2/d3/big.bin
# findings IMAGE: fsimg fsck's findings and summary as JSON, without the image's name.
findings() { { "$FSIMG" fsck --json "$1" || true; } | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(json.dumps([d["findings"], d["summary"], d["status"]], sort_keys=True))'; }
# same IMAGE META: every property above.
same() {
  local img=$1 meta=$2 what=$3
  [ "$(stat -c %s "$img")" = "$(stat -c %s "$meta")" ] && pass || fail "$what: size differs"
  if grep -q SECRET-CONTENT "$meta"; then fail "$what: file content in the metadata image"; else pass; fi
  grep -q SECRET-CONTENT "$img" && pass || fail "$what: the original holds no marker (test broken)"
  [ "$(findings "$img")" = "$(findings "$meta")" ] && pass || fail "$what: fsck differs: $(findings "$meta")"
  diff <(fls -r -p "$img" 2>&1) <(fls -r -p "$meta" 2>&1) > /dev/null && pass || fail "$what: fls -r differs"
  [ "$(du -k "$meta" | cut -f1)" -lt "$(du -k "$img" | cut -f1)" ] && pass || fail "$what: not smaller on disk"
}
for spec in "12 8M" "16 32M" "32 300M"; do
  set -- $spec
  rm -f f$1.img; truncate -s $2 f$1.img
  mkfs.fat -F $1 f$1.img > /dev/null && mcopy -s -i f$1.img src/* ::/ || { fail "FAT$1: setup"; continue; }
  "$FSIMG" dump --metadata-image f$1.meta f$1.img 2> err && grep -q "bytes of FAT metadata" err && pass ||
    fail "FAT$1: dump --metadata-image: $(cat err)"
  same f$1.img f$1.meta "FAT$1"
done
check f32.meta
"$FSIMG" mkfs -q -t exfat -s 64M --from src ex.img && "$FSIMG" dump -q --metadata-image ex.meta ex.img ||
  fail "exFAT: dump --metadata-image"
same ex.img ex.meta exFAT
check ex.meta
"$FSIMG" mkfs -q -t ntfs -s 64M --from src nt.img && "$FSIMG" dump -q --metadata-image nt.meta nt.img ||
  fail "NTFS: dump --metadata-image"
same nt.img nt.meta NTFS
check nt.meta
"$FSIMG" dump -q --metadata-image nt-nolog.meta --no-logfile nt.img &&
  [ "$(du -k nt-nolog.meta | cut -f1)" -lt "$(du -k nt.meta | cut -f1)" ] && pass || fail "NTFS: --no-logfile"

# --scramble-names (FAT, exFAT): every name made up, of the same length and extension, unique (fsck
# clean, which checks duplicates and long-name checksums; every checker passes); the tree's shape kept.
shape() { "$FSIMG" ls -R "$1" | python3 -c '
import sys
print("\n".join(sorted("/".join("%d%s" % (len(c), c[c.rfind("."):] if "." in c else "") for c in line.split("/"))
                       for line in sys.stdin.read().splitlines())))'; }
for img in f16.img f32.img ex.img; do
  "$FSIMG" dump -q --scramble-names --metadata-image ${img%.img}.smeta $img || fail "$img: --scramble-names"
  [ "$(findings $img)" = "$(findings ${img%.img}.smeta)" ] && pass || fail "$img: scrambled: fsck: $(findings ${img%.img}.smeta)"
  [ "$(shape $img)" = "$(shape ${img%.img}.smeta)" ] && pass || fail "$img: scrambled: the tree's shape differs"
  if "$FSIMG" ls -R ${img%.img}.smeta | grep -q -e "file number" -e "top.txt" -e "big.bin"; then
    fail "$img: an original name survived: $("$FSIMG" ls -R ${img%.img}.smeta)"
  else pass; fi
done
check f32.smeta
check ex.smeta
# Deleted exFAT files stay listed under made-up names (their sets' checksums written again).
cp ex.img exdel.img && "$FSIMG" rm -q exdel.img /top.txt "/d1/file number 7.txt"
"$FSIMG" dump -q --scramble-names --metadata-image exdel.smeta exdel.img
[ "$("$FSIMG" ls --deleted -R exdel.smeta | awk '{ print $1, $2 }')" = "$("$FSIMG" ls --deleted -R exdel.img | awk '{ print $1, $2 }')" ] &&
  [ "$("$FSIMG" ls --deleted -R exdel.smeta | wc -l)" = 2 ] && ! "$FSIMG" ls --deleted -R exdel.smeta | grep -q "top.txt\|file number" &&
  pass || fail "exFAT scrambled: deleted files: $("$FSIMG" ls --deleted -R exdel.smeta)"
# NTFS: the names changed on the copy and every index rebuilt from them (sorted again), the old
# INDX blocks' clusters zeroed, $LogFile emptied (it holds names): fsck finds what it finds in
# the original; no original name is left anywhere in the file, in UTF-16 or in ASCII,
# nor (ntl.img) the target of a stored symbolic link; every checker passes.
no_names() {  # no_names FILE NAME...: none of the names in FILE, in UTF-16LE or ASCII
  python3 - "$@" <<'PY'
import mmap, sys
with open(sys.argv[1], "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    for name in sys.argv[2:]:
        for enc in ("utf-16-le", "ascii"):
            if m.find(name.encode(enc)) >= 0:
                sys.exit("%s (%s) found" % (name, enc))
PY
}
"$FSIMG" dump --scramble-names --metadata-image nt.smeta nt.img 2> err &&
  grep -q "names in [0-9]* records made up, [1-9][0-9]* directories' index rebuilt from them, 0 link targets scrambled" err &&
  pass || fail "NTFS: --scramble-names: $(cat err)"
[ "$(findings nt.img)" = "$(findings nt.smeta)" ] && pass || fail "NTFS: scrambled: fsck: $(findings nt.smeta)"
[ "$(shape nt.img)" = "$(shape nt.smeta)" ] && pass || fail "NTFS: scrambled: the tree's shape differs"
no_names nt.smeta "file number" top.txt big.bin && pass || fail "NTFS: an original name survived in the scrambled copy"
check nt.smeta
ln -s top.txt src/d1/a-link-to-top
"$FSIMG" mkfs -q -t ntfs -s 64M --symlinks store --from src ntl.img || fail "NTFS: mkfs with a link"
rm src/d1/a-link-to-top
"$FSIMG" dump --scramble-names --metadata-image ntl.smeta ntl.img 2> err && grep -q ", 1 link target scrambled" err &&
  [ -z "$(fsck_codes ntl.smeta)" ] && pass || fail "NTFS: a link: $(cat err)"
no_names ntl.smeta "file number" top.txt a-link-to-top && pass || fail "NTFS: a link's name or target survived"

# Damaged: a FAT32 chain cut (lost clusters, a short chain), an exFAT and an NTFS bitmap bit: the same findings.
cp f32.img cut32.img
first=$("$FSIMG" ls --json cut32.img /d1/d2/d3 | python3 -c 'import json, sys; print(json.load(sys.stdin)["entries"][0]["first_cluster"])')
python3 "$here/../tools/fat_entries.py" cut32.img set all $((first + 3)) 0x0FFFFFFF
"$FSIMG" dump -q --metadata-image cut32.meta cut32.img
[ "$(findings cut32.img)" = "$(findings cut32.meta)" ] && findings cut32.meta | grep -q fat.chain && pass ||
  fail "FAT32 damaged: fsck differs: $(findings cut32.meta)"
cp ex.img bad.img; python3 "$here/../tools/exfat_damage.py" bad.img bitmap-lost > /dev/null
"$FSIMG" dump -q --metadata-image bad.meta bad.img
[ "$(findings bad.img)" = "$(findings bad.meta)" ] && findings bad.meta | grep -q exfat.bitmap && pass ||
  fail "exFAT damaged: fsck differs: $(findings bad.meta)"
cp nt.img badnt.img; python3 "$here/../tools/ntfs_damage.py" badnt.img bitmap-lost > /dev/null
"$FSIMG" dump -q --metadata-image badnt.meta badnt.img
[ "$(findings badnt.img)" = "$(findings badnt.meta)" ] && findings badnt.meta | grep -q ntfs.bitmap.lost && pass ||
  fail "NTFS damaged: fsck differs: $(findings badnt.meta)"

# A partition of a disk: at its place, with the table.
"$FSIMG" mkfs -q -t fat32 -s 300M --partition-table gpt --from src disk.img
"$FSIMG" dump -q --metadata-image disk.meta disk.img@1 && "$FSIMG" ls -R disk.meta@1 > meta.ls &&
  "$FSIMG" ls -R disk.img@1 > img.ls && cmp -s meta.ls img.ls && ! grep -q SECRET-CONTENT disk.meta && pass ||
  fail "partition: the listing of disk.meta@1 differs"
sfdisk --verify disk.meta > /dev/null 2>&1 && pass || fail "partition: sfdisk --verify: $(sfdisk --verify disk.meta 2>&1)"

# OUT: not replaced without --force, never the image itself.
expect_fail 3 "exists already" "$FSIMG" dump --metadata-image ex.meta ex.img
"$FSIMG" dump -q --metadata-image ex.meta --force ex.img && pass || fail "--force"
expect_fail 3 "is the image being read" "$FSIMG" dump --metadata-image ex.img --force ex.img
cmp -s <("$FSIMG" ls -R ex.img) <("$FSIMG" ls -R ex.meta) && pass || fail "the image was changed"
expect_fail 2 "takes no --what or --json" "$FSIMG" dump --json --metadata-image x.meta ex.img
finish
