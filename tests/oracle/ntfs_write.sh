#!/usr/bin/env bash
# Real writers change what fsimg wrote (NTFS): ntfs-3g renames, moves,
# deletes, overwrites, appends to and truncates the EXISTING files and
# directories of populated and empty images (Win32 names with their DOS
# names, Win32&DOS and POSIX names, hard links, stored symbolic links),
# creates 300 files and fills the free space; ntfsfix, ntfsresize, ntfsls,
# sleuthkit, 7-Zip and ntfs-3g read the result back exactly as expected, and
# our fsck calls it clean (write-exercise --fsck). A small subset;
# ntfs_write_matrix.sh (slow) runs the whole matrix.
# cost: 26
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
tree mixed small --scale 0.1 && tree mixed names && tree wide wide --scale 0.05 || { finish; exit; }
mkfs_ex ntfs-4k-mixed -t ntfs -s 96M -c 4K --from "$TREES/mixed" -- --seed 0
mkfs_ex ntfs-512-wide -t ntfs -s 32M -c 512 --from "$TREES/wide" -- --seed 1
mkfs_ex ntfs-empty -t ntfs -s 16M -- --seed 0

# Hard links (two directories, one directory, empty) and relative symbolic links.
L=$TREES/links
mkdir -p "$L/a" "$L/b" "$L/c d"
head -c 10000 /dev/urandom > "$L/a/Big File.bin"; ln "$L/a/Big File.bin" "$L/b/big-link.bin"
head -c 50 /dev/urandom > "$L/a/small.txt"; ln "$L/a/small.txt" "$L/a/SMALL2.TXT"
: > "$L/a/empty"; ln "$L/a/empty" "$L/c d/empty link"
for i in 1 2 3 4 5 6; do echo "$i" > "$L/c d/Long File Name $i.txt"; done
ln -s "Big File.bin" "$L/a/sym to big"; ln -s ../a/small.txt "$L/b/up"; ln -s "c d" "$L/dirlink"
mkfs_ex ntfs-links -t ntfs -s 24M --symlinks store --from "$L" -- --seed 2
finish
