#!/usr/bin/env bash
# fsck -y marks deleted the long-name entries no reader takes as a name
# (issue 23): orphans (their short entry gone), sets whose checksum names
# another short entry, sets out of sequence (fat_damage.py lfn-orphan,
# lfn-checksum, lfn-sequence), on FAT12, FAT16 and FAT32 images made by
# mkfs.fat + mcopy. -p leaves them (exit 4). After -y: exit 1, our fsck and
# fsck.fat -n clean, every file mtools listed before still listed under the
# same name and byte-exact (the readers skipped those entries: the
# long-named file of a bad set reads as LONGNA~1.TXT before and after); an
# orphan is deleted as fsck.fat -a deletes it (the same image, byte for
# byte: 0xE5 and the rest of each entry zeroed), where fsck.fat -a leaves a bad checksum or sequence ("Not
# auto-correcting"). A second -y changes nothing, undo restores the sha256,
# and a -y cut after each of its writes leaves the files readable and is
# finished by another -y.
# Volume labels (-y): an invalid root label entry or boot-sector label
# removed (fat_damage.py label-invalid; dosfstools' mkdosfs_none image,
# whose BS_VolLab is blank), a boot-sector label that differs from the
# root's made the root's, one without a root label made "NO NAME"
# (label-mismatch; dosfstools' label images): the same image as fsck.fat -a
# leaves, byte for byte; a second label entry in the root and one in a subdirectory marked
# deleted (fsck.fat -a leaves them), the root's first label kept; every file
# the same, fsck.fat -n clean, cut at every write (FAT32).
# cost: 39
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export MTOOLS_SKIP_CHECK=1
cd "$WORK"
mkdir src
head -c 5000 /dev/urandom > src/A.TXT; head -c 3000 /dev/urandom > src/B.TXT  # what fat_damage.py expects
echo long > "src/Long name file.txt"
listing() { mdir -b -i "$1" ::/ 2>/dev/null | LC_ALL=C sort; }
same_files() {  # same_files IMG LISTING: the files of LISTING read the same from IMG as from before.img
  local f
  [ "$(listing "$1")" = "$2" ] || return 1
  for f in $2; do cmp -s <(mtype -i before.img "$f") <(mtype -i "$1" "$f") || return 1; done
}
for spec in "12 4M" "16 32M" "32 64M"; do
  set -- $spec; bits=$1 size=$2
  for kind in lfn-orphan lfn-checksum lfn-sequence; do
    code=fat.${kind/-/.}
    rm -f l.img; truncate -s $size l.img
    mkfs.fat -F $bits -i 12345678 l.img > /dev/null && mcopy -i l.img src/* ::/ || { fail "FAT$bits: setup"; continue; }
    python3 "$here/../tools/fat_damage.py" l.img $kind > /dev/null || { fail "FAT$bits $kind: damage"; continue; }
    [ "$(fsck_codes l.img)" = "$code" ] && pass || fail "FAT$bits $kind: before: $(fsck_codes l.img)"
    cp l.img before.img; cp l.img orig.img; before=$(listing l.img); sha_orig=$(sha256sum < l.img)
    cp l.img peer.img; fsck.fat -a peer.img > peer.out 2>&1
    "$FSIMG" fsck -p l.img > out 2>&1; rc=$?
    [ $rc = 4 ] && [ "$(sha256sum < l.img)" = "$sha_orig" ] && pass || fail "FAT$bits $kind: -p: exit $rc or changed"
    if [ $bits = 32 ]; then  # every cut of -y
      FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" fsck -y l.img > /dev/null 2> count.err
      total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
      [ -n "$total" ] && [ "$total" -ge 2 ] && pass || fail "FAT$bits $kind: write count: $(cat count.err)"
      for n in $(seq 1 $((${total:-1} - 1))); do
        cp orig.img cut.img
        FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" fsck -y cut.img > /dev/null 2>&1; rc=$?
        [ $rc = 99 ] || fail "FAT$bits $kind: cut after write $n: exit $rc"
        same_files cut.img "$before" || fail "FAT$bits $kind: the files differ after cut $n"
        "$FSIMG" fsck -y cut.img > /dev/null 2>&1; rc=$?
        [ $rc = 1 ] && [ -z "$(fsck_codes cut.img)" ] && pass || fail "FAT$bits $kind: -y after cut $n: exit $rc, left $(fsck_codes cut.img)"
      done
      cp orig.img l.img
    fi
    "$FSIMG" fsck -y --undo l.undo l.img > out 2>&1; rc=$?
    [ $rc = 1 ] && grep -q "^repaired $code: 1 set of long-name entries .* marked deleted" out && [ -z "$(fsck_codes l.img)" ] &&
      pass || fail "FAT$bits $kind: -y: exit $rc: $(cat out)"
    fsck.fat -n l.img > ref.out 2>&1 && pass || fail "FAT$bits $kind: fsck.fat -n: $(cat ref.out)"
    same_files l.img "$before" && pass || fail "FAT$bits $kind: files differ: $(listing l.img) vs $before"
    # dump shows the slots as deleted entries, no long-name entry left.
    d=$("$FSIMG" dump --what dir / l.img)
    ! grep -q 'LFN' <<<"$d" && [ "$(grep -c ' DEL ' <<<"$d")" -ge 2 ] && pass || fail "FAT$bits $kind: dump --what dir: $d"
    # Every reader agrees (7-Zip takes a name from deleted long-name entries whose bytes remain).
    [ $bits = 32 ] && check l.img -j 2
    if [ $kind = lfn-orphan ]; then
      cmp -s l.img peer.img && pass || fail "FAT$bits $kind: not the image fsck.fat -a leaves: $(cmp l.img peer.img)"
    else
      grep -q "Not auto-correcting" peer.out && pass || fail "FAT$bits $kind: fsck.fat -a: $(cat peer.out)"
    fi
    sha_fixed=$(sha256sum < l.img)
    "$FSIMG" fsck -y l.img > /dev/null 2>&1; rc=$?
    [ $rc = 0 ] && [ "$(sha256sum < l.img)" = "$sha_fixed" ] && pass || fail "FAT$bits $kind: second -y: exit $rc or changed"
    "$FSIMG" undo l.undo l.img > /dev/null 2> err && [ "$(sha256sum < l.img)" = "$sha_orig" ] && pass || fail "FAT$bits $kind: undo: $(cat err)"
    rm -f l.undo
  done
done

# Volume labels.
mkdir -p src/DIR; head -c 100 /dev/urandom > src/DIR/C.TXT
for spec in "12 4M" "16 32M" "32 64M"; do
  set -- $spec; bits=$1 size=$2
  for kind in label-invalid label-duplicate label-outside-root; do
    code=fat.${kind/-/.}
    rm -f l.img; truncate -s $size l.img
    mkfs.fat -F $bits -i 12345678 -n TESTLBL l.img > /dev/null && mcopy -s -i l.img src/* ::/ || { fail "FAT$bits: setup"; continue; }
    python3 "$here/../tools/fat_damage.py" l.img $kind > /dev/null || { fail "FAT$bits $kind: damage"; continue; }
    [ "$(fsck_codes l.img)" = "$code" ] && pass || fail "FAT$bits $kind: before: $(fsck_codes l.img)"
    cp l.img orig.img; sha_orig=$(sha256sum < l.img)
    cp l.img peer.img; fsck.fat -a peer.img > peer.out 2>&1
    [ $bits = 32 ] && repair_cuts orig.img "FAT$bits $kind"
    cp orig.img l.img
    "$FSIMG" fsck -y l.img > out 2>&1; rc=$?
    [ $rc = 1 ] && grep -q "^repaired $code: " out && [ -z "$(fsck_codes l.img)" ] && pass || fail "FAT$bits $kind: -y: exit $rc: $(cat out)"
    fsck.fat -n l.img > ref.out 2>&1 && pass || fail "FAT$bits $kind: fsck.fat -n: $(cat ref.out)"
    # Every file read the same (the label entries mtools lists as files aside).
    n=0
    while IFS= read -r f; do
      n=$((n + 1))
      cmp -s <(mtype -i orig.img "$f") <(mtype -i l.img "$f") || fail "FAT$bits $kind: $f differs"
    done < <(mdir -/ -b -i l.img ::/ | grep -v '/$')
    [ $n -ge 4 ] && pass || fail "FAT$bits $kind: mtools lists $n files"
    case $kind in
      label-invalid) cmp -s l.img peer.img && pass || fail "FAT$bits $kind: not the image fsck.fat -a leaves: $(cmp l.img peer.img)" ;;
      *) [ "$(mlabel -s -i l.img :: 2>/dev/null | sed 's/ *$//')" = " Volume label is TESTLBL" ] && pass ||
           fail "FAT$bits $kind: label now: $(mlabel -s -i l.img :: 2>&1)" ;;
    esac
  done
done
# A boot-sector label that differs from the root's (fat_damage.py label-mismatch: BS_VolLab OTHER; a
# note, not an error): -y copies the root's into the boot sector, the bytes fsck.fat -a writes.
for spec in "12 4M" "32 64M"; do
  set -- $spec; bits=$1 size=$2
  rm -f l.img; truncate -s $size l.img
  mkfs.fat -F $bits -i 12345678 -n TESTLBL l.img > /dev/null && mcopy -s -i l.img src/* ::/ &&
    python3 "$here/../tools/fat_damage.py" l.img label-mismatch > /dev/null || { fail "FAT$bits mismatch: setup"; continue; }
  cp l.img peer.img; fsck.fat -a peer.img > /dev/null 2>&1
  "$FSIMG" fsck -y l.img > out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q '^repaired fat.label.mismatch: the boot sector.s label set to "TESTLBL"' out && cmp -s l.img peer.img &&
    pass || fail "FAT$bits mismatch: exit $rc, $(cmp l.img peer.img): $(cat out)"
done
# dosfstools' label images: a blank boot-sector label (mkdosfs_none), labels that differ (Windows XP
# relabelled the root only), a boot-sector label without a root one: what fsck.fat -a leaves, byte
# for byte, and fsck.fat -n finds nothing after.
for c in label-mkdosfs_none label-different-damaged label-mkdosfs_label1_xp_label2 label-only-boot-damaged; do
  if ! "$SHARED/corpus/run" --decode fat/dosfstools-$c none.img > /dev/null 2>&1; then fail "corpus: $c missing"; continue; fi
  cp none.img peer.img; fsck.fat -a peer.img > /dev/null 2>&1
  "$FSIMG" fsck -y none.img > out 2>&1; rc=$?
  [ $rc = 1 ] && cmp -s none.img peer.img && [ -z "$(fsck_codes none.img)" ] && pass ||
    fail "$c: exit $rc, $(cmp none.img peer.img): $(cat out)"
  fsck.fat -n none.img > ref.out 2>&1; grep -qv -e '^fsck.fat' -e '^none.img:' -e '^$' ref.out && fail "$c: fsck.fat -n: $(cat ref.out)" || pass
done
finish
