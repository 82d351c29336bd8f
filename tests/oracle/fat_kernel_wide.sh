#!/usr/bin/env bash
# labels: slow
# The Linux vfat driver mounts and writes into a wider set of mkfs images:
# 4096-byte sectors, small and large clusters, type edges.
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
i=0
# 1 MiB is too small for kernel-check's write phase (it copies a 1 MiB file): read-only there.
for args in "-t fat12 -s 1M" "-t fat12 -s 16M -c 8K" "-t fat16 -s 16M" "-t fat16 -s 1G -c 16K" \
            "-t fat32 -s 64M -c 512" "-t fat32 -s 4G -c 32K" "-t fat32 -s 8G -c 64K" \
            "-t fat16 -s 300M --sector-size 4096" "-t fat32 -s 2G --sector-size 4096" "-t fat -s 200M -c 512"; do
  i=$((i + 1))
  rm -f "$WORK/k.img"
  write=--write; [ "$args" = "-t fat12 -s 1M" ] && write=
  "$FSIMG" mkfs -q --volume-id "$(printf 'AB%06X' $i)" $args "$WORK/k.img" || { fail "mkfs $args"; continue; }
  if out=$("$SHARED/oracles/kernel-check" $write "$WORK/k.img" 2>&1); then pass; else fail "kernel-check $args"; echo "$out" | sed 's/^/    /'; fi
done
finish
