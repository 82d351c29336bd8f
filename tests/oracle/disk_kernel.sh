#!/usr/bin/env bash
# labels: slow
# fsimg disk (issue 24) through the Linux kernel's own partition parser and
# drivers (kernel-check in a VM, about 10 s per partition): the Pi-like card
# (MBR: FAT32 boot, exFAT data) and the UEFI disk's NTFS partition, each
# found by the guest kernel from the table fsimg wrote, its tree read back
# against the manifest, written into by vfat/exfat/ntfs3 and found clean
# again by fsck.fat / fsck.exfat / ntfsfix (--write).
# cost: 45
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check not installed: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
"$SHARED/trees/make-tree" small boot --scale 0.02 --manifest boot.manifest >/dev/null
"$SHARED/trees/make-tree" mixed data --scale 0.02 --seed 7 --manifest data.manifest >/dev/null
kc() {  # kc IMG N: kernel-check --write --partition N IMG against the manifest of that partition's tree
  local img=$1 n=$2 manifest=$3
  if "$SHARED/oracles/kernel-check" --write --partition "$n" --manifest "$manifest" "$img" > kc.out 2>&1; then
    pass
  else
    fail "kernel-check --write --partition $n $img: $(grep -v ': PASS' kc.out)"
  fi
}
"$FSIMG" disk -q --table mbr -s 256M --part size=64M,fs=fat32,label=BOOT,from=boot,bootable \
  --part size=rest,fs=exfat,label=DATA,from=data sd.img || fail "fsimg disk (Pi card) failed"
kc sd.img 1 boot.manifest
kc sd.img 2 data.manifest
"$FSIMG" disk -q --table gpt --part size=64M,type=esp,fs=fat32,from=boot \
  --part size=auto,fs=ntfs,label=Data,from=data,free=24M uefi.img || fail "fsimg disk (UEFI) failed"
kc uefi.img 2 data.manifest
finish
