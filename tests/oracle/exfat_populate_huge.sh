#!/usr/bin/env bash
# labels: slow
# mkfs -t exfat --from with make-tree's huge profile: one sparse file of
# 4 GiB + 1 byte (more than FAT can hold; exFAT's DataLength is 64-bit). The
# image stays sparse (all-zero 64 KiB blocks are not written), every checker
# reads the file back against the manifest (check-image --manifest), the
# used clusters equal dump.exfat's count and slack --verify is EQUAL.
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
T=$WORK/trees
mkdir -p "$T"
"$SHARED/trees/make-tree" huge "$T/huge" --manifest "$T/huge.manifest" >/dev/null
for c in 32K 1M; do
  img=$WORK/huge-$c.img
  if ! out=$("$FSIMG" mkfs -t exfat -c "$c" --from "$T/huge" "$img" 2>&1); then fail "mkfs huge -c $c: $out"; continue; fi
  echo "huge -c $c: $(echo "$out" | grep -o 'exFAT [0-9].*')"
  used=$(echo "$out" | sed -n 's/.* \([0-9,]*\) of [0-9,]* clusters used.*/\1/p' | tr -d ,)
  total=$(dump.exfat "$img" 2>/dev/null | sed -n 's/^Total Clusters:[[:space:]]*\([0-9]*\)$/\1/p')
  free=$(dump.exfat "$img" 2>/dev/null | sed -n 's/^Free Clusters:[[:space:]]*\([0-9]*\)$/\1/p')
  [ -n "$used" ] && [ "$used" = "$((total - free))" ] && pass || fail "huge -c $c: mkfs says $used used, dump.exfat $((total - free))"
  disk=$(du -k "$img" | cut -f1)
  [ "$disk" -lt 65536 ] && pass || fail "huge -c $c: the image occupies $disk KiB (not sparse)"
  check "$img" -j 1 --timeout 900 --manifest "$T/huge.manifest"
  rm -f "$img"
done
if out=$("$FSIMG" slack -t exfat -c 32K,1M --verify "$T/huge" 2>&1) && [ "$(grep -c EQUAL <<<"$out")" = 2 ]; then pass; else
  fail "slack --verify huge: $out"; fi
finish
