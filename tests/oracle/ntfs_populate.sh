#!/usr/bin/env bash
# mkfs -t ntfs --from: trees from ../shared/trees/make-tree (small and wide
# scaled down, edges, the whole 20,000-file wide tree sized with -s auto) at
# clusters of 512 B, 4 KiB and 64 KiB (small, edges and wide side by side in
# one image per cluster size) pass every independent reader and read
# back exactly the manifest (check-image --manifest: ntfsfix, ntfsinfo,
# ntfsls, ntfsresize, The Sleuth Kit, libfsntfs, 7-Zip, ntfs-3g/ntfscat,
# icat); files of resident limit - 1, limit and limit + 1 bytes (the limit
# worked out from the record layout, for 1 KiB and 4 KiB records, for 5-unit
# and 100-unit names) are
# resident, resident and non-resident (fsimg dump --what mft); two runs give
# the same bytes; refusals list every offender up front and leave nothing:
# a tree larger than the volume (needed vs available), an invalid UTF-8
# name, an unreadable file. The names profile: stored whole, with a warning
# for each name Windows programs cannot open.
# cost: 80
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
MT=$SHARED/trees/make-tree
T=$WORK/trees
mkdir -p "$T"

"$MT" small "$T/small" --scale 0.1 >/dev/null
"$MT" edges "$T/edges" >/dev/null
"$MT" wide "$T/wide" --scale 0.1 >/dev/null
"$MT" wide "$T/widefull" >/dev/null  # 20,000 entries in one directory: a 3-level index
"$MT" names "$T/names" >/dev/null 2>&1
rm -f "$T/names/names/$(printf 'tab\tname.txt')"  # make-manifest cannot write a TAB

# Resident limit (include/fsimg/ntfs/populate.hpp): record - first attribute
# offset - 96 ($STANDARD_INFORMATION) - 24 - r8(66 + 2L) ($FILE_NAME) - 24
# ($DATA header) - 8 (end marker), less the DOS name's $FILE_NAME (24 +
# r8(66 + 2D)). Names a.bin, b.bin, c.bin: L = 5, r8(76) = 80; their DOS
# names A~1.BIN...: D = 7, 24 + r8(80) = 104.
limit_1k=$((1024 - 56 - 96 - 24 - 80 - 104 - 24 - 8))  # 632 (formats.md §5.1: 840 - r8(90 + 10) - 104)
limit_4k=$((4096 - 72 - 96 - 24 - 80 - 104 - 24 - 8))  # 3688
# And names of 100 units (d..., e..., f... + 95 x + ".bin"): r8(66 + 200) =
# 272; DOS names DXXXXX~1.BIN: D = 12, 24 + r8(90) = 120.
long_1k=$((1024 - 56 - 96 - 24 - 272 - 120 - 24 - 8))  # 424
long_4k=$((4096 - 72 - 96 - 24 - 272 - 120 - 24 - 8))  # 3480
x95=$(printf 'x%.0s' $(seq 95))
for r in 1k 4k; do
  eval "lim=\$limit_$r; long=\$long_$r"
  mkdir -p "$T/res$r"
  head -c $((lim - 1)) /dev/urandom > "$T/res$r/a.bin"
  head -c "$lim" /dev/urandom > "$T/res$r/b.bin"
  head -c $((lim + 1)) /dev/urandom > "$T/res$r/c.bin"
  head -c $((long - 1)) /dev/urandom > "$T/res$r/d$x95.bin"
  head -c "$long" /dev/urandom > "$T/res$r/e$x95.bin"
  head -c $((long + 1)) /dev/urandom > "$T/res$r/f$x95.bin"
done
for p in small edges wide widefull names res1k res4k; do "$SHARED/oracles/make-manifest" "$T/$p" > "$T/$p.manifest"; done

n=0
pop() {  # pop PROFILE[+PROFILE...] CLUSTER [extra mkfs args]: populate (the trees side by side in the
  # root: their top-level names differ), then check-image --manifest (one for all of them, issue 43)
  local p=$1 c=$2 q from=(); shift 2
  for q in ${p//+/ }; do from+=(--from "$T/$q"); done
  [ -f "$T/$p.manifest" ] || for q in ${p//+/ }; do cat "$T/$q.manifest"; done > "$T/$p.manifest"
  n=$((n + 1))
  local img=$WORK/$p-$c.img
  if ! out=$("$FSIMG" mkfs -t ntfs -c "$c" --volume-id "$(printf 'E0F0%04X' $n)" "${from[@]}" "$@" "$img" 2>&1); then
    fail "mkfs -t ntfs --from $p -c $c $*: $out"; return
  fi
  # libfsntfs (fsntfsinfo -H) reads a sub-node at VCN x cluster size even when
  # INDX blocks are smaller than a cluster (NTFS counts those VCNs in 512-byte
  # units: ntfs-3g, Windows, formats.md §3.8), so with 64 KiB clusters it
  # fails on every directory with a multi-level index -- ntfs-3g's own too
  # (mkntfs -c 65536 + 2,000 files copied through ntfs-3g: the same error).
  local skip=()
  [ "$c" = 64K ] && skip=(--skip fsntfsinfo)
  check "$img" -j 2 --manifest "$T/$p.manifest" "${skip[@]}"
  echo "$p -c $c $*: $(echo "$out" | grep -o 'NTFS [0-9].*' | sed 's/serial [0-9A-F]*, //')"
  [ "${KEEP:-}" = 1 ] || rm -f "$img"
}
for c in 512 4K 64K; do pop small+edges+wide "$c" -s 416M; done
pop widefull 4K  # -s auto
pop widefull 64K -s 64M
pop small 4K -s 128M --partition-table gpt -L POPULATED

# slack --verify: the 20,000-entry directory (a 3-level index) costs what the
# analyzer predicts, cluster for cluster (tests/cli/slack.sh: the rest).
for c in 512,4K,64K; do
  if vout=$("$FSIMG" slack -t ntfs -c "$c" --verify --json "$T/widefull" 2>&1) && python3 -c '
import json, sys
v = json.loads(sys.argv[1])["verify"]
assert len(v) == 3 and all(r["predicted_clusters"] == r["planned_clusters"] == r["actual_clusters"] for r in v), v
print("slack --verify widefull:", " ".join("%d:%d" % (r["cluster_bytes"], r["actual_clusters"]) for r in v))
' "$vout"; then pass; else fail "slack --verify widefull: $vout"; fi
done

# names: everything NTFS allows is stored; what Windows cannot open is
# warned (POSIX names, case-only duplicates, device names). 7-Zip shows
# back\slash.txt as back_slash.txt (its own mapping; ntfs-3g and TSK read
# the stored name), so that name is left out of the comparison.
out=$("$FSIMG" mkfs -t ntfs -s 32M --from "$T/names" "$WORK/names.img" 2>&1) || fail "names: $out"
[ "$(grep -c 'is stored as a POSIX name' <<<"$out")" = 9 ] && pass || fail "names: POSIX warnings: $out"
grep -q 'casename.TXT: "casename.TXT" differs only in letter case from "CaseName.txt"' <<<"$out" && pass || fail "names: no case warning: $out"
grep -q '/names/CON: "CON" is a reserved device name' <<<"$out" && pass || fail "names: no device-name warning: $out"
check "$WORK/names.img" -j 2 --manifest "$T/names.manifest" --ignore 'names/back?slash.txt'
rm -f "$WORK/names.img"

# The resident limit: a.bin (limit - 1) and b.bin (limit) resident, c.bin
# (limit + 1) not; records 64, 65, 66 (the first user records); the same for
# the 100-unit names d..., e..., f... in records 67, 68, 69.
resident() {  # resident RECORDS CLUSTER [extra]: expect "resident resident non-resident"
  local r=$1 c=$2; shift 2
  local img=$WORK/res$r.img
  "$FSIMG" mkfs -q -t ntfs -s 16M -c "$c" --from "$T/res$r" "$@" "$img" || { fail "mkfs res$r"; return; }
  check "$img" -j 2 --manifest "$T/res$r.manifest"
  local got="" rec
  for rec in 64 65 66 67 68 69; do
    got="$got $("$FSIMG" dump --what mft "$rec" "$img" | sed -n 's/^Attribute 0x80 \$DATA .* bytes, \(resident\|non-resident\),.*/\1/p')"
  done
  [ "$got" = " resident resident non-resident resident resident non-resident" ] && pass \
    || fail "res$r: \$DATA of records 64..69 is$got"
  rm -f "$img"
}
resident 1k 4K
resident 4k 4K --mft-record-size 4096

# The same inputs give the same bytes (no --volume-id: the serial comes from SOURCE_DATE_EPOCH).
# A single file stored under another name, too; every reader reads the result.
mkdir -p "$T/single/boot" && head -c 3000 /dev/urandom > "$T/single/boot/config.txt"
for run in 1 2; do
  "$FSIMG" mkfs -q -t ntfs -s 256M -c 4K --from "$T/small" --from "$T/edges:/more/edges" \
    --from "$T/single/boot/config.txt:/boot/config.txt" "$WORK/r$run.img" || fail "mkfs repro $run"
done
cmp -s "$WORK/r1.img" "$WORK/r2.img" && pass || fail "two runs differ: $(cmp "$WORK/r1.img" "$WORK/r2.img")"
{ cat "$T/small.manifest"; "$SHARED/oracles/make-manifest" "$T/single"; printf 'd\t-\t-\tmore\nd\t-\t-\tmore/edges\n'
  awk -F'\t' -v OFS='\t' '{ $4 = "more/edges/" $4; print }' "$T/edges.manifest"; } > "$T/repro.manifest"
check "$WORK/r1.img" -j 2 --manifest "$T/repro.manifest"
rm -f "$WORK/r1.img" "$WORK/r2.img"

# Refusals: every offender listed, nothing left.
out=$("$FSIMG" mkfs -q -t ntfs -s 8M -c 4K --from "$T/small" "$WORK/full.img" 2>&1); rc=$?
[ "$rc" = 2 ] && [ ! -e "$WORK/full.img" ] && pass || fail "full: exit $rc or image left"
grep -q "the tree needs .* clusters of 4 KiB) (.* for data, .* for index blocks, .* for MFT records); the volume has .* free" <<<"$out" \
  && pass || fail "full: no needed/available: $out"
mkdir -p "$T/bad/d"
echo x > "$T/bad/d/$(printf 'bad\xff.txt')"
echo y > "$T/bad/$(printf 'also\xfe.txt')"
echo z > "$T/bad/fine.txt"
out=$("$FSIMG" mkfs -q -t ntfs -s 8M --from "$T/bad" "$WORK/bad.img" 2>&1); rc=$?
[ "$rc" = 2 ] && [ ! -e "$WORK/bad.img" ] && pass || fail "invalid UTF-8: exit $rc or image left"
[ "$(grep -c 'the name is not valid UTF-8' <<<"$out")" = 2 ] && grep -q "(2 problems); nothing was written" <<<"$out" \
  && pass || fail "invalid UTF-8: not both offenders: $out"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then  # root reads everything: run as nobody
  mkdir -p "$WORK/unr/src" && echo secret > "$WORK/unr/src/secret.txt" && echo ok > "$WORK/unr/src/ok.txt"
  chmod 000 "$WORK/unr/src/secret.txt" && chmod 777 "$WORK/unr" && chmod 755 "$WORK/unr/src" "$WORK"
  out=$(cd "$WORK/unr" && setpriv --reuid=65534 --regid=65534 --clear-groups "$FSIMG" mkfs -t ntfs -s 8M --from src u.img 2>&1); rc=$?
  [ "$rc" = 2 ] && grep -q "/secret.txt: cannot read" <<<"$out" && [ ! -e "$WORK/unr/u.img" ] && pass || fail "unreadable: exit $rc: $out"
fi
# The Linux ntfs3 driver: the small tree, read, written to, re-checked
# (kernel-check --write: ntfsfix -n on the copy it wrote). The 20,000-entry
# directory is in ntfs_populate_kernel.sh (label slow).
if [ -x "$SHARED/oracles/kernel-check" ]; then
  for k in small:128M; do
    p=${k%%:*}
    "$FSIMG" mkfs -q -t ntfs -s "${k#*:}" -c 4K --from "$T/$p" "$WORK/k.img" || fail "mkfs for kernel-check $p"
    if kout=$("$SHARED/oracles/kernel-check" --write --timeout 600 --manifest "$T/$p.manifest" "$WORK/k.img" 2>&1); then pass; else
      fail "kernel-check $p"; echo "$kout" | sed 's/^/    /'; fi
    echo "kernel-check $p: $(echo "$kout" | tail -1)"
    rm -f "$WORK/k.img"
  done
fi
echo "$n populated images"
finish
