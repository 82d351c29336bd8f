#!/usr/bin/env bash
# fsck -y frees lost clusters and makes the FAT copies equal to FAT 1 (issue
# 23), on FAT12, FAT16 and FAT32 images made by mkfs.fat + mcopy: lost
# chains (odd and even cluster numbers, for FAT12's packed entries) and a
# stale allocation in FAT 2 only. After -y: exit 1, our fsck and fsck.fat -n
# clean, the free count back to what it was before the damage, every file
# byte-exact through mtools, a second -y changes nothing, undo restores the
# sha256. -p leaves both (exit 4: they are not preen repairs). Cut after every
# write of the repair (FAT16), the files still read and another -y finishes it. When
# a cross-link leaves ownership in doubt, the lost clusters are left (exit 4)
# in that pass; the cross-link is cut (the second owner ends before the
# shared clusters) and the next pass frees them.
# Files whose chain is longer or shorter than their size (and an empty file
# with a chain), chains that break (a link to a free cluster or to no
# cluster, a loop, a start that is free or outside the volume): -y leaves
# what fsck.fat -a leaves (the same bytes, the same free count), fsck.fat -n
# clean, cut at every write (FAT32) -y again finishes it. A bad cluster inside a
# chain (fsck.fat 4.2 stops with an internal error): the file keeps the
# clusters before it. exFAT: an owned cluster clear in the allocation bitmap
# is marked by -p (byte for byte what fsck.exfat -y writes), a lost cluster
# marked in use is cleared by -y; check-image passes after. Entry sets: a wrong NameHash (-p, as
# fsck.exfat -y) and a wrong SetChecksum (-y; kept, where fsck.exfat deletes the file) recomputed.
# Invalid short names (-y): FSCKnnnn.nnn as fsck.fat, or an alias made from the long name.
# exFAT chains that break or do not fit DataLength (-y): ended, or DataLength cut. exFAT names
# that are invalid or repeat another: renamed (-y). exFAT entry sets no reader takes: the
# SecondaryCount their checksum was made with, the NameLength their name has, unknown critical
# secondaries left out, else the entries marked not in use; FirstCluster without data cleared (-y).
# cost: 67
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
cd "$WORK"
mkdir -p tree/dir
printf 'hello\n' > tree/a.txt
head -c 50000 /dev/urandom > tree/dir/b.bin
head -c 5000 /dev/urandom > A.TXT; head -c 3000 /dev/urandom > B.TXT  # what fat_damage.py expects
files_ok() {  # files_ok IMG [ours]: mtools, or fsimg (mtools refuses a FAT16 whose FAT[1] says dirty)
  if [ "${2:-}" = ours ]; then
    "$FSIMG" cat "$1" /a.txt | cmp -s - tree/a.txt && "$FSIMG" cat "$1" /dir/b.bin | cmp -s - tree/dir/b.bin
  else
    mtype -i "$1" ::a.txt | cmp -s - tree/a.txt && mtype -i "$1" ::dir/b.bin | cmp -s - tree/dir/b.bin
  fi
}
free_of() { "$FSIMG" fsck --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["free_clusters"])'; }
# fatset IMG COPY N VALUE...: FAT entries N, N+1, ... set (COPY 1, 2 or "all"), FAT12/16/32 alike.
fatset() { python3 "$here/../tools/fat_entries.py" "$1" set "${@:2}"; }
for spec in "12 8M 0xFFF" "16 32M 0xFFFF" "32 64M 0x0FFFFFFF"; do
  set -- $spec; bits=$1 size=$2 eoc=$3
  img=f$bits.img
  truncate -s $size $img && mkfs.fat -F $bits -i 12345678 $img > /dev/null && mcopy -s -i $img tree/a.txt tree/dir :: ||
    { fail "FAT$bits: mkfs.fat + mcopy"; continue; }
  free0=$(free_of $img)
  fatset $img all 1001 1002 1003 $eoc   # a lost chain of three, from an odd cluster
  fatset $img all 1200 $eoc             # a lost cluster, even
  fatset $img 2 1500 $eoc               # FAT 2 only: a stale allocation
  codes=$(fsck_codes $img)
  case " $codes " in *" fat.chain.lost "*) pass ;; *) fail "FAT$bits: before: $codes" ;; esac
  case " $codes " in *" fat.fat.copies-differ "*) pass ;; *) fail "FAT$bits: before: $codes" ;; esac
  cp $img orig.img
  sha_orig=$(sha256sum < $img)
  "$FSIMG" fsck -p $img > out 2>&1; rc=$?
  [ $((rc & 4)) = 4 ] && case " $(fsck_codes $img) " in *" fat.chain.lost "*) true ;; *) false ;; esac && pass ||
    fail "FAT$bits: -p: exit $rc, left $(fsck_codes $img)"
  cp orig.img $img
  # Every cut of -y leaves the files readable, and -y again finishes it (FAT16: the write order is
  # the same for every FAT type).
  [ $bits = 16 ] && repair_cuts orig.img "FAT$bits" /a.txt:tree/a.txt /dir/b.bin:tree/dir/b.bin
  "$FSIMG" fsck -y --undo $img.undo $img > out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired fat.chain.lost: 4 lost clusters freed in 2 runs" out &&
    grep -q "^repaired fat.fat.copies-differ: the other FAT copy rewritten from FAT 1" out && pass ||
    fail "FAT$bits: -y: exit $rc: $(cat out)"
  [ -z "$(fsck_codes $img)" ] && pass || fail "FAT$bits: left $(fsck_codes $img)"
  fsck.fat -n $img > ref.out 2>&1 && pass || fail "FAT$bits: fsck.fat -n: $(cat ref.out)"
  [ "$(free_of $img)" = "$free0" ] && pass || fail "FAT$bits: $(free_of $img) free, $free0 before the damage"
  files_ok $img && pass || fail "FAT$bits: files differ"
  sha_fixed=$(sha256sum < $img)
  "$FSIMG" fsck -y $img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < $img)" = "$sha_fixed" ] && pass || fail "FAT$bits: second -y: exit $rc or changed"
  "$FSIMG" undo $img.undo $img > /dev/null 2> err && [ "$(sha256sum < $img)" = "$sha_orig" ] && pass ||
    fail "FAT$bits: undo: $(cat err)"
done

# Chains longer or shorter than their files' sizes (fat_damage.py: A.TXT's size set to 1, or 3
# clusters more than its chain; an empty file keeping its chain): -y does what fsck.fat -a does (the
# same bytes read back, the same free count), cut at every write -y again finishes it.
for bits in 12 32; do  # FAT16 entries: the lost-cluster cases above
  for kind in chain-too-long chain-too-short empty-with-chain chain-free-link chain-out-of-range chain-loop \
    chain-bad-cluster file-start-free file-start-out-of-range chain-cross-link; do
    rm -f k.img; truncate -s $([ $bits = 12 ] && echo 4M || echo 64M) k.img
    mkfs.fat -F $bits -i 12345678 k.img > /dev/null || fail "mkfs.fat -F $bits"
    mcopy -i k.img A.TXT B.TXT :: || fail "mcopy"
    if [ $kind = empty-with-chain ]; then
      python3 - k.img <<'PY' || fail "empty-with-chain"
import struct, sys
f = open(sys.argv[1], "r+b"); b = f.read(1 << 16)
bps, spc, res, nf = struct.unpack_from("<H", b, 11)[0], b[13], struct.unpack_from("<H", b, 14)[0], b[16]
fsz = struct.unpack_from("<H", b, 22)[0] or struct.unpack_from("<I", b, 36)[0]
if struct.unpack_from("<H", b, 22)[0] == 0:
    root = struct.unpack_from("<I", b, 44)[0]; d = (res + nf * fsz + (root - 2) * spc) * bps
else:
    d = (res + nf * fsz) * bps
f.seek(d); data = f.read(4096)
for i in range(0, 4096, 32):
    if data[i:i + 11] == b"A       TXT":
        f.seek(d + i + 28); f.write(struct.pack("<I", 0)); break
PY
    else
      python3 "$here/../tools/fat_damage.py" k.img $kind > /dev/null || fail "FAT$bits $kind: damage"
    fi
    codes=$(fsck_codes k.img)
    case " $codes " in *" fat.chain."* | *" fat.file.start-"*) pass ;; *) fail "FAT$bits $kind: before: $codes" ;; esac
    cp k.img peer.img
    fsck.fat -a peer.img > /dev/null 2>&1
    cp k.img orig.img
    [ $bits = 32 ] && repair_cuts orig.img "FAT$bits $kind" /B.TXT:B.TXT  # once per kind
    cp orig.img k.img
    "$FSIMG" fsck -y k.img > out 2>&1; rc=$?
    [ $rc = 1 ] && grep -q "^repaired fat\.\(chain\|file\)\." out && [ -z "$(fsck_codes k.img)" ] && pass ||
      fail "FAT$bits $kind: exit $rc: $(cat out)"
    fsck.fat -n k.img > ref.out 2>&1 && pass || fail "FAT$bits $kind: fsck.fat -n: $(cat ref.out)"
    if [ $kind = chain-bad-cluster ]; then
      # fsck.fat 4.2 stops here ("Internal error: next_cluster on bad cluster"): A.TXT keeps the
      # clusters before the bad one, which stays marked bad; B.TXT is untouched.
      n=$(mtype -i k.img ::A.TXT | wc -c)
      [ "$n" -gt 0 ] && [ "$n" -lt 5000 ] && cmp -s <(mtype -i k.img ::A.TXT) <(head -c "$n" A.TXT) &&
        cmp -s <(mtype -i k.img ::B.TXT) B.TXT && pass || fail "FAT$bits $kind: A.TXT is $n bytes or differs"
      continue
    fi
    if [ $kind = chain-cross-link ]; then
      # B.TXT's last cluster links into A.TXT: B's chain ends before A's clusters and both read
      # back whole (fsck.fat -a truncates B too, but leaves A.TXT unreadable here).
      cmp -s <(mtype -i k.img ::A.TXT) A.TXT && cmp -s <(mtype -i k.img ::B.TXT) B.TXT && pass ||
        fail "FAT$bits $kind: a file differs"
      continue
    fi
    for f in A.TXT B.TXT; do
      cmp -s <(mtype -i k.img ::$f) <(mtype -i peer.img ::$f) && pass || fail "FAT$bits $kind: $f differs from fsck.fat -a's"
    done
    [ "$(free_of k.img)" = "$(free_of peer.img)" ] && pass || fail "FAT$bits $kind: $(free_of k.img) free, fsck.fat -a: $(free_of peer.img)"
  done
done

# exFAT: a cluster owned by a file but clear in the allocation bitmap is marked (-p: nothing is
# given up; the bytes fsck.exfat -y writes), a lost cluster marked in use is cleared (-y only;
# fsck.exfat 1.2.0 does not see it). Cut at every write, the files still read and -y finishes.
mkdir -p exsrc/DIR/SUB
cp A.TXT B.TXT exsrc/; : > exsrc/E.TXT; head -c 100 /dev/urandom > exsrc/DIR/C.TXT
for sz in "-s 8M -c 4K" "-s 4M -c 512"; do
  for kind in bitmap-free-in-use bitmap-lost; do
    rm -f e.img
    "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD $sz --from exsrc e.img || fail "mkfs exfat $sz"
    python3 "$here/../tools/exfat_damage.py" e.img $kind > /dev/null || fail "exfat $kind: damage"
    cp e.img orig.img
    cp e.img peer.img; fsck.exfat -y peer.img > /dev/null 2>&1
    repair_cuts orig.img "exfat $kind" /A.TXT:A.TXT
    cp orig.img e.img
    if [ $kind = bitmap-free-in-use ]; then
      "$FSIMG" fsck -p e.img > out 2>&1; rc=$?
      [ $rc = 1 ] && grep -q "^repaired exfat.bitmap.free-in-use: 1 cluster owned" out && pass || fail "exfat $kind: -p: exit $rc: $(cat out)"
      cmp -s e.img peer.img && pass || fail "exfat $kind: the image differs from fsck.exfat -y's"
    else
      "$FSIMG" fsck -p e.img > out 2>&1; rc=$?
      [ $((rc & 4)) = 4 ] && pass || fail "exfat $kind: -p: exit $rc (a lost cluster is not preen's)"
      cp orig.img e.img
      rm -f e.undo; "$FSIMG" fsck -y --undo e.undo e.img > out 2>&1; rc=$?
      [ $rc = 1 ] && grep -q "^repaired exfat.bitmap.lost: 1 lost cluster marked free" out && pass || fail "exfat $kind: -y: exit $rc: $(cat out)"
      sha=$(sha256sum < e.img)
      "$FSIMG" undo e.undo e.img > /dev/null && cmp -s e.img orig.img && pass || fail "exfat $kind: undo"
      "$FSIMG" fsck -y e.img > /dev/null 2>&1
      [ "$(sha256sum < e.img)" = "$sha" ] && pass || fail "exfat $kind: -y after undo wrote other bytes"
    fi
    [ -z "$(fsck_codes e.img)" ] && pass || fail "exfat $kind: left $(fsck_codes e.img)"
    fsck.exfat -n e.img > ref.out 2>&1 && pass || fail "exfat $kind: fsck.exfat -n: $(cat ref.out)"
    sha=$(sha256sum < e.img); "$FSIMG" fsck -y e.img > /dev/null 2>&1; rc=$?
    [ $rc = 0 ] && [ "$(sha256sum < e.img)" = "$sha" ] && pass || fail "exfat $kind: second -y: exit $rc or changed"
    [ $kind = bitmap-lost ] && [ "$sz" = "-s 4M -c 512" ] && check e.img -j 2  # once: 1.7 s each
  done
done

# exFAT entry sets: a NameHash wrong under a right SetChecksum is set with the checksum recomputed
# (-p too; byte for byte what fsck.exfat -y writes); a wrong SetChecksum is recomputed by -y only
# (fsck.exfat 1.2.0 -y deletes the set and the file with it: A.TXT is kept here), also when the
# bitmap calls the first of its two clusters free (a bit damaged amid marked ones: the set is
# taken as it is, the bit set in the next pass). A set whose extent the bitmap marks not at all
# is left, and so are those bits (exit 4).
for kind in set-name-hash set-checksum set-checksum+bitmap-free-in-use set-checksum+bitmap-free-all; do
  rm -f e.img
  "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD -s 8M -c 4K --from exsrc e.img || fail "mkfs exfat"
  for k in ${kind//+/ }; do python3 "$here/../tools/exfat_damage.py" e.img $k > /dev/null || fail "exfat $k: damage"; done
  cp e.img orig.img
  "$FSIMG" fsck -p e.img > out 2>&1; rc=$?
  if [ $kind = set-name-hash ]; then
    [ $rc = 1 ] && grep -q "^repaired exfat.set.name-hash: /A.TXT: NameHash set to" out && pass || fail "$kind: -p: exit $rc: $(cat out)"
    cp orig.img peer.img; fsck.exfat -y peer.img > /dev/null 2>&1
    cmp -s e.img peer.img && pass || fail "$kind: the image differs from fsck.exfat -y's"
  else
    [ $rc = 4 ] && cmp -s e.img orig.img && pass || fail "$kind: -p: exit $rc or the image changed (not preen's)"
  fi
  cp orig.img e.img; rm -f e.undo
  "$FSIMG" fsck -y --undo e.undo e.img > out 2>&1; rc=$?
  if [ $kind = set-checksum+bitmap-free-all ]; then
    [ $rc = 4 ] && cmp -s e.img orig.img && pass || fail "$kind: -y: exit $rc or the image changed: $(cat out)"
    continue
  fi
  [ $rc = 1 ] && pass || fail "$kind: -y: exit $rc: $(cat out)"
  [ $kind != set-name-hash ] && { grep -q "^repaired exfat.set.checksum: /A.TXT: SetChecksum set to" out && pass || fail "$kind: -y said: $(cat out)"; }
  [ -z "$(fsck_codes e.img)" ] && pass || fail "$kind: left $(fsck_codes e.img)"
  fsck.exfat -n e.img > ref.out 2>&1 && pass || fail "$kind: fsck.exfat -n: $(cat ref.out)"
  "$FSIMG" cat e.img /A.TXT | cmp -s - A.TXT && pass || fail "$kind: /A.TXT differs"
  sha=$(sha256sum < e.img); "$FSIMG" fsck -y e.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < e.img)" = "$sha" ] && pass || fail "$kind: second -y: exit $rc or changed"
  if [ $kind = set-checksum ]; then check e.img -j 2; fi
  "$FSIMG" undo e.undo e.img > /dev/null && cmp -s e.img orig.img && pass || fail "$kind: undo"
  repair_cuts orig.img "exfat $kind" /B.TXT:B.TXT /DIR/C.TXT:exsrc/DIR/C.TXT
done

# exFAT chains (-y; -p leaves them): a last link that loops, leaves the heap or is the bad mark is
# made the end of chain (A.TXT reads back whole; fsck.exfat -y cuts it to 8192 or 4096 bytes); a
# DataLength larger than the chain is cut to it (the same bytes as fsck.exfat -y); a chain longer
# than DataLength is ended after the clusters it needs and the rest freed by the next pass; B.TXT's
# last link into A.TXT's first cluster (a cross-link): B.TXT ends before it, both read back whole.
for kind in chain-loop chain-out-of-range chain-bad-cluster chain-too-short chain-too-long chain-cross-link; do
  rm -f e.img
  "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD -s 8M -c 4K --from exsrc e.img || fail "mkfs exfat"
  python3 "$here/../tools/exfat_damage.py" e.img $kind > /dev/null || fail "exfat $kind: damage"
  cp e.img orig.img; cp e.img peer.img; fsck.exfat -y peer.img > /dev/null 2>&1
  "$FSIMG" fsck -p e.img > /dev/null 2>&1; rc=$?
  [ $rc = 4 ] && cmp -s e.img orig.img && pass || fail "exfat $kind: -p exit $rc or changed"
  "$FSIMG" fsck -y e.img > out 2>&1; rc=$?
  who=/A.TXT; [ $kind = chain-cross-link ] && who=/B.TXT
  [ $rc = 1 ] && grep -q "^repaired exfat.${kind/-/.}: $who: " out && [ -z "$(fsck_codes e.img)" ] && pass ||
    fail "exfat $kind: -y exit $rc, left $(fsck_codes e.img): $(cat out)"
  fsck.exfat -n e.img > ref.out 2>&1 && pass || fail "exfat $kind: fsck.exfat -n: $(cat ref.out)"
  case $kind in
    chain-too-short) want=8192; cmp -s e.img peer.img && pass || fail "exfat $kind: not fsck.exfat -y's bytes" ;;
    chain-too-long) want=1 ;;
    chain-cross-link) want=5000; "$FSIMG" cat e.img /B.TXT | cmp -s - B.TXT && pass || fail "exfat $kind: /B.TXT differs" ;;
    *) want=5000 ;;
  esac
  n=$((want < 5000 ? want : 5000))  # past A.TXT's 5,000 bytes: what its last cluster holds
  "$FSIMG" cat e.img /A.TXT > a.out && [ "$(wc -c < a.out)" = $want ] && cmp -s -n $n a.out A.TXT && pass ||
    fail "exfat $kind: /A.TXT is $(wc -c < a.out) bytes, or its first $n are not A.TXT's"
  sha=$(sha256sum < e.img); "$FSIMG" fsck -y e.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < e.img)" = "$sha" ] && pass || fail "exfat $kind: second -y: exit $rc or changed"
  # Cut once per write path: an end-of-chain mark (loop; out-of-range, bad-cluster and cross-link
  # write the same), a DataLength (too-short), an end mark then the next pass's bitmap (too-long).
  case $kind in chain-loop | chain-too-short | chain-too-long) repair_cuts orig.img "exfat $kind" /B.TXT:B.TXT /DIR/C.TXT:exsrc/DIR/C.TXT ;; esac
done

# exfat_case KIND: e.img made from exsrc and damaged by KIND, orig.img a copy; -p must leave it
# as it is (exit 4: not a preen repair).
exfat_case() {
  local rc
  rm -f e.img
  "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD -s 8M -c 4K --from exsrc e.img || fail "mkfs exfat"
  python3 "$here/../tools/exfat_damage.py" e.img "$1" > /dev/null || fail "exfat $1: damage"
  cp e.img orig.img
  "$FSIMG" fsck -p e.img > /dev/null 2>&1; rc=$?
  [ $rc = 4 ] && cmp -s e.img orig.img && pass || fail "exfat $1: -p exit $rc or changed"
}

# exFAT names (-y; -p leaves them): A:TXT becomes A_TXT (each unit names may not hold made '_'), a
# second a.txt beside A.TXT becomes a~1.txt; the content stays, fsck.exfat -n clean (fsck.exfat
# 1.2.0 reports neither).
for kind in name-invalid name-duplicate; do
  exfat_case $kind
  "$FSIMG" fsck -y e.img > out 2>&1; rc=$?
  if [ $kind = name-invalid ]; then new=/A_TXT; host=A.TXT; else new=/a~1.txt; host=B.TXT; fi
  [ $rc = 1 ] && grep -q "^repaired exfat.${kind/-/.}: .*: renamed \"${new#/}\"" out && [ -z "$(fsck_codes e.img)" ] && pass ||
    fail "exfat $kind: -y exit $rc, left $(fsck_codes e.img): $(cat out)"
  "$FSIMG" cat e.img "$new" | cmp -s - $host && pass || fail "exfat $kind: $new is not $host"
  fsck.exfat -n e.img > ref.out 2>&1 && pass || fail "exfat $kind: fsck.exfat -n: $(cat ref.out)"
  sha=$(sha256sum < e.img); "$FSIMG" fsck -y e.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < e.img)" = "$sha" ] && pass || fail "exfat $kind: second -y: exit $rc or changed"
  [ $kind = name-invalid ] && repair_cuts orig.img "exfat $kind" /DIR/C.TXT:exsrc/DIR/C.TXT  # one write path for both
done

# exFAT entries no reader can take (-y; -p leaves them): a SecondaryCount one too large gets back
# the count its SetChecksum was computed with (A.TXT kept whole); a NameLength past the name gets
# the name's length (up to its U+0000); an unknown critical secondary is left out of E.TXT's set;
# a set without its Stream Extension, an orphan secondary, an unknown primary and a second
# Up-case Table entry are marked not in use (A.TXT's clusters then freed); FirstCluster without
# DataLength set to 0; a FirstCluster past the heap makes A.TXT empty (its chain freed); an
# in-use entry after /DIR's end-of-directory entry (a copy of C.TXT's File entry) is read once the
# end entry before it is made an unused one (type 0x7F, as newer fsck.exfat does), and then, a set
# without its Stream Extension, marked not in use. Each time fsck.exfat -n clean, a second -y
# changes nothing; cut once per write path.
for kind in set-secondary-count set-name-length set-unknown-critical-secondary set-no-stream \
    set-orphan-secondary set-unknown-critical dir-system-entry stream-first-cluster stream-first-cluster-range \
    dir-entry-after-end; do
  exfat_case $kind
  "$FSIMG" fsck -y e.img > out 2>&1; rc=$?
  case $kind in
    set-secondary-count) said="exfat.set.secondary-count: /: File entry 3: SecondaryCount 3 set to 2,"; a=5000 ;;
    set-name-length) said="exfat.set.name-length: /A.TXT: NameLength 200 set to 5,"; a=5000 ;;
    set-unknown-critical-secondary) said="exfat.set.unknown-critical: /E.TXT: 1 unknown critical secondary entry left out"; a=5000 ;;
    set-no-stream) said="exfat.set.no-stream: /: entries 3..5 marked not in use"; a=none ;;
    set-orphan-secondary) said="exfat.set.orphan-secondary: /: entry 15 marked not in use"; a=5000 ;;
    set-unknown-critical) said="exfat.set.unknown-critical: /: entry 15 marked not in use"; a=5000 ;;
    dir-system-entry) said="exfat.dir.system-entry: /: the Up-case Table entry at entry 15 marked not in use"; a=5000 ;;
    stream-first-cluster) said="exfat.stream.first-cluster: /E.TXT: FirstCluster [0-9]* set to 0"; a=5000 ;;
    stream-first-cluster-range) said="exfat.stream.first-cluster: /A.TXT: made empty"; a=0 ;;
    dir-entry-after-end) said="exfat.dir.entry-after-end: /DIR/: 1 end-of-directory entry before entry [0-9]* made an unused entry (type 0x7F)"; a=5000 ;;
  esac
  [ $rc = 1 ] && grep -q "^repaired $said" out && [ -z "$(fsck_codes e.img)" ] && pass ||
    fail "exfat $kind: -y exit $rc, left $(fsck_codes e.img): $(cat out)"
  fsck.exfat -n e.img > ref.out 2>&1 && pass || fail "exfat $kind: fsck.exfat -n: $(cat ref.out)"
  case $a in
    none) ! "$FSIMG" ls e.img / | grep -q "A.TXT" && pass || fail "exfat $kind: /A.TXT still listed" ;;
    *) "$FSIMG" cat e.img /A.TXT > a.out && cmp -s -n $a a.out A.TXT && [ "$(wc -c < a.out)" = $a ] && pass ||
         fail "exfat $kind: /A.TXT is $(wc -c < a.out) bytes, not the first $a of A.TXT" ;;
  esac
  [ "$("$FSIMG" cat e.img /E.TXT | wc -c)" = 0 ] && "$FSIMG" cat e.img /B.TXT | cmp -s - B.TXT &&
    "$FSIMG" cat e.img /DIR/C.TXT | cmp -s - exsrc/DIR/C.TXT && pass ||
    fail "exfat $kind: /E.TXT, /B.TXT or /DIR/C.TXT differs"
  sha=$(sha256sum < e.img); "$FSIMG" fsck -y e.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(sha256sum < e.img)" = "$sha" ] && pass || fail "exfat $kind: second -y: exit $rc or changed"
  [ $kind = set-no-stream ] && check e.img -j 2  # once: the entries marked not in use, the clusters freed
  # Cut once per write path: a File entry, a set rewritten, entries marked not in use, a stream.
  case $kind in set-secondary-count | set-unknown-critical-secondary | set-no-stream | stream-first-cluster-range | dir-entry-after-end)
    repair_cuts orig.img "exfat $kind" /B.TXT:B.TXT /DIR/C.TXT:exsrc/DIR/C.TXT ;; esac
done

# Ownership in doubt: a directory loop (which -y does not repair)
# beside a lost cluster: -y leaves the lost cluster (exit 4). A cross-link beside it: the first
# pass cuts the cross-link, the next frees the lost cluster; both files read back whole.
mkdir -p xsrc/DIR; cp A.TXT B.TXT xsrc/; printf 'c\n' > xsrc/DIR/C.TXT
for extra in dir-loop chain-cross-link; do
  rm -f x.img; truncate -s 64M x.img && mkfs.fat -F 32 -i 12345678 x.img > /dev/null &&
    mcopy -s -i x.img xsrc/A.TXT xsrc/B.TXT xsrc/DIR :: || fail "x.img"
  python3 "$here/../tools/fat_damage.py" x.img chain-lost > /dev/null || fail "damage: lost"
  python3 "$here/../tools/fat_damage.py" x.img $extra > /dev/null || fail "damage: $extra"
  "$FSIMG" fsck -y x.img > out 2>&1; rc=$?
  if [ $extra = dir-loop ]; then
    [ $((rc & 4)) = 4 ] && case " $(fsck_codes x.img) " in *" fat.chain.lost "*) true ;; *) false ;; esac && pass ||
      fail "$extra: -y freed the lost clusters or exit $rc: $(cat out)"
  else
    [ $rc = 1 ] && [ -z "$(fsck_codes x.img)" ] && fsck.fat -n x.img > /dev/null 2>&1 && pass || fail "$extra: exit $rc: $(cat out)"
    cmp -s <(mtype -i x.img ::A.TXT) A.TXT && cmp -s <(mtype -i x.img ::B.TXT) B.TXT && pass || fail "$extra: a file differs"
  fi
done

# Invalid short names (-y; -p leaves them): without a long name the entry becomes FSCK0000.000 as
# fsck.fat -a names it (the same bytes); with one (a short name a writer stored in lower case, the
# LFN checksums made to match it) a new alias is made from the long name as Windows makes one, the
# LFN checksums follow, the long name stays what mtools and fsck.fat see. Cut at every write.
mkdir -p nsrc; cp A.TXT B.TXT nsrc/; cp A.TXT "nsrc/A long file name.txt"
rm -f n.img; truncate -s 64M n.img && mkfs.fat -F 32 -i 12345678 n.img > /dev/null &&
  mcopy -i n.img nsrc/A.TXT nsrc/B.TXT "nsrc/A long file name.txt" :: || fail "n.img"
python3 "$here/../tools/fat_damage.py" n.img name-invalid-short > /dev/null || fail "damage: name-invalid-short"
python3 - n.img <<'PY' || fail "damage: lower-case alias"
import struct, sys
f = open(sys.argv[1], "r+b"); b = f.read(512)
bps, spc, res, nfat = struct.unpack_from("<HBHB", b, 11); fatsz, root = struct.unpack_from("<I4xI", b, 36)
at = (res + nfat * fatsz + (root - 2) * spc) * bps
f.seek(at); d = bytearray(f.read(spc * bps))
for i in range(0, len(d), 32):
    if d[i + 11] != 0x0F and d[i:i + 6] == b"ALONGF":
        d[i:i + 11] = bytes(d[i:i + 11]).lower()
        s = 0
        for c in d[i:i + 11]: s = (((s & 1) << 7) + (s >> 1) + c) & 0xFF
        j = i - 32
        while j >= 0 and d[j + 11] == 0x0F: d[j + 13] = s; j -= 32
        break
else:
    sys.exit("no ALONGF entry")
f.seek(at); f.write(d)
PY
cp n.img orig.img
codes=$(fsck_codes n.img)
[ "$(echo $codes)" = "fat.name.invalid-short fat.name.invalid-short" ] && pass || fail "names: fsck -n says: $codes"
"$FSIMG" fsck -p n.img > out 2>&1; rc=$?
[ $rc = 4 ] && cmp -s n.img orig.img && pass || fail "names: -p exit $rc or changed (a rename is -y's)"
"$FSIMG" fsck -y n.img > out 2>&1; rc=$?
[ $rc = 1 ] && grep -q '^repaired fat.name.invalid-short: /?.TXT: the short name "?.TXT" replaced by "FSCK0000.000", as fsck.fat names it' out &&
  grep -q '^repaired fat.name.invalid-short: /A long file name.txt: the short name "alongf~1.txt" replaced by "ALONGF~1.TXT", made from the long name' out &&
  pass || fail "names: -y exit $rc: $(cat out)"
[ -z "$(fsck_codes n.img)" ] && fsck.fat -n n.img > ref.out 2>&1 && pass || fail "names: left $(fsck_codes n.img) / $(cat ref.out)"
cmp -s <(mtype -i n.img "::A long file name.txt") A.TXT && cmp -s <(mtype -i n.img ::FSCK0000.000) B.TXT &&
  cmp -s <(mtype -i n.img ::A.TXT) A.TXT && pass || fail "names: a file differs through mtools"
sha=$(sha256sum < n.img); "$FSIMG" fsck -y n.img > /dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ "$(sha256sum < n.img)" = "$sha" ] && pass || fail "names: second -y: exit $rc or changed"
cp orig.img peer.img; fsck.fat -a peer.img > /dev/null 2>&1
cmp -s <(mtype -i peer.img "::A long file name.txt") A.TXT && pass || fail "names: fsck.fat -a lost the long name (expected to keep it)"
repair_cuts orig.img "names" "/A long file name.txt:A.TXT" /A.TXT:A.TXT
# "." or ".." naming another cluster: -y writes the right one, byte for byte what fsck.fat -a writes;
# cut at every write, -y again finishes.
for kind in dir-dot dir-dotdot; do
  rm -f x.img; truncate -s 64M x.img && mkfs.fat -F 32 -i 12345678 x.img > /dev/null &&
    mcopy -s -i x.img xsrc/A.TXT xsrc/B.TXT xsrc/DIR :: || fail "x.img"
  python3 "$here/../tools/fat_damage.py" x.img $kind > /dev/null || fail "damage: $kind"
  cp x.img orig.img; cp x.img peer.img; fsck.fat -a peer.img > /dev/null 2>&1
  "$FSIMG" fsck -p x.img > /dev/null 2>&1; rc=$?
  [ $rc = 4 ] && cmp -s x.img orig.img && pass || fail "$kind: -p exit $rc or changed"
  "$FSIMG" fsck -y x.img > out 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired fat.dir.${kind#dir-}: /DIR/: \".\" (cluster [0-9]*) and \"..\" (cluster 0, the root) written" out &&
    cmp -s x.img peer.img && pass || fail "$kind: -y exit $rc or not fsck.fat -a's bytes: $(cat out)"
  [ $kind = dir-dot ] && repair_cuts orig.img "$kind" /DIR/C.TXT:xsrc/DIR/C.TXT /A.TXT:A.TXT  # one write path for both
done
# A short name an earlier entry has (no long name): the second becomes FSCK0000.000, the same bytes
# as fsck.fat -a.
rm -f n.img; truncate -s 64M n.img && mkfs.fat -F 32 -i 12345678 n.img > /dev/null && mcopy -i n.img A.TXT B.TXT :: || fail "n.img"
python3 "$here/../tools/fat_damage.py" n.img name-duplicate > /dev/null || fail "damage: name-duplicate"
cp n.img peer.img; fsck.fat -a peer.img > /dev/null 2>&1
"$FSIMG" fsck -y n.img > out 2>&1; rc=$?
[ $rc = 1 ] && grep -q '^repaired fat.name.duplicate: /A.TXT: the short name "A.TXT", which an earlier entry has, replaced by "FSCK0000.000"' out &&
  cmp -s n.img peer.img && pass || fail "name-duplicate: -y exit $rc or not fsck.fat -a's bytes: $(cat out)"
cmp -s <(mtype -i n.img ::A.TXT) A.TXT && cmp -s <(mtype -i n.img ::FSCK0000.000) B.TXT && pass || fail "name-duplicate: a file differs"
finish
