#!/usr/bin/env bash
# fsimg fsck -n agrees with the verdict of every FAT case of the shared corpus
# (damaged and clean images from dosfstools' test suite and local mkfs.fat
# images), with no crash or timeout.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
run="$SHARED/corpus/run"
[ -x "$run" ] || { echo "no corpus at $SHARED/corpus: skipped"; exit 77; }
if out=$("$run" --fs fat -j 2 -v -- "$FSIMG" fsck -n 2>&1); then
  pass
else
  fail "corpus"; echo "$out" | grep -v ': OK ' | sed 's/^/    /'
fi
echo "$out" | tail -1
finish
