#!/usr/bin/env bash
# cat --salvage and extract --salvage on FAT12, FAT16, FAT32 and exFAT (issue 25):
# images made by mkfs.fat + mcopy, one file's chain then damaged in the FAT
# (as a crash or a bad card leaves it), and what fsimg writes compared with
# the original file byte by byte:
#  - the chain cut by an end-of-chain mark: the file's first clusters (what
#    The Sleuth Kit's icat reads too) and then the lost chain that continues
#    it: the whole file;
#  - a link into a free cluster: the free and lost clusters from there: the
#    whole file;
#  - the tail owned by another file: the chain, then zeros at the right
#    offsets (the other file reads whole and unchanged);
#  - a truncated image: what lies inside it, zeros past its end.
# Each salvaged file is named in a warning and the exit status is 1; a sound
# file reads as cat reads it (exit 0); plain cat and extract still refuse the
# damaged file. exFAT (fsimg's own images, a file turned into a FAT chain and
# damaged by tests/tools/exfat_damage.py's primitives): the same four cases,
# the free clusters being those clear in the allocation bitmap. NTFS: runs
# outside the volume, VCNs the runlist does not map and clusters past a
# truncated image's end as zeros, the rest read.
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_oracles
command -v icat >/dev/null || { echo "sleuthkit missing: skipped"; exit 77; }
export MTOOLS_SKIP_CHECK=1
cd "$WORK"
mkdir -p src
head -c 300000 /dev/urandom > src/a.bin
head -c 200000 /dev/urandom > src/b.bin
printf 'kept\n' > src/c.txt
# FIRST NAME IMAGE: the file's first cluster, as fsimg ls --json shows it.
first() { "$FSIMG" ls --json "$2" | python3 -c '
import json, sys
print(next(e["first_cluster"] for e in json.load(sys.stdin)["entries"] if e["name"] == sys.argv[1]))' "$1"; }
# same_then_zeros GOT ORIG N: GOT holds ORIG's first N bytes, then zeros up to ORIG's size.
same_then_zeros() { python3 -c '
import sys
g, o, n = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
sys.exit(0 if len(g) == len(o) and g[:n] == o[:n] and g[n:] == bytes(len(o) - n) else 1)' "$@"; }
for spec in "12 8M 8 0xFFF" "16 32M 8 0xFFFF" "32 64M 1 0x0FFFFFFF"; do
  set -- $spec; bits=$1 size=$2 spc=$3 eoc=$4
  img=f$bits.img
  rm -f $img; truncate -s $size $img
  mkfs.fat -F $bits -s $spc $img > /dev/null && mcopy -i $img src/a.bin src/b.bin src/c.txt ::/ ||
    { fail "FAT$bits: setup"; continue; }
  cb=$((spc * 512))
  fa=$(first a.bin $img) fb=$(first b.bin $img)
  na=$(( (300000 + cb - 1) / cb )) nb=$(( (200000 + cb - 1) / cb ))
  keep=$((na / 4))  # clusters left in the chain

  # 1. Cut by an end-of-chain mark after `keep` clusters: the rest is a lost chain of the right length.
  cp $img cut.img
  python3 "$here/../tools/fat_entries.py" cut.img set all $((fa + keep - 1)) $eoc
  "$FSIMG" cat cut.img /a.bin > /dev/null 2> err && fail "FAT$bits: plain cat of the cut file succeeded"
  "$FSIMG" cat --salvage cut.img /a.bin > got.bin 2> err; rc=$?
  [ $rc = 1 ] && cmp -s got.bin src/a.bin && pass || fail "FAT$bits: cut chain: exit $rc: $(cat err)"
  grep -q "ends after $keep of the $na clusters" err && grep -q "from the lost chain at cluster $((fa + keep))" err &&
    pass || fail "FAT$bits: cut chain: report: $(cat err)"
  # What The Sleuth Kit reads of it is the chain: the same first bytes.
  inode=$(fls -f fat$bits cut.img | awk -F'\t' '$2 == "a.bin" { split($1, x, /[ :]+/); print x[2] }')
  icat -f fat$bits cut.img "${inode:-0}" > icat.bin 2> /dev/null
  n=$(stat -c %s icat.bin)
  [ "$n" = $((keep * cb)) ] && cmp -s -n "$n" icat.bin got.bin && pass || fail "FAT$bits: icat read $n bytes, or others"
  # A sound file reads as without --salvage, silently.
  "$FSIMG" cat --salvage cut.img /b.bin > got.bin 2> err && [ ! -s err ] && cmp -s got.bin src/b.bin && pass ||
    fail "FAT$bits: sound file: $(cat err)"
  # extract: without --salvage the damaged file is left out; with it, every file is written.
  rm -rf out; "$FSIMG" extract -q cut.img -C out 2> err; rc=$?
  [ $rc = 1 ] && [ ! -e out/a.bin ] && cmp -s out/b.bin src/b.bin && pass || fail "FAT$bits: extract: exit $rc"
  rm -rf out; "$FSIMG" extract cut.img -C out --salvage > msg 2> err; rc=$?
  [ $rc = 1 ] && diff -r -q src out > /dev/null && grep -q "/a.bin: damaged: " err && grep -q "1 damaged file salvaged" err &&
    pass || fail "FAT$bits: extract --salvage: exit $rc: $(cat msg err)"

  # --partial: the salvaged file as a.bin.partial, a.bin not written; not over an existing one without --force.
  rm -rf out; "$FSIMG" extract -q cut.img -C out --salvage --partial; rc=$?
  [ $rc = 1 ] && [ ! -e out/a.bin ] && cmp -s out/a.bin.partial src/a.bin && cmp -s out/b.bin src/b.bin && pass ||
    fail "FAT$bits: extract --partial: exit $rc"
  "$FSIMG" extract cut.img /a.bin -C out --salvage --partial 2> err; rc=$?
  [ $rc = 1 ] && grep -q "a.bin.partial exists already" err && pass || fail "FAT$bits: --partial over a file: $(cat err)"

  # 2. A link into a free cluster: the free cluster and the lost ones after it.
  cp $img free.img
  python3 "$here/../tools/fat_entries.py" free.img set all $((fa + keep)) 0
  "$FSIMG" cat --salvage free.img /a.bin > got.bin 2> err; rc=$?
  [ $rc = 1 ] && cmp -s got.bin src/a.bin && grep -q "links to free cluster $((fa + keep))" err &&
    grep -q "from the free or lost clusters from $((fa + keep)) on" err && pass ||
    fail "FAT$bits: link into a free cluster: exit $rc: $(cat err)"

  # 3. The tail owned by another file (b.bin's chain runs on into it): zeros after the chain.
  cp cut.img owned.img
  python3 "$here/../tools/fat_entries.py" owned.img set all $((fb + nb - 1)) $((fa + keep))
  "$FSIMG" cat --salvage owned.img /a.bin > got.bin 2> err; rc=$?
  [ $rc = 1 ] && same_then_zeros got.bin src/a.bin $((keep * cb)) && grep -q "of zeros (no lost chain" err && pass ||
    fail "FAT$bits: tail owned elsewhere: exit $rc: $(cat err)"
  "$FSIMG" cat --salvage owned.img /b.bin | cmp -s - src/b.bin && pass || fail "FAT$bits: the owner reads whole"

  # 4. A truncated image: zeros from the first cluster past its end.
  cut_at=$(( fa + na / 2 ))
  offset=$("$FSIMG" dump --json $img | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["geometry"]["data_start_byte"])' 2> /dev/null || true)
  if [ -z "$offset" ]; then
    offset=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(512)
bps, spc, res, nf = struct.unpack_from("<H", b, 11)[0], b[13], struct.unpack_from("<H", b, 14)[0], b[16]
fsz = struct.unpack_from("<H", b, 22)[0] or struct.unpack_from("<I", b, 36)[0]
root = struct.unpack_from("<H", b, 17)[0]
print((res + nf * fsz) * bps + (root * 32 + bps - 1) // bps * bps)' $img)
  fi
  cp $img short.img
  truncate -s $((offset + (cut_at - 2) * cb)) short.img
  "$FSIMG" cat --salvage short.img /a.bin > got.bin 2> err; rc=$?
  [ $rc = 1 ] && same_then_zeros got.bin src/a.bin $(( (cut_at - fa) * cb )) && grep -q "cluster $cut_at on lies past the image's end" err &&
    pass || fail "FAT$bits: truncated image: exit $rc: $(cat err)"
done

# exFAT: A.BIN made a FAT chain (as exfat-fuse writes a file it extends), then damaged.
# EXFAT IMAGE PYTHON: runs PYTHON with x = the image (exfat_damage.ExFat) and cl = /a.bin's chain.
exfat() { python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import exfat_damage
x = exfat_damage.ExFat(sys.argv[2])
so = x.set_of("/a.bin")
cl = x.make_chained(so)
exec(sys.argv[3])
print(cl[0], len(cl), x.cbytes)' "$here/../tools" "$@"; }
rm -f ex.img
"$FSIMG" mkfs -q -t exfat -s 16M -c 4K --from src ex.img || fail "exFAT: setup"
cp ex.img cut.img
# $(...) waits for the damage tool to exit (and its writes to reach the image); a process
# substitution let fsimg read cut.img while Python still held the FAT write in its buffer.
read -r fa na cb <<<"$(exfat cut.img 'x.fat_set(cl[len(cl) // 4 - 1], 0xFFFFFFFF)')"
keep=$((na / 4))
"$FSIMG" cat cut.img /a.bin > /dev/null 2> err && fail "exFAT: plain cat of the cut file succeeded"
"$FSIMG" cat --salvage cut.img /a.bin > got.bin 2> err; rc=$?
[ $rc = 1 ] && cmp -s got.bin src/a.bin && grep -q "ends after $keep of the $na clusters" err &&
  grep -q "from the lost chain at cluster $((fa + keep))" err && pass || fail "exFAT: cut chain: exit $rc: $(cat err)"
rm -rf out; "$FSIMG" extract cut.img -C out --salvage > msg 2> err; rc=$?
[ $rc = 1 ] && diff -r -q src out > /dev/null && grep -q "1 damaged file salvaged" err && pass ||
  fail "exFAT: extract --salvage: exit $rc: $(cat msg err)"
# The tail freed in the bitmap: free clusters from there.
cp ex.img free.img
exfat free.img 'x.fat_set(cl[len(cl) // 4 - 1], 0xFFFFFFFF)
for c in cl[len(cl) // 4:]: x.bit(c, 0)' > /dev/null
"$FSIMG" cat --salvage free.img /a.bin > got.bin 2> err; rc=$?
[ $rc = 1 ] && cmp -s got.bin src/a.bin && grep -q "from the free or lost clusters from $((fa + keep)) on" err && pass ||
  fail "exFAT: tail free in the bitmap: exit $rc: $(cat err)"
# The tail owned by /b.bin (its chain runs on into it): zeros after the chain.
cp ex.img owned.img
exfat owned.img 'x.fat_set(cl[len(cl) // 4 - 1], 0xFFFFFFFF)
cb = x.make_chained(x.set_of("/b.bin"))
x.fat_set(cb[-1], cl[len(cl) // 4])' > /dev/null
"$FSIMG" cat --salvage owned.img /a.bin > got.bin 2> err; rc=$?
[ $rc = 1 ] && same_then_zeros got.bin src/a.bin $((keep * cb)) && grep -q "of zeros (no lost chain" err && pass ||
  fail "exFAT: tail owned elsewhere: exit $rc: $(cat err)"
# NoFatChain on a truncated image: what lies inside it, zeros past its end.
cp ex.img short.img
at=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(512)
bps = 1 << b[108]
print(struct.unpack_from("<I", b, 88)[0] * bps + (int(sys.argv[2]) - 2 + int(sys.argv[3])) * (bps << b[109]))' ex.img $fa $((na / 2)))
truncate -s $at short.img
"$FSIMG" cat --salvage short.img /a.bin > got.bin 2> err; rc=$?
[ $rc = 1 ] && same_then_zeros got.bin src/a.bin $(( (na / 2) * cb )) && grep -q "cluster $((fa + na / 2)) on lies past the image's end" err &&
  pass || fail "exFAT: truncated image: exit $rc: $(cat err)"

# NTFS (fsimg's own image; A.TXT's runlist damaged by tests/tools/ntfs_damage.py's primitives):
# every readable run, zeros for the rest at their offsets.
mkdir -p nsrc; cp src/a.bin nsrc/A.TXT; cp src/b.bin nsrc/B.TXT
"$FSIMG" mkfs -q -t ntfs -s 16M -c 4K --from nsrc nt.img || fail "NTFS: setup"
# NTFS IMAGE PYTHON: runs PYTHON with v = the image (ntfs_damage.Ntfs), n = A.TXT's record, its
# $DATA's b, a, runs; prints the first run's LCN.
ntfs() { python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import ntfs_damage
v = ntfs_damage.Ntfs(sys.argv[2])
n = v.find("A.TXT")
b, a, runs = v.stream(n)
exec(sys.argv[3])
print(runs[0][0])' "$here/../tools" "$@"; }
cp nt.img unmapped.img
lcn=$(ntfs unmapped.img 'v.set_runs(n, b, a, [(runs[0][0], 2)])')
"$FSIMG" cat unmapped.img /A.TXT > /dev/null 2> err && fail "NTFS: plain cat of an unmapped stream succeeded"
"$FSIMG" cat --salvage unmapped.img /A.TXT > got.bin 2> err; rc=$?
[ $rc = 1 ] && same_then_zeros got.bin src/a.bin 8192 && grep -q "does not map VCN 2" err &&
  grep -q "8,192 bytes from its own clusters at cluster $lcn" err && pass || fail "NTFS: unmapped VCNs: exit $rc: $(cat err)"
cp nt.img outside.img
ntfs outside.img 'v.set_runs(n, b, a, [(v.total // (v.cbytes // v.bps) + 10, runs[0][1])] + runs[1:])' > /dev/null
"$FSIMG" cat --salvage outside.img /A.TXT > got.bin 2> err; rc=$?
[ $rc = 1 ] && same_then_zeros got.bin src/a.bin 0 && grep -q "lies outside the volume" err && pass ||
  fail "NTFS: a run outside the volume: exit $rc: $(cat err)"
"$FSIMG" cat --salvage outside.img /B.TXT 2> err | cmp -s - src/b.bin && [ ! -s err ] && pass || fail "NTFS: sound file: $(cat err)"
cp nt.img short.img
truncate -s $(( (lcn + 3) * 4096 )) short.img
"$FSIMG" cat --salvage short.img /A.TXT > got.bin 2> err; rc=$?
[ $rc = 1 ] && same_then_zeros got.bin src/a.bin $((3 * 4096)) && grep -q "cluster $((lcn + 3)) on lies past the image's end" err &&
  pass || fail "NTFS: truncated image: exit $rc: $(cat err)"
rm -rf out; "$FSIMG" extract unmapped.img -C out --salvage > msg 2> err; rc=$?
[ $rc = 1 ] && cmp -s out/B.TXT src/b.bin && same_then_zeros out/A.TXT src/a.bin 8192 && grep -q "1 damaged file salvaged" err &&
  pass || fail "NTFS: extract --salvage: exit $rc: $(cat msg err)"
finish
