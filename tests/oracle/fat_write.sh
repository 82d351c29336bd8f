#!/usr/bin/env bash
# Real writers change what fsimg wrote (FAT): mtools renames, moves, deletes,
# overwrites, appends to and truncates the EXISTING files and directories of
# populated and empty FAT12/16/32 images, creates 300 files and fills the free
# space; fsck.fat, sleuthkit, 7-Zip and mtools read the result back exactly as
# expected, and our fsck calls it clean (write-exercise --fsck). A small
# subset; fat_write_matrix.sh (slow) runs every cluster size, tree and seed.
# cost: 16
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
tree mixed small --scale 0.1 && tree mixed names && tree wide wide --scale 0.05 || { finish; exit; }
mkfs_ex fat32-512-mixed -t fat32 -s 48M -c 512 --rename --from "$TREES/mixed" -- --seed 0
mkfs_ex fat16-4k-wide -t fat16 -s 32M -c 4K --from "$TREES/wide" -- --seed 1
mkfs_ex fat12-empty -t fat12 -s 4M -- --seed 0
mkfs_ex fat32-empty -t fat32 -s 40M -c 512 -- --seed 0
finish
