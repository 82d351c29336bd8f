#!/usr/bin/env bash
# mkfs --gzip writes IMAGE gzip-compressed: gzip -t accepts it, it
# decompresses to exactly the bytes of the same build without --gzip (same
# SOURCE_DATE_EPOCH and --volume-id), fsck, ls, cat, extract and slack read
# it directly, the temporary build is gone, and the safety rules hold for the
# .gz too.
# cost: 10
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
export SOURCE_DATE_EPOCH=1600000000
mkdir -p tree/docs
printf 'hello gzip\n' > tree/hello.txt
head -c 300000 /dev/urandom > tree/docs/random.bin
touch -d @1500000000 tree/hello.txt tree/docs/random.bin tree/docs tree

for args in "-t fat32 -s 64M --from tree" "-t fat16 -s 32M --partition-table mbr --from tree" \
            "-t exfat -s 64M --partition-table gpt --from tree" "-t ntfs -s 32M" "-t fat12 -s 4M"; do
  "$FSIMG" mkfs -q $args --volume-id CAFE0001 plain.img || fail "$args: plain build"
  "$FSIMG" mkfs -q $args --volume-id CAFE0001 --gzip packed.img.gz || fail "$args: --gzip build"
  gzip -t packed.img.gz && pass || fail "$args: gzip -t rejects the output"
  zcat packed.img.gz | cmp - plain.img && pass || fail "$args: zcat output differs from the plain build"
  # Much smaller than the image (the free space compresses).
  gz=$(stat -c %s packed.img.gz); raw=$(stat -c %s plain.img)
  [ $((gz * 20)) -lt "$raw" ] && pass || fail "$args: $gz compressed bytes for a $raw-byte image"
  case "$args" in
    *ntfs*) ;;  # fsck and ls do not read NTFS yet
    *)
      "$FSIMG" fsck packed.img.gz >fsck.out 2>&1; rc=$?
      [ $rc = 0 ] && pass || fail "$args: fsck IMAGE.gz exit $rc: $(cat fsck.out)"
      ;;
  esac
  case "$args" in
    *--from*)
      "$FSIMG" ls -R packed.img.gz > ls.out || fail "$args: ls IMAGE.gz"
      grep -qx "/docs/random.bin" ls.out && grep -qx "/hello.txt" ls.out && pass \
        || fail "$args: ls IMAGE.gz lists: $(tr '\n' ' ' < ls.out)"
      "$FSIMG" cat packed.img.gz docs/random.bin | cmp - tree/docs/random.bin && pass \
        || fail "$args: cat IMAGE.gz gives other bytes"
      rm -rf out.d; "$FSIMG" extract packed.img.gz -C out.d 2>/dev/null && diff -r tree out.d && pass \
        || fail "$args: extract IMAGE.gz gives another tree"
      rm -rf out.d
      case "$args" in
        "-t fat"*)  # slack reads FAT images: the tree's 2 files
          "$FSIMG" slack -t fat32 -c 4K packed.img.gz > slack.out 2>&1
          grep -q "^Tree: 2 files" slack.out && pass || fail "$args: slack IMAGE.gz: $(head -2 slack.out)" ;;
      esac
      ;;
  esac
  # Nothing but the two images in the folder: no temporary left behind.
  left=$(ls -A | grep -v -e '^tree$' -e '^plain.img$' -e '^packed.img.gz$' -e '^out$' -e '^err$' \
         -e '^fsck.out$' -e '^ls.out$' -e '^slack.out$' | tr '\n' ' ')
  [ -z "$left" ] && pass || fail "$args: left behind: $left"
  rm -f plain.img packed.img.gz
done

# The summary names the compressed file; -s is required (no existing size to keep).
"$FSIMG" mkfs -t fat32 -s 64M --gzip s.img.gz > out 2>&1
grep -q "^s.img.gz: FAT32 64 MiB" out && pass || fail "summary line: $(cat out)"
expect_fail 2 "--gzip needs the size of the uncompressed image" "$FSIMG" mkfs -q -t fat32 --gzip n.img.gz
[ ! -e n.img.gz ] && pass || fail "n.img.gz created by a refused run"

# An existing .gz is not overwritten without --force, with or without --gzip.
sum=$(sha256sum < s.img.gz)
expect_fail 3 "s.img.gz already holds gzip-compressed data" "$FSIMG" mkfs -q -t fat16 -s 32M --gzip s.img.gz
expect_fail 3 "s.img.gz already holds gzip-compressed data" "$FSIMG" mkfs -q -t fat16 -s 32M s.img.gz
[ "$(sha256sum < s.img.gz)" = "$sum" ] && pass || fail "s.img.gz changed although mkfs refused"
"$FSIMG" mkfs -q -t fat16 -s 32M --gzip --force s.img.gz && pass || fail "--gzip --force"
"$FSIMG" dump s.img.gz | grep "FAT type          FAT16" >/dev/null && pass || fail "s.img.gz is not FAT16 after --force"
# A plain image in the way is kept as before.
"$FSIMG" mkfs -q -t fat32 -s 64M a.img
expect_fail 3 "a.img already holds a FAT filesystem" "$FSIMG" mkfs -q -t fat32 -s 64M --gzip a.img
# Not for devices.
expect_fail 2 "--gzip writes a compressed image file" "$FSIMG" mkfs -q -t fat32 -s 64M --gzip --device /dev/null
# A refused layout leaves nothing behind.
expect_fail 2 "cannot make -t fat16 -s 2M" "$FSIMG" mkfs -q -t fat16 -s 2M --gzip r.img.gz
[ -z "$(ls -A | grep -e '^r.img' -e '^\.r.img')" ] && pass || fail "a refused --gzip run left files: $(ls -A)"
finish
