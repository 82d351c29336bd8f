#!/usr/bin/env bash
# labels: slow
# The Linux ntfs3 driver (in a VM, ../shared/oracles/kernel-check, ~15 s per
# image) mounts a wider set of NTFS images than ntfs_matrix.sh: every cluster
# size, the 1 MiB minimum, 4 KiB MFT records, MBR and GPT; each read-only and
# with writes (create, grow, delete, rename, then ntfsfix on the copy).
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
kc() {  # kc NAME KERNEL-CHECK-ARGS -- MKFS-ARGS
  local name=$1; shift
  local kargs=()
  while [ "$1" != -- ]; do kargs+=("$1"); shift; done; shift
  "$FSIMG" mkfs -q -t ntfs --volume-id 0BADF00D0BADF00D "$@" "$WORK/$name.img" || { fail "mkfs $*"; return; }
  if out=$("$SHARED/oracles/kernel-check" "${kargs[@]}" "$WORK/$name.img" 2>&1); then
    pass
  else
    fail "kernel-check ${kargs[*]} $name"; echo "$out" | sed 's/^/    /'
  fi
  rm -f "$WORK/$name.img"
}
for c in 512 1K 2K 8K 16K 32K 64K; do kc "c$c" --write -- -s 256M -c $c; done
# The write test needs more room than 1-3 MiB volumes have: read-only there.
kc min-1m    -- -s 1M
kc small-3m  -- -s 3M
kc small-16m --write -- -s 16M
kc rec4k     --write -- -s 64M --mft-record-size 4096
kc d-13g     --write -- -s 13G
kc mbr       --write --partition 1 -- -s 100M --partition-table mbr -L "Données"
kc gpt-c512  --write --partition 1 -- -s 64M --partition-table gpt -c 512
finish
