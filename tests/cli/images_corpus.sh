#!/usr/bin/env bash
# The reference images in images/ (gzip-compressed, made by images/make):
# fsimg fsck reads each .gz directly and gives the exit status and finding
# codes of images/expected.tsv; a damaged image's name says the one code it
# must have (fat16-dir-loop -> fat.dir.loop); the clean ones read back their
# files through ls and cat, still compressed.
# cost: 9
here=$(dirname "$0"); . "$here/../lib.sh"
I="$FSIMG_SOURCE_DIR/images"
n=0
while IFS=$'\t' read -r name rc codes; do
  case $name in '#'*|'') continue ;; esac
  n=$((n + 1))
  "$FSIMG" fsck --json "$I/$name" > "$WORK/out.json" 2>"$WORK/err"; got=$?
  [ "$got" = "$rc" ] && pass || fail "$name: exit $got, expected $rc: $(cat "$WORK/err")"
  found=$(python3 -c 'import json,sys; print("+".join(sorted({f["code"] for f in json.load(open(sys.argv[1]))["findings"] if f["severity"] != "info"})) or "-")' "$WORK/out.json")
  [ "$found" = "$codes" ] && pass || fail "$name: codes $found, expected $codes"
  # The name's kind is the code: fat16-dir-loop.img.gz -> fat.dir.loop (clean -> none).
  kind=${name%.img.gz}; fs=${kind%%-*}; kind=${kind#*-}
  case $fs in fat*) fs=fat ;; esac
  if [ "$kind" = clean ]; then want=-; else want="$fs.${kind%%-*}.${kind#*-}"; fi
  [ "$codes" = "$want" ] && pass || fail "$name: expected.tsv says $codes, its name says $want"
done < "$I/expected.tsv"
[ "$n" -ge 15 ] && pass || fail "only $n images in expected.tsv"
[ "$(ls "$I"/*.img.gz | wc -l)" = "$n" ] && pass || fail "images/*.img.gz and expected.tsv differ"
# The clean images: files read back from the .gz (contents as images/make wrote them).
det() { python3 -c "import sys,random; r=random.Random(int(sys.argv[2])); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(int(sys.argv[1]))))" "$1" "$2"; }
det 5000 1 > "$WORK/a"; det 100 3 > "$WORK/c"; det 20000 4 > "$WORK/xa"
"$FSIMG" cat "$I/fat12-clean.img.gz" /A.TXT | cmp -s - "$WORK/a" && pass || fail "cat /A.TXT of fat12-clean.img.gz"
"$FSIMG" cat "$I/fat12-clean.img.gz" /dir/c.txt | cmp -s - "$WORK/c" && pass || fail "cat /DIR/C.TXT of fat12-clean.img.gz"
"$FSIMG" cat "$I/exfat-clean.img.gz" /A.TXT | cmp -s - "$WORK/xa" && pass || fail "cat /A.TXT of exfat-clean.img.gz"
[ "$("$FSIMG" ls -R "$I/fat12-clean.img.gz" | tr '\n' ' ')" = "/A.TXT /B.TXT /DIR/ /Long name file.txt /DIR/C.TXT " ] \
  && pass || fail "ls -R fat12-clean.img.gz: $("$FSIMG" ls -R "$I/fat12-clean.img.gz" | tr '\n' ' ')"
# The reference checkers agree (exfat.bitmap.lost is blind to fsck.exfat -n: it does not
# compare the allocation bitmap with what files own; ntfsfix -n checks the boot sector,
# $MFT/$MFTMirr and $UpCase only, so ntfs-bitmap-free-in-use and ntfs-index-order are
# blind to it, see tests/oracle/ntfs_fsck_damage.sh).
if command -v fsck.fat >/dev/null && command -v fsck.exfat >/dev/null && command -v ntfsfix >/dev/null; then
  for f in "$I"/*.img.gz; do
    n=$(basename "$f" .img.gz); gunzip -c "$f" > "$WORK/x.img"
    case $n in
      fat*) fsck.fat -n "$WORK/x.img" >/dev/null 2>&1 ;;
      ntfs*) ntfsfix -n "$WORK/x.img" >/dev/null 2>&1 ;;
      *) fsck.exfat -n "$WORK/x.img" >/dev/null 2>&1 ;;
    esac
    ref=$?
    case $n in *-clean|exfat-bitmap-lost|ntfs-bitmap-free-in-use|ntfs-index-order) want=0 ;; *) want=damaged ;; esac
    if [ "$want" = 0 ]; then [ $ref = 0 ]; else [ $ref != 0 ]; fi && pass || fail "$n: the reference fsck exits $ref"
  done
fi
finish
