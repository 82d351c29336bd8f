#!/usr/bin/env bash
# Wildcards in image paths (fs::expand_wildcards): ls, cat, extract, rm and
# attrib expand *, ? and [...] in each path component, letters in either
# case as Windows' up-case table folds them, on FAT32, exFAT and NTFS images made from one tree; a FAT
# entry matches by its short name too; a name that exists as written is
# taken as written ("photo [1].jpg"); a pattern that matches nothing is
# reported as a missing file (rm -f: no error). What rm and attrib did is
# read back by sleuthkit (fls, istat) and, on FAT, by mtools.
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p tree/DCIM/100CANON tree/DCIM/101CANON tree/docs
for i in 1 2 3; do printf 'photo %s\n' "$i" > "tree/DCIM/100CANON/IMG_000$i.JPG"; done
printf 'other\n' > tree/DCIM/101CANON/IMG_0100.JPG
printf 'raw\n' > tree/DCIM/100CANON/IMG_0001.CR2
printf 'bracket\n' > "tree/docs/photo [1].jpg"
printf 'long name\n' > "tree/docs/A long file name.txt"
printf 'notes\n' > tree/docs/notes.txt
printf 'cafe\n' > "tree/docs/CAFÉ Ωμέγα.txt"

for t in fat32 exfat ntfs; do
  img=$t.img
  "$FSIMG" mkfs -q -t $t -s 64M --from tree $img || { fail "$t: mkfs"; continue; }
  # ls: the matches, in byte order, each as itself.
  got=$("$FSIMG" ls $img '/DCIM/*/*.jpg' | tr '\n' ' ')
  [ "$got" = "/DCIM/100CANON/IMG_0001.JPG /DCIM/100CANON/IMG_0002.JPG /DCIM/100CANON/IMG_0003.JPG /DCIM/101CANON/IMG_0100.JPG " ] &&
    pass || fail "$t: ls */*.jpg: $got"
  got=$("$FSIMG" ls $img '/docs/*.TXT' | tr '\n' '|')
  [ "$got" = "A long file name.txt|CAFÉ Ωμέγα.txt|notes.txt|" ] && pass || fail "$t: ls /docs/*.TXT: $got"
  # Letters beyond ASCII in either case, as Windows folds them.
  [ "$("$FSIMG" cat $img '/docs/café*')" = cafe ] && pass || fail "$t: cat café*"
  [ "$("$FSIMG" ls $img '/docs/*ΩΜΈΓΑ*')" = "CAFÉ Ωμέγα.txt" ] && pass || fail "$t: ls *ΩΜΈΓΑ*: $("$FSIMG" ls $img '/docs/*ΩΜΈΓΑ*' 2>&1)"
  got=$("$FSIMG" ls --json $img '/DCIM/100CANON/IMG_000?.*' | python3 -c '
import json, sys; print(" ".join(e["path"] for e in json.load(sys.stdin)["entries"]))')
  [ "$got" = "/DCIM/100CANON/IMG_0001.CR2 /DCIM/100CANON/IMG_0001.JPG /DCIM/100CANON/IMG_0002.JPG /DCIM/100CANON/IMG_0003.JPG" ] &&
    pass || fail "$t: ls --json IMG_000?.*: $got"
  # cat: every match in order; a bracket name that exists is itself.
  [ "$("$FSIMG" cat $img '/DCIM/100CANON/IMG_000[13].JPG')" = "$(printf 'photo 1\nphoto 3')" ] && pass || fail "$t: cat [13]"
  [ "$("$FSIMG" cat $img '/docs/photo [1].jpg')" = bracket ] && pass || fail "$t: cat of a name with brackets"
  expect_fail 2 'does not exist' "$FSIMG" cat $img '/docs/*.pdf'
  # extract: each match into the folder.
  rm -rf x; mkdir x
  "$FSIMG" extract $img '/docs/*.TXT' -C x 2>/dev/null || fail "$t: extract"
  [ "$(cd x && LC_ALL=C ls | tr '\n' '|')" = "A long file name.txt|CAFÉ Ωμέγα.txt|notes.txt|" ] && pass || fail "$t: extract *.TXT: $(ls x)"
  # attrib and rm change what they match, nothing else.
  "$FSIMG" attrib $img +h '/DCIM/100CANON/*.cr2' || fail "$t: attrib"
  gone=
  "$FSIMG" rm $img '/DCIM/1*/IMG_000[2-3].JPG' || fail "$t: rm"
  expect_fail 1 'no such file' "$FSIMG" rm $img '/DCIM/*.GIF'
  "$FSIMG" rm -f $img '/DCIM/*.GIF' && pass || fail "$t: rm -f of no match"
  # Read back by sleuthkit: the two photos gone, the rest there.
  names=$(fls -r -p $img 2>/dev/null | grep -v -E '\$|System Volume|^[^:]*\* ' | sed 's/^[^:]*:[[:space:]]*//' | grep -i 'jpg\|cr2' | LC_ALL=C sort | tr '\n' ' ')
  [ "$names" = "DCIM/100CANON/IMG_0001.CR2 DCIM/100CANON/IMG_0001.JPG $gone""DCIM/101CANON/IMG_0100.JPG docs/photo [1].jpg " ] &&
    pass || fail "$t: fls after rm: $names"
  inode=$(ifind -n /DCIM/100CANON/IMG_0001.CR2 $img)
  istat $img "$inode" | grep -q -i 'hidden' && pass || fail "$t: istat: IMG_0001.CR2 not hidden"
  "$FSIMG" fsck $img > /dev/null && pass || fail "$t: fsck after: $("$FSIMG" fsck $img)"
done

# FAT: a short name matches too ("ALONGF~1.TXT"), and mtools agrees on what is left.
"$FSIMG" attrib fat32.img +r '/docs/ALONGF~?.TXT' || fail "fat: attrib by short name"
mattrib -i fat32.img "::/docs/A long file name.txt" | grep -q '^ *R\| R ' && pass || fail "fat: mattrib: $(mattrib -i fat32.img '::/docs/A long file name.txt')"
[ "$(mdir -a -b -i fat32.img ::/DCIM/100CANON | sed 's|.*/||' | LC_ALL=C sort | tr '\n' ' ')" = "IMG_0001.CR2 IMG_0001.JPG " ] &&
  pass || fail "fat: mdir: $(mdir -b -i fat32.img ::/DCIM/100CANON)"
finish
