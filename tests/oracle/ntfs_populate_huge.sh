#!/usr/bin/env bash
# labels: slow
# mkfs -t ntfs --from with make-tree's huge profile: one sparse file of
# 4 GiB + 1 byte (NTFS sizes are 64-bit) at 512 B, 4 KiB and 64 KiB clusters
# (8,388,609 clusters at 512 B: a runlist of many runs). The image stays
# sparse, every NTFS reader reads the file back against the manifest
# (check-image --manifest), our fsck finds it clean, ls/cat agree, and
# slack --verify is EQUAL.
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
T=$WORK/trees
mkdir -p "$T"
"$SHARED/trees/make-tree" huge "$T/huge" --manifest "$T/huge.manifest" >/dev/null
big=$(cd "$T/huge" && find . -type f -size +4G | sed 's#^\./#/#')
[ -n "$big" ] && pass || fail "make-tree huge made no file over 4 GiB"
for c in 512 4K 64K; do
  img=$WORK/huge-$c.img
  if ! out=$("$FSIMG" mkfs -t ntfs -c "$c" --from "$T/huge" "$img" 2>&1); then fail "mkfs huge -c $c: $out"; continue; fi
  echo "huge -c $c: $(echo "$out" | tail -1)"
  disk=$(du -k "$img" | cut -f1)
  [ "$disk" -lt 262144 ] && pass || fail "huge -c $c: the image occupies $disk KiB (not sparse)"
  if out=$("$FSIMG" fsck -n "$img" 2>&1); then pass; else fail "fsck huge -c $c: $out"; fi
  size=$("$FSIMG" ls -l "$img" "$big" 2>/dev/null | awk '{print $2}' | tr -d ,)
  [ "$size" = 4294967297 ] && pass || fail "ls -l huge -c $c: size '$size'"
  check "$img" -j 1 --timeout 900 --manifest "$T/huge.manifest"
  rm -f "$img"
done
if out=$("$FSIMG" slack -t ntfs -c 512,4K,64K --verify "$T/huge" 2>&1) && [ "$(grep -c EQUAL <<<"$out")" = 3 ]; then
  pass
else
  fail "slack --verify huge: $out"
fi
finish
