#!/usr/bin/env bash
# labels: slow
# exFAT images from fsimg mkfs through the Linux exfat driver (kernel-check:
# a VM, ~15 s per image, minutes for terabytes), written to by the kernel and
# re-checked with fsck.exfat (kernel-check's host-fsck) and with our fsck (the
# kept copy) where the volume has room for kernel-check's write set (~17 MiB,
# 70 files): the extremes of the geometry.
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
  rm -rf "$WORK/kc"
  if out=$("$SHARED/oracles/kernel-check" --keep "$WORK/kc" "${kargs[@]}" "$img" 2>&1); then pass
  else fail "kernel-check $name ($*)"; echo "$out" | sed 's/^/    /'; fi
  # After --write, fsck.exfat -n found the kernel-written copy clean (host-fsck); so must we.
  if [ -f "$WORK/kc/copy.img" ]; then
    # (a partitioned image holds one partition: fsck opens it without @1)
    if out=$("$FSIMG" fsck -n "$WORK/kc/copy.img" 2>&1); then pass
    else fail "fsimg fsck of the kernel-written copy ($name)"; echo "$out" | sed 's/^/    /'; fi
  fi
  rm -rf "$img" "$WORK/kc"
}
kc min-1m        -- -s 1M                      # read-only: no room for the write set
kc c512          --write -- -s 256M -c 512
kc c32m          --write -- -s 4G -c 32M
kc 4kn           --write -- -s 300M --sector-size 4096
# kernel-check's host side reads GPT with 512-byte sectors: point it at the volume.
kc 4kn-c32m-gpt  --write --offset 1048576 -- -s 4G -c 32M --sector-size 4096 --partition-table gpt
kc mbr-label     --write --partition 1 -- -s 200M --partition-table mbr -L "Données"
kc align-4k      --write -- -s 64M --align 4K -c 1K
kc default-40g   --write -- -s 40G
# FAT > 4 GiB, bitmap ~128 MiB, just under 2^30 clusters (exfatprogs #309's size).
kc tb-4t-edge    --write --timeout 900 -- -s 4198400M -c 4K
finish
