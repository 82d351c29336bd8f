#!/usr/bin/env bash
# fsck -y rebuilds an NTFS directory index that cannot be walked
# (ntfs.index.corrupt), whose $BITMAP:$I30 is wrong (ntfs.index.bitmap) or
# whose entries are not its files' names (ntfs.index.stale-entry,
# missing-entry, extra-entry, entry-mismatch, order; tests/tools/ntfs_damage.py)
# from the $FILE_NAMEs of the records in use, as chkdsk does: -p leaves them (exit 4, nothing written); after -y our
# fsck and ntfsfix -n find the volume clean, every checker reads exactly the
# tree that was written (the file the damage hid is back), a second -y
# changes nothing and --undo gives the damaged bytes back. A directory of 300
# names whose index is in INDX blocks, with a stale entry and a missing one,
# is rebuilt the same way. Orphans whose directory is gone go to /found.000;
# a broken $ATTRIBUTE_LIST is rebuilt from the records it indexes; a missing
# $INDEX_ROOT made again.
# cost: 61
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_oracles
for t in ntfsfix ntfsls; do command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }; done
export SOURCE_DATE_EPOCH=1700000000
damage="$here/../tools/ntfs_damage.py"
cd "$WORK"
mkdir -p src/DIR/SUB src/BIG
head -c 20000 /dev/urandom > src/A.TXT; head -c 12000 /dev/urandom > src/B.TXT
: > src/E.TXT; : > src/DIR/E2.TXT; head -c 100 /dev/urandom > src/DIR/C.TXT
ln src/DIR/C.TXT src/DIR/L.TXT
for i in $(seq 1 80); do echo $i > "src/BIG/a file with a long name number $i.txt"; done
"$SHARED/oracles/make-manifest" src > src.manifest
"$FSIMG" mkfs -q -t ntfs -s 4M --from src base.img || { fail "mkfs"; finish; exit; }

# index-corrupt: /BIG's first INDX block's signature damaged (the names it held hidden);
# index-bitmap: /BIG's $BITMAP:$I30 cleared (its blocks marked free).
for kind in index-corrupt index-bitmap index-stale-entry index-missing-entry index-extra-entry index-entry-mismatch \
            index-order; do
  code=ntfs.index.${kind#index-}
  cp base.img n.img
  python3 "$damage" n.img $kind > /dev/null || { fail "$kind: damage"; continue; }
  codes=$(fsck_codes n.img)
  [[ " $codes " == *" $code "* ]] && pass || fail "$kind: fsck finds $codes"
  cp n.img damaged.img
  "$FSIMG" fsck -p n.img > rep.out 2>&1; rc=$?
  [ $rc = 4 ] && cmp -s n.img damaged.img && pass || fail "$kind: -p exit $rc, or it wrote: $(cat rep.out)"
  rm -f n.undo
  "$FSIMG" fsck -y --undo n.undo n.img > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired $code: 1 directory's index rebuilt" rep.out && pass ||
    fail "$kind: -y exit $rc: $(cat rep.out)"
  [ -z "$(fsck_codes n.img)" ] && pass || fail "$kind: -y left $(fsck_codes n.img)"
  ntfsfix -n n.img > fix.out 2>&1 && pass || fail "$kind: ntfsfix -n: $(cat fix.out)"
  check n.img -j 2 --manifest src.manifest
  sha=$(content_sum n.img)
  "$FSIMG" fsck -y n.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(content_sum n.img)" = "$sha" ] && pass || fail "$kind: second -y exit $rc or changed the image"
  "$FSIMG" undo n.undo n.img > /dev/null && cmp -s n.img damaged.img && pass || fail "$kind: undo"
done
# A rebuild of a damaged index cut after each of its writes: the files that were readable stay
# readable, and -y then finishes (the new blocks, their bits, the record, the old blocks' bits).
cp base.img c.img && python3 "$damage" c.img index-corrupt > /dev/null
repair_cuts c.img index-corrupt /A.TXT:src/A.TXT /DIR/C.TXT:src/DIR/C.TXT /B.TXT:src/B.TXT

# Orphans whose directory is gone (tree-dir-freed: /DIR's record freed) are linked into
# /found.000 (chkdsk's convention), made for them: each keeps its data and one name there (C.TXT's
# record has two, C.TXT and its hard link L.TXT: it keeps the first), /DIR/SUB its place as a
# directory. A name found.000 already holds gets " (record N)" before its extension. After -y:
# our fsck and ntfsfix -n find nothing, every checker reads the moved tree, ntfs-3g lists what
# fsimg lists, a second -y changes nothing; a cut after any write of the repair is finished by -y.
# y_clean IMAGE LABEL PATTERN: fsck -y repairs IMAGE (exit 1, a line of its report matching
# the grep PATTERN), and our fsck then finds nothing.
y_clean() {
  "$FSIMG" fsck -y "$1" > rep.out 2>&1; local rc=$?
  [ $rc = 1 ] && grep -q "$3" rep.out && pass || fail "$2: -y exit $rc: $(cat rep.out)"
  [ -z "$(fsck_codes "$1")" ] && pass || fail "$2: -y left $(fsck_codes "$1")"
}
lists_agree() {  # lists_agree IMAGE LABEL: ntfsls -R and fsimg ls -R list the same paths
  ntfsls -R -p / "$1" 2> /dev/null | awk '/^\/.*:$/ { d = substr($0, 1, length($0) - 1); if (d == "/") d = ""; next }
    NF && $0 != "." && $0 != ".." { print d "/" $0 }' | LC_ALL=C sort > theirs.txt
  "$FSIMG" ls -R "$1" / | sed 's|/$||' | LC_ALL=C sort > ours.txt
  [ -s ours.txt ] && diff ours.txt theirs.txt > diff.out && pass || fail "$2: ntfsls and fsimg ls list other trees: $(head -5 diff.out)"
}
for found in new taken; do
  cp base.img o.img
  rm -rf exp; cp -r src exp; rm -rf exp/DIR; mkdir -p exp/found.000
  if [ $found = taken ]; then  # found.000 exists and holds an E2.TXT
    "$FSIMG" mkdir o.img /found.000 && "$FSIMG" cp o.img src/A.TXT /found.000/E2.TXT || fail "taken: setup"
    cp src/A.TXT exp/found.000/E2.TXT
  fi
  python3 "$damage" o.img tree-dir-freed > /dev/null || { fail "$found: damage"; continue; }
  codes=$(fsck_codes o.img)
  [[ " $codes " == *" ntfs.tree.orphan "* ]] && pass || fail "$found: fsck finds $codes"
  y_clean o.img "$found" "^repaired ntfs.tree.orphan: 3 records whose directory is gone linked into /found.000$"
  ntfsfix -n o.img > fix.out 2>&1 && pass || fail "$found: ntfsfix -n: $(cat fix.out)"
  "$FSIMG" ls o.img /found.000 > ls.out
  keep=$(grep -x -E 'C\.TXT|L\.TXT' ls.out)  # the first of the record's two names
  [ -n "$keep" ] && [ "$(grep -c -x -E 'C\.TXT|L\.TXT' ls.out)" = 1 ] && grep -qx SUB/ ls.out && pass ||
    fail "$found: found.000 holds $(tr '\n' ' ' < ls.out)"
  cp src/DIR/C.TXT "exp/found.000/$keep"; mkdir exp/found.000/SUB
  if [ $found = taken ]; then
    e2=$(grep -x -E 'E2 \(record [0-9]+\)\.TXT' ls.out)
    [ -n "$e2" ] && pass || fail "taken: no \"E2 (record N).TXT\" in $(tr '\n' ' ' < ls.out)"
    : > "exp/found.000/$e2"
  else
    : > exp/found.000/E2.TXT
  fi
  "$SHARED/oracles/make-manifest" exp > exp.manifest
  check o.img -j 2 --manifest exp.manifest
  lists_agree o.img "$found"
  cp o.img first.img
  "$FSIMG" fsck -y o.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && cmp -s o.img first.img && pass || fail "$found: second -y exit $rc or changed the image"
done
cp base.img c.img && python3 "$damage" c.img tree-dir-freed > /dev/null
repair_cuts c.img tree-dir-freed /A.TXT:src/A.TXT /B.TXT:src/B.TXT "/BIG/a file with a long name number 7.txt:src/BIG/a file with a long name number 7.txt"

# A broken parent reference (tests/tools/ntfs_damage.py filename-parent: A.TXT's
# parent is $Volume; filename-parent-sequence: the root with another sequence
# number): the root's index still names the record, so it goes back there.
for kind in filename-parent filename-parent-sequence; do
  cp base.img p.img
  python3 "$damage" p.img $kind > /dev/null || { fail "$kind: damage"; continue; }
  y_clean p.img $kind \
    "^repaired ntfs.${kind/-/.}: 1 record whose names gave no directory in use linked back into the directory whose index named it$"
  check p.img -j 2 --manifest src.manifest
done

# A directory whose $INDEX_ROOT is gone (index-root-missing: /DIR/SUB's turned into an unknown
# type) gets an empty one, then the rebuild fills it from its files' names.
rm -rf src2 && cp -r src src2 && head -c 5000 /dev/urandom > src2/DIR/SUB/X.TXT && echo y > "src2/DIR/SUB/a longer name.txt"
"$SHARED/oracles/make-manifest" src2 > src2.manifest
"$FSIMG" mkfs -q -t ntfs -s 4M --from src2 r.img || fail "mkfs src2"
python3 "$damage" r.img index-root-missing > /dev/null || fail "index-root-missing: damage"
cp r.img r-damaged.img
[[ " $(fsck_codes r.img) " == *" ntfs.index.root-missing "* ]] && pass || fail "index-root-missing: fsck finds $(fsck_codes r.img)"
y_clean r.img index-root-missing "^repaired ntfs.index.root-missing: 1 directory's index rebuilt"
ntfsfix -n r.img > fix.out 2>&1 && pass || fail "index-root-missing: ntfsfix -n: $(cat fix.out)"
check r.img -j 2 --manifest src2.manifest
lists_agree r.img index-root-missing
repair_cuts r-damaged.img index-root-missing /DIR/C.TXT:src/DIR/C.TXT /A.TXT:src/A.TXT

# $ATTRIBUTE_LIST rebuilt from the records it indexes (tests/tools/ntfs_damage.py: A.TXT's $DATA
# in an extension record, the base's list then made undecodable, an entry naming a record that
# does not hold the attribute, an entry with another sequence number): A.TXT reads whole through
# the new list in fsimg, ntfs-3g and sleuthkit. An extension record that holds nothing
# (attrlist-missing) owns nothing: it is marked not in use, then its $MFT bit cleared.
for kind in attrlist-decode attrlist-entry attrlist-entry-sequence; do
  code=ntfs.attrlist.${kind#attrlist-}; code=${code%-sequence}
  cp base.img l.img
  python3 "$damage" l.img $kind > /dev/null || { fail "$kind: damage"; continue; }
  y_clean l.img $kind "^repaired $code: 1 \$ATTRIBUTE_LIST rebuilt from the records it should index$"
  n=$(ifind -n /A.TXT l.img)
  "$FSIMG" cat l.img /A.TXT | cmp -s - src/A.TXT && ntfscat l.img A.TXT | cmp -s - src/A.TXT &&
    icat l.img "$n" | cmp -s - src/A.TXT && [[ $(istat l.img "$n") == *'Type: $ATTRIBUTE_LIST'* ]] &&
    pass || fail "$kind: A.TXT does not read back through its rebuilt \$ATTRIBUTE_LIST"
  ntfsfix -n l.img > fix.out 2>&1 && pass || fail "$kind: ntfsfix -n: $(cat fix.out)"
  check l.img -j 2 --manifest src.manifest
  cp l.img first.img
  "$FSIMG" fsck -y l.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && cmp -s l.img first.img && pass || fail "$kind: second -y exit $rc or changed the image"
done
cp base.img l.img && python3 "$damage" l.img attrlist-decode > /dev/null
repair_cuts l.img attrlist-decode /B.TXT:src/B.TXT /DIR/C.TXT:src/DIR/C.TXT
cp base.img l.img && python3 "$damage" l.img attrlist-missing > /dev/null
y_clean l.img attrlist-missing "^repaired ntfs.attrlist.missing: 1 extension record that held nothing marked not in use$"
check l.img -j 2 --manifest src.manifest

# A directory in INDX blocks: one entry made stale (another sequence number),
# another removed from its leaf (the file then reachable by no index).
mkdir -p big/many
for i in $(seq 1 300); do printf '%s\n' "$i" > "big/many/entry number $i.txt"; done
"$SHARED/oracles/make-manifest" big > big.manifest
"$FSIMG" mkfs -q -t ntfs -s 16M --from big b.img || fail "mkfs big"
python3 - b.img <<'EOF'
import struct, sys
# Two Win32 entries in /many's INDX blocks: "entry number 123.txt" gets a
# sequence number one higher (stale), "entry number 77.txt" is cut out of
# its leaf block (missing); each block's fixups are kept.
data = bytearray(open(sys.argv[1], "rb").read())
def entry(name):
    needle = name.encode("utf-16-le")
    i = data.find(needle)
    while i >= 0:
        blk = i // 4096 * 4096
        if data[blk:blk + 4] == b"INDX" and data[i - 2] == len(name):
            return blk, i - 0x52
        i = data.find(needle, i + 1)
    raise SystemExit("no INDX entry " + name)
def strides(blk):  # fixups off: the update sequence array's saved words back into the stride tails
    usa = struct.unpack_from("<H", data, blk + 4)[0]
    n = struct.unpack_from("<H", data, blk + 6)[0]
    return [(blk + 512 * k - 2, usa + 2 * k) for k in range(1, n)]
def unfix(blk):
    for tail, saved in strides(blk):
        data[tail:tail + 2] = data[blk + saved:blk + saved + 2]
def fix(blk):
    usa = struct.unpack_from("<H", data, blk + 4)[0]
    for tail, saved in strides(blk):
        data[blk + saved:blk + saved + 2] = data[tail:tail + 2]
        data[tail:tail + 2] = data[blk + usa:blk + usa + 2]
blk, e = entry("entry number 123.txt")
unfix(blk)
ref = struct.unpack_from("<Q", data, e)[0]
struct.pack_into("<Q", data, e, ref + (1 << 48))
fix(blk)
blk, e = entry("entry number 77.txt")
unfix(blk)
if struct.unpack_from("<H", data, e + 12)[0] & 1:
    raise SystemExit("entry 77 is not in a leaf")
ln = struct.unpack_from("<H", data, e + 8)[0]
used = struct.unpack_from("<I", data, blk + 0x18 + 4)[0]
end = blk + 0x18 + used
data[e:end] = data[e + ln:end] + bytes(ln)
struct.pack_into("<I", data, blk + 0x18 + 4, used - ln)
fix(blk)
open(sys.argv[1], "r+b").write(data)
EOF
codes=$(fsck_codes b.img)
[[ " $codes " == *" ntfs.index.stale-entry "* ]] && [[ " $codes " == *" ntfs.index.missing-entry "* ]] && pass ||
  fail "big: fsck finds $codes"
"$FSIMG" fsck -y b.img > rep.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "index rebuilt" rep.out && [ -z "$(fsck_codes b.img)" ] && pass ||
  fail "big: -y exit $rc, left $(fsck_codes b.img): $(cat rep.out)"
[ "$(ntfsls -p /many b.img | grep -c '^entry number')" = 300 ] && pass || fail "big: ntfsls lists $(ntfsls -p /many b.img | grep -c '^entry number') names"
ntfsfix -n b.img > fix.out 2>&1 && pass || fail "big: ntfsfix -n: $(cat fix.out)"
check b.img -j 2 --manifest big.manifest

# ntfsprogs-plus' images damaged in use (../shared/corpus): an index entry's length (the root's
# INDX block: every system file and the whole tree orphaned), an INDX block's signature and size,
# a block marked free in the index $BITMAP, sub-nodes in directories with no $INDEX_ALLOCATION.
# After -y: our fsck finds nothing, ntfsfix -n passes, ntfs-3g lists exactly the tree fsimg
# lists, a second -y changes nothing.
CORPUS=$SHARED/corpus
if [ -x "$CORPUS/run" ]; then
  for c in entry_length_corrupted index_block_size_corruption index_block_valid_but_index_bitmap_cleared \
           revive_orphan_mft_entry; do
    "$CORPUS/run" --decode "ntfs/ntfsimg-use-$c" c.img > /dev/null 2>&1 || { fail "$c: cannot decode"; continue; }
    [[ " $(fsck_codes c.img) " == *" ntfs.index.corrupt "* ]] && pass || fail "$c: fsck finds $(fsck_codes c.img)"
    "$FSIMG" fsck -y c.img > rep.out 2>&1; rc=$?
    [ $rc = 1 ] && grep -q "^repaired ntfs.index.corrupt: [0-9]* director.* index rebuilt" rep.out && pass ||
      fail "$c: -y exit $rc: $(head -5 rep.out)"
    [ -z "$(fsck_codes c.img)" ] && pass || fail "$c: -y left $(fsck_codes c.img)"
    ntfsfix -n c.img > fix.out 2>&1 && pass || fail "$c: ntfsfix -n: $(cat fix.out)"
    lists_agree c.img "$c"
    cp --sparse=always c.img first.img
    "$FSIMG" fsck -y c.img > /dev/null 2>&1; rc=$?
    [ $rc = 0 ] && same_bytes c.img first.img && pass || fail "$c: second -y exit $rc or changed the image"
    rm -f c.img first.img
  done
fi
finish
