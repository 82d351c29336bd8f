#!/usr/bin/env bash
# fsimg fsck -n agrees with the verdict of every FAT case of the shared corpus
# (damaged and clean images from dosfstools' test suite and local mkfs.fat
# images), with no crash or timeout, except where fsimg departs from
# fsck.fat's label policy on purpose: a boot-sector copy of the label
# (BS_VolLab) that differs from the root directory's label, or stands without
# one, is a note (fat.label.mismatch, docs/fsck-codes.md), since Windows,
# Linux and macOS show the root entry. The cases the corpus calls corrupt by
# that policy alone must come out clean, each with that one note.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
run="$SHARED/corpus/run"
[ -x "$run" ] || { echo "no corpus at $SHARED/corpus: skipped"; exit 77; }
policy="dosfstools-label-different-damaged dosfstools-label-mkdosfs_label1_xp_label2
  dosfstools-label-mkdosfs_none_dosfslabel_label1 dosfstools-label-only-boot-damaged
  dosfstools-label-xp_none_dosfslabel_label1"
out=$("$run" --fs fat -j 2 -- "$FSIMG" fsck -n 2>&1)
bad=$(echo "$out" | grep -v ': OK ' | grep -v '^[0-9]* passed, [0-9]* failed$')
for c in $policy; do
  line="fat/$c: MISMATCH (expected corrupt, got clean)"
  if echo "$bad" | grep -qxF "$line"; then pass; else fail "$c: not the label-policy difference: $(echo "$out" | grep "^fat/$c:")"; fi
  bad=$(echo "$bad" | grep -vxF "$line")
  "$run" --decode "fat/$c" "$WORK/$c.img" || { fail "$c: decode"; continue; }
  "$FSIMG" fsck -n --json "$WORK/$c.img" >"$WORK/$c.json"; rc=$?
  if [ $rc = 0 ] && python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert [(f["code"], f["severity"]) for f in j["findings"]] == [("fat.label.mismatch", "info")], j["findings"]' "$WORK/$c.json"
  then pass; else fail "$c: expected exit 0 and only the fat.label.mismatch note: $(head -c 400 "$WORK/$c.json")"; fi
  rm -f "$WORK/$c.img" "$WORK/$c.json"
done
if [ -z "$bad" ]; then pass; else fail "corpus"; echo "$bad" | sed 's/^/    /'; fi
echo "$out" | tail -1
finish
