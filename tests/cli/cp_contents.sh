#!/usr/bin/env bash
# fsimg cp -r SRC/. DEST copies what SRC holds into DEST, as cp -R DIR/. DEST
# does (POSIX: the operand's last component is ".", so the target is
# DEST/.): into the root, into an existing directory (merged, files there
# kept), from "." itself; to a DEST that does not exist it makes DEST a copy
# of SRC, as before. Read back by mtools (FAT32), exFAT and NTFS by fsimg
# and fsck. Before, "tree/." landed as /tree.
# cost: 3
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
export SOURCE_DATE_EPOCH=1700000000
mkdir -p tree/sub
printf 'top\n' > tree/top.txt
printf 'inner\n' > tree/sub/inner.txt
names() { "$FSIMG" ls "$1" "$2" | tr '\n' ' '; }

for t in fat32 exfat ntfs; do
  "$FSIMG" mkfs -q -t $t -s 64M $t.img || fail "$t: mkfs"
  # Into the root.
  "$FSIMG" cp -q -r $t.img tree/. / || fail "$t: cp tree/. /"
  [ "$(names $t.img /)" = "sub/ top.txt " ] && pass || fail "$t: root holds $(names $t.img /)"
  [ "$("$FSIMG" cat $t.img /sub/inner.txt)" = inner ] && pass || fail "$t: /sub/inner.txt"
  # Into an existing directory holding a file: merged.
  "$FSIMG" mkdir -q $t.img /dst && printf 'kept\n' > kept.txt && "$FSIMG" cp -q $t.img kept.txt /dst/ || fail "$t: /dst"
  "$FSIMG" cp -q -r $t.img tree/./ /dst || fail "$t: cp tree/./ /dst"
  [ "$(names $t.img /dst)" = "kept.txt sub/ top.txt " ] && pass || fail "$t: /dst holds $(names $t.img /dst)"
  # "." itself, from inside the tree.
  "$FSIMG" mkdir -q $t.img /here && (cd tree && "$FSIMG" cp -q -r "$WORK/$t.img" . /here) || fail "$t: cp . /here"
  [ "$(names $t.img /here)" = "sub/ top.txt " ] && pass || fail "$t: /here holds $(names $t.img /here)"
  # A DEST that does not exist: a copy of the directory under that name.
  "$FSIMG" cp -q -r $t.img tree/. /new || fail "$t: cp tree/. /new"
  [ "$(names $t.img /new/sub)" = "inner.txt " ] && pass || fail "$t: /new/sub holds $(names $t.img /new/sub)"
  # An existing file of the same name is kept unless -f.
  "$FSIMG" cp -q -r $t.img tree/. / 2> err.txt; rc=$?
  [ $rc = 1 ] && grep -q '"/top.txt" exists' err.txt && pass || fail "$t: a second copy: exit $rc, $(cat err.txt)"
  "$FSIMG" fsck $t.img > /dev/null && pass || fail "$t: fsck: $("$FSIMG" fsck $t.img)"
done
# mtools reads the FAT32 copy.
[ "$(mtype -i fat32.img ::/sub/inner.txt)" = inner ] && [ "$(mtype -i fat32.img ::/dst/kept.txt)" = kept ] && pass ||
  fail "mtype"
[ "$(mdir -b -i fat32.img ::/ | sort | tr '\n' ' ')" = "::/dst/ ::/here/ ::/new/ ::/sub/ ::/top.txt " ] && pass ||
  fail "mdir: $(mdir -b -i fat32.img ::/)"
finish
