#!/usr/bin/env bash
# fsck -y --salvage saves lost chains as files /FOUND.000/FILE0000.CHK ...
# (chkdsk's convention) instead of freeing them (issue 23), on FAT12, FAT16
# and FAT32 images made by mkfs.fat + mcopy. The lost chains: two files
# whose directory entries were marked deleted (their chains kept in the FAT),
# a loop, a chain whose link goes to a free cluster, one that links to a
# file's cluster, and one that joins another lost chain. After -y --salvage:
# exit 1; our fsck and fsck.fat -n clean; the saved files hold exactly what
# dosfstools' own salvage (fsck.fat -a -f, FSCKnnnn.REC) saves, chain for
# chain; the deleted files' bytes begin their CHK files; the other files read
# byte-exact; a second run changes nothing; undo restores the sha256;
# check-image passes (FAT32). Cut after every write (FAT16): the files still
# read, and another -y --salvage finishes with every chain saved (a cut that left
# the new directory's cluster lost saves it as one more file). A fixed
# root with no free entry: refused before the first write (exit 8, the image
# unchanged). --salvage without -y is a usage error. exFAT: each run of lost
# clusters saved as /LOST+FOUND/FILEnnnnnnn.CHK, the same runs fsck.exfat -s
# saves, with the same checks and cuts (an existing /LOST+FOUND takes the next
# free names; one that is a file is refused). NTFS: lost clusters are left
# (exit 4). dump --what dir shows the deleted entries' mark as "?".
# cost: 27
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export MTOOLS_SKIP_CHECK=1 SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
mkdir -p tree/dir
printf 'hello\n' > tree/a.txt
head -c 50000 /dev/urandom > tree/dir/b.bin
head -c 20000 /dev/urandom > gone1.bin
head -c 3000 /dev/urandom > gone2.bin
files_ok() { "$FSIMG" cat "$1" /a.txt | cmp -s - tree/a.txt && "$FSIMG" cat "$1" /dir/b.bin | cmp -s - tree/dir/b.bin; }
# FAT entries set in every FAT (fatset IMG N VALUE...); a root entry marked deleted (unlink_entry IMG SHORTNAME).
fatset() { python3 "$here/../tools/fat_entries.py" "$1" set all "${@:2}"; }
unlink_entry() { python3 "$here/../tools/fat_entries.py" "$1" unlink "$2"; }
# chk_sums IMG DIR...: sha256 of each file in image directories DIR, sorted.
chk_sums() { local img=$1 d f; shift; for d in "$@"; do
  for f in $(mdir -b -i "$img" "::$d" 2>/dev/null | grep -i '\.chk$'); do mtype -i "$img" "$f" | sha256sum; done; done | sort; }

for spec in "12 8M 0xFFF" "16 32M 0xFFFF" "32 64M 0x0FFFFFFF"; do
  set -- $spec; bits=$1 size=$2 eoc=$3
  img=f$bits.img
  rm -f $img; truncate -s $size $img
  mkfs.fat -F $bits -i 12345678 $img > /dev/null && mcopy -s -i $img tree/a.txt tree/dir gone1.bin gone2.bin :: ||
    { fail "FAT$bits: mkfs.fat + mcopy"; continue; }
  b_first=$("$FSIMG" dump --what extents /dir/b.bin $img 2>/dev/null | sed -n "s/.*first cluster \([0-9]*\),.*/\1/p")
  unlink_entry $img "GONE1   BIN" && unlink_entry $img "GONE2   BIN" || fail "FAT$bits: unlink"
  fatset $img 900 901 902 900          # a loop of three
  fatset $img 950 951 0                # 951 free: the chain is 950 alone, its link goes nowhere
  fatset $img 960 "${b_first:-2}"      # links into /dir/b.bin's chain
  fatset $img 970 971 972 $eoc         # a chain
  fatset $img 980 971                  # joins it
  codes=$(fsck_codes $img)
  case " $codes " in *" fat.chain.lost "*) pass ;; *) fail "FAT$bits: before: $codes" ;; esac
  # dump shows the deleted entries with their mark as a mark: "?" for the lost first character.
  d=$("$FSIMG" dump --what dir / $img)
  grep -q "DEL   ?ONE1.BIN " <<<"$d" && pass || fail "FAT$bits: dump --what dir: $d"
  cp $img orig.img
  sha_orig=$(sha256sum < $img)
  # dosfstools' salvage of the same damage: FSCKnnnn.REC in the root.
  cp orig.img ref.img; fsck.fat -a -f ref.img > ref.out 2>&1
  ref_sums=$(for f in $(mdir -b -i ref.img ::/ | grep -i '\.rec$'); do mtype -i ref.img "$f" | sha256sum; done | sort)
  [ "$(echo "$ref_sums" | wc -l)" = 7 ] && pass || fail "FAT$bits: fsck.fat -a -f saved $(echo "$ref_sums" | wc -l) chains: $(cat ref.out)"

  [ $bits = 16 ] && {  # every cut leaves the files readable; -y --salvage again saves every chain
    FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" fsck -y --salvage $img > /dev/null 2> count.err
    total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
    [ -n "$total" ] && [ "$total" -ge 3 ] && pass || fail "FAT$bits: write count: $(cat count.err)"
    for n in $(seq 1 $((${total:-1} - 1))); do
      cp orig.img cut.img
      FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" fsck -y --salvage cut.img > /dev/null 2>&1; rc=$?
      [ $rc = 99 ] || fail "FAT$bits: cut after write $n: exit $rc"
      files_ok cut.img || fail "FAT$bits: files unreadable after cut $n"
      "$FSIMG" fsck -y --salvage cut.img > /dev/null 2>&1; rc=$?
      [ $rc = 1 ] && [ -z "$(fsck_codes cut.img)" ] && pass || fail "FAT$bits: -y after cut $n: exit $rc, left $(fsck_codes cut.img)"
      # Every chain saved (a cut between the new directory's cluster and its entry leaves that
      # cluster lost: the next run saves it too, as one more file).
      [ -z "$(comm -23 <(echo "$ref_sums") <(chk_sums cut.img /FOUND.000 /FOUND.001))" ] && pass ||
        fail "FAT$bits: after cut $n a chain was not saved"
    done
    cp orig.img $img
  }

  "$FSIMG" fsck -y --salvage --undo $img.undo $img > out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired fat.chain.lost: 7 lost chains (.*) saved as files /FOUND.000/FILE0000.CHK .. /FOUND.000/FILE0006.CHK" out &&
    pass || fail "FAT$bits: -y --salvage: exit $rc: $(cat out)"
  [ -z "$(fsck_codes $img)" ] && pass || fail "FAT$bits: left $(fsck_codes $img)"
  fsck.fat -n $img > chk.out 2>&1 && pass || fail "FAT$bits: fsck.fat -n: $(cat chk.out)"
  [ "$(chk_sums $img /FOUND.000)" = "$ref_sums" ] && pass || fail "FAT$bits: the saved chains differ from fsck.fat -a -f's"
  # The deleted files' bytes begin their CHK files (FILE0000: the lowest first cluster, gone1.bin).
  mtype -i $img ::/FOUND.000/FILE0000.CHK | head -c 20000 | cmp -s - gone1.bin &&
    mtype -i $img ::/FOUND.000/FILE0001.CHK | head -c 3000 | cmp -s - gone2.bin && pass || fail "FAT$bits: the deleted files' bytes"
  files_ok $img && pass || fail "FAT$bits: files differ"
  sha_fixed=$(sha256sum < $img)
  "$FSIMG" fsck -y --salvage $img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < $img)" = "$sha_fixed" ] && pass || fail "FAT$bits: second -y: exit $rc or changed"
  [ $bits = 32 ] && check $img -j 2
  "$FSIMG" undo $img.undo $img > /dev/null 2> err && [ "$(sha256sum < $img)" = "$sha_orig" ] && pass ||
    fail "FAT$bits: undo: $(cat err)"
done

# --salvage asks for -y.
cp orig.img u.img
expect_fail 16 "give it with -y" "$FSIMG" fsck --salvage u.img
expect_fail 16 "give it with -y" "$FSIMG" fsck -p --salvage u.img

# A FAT16 root with no free entry: nothing is written, exit 8.
rm -f full.img; truncate -s 32M full.img; mkfs.fat -F 16 -r 16 full.img > /dev/null  # (rounded up to a cluster's entries)
entries=$("$FSIMG" dump full.img | sed -n 's/.*BPB_RootEntCnt *\([0-9]*\)$/\1/p')
mkdir fill; for i in $(seq 2 "${entries:-2}"); do echo $i > fill/F$i.TXT; done
mcopy -i full.img fill/* gone1.bin :: && unlink_entry full.img "GONE1   BIN" && mcopy -i full.img tree/a.txt :: ||
  fail "full root: setup"
sha=$(sha256sum < full.img)
"$FSIMG" fsck -y --salvage full.img > out 2>&1; rc=$?
[ $rc = 8 ] && grep -q "salvage cannot save the 1 lost chain as files: no space left in the root directory.*nothing was written" out &&
  [ "$(sha256sum < full.img)" = "$sha" ] && pass || fail "full root: exit $rc: $(cat out)"

# exFAT: each run of lost clusters saved as /LOST+FOUND/FILEnnnnnnn.CHK (NoFatChain), as
# fsck.exfat -s does. The lost clusters: files whose entry sets were marked not in use
# (InUse cleared) while their clusters stayed marked in the allocation bitmap.
cat > unset.py <<'EOF'
import sys
img, name = sys.argv[1], sys.argv[2].encode("utf-16-le")
data = open(img, "rb").read()
i = data.find(name)
fe = i - 2 - 64  # the File Name entry holding the name starts 2 bytes before; File, Stream before it
assert i > 0 and fe % 32 == 0 and data[fe] == 0x85 and data[fe + 32] == 0xC0 and data[fe + 64] == 0xC1, name
with open(img, "r+b") as f:
    for k in range(data[fe + 1] + 1):
        f.seek(fe + 32 * k); f.write(bytes([data[fe + 32 * k] & 0x7F]))
EOF
rm -rf xt; mkdir -p xt/dir; cp tree/a.txt xt/; cp tree/dir/b.bin xt/dir/; cp gone1.bin gone2.bin xt/; head -c 9000 /dev/urandom > xt/keep.bin
"$FSIMG" mkfs -q -t exfat -s 8M -c 4K --from xt e.img || fail "exfat mkfs"
python3 unset.py e.img gone1.bin && python3 unset.py e.img keep.bin || fail "exfat: unset"  # gone2.bin lies between
case " $(fsck_codes e.img) " in *" exfat.bitmap.lost "*) pass ;; *) fail "exfat: before: $(fsck_codes e.img)" ;; esac
cp e.img eorig.img; sha_orig=$(sha256sum < e.img)
cp e.img eref.img; fsck.exfat -s -y eref.img > ref.out 2>&1; [ $? -le 1 ] || fail "exfat: fsck.exfat -s -y: $(cat ref.out)"
ex_sums() { local f; for f in $("$FSIMG" ls "$1" /LOST+FOUND 2>/dev/null); do "$FSIMG" cat "$1" "/LOST+FOUND/$f" | sha256sum; done | sort; }
ex_covered() {  # ex_covered REF IMG: each /LOST+FOUND file of REF is the start of one of IMG's
  local r c ok
  for r in $("$FSIMG" ls "$1" /LOST+FOUND); do
    "$FSIMG" cat "$1" "/LOST+FOUND/$r" > r.chk; ok=1
    for c in $("$FSIMG" ls "$2" /LOST+FOUND 2>/dev/null); do
      "$FSIMG" cat "$2" "/LOST+FOUND/$c" | cmp -s -n "$(stat -c %s r.chk)" r.chk - && { ok=0; break; }
    done
    [ $ok = 0 ] || return 1
  done
}
ref_sums=$(ex_sums eref.img)
[ "$(echo "$ref_sums" | grep -c .)" = 2 ] && pass || fail "exfat: fsck.exfat -s saved $(echo "$ref_sums" | grep -c .) runs"
FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" fsck -y --salvage e.img > /dev/null 2> count.err
total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
[ -n "$total" ] && [ "$total" -ge 3 ] && pass || fail "exfat: write count: $(cat count.err)"
for n in $(seq 1 $((${total:-1} - 1))); do
  cp eorig.img cut.img
  FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" fsck -y --salvage cut.img > /dev/null 2>&1; rc=$?
  [ $rc = 99 ] || fail "exfat: cut after write $n: exit $rc"
  "$FSIMG" cat cut.img /gone2.bin | cmp -s - xt/gone2.bin && "$FSIMG" cat cut.img /dir/b.bin | cmp -s - xt/dir/b.bin ||
    fail "exfat: files unreadable after cut $n"
  "$FSIMG" fsck -y --salvage cut.img > /dev/null 2>&1; rc=$?
  [ $rc = 1 ] && [ -z "$(fsck_codes cut.img)" ] && pass || fail "exfat: -y after cut $n: exit $rc, left $(fsck_codes cut.img)"
  # Every run saved: each file fsck.exfat -s made begins one of ours (a cut that left the new
  # directory's cluster lost next to a run saves it with that run).
  ex_covered eref.img cut.img && pass || fail "exfat: after cut $n a run was not saved"
done
cp eorig.img e.img
"$FSIMG" fsck -y --salvage --undo e.undo e.img > out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^repaired exfat.bitmap.lost: 2 runs of lost clusters (.*) saved as files /LOST+FOUND/FILE0000000.CHK .. /LOST+FOUND/FILE0000001.CHK" out &&
  pass || fail "exfat -y --salvage: exit $rc: $(cat out)"
[ -z "$(fsck_codes e.img)" ] && pass || fail "exfat: left $(fsck_codes e.img)"
fsck.exfat -n e.img > chk.out 2>&1 && pass || fail "exfat: fsck.exfat -n: $(cat chk.out)"
[ "$(ex_sums e.img)" = "$ref_sums" ] && pass || fail "exfat: the saved runs differ from fsck.exfat -s's"
sha_fixed=$(sha256sum < e.img)
"$FSIMG" fsck -y --salvage e.img > /dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ "$(sha256sum < e.img)" = "$sha_fixed" ] && pass || fail "exfat: second -y: exit $rc or changed"
check e.img -j 2
"$FSIMG" undo e.undo e.img > /dev/null 2> err && [ "$(sha256sum < e.img)" = "$sha_orig" ] && pass || fail "exfat: undo: $(cat err)"
# An existing /LOST+FOUND directory takes the next free names; a file of that name is refused (exit 8).
cp eorig.img e.img
"$FSIMG" mkdir -q e.img /LOST+FOUND && "$FSIMG" cp -q e.img gone2.bin /LOST+FOUND/FILE0000000.CHK || fail "exfat: LOST+FOUND setup"
"$FSIMG" fsck -y --salvage e.img > out 2>&1; rc=$?
[ $rc = 1 ] && grep -q "saved as files /LOST+FOUND/FILE0000001.CHK .. /LOST+FOUND/FILE0000002.CHK" out &&
  "$FSIMG" cat e.img /LOST+FOUND/FILE0000000.CHK | cmp -s - gone2.bin && pass || fail "exfat: existing LOST+FOUND: exit $rc: $(cat out)"
cp eorig.img e.img
"$FSIMG" cp -q e.img gone2.bin /LOST+FOUND || fail "exfat: LOST+FOUND file setup"
sha=$(sha256sum < e.img)
"$FSIMG" fsck -y --salvage e.img > out 2>&1; rc=$?
[ $rc = 8 ] && grep -q "/LOST+FOUND is a file, not a directory; nothing was written" out && [ "$(sha256sum < e.img)" = "$sha" ] &&
  pass || fail "exfat: LOST+FOUND a file: exit $rc: $(cat out)"

# NTFS: lost clusters are left by --salvage (exit 4).
"$FSIMG" mkfs -q -t ntfs -s 16M --from tree n.img || fail "ntfs mkfs"
python3 "$here/../tools/ntfs_damage.py" n.img bitmap-lost > /dev/null || fail "ntfs damage"
"$FSIMG" fsck -y --salvage n.img > out 2>&1; rc=$?
[ $((rc & 4)) = 4 ] && case " $(fsck_codes n.img) " in *" ntfs.bitmap.lost "*) true ;; *) false ;; esac && pass ||
  fail "ntfs --salvage: exit $rc, left $(fsck_codes n.img)"
finish
