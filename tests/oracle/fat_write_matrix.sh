#!/usr/bin/env bash
# labels: slow
# fat_write.sh's check over the whole matrix: make-tree small, names and
# wide; 512 B, 4 KiB and 64 KiB clusters (FAT32, FAT32, FAT16); seeds 0-2.
# The 300 MiB images fill at most 96 MiB (--fill-max) to bound the time.
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
tree small small --scale 0.2 && tree names names && tree wide wide --scale 0.1 || { finish; exit; }
for t in small names wide; do
  for seed in 0 1 2; do
    mkfs_ex "fat32-512-$t-$seed" -t fat32 -s 64M -c 512 --rename --from "$TREES/$t" -- --seed $seed
    mkfs_ex "fat32-4k-$t-$seed" -t fat32 -s 300M -c 4K --rename --from "$TREES/$t" -- --seed $seed --fill-max 100663296
    mkfs_ex "fat16-64k-$t-$seed" -t fat16 -s 300M -c 64K --rename --from "$TREES/$t" -- --seed $seed --fill-max 100663296
  done
done
mkfs_ex fat16-empty -t fat16 -s 64M -c 2K -- --seed 1
finish
