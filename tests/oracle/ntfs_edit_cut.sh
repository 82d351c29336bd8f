#!/usr/bin/env bash
# Interrupted at any write, nothing that was there is lost (NTFS; the
# changes of tests/oracle/ntfs_edit.sh): each label, serial, attrib, rm,
# mkdir, cp and mv change on the mkntfs + ntfs-3g image is cut after its Nth write for every
# N (FSIMG_TEST_CUT_AFTER_WRITES=N). After each cut (for the sweeps after
# rm -r, every other cut and the first, last and middle) sleuthkit (and ntfs-3g
# at the middle cut, where the mirror agrees) read every file that was there
# byte-exact (the removed one ignored: absent or whole), our fsck finds
# nothing but the dirty flag and a mirror behind (rm: orphan records and
# bits nothing owns, too), and at the middle cut, once fsimg fsck -y (which
# then leaves nothing) or ntfsfix -d has cleared the flag, every checker
# passes.
# cost: 119
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
. "$here/../tools/ntfs_edit_base.sh"
# ---- cut at every write
ALLOW=; IGNORE=()
sweep() {  # sweep NAME CMD...: every cut of fsimg CMD (image after the command word) on a copy of base
  local name=$1; shift
  local cmd=$1; shift
  cp "$base" full.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" "$cmd" full.img "$@" 2> count.err >/dev/null || { fail "$name: $(cat count.err)"; return; }
  local total; total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$total" ] && [ "$total" -ge 3 ] && pass || { fail "$name: write count: $(cat count.err)"; return; }
  "$FSIMG" fsck full.img >/dev/null && pass || fail "$name: not clean when complete"
  local n rc bad=0 odd out mirror_cuts=0
  for n in $(seq 1 $((total - 1))); do
    cp "$base" cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" "$cmd" cut.img "$@" >/dev/null 2>&1; rc=$?
    if [ $rc != 99 ]; then fail "$name: cut after write $n of $total: exit $rc"; bad=1; continue; fi
    "$FSIMG" fsck cut.img > fsck.out 2>&1
    odd=$(grep -E '^(fatal|error|warning|info) ' fsck.out |
      grep -v -E "^[a-z]+ (ntfs\\.volume\\.dirty|ntfs\\.mftmirr\\.differs|ntfs\\.boot\\.backup-differs${ALLOW:+|$ALLOW}):")
    [ -z "$odd" ] || { fail "$name: cut after write $n of $total: fsimg fsck: $odd"; bad=1; }
    # ntfs-3g mounts nothing whose $MFTMirr differs from $MFT in records 0..3
    # (a cut between the two copies of record 3, as for ntfs-3g's own writes).
    # sleuthkit at every cut, ntfs-3g (a mount: 0.6 s) at the middle one.
    local readers=read-sleuthkit
    [ "$n" = $((total / 2)) ] && readers=read-sleuthkit,read-ntfs-3g
    # STRIDE=2: sleuthkit at every other cut (and the first, last and middle), fsimg's own fsck
    # and fsck -y above and below at every one.
    if [ "${STRIDE:-1}" -gt 1 ] && [ $((n % STRIDE)) != 0 ] && [ "$n" != 1 ] && [ "$n" != $((total - 1)) ] &&
       [ "$n" != $((total / 2)) ]; then
      readers=
    fi
    grep -q '^error ntfs.mftmirr.differs' fsck.out && { readers=read-sleuthkit; mirror_cuts=$((mirror_cuts + 1)); }
    if [ -n "$readers" ] && ! out=$("$SHARED/oracles/check-image" --only "$readers" --manifest pre.manifest "${IGNORE[@]}" cut.img 2>&1); then
      fail "$name: cut after write $n of $total: readers:"; echo "$out" | grep -v PASS | head -8; bad=1
    fi
    # fsimg fsck -y leaves nothing at any cut (the readers at the middle one, below).
    cp cut.img y.img
    "$FSIMG" fsck -y y.img > /dev/null 2>&1
    [ -z "$(fsck_codes y.img)" ] || { fail "$name: cut $n: fsimg fsck -y left $(fsck_codes y.img)"; bad=1; }
    # What a checker does with it: ntfsfix clears the flag (and copies the
    # mirror); then every checker passes (at the middle cut: 2 s each).
    [ "$n" = $((total / 2)) ] || continue
    cp cut.img cut-ours.img
    "$FSIMG" fsck -y cut-ours.img > fsck.out 2>&1
    # Nothing is left after -y: an orphan record goes back into the directory its name
    # gives and stale entries inside an orphaned tree go (the indexes rebuilt from the
    # records' names, as chkdsk does), bits nothing owns are cleared.
    left=$(fsck_codes cut-ours.img)
    [ -z "$left" ] || { fail "$name: cut $n: fsimg fsck -y left $left: $(cat fsck.out)"; bad=1; }
    # With orphans left the volume stays dirty: ntfs-3g's tools refuse it, 7-Zip lists the orphans.
    local skip=(); [ -n "$(fsck_codes cut-ours.img)" ] && skip=(--skip ntfsinfo,ntfsls,ntfsresize,read-7zz,readers-agree)
    if ! out=$("$SHARED/oracles/check-image" -j 2 "${skip[@]}" --manifest pre.manifest "${IGNORE[@]}" cut-ours.img 2>&1); then
      fail "$name: cut after write $n of $total, after fsimg fsck -y:"; echo "$out" | grep -v PASS | head -8; bad=1
    fi
    ntfsfix -d cut.img >/dev/null 2>&1 || { fail "$name: cut $n: ntfsfix -d"; bad=1; }
    # ntfsfix settles the flag and the mirror, not bits nothing owns nor orphans (rm): ntfsresize
    # counts the one, 7-Zip lists the other.
    skip=(); [ -n "$ALLOW" ] && skip=(--skip ntfsresize,read-7zz,readers-agree)
    if ! out=$("$SHARED/oracles/check-image" -j 2 "${skip[@]}" --manifest pre.manifest "${IGNORE[@]}" cut.img 2>&1); then
      fail "$name: cut after write $n of $total, after ntfsfix -d:"; echo "$out" | grep -v PASS | head -8; bad=1
    fi
  done
  [ $bad = 0 ] && pass
  echo "$name: $total writes, every cut checked ($mirror_cuts left \$MFTMirr behind)"
}
sweep label label 'New Label'
sweep serial label --volume-id 1122334455667788
sweep attrib-indx attrib +h '/dir/inner file number 37.txt'
sweep attrib-root attrib +r /a.txt
# rm: the entries go first, then the records, then the bitmaps: a cut leaves orphans and lost
# bits (what chkdsk and fsck -y clean), never a file that was there damaged.
ALLOW='ntfs\.tree\.orphan|ntfs\.mft-bitmap\.marked-free|ntfs\.bitmap\.lost|ntfs\.index\.missing-entry'
IGNORE=(--ignore dir/big.bin); sweep rm-big rm /dir/big.bin
# rm of one name of a hard link (the base has one where ntfs-3g runs): the entry goes first,
# then the record's $FILE_NAME and link count: a cut between leaves a name no index lists, which
# fsck -y puts back (the rm undone); the file reads the same under its other name at every cut.
if [ $fuse = yes ]; then
  rm_allow=$ALLOW; ALLOW='ntfs\.index\.missing-entry'
  IGNORE=(--ignore dir/linked.txt); sweep rm-link rm /dir/linked.txt
  ALLOW=$rm_allow
fi
# rm -r: the tree is unreachable once its entry is gone; its records are freed those below a
# directory first, so a cut leaves orphans whose index may name records already free (stale
# entries inside the orphaned tree), which fsck -y's index rebuild settles as chkdsk does.
ALLOW="$ALLOW|ntfs\\.index\\.stale-entry"
IGNORE=(--ignore gone --ignore 'gone/*'); sweep rm-r rm -r /gone
# The sweeps below: sleuthkit at every other cut (STRIDE=2), fsimg's fsck and fsck -y at every one.
STRIDE=2
# rm of a separator of /dir's B+ tree: the index is rewritten copy on write (the new INDX
# blocks, their $Bitmap bits, the directory's record, the old blocks' bits), so a cut leaves
# the old index or the new one whole, and clusters nothing owns.
sep=$("$FSIMG" dump --json --what index /dir "$base" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(next(e["name"] for n in [j["index_root"]] + j.get("blocks", []) for e in n["entries"]
           if e["flags"] & 1 and e.get("name", "").startswith("inner")))')
IGNORE=(--ignore "dir/$sep"); sweep rm-separator rm "/dir/$sep"
# mkdir in /dir (an index in INDX blocks): the record, its $MFT bit, the index rewritten, the
# directory's times: a cut leaves at most a record no index names (which fsck -y puts back
# into /dir) and bits nothing owns.
ALLOW='ntfs\.tree\.orphan|ntfs\.mft-bitmap\.unmarked|ntfs\.bitmap\.lost|ntfs\.index\.missing-entry'
IGNORE=(--ignore 'dir/new directory'); sweep mkdir mkdir '/dir/new directory'
# cp of a file with clusters into /dir: its data, their bits, the record, its $MFT bit, the index
# rewritten, the times; cp -f of resident data over /dir/big.bin: the record, the index entries'
# sizes, then the old clusters' bits (a cut between: sizes fsck -p corrects, bits nothing owns).
head -c 50000 /dev/urandom > new.bin
ALLOW="$ALLOW|ntfs\.index\.sizes"
IGNORE=(--ignore 'dir/new.bin'); sweep cp cp new.bin /dir/
IGNORE=(--ignore 'dir/big.bin'); sweep cp-replace cp -f pre/a.txt /dir/big.bin
# mv of a directory tree into /dir: /dir's index with the new name, the record's names, the root's
# index without the old one, the times: a cut leaves it under either name or both.
ALLOW="$ALLOW|ntfs\.index\.extra-entry|ntfs\.index\.entry-mismatch"
IGNORE=(--ignore gone --ignore 'gone/*' --ignore dir/gone --ignore 'dir/gone/*'); sweep mv mv /gone /dir/
ALLOW=; IGNORE=()

finish
