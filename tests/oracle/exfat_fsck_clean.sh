#!/usr/bin/env bash
# Clean exFAT images check clean (exit 0, no error or warning finding):
# empty mkfs.exfat volumes across cluster sizes (512 B .. 32 MiB), 4096-byte
# sectors and a label; the shared corpus's mkfs.exfat images filled through
# exfat-fuse (decoded by the corpus runner); fsimg's own mkfs, empty and
# populated (--from make-tree trees small, edges, wide) at several cluster
# sizes, sector sizes and partition tables. Each mkfs.exfat image is also
# accepted by fsck.exfat -n, so a failure is ours.
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
command -v mkfs.exfat >/dev/null && command -v fsck.exfat >/dev/null || { echo "exfatprogs missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
n=0
clean() {  # clean NAME IMAGE: exit 0 and no error or warning finding
  local json rc bad
  json=$("$FSIMG" fsck -n --json "$2" 2>&1); rc=$?
  bad=$(echo "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join(f["code"] for f in j["findings"] if f["severity"] != "info"))' 2>&1)
  n=$((n + 1))
  if [ $rc = 0 ] && [ -z "$bad" ]; then pass; else fail "$1: fsck exit $rc, findings: $bad"; fi
}
mkexfat() {  # mkexfat NAME SIZE MKFS_ARGS...
  local name=$1 size=$2; shift 2
  local img="$WORK/$name.img"
  rm -f "$img"; truncate -s "$size" "$img"
  if ! mkfs.exfat "$@" "$img" >/dev/null 2>&1; then fail "mkfs.exfat $* ($name)"; return; fi
  if ! fsck.exfat -n "$img" >/dev/null 2>&1; then fail "$name: fsck.exfat -n rejects it (test setup)"; return; fi
  clean "mkfs.exfat $name" "$img"
  rm -f "$img"
}
for c in 512 1K 4K 32K 128K 1M 4M 32M; do mkexfat "c$c" 256M -c $c; done
mkexfat default-8m 8M
mkexfat default-300m 300M -L DATA
mkexfat big-c4k 2G -c 4K
mkexfat align4k 3M -b 4K -c 512
# Images filled through exfat-fuse, from the corpus (its clean local cases).
if [ -x "$SHARED/corpus/run" ]; then
  for case in local-mkfs-exfat-32m-c512-tree local-mkfs-exfat-64m-c1m-tree local-mkfs-exfat-64m-c4k-tree \
              local-mkfs-exfat-8m-default-empty; do
    if "$SHARED/corpus/run" --decode "exfat/$case" "$WORK/corpus.img" >/dev/null 2>&1; then
      clean "corpus $case" "$WORK/corpus.img"
    else
      fail "decode $case"
    fi
    rm -f "$WORK/corpus.img"
  done
fi
# Our own mkfs, empty and populated.
T=$WORK/trees; mkdir -p "$T"
"$SHARED/trees/make-tree" small "$T/small" --scale 0.05 >/dev/null &&
  "$SHARED/trees/make-tree" edges "$T/edges" >/dev/null &&
  "$SHARED/trees/make-tree" wide "$T/wide" --scale 0.05 >/dev/null || { fail "make-tree"; finish; exit; }
own() {  # own ARGS...: fsimg mkfs -t exfat ARGS, then fsck
  local img="$WORK/own.img"; rm -f "$img"
  if "$FSIMG" mkfs -q -t exfat --volume-id 1234ABCD "$@" "$img" >/dev/null 2>"$WORK/mkfs.err"; then
    clean "fsimg mkfs $*" "$img"
  else
    fail "fsimg mkfs $*: $(head -3 "$WORK/mkfs.err")"
  fi
  rm -f "$img"
}
own -s 64M
own -s 4M -c 512
own -s 1G -c 32K -L DATA
own -s 64M --sector-size 4096
own -s 128M --partition-table mbr
own -s 128M --partition-table gpt
own -s 64M -c 512 --from "$T/small"
own -s 256M -c 4K --from "$T/small" --from "$T/edges"
own -s 128M -c 32K --from "$T/wide"
own -s 256M -c 1M --from "$T/small"
own -s 200M -c 4K --sector-size 4096 --from "$T/edges"
own -s 128M --partition-table gpt --from "$T/small"
echo "$n images"
finish
