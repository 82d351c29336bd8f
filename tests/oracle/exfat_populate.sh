#!/usr/bin/env bash
# mkfs -t exfat --from: trees from ../shared/trees/make-tree (small, edges,
# names minus what exFAT refuses, wide; scaled down) at clusters of 512 B,
# 4 KiB, 32 KiB and 1 MiB (the trees side by side in one image per cluster size; edges also
# at 4 and 32 MiB), 512- and 4096-byte sectors, MBR and GPT cases (a
# label; the whole 20,000-file wide tree sized with -s auto), pass every independent checker and read back exactly the manifest
# (check-image --manifest: fsck.exfat, dump.exfat, sleuthkit; exfat-fuse on every third);
# dump.exfat counts exactly the clusters mkfs says it used (the allocation
# bitmap); two runs give the same bytes; hard links are stored as copies and
# symbolic links per --symlinks; slack --verify -t exfat is EQUAL;
# the Linux exfat driver reads (and writes into) one small populated image
# (kernel-check), after which fsck.exfat -n and our fsck find it clean. The names profile first proves the refusal: every offender
# listed, no image left; a tree larger than the volume is refused with needed
# vs available. The 4 GiB + 1 file is in exfat_populate_huge.sh (slow).
# cost: 133
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
MT=$SHARED/trees/make-tree
T=$WORK/trees
mkdir -p "$T"

"$MT" small "$T/small" --scale 0.1 >/dev/null
"$MT" edges "$T/edges" >/dev/null
"$MT" wide "$T/wide" --scale 0.1 >/dev/null
"$MT" names "$T/names" >/dev/null 2>&1
"$MT" wide "$T/widefull" >/dev/null  # 20,000 entry sets in one directory

# names: the refusal lists exactly the names exFAT cannot hold, and leaves nothing.
out=$("$FSIMG" mkfs -q -t exfat -s 64M --from "$T/names" "$WORK/refused.img" 2>&1); rc=$?
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
/names/tab\x09name.txt'
got=$(echo "$out" | sed -n 's/^  \(\/names\/.*\): .*/\1/p')
[ "$got" = "$expected" ] && pass || { fail "names offenders differ"; diff <(echo "$expected") <(echo "$got"); }
grep -q "stored on exFAT (9 problems); nothing was written" <<<"$out" && pass || fail "names: no problem count: $out"
grep -q "casename.TXT: differs only in letter case from \"CaseName.txt\" (exFAT names are case-insensitive)" <<<"$out" && pass || fail "names: case duplicate reason: $out"
# exFAT keeps trailing dots and spaces (FAT refuses them); the rest is accepted.
(cd "$T/names/names" && rm -f 'back\slash.txt' casename.TXT colon:name.txt 'lt<gt>.txt' 'pipe|name.txt' \
  'question?.txt' 'quote".txt' 'star*name.txt' "$(printf 'tab\tname.txt')")

# A tree larger than the volume: needed vs available, nothing left.
out=$("$FSIMG" mkfs -q -t exfat -s 8M -c 4K --from "$T/small" "$WORK/full.img" 2>&1); rc=$?
[ "$rc" = 2 ] && [ ! -e "$WORK/full.img" ] && pass || fail "full: exit $rc or image left"
grep -q "the tree needs .* clusters of 4 KiB) (.* for data, .* for directories); the volume has .* free" <<<"$out" && pass || fail "full: no needed/available: $out"

for p in small edges names wide widefull; do "$SHARED/oracles/make-manifest" "$T/$p" > "$T/$p.manifest"; done

n=0
pop() {  # pop PROFILE[+PROFILE...] CLUSTER [extra mkfs args]: populate (the trees side by side in the
  # root: their top-level names differ), check, compare clusters with dump.exfat. Several trees in
  # one image take one check-image, most of whose cost is the same whatever it holds (issue 43).
  local p=$1 c=$2 q from=(); shift 2
  for q in ${p//+/ }; do from+=(--from "$T/$q"); done
  [ -f "$T/$p.manifest" ] || for q in ${p//+/ }; do cat "$T/$q.manifest"; done > "$T/$p.manifest"
  n=$((n + 1))
  local img=$WORK/$p-$c.img
  if ! out=$("$FSIMG" mkfs -t exfat -c "$c" --volume-id "$(printf 'E0F0%04X' $n)" "${from[@]}" "$@" "$img" 2>&1); then
    fail "mkfs -t exfat --from $p -c $c $*: $out"; return
  fi
  # exfat-fuse reads every third image (its mount and exit cost 2 s of the 2.4 s a check takes);
  # fsck.exfat, dump.exfat and sleuthkit's reader every one.
  local fuse=(); [ $((n % 3)) = 1 ] || fuse=(--skip read-exfat-fuse)
  check "$img" -j 2 "${fuse[@]}" --manifest "$T/$p.manifest"
  local used vol=$img
  used=$(echo "$out" | sed -n 's/.* \([0-9,]*\) of [0-9,]* clusters used.*/\1/p' | tr -d ,)
  case " $* " in *" --partition-table "*)  # dump.exfat reads a volume: cut out partition 1 (at 1 MiB)
    vol=$WORK/part.img; dd if="$img" of="$vol" bs=1M skip=1 conv=sparse status=none ;; esac
  local total free
  total=$(dump.exfat "$vol" 2>/dev/null | sed -n 's/^Total Clusters:[[:space:]]*\([0-9]*\)$/\1/p')
  free=$(dump.exfat "$vol" 2>/dev/null | sed -n 's/^Free Clusters:[[:space:]]*\([0-9]*\)$/\1/p')
  [ -n "$used" ] && [ -n "$total" ] && [ "$used" = "$((total - free))" ] && pass || fail "$p -c $c: mkfs says $used clusters used, dump.exfat counts $((total - free))"
  echo "$p -c $c $*: $(echo "$out" | grep -o 'exFAT [0-9].*' | head -1)"
  rm -f "$img" "$WORK/part.img"
}
for c in 512 4K 32K 1M; do pop small+edges+names+wide "$c"; done
# The largest clusters (the edges tree: 66 files, so the sparse image stays small).
for c in 4M 32M; do pop edges "$c"; done
pop edges 32M --sector-size 4096
# 4096-byte sectors.
for c in 4K 32K 1M; do pop small+names "$c" --sector-size 4096; done
# A partition table and a label (the root keeps the label entry first), a fixed size.
pop names 4K -s 64M --partition-table gpt -L POPULATED
pop small 32K -s 256M --partition-table mbr
pop widefull 4K --partition-table gpt  # -s auto with a partition table

# The same inputs give the same bytes (no --volume-id: the serial comes from SOURCE_DATE_EPOCH).
mkdir -p "$T/single/boot" && head -c 3000 /dev/urandom > "$T/single/boot/config.txt"  # and a single file
for run in 1 2; do
  "$FSIMG" mkfs -q -t exfat -c 4K --from "$T/names" --from "$T/edges:/more/edges" \
    --from "$T/single/boot/config.txt:/boot/config.txt" "$WORK/r$run.img" || fail "mkfs repro $run"
done
cmp -s "$WORK/r1.img" "$WORK/r2.img" && pass || fail "two runs differ: $(cmp "$WORK/r1.img" "$WORK/r2.img")"
{ cat "$T/names.manifest"; "$SHARED/oracles/make-manifest" "$T/single"; printf 'd\t-\t-\tmore\nd\t-\t-\tmore/edges\n'
  awk -F'\t' -v OFS='\t' '{ $4 = "more/edges/" $4; print }' "$T/edges.manifest"; } > "$T/merged.manifest"
check "$WORK/r1.img" -j 2 --manifest "$T/merged.manifest"
# Our own reader agrees too: fsimg extract gives back the manifest.
"$FSIMG" extract "$WORK/r1.img" -C "$WORK/x" 2>/dev/null || fail "fsimg extract"
"$SHARED/oracles/make-manifest" "$WORK/x" | diff -q - <(LC_ALL=C sort -t "$(printf '\t')" -k4,4 "$T/merged.manifest") >/dev/null \
  && pass || fail "fsimg extract differs from the manifest"
rm -rf "$WORK/r1.img" "$WORK/r2.img" "$WORK/x"

# Hard links become copies; symbolic links: skipped with a warning (default) or followed.
mkdir -p "$T/links/d" "$T/links-expected/d"
echo "linked content" > "$T/links/d/a.txt"
ln "$T/links/d/a.txt" "$T/links/d/hard.txt"
ln -s a.txt "$T/links/d/soft.txt"
for f in a.txt hard.txt soft.txt; do echo "linked content" > "$T/links-expected/d/$f"; done
"$SHARED/oracles/make-manifest" "$T/links-expected" > "$T/links-follow.manifest"
grep -v soft.txt "$T/links-follow.manifest" > "$T/links-skip.manifest"
out=$("$FSIMG" mkfs -t exfat -s 8M --from "$T/links" "$WORK/links.img" 2>&1) || fail "links (skip): $out"  # no -q: it silences warnings
grep -q "warning: skipped symbolic link .*/d/soft.txt" <<<"$out" && pass || fail "links: no warning for the symlink: $out"
check "$WORK/links.img" -j 2 --manifest "$T/links-skip.manifest"
"$FSIMG" mkfs -q -t exfat -s 8M --symlinks follow --from "$T/links" "$WORK/links.img" --force || fail "links (follow)"
check "$WORK/links.img" -j 2 --manifest "$T/links-follow.manifest"
out=$("$FSIMG" mkfs -q -t exfat -s 8M --symlinks error --from "$T/links" "$WORK/links-e.img" 2>&1)
[ $? = 2 ] && grep -q "/d/soft.txt: .* is a symbolic link (--symlinks error)" <<<"$out" && [ ! -e "$WORK/links-e.img" ] && pass || fail "links (error): $out"
rm -f "$WORK/links.img"

# slack --verify: predicted == the bitmap of a real populated image.
verify() {  # PROFILE CLUSTERS
  local out
  if ! out=$("$FSIMG" slack -t exfat -c "$2" --verify --json "$T/$1" 2>"$WORK/err"); then
    fail "slack --verify $1: $(cat "$WORK/err")"; return
  fi
  if python3 -c '
import json, sys
v = json.load(sys.stdin)["verify"]
want = len(sys.argv[1].split(","))
ok = len(v) == want and all(r["filesystem"] == "exfat" and r["equal"] for r in v)
for r in v: print("  verify %s %s: predicted %d, actual %d" % (sys.argv[2], r["cluster_bytes"], r["predicted_clusters"], r["actual_clusters"]))
sys.exit(0 if ok else 1)' "$2" "$1" <<<"$out"; then pass; else fail "slack --verify $1 not EQUAL"; fi
}
verify small 512,4K,32K,1M
verify edges 512,4K,32K,1M
verify names 512,4K,1M
verify wide 512,4K,32K

# The Linux exfat driver: one small image, read, written to, re-checked.
if [ -x "$SHARED/oracles/kernel-check" ]; then
  "$FSIMG" mkfs -q -t exfat -s 128M -c 4K --from "$T/small" "$WORK/k.img" || fail "mkfs for kernel-check"
  if kout=$("$SHARED/oracles/kernel-check" --write --timeout 600 --keep "$WORK/kc" --manifest "$T/small.manifest" \
      "$WORK/k.img" 2>&1); then pass; else
    fail "kernel-check small"; echo "$kout" | sed 's/^/    /'; fi
  echo "$kout" | tail -1
  # The copy the kernel wrote into (fsck.exfat -n found it clean: host-fsck) is clean to our fsck too.
  if fout=$("$FSIMG" fsck -n "$WORK/kc/copy.img" 2>&1); then pass; else
    fail "fsimg fsck of the kernel-written copy:"; echo "$fout" | sed 's/^/    /'; fi
fi
echo "$n populated images"
finish
