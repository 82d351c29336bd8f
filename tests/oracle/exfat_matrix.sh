#!/usr/bin/env bash
# labels: slow
# Every exFAT image fsimg mkfs writes passes every independent checker
# (fsck.exfat, dump.exfat, sleuthkit, exfat-fuse): cluster sizes 512 B..32 MiB
# x 512/4096-byte sectors x none/mbr/gpt x sizes from the 1 MiB minimum up,
# labels, alignments; terabyte images (4 TiB of 4 KiB clusters, where the FAT
# passes 4 GiB, and 8 TiB) through the checkers that read them in seconds;
# the up-case table byte-identical to mkfs.exfat's; one image through the
# Linux exfat driver (kernel-check, ~15 s; more in exfat_kernel.sh), written
# to by it and then clean to fsck.exfat -n and to our fsck.
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
n=0
# For 4096-byte sectors, sfdisk 2.38 and mmls as check-image runs them assume
# 512-byte sectors in an image file (mkfs.fat images fail the same way): they
# are skipped and the table is checked here with mmls -b 4096 instead.
mk() {  # mk NAME [check-image args --] mkfs ARGS...
  local name=$1; shift
  local extra=()
  if [ "${1:-}" = --check ]; then shift; while [ "$1" != -- ]; do extra+=("$1"); shift; done; shift; fi
  local skip= offset=
  case " $* " in
    *" --sector-size 4096 "*)
      case " $* " in
        *" gpt "*) skip=ptable-sfdisk,ptable-mmls ;;
        *" mbr "*) offset=1048576 ;;  # check-image reads MBR LBAs as 512-byte sectors
      esac ;;
  esac
  n=$((n + 1))
  local img="$WORK/$name.img"
  if ! "$FSIMG" mkfs -q -t exfat --volume-id "$(printf '%08X' $((0x2000 + n)))" "$@" "$img" >"$WORK/out" 2>&1; then
    fail "mkfs -t exfat $* -> $(cat "$WORK/out")"; return
  fi
  check "$img" -j 3 ${skip:+--skip $skip} ${offset:+--offset $offset} "${extra[@]}"
  if [ -n "$skip$offset" ]; then
    if mmls -b 4096 "$img" | grep -E '(000|000:000) +0000000256 ' >/dev/null; then pass; else fail "mmls -b 4096 $name: $(mmls -b 4096 "$img")"; fi
  fi
  rm -f "$img"
}

# Every cluster size, 512-byte sectors (sizes where each is legal and quick to read).
for c in 512 1K 2K 4K 8K 16K 32K 64K 128K 256K 512K 1M 2M 4M 8M 16M 32M; do
  size=256M; case $c in 8M|16M) size=512M ;; 32M) size=1G ;; esac
  mk "c$c" -s $size -c $c
done
# Every cluster size, 4096-byte sectors.
for c in 4K 16K 64K 256K 1M 4M 32M; do
  size=300M; case $c in 32M) size=1G ;; esac
  mk "4kn-c$c" -s $size -c $c --sector-size 4096
done
mk s1024-c1k -s 16M -c 1K --sector-size 1024
mk s2048-c2k -s 16M -c 2K --sector-size 2048
# Sizes with default clusters: the 1 MiB minimum, odd sizes, table edges.
mk min-1m      -s 1M
mk min-1m-c512 -s 1M -c 512
mk min-1m-4kn  -s 1M --sector-size 4096
mk odd-1m512   -s 1049088
mk small-3m    -s 3M
mk small-7m    -s 7M
mk edge-8m     -s 8M
mk d-100m      -s 100M
mk d-256m      -s 256M
mk d-257m      -s 257M
mk d-1g        -s 1G
mk d-4g-4kn    -s 4G --sector-size 4096
# Alignment.
mk align-4k    -s 64M --align 4K
mk align-4m    -s 64M --align 4M
mk align-512   -s 64M -c 512 --align 512
# Labels (UTF-16: é is one unit, the emoji two).
mk label-utf8  -s 64M -L "Données"
mk label-11    -s 64M -L "ABCDEFGHIJK"
mk label-emoji -s 64M -L "😀 photos"
# Partition tables.
mk mbr         -s 100M --partition-table mbr
mk mbr-label   -s 300M --partition-table mbr -L CAMERA -c 32K
mk gpt         -s 100M --partition-table gpt
mk gpt-c512    -s 64M --partition-table gpt -c 512 -L DATA
mk gpt-4kn     -s 100M --partition-table gpt --sector-size 4096
mk mbr-4kn     -s 100M --partition-table mbr --sector-size 4096
mk gpt-align   -s 64M --partition-table gpt --align 4K

# Terabyte images: sparse, written in well under a second; sleuthkit needs
# minutes on tens of millions of clusters, so it is left out here.
big="--check --skip sleuthkit,read-sleuthkit,readers-agree --timeout 600 --"
mk tb-2t-c4k    $big -s 2T -c 4K
mk tb-4t-edge   $big -s 4198400M -c 4K   # FAT > 4 GiB, bitmap ~128 MiB (exfatprogs #309)
mk tb-8t        $big -s 8T
mk tb-8t-gpt    $big -s 8T --partition-table gpt

# The up-case table is byte-identical to mkfs.exfat's (cluster 3 on 64 MiB,
# heap at 2 MiB in both), and so are the geometry fields.
if command -v mkfs.exfat >/dev/null; then
  truncate -s 64M "$WORK/ref.img" && mkfs.exfat "$WORK/ref.img" >/dev/null 2>&1
  "$FSIMG" mkfs -q -t exfat -s 64M "$WORK/ours.img"
  if cmp -s <(dd if="$WORK/ref.img" bs=4096 skip=513 count=2 2>/dev/null | head -c 5836) \
            <(dd if="$WORK/ours.img" bs=4096 skip=513 count=2 2>/dev/null | head -c 5836); then pass
  else fail "up-case table differs from mkfs.exfat's"; fi
  for off in 80 88 92 96; do  # FatOffset, ClusterHeapOffset, ClusterCount, FirstClusterOfRootDirectory
    a=$(od -An -tu4 -j $off -N4 "$WORK/ref.img"); b=$(od -An -tu4 -j $off -N4 "$WORK/ours.img")
    if [ "$a" = "$b" ]; then pass; else fail "boot sector field at $off: mkfs.exfat $a, ours $b"; fi
  done
  rm -f "$WORK/ref.img" "$WORK/ours.img"
fi

# One image through the Linux exfat driver, written to and re-checked.
if [ -x "$SHARED/oracles/kernel-check" ]; then
  "$FSIMG" mkfs -q -t exfat -s 64M -L KERNEL --partition-table gpt "$WORK/k.img"
  if out=$("$SHARED/oracles/kernel-check" --write --partition 1 --keep "$WORK/kc" "$WORK/k.img" 2>&1); then pass
  else fail "kernel-check --write gpt 64M"; echo "$out" | sed 's/^/    /'; fi
  # fsck.exfat -n found the kernel-written copy clean (host-fsck); so must we.
  if out=$("$FSIMG" fsck -n "$WORK/kc/copy.img@1" 2>&1); then pass
  else fail "fsimg fsck of the kernel-written copy"; echo "$out" | sed 's/^/    /'; fi
  rm -rf "$WORK/k.img" "$WORK/kc"
fi
echo "$n images"
finish
