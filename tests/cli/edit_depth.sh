#!/usr/bin/env bash
# mkdir -p, cp -r and mv make no directory deeper than fsck, ls -R and extract
# walk (issue 40; check::kMaxDirectoryDepth: the root at depth 0, directories
# down to depth 255): 255 levels are made and check clean, 256 are refused
# with the image unchanged, on FAT32 and exFAT; before, mkdir -p made 3,000
# levels that fsimg's own fsck then called damaged.
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
path() { local p="" i; for i in $(seq 1 "$1"); do p="$p/d"; done; echo "$p"; }
for t in fat32 exfat; do
  "$FSIMG" mkfs -q -t $t -s 64M $t.img || fail "mkfs $t"
  "$FSIMG" mkdir -p $t.img "$(path 255)" > out 2> err && pass || fail "$t: mkdir -p of 255 levels: $(cat err)"
  "$FSIMG" fsck -n $t.img > fsck.out 2>&1 && pass || fail "$t: 255 levels do not check clean: $(tail -3 fsck.out)"
  [ "$("$FSIMG" ls -R $t.img / | grep -c .)" -ge 255 ] && pass || fail "$t: ls -R does not list 255 levels"
  sum=$(cksum < $t.img)
  expect_fail 1 "would put a directory 256 levels below the root; fsimg makes at most 255" \
    "$FSIMG" mkdir -p $t.img "$(path 256)"
  # cp -r: host/a/b/c into /d/.../d (252 deep) puts c at depth 256; into 251 deep, at 255.
  mkdir -p host/a/b/c
  expect_fail 1 "would put a directory 256 levels below the root" "$FSIMG" cp -r $t.img host "$(path 252)"
  [ "$(cksum < $t.img)" = "$sum" ] && pass || fail "$t: a refused mkdir or cp changed the image"
  "$FSIMG" cp -r $t.img host "$(path 251)" > out 2> err && pass || fail "$t: cp -r to depth 255: $(cat err)"
  "$FSIMG" fsck -n $t.img > fsck.out 2>&1 && pass || fail "$t: cp -r to depth 255 is not clean: $(tail -3 fsck.out)"
  # mv takes the moved directory's subtree along: /m/x into 254 levels puts x at 256.
  "$FSIMG" mkdir -p $t.img /m/x || fail "$t: mkdir /m/x"
  sum=$(cksum < $t.img)
  expect_fail 1 "would put a directory 256 levels below the root; fsimg makes at most 255 (deeper is damage to fsck, and ls -R and extract stop there); nothing was moved" \
    "$FSIMG" mv $t.img /m "$(path 254)"
  expect_fail 1 "would put a directory 256 levels below the root" "$FSIMG" mv $t.img /m "$(path 255)/m"
  [ "$(cksum < $t.img)" = "$sum" ] && pass || fail "$t: a refused mv changed the image"
  "$FSIMG" mv $t.img /m "$(path 253)" > out 2> err && pass || fail "$t: mv to depth 254: $(cat err)"
  "$FSIMG" ls $t.img "$(path 253)/m/x" > /dev/null 2>&1 && pass || fail "$t: /m/x not moved"
  "$FSIMG" fsck -n $t.img > fsck.out 2>&1 && pass || fail "$t: mv to depth 255 is not clean: $(tail -3 fsck.out)"
done
finish
