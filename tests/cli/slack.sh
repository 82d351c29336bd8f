#!/usr/bin/env bash
# fsimg slack: the seed case, --verify (predicted == populate, FAT32,
# exFAT and NTFS) on make-tree profiles at several cluster sizes, outputs, and bad
# input (exit 2, no partial --chart/--output file).
# cost: 19
. "$(dirname "$0")/../lib.sh"
[ -x "$SHARED/trees/make-tree" ] || { echo "../shared/trees/make-tree missing: skipped"; exit 77; }

MT="$SHARED/trees/make-tree"

# The seed case: one 45-byte file on exFAT with 1 MiB clusters costs 1 MiB.
mkdir -p "$WORK/seed"; head -c 45 /dev/zero > "$WORK/seed/note45.txt"
out=$("$FSIMG" slack -t exfat -c 1M --csv "$WORK/seed")
if echo "$out" | grep -q '^exfat,1048576,1048576,1048531,'; then pass; else fail "seed case: $out"; fi

# --verify on make-tree trees: every cluster size must be EQUAL, for FAT32
# and for exFAT (the image's allocation bitmap).
verify() {  # FS PROFILE SCALE CLUSTERS [SLACK-ARGS...]
  local fs=$1 profile=$2 scale=$3 clusters=$4; shift 4
  local dir="$WORK/tree-$profile"
  if [ ! -d "$dir" ]; then
    python3 "$MT" "$profile" "$dir" --scale "$scale" --zero >/dev/null 2>&1 || { fail "make-tree $profile"; return; }
  fi
  local out rc
  out=$("$FSIMG" slack -t "$fs" -c "$clusters" --verify --json "$@" "$dir" 2>"$WORK/err"); rc=$?
  if [ $rc -ne 0 ]; then fail "verify $fs $profile: exit $rc: $(cat "$WORK/err")"; return; fi
  if echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
v = j["verify"]
assert len(v) == len(sys.argv[1].split(",")), v
for r in v:
    assert r["filesystem"] == sys.argv[2], r
    assert r["predicted_clusters"] == r["actual_clusters"] == r["planned_clusters"], r
print(sys.argv[2], sys.argv[3], " ".join("%d:%d" % (r["cluster_bytes"], r["actual_clusters"]) for r in v))
' "$clusters" "$fs" "$profile"; then pass; else fail "verify $fs $profile not equal"; fi
}
verify fat32 small 0.05 512,4K,32K,64K
verify fat32 edges 1 512,4K,32K
verify fat32 names 1 512,4K,64K
verify fat32 wide 0.25 4K,32K
verify exfat small 0.05 512,4K,32K,1M
verify exfat edges 1 512,4K,32K,1M
verify exfat names 1 512,4K,32K,1M
verify exfat wide 0.25 512,4K,32K,1M
# NTFS: the $Bitmap of an image built with populate; the index B-trees, the
# resident files and the $MFT growth come from the same ntfs library code
# (ntfs/index_plan.hpp). wide at 0.25 is 5,000 entries in one directory (a
# 2-level index); tests/oracle/ntfs_populate.sh verifies the full 20,000.
verify ntfs small 0.05 512,4K,64K
verify ntfs edges 1 512,4K,64K
verify ntfs names 1 512,4K,64K
verify ntfs wide 0.25 512,4K,64K
# a given volume size (not the smallest that holds the tree) and 32 MiB clusters
verify exfat small 0.05 4K,128K --volume-size 1G
verify exfat edges 1 32M --volume-size 8G

# The table marks a best row; JSON has a schema_version; the chart is SVG.
"$FSIMG" slack "$WORK/tree-edges" --volume-size 1G --top 3 --chart "$WORK/c.svg" >"$WORK/t.txt" || fail "table run"
grep -q '^\*' "$WORK/t.txt" && grep -q 'Recommendation:' "$WORK/t.txt" && pass || fail "table: $(cat "$WORK/t.txt")"
grep -q '<svg' "$WORK/c.svg" && grep -q 'exFAT total' "$WORK/c.svg" && pass || fail "chart"
"$FSIMG" slack --json "$WORK/tree-edges" | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["schema_version"]==1 and j["rows"]' \
  && pass || fail "json"

# A listing gives the same numbers as the walk.
(cd "$WORK/tree-small" && find . -type f -printf '%s\t%P\n') > "$WORK/list.txt"
a=$("$FSIMG" slack --csv "$WORK/tree-small"); b=$("$FSIMG" slack --csv --from-list "$WORK/list.txt")
# empty directories are not in a -type f listing: compare data columns only
if [ "$(echo "$a" | cut -d, -f1-5)" = "$(echo "$b" | cut -d, -f1-5)" ]; then pass; else fail "listing vs walk"; fi
b2=$("$FSIMG" slack --csv --from-list - < "$WORK/list.txt")
[ "$b" = "$b2" ] && pass || fail "--from-list - (stdin)"

# A FAT image as the source gives the tree's numbers back.
"$FSIMG" mkfs -t fat32 -c 4K --from "$WORK/tree-edges" "$WORK/e.img" >/dev/null 2>&1 || fail "mkfs edges"
a=$("$FSIMG" slack --csv -t fat32 "$WORK/tree-edges" | cut -d, -f1-7)
b=$("$FSIMG" slack --csv -t fat32 "$WORK/e.img" | cut -d, -f1-7)
[ "$a" = "$b" ] && pass || fail "image source: $a vs $b"
# exFAT and NTFS images as sources (read with the library's readers): the
# whole report equals the tree's, every filesystem and cluster size.
for t in exfat ntfs; do
  "$FSIMG" mkfs -q -t $t -s 512M --from "$WORK/tree-edges" "$WORK/e-$t.img" || fail "mkfs -t $t edges"
  # (but the last column, "current": the image's own row is marked)
  a=$("$FSIMG" slack --csv -c 4K,64K "$WORK/tree-edges" | cut -d, -f1-16)
  b=$("$FSIMG" slack --csv -c 4K,64K "$WORK/e-$t.img" | cut -d, -f1-16)
  [ -n "$a" ] && [ "$a" = "$b" ] && pass || fail "$t image source differs from the tree: $(diff <(echo "$a") <(echo "$b") | head -4)"
done

# Bad input: exit 2, a clear message, no partial output files.
bad() {  # EXPECTED-MESSAGE-REGEX ARGS...: exit ${BAD_RC:-2} (usage), the message, no partial output
  local re=$1; shift
  rm -f "$WORK/out.svg" "$WORK/out.csv"
  local err rc
  err=$("$FSIMG" slack "$@" --chart "$WORK/out.svg" -o "$WORK/out.csv" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne "${BAD_RC:-2}" ]; then fail "exit $rc for $*: $err"; return; fi
  if ! echo "$err" | grep -Eq -- "$re"; then fail "message for $*: $err"; return; fi
  if [ -e "$WORK/out.svg" ] || [ -e "$WORK/out.csv" ]; then fail "partial output for $*"; return; fi
  pass
}
printf '1\tok\nbroken line\n' > "$WORK/bad.list"
printf '12x\tfile\n' > "$WORK/bad2.list"
head -c 4096 /dev/urandom > "$WORK/random.bin"
bad 'No such file' "$WORK/missing"
# A damaged or unknown image is exit 1 (docs/exit-codes.md), not a usage error.
BAD_RC=1 bad 'not a directory, and not a readable FAT image' "$WORK/random.bin"
bad 'bad.list:2: expected SIZE<TAB>PATH' --from-list "$WORK/bad.list"
bad 'bad2.list:1: the size "12x"' --from-list "$WORK/bad2.list"
bad 'FAT32 allows 512 B' -t fat32 -c 1M "$WORK/seed"
bad 'power of two' -c 3K "$WORK/seed"
bad 'unknown suffix|size' --volume-size 12Q "$WORK/seed"
bad 'expected fat32, exfat or ntfs' -t ext4 "$WORK/seed"
bad '--top: N is a count: 0 or more' --top -1 "$WORK/seed"
# sizes out of range, listings that cannot be used, images that cannot be read
printf '1\tok\n18446744073709551616\tbig\n' > "$WORK/big.list"
printf '1\ta/../b\n' > "$WORK/dots.list"
printf '1\ta/b\n1\tc\n1\ta/d\n' > "$WORK/split.list"
bad 'big.list:2: the size "18446744073709551616" is not a decimal number of bytes that fits 64 bits' \
  --from-list "$WORK/big.list"
bad 'dots.list:1: the path "a/../b" contains . or ..' --from-list "$WORK/dots.list"
bad 'split.list:3: the directory "a" was left earlier' --from-list "$WORK/split.list"
bad 'from-list .*missing.list: no such file' --from-list "$WORK/missing.list"
bad 'power of two from 512 B to 32 MiB' -c 64M "$WORK/seed"
bad 'at least 1 MiB' --volume-size 100K "$WORK/seed"
bad 'does not fit in 64 bits' --volume-size 99999999999T "$WORK/seed"
bad 'FAT32 cannot be made on a volume of 1 MiB' -t fat32 --volume-size 1M "$WORK/seed"
bad 'expected a percentage' --tolerance 200% "$WORK/seed"
gzip -c "$WORK/e.img" | head -c 30000 > "$WORK/cut.img.gz"
BAD_RC=1 bad 'cut.img.gz: .*gzip stream ends early' "$WORK/cut.img.gz"
bad 'no partition table, so there is no partition 2' "$WORK/e.img@2"
bad '--verify needs exactly one directory SOURCE' -t fat32 --verify --from-list "$WORK/list.txt"
finish
