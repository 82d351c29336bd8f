#!/usr/bin/env bash
# fsck -y on FAT and exFAT takes what the check's walk of the tree
# collected for the repair, and on exFAT, after a repair that wrote only
# allocation bitmap bytes and VolumeFlags/PercentInUse, that walk for the
# check after it. On every damage kind below (each with a lost chain and the
# dirty flag beside it), fsck -y prints (text and JSON) exactly what it
# prints when every repair and check walks the volume itself
# (FSIMG_TEST_FULL_WALKS, the test-only switch), leaves the same bytes, and
# what it reports as left is what a fresh check finds.
# cost: 8
here=$(dirname "$0"); . "$here/../lib.sh"
src="$WORK/src"; mkdir -p "$src/DIR/SUB"
head -c 20000 /dev/urandom >"$src/A.TXT"; head -c 12000 /dev/urandom >"$src/B.TXT"
: >"$src/E.TXT"; head -c 100 /dev/urandom >"$src/DIR/C.TXT"
for i in $(seq 1 40); do echo "$i" >"$src/DIR/SUB/F$i.TXT"; done
echo long >"$src/long name file.txt"
n=0
# compare FS DAMAGE_TOOL KINDS LOST DIRTY MKFS_ARGS...
compare() {
  local fs=$1 damage=$2 kinds=$3 lost=$4 dirty=$5; shift 5
  "$FSIMG" mkfs -q -t "$fs" "$@" --volume-id 1234ABCD --from "$src" "$WORK/$fs.base" || { fail "mkfs $fs"; return; }
  local k rows; rows=$(for k in $kinds; do echo "$k - $fs"; done)
  damage_rows "$damage" "$rows"
  for k in $kinds; do damaged "$WORK/$fs-$k.img" || fail "$fs $k: damage: $WHAT"; done
  # A lost chain and the dirty flag beside every kind, in one more batch: the repair of the
  # bitmap or the FAT runs with the other (where the first damage leaves the volume readable).
  for k in $kinds; do
    printf '%s\t%s\n%s\t%s\n' "$WORK/$fs-$k.img" "$lost" "$WORK/$fs-$k.img" "$dirty"
  done | python3 "$damage" --batch >/dev/null
  local img mode opt rc1 rc2 rc left
  for k in $kinds; do
    img="$WORK/$fs-$k.img"
    [ -f "$img" ] || continue
    for mode in text json; do
      cp --sparse=always "$img" "$WORK/reuse.img"; cp --sparse=always "$img" "$WORK/full.img"
      opt=; [ $mode = json ] && opt=--json
      (cd "$WORK" && "$FSIMG" fsck -y $opt reuse.img > reuse.out 2>&1); rc1=$?
      (cd "$WORK" && FSIMG_TEST_FULL_WALKS=1 "$FSIMG" fsck -y $opt full.img > full.out 2>&1); rc2=$?
      sed -i 's/full\.img/reuse.img/g' "$WORK/full.out"
      if [ $rc1 = $rc2 ] && cmp -s "$WORK/reuse.out" "$WORK/full.out"; then pass
      else fail "$fs $k $mode: exit $rc1 against $rc2 with full walks: $(diff "$WORK/full.out" "$WORK/reuse.out" | head -6)"; fi
      same_bytes "$WORK/reuse.img" "$WORK/full.img" && pass || fail "$fs $k $mode: the images differ"
    done
    # What -y printed as left is what a fresh check finds.
    "$FSIMG" fsck -n "$WORK/reuse.img" > "$WORK/after" 2>&1; rc=$?
    if [ $rc1 -le 1 ]; then
      [ $rc = 0 ] && pass || fail "$fs $k: -y said clean (exit $rc1), fsck -n exits $rc: $(head -5 "$WORK/after")"
    else
      [ $rc = 4 ] && pass || fail "$fs $k: -y left errors (exit $rc1), fsck -n exits $rc"
    fi
    n=$((n + 1))
  done
}
# Bitmap and flag repairs (the walk is kept), repairs of entries and chains
# (it is not), and both in one image.
compare exfat "$here/../tools/exfat_damage.py" "bitmap-lost bitmap-free-in-use bitmap-free-all boot-dirty
  bitmap-percent-in-use boot-percent-in-use-range set-checksum set-name-hash chain-too-long chain-too-short
  chain-loop chain-cross-link name-duplicate name-invalid stream-first-cluster dir-entry-after-end
  stream-outside-heap boot-checksum boot-backup-differs" bitmap-lost boot-dirty -s 8M -c 4K
compare fat32 "$here/../tools/fat_damage.py" "chain-lost fat-dirty fsinfo-free-count fat-copies-differ
  chain-too-long chain-too-short chain-loop chain-cross-link chain-free-link dir-dot dir-dotdot
  name-invalid-short name-duplicate lfn-orphan lfn-checksum label-invalid boot-backup-differs
  boot-signature" chain-lost fat-dirty -s 40M -c 512 -L TESTLBL
compare fat16 "$here/../tools/fat_damage.py" "chain-lost chain-too-long name-duplicate lfn-sequence
  label-mismatch dir-dot" chain-lost fat-dirty -s 16M -c 2K -L TESTLBL
[ $n -ge 40 ] && pass || fail "only $n damaged images were tried"
finish
