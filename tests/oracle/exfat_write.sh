#!/usr/bin/env bash
# Real writers change what fsimg wrote (exFAT): exfat-fuse renames, moves,
# deletes, overwrites, appends to and truncates the EXISTING files and
# directories of populated and empty images, creates 300 files and fills the
# free space; fsck.exfat, sleuthkit and exfat-fuse read the result back
# exactly as expected, and our fsck calls it clean (write-exercise --fsck).
# A small subset; exfat_write_matrix.sh (slow) runs the whole matrix.
# cost: 20
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
tree mixed small --scale 0.1 && tree mixed names && tree wide wide --scale 0.05 || { finish; exit; }
exfat_safe "$TREES/mixed"
mkfs_ex exfat-4k-mixed -t exfat -s 64M -c 4K --from "$TREES/mixed" -- --seed 0
mkfs_ex exfat-512-wide -t exfat -s 24M -c 512 --from "$TREES/wide" -- --seed 1
mkfs_ex exfat-empty -t exfat -s 16M -- --seed 0
finish
