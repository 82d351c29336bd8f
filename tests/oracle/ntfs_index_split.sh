#!/usr/bin/env bash
# NTFS cp into a directory whose index leaves are full splits the nodes on
# the new names' way (copy on write, one record write switches the tree),
# as ntfs-3g splits a full INDX block, instead of rewriting the whole index:
# - cp -r of 2,500 files (5,000 names with their DOS names) into one
#   directory: leaves three blocks below the root (the root's entries moved
#   down, blocks above leaves split too); fsimg fsck clean; every checker and
#   reader (ntfs-3g, sleuthkit, 7-Zip, libfsntfs) reads every file;
#   ntfs-3g then writes into that index (write-exercise);
# - cost follows the change: one more file into the full directory makes a
#   handful of writes (at most 40, 16 of them when $MFT grows by 16
#   records) while its index has over 150 blocks (a rewrite writes each),
#   also for the files whose names split a leaf (the blocks in use grow);
# - a cut after every write of a cp that splits a leaf: every file that was
#   there reads byte-exact (sleuthkit), fsimg fsck finds nothing but the
#   dirty flag and clusters no file owns, and fsck -y leaves nothing.
# cost: 60
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"

mkdir -p many
for i in $(seq -w 1 2500); do printf 'file %s\n' "$i" > "many/name of file $i.txt"; done
"$FSIMG" mkfs -q -t ntfs -s 64M full.img || { fail mkfs; finish; exit; }
"$FSIMG" cp -q -r full.img many / || fail "cp -r many"
"$FSIMG" fsck full.img > /dev/null && pass || fail "fsck after cp -r: $("$FSIMG" fsck full.img)"
index() {  # index IMAGE FIELD: a number from dump --what index /many --json
  "$FSIMG" dump --json --what index /many "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print({"depth": d["walk"]["depth"], "entries": d["walk"]["entries"], "blocks": d["walk"]["blocks_reached"]}[sys.argv[1]])' "$2"
}
[ "$(index full.img entries)" = 5000 ] && pass || fail "entries: $(index full.img entries)"
# Leaves three blocks below the root (walk depth 3), inner blocks split too.
depth=$(index full.img depth)
inner=$("$FSIMG" dump --what index /many full.img | grep -c '^INDX block .*(inner node)$')
[ "$depth" -ge 3 ] && [ "$inner" -ge 3 ] && pass || fail "depth $depth, $inner inner blocks: no split above the leaves"
"$SHARED/oracles/make-manifest" many > many.manifest
mkdir -p top && cp -r many top/ && "$SHARED/oracles/make-manifest" top > top.manifest
check full.img --manifest top.manifest
cp full.img written.img
out=$("$SHARED/oracles/write-exercise" written.img --fsck "$FSIMG fsck" 2>&1) && pass ||
  { fail "write-exercise"; echo "$out" | grep -v PASS | head -8; }

# One file at a time into the full directory, each a few writes.
cp full.img one.img
blocks0=$(index one.img blocks)
[ "$blocks0" -gt 150 ] && pass || fail "only $blocks0 index blocks"
split_at=
for k in $(seq -w 1 40); do
  printf 'added %s\n' "$k" > "add-$k.txt"
  before=$(index one.img blocks)
  cp one.img prev.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" cp one.img "add-$k.txt" "/many/name of file 1250 added $k.txt" 2> count.err ||
    { fail "cp $k: $(cat count.err)"; break; }
  writes=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$writes" ] && [ "$writes" -le 40 ] && pass || fail "cp $k: $writes writes"
  if [ -z "$split_at" ] && [ "$(index one.img blocks)" -gt "$before" ]; then
    split_at=$k; cp prev.img before-split.img
  fi
done
[ -n "$split_at" ] && pass || fail "40 names into one leaf never split it"
"$FSIMG" fsck one.img > /dev/null && pass || fail "fsck after 40 cp: $("$FSIMG" fsck one.img)"
[ "$("$FSIMG" cat one.img "/many/name of file 1250 added 17.txt")" = "added 17" ] && pass || fail "cat added 17"

# Cut after every write of the cp that split a leaf.
if [ -n "$split_at" ]; then
  src="add-$split_at.txt" dst="/many/name of file 1250 added $split_at.txt"
  cp before-split.img cut.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" cp cut.img "$src" "$dst" 2> count.err > /dev/null
  total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$total" ] && [ "$total" -ge 4 ] && pass || fail "split cp: write count $(cat count.err)"
  for n in $(seq 1 $((${total:-1} - 1))); do
    cp before-split.img cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" cp cut.img "$src" "$dst" > /dev/null 2>&1; rc=$?
    [ $rc = 99 ] || { fail "cut after write $n: exit $rc"; continue; }
    odd=$("$FSIMG" fsck cut.img 2>&1 | grep -E '^(fatal|error|warning|info) ' |
      grep -v -E '^[a-z]+ (ntfs\.volume\.dirty|ntfs\.mftmirr\.differs|ntfs\.tree\.orphan|ntfs\.mft-bitmap\.unmarked|ntfs\.bitmap\.lost):')
    [ -z "$odd" ] && pass || fail "cut after write $n of $total: $odd"
    out=$("$SHARED/oracles/check-image" --only read-sleuthkit --manifest top.manifest --ignore "many/name of file 1250 added*" cut.img 2>&1) && pass ||
      { fail "cut after write $n: sleuthkit"; echo "$out" | grep -v PASS | head -5; }
    "$FSIMG" fsck -y cut.img > /dev/null 2>&1
    [ -z "$(fsck_codes cut.img)" ] && pass || fail "cut after write $n: fsck -y left $(fsck_codes cut.img)"
  done
fi
finish
