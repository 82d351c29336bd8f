#!/usr/bin/env bash
# Changing NTFS without outside tools (the sanitizer build runs this too;
# tests/oracle/ntfs_edit.sh has the independent readers): mkdir -p, cp -r
# of a tree with empty, resident and non-resident files, cp -f in both
# directions (resident <-> clusters), mv (renames, moves, -f, refusals),
# rm of every file of a directory whose index is in INDX blocks; after
# each, fsimg fsck is clean and extract gives the bytes back. Every cut of
# a cp, a cp -f and an mv leaves the files that were there whole (the
# moved one where it was or where it went) and the new one absent or
# whole, and fsck -y leaves nothing. rm of one name of a hard link leaves
# the file under its others (every cut too); rm of a stored symbolic link
# takes its $R entry with it (every cut too). rm of a file whose $DATA lies
# in an extension record its $ATTRIBUTE_LIST names frees both records and
# every cluster: the image then counts what one made without the file does
# (every cut too).
# cost: 40
here=$(dirname "$0"); . "$here/../lib.sh"
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
# Cuts: every one in the shipped build; every fifth under the sanitizers (FSIMG_STATIC_RUNTIME=0),
# whose processes start slowly (91 s against 15 s for every cut), the first and last always.
step=1; [ "${FSIMG_STATIC_RUNTIME:-1}" = 0 ] && step=5
cuts() { { seq 1 "$step" "$1"; echo "$1"; } | sort -nu; }  # cuts LAST: the cuts to try, 1..LAST
mkdir -p base/many new/sub/deeper
for i in $(seq 1 80); do printf '%s\n' "$i" > "base/many/a file with a long name $i.txt"; done
echo kept > base/kept.txt
head -c 30000 /dev/urandom > base/big.dat
: > new/empty
echo small > new/small.txt
head -c 700 /dev/urandom > new/seven.bin
head -c 70000 /dev/urandom > new/sub/big.bin
head -c 1300000 /dev/urandom > new/sub/deeper/huge.bin
"$FSIMG" mkfs -q -t ntfs -s 16M --from base n.img || fail "mkfs"
cp n.img n0.img
clean() { "$FSIMG" fsck "$1" > fsck.out 2>&1 && pass || fail "$2: fsck: $(cat fsck.out)"; }
same() {  # same IMAGE DIR-IN-IMAGE HOST-DIR
  local got; got="x/$(basename "$2")"
  rm -rf x && "$FSIMG" extract -q "$1" "$2" -C x 2> err && diff -r "$got" "$3" > /dev/null && pass ||
    fail "$1 $2 differs from $3: $(cat err; diff -r "$got" "$3" | head -3)"
}
"$FSIMG" mkdir -p n.img /made/deeper '/many/a made directory' || fail "mkdir"
clean n.img mkdir
"$FSIMG" cp -r n.img new /many/ || fail "cp -r"
"$FSIMG" cp n.img new/small.txt /made/deeper/ || fail "cp"
clean n.img cp
same n.img /many/new new
same n.img /made/deeper/small.txt new/small.txt
"$FSIMG" ls n.img /many | grep -q -x 'a made directory/' && pass || fail "ls /many: $("$FSIMG" ls n.img /many | tail -3)"
# cp -f: clusters over resident data, resident data over clusters.
"$FSIMG" cp -f n.img new/sub/big.bin /kept.txt && "$FSIMG" cp -f n.img new/small.txt /many/new/sub/big.bin || fail "cp -f"
clean n.img "cp -f"
"$FSIMG" cat n.img /kept.txt | cmp -s - new/sub/big.bin && "$FSIMG" cat n.img /many/new/sub/big.bin | cmp -s - new/small.txt &&
  pass || fail "cp -f: the new bytes do not read back"
expect_fail 1 'exists' "$FSIMG" cp n.img new/small.txt /KEPT.TXT
expect_fail 1 'exists' "$FSIMG" mkdir n.img '/MANY/A MADE DIRECTORY'
# No space: refused, nothing written.
head -c 20000000 /dev/zero > toobig.bin
cp n.img before.img
"$FSIMG" cp n.img toobig.bin / > out 2> err; rc=$?
[ $rc = 1 ] && grep -q "no space" err && cmp -s n.img before.img && pass || fail "cp of 20 MB into 16 MiB: exit $rc $(cat err)"
# rm of every file of /many, the B+ tree's separators included.
for i in $(seq 1 80); do "$FSIMG" rm n.img "/many/a file with a long name $i.txt" || fail "rm $i"; done
clean n.img "rm of 80"
[ "$("$FSIMG" ls n.img /many | tr '\n' ' ')" = "a made directory/ new/ " ] && pass || fail "ls /many after rm: $("$FSIMG" ls n.img /many)"

# mv: a rename in place, a case-only rename, a file and a directory tree moved to another
# directory (one whose index is in INDX blocks), -f over a file; refusals write nothing.
"$FSIMG" mv n.img /kept.txt /kept-renamed.txt && "$FSIMG" mv n.img /kept-renamed.txt /KEPT-RENAMED.TXT &&
  "$FSIMG" mv n.img /KEPT-RENAMED.TXT /made/ && "$FSIMG" mv n.img /many/new /made/deeper/ || fail "mv"
clean n.img mv
same n.img /made/deeper/new/sub/deeper new/sub/deeper
"$FSIMG" cat n.img /made/deeper/new/sub/big.bin | cmp -s - new/small.txt && pass || fail "the moved tree's big.bin"
"$FSIMG" ls n.img /made | grep -q -x 'KEPT-RENAMED.TXT' && pass || fail "ls /made: $("$FSIMG" ls n.img /made)"
cp n.img before.img
expect_fail 1 'below itself' "$FSIMG" mv n.img /made /made/deeper/new
expect_fail 1 'exists (mv -f replaces it)' "$FSIMG" mv n.img /made/KEPT-RENAMED.TXT /made/deeper/small.txt
cmp -s n.img before.img && pass || fail "a refused mv wrote"
"$FSIMG" mv -f n.img /made/KEPT-RENAMED.TXT /made/deeper/small.txt || fail "mv -f"
clean n.img "mv -f"
"$FSIMG" cat n.img /made/deeper/small.txt | cmp -s - new/sub/big.bin && pass || fail "mv -f: not the moved file's bytes"

# $MFT grows: a fresh image has no free record; 300 files copied in grow it 16 records at a
# time (with its $BITMAP); every cut of the first growth leaves only clusters nothing owns.
"$FSIMG" mkfs -q -t ntfs -s 16M f.img || fail "mkfs f.img"
cp f.img f0.img
mkdir -p lots; for i in $(seq 1 300); do echo "$i" > "lots/file $i"; done
"$FSIMG" cp -r f.img lots / || fail "cp -r of 300 files into a fresh image"
clean f.img "300 files"
same f.img /lots lots
FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" cp f0.img new/small.txt / 2> count.err > /dev/null
total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
[ -n "$total" ] && [ "$total" -ge 20 ] && pass || fail "the first cp into a fresh image: $(cat count.err)"
bad=0
for n in $(cuts $((total - 1))); do
  cp f0.img cut.img
  FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" cp cut.img new/small.txt / > /dev/null 2>&1
  odd=$(fsck_codes cut.img | tr ' ' '\n' | grep -v -x -e '' -e ntfs.volume.dirty -e ntfs.bitmap.lost -e ntfs.mftmirr.differs \
    -e ntfs.tree.orphan -e ntfs.mft-bitmap.unmarked)
  [ -z "$odd" ] || { fail "growth: cut $n of $total: $odd"; bad=1; }
  "$FSIMG" fsck -y cut.img > /dev/null 2>&1
  [ -z "$(fsck_codes cut.img)" ] || { fail "growth: cut $n: fsck -y left $(fsck_codes cut.img)"; bad=1; }
done
[ $bad = 0 ] && pass
echo "growth: $total writes, cuts checked: $(cuts $((total - 1)) | wc -l)"

# Every cut of a cp (new clusters), of a cp -f (resident data over clusters, freed after) and of an mv.
cut_sweep() {  # cut_sweep NAME COMMAND ARGS...
  local name=$1 cmd=$2; shift 2
  cp n0.img full.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" "$cmd" full.img "$@" 2> count.err > /dev/null || { fail "$name: $(cat count.err)"; return; }
  local total; total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$total" ] && [ "$total" -ge 4 ] || { fail "$name: write count: $(cat count.err)"; return; }
  local n bad=0
  for n in $(cuts $((total - 1))); do
    cp n0.img cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" "$cmd" cut.img "$@" > /dev/null 2>&1
    [ $? = 99 ] || { fail "$name: cut $n: not cut"; bad=1; continue; }
    odd=$(fsck_codes cut.img | tr ' ' '\n' | grep -v -x -e '' -e ntfs.volume.dirty -e ntfs.tree.orphan -e ntfs.bitmap.lost \
      -e ntfs.mft-bitmap.unmarked -e ntfs.index.missing-entry -e ntfs.index.sizes -e ntfs.mftmirr.differs \
      -e ntfs.index.extra-entry -e ntfs.index.entry-mismatch)
    [ -z "$odd" ] || { fail "$name: cut $n of $total: $odd"; bad=1; }
    rm -rf x && "$FSIMG" extract -q cut.img /many -C x 2> /dev/null
    if [ -e x/many/big.bin ]; then  # the new file: whole, or absent
      cmp -s x/many/big.bin new/sub/big.bin || { fail "$name: cut $n: the new file is there, not whole"; bad=1; }
      rm x/many/big.bin
    fi
    "$FSIMG" cat cut.img /many/kept.txt > got 2> /dev/null || "$FSIMG" cat cut.img /kept.txt > got 2> /dev/null
    cmp -s got base/kept.txt || { fail "$name: cut $n: kept.txt reads neither where it was nor where it went"; bad=1; }
    rm -f x/many/kept.txt
    diff -r x/many base/many > /dev/null || { fail "$name: cut $n: /many does not read as before"; bad=1; }
    # The replaced file reads as before or as the new one.
    "$FSIMG" cat cut.img /big.dat > got 2> /dev/null
    cmp -s got base/big.dat || cmp -s got new/small.txt || { fail "$name: cut $n: /big.dat is neither old nor new"; bad=1; }
    "$FSIMG" fsck -y cut.img > /dev/null 2>&1
    [ -z "$(fsck_codes cut.img)" ] || { fail "$name: cut $n: fsck -y left $(fsck_codes cut.img)"; bad=1; }
  done
  [ $bad = 0 ] && pass
  echo "$name: $total writes, cuts checked: $(cuts $((total - 1)) | wc -l)"
}
cut_sweep cp-new cp new/sub/big.bin /many/
cut_sweep cp-replace cp -f new/small.txt /big.dat
cut_sweep mv mv /kept.txt /many/
# rm of one name of a hard-linked file (mkfs --from stores hard links as links): the others stay,
# the data with them; the last name frees the clusters. Every cut leaves the file readable under
# every other name, and the removed name there or gone; fsck -y leaves nothing.
mkdir -p hl/sub
head -c 70000 /dev/urandom > hl/a.bin && ln hl/a.bin hl/c.bin && ln hl/a.bin hl/sub/b.bin
"$FSIMG" mkfs -q -t ntfs -s 16M --from hl h0.img || fail "mkfs with hard links"
cp h0.img h.img
"$FSIMG" rm h.img /a.bin || fail "rm of one name"
clean h.img "rm of one name"
[ "$("$FSIMG" ls h.img / | tr '\n' ' ')" = "c.bin sub/ " ] && pass || fail "ls / after rm: $("$FSIMG" ls h.img /)"
"$FSIMG" cat h.img /sub/b.bin | cmp -s - hl/a.bin && "$FSIMG" cat h.img /c.bin | cmp -s - hl/a.bin && pass ||
  fail "the other names do not read the data"
"$FSIMG" rm h.img /c.bin /sub/b.bin || fail "rm of the last names"
clean h.img "rm of the last name"
[ "$("$FSIMG" ls -R h.img / | tr '\n' ' ')" = "/sub/ " ] && pass || fail "ls -R after: $("$FSIMG" ls -R h.img /)"
cp h0.img hc.img
total=$(FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" rm hc.img /a.bin 2>&1 >/dev/null | sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p')
[ -n "$total" ] && [ "$total" -ge 3 ] && pass || fail "rm of a name: write count '$total'"
bad=0
for n in $(cuts $((total - 1))); do
  cp h0.img cut.img
  FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" rm cut.img /a.bin > /dev/null 2>&1
  [ $? = 99 ] || { fail "rm-link: cut $n: not cut"; bad=1; continue; }
  odd=$(fsck_codes cut.img | tr ' ' '\n' | grep -v -x -e '' -e ntfs.volume.dirty -e ntfs.index.missing-entry \
    -e ntfs.mftmirr.differs)
  [ -z "$odd" ] || { fail "rm-link: cut $n of $total: $odd"; bad=1; }
  for p in /c.bin /sub/b.bin; do
    "$FSIMG" cat cut.img $p | cmp -s - hl/a.bin || { fail "rm-link: cut $n: $p does not read the data"; bad=1; }
  done
  "$FSIMG" fsck -y cut.img > /dev/null 2>&1
  [ -z "$(fsck_codes cut.img)" ] || { fail "rm-link: cut $n: fsck -y left $(fsck_codes cut.img)"; bad=1; }
done
[ $bad = 0 ] && pass
echo "rm-link: $total writes, cuts checked: $(cuts $((total - 1)) | wc -l)"
# rm_cut_sweep NAME ORIG PATH MIN KEPT CODE...: rm of PATH on a copy of ORIG cut after every write
# (at least MIN writes): fsck finds nothing but the dirty flag, the mirror and CODE..., the function
# KEPT prints nothing (what must stay is there), and fsck -y then leaves nothing.
rm_cut_sweep() {
  local name=$1 orig=$2 path=$3 min=$4 kept=$5 total n odd why bad=0; shift 5
  local allowed=(-e '' -e ntfs.volume.dirty -e ntfs.mftmirr.differs); for c in "$@"; do allowed+=(-e "$c"); done
  cp "$orig" sweep.img
  total=$(FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" rm sweep.img "$path" 2>&1 >/dev/null | sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p')
  [ -n "$total" ] && [ "$total" -ge "$min" ] && pass || { fail "$name: write count '$total'"; return; }
  for n in $(cuts $((total - 1))); do
    cp "$orig" cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" rm cut.img "$path" > /dev/null 2>&1
    [ $? = 99 ] || { fail "$name: cut $n: not cut"; bad=1; continue; }
    odd=$(fsck_codes cut.img | tr ' ' '\n' | grep -v -x "${allowed[@]}")
    [ -z "$odd" ] || { fail "$name: cut $n of $total: $odd"; bad=1; }
    why=$($kept); [ -z "$why" ] || { fail "$name: cut $n: $why"; bad=1; }
    "$FSIMG" fsck -y cut.img > /dev/null 2>&1
    [ -z "$(fsck_codes cut.img)" ] || { fail "$name: cut $n: fsck -y left $(fsck_codes cut.img)"; bad=1; }
  done
  [ $bad = 0 ] && pass
  echo "$name: $total writes, cuts checked: $(cuts $((total - 1)) | wc -l)"
}
# rm of a stored symbolic link (a reparse point): its directory entry, its entry in
# $Extend/$Reparse:$R, the record, the bits. Every cut leaves the other links and the target
# whole, and fsck -y leaves nothing (an orphan goes back into its directory, $R is rebuilt).
mkdir -p sl
echo target > sl/T.TXT
for i in 1 2 3; do ln -s T.TXT "sl/L$i"; done
"$FSIMG" mkfs -q -t ntfs -s 16M --symlinks store --from sl s0.img || fail "mkfs --symlinks store"
cp s0.img s.img
"$FSIMG" rm s.img /L2 || fail "rm of a stored link"
clean s.img "rm of a stored link"
[ "$("$FSIMG" ls s.img / | tr '\n' ' ')" = "L1 L3 T.TXT " ] && pass || fail "ls after rm of a link: $("$FSIMG" ls s.img /)"
symlink_kept() {  # after a cut: the target and the other links
  [ "$("$FSIMG" cat cut.img /T.TXT)" = target ] || { echo "T.TXT"; return; }
  "$FSIMG" ls cut.img / | grep -q -x L1 && "$FSIMG" ls cut.img / | grep -q -x L3 || echo "L1 or L3 gone"
}
rm_cut_sweep rm-symlink s0.img /L2 4 symlink_kept ntfs.tree.orphan ntfs.reparse.missing-entry ntfs.reparse.stale-entry \
  ntfs.mft-bitmap.marked-free ntfs.bitmap.lost
# rm of a file with an $ATTRIBUTE_LIST (tests/tools/ntfs_damage.py attrlist-build moves /A.TXT's
# $DATA to an extension record and lists it): the base, the extension record and the clusters go.
mkdir -p al bonly
head -c 20000 /dev/urandom > al/A.TXT; echo b > al/B.TXT; cp al/B.TXT bonly/
"$FSIMG" mkfs -q -t ntfs -s 16M --from al a0.img && "$FSIMG" mkfs -q -t ntfs -s 16M --from bonly b.img ||
  fail "mkfs for rm of a listed file"
python3 "$here/../tools/ntfs_damage.py" a0.img attrlist-build > /dev/null || fail "attrlist-build"
[ -z "$(fsck_codes a0.img)" ] && pass || fail "attrlist-build: fsck finds $(fsck_codes a0.img)"
cp a0.img a.img
"$FSIMG" rm a.img /A.TXT && pass || fail "rm of a file with an \$ATTRIBUTE_LIST"
clean a.img "rm of a file with an \$ATTRIBUTE_LIST"
summary() { "$FSIMG" fsck "$1" | grep -o '[0-9,]* files.*'; }
[ "$(summary a.img)" = "$(summary b.img)" ] && pass || fail "rm of a listed file: $(summary a.img), without it: $(summary b.img)"
[ "$("$FSIMG" ls a.img / | tr '\n' ' ')" = "B.TXT " ] && pass || fail "ls after rm of a listed file: $("$FSIMG" ls a.img /)"
listed_kept() { [ "$("$FSIMG" cat cut.img /B.TXT)" = b ] || echo "B.TXT"; }
rm_cut_sweep rm-listed a0.img /A.TXT 5 listed_kept ntfs.tree.orphan ntfs.record.base ntfs.mft-bitmap.marked-free \
  ntfs.bitmap.lost
finish
