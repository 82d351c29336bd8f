#!/usr/bin/env bash
# Every NTFS image fsimg mkfs writes passes every independent checker
# (check-image: ntfs-3g mount and walk, ntfsinfo, ntfsls, ntfsfix -n,
# ntfsresize --info, sleuthkit, libfsntfs, 7-Zip): cluster sizes 512 B..64 KiB
# x 512/1024/4096-byte sectors x none/mbr/gpt x sizes from the 1 MiB minimum
# to 8 TiB; labels; 4 KiB MFT records; refusals. Then: reproducible bytes;
# the system files compared with mkntfs' ($AttrDef and $UpCase identical,
# the same attribute types per record but the intended differences of
# docs/ntfs-notes.md); ntfs-3g grows a fresh image (1,000 files and a deep
# directory) and check-image passes again; the Linux ntfs3 driver mounts two
# images read-only and read-write (kernel-check; more in ntfs_kernel.sh).
# cost: 131
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
n=0
# 7-Zip 23 opens NTFS only with 512-byte sectors (mkntfs -s 4096 images fail
# the same way); sfdisk and mmls as check-image runs them assume 512-byte
# sectors in an image file: those are skipped for other sector sizes and the
# table is checked with mmls -b instead.
mk() {  # mk NAME mkfs ARGS...
  local name=$1; shift
  local skip=() offset= bps=512
  case " $* " in *" --sector-size "*) bps=$(echo " $* " | sed -E 's/.* --sector-size ([0-9]+) .*/\1/') ;; esac
  if [ "$bps" != 512 ]; then
    skip=(7zz read-7zz)
    case " $* " in
      *" gpt "*) skip+=(ptable-sfdisk ptable-mmls) ;;
      *" mbr "*) offset=1048576 ;;
    esac
  fi
  n=$((n + 1))
  local img="$WORK/$name.img"
  if ! "$FSIMG" mkfs -q -t ntfs --volume-id "$(printf '%016X' $((0x5000 + n)))" "$@" "$img" >"$WORK/out" 2>&1; then
    fail "mkfs -t ntfs $* -> $(cat "$WORK/out")"; return
  fi
  local s; s=$(IFS=,; echo "${skip[*]}")
  check "$img" -j 3 ${s:+--skip $s} ${offset:+--offset $offset}
  rm -f "$img"
}

# Every cluster size, 512-byte sectors.
for c in 512 1K 2K 4K 8K 16K 32K 64K; do mk "c$c" -s 256M -c $c; done
# Other sector sizes.
for c in 4K 16K 64K; do mk "4kn-c$c" -s 300M -c $c --sector-size 4096; done
mk s1024-c1k -s 64M -c 1K --sector-size 1024
mk s2048     -s 64M --sector-size 2048
# Sizes with default clusters: the minimum, odd sizes, $LogFile table edges.
mk min-1m      -s 1M
mk min-1m-c512 -s 1M -c 512
mk min-1m-4kn  -s 1M --sector-size 4096
mk odd-size    -s 1049088
mk small-3m    -s 3M
mk edge-2m     -s 2M   # $LogFile 256 KiB, as mkntfs (the table applies to the volume without the backup boot sector)
mk d-10m       -s 10M
mk d-100m      -s 100M
mk d-200m      -s 200M
mk d-1g        -s 1G
mk d-13g       -s 13G
mk big-64k     -s 1T -c 64K
# 4 KiB MFT records.
mk rec4k       -s 64M --mft-record-size 4096
mk rec4k-c64k  -s 256M --mft-record-size 4096 -c 64K
# Labels (UTF-16 units: é one, the emoji two; 128 units maximum).
mk label-utf8  -s 64M -L "Données"
mk label-emoji -s 64M -L "😀 photos"
mk label-128   -s 64M -L "$(printf 'L%.0s' $(seq 128))"
# Partition tables.
mk mbr         -s 100M --partition-table mbr
mk gpt         -s 100M --partition-table gpt -L DATA
mk gpt-c512    -s 64M --partition-table gpt -c 512
mk gpt-4kn     -s 100M --partition-table gpt --sector-size 4096
mk mbr-4kn     -s 100M --partition-table mbr --sector-size 4096

# 8 TiB (sparse): quick checkers only (the full set reads for minutes).
img="$WORK/8t.img"
if "$FSIMG" mkfs -q -t ntfs -s 8T "$img"; then
  check "$img" --only ntfsinfo,ntfsfix,ntfsresize,sleuthkit
  used=$(du -k "$img" | cut -f1)
  if [ "$used" -lt 300000 ]; then pass; else fail "8 TiB image occupies ${used} KiB"; fi
  rm -f "$img"
else
  fail "mkfs -s 8T"
fi

# Refusals name the reason and what works; nothing is left behind.
refuse() {  # refuse EXPECTED-TEXT MKFS-ARGS...
  local want=$1; shift
  if out=$("$FSIMG" mkfs -t ntfs "$@" "$WORK/r.img" 2>&1); then
    fail "mkfs $* should have been refused"
  elif ! grep -q -- "$want" <<<"$out" || [ -e "$WORK/r.img" ]; then
    fail "mkfs $*: expected '$want', got: $out"
  else
    pass
  fi
}
refuse "at least 1 MiB" -s 1000K
refuse "-c 64K" -s 1G -c 128K
refuse "power of two" -s 64M -c 3K
refuse "mft-record-size 4096" -s 64M --sector-size 4096 --mft-record-size 1024
refuse "128 UTF-16 units" -s 64M -L "$(printf 'L%.0s' $(seq 129))"
if out=$("$FSIMG" mkfs -t fat32 -s 64M --mft-record-size 4096 "$WORK/r.img" 2>&1) || ! grep -q "only for -t ntfs" <<<"$out"; then
  fail "mkfs -t fat32 --mft-record-size: $out"; else pass; fi

# Reproducible: the same SOURCE_DATE_EPOCH and --volume-id give the same bytes.
"$FSIMG" mkfs -q -t ntfs -s 64M --volume-id 0123456789ABCDEF "$WORK/r1.img"
"$FSIMG" mkfs -q -t ntfs -s 64M --volume-id 0123456789ABCDEF "$WORK/r2.img"
SOURCE_DATE_EPOCH=1700000001 "$FSIMG" mkfs -q -t ntfs -s 64M --volume-id 0123456789ABCDEF "$WORK/r3.img"
if cmp -s "$WORK/r1.img" "$WORK/r2.img"; then pass; else fail "same inputs, different bytes"; fi
if cmp -s "$WORK/r1.img" "$WORK/r3.img"; then fail "another SOURCE_DATE_EPOCH, same bytes"; else pass; fi
rm -f "$WORK"/r?.img

# Structure compared with mkntfs (100 MiB, 512-byte sectors, 4 KiB clusters).
ref="$WORK/ref.img" ours="$WORK/ours.img"
truncate -s 100M "$ref"
mkntfs -Q -F -q -s 512 -c 4096 "$ref" >/dev/null 2>&1 || fail "mkntfs"
"$FSIMG" mkfs -q -t ntfs -s 100M "$ours"
for rec in 4 10; do  # $AttrDef, $UpCase: byte-identical data
  if cmp -s <(ntfscat -i $rec "$ref") <(ntfscat -i $rec "$ours"); then pass; else fail "record $rec data differs from mkntfs"; fi
done
if cmp -s <(ntfscat -i 10 -a 0x80 -n '$Info' "$ref") <(ntfscat -i 10 -a 0x80 -n '$Info' "$ours"); then
  pass; else fail "\$UpCase:\$Info differs from mkntfs"; fi
types() {  # attribute types of one record as ntfsinfo shows them; mkntfs' in-record
           # $SECURITY_DESCRIPTORs are replaced by $Secure ids here (docs/ntfs-notes.md)
  ntfsinfo -i "$2" "$1" 2>/dev/null | sed -n 's/^Dumping attribute \(\$[A-Z_]*\) .*/\1/p' | grep -v SECURITY_DESCRIPTOR | tr '\n' ' '
}
for rec in 0 1 2 3 4 5 6 7 8 9 10 11 24 25 26; do
  a=$(types "$ref" $rec) b=$(types "$ours" $rec)
  if [ -n "$a" ] && [ "$a" = "$b" ]; then pass; else fail "record $rec: mkntfs [$a] fsimg [$b]"; fi
done
if [ "$(ntfsls -a -s "$ref" | sort)" = "$(ntfsls -a -s "$ours" | sort)" ]; then pass; else
  fail "root listing differs: $(diff <(ntfsls -a -s "$ref" | sort) <(ntfsls -a -s "$ours" | sort) | tr '\n' ' ')"; fi
rm -f "$ref"

# ntfs-3g grows the volume: 1,000 files, a 40-level directory, then every
# checker again (MFT extension, index allocation, $Bitmap, $Secure use).
mnt="$WORK/mnt"; mkdir -p "$mnt"
if [ -e /dev/fuse ] && ntfs-3g "$ours" "$mnt" 2>"$WORK/err"; then
  mkdir -p "$mnt/many"
  for i in $(seq 1 1000); do printf 'file %d\n' "$i" >"$mnt/many/file_$(printf %04d "$i").txt"; done
  d="$mnt"; for i in $(seq 1 40); do d="$d/level$i"; done; mkdir -p "$d"
  head -c 3000000 /dev/zero | tr '\0' x >"$d/deep.bin"
  umount "$mnt"
  check "$ours" -j 3
  count=$(ntfsls -R "$ours" 2>/dev/null | grep -c '^file_')
  if [ "$count" = 1000 ]; then pass; else fail "ntfsls finds $count of 1000 files after growth"; fi
else
  echo "ntfs-3g cannot mount here ($(cat "$WORK/err")): growth test skipped"
fi

# The Linux ntfs3 driver: read-only and read-write on two images.
if [ -x "$SHARED/oracles/kernel-check" ]; then
  kc() {
    local name=$1; shift; local kargs=()
    while [ "$1" != -- ]; do kargs+=("$1"); shift; done; shift
    "$FSIMG" mkfs -q -t ntfs --volume-id 0BADF00D0BADF00D "$@" "$WORK/$name.img" || { fail "mkfs $*"; return; }
    if out=$("$SHARED/oracles/kernel-check" "${kargs[@]}" "$WORK/$name.img" 2>&1); then pass; else
      fail "kernel-check ${kargs[*]} $name"; echo "$out" | sed 's/^/    /'; fi
    rm -f "$WORK/$name.img"
  }
  kc k-default --write -- -s 100M -L KERNEL
  # (The VM's disk has 512-byte sectors: ntfs3 warns about any other NTFS
  # sector size, so 4096-byte sectors are not tried here.)
  kc k-gpt-64k --partition 1 -- -s 300M -c 64K --mft-record-size 4096 --partition-table gpt
fi
finish
