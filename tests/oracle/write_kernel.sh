#!/usr/bin/env bash
# labels: slow
# The Linux kernel's own writers on what fsimg wrote: kernel-check --write
# (vfat, exfat, ntfs3 in a VM, ../shared/oracles/kernel-check) renames,
# deletes, overwrites, appends to and truncates EXISTING files and renames an
# existing directory of populated FAT32, exFAT and NTFS images (make-tree
# small + names), re-mounts and verifies, and runs the host fsck on the copy;
# our fsck must then call the written copy clean too.
here=$(dirname "$0"); . "$here/../lib.sh"; . "$here/../write_lib.sh"
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check missing: skipped"; exit 77; }
tree mixed small --scale 0.05 && tree mixed names || { finish; exit; }
# The VM's walker lists the tree in kernel-check's manifest format, which
# cannot hold names with TAB, CR or LF (../shared/oracles/README.md): those
# names stay out of every kernel tree. On exFAT also names ending in a dot or
# a space: the Linux exfat driver strips the trailing dots of a name it looks
# up, so such a stored name cannot be opened there (fsimg warns when it
# stores one; Windows cannot open it either).
find "$TREES/mixed" -depth \( -name $'*\t*' -o -name $'*\n*' -o -name $'*\r*' \) -exec rm -rf {} +
cp -a "$TREES/mixed" "$TREES/exfat" && exfat_safe "$TREES/exfat"
find "$TREES/exfat" -depth \( -name '*.' -o -name '* ' \) -exec rm -rf {} +
kw() {  # kw NAME MKFS-ARGS...
  local name=$1; shift
  local img=$WORK/$name.img
  "$FSIMG" mkfs -q "$@" "$img" 2>"$WORK/mkfs.err" || { fail "mkfs $name: $(head -3 "$WORK/mkfs.err")"; return; }
  if out=$("$SHARED/oracles/kernel-check" --write --timeout 600 --keep "$WORK/keep-$name" "$img" 2>&1); then
    pass
  else
    fail "kernel-check --write $name"; echo "$out" | grep -v ': PASS' | sed 's/^/    /'
  fi
  local copy
  copy=$(find "$WORK/keep-$name" -name '*.img' -newer "$img" 2>/dev/null | head -1)
  if [ -n "$copy" ]; then
    out=$("$FSIMG" fsck "$copy" 2>&1) && pass || { fail "fsck of the kernel-written $name"; echo "$out" | head -20; }
  fi
  rm -rf "$img" "$WORK/keep-$name"
}
kw fat32 -t fat32 -s 64M -c 512 --rename --from "$TREES/mixed"
kw exfat -t exfat -s 64M --from "$TREES/exfat"
kw ntfs -t ntfs -s 64M --from "$TREES/mixed"
kw ntfs-512 -t ntfs -s 64M -c 512 --from "$TREES/mixed"
finish
