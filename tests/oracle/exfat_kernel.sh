#!/usr/bin/env bash
# labels: slow
# exFAT images from fsimg mkfs through the Linux exfat driver (kernel-check:
# a VM, ~15 s per image, minutes for terabytes), each written to by the
# kernel and re-checked with fsck.exfat: the extremes of the geometry.
# (exfat_matrix.sh always runs one small case.)
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check not installed: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
kc() {  # kc NAME KERNEL-CHECK-ARGS -- MKFS-ARGS...
  local name=$1; shift
  local kargs=()
  while [ "$1" != -- ]; do kargs+=("$1"); shift; done; shift
  local img="$WORK/$name.img"
  if ! "$FSIMG" mkfs -q -t exfat "$@" "$img" >"$WORK/out" 2>&1; then
    fail "mkfs -t exfat $* -> $(cat "$WORK/out")"; return
  fi
  local out
  if out=$("$SHARED/oracles/kernel-check" --write "${kargs[@]}" "$img" 2>&1); then pass
  else fail "kernel-check $name ($*)"; echo "$out" | sed 's/^/    /'; fi
  rm -f "$img"
}
kc min-1m        -- -s 1M
kc c512          -- -s 256M -c 512
kc c32m          -- -s 1G -c 32M
kc 4kn           -- -s 300M --sector-size 4096
kc 4kn-c32m-gpt  --partition 1 -- -s 1G -c 32M --sector-size 4096 --partition-table gpt
kc mbr-label     --partition 1 -- -s 200M --partition-table mbr -L "Données"
kc align-4k      -- -s 64M --align 4K -c 1K
kc default-40g   -- -s 40G
# FAT > 4 GiB, bitmap ~128 MiB, just under 2^30 clusters (exfatprogs #309's size).
kc tb-4t-edge    --timeout 900 -- -s 4198400M -c 4K
finish
