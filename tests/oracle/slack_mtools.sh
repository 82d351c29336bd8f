#!/usr/bin/env bash
# slack vs the reference tools: mkfs.fat + mcopy -s, clusters counted by
# fsck.fat. The tree's clusters (used after copying minus used on the empty
# volume) must be within 1% of the prediction; the difference is printed.
# Where it comes from (docs/slack.md): mtools grows directories one cluster
# at a time as we do, and stores plain lower-case 8.3 names without an LFN as
# we do, so a difference would come from its short-name or LFN choices.
. "$(dirname "$0")/../lib.sh"
need_shared
for t in mkfs.fat mcopy fsck.fat; do command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }; done

python3 "$SHARED/trees/make-tree" small "$WORK/tree" --scale 0.05 --zero >/dev/null || { fail make-tree; finish; exit; }
used() { fsck.fat -n "$1" 2>/dev/null | sed -n 's/.*, \([0-9]*\)\/[0-9]* clusters$/\1/p'; }
for spc in 8 64; do
  cb=$((spc * 512)); size=$((cb == 4096 ? 512 : 4096))
  img="$WORK/m.img"; rm -f "$img"
  truncate -s ${size}M "$img"
  mkfs.fat -F 32 -S 512 -s $spc "$img" >/dev/null || { fail "mkfs.fat -s $spc"; continue; }
  before=$(used "$img")
  (cd "$WORK/tree" && MTOOLS_SKIP_CHECK=1 mcopy -s -Q -i "$img" ./* ::/) || { fail "mcopy"; continue; }
  after=$(used "$img")
  measured=$((after - before))
  predicted=$("$FSIMG" slack -t fat32 -c $cb --json "$WORK/tree" | python3 -c \
    'import json,sys; r=json.load(sys.stdin)["rows"][0]; print(r["data_clusters"]+r["metadata_clusters"])')
  diff=$((measured - predicted))
  echo "cluster $cb: predicted $predicted, mkfs.fat+mcopy $measured, difference $diff"
  if python3 -c "import sys; sys.exit(0 if abs($diff) <= 0.01 * $measured else 1)"; then pass; else fail "cluster $cb: $diff clusters"; fi
done
finish
