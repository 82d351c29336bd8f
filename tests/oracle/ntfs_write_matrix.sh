#!/usr/bin/env bash
# labels: slow
# ntfs_write.sh's check over the whole matrix: make-tree small, names and
# wide (20,000 files in one directory); 512 B, 4 KiB and 64 KiB clusters;
# seeds 0-2.
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
tree small small --scale 0.2 && tree names names && tree wide wide || { finish; exit; }
for t in small names wide; do
  for seed in 0 1 2; do
    for c in 512 4K 64K; do
      mkfs_ex "ntfs-$c-$t-$seed" -t ntfs -s 256M -c $c --from "$TREES/$t" -- --seed $seed --fill-max 100663296
    done
  done
done
mkfs_ex ntfs-empty-64k -t ntfs -s 64M -c 64K -- --seed 1
mkfs_ex ntfs-empty-rec4k -t ntfs -s 64M --mft-record-size 4096 -- --seed 2
finish
