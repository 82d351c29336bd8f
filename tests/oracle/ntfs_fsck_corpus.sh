#!/usr/bin/env bash
# fsimg fsck -n agrees with the verdict of every NTFS case of the shared
# corpus (damaged images from ntfsprogs-plus' ntfs_corrupted_images: hand-made
# boot sector and MFT damage, volumes damaged in real use; healthy Windows
# and mkntfs + ntfs-3g images), with no crash or timeout: all 61 pass.
# cost: 15
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
run="$SHARED/corpus/run"
[ -x "$run" ] || { echo "no corpus at $SHARED/corpus: skipped"; exit 77; }
out=$("$run" --fs ntfs -j 2 -v -- "$FSIMG" fsck -n 2>&1)
if [ "$(echo "$out" | tail -1)" = "61 passed, 0 failed" ]; then
  pass
else
  fail "corpus"; echo "$out" | grep -v ': OK ' | sed 's/^/    /'
fi
echo "$out" | tail -1
finish
