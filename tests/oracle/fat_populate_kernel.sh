#!/usr/bin/env bash
# labels: slow
# mkfs --from images read by the Linux vfat driver (kernel-check in a VM,
# about 15 s each): the make-tree profiles small, edges, names (minus what FAT
# refuses), wide and camera (scaled down) across FAT12/16/32, cluster sizes
# and partition tables, every file compared with the manifest; one image also
# with --write (the kernel grows directories and files in a copy of it, and
# fsck.fat finds the copy clean).
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
MT=$SHARED/trees/make-tree
T=$WORK/trees
"$MT" small "$T/small" --scale 0.1 >/dev/null
"$MT" edges "$T/edges" >/dev/null
"$MT" wide "$T/wide" --scale 0.25 >/dev/null
"$MT" camera "$T/camera" --scale 0.05 >/dev/null
"$MT" names "$T/names" >/dev/null 2>&1
(cd "$T/names/names" && rm -f 'back\slash.txt' casename.TXT colon:name.txt 'lt<gt>.txt' 'pipe|name.txt' \
  'question?.txt' 'quote".txt' 'star*name.txt' "$(printf 'tab\tname.txt')" 'trailing dot.' 'trailing space ')
for p in small edges wide camera names; do "$SHARED/oracles/make-manifest" "$T/$p" > "$T/$p.manifest"; done
kc() {  # kc PROFILE KERNEL-CHECK-ARGS -- MKFS-ARGS
  local p=$1; shift
  local kargs=()
  while [ "$1" != -- ]; do kargs+=("$1"); shift; done; shift
  local img=$WORK/$p.img
  "$FSIMG" mkfs -q --volume-id 0BADF00D --from "$T/$p" "$@" "$img" 2>/dev/null || { fail "mkfs --from $p $*"; return; }
  if out=$("$SHARED/oracles/kernel-check" --timeout 900 --manifest "$T/$p.manifest" "${kargs[@]}" "$img" 2>&1); then
    pass
  else
    fail "kernel-check $p ${kargs[*]} ($*)"; echo "$out" | sed 's/^/    /'
  fi
  rm -f "$img"
}
kc small --write -- -t fat32 -c 512
kc edges -- -t fat16 -c 4K
kc names --partition 1 -- -t fat32 -c 32K --partition-table gpt -L NAMES
kc wide -- -t fat32 -c 4K
kc camera --partition 1 -- -t fat -c 64K --partition-table mbr
kc small -- -t fat12 -c 32K
finish
