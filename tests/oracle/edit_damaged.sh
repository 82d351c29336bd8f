#!/usr/bin/env bash
# The changing commands on damaged images lose nothing (issue 40). For every
# kind of damage tests/tools/fat_damage.py and exfat_damage.py make (FAT32
# and exFAT; FAT12/16 for some chain kinds), on the images the
# fsck damage tests use, run cp, rm, mkdir, mv, attrib and label in turn.
# Each either refuses with exit 3 leaving the image byte-identical, or does
# its change; afterwards every file sleuthkit (tsk_recover) read before reads
# byte-exact (but the removed and the moved one, which must read at its new
# path), the reference checker (fsck.fat -n, fsck.exfat -n) is still clean if
# it was, and our fsck finds nothing that was not there (but a dirty flag).
# The classes the issue names must refuse: cross-links, a chain into a free
# cluster or looping, a free first cluster, a directory loop, an exFAT
# bitmap that gives away a used cluster; --force-unsafe goes on with a
# warning. Lost clusters only warn. label and attrib that only show open the
# image read-only, without the check or the lock.
# cost: 78
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
command -v tsk_recover >/dev/null || { echo "sleuthkit missing: skipped"; exit 77; }
export MTOOLS_SKIP_CHECK=1 SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p src/DIR srcx/DIR/SUB  # the trees fat_fsck_damage.sh and exfat_fsck_damage.sh use
head -c 5000 /dev/urandom > src/A.TXT
head -c 3000 /dev/urandom > src/B.TXT
head -c 100 /dev/urandom > src/DIR/C.TXT
echo long > "src/Long name file.txt"
head -c 20000 /dev/urandom > srcx/A.TXT
head -c 12000 /dev/urandom > srcx/B.TXT
head -c 100 /dev/urandom > srcx/DIR/C.TXT
: > srcx/E.TXT
echo new > new.txt
mkbase() {  # mkbase NAME fat ARGS... | mkbase NAME exfat ARGS...
  local img=$1.base kind=$2; shift 2
  if [ "$kind" = fat ]; then
    truncate -s "$1" "$img"; shift
    mkfs.fat -i 1234ABCD -n TESTLBL "$@" "$img" > /dev/null &&
      mcopy -i "$img" src/A.TXT src/B.TXT src/DIR "src/Long name file.txt" ::/ || fail "base $img"
  else
    "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD "$@" --from srcx "$img" || fail "base $img"
  fi
}
mkbase fat32 fat 40M -F 32 -s 1
mkbase fat16 fat 32M -F 16 -s 2
mkbase fat12 fat 4M -F 12 -s 2
mkbase exfat exfat -s 8M -c 4K
recover() { rm -rf "$2"; mkdir "$2"; timeout 30 tsk_recover -a "$1" "$2" > /dev/null 2>&1; }
refcheck() { if [ "$2" = exfat ]; then fsck.exfat -n "$1" > /dev/null 2>&1; else fsck.fat -n "$1" > /dev/null 2>&1; fi; }
must_refuse=" fat.chain.cross-link fat.chain.free-link fat.chain.loop fat.file.start-free fat.dir.loop
  exfat.chain.cross-link exfat.chain.loop exfat.bitmap.free-in-use "

# one BASE FS KIND: on the damaged copy of BASE (made by damage_all below), run every command, judge.
one() {
  local base=$1 fs=$2 kind=$3 img=case-$1-$3.img
  damaged $img || { echo "$base $kind: not made on this image"; rm -f $img; return; }
  local before_codes ref=1 moved="Long name file.txt" refused=0 ran=0
  [ "$fs" = exfat ] && moved=E.TXT
  before_codes=$(fsck_codes $img)
  cp $img damaged.img
  local sha0 sha rc
  sha0=$(cksum < $img) sha=$sha0  # sha: the image before each command (one cksum a command)
  for cmd in "cp $img new.txt /DIR/" "rm $img /B.TXT" "mkdir $img /NEWDIR" "mv $img /$moved /DIR/" \
      "attrib $img +r /DIR/C.TXT" "label $img NEWLBL"; do
    "$FSIMG" $cmd > out 2> err; rc=$?
    case $rc in
      3) refused=$((refused + 1))
         [ "$(cksum < $img)" = "$sha" ] || fail "$base $kind: fsimg $cmd refused (exit 3) but changed the image"
         [[ $(< err) == *"nothing was changed"* ]] || fail "$base $kind: fsimg $cmd: exit 3 without saying so: $(< err)" ;;
      0|1) ran=$((ran + 1)); sha=$(cksum < $img) ;;
      *) fail "$base $kind: fsimg $cmd: exit $rc: $(cat err)"; sha=$(cksum < $img) ;;
    esac
  done
  [ -n "$before_codes" ] && case "$must_refuse" in *" $before_codes "*)
    [ $ran = 0 ] && [ "$(cksum < $img)" = "$sha0" ] && pass || fail "$base $kind ($before_codes): not refused by every command" ;;
  esac
  if [ $ran = 0 ]; then  # all refused: the image is the damaged one, byte for byte
    [ "$(cksum < $img)" = "$sha0" ] && pass || fail "$base $kind: refused, yet changed"
    echo "$base $kind ($before_codes): all refused"
    rm -f $img; return
  fi
  # Every file read before reads the same, the removed one excepted, the moved one at its new path.
  refcheck damaged.img "$fs" && ref=0
  recover damaged.img before
  recover $img after
  # (diff -rq: what is only in "after" is what the commands made)
  local lost=0 line
  while IFS= read -r line; do
    case "$line" in
      "Only in after"*|"Only in before: B.TXT"|*'/$'*|*': $'*) ;;  # ($ALLOC_BITMAP, $UPCASE_TABLE: exFAT metadata)
      "Only in before: $moved") cmp -s "before/$moved" "after/DIR/$moved" || { lost=1; echo "  $base $kind: /$moved not at /DIR"; } ;;
      *) lost=1; echo "  $base $kind: $line" ;;
    esac
  done < <(diff -rq before after)
  [ $lost = 0 ] && pass || fail "$base $kind ($before_codes): a file that read before does not read the same"
  if [ $ref = 0 ]; then refcheck $img "$fs" && pass || fail "$base $kind: the reference checker was clean before, not after"; fi
  local c
  for c in $(fsck_codes $img); do
    case " $before_codes fat.boot.dirty fat.fat.dirty exfat.boot.dirty " in *" $c "*) ;; *)
      fail "$base $kind ($before_codes): the commands added $c" ;; esac
  done
  echo "$base $kind ($before_codes): $refused refused, $ran ran"
  rm -f $img
}

fat_cases=$(for k in $(python3 "$here/../tools/fat_damage.py" --list); do echo "fat32 $k"; done
  for k in chain-free-link chain-loop chain-cross-link chain-lost file-start-free; do echo "fat16 $k"; done
  for k in chain-cross-link chain-lost; do echo "fat12 $k"; done)
exfat_cases=$(for k in $(python3 "$here/../tools/exfat_damage.py" --list); do echo "exfat $k"; done)
# The damaged copies first, one process of each damage tool for all of them.
damages() { local b k; while read -r b k; do cp $b.base case-$b-$k.img; printf '%s\t%s\n' case-$b-$k.img "$k"; done; }
damages <<<"$fat_cases" > fat.damages; damage_all "$here/../tools/fat_damage.py" < fat.damages
damages <<<"$exfat_cases" > exfat.damages; damage_all "$here/../tools/exfat_damage.py" < exfat.damages
while read -r b k <&3; do one $b fat "$k"; done 3<<<"$fat_cases"
while read -r b k <&3; do one $b exfat "$k"; done 3<<<"$exfat_cases"

# --force-unsafe changes a damaged volume, with a warning; lost clusters only warn.
cp fat32.base x.img
python3 "$here/../tools/fat_damage.py" x.img chain-cross-link > /dev/null
"$FSIMG" mkdir --force-unsafe x.img /FORCED > out 2> err; rc=$?
[ $rc = 0 ] && grep -q "changing a damaged volume (--force-unsafe): fat.chain.cross-link" err && mdir -i x.img ::/FORCED > /dev/null 2>&1 &&
  pass || fail "--force-unsafe: exit $rc: $(cat err)"
cp fat32.base x.img
python3 "$here/../tools/fat_damage.py" x.img chain-lost > /dev/null
"$FSIMG" cp x.img new.txt /N.TXT > out 2> err; rc=$?
[ $rc = 0 ] && grep -q "fsck finds damage this change does not rely on (fat.chain.lost)" err && mtype -i x.img ::N.TXT | cmp -s - new.txt &&
  pass || fail "lost clusters: exit $rc: $(cat err)"
# Showing a label or attributes opens read-only: no check, no lock (another
# process holds an exclusive lock on the image meanwhile), no write.
cp fat32.base ro.img
python3 "$here/../tools/fat_damage.py" ro.img chain-cross-link > /dev/null
sha=$(sha256sum < ro.img)
flock -x ro.img sh -c "'$FSIMG' label ro.img > label.out && '$FSIMG' attrib ro.img /A.TXT > attrib.out" &&
  [ "$(cat label.out)" = TESTLBL ] && grep -q "/A.TXT" attrib.out && [ "$(sha256sum < ro.img)" = "$sha" ] && pass ||
  fail "show-only label/attrib under another process's lock: $(cat label.out attrib.out 2>&1)"
finish
