#!/usr/bin/env bash
# ls --deleted and cat --deleted on FAT12, FAT16 and FAT32 (issue 25): files
# deleted by mtools (mdel) and by fsimg rm, in the root and in a
# subdirectory, are listed with their long names (rebuilt from the deleted
# long-name entries, their short names' lost first character proven by the
# checksum) and state; the names are the ones The Sleuth Kit's fls -d shows
# (its "_" for our "?"); while their clusters are free, cat --deleted gives
# back each file byte-exact, as icat does; once a cluster is in use again the
# file is "reused" and cat --deleted refuses (exit 3). exFAT: files deleted
# by fsimg rm and by exfat-fuse (their sets' InUse bits cleared) listed by
# name, read back byte-exact and equal to icat, the names fls -d shows;
# reused once a file written after takes their clusters. NTFS: files deleted
# through ntfs-3g (their records not in use, names and runs kept) listed
# under their directory, as fls -d lists them, read back byte-exact and equal
# to icat, extracted; reused once ntfs-3g writes a file over their clusters;
# those whose directory's record was reused under /$OrphanFiles, as fls -d.
# A deleted FAT directory of several clusters in a row comes back whole.
# extract --deleted writes the recoverable ones where their directories are.
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_oracles
command -v fls >/dev/null && command -v icat >/dev/null || { echo "sleuthkit missing: skipped"; exit 77; }
export MTOOLS_SKIP_CHECK=1
cd "$WORK"
mkdir -p src/dir
head -c 70000 /dev/urandom > "src/Photo 0001.jpg"
head -c 3000 /dev/urandom > "src/Long file name.txt"
printf 'keep\n' > src/KEEP.TXT
head -c 9000 /dev/urandom > "src/dir/Inner file.bin"
head -c 100 /dev/urandom > src/dir/SMALL.TXT
for spec in "12 8M 0xFFF" "16 32M 0xFFFF" "32 64M 0x0FFFFFFF"; do
  set -- $spec; bits=$1 size=$2 eoc=$3
  img=d$bits.img
  rm -f $img; truncate -s $size $img
  mkfs.fat -F $bits $img > /dev/null && mcopy -m -s -i $img src/* ::/ || { fail "FAT$bits: setup"; continue; }
  mdel -i $img "::Photo 0001.jpg" "::Long file name.txt" && "$FSIMG" rm -q $img "/dir/Inner file.bin" /dir/SMALL.TXT ||
    { fail "FAT$bits: delete"; continue; }
  # SMALL.TXT's cluster in use again (a lost cluster stands for a file written since).
  small=$("$FSIMG" ls --deleted --json $img /dir | python3 -c '
import json, sys
print(next(e["first_cluster"] for e in json.load(sys.stdin)["entries"] if e["name"].endswith("MALL.TXT")))')
  python3 "$here/../tools/fat_entries.py" $img set all "${small:-0}" $eoc || fail "FAT$bits: reuse"
  out=$("$FSIMG" ls --deleted -R $img)
  expected="recoverable /Long file name.txt
recoverable /Photo 0001.jpg
recoverable /dir/Inner file.bin
reused /dir/?MALL.TXT"
  got=$(awk '{ state = $1; $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print state, $0 }' <<<"$out" | LC_ALL=C sort)
  [ "$got" = "$expected" ] && pass || { fail "FAT$bits: ls --deleted -R"; echo "$out"; }
  # The Sleuth Kit's deleted names (fls -d: "r/r * INODE:<TAB>PATH"), "_" for the lost first character.
  tsk=$(fls -r -d -p -f fat$bits $img | sed -n 's/^r\/r \* [0-9]*:\t//p' | LC_ALL=C sort)
  ours=$(awk '{ $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); sub(/^\//, ""); gsub(/\?/, "_"); print }' <<<"$out" | LC_ALL=C sort)
  [ "$tsk" = "$ours" ] && pass || { fail "FAT$bits: names differ from fls -d"; diff <(echo "$tsk") <(echo "$ours"); }
  for f in "Photo 0001.jpg" "Long file name.txt" "dir/Inner file.bin"; do
    "$FSIMG" cat --deleted $img "/$f" > got.bin && cmp -s got.bin "src/$f" && pass || fail "FAT$bits: cat --deleted /$f"
    inode=$(fls -r -d -p -f fat$bits $img | awk -F'\t' -v f="$f" '$2 == f { split($1, a, /[ :]+/); print a[3]; exit }')
    icat -f fat$bits $img "${inode:-0}" > icat.bin 2>/dev/null; cmp -s got.bin icat.bin && pass || fail "FAT$bits: /$f differs from icat"
  done
  # dump shows the deleted long-name slots mdel left, with their characters, and the short entry's "?".
  d=$("$FSIMG" dump --what dir / $img)
  grep -q 'DEL  LFN .* "Photo 0001.jp"' <<<"$d" && grep -q 'DEL   ?HOTO0~1.JPG ' <<<"$d" && pass || fail "FAT$bits: dump --what dir: $d"
  # The short name with its proven first character reads too.
  "$FSIMG" cat --deleted $img /PHOTO0~1.JPG | cmp -s - "src/Photo 0001.jpg" && pass || fail "FAT$bits: cat --deleted by short name"
  "$FSIMG" cat --deleted $img /dir/?MALL.TXT > /dev/null 2> err; rc=$?
  [ $rc = 3 ] && grep -q "in use again" err && pass || fail "FAT$bits: reused: exit $rc: $(cat err)"
  "$FSIMG" cat --deleted $img /KEEP.TXT > /dev/null 2> err; rc=$?
  [ $rc = 2 ] && grep -q "no deleted file" err && pass || fail "FAT$bits: not deleted: exit $rc: $(cat err)"
  # extract --deleted: every recoverable deleted file where its directory is, byte-exact and
  # dated; the reused one left out and counted; nothing live written.
  rm -rf out; "$FSIMG" extract --deleted $img -C out 2> err; rc=$?
  [ $rc = 0 ] && [ "$(cd out && find . -type f | LC_ALL=C sort | tr '\n' '|')" = "./Long file name.txt|./Photo 0001.jpg|./dir/Inner file.bin|" ] &&
    cmp -s "out/Photo 0001.jpg" "src/Photo 0001.jpg" && cmp -s "out/dir/Inner file.bin" "src/dir/Inner file.bin" &&
    grep -q "1 deleted file left out (their clusters are in use again)" err && pass ||
    { fail "FAT$bits: extract --deleted: exit $rc: $(cat err)"; find out; }
  # FAT keeps the modification time to 2 seconds (mcopy -m keeps the source's).
  d=$(( $(stat -c %Y "out/Photo 0001.jpg") - $(stat -c %Y "src/Photo 0001.jpg") ))
  [ ${d#-} -le 2 ] && pass || fail "FAT$bits: extract --deleted: time off by $d s"
  rm -rf out; "$FSIMG" extract --deleted $img /dir -C out 2> err
  [ "$(cd out && find . -type f)" = "./dir/Inner file.bin" ] && pass || fail "FAT$bits: extract --deleted /dir: $(find out)"
  "$FSIMG" ls --deleted --json $img > ls.json && python3 -c '
import json, sys
j = json.load(open("ls.json"))
assert {e["name"] for e in j["entries"]} == {"Photo 0001.jpg", "Long file name.txt"}, j
assert all(e["deleted"] and e["state"] == "recoverable" for e in j["entries"]), j' && pass || fail "FAT$bits: --json"
done
# Deleted directories: their contents listed and extracted below them (FAT: mdeltree, exFAT: fsimg
# rm -r, NTFS below: ntfs-3g rm -r); the FAT names as fls -d shows them ("_" for "?", any case).
mkdir -p tree/old/inner
head -c 9000 /dev/urandom > "tree/old/Report 2023.doc"; head -c 5000 /dev/urandom > tree/old/inner/deep.bin
printf 'k\n' > tree/KEEP.TXT
rm -f dt.img; truncate -s 32M dt.img
mkfs.fat -F 16 dt.img > /dev/null && mcopy -m -s -i dt.img tree/* ::/ && mdeltree -i dt.img ::old || fail "mdeltree setup"
got=$("$FSIMG" ls --deleted -R dt.img | awk '{ print $1, $NF }')
[ "$got" = "recoverable /?LD/
recoverable 2023.doc
recoverable /?LD/?NNER/
recoverable /?LD/?NNER/?EEP.BIN" ] && pass || fail "deleted directory: ls --deleted -R: $got"
tsk=$(fls -r -d -p dt.img | sed -n 's/^[dr]\/[dr] \* [0-9]*:\t//p' | tr a-z A-Z | LC_ALL=C sort)
ours=$("$FSIMG" ls --deleted -R dt.img | sed 's/^[a-z]* *[-0-9]* [0-9-]* [0-9:]*  \///; s/\/$//' | tr '?a-z' '_A-Z' | LC_ALL=C sort)
[ -n "$tsk" ] && [ "$tsk" = "$ours" ] && pass || fail "deleted directory: fls -d differs: $tsk / $ours"
rm -rf out; "$FSIMG" extract --deleted dt.img -C out 2> err
cmp -s "out/?LD/Report 2023.doc" "tree/old/Report 2023.doc" && cmp -s "out/?LD/?NNER/?EEP.BIN" tree/old/inner/deep.bin && pass ||
  fail "deleted directory: extract --deleted: $(cat err; find out)"
# A deleted directory of 8 clusters (512 bytes each; fsimg mkfs places them in a row): its chain is
# gone, so the clusters after the first are read while they are free and hold directory entries.
# All 40 files come back under it with their long names and bytes; TSK reads its first cluster
# only and lists the others' short names under $OrphanFiles.
rm -rf mt && mkdir -p mt/big && for i in $(seq 1 40); do head -c 700 /dev/urandom > "mt/big/a long file name $i.dat"; done
printf 'k\n' > mt/KEEP.TXT
"$FSIMG" mkfs -q -t fat16 -c 512 -s 16M --from mt m.img && mdeltree -i m.img ::big || fail "big deleted directory: setup"
[ "$("$FSIMG" ls --deleted -R m.img | grep -c '^recoverable *700 .*  /?IG/a long file name [0-9]*\.dat$')" = 40 ] && pass ||
  fail "big deleted directory: $("$FSIMG" ls --deleted -R m.img | head)"
[ "$(fls -r -d -p m.img | grep -c -e $'\t_ig/a long file name' -e $'\t$OrphanFiles/_L')" = 40 ] && pass ||
  fail "big deleted directory: fls -d lists $(fls -r -d -p m.img | wc -l) names"
rm -rf out; "$FSIMG" extract --deleted m.img -C out 2> err
ok=1; for i in $(seq 1 40); do cmp -s "out/?IG/a long file name $i.dat" "mt/big/a long file name $i.dat" || ok=0; done
[ $ok = 1 ] && pass || fail "big deleted directory: extract --deleted: $(cat err; ls out/*)"
"$FSIMG" mkfs -q -t exfat -s 16M --from tree dt-ex.img && "$FSIMG" rm -q -r dt-ex.img /old || fail "exfat rm -r"
rm -rf out; "$FSIMG" extract --deleted dt-ex.img -C out 2> err
cmp -s "out/old/Report 2023.doc" "tree/old/Report 2023.doc" && cmp -s out/old/inner/deep.bin tree/old/inner/deep.bin && pass ||
  fail "exfat: deleted directory: extract --deleted: $(cat err; find out)"
# exFAT.
"$FSIMG" mkfs -q -t exfat -s 8M -c 4K --from src e.img || fail "exfat mkfs"
"$FSIMG" rm -q e.img "/Photo 0001.jpg" "/dir/Inner file.bin" || fail "exfat rm"
out=$("$FSIMG" ls --deleted -R e.img)
got=$(awk '{ state = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print state, $0 }' <<<"$out" | LC_ALL=C sort)
[ "$got" = "recoverable /Photo 0001.jpg
recoverable /dir/Inner file.bin" ] && pass || { fail "exfat: ls --deleted -R"; echo "$out"; }
tsk=$(fls -r -d -p e.img | sed -n 's/^r\/r \* [0-9]*:\t//p' | LC_ALL=C sort)
[ "$tsk" = "Photo 0001.jpg
dir/Inner file.bin" ] && pass || fail "exfat: fls -d lists: $tsk"
for f in "Photo 0001.jpg" "dir/Inner file.bin"; do
  "$FSIMG" cat --deleted e.img "/$f" > got.bin && cmp -s got.bin "src/$f" && pass || fail "exfat: cat --deleted /$f"
  inode=$(fls -r -d -p e.img | awk -F'\t' -v f="$f" '$2 == f { split($1, a, /[ :]+/); print a[3]; exit }')
  icat e.img "${inode:-0}" > icat.bin 2>/dev/null; cmp -s got.bin icat.bin && pass || fail "exfat: /$f differs from icat"
done
# A FAT-chained file (made one with tests/tools/exfat_damage.py): fsimg rm zeroes the freed FAT
# entries, so it is read from its clusters in a row; with a fragmented chain left in the FAT (as
# the Linux driver leaves it: its last cluster moved to the end of the heap), along the chain.
"$FSIMG" mkfs -q -t exfat -s 8M -c 4K --from src c.img
python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import exfat_damage
x = exfat_damage.ExFat(sys.argv[2])
x.make_chained(x.set_of("/Photo 0001.jpg"))' "$here/../tools" c.img
"$FSIMG" rm -q c.img "/Photo 0001.jpg"
"$FSIMG" cat --deleted c.img "/Photo 0001.jpg" | cmp -s - "src/Photo 0001.jpg" && pass || fail "exfat: chained, chain zeroed"
icat c.img "$(fls -d c.img | awk -F'[ :\t]+' '/Photo/ { print $3; exit }')" 2>/dev/null | cmp -s - "src/Photo 0001.jpg" && pass ||
  fail "exfat: chained, chain zeroed: icat reads it otherwise"
python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import exfat_damage
x = exfat_damage.ExFat(sys.argv[2])
first, n = int(sys.argv[3]), -(-70000 // x.cbytes)
cl = list(range(first, first + n))
far = x.ccount + 1  # the last cluster of the heap, free
x.write(x.coff(far), x.read(x.coff(cl[-1]), x.cbytes))
x.write(x.coff(cl[-1]), bytes(x.cbytes))
cl[-1] = far
for a, b in zip(cl, cl[1:] + [0xFFFFFFFF]):
    x.fat_set(a, b)' "$here/../tools" c.img "$("$FSIMG" ls --deleted --json c.img | python3 -c 'import json, sys; print(json.load(sys.stdin)["entries"][0]["first_cluster"])')"
"$FSIMG" cat --deleted c.img "/Photo 0001.jpg" | cmp -s - "src/Photo 0001.jpg" && pass || fail "exfat: chained, fragmented chain kept"
rm -rf out; "$FSIMG" extract --deleted e.img -C out 2> err
cmp -s "out/Photo 0001.jpg" "src/Photo 0001.jpg" && cmp -s "out/dir/Inner file.bin" "src/dir/Inner file.bin" &&
  [ "$(cd out && find . -type f | wc -l)" = 2 ] && pass || fail "exfat: extract --deleted: $(cat err)"
# A file written after takes every free cluster: the deleted ones are reused.
free=$("$FSIMG" fsck --json e.img | python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]; print(s["free_clusters"] * s["cluster_bytes"])')
head -c "${free:-0}" /dev/zero > fill.bin && "$FSIMG" cp -q e.img fill.bin /dir/fill.bin || fail "exfat: fill"  # (not in the root: its entries would take the deleted set)
"$FSIMG" ls --deleted e.img | grep -q "^reused .*Photo 0001.jpg" && pass || fail "exfat: not reused: $("$FSIMG" ls --deleted e.img)"
"$FSIMG" cat --deleted e.img "/Photo 0001.jpg" > /dev/null 2> err; rc=$?
[ $rc = 3 ] && grep -q "in use again" err && pass || fail "exfat: reused: exit $rc: $(cat err)"
# exFAT: files deleted by the real driver (exfat-fuse on a loop device: its sets' InUse cleared,
# the FAT chain left linked), listed, as fls -d lists them, and read back byte-exact.
if [ "$(id -u)" = 0 ] && [ -w /dev/fuse ] && command -v mount.exfat-fuse > /dev/null &&
   "$FSIMG" mkfs -q -t exfat -s 8M -c 4K --from src ef.img && lo=$(losetup -f --show ef.img 2>/dev/null); then
  mkdir -p mnt
  if timeout 30 mount.exfat-fuse "$lo" mnt > /dev/null 2>&1; then
    rm "mnt/Photo 0001.jpg" "mnt/dir/Inner file.bin"; umount mnt
    out=$("$FSIMG" ls --deleted -R ef.img)
    got=$(awk '{ state = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print state, $0 }' <<<"$out" | LC_ALL=C sort)
    [ "$got" = "recoverable /Photo 0001.jpg
recoverable /dir/Inner file.bin" ] && pass || { fail "exfat-fuse: ls --deleted -R"; echo "$out"; }
    [ "$(fls -r -d -p ef.img | sed -n 's/^r\/r \* [0-9]*:\t//p' | LC_ALL=C sort)" = "Photo 0001.jpg
dir/Inner file.bin" ] && pass || fail "exfat-fuse: fls -d lists: $(fls -r -d -p ef.img)"
    for f in "Photo 0001.jpg" "dir/Inner file.bin"; do
      "$FSIMG" cat --deleted ef.img "/$f" | cmp -s - "src/$f" && pass || fail "exfat-fuse: cat --deleted /$f"
    done
  else
    echo "exfat-fuse does not mount here: its part skipped"
  fi
  losetup -d "$lo"
fi
# NTFS: files deleted by ntfs-3g (records not in use, their names and runs kept).
if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ] && command -v ntfs-3g > /dev/null; then
  "$FSIMG" mkfs -q -t ntfs -s 16M --from src n.img || fail "ntfs mkfs"
  mkdir -p mnt
  ntfs-3g n.img mnt && rm "mnt/Photo 0001.jpg" "mnt/dir/Inner file.bin" mnt/dir/SMALL.TXT; fusermount -u mnt ||
    fail "ntfs: delete through ntfs-3g"
  out=$("$FSIMG" ls --deleted -R n.img)
  got=$(awk '{ state = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print state, $0 }' <<<"$out" | LC_ALL=C sort)
  [ "$got" = "recoverable /Photo 0001.jpg
recoverable /dir/Inner file.bin
recoverable /dir/SMALL.TXT" ] && pass || { fail "ntfs: ls --deleted -R"; echo "$out"; }
  tsk=$(fls -r -d -p n.img | sed -n 's/^-\/r \* [0-9-]*:\t//p' | LC_ALL=C sort)
  [ "$tsk" = "Photo 0001.jpg
dir/Inner file.bin
dir/SMALL.TXT" ] && pass || fail "ntfs: fls -d lists: $tsk"
  for f in "Photo 0001.jpg" "dir/Inner file.bin" dir/SMALL.TXT; do
    "$FSIMG" cat --deleted n.img "/$f" > got.bin && cmp -s got.bin "src/$f" && pass || fail "ntfs: cat --deleted /$f"
    inode=$(fls -r -d -p n.img | awk -F'\t' -v f="$f" '$2 == f { split($1, a, /[ :]+/); print a[3]; exit }')
    icat n.img "${inode:-0}" > icat.bin 2>/dev/null; cmp -s got.bin icat.bin && pass || fail "ntfs: /$f differs from icat"
  done
  rm -rf out; "$FSIMG" extract --deleted n.img -C out 2> err
  cmp -s "out/Photo 0001.jpg" "src/Photo 0001.jpg" && cmp -s out/dir/SMALL.TXT src/dir/SMALL.TXT &&
    [ "$(cd out && find . -type f | wc -l)" = 3 ] && pass || fail "ntfs: extract --deleted: $(cat err)"
  # A live file grown through ntfs-3g takes the free clusters (not a new file: it would take the
  # deleted records themselves): the non-resident deleted ones are reused.
  ntfs-3g n.img mnt && { head -c 12000000 /dev/zero >> mnt/KEEP.TXT; fusermount -u mnt; } || fail "ntfs: fill"
  "$FSIMG" ls --deleted n.img | grep -q "^reused .*Photo 0001.jpg" && pass || fail "ntfs: not reused: $("$FSIMG" ls --deleted n.img)"
  "$FSIMG" cat --deleted n.img "/Photo 0001.jpg" > /dev/null 2> err; rc=$?
  [ $rc = 3 ] && grep -q "in use again" err && pass || fail "ntfs: reused: exit $rc: $(cat err)"
  "$FSIMG" mkfs -q -t ntfs -s 16M --from tree dt-nt.img && ntfs-3g dt-nt.img mnt && rm -r mnt/old; fusermount -u mnt
  rm -rf out; "$FSIMG" extract --deleted dt-nt.img -C out 2> err
  cmp -s "out/old/Report 2023.doc" "tree/old/Report 2023.doc" && cmp -s out/old/inner/deep.bin tree/old/inner/deep.bin && pass ||
    fail "ntfs: deleted directory: extract --deleted: $(cat err; find out)"
  # Deleted files whose directory's record was reused (ntfs-3g rm -r, then mkdir takes the
  # directory's record): no directory lists them; they are under /$OrphanFiles, as fls -d shows.
  "$FSIMG" mkfs -q -t ntfs -s 16M --from tree or.img && ntfs-3g or.img mnt && rm -r mnt/old && mkdir mnt/new; fusermount -u mnt
  ours=$("$FSIMG" ls --deleted -R or.img | sed 's/.*  \///; s/\/$//' | grep -v -x '\$OrphanFiles' | LC_ALL=C sort)
  tsk=$(fls -r -d -p or.img | sed 's/^[-dr]\/[dr] \* [0-9-]*:\t//' | LC_ALL=C sort)
  [ "$ours" = "$tsk" ] && [ "$(echo "$ours" | grep -c '^\$OrphanFiles/')" -ge 3 ] && pass ||
    fail "ntfs: \$OrphanFiles: ours: $ours / fls -d: $tsk"
  rm -rf out; "$FSIMG" extract --deleted or.img -C out 2> err
  cmp -s 'out/$OrphanFiles/Report 2023.doc' "tree/old/Report 2023.doc" && cmp -s 'out/$OrphanFiles/inner/deep.bin' tree/old/inner/deep.bin &&
    pass || fail "ntfs: \$OrphanFiles: extract --deleted: $(cat err; find out)"
else
  echo "ntfs-3g needs root and /dev/fuse: its part skipped"
fi
finish
