#!/usr/bin/env bash
# mkfs --from: trees from ../shared/trees/make-tree (small, edges, names minus
# what FAT refuses, wide, camera; scaled down) at clusters of 512 B, 4 KiB,
# 32 KiB and 64 KiB (the five trees side by side in one image per cluster
# size) pass every independent checker and read back exactly the
# manifest (check-image --manifest); fsck.fat counts exactly the clusters the
# cost model predicts (mkfs prints "N of M clusters used"); the Linux vfat
# driver reads one small populated image (kernel-check; more in
# fat_populate_kernel.sh, label slow). The names profile first proves the
# refusal: every offender listed, no image left.
# cost: 35
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
MT=$SHARED/trees/make-tree
T=$WORK/trees
mkdir -p "$T"

"$MT" small "$T/small" --scale 0.1 >/dev/null
"$MT" edges "$T/edges" >/dev/null
"$MT" wide "$T/wide" --scale 0.1 >/dev/null
"$MT" camera "$T/camera" --scale 0.05 >/dev/null
"$MT" names "$T/names" >/dev/null 2>&1

# names: the refusal lists exactly the names FAT cannot hold, and leaves nothing.
out=$("$FSIMG" mkfs -q -t fat32 --from "$T/names" "$WORK/refused.img" 2>&1); rc=$?
[ "$rc" = 2 ] && pass || fail "names tree: exit $rc, expected 2"
[ ! -e "$WORK/refused.img" ] && [ -z "$(ls -A "$WORK" | grep -v trees)" ] && pass || fail "names tree: something was left: $(ls -A "$WORK")"
expected='/names/back\slash.txt
/names/casename.TXT
/names/colon:name.txt
/names/lt<gt>.txt
/names/pipe|name.txt
/names/question?.txt
/names/quote".txt
/names/star*name.txt
/names/tab\x09name.txt
/names/trailing dot.
/names/trailing space '
got=$(echo "$out" | sed -n 's/^  \(\/names\/.*\): .*/\1/p')
[ "$got" = "$expected" ] && pass || { fail "names offenders differ"; diff <(echo "$expected") <(echo "$got"); }
grep -q "(11 problems); nothing was written" <<<"$out" && pass || fail "names: no problem count: $out"
# The same tree minus the offenders is accepted.
(cd "$T/names/names" && rm -f 'back\slash.txt' casename.TXT colon:name.txt 'lt<gt>.txt' 'pipe|name.txt' \
  'question?.txt' 'quote".txt' 'star*name.txt' "$(printf 'tab\tname.txt')" 'trailing dot.' 'trailing space ')

for p in small edges wide camera names; do "$SHARED/oracles/make-manifest" "$T/$p" > "$T/$p.manifest"; done

n=0
pop() {  # pop PROFILE[+PROFILE...] CLUSTER TYPE [extra mkfs args]: populate (the trees side by side in
  # the root: their top-level names differ), check, compare clusters. Several trees in one image
  # take one check-image (about 1.4 CPU-s, most of it the same whatever the image holds; issue 43).
  local p=$1 c=$2 t=$3 q from=(); shift 3
  for q in ${p//+/ }; do from+=(--from "$T/$q"); done
  [ -f "$T/$p.manifest" ] || for q in ${p//+/ }; do cat "$T/$q.manifest"; done > "$T/$p.manifest"
  n=$((n + 1))
  local img=$WORK/$p-$c.img
  if ! out=$("$FSIMG" mkfs -t "$t" -c "$c" --volume-id "$(printf 'FEED%04X' $n)" "${from[@]}" "$@" "$img" 2>&1); then
    fail "mkfs --from $p -c $c -t $t: $out"; return
  fi
  check "$img" -j 2 --manifest "$T/$p.manifest"
  local predicted fsck
  predicted=$(echo "$out" | sed -n 's/.* \([0-9,]*\) of [0-9,]* clusters used.*/\1/p' | tr -d ,)
  local vol=$img
  case " $* " in *" --partition-table "*)  # fsck.fat reads a volume, not a disk: cut out partition 1 (at 1 MiB)
    vol=$WORK/part.img; dd if="$img" of="$vol" bs=1M skip=1 conv=sparse status=none ;; esac
  fsck=$(fsck.fat -n "$vol" | sed -n 's/.* files, \([0-9]*\)\/[0-9]* clusters$/\1/p')
  [ -n "$predicted" ] && [ "$predicted" = "$fsck" ] && pass || fail "$p -c $c: predicted $predicted clusters, fsck.fat counts $fsck"
  echo "$p -c $c ($t): $(echo "$out" | grep -o 'FAT[0-9]* .*' | head -1)"
  rm -f "$img" "$WORK/part.img"
}
for c in 512 4K 32K 64K; do
  case $c in 512) t=fat32 ;; 4K) t=fat16 ;; 32K) t=fat ;; 64K) t=fat32 ;; esac
  pop small+edges+names+wide+camera "$c" "$t"
done
# Partition tables and a label (the root keeps its label entry first).
pop small 4K fat32 --partition-table gpt -L POPULATED
pop names 2K fat12 --partition-table mbr -L NAMES
# 4096-byte sectors (fatcat reads 512-byte sectors only, see fat_matrix.sh).
for t in fat32 fat12; do
  "$FSIMG" mkfs -q -t $t -c 4K --sector-size 4096 --from "$T/names" "$WORK/s4k.img" 2>/dev/null || fail "mkfs $t 4Kn"
  check "$WORK/s4k.img" -j 2 --skip fatcat --manifest "$T/names.manifest"
  rm -f "$WORK/s4k.img"
done
# Two sources merged, one under a destination path, and a single file stored under another name.
n=$((n + 1))
mkdir -p "$T/single/boot" && head -c 3000 /dev/urandom > "$T/single/boot/config.txt"
"$FSIMG" mkfs -q -t fat32 --from "$T/small" --from "$T/camera:/photos/2024" \
  --from "$T/single/boot/config.txt:/boot/config.txt" "$WORK/merged.img" || fail "merged mkfs"
{ "$SHARED/oracles/make-manifest" "$T/small"; "$SHARED/oracles/make-manifest" "$T/single"; } > "$T/merged.manifest"
{ printf 'd\t-\t-\tphotos\nd\t-\t-\tphotos/2024\n'; "$SHARED/oracles/make-manifest" "$T/camera" | awk -F'\t' -v OFS='\t' '{ $4 = "photos/2024/" $4; print }'; } >> "$T/merged.manifest"
check "$WORK/merged.img" -j 2 --manifest "$T/merged.manifest"
rm -f "$WORK/merged.img"

# The Linux vfat driver, one small image (more: fat_populate_kernel.sh).
if [ -x "$SHARED/oracles/kernel-check" ]; then
  "$FSIMG" mkfs -q -t fat16 -c 2K --from "$T/names" "$WORK/k.img" || fail "mkfs for kernel-check"
  if kout=$("$SHARED/oracles/kernel-check" --manifest "$T/names.manifest" "$WORK/k.img" 2>&1); then pass; else
    fail "kernel-check names"; echo "$kout" | sed 's/^/    /'; fi
fi
echo "$n populated images"
finish
