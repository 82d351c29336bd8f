#!/usr/bin/env bash
# Every FAT image fsimg mkfs writes passes every independent checker:
# FAT12/16/32 x cluster sizes x 512/4096-byte sectors x none/mbr/gpt x sizes,
# including volumes whose cluster counts sit right at the type limits.
# cost: 50
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
n=0
# fatcat only reads 512-byte sectors (it fails the same way on mkfs.fat -S 4096
# images), and sfdisk 2.38 / mmls as check-image runs them assume 512-byte
# sectors in an image file: for 4096-byte sectors those are skipped and mmls
# is run here with -b 4096 instead.
mk() {  # mk NAME ARGS...: make an image and check it
  local name=$1; shift
  local skip=
  case " $* " in
    *" --sector-size 4096 "*) skip=fatcat
      case " $* " in *" gpt "*) skip=fatcat,ptable-sfdisk,ptable-mmls ;; esac ;;
  esac
  n=$((n + 1))
  local img="$WORK/$name.img"
  if ! "$FSIMG" mkfs -q --volume-id "$(printf '%08X' $((0x1000 + n)))" "$@" "$img" >"$WORK/out" 2>&1; then
    fail "mkfs $* -> $(cat "$WORK/out")"; return
  fi
  check "$img" -j 2 ${skip:+--skip $skip}
  if [ "$skip" = fatcat,ptable-sfdisk,ptable-mmls ]; then
    if mmls -b 4096 "$img" | grep -E '^[0-9]+:  000 +0000000256 ' >/dev/null; then pass; else fail "mmls -b 4096 $name: $(mmls -b 4096 "$img")"; fi
  fi
  rm -f "$img"
}
# Defaults across sizes and types
mk f12-1m      -t fat12 -s 1M
mk f12-2m-c512 -t fat12 -s 2M -c 512
mk f12-16m     -t fat12 -s 16M
mk f16-16m     -t fat16 -s 16M
mk f16-64m-c1k -t fat16 -s 64M -c 1K
mk f16-256m    -t fat16 -s 256M
mk f16-1g-c16k -t fat16 -s 1G -c 16K
mk f32-64m-c512 -t fat32 -s 64M -c 512
mk f32-300m    -t fat32 -s 300M
mk f32-1g      -t fat32 -s 1G
mk f32-4g-c32k -t fat32 -s 4G -c 32K
mk f32-4g-c64k -t fat32 -s 8G -c 64K
mk fat-auto-200m-c512 -t fat -s 200M -c 512
mk fat-auto-8m -t fat -s 8M
mk fat-auto-600m -t fat -s 600M
# 4096-byte sectors
mk f12-4kn     -t fat12 -s 8M --sector-size 4096
mk f16-4kn     -t fat16 -s 300M --sector-size 4096
mk f32-4kn     -t fat32 -s 2G --sector-size 4096
mk f32-4kn-gpt -t fat32 -s 1G --sector-size 4096 --partition-table gpt
# Partition tables
mk f12-mbr     -t fat12 -s 8M --partition-table mbr
mk f16-mbr     -t fat16 -s 128M --partition-table mbr -L CAMERA
mk f32-mbr     -t fat32 -s 1G --partition-table mbr -L "MY DISK"
mk f16-gpt     -t fat16 -s 100M --partition-table gpt
mk f32-gpt     -t fat32 -s 3G --partition-table gpt -L DATA
echo "$n images"
finish
