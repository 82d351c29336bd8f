#!/usr/bin/env bash
# fsimg extract / cat / ls on mkfs.fat + mcopy images of make-tree trees:
# every extracted file matches the tree's manifest; extract never writes
# outside OUTDIR (existing files, symbolic links, hostile names).
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
command -v mkfs.fat >/dev/null && command -v mcopy >/dev/null || { echo "mkfs.fat/mtools missing: skipped"; exit 77; }
export MTOOLS_SKIP_CHECK=1
damage="$here/../tools/fat_damage.py"
tree="$WORK/tree"
"$SHARED/trees/make-tree" small "$tree" --scale 0.05 >/dev/null || { fail "make-tree small"; finish; exit; }
"$SHARED/trees/make-tree" names "$WORK/names" --scale 0.05 >/dev/null || { fail "make-tree names"; finish; exit; }
mkdir -p "$tree/names"
cp -r "$WORK/names/shortnames" "$tree/names/"
# Names FAT and mtools store faithfully: no characters outside the BMP
# (mtools cannot write them), none that FAT forbids or Windows strips.
for f in "$WORK/names/names/"*; do
  b=$(basename "$f")
  case "$b" in *[\\/:*?\"\<\>\|]*|*$'\t'*|" "*|*" "|*.|CON|aux.txt|nul.c|casename.TXT|emoji*|math*) continue ;; esac
  cp -r "$f" "$tree/names/"
done
"$SHARED/oracles/make-manifest" "$tree" >"$WORK/tree.manifest" || { fail "make-manifest"; finish; exit; }
for spec in "fat12:-F 12 -s 16:24" "fat16:-F 16 -s 4:64" "fat32:-F 32 -s 1:300"; do
  IFS=: read -r name args size <<<"$spec"
  img="$WORK/$name.img"; truncate -s "${size}M" "$img"
  mkfs.fat $args "$img" >/dev/null && mcopy -s -i "$img" "$tree"/* ::/ || { fail "$name: mkfs.fat/mcopy"; continue; }
  out="$WORK/out-$name"
  if "$FSIMG" extract "$img" -C "$out" 2>"$WORK/err"; then pass; else fail "$name: extract: $(cat "$WORK/err")"; fi
  if diff <("$SHARED/oracles/make-manifest" "$out") "$WORK/tree.manifest" >"$WORK/diff"; then pass
  else fail "$name: extracted tree differs from the manifest"; head -20 "$WORK/diff"; fi
  # cat gives the same bytes, ls -R lists every entry of the manifest
  f=$(awk -F'\t' '$1=="f" {print $4; exit}' "$WORK/tree.manifest")
  if cmp -s <("$FSIMG" cat "$img" "$f") "$tree/$f"; then pass; else fail "$name: cat $f"; fi
  if [ "$("$FSIMG" ls -R "$img" | wc -l)" = "$(wc -l <"$WORK/tree.manifest")" ]; then pass; else fail "$name: ls -R count"; fi
done
img="$WORK/fat16.img"; out="$WORK/out-fat16"
# dump --what fat | dir PATH | extents PATH
f=$(awk -F'\t' '$1=="f" && $2 > 20000 {print $4; exit}' "$WORK/tree.manifest")
size=$(awk -F'\t' -v p="$f" '$4==p {print $2}' "$WORK/tree.manifest")
if "$FSIMG" dump --json --what extents "$f" "$img" | python3 -c '
import json, sys
j = json.load(sys.stdin); size = int(sys.argv[1])
need = -(-size // j["cluster_bytes"])
assert j["size"] == size and j["clusters"] == need == sum(r["count"] for r in j["runs"]), j
assert j["end"] == "end of chain", j' "$size"; then pass; else fail "dump --what extents $f"; fi
dirdump=$("$FSIMG" dump --what dir /names "$img")
if grep -q 'LFN .*"' <<<"$dirdump"; then pass; else fail "dump --what dir /names"; fi
if "$FSIMG" dump --json --what fat "$img" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["used_clusters"] == sum(c["clusters"] for c in j["chains"]) and j["chain_count"] == len(j["chains"]), j' ; then pass
else fail "dump --what fat"; fi
# Existing files are not replaced without --force.
if "$FSIMG" extract "$img" -C "$out" 2>"$WORK/err"; then fail "second extract without --force succeeded"
elif grep -q "use --force" "$WORK/err"; then pass; else fail "second extract: $(head -3 "$WORK/err")"; fi
if "$FSIMG" extract "$img" -C "$out" --force 2>"$WORK/err"; then pass; else fail "extract --force: $(head -3 "$WORK/err")"; fi
# A symbolic link in OUTDIR is never followed.
out2="$WORK/out-link"; mkdir -p "$out2" "$WORK/outside"
ln -s "$WORK/outside" "$out2/names"
"$FSIMG" extract "$img" -C "$out2" --force >/dev/null 2>&1
if [ -z "$(ls -A "$WORK/outside")" ]; then pass; else fail "extract wrote through a symbolic link"; fi
# Hostile long names ("..", "a/b") are skipped, reported, and write nothing outside.
src="$WORK/small"; mkdir -p "$src"; echo hi >"$src/A.TXT"; echo long >"$src/Long name file.txt"
for kind in name-dotdot name-slash; do
  h="$WORK/$kind.img"; truncate -s 4M "$h"; mkfs.fat -F 12 "$h" >/dev/null; mcopy -i "$h" "$src"/* ::/
  python3 "$damage" "$h" "$kind" >/dev/null || { fail "damage $kind"; continue; }
  o="$WORK/hostile-$kind/inner"; mkdir -p "$o"
  "$FSIMG" extract "$h" -C "$o" 2>"$WORK/err"; rc=$?
  if [ $rc = 1 ] && grep -q skipped "$WORK/err" && [ -z "$(ls -A "$WORK/hostile-$kind" | grep -v inner)" ] &&
     [ -f "$o/A.TXT" ]; then pass; else fail "$kind: rc $rc, $(cat "$WORK/err")"; fi
  if "$FSIMG" fsck -n "$h" >/dev/null; then fail "$kind: fsck says clean"; else pass; fi
done
finish
