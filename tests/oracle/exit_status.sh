#!/usr/bin/env bash
# docs/exit-codes.md, "The same outcome, the same status": each outcome of
# its table, produced on a FAT32, an exFAT and an NTFS image made from one
# tree, gives the status the table says on all three (for the damaged rows,
# a file whose chain or run leaves the volume, made by each filesystem's
# damage tool).
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
cd "$WORK"
mkdir -p src/DIR/SUB src/BIG
head -c 20000 /dev/urandom > src/A.TXT; head -c 12000 /dev/urandom > src/B.TXT
: > src/E.TXT; : > src/DIR/E2.TXT; head -c 100 /dev/urandom > src/DIR/C.TXT
long=$(printf 'L%.0s' $(seq 1 129))
# outcome | expected status | command (IMG: the image)
table='listed|0|ls IMG /
dumped|0|dump IMG
checked clean|0|fsck IMG
a path that does not exist: cat|2|cat IMG /missing.txt
a path that does not exist: ls|2|ls IMG /missing.txt
a path that does not exist: extract|2|extract IMG /missing.txt -C out
a path that does not exist: attrib|1|attrib IMG +r /missing.txt
a label no filesystem holds|2|label IMG LONG
an unknown option|2|ls --no-such-option IMG
mkfs over an existing filesystem, no --force|3|mkfs -q -t fat32 -s 64M IMG
damaged (a file with clusters outside the volume): fsck|4|fsck IMG
damaged: fsck -p leaves it|4|fsck -p IMG
damaged: extract skips the file|1|extract IMG -C out2
cross-linked: extract writes both and reports them|1|extract IMG -C out3'
for t in fat32 exfat ntfs; do
  img=$t.img
  "$FSIMG" mkfs -q -t $t -s 64M --from src $img || { fail "$t: mkfs"; continue; }
  case $t in
    fat32) damage() { python3 "$here/../tools/fat_damage.py" "$1" file-start-out-of-range; } ;;
    exfat) damage() { python3 "$here/../tools/exfat_damage.py" "$1" stream-first-cluster-range; } ;;
    ntfs) damage() { python3 "$here/../tools/ntfs_damage.py" "$1" run-outside; } ;;
  esac
  case $t in
    fat32) crosslink() { python3 "$here/../tools/fat_damage.py" "$1" chain-cross-link; } ;;
    exfat) crosslink() { python3 "$here/../tools/exfat_damage.py" "$1" chain-cross-link; } ;;
    ntfs) crosslink() { python3 "$here/../tools/ntfs_damage.py" "$1" run-cross-link; } ;;
  esac
  while IFS='|' read -r what want cmd; do
    case $what in cross-linked*)
      [ -f x-$img ] || { cp $img x-$img; crosslink x-$img > /dev/null || fail "$t: cross-link"; }; use=x-$img ;; damaged*) [ -f bad-$img ] || { cp $img bad-$img; damage bad-$img > /dev/null || fail "$t: damage"; }; use=bad-$img ;; *) use=$img ;; esac
    [ "$what" = "mkfs over an existing filesystem, no --force" ] && { cp $img m-$img; use=m-$img; }
    args=${cmd//IMG/$use}
    args=${args//LONG/$long}
    rm -rf out out2 out3
    # shellcheck disable=SC2086
    "$FSIMG" $args > /dev/null 2> err; rc=$?
    [ "$rc" = "$want" ] && pass || fail "$t: $what: fsimg $cmd exits $rc, the table says $want: $(head -c 300 err)"
  done <<< "$table"
  cmp -s $img m-$img && pass || fail "$t: the refused mkfs changed the image"
done
# The table in the docs is this one.
doc=$(sed -n '/^## The same outcome, the same status/,/^## /p' "$FSIMG_SOURCE_DIR/docs/exit-codes.md" |
  sed -n 's/^| \([^|`]*[^ |]\) *| \([0-9]\) | .*/\1|\2/p')
[ "$doc" = "$(cut -d'|' -f1,2 <<< "$table")" ] && pass || { fail "docs/exit-codes.md's table differs from this test's"; diff <(echo "$doc") <(cut -d'|' -f1,2 <<< "$table"); }
finish
