#!/usr/bin/env bash
# Every walk visits each directory once (issue 18). A directory reachable
# through two entries at each of 40 levels (a DAG, built here by
# tests/tools/make_hostile.py from an fsimg image: 2^40 paths, 41
# directories) makes ls -R, ls -R --json, extract and slack finish at once on
# FAT, exFAT and NTFS, each second path skipped with a warning, memory and
# output bounded by the directories the image holds; fsck reports each second
# entry as one finding (the shared chain: fat.chain.cross-link,
# exfat.chain.cross-link; NTFS: ntfs.index.extra-entry) and walks each directory once. ls --json of an empty
# directory is []. slack of a damaged image exits 1 (docs/exit-codes.md).
here=$(dirname "$0"); . "$here/../lib.sh"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
TOOLS=$(cd "$here/../tools" && pwd)
cd "$WORK"
DEPTH=40

# The tree: /A/A/.../A (DEPTH levels), each level also holding an empty B.
rm -rf t && mkdir t
p=t
for i in $(seq 1 $DEPTH); do mkdir -p "$p/A" "$p/B"; p="$p/A"; done
echo leaf > "$p/LEAF.TXT"

for fs in fat32 exfat ntfs; do
  img=dag-$fs.img
  "$FSIMG" mkfs -q -t $fs -s 64M --from t "$img" || { fail "$fs: mkfs"; continue; }
  python3 "$TOOLS/make_hostile.py" dag "$img" > made || { fail "$fs: make_hostile dag: $(cat made)"; continue; }
  grep -q " $DEPTH B " made && pass || fail "$fs: expected $DEPTH levels: $(cat made)"
  gzip -9 -k -c "$img" > "$img.gz"
  [ "$(stat -c %s "$img.gz")" -lt 400000 ] && pass || fail "$fs: the gzipped DAG is $(stat -c %s "$img.gz") bytes"

  # ls -R: each directory listed once; bounded time and output.
  timeout 60 "$FSIMG" ls -R "$img" >ls.out 2>ls.err; rc=$?
  [ $rc = 0 ] && pass || fail "$fs: ls -R exit $rc ($(head -3 ls.err))"
  n=$(grep -c 'LEAF.TXT$' ls.out)
  [ "$n" = 1 ] && pass || fail "$fs: ls -R lists LEAF.TXT $n times"
  [ "$(grep -c 'not listed again' ls.err)" = $DEPTH ] && pass || fail "$fs: ls -R warned $(grep -c 'not listed again' ls.err) times"
  [ "$(wc -l < ls.out)" -lt 200 ] && pass || fail "$fs: ls -R printed $(wc -l < ls.out) lines"
  timeout 60 "$FSIMG" ls -R --json "$img" >ls.json 2>/dev/null && pass || fail "$fs: ls -R --json"
  python3 -c "import json,sys; d=json.load(open('ls.json')); sys.exit(0 if sum(e['name']=='LEAF.TXT' for e in d['entries'])==1 else 1)" \
    && pass || fail "$fs: ls -R --json lists LEAF.TXT more than once"
  # The gzipped DAG too.
  timeout 60 "$FSIMG" ls -R "$img.gz" >/dev/null 2>&1 && pass || fail "$fs: ls -R of the .gz"

  # extract: bounded output, a warning per second path, exit 0 (nothing failed).
  rm -rf out
  timeout 60 "$FSIMG" extract "$img" -C out >ex.out 2>ex.err; rc=$?
  [ $rc = 0 ] && pass || fail "$fs: extract exit $rc ($(grep -v 'not extracted again' ex.err | head -3))"
  [ "$(find out -name LEAF.TXT | wc -l)" = 1 ] && pass || fail "$fs: extract wrote $(find out -name LEAF.TXT | wc -l) LEAF.TXT"
  [ "$(find out -type d | wc -l)" -le $((DEPTH + 2)) ] && pass || fail "$fs: extract made $(find out -type d | wc -l) directories"
  [ "$(grep -c 'warning: .*not extracted again' ex.err)" = $DEPTH ] && pass || fail "$fs: extract warned $(grep -c 'warning: .*not extracted again' ex.err) times"

  # fsck: bounded, and the second entries are findings (NTFS: the record has one name, two entries).
  case $fs in fat32) code=fat.chain.cross-link ;; exfat) code=exfat.chain.cross-link ;; ntfs) code=ntfs.index.extra-entry ;; esac
  timeout 60 "$FSIMG" fsck --json "$img" >fsck.json 2>fsck.err; rc=$?
  [ $rc = 4 ] && pass || fail "$fs: fsck exit $rc ($(head -3 fsck.err))"
  python3 -c "import json,sys; d=json.load(open('fsck.json')); sys.exit(0 if sum(f.get('count',1) for f in d['findings'] if f['code']=='$code')==$DEPTH else 1)" \
    && pass || fail "$fs: fsck does not report $code $DEPTH times: $(python3 -c "import json; print(sorted({f['code'] for f in json.load(open('fsck.json'))['findings']}))" 2>&1)"

  # slack: each directory charged once.
  timeout 60 "$FSIMG" slack -t fat32 -c 4K --json "$img" >sl.json 2>sl.err; rc=$?
  [ $rc = 0 ] && pass || fail "$fs: slack exit $rc ($(head -3 sl.err))"
  python3 -c "import json,sys; d=json.load(open('sl.json')); t=d['tree']; sys.exit(0 if t['files']==1 and t['directories']<=$((2*DEPTH+1)) else 1)" 2>/dev/null \
    && pass || fail "$fs: slack tree: $(python3 -c "import json; print(json.load(open('sl.json')).get('tree'))" 2>&1)"
done

# ls --json of an empty directory: entries is [], never null.
mkdir -p e/empty && "$FSIMG" mkfs -q -t fat32 -s 64M --from e e.img
"$FSIMG" ls --json e.img /empty > e.json || fail "ls --json of an empty directory"
python3 -c "import json,sys; sys.exit(0 if json.load(open('e.json'))['entries']==[] else 1)" && pass \
  || fail "ls --json of an empty directory: $(cat e.json)"

# slack of a damaged image (neither FAT, exFAT nor NTFS) is exit 1, not 2.
head -c 1048576 /dev/urandom > junk.img
"$FSIMG" slack junk.img >/dev/null 2>err; rc=$?
[ $rc = 1 ] && pass || fail "slack of a damaged image: exit $rc ($(cat err))"
finish
