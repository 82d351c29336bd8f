#!/usr/bin/env bash
# The Linux vfat driver (in a VM, ../shared/oracles/kernel-check) mounts what
# mkfs writes, walks it, and with --write creates, grows, deletes and renames
# files in a copy which fsck.fat then finds clean. A small subset; the wider
# set is fat_kernel_wide.sh (label slow).
# cost: 69
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
kc() {  # kc IMAGE-NAME KERNEL-CHECK-ARGS -- MKFS-ARGS
  local name=$1; shift
  local kargs=()
  while [ "$1" != -- ]; do kargs+=("$1"); shift; done; shift
  "$FSIMG" mkfs -q --volume-id 0BADF00D "$@" "$WORK/$name.img" || { fail "mkfs $*"; return; }
  if out=$("$SHARED/oracles/kernel-check" "${kargs[@]}" "$WORK/$name.img" 2>&1); then
    pass
  else
    fail "kernel-check ${kargs[*]} $name"; echo "$out" | sed 's/^/    /'
  fi
  rm -f "$WORK/$name.img"
}
kc fat12 --write -- -t fat12 -s 8M
kc fat16-mbr --partition 1 --write -- -t fat16 -s 128M --partition-table mbr -L CARD
kc fat32-gpt --partition 1 --write -- -t fat32 -s 1G --partition-table gpt
finish
