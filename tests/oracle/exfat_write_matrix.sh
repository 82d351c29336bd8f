#!/usr/bin/env bash
# labels: slow
# exfat_write.sh's check over the whole matrix: make-tree small, names and
# wide; 512 B, 4 KiB and 64 KiB clusters; seeds 0-2.
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
tree small small --scale 0.2 && tree names names && tree wide wide --scale 0.1 || { finish; exit; }
exfat_safe "$TREES/names"
for t in small names wide; do
  for seed in 0 1 2; do
    for c in 512 4K 64K; do
      mkfs_ex "exfat-$c-$t-$seed" -t exfat -s 160M -c $c --from "$TREES/$t" -- --seed $seed
    done
  done
done
mkfs_ex exfat-empty-64k -t exfat -s 64M -c 64K -- --seed 1
finish
