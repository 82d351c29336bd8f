#!/usr/bin/env bash
# fsimg label, attrib, rm, mkdir, cp and mv on NTFS (ntfs/edit.hpp), on an image made by
# mkntfs whose files ntfs-3g wrote (fsimg mkfs --from where FUSE cannot run)
# and on one fsimg made with DOS names: the label as ntfslabel and libblkid
# read it (non-ASCII, emptied, 128 units, 129 refused with nothing written),
# the serial as libblkid reads it, attributes as sleuthkit's istat reads
# $STANDARD_INFORMATION and as ntfs-3g's hide_hid_files reads the copy in
# the parent's index entry (one in $INDEX_ROOT, one in an INDX block, a
# hard link named from two directories); rm of a file named in
# $INDEX_ROOT, of one whose data has clusters, of a directory tree, then
# of every file of a 60-file directory one by one (separators of its B+ tree
# and last entries of INDX blocks too: the index rewritten); every
# independent checker clean after, ntfsresize counting $Bitmap; the real
# writer (ntfs-3g, write-exercise) goes on changing the image. A volume
# whose $LogFile Windows has not replayed is refused; fsck warns of it, and
# fsck -y empties it as ntfsfix does. Cuts at every write:
# ntfs_edit_cut.sh.
# cost: 96
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
. "$here/../tools/ntfs_edit_base.sh"

# ---- label and serial, read back by ntfslabel and libblkid
cp "$base" l.img
[ "$("$FSIMG" label l.img)" = "$(ntfslabel l.img)" ] && [ "$(ntfslabel l.img)" = BASE ] && pass || fail "label shows $("$FSIMG" label l.img)"
new=$'Caf\u00e9 \u03a9 data'
"$FSIMG" label l.img "$new" || fail "label set"
[ "$(ntfslabel l.img)" = "$new" ] && pass || fail "ntfslabel reads $(ntfslabel l.img)"
[ "$(blkid -p -o value -s LABEL l.img)" = "$new" ] && pass || fail "blkid reads $(blkid -p -o value -s LABEL l.img)"
"$FSIMG" label l.img --volume-id 0123456789abcdef || fail "serial set"
[ "$(blkid -p -o value -s UUID l.img)" = 0123456789ABCDEF ] && pass || fail "blkid UUID $(blkid -p -o value -s UUID l.img)"
j=$("$FSIMG" label --json l.img)
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(0 if j["label"] == sys.argv[2] and j["volume_id"] == "0123456789ABCDEF" else 1)' "$j" "$new" && pass || fail "label --json: $j"
"$FSIMG" label l.img '' && [ -z "$(ntfslabel l.img)" ] && [ -z "$("$FSIMG" label l.img)" ] && pass || fail "empty label"
long=$(printf 'L%.0s' $(seq 1 128))
"$FSIMG" label l.img "$long" && [ "$(ntfslabel l.img)" = "$long" ] && pass || fail "128-unit label"
cp l.img l-before.img
expect_fail 2 "at most 128 UTF-16 units" "$FSIMG" label l.img "${long}X"
cmp -s l.img l-before.img && pass || fail "a refused label changed the image"
check l.img -j 2 --manifest pre.manifest
"$FSIMG" fsck l.img >/dev/null && pass || fail "fsck after label: $("$FSIMG" fsck l.img)"

# ---- attributes: istat ($STANDARD_INFORMATION), ntfs-3g hide_hid_files (the index entries)
cp "$base" a.img
inode() { ifind -n "$2" "$1"; }
si_flags() { istat "$1" "$(inode "$1" "$2")" | sed -n '/^\$STANDARD_INFORMATION/,/^\$FILE_NAME/s/^Flags: //p'; }
"$FSIMG" attrib a.img +r +h '/dir/inner file number 37.txt' /a.txt /other || fail "attrib +r +h"
"$FSIMG" attrib a.img +s /dir || fail "attrib +s"
[ $fuse = yes ] && { "$FSIMG" attrib a.img +h /dir/linked.txt || fail "attrib hard link"; }
# Without the archive column: ntfs-3g sets it on the directories it makes, mkfs --from does not.
got=$("$FSIMG" attrib a.img '/dir/inner file number 37.txt' /a.txt /dir /other | cut -c2-)
want='-HR  /dir/inner file number 37.txt
-HR  /a.txt
S--  /dir
-HR  /other'
[ "$got" = "$want" ] && pass || { fail "attrib shows"; diff <(echo "$want") <(echo "$got"); }
for f in '/dir/inner file number 37.txt' /a.txt; do
  fl=$(si_flags a.img "$f")
  [[ $fl == *Hidden* && $fl == *"Read Only"* ]] && pass || fail "istat $f: Flags: $fl"
done
[[ $(si_flags a.img /dir) == *System* ]] && pass || fail "istat /dir: $(si_flags a.img /dir)"
check a.img -j 2 --manifest pre.manifest
"$FSIMG" fsck a.img >/dev/null && pass || fail "fsck after attrib: $("$FSIMG" fsck a.img)"
if [ $fuse = yes ]; then
  # hide_hid_files hides what the index entry's copy calls hidden.
  ntfs-3g -o ro,hide_hid_files a.img mnt && {
    ls mnt mnt/dir mnt/other > listing 2>&1; fusermount -u mnt; }
  grep -q -x a.txt listing && fail "ntfs-3g lists /a.txt: its index entry is not hidden" || pass
  grep -q -x 'inner file number 37.txt' listing && fail "ntfs-3g lists file 37 (INDX block entry not hidden)" || pass
  grep -q -x 'inner file number 36.txt' listing && pass || fail "ntfs-3g hides file 36"
  [ "$(grep -c -x -e linked.txt -e hardlink.txt listing)" = 0 ] && pass || fail "a hard link's entries not both hidden: $(cat listing)"
  "$FSIMG" attrib a.img -h /a.txt /dir/linked.txt || fail "attrib -h"
  ntfs-3g -o ro,hide_hid_files a.img mnt && { ls mnt mnt/dir mnt/other > listing 2>&1; fusermount -u mnt; }
  grep -q -x a.txt listing && [ "$(grep -c -x -e linked.txt -e hardlink.txt listing)" = 2 ] && pass || fail "-h: not listed again: $(cat listing)"
  # The real writer goes on from here.
  wout=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" a.img 2>&1) && pass || { fail "write-exercise"; echo "$wout" | tail -15; }
fi

# ---- an image fsimg made: DOS names (two entries per file), attributes of a directory in an INDX block
"$FSIMG" mkfs -q -t ntfs -s 32M --from pre m.img || fail "mkfs --from"
"$FSIMG" attrib m.img +a +s '/dir/inner file number 5.txt' /dir /a.txt || fail "attrib on fsimg's image"
"$FSIMG" label m.img 'Fsimg volume' --volume-id 42 || fail "label on fsimg's image"
[ "$(ntfslabel m.img)" = 'Fsimg volume' ] && [ "$(blkid -p -o value -s UUID m.img)" = 0000000000000042 ] && pass || fail "label/serial on fsimg's image"
check m.img -j 2 --manifest pre.manifest
"$FSIMG" fsck m.img >/dev/null && pass || fail "fsck: $("$FSIMG" fsck m.img)"

# ---- rm: a file in $INDEX_ROOT, one of its data in clusters from an INDX block, a directory
# tree (-r); the rest read back exactly, $Bitmap and $MFT's $BITMAP as ntfsresize and our fsck
# count them; one name of a hard link removed, the file kept under the others.
cp "$base" r.img
"$FSIMG" rm r.img /a.txt /dir/big.bin || fail "rm of two files"
"$FSIMG" rm -r r.img /gone || fail "rm -r /gone"
cp -r pre post && rm -r post/a.txt post/dir/big.bin post/gone
"$SHARED/oracles/make-manifest" post > post.manifest
check r.img -j 2 --manifest post.manifest
"$FSIMG" fsck r.img >/dev/null && pass || fail "fsck after rm: $("$FSIMG" fsck r.img)"
[ -z "$(fls r.img | grep -v '^[^ ]* \*' | grep -w a.txt)" ] && pass || fail "sleuthkit still lists /a.txt"
# The directory an entry left is stamped (no later than SOURCE_DATE_EPOCH), as sleuthkit reads it.
istat r.img "$(ifind -n /dir r.img)" | sed -n '/^\$STANDARD_INFORMATION/,/^$/p' | grep -q '^File Modified:.2023-11-14 22:13:20' &&
  pass || fail "/dir's modification time: $(istat r.img "$(ifind -n /dir r.img)" | grep -m1 'File Modified')"
if [ $fuse = yes ]; then
  # One name of the hard link ntfs-3g made: that name goes, the file stays under the other.
  links() { istat "$1" "$(ifind -n "$2" "$1")" | sed -n 's/^Links: //p'; }
  [ "$(links r.img /other/hardlink.txt)" = 2 ] && pass || fail "links before: $(links r.img /other/hardlink.txt)"
  "$FSIMG" rm r.img /dir/linked.txt || fail "rm of one name of ntfs-3g's hard link"
  [ "$(links r.img /other/hardlink.txt)" = 1 ] && pass || fail "links after: $(links r.img /other/hardlink.txt)"
  [ "$(ntfscat r.img /other/hardlink.txt)" = linked ] && pass || fail "ntfscat of the name left"
  rm post/dir/linked.txt && "$SHARED/oracles/make-manifest" post > post.manifest
  check r.img -j 2 --manifest post.manifest
  "$FSIMG" fsck r.img >/dev/null && pass || fail "fsck after rm of a name: $("$FSIMG" fsck r.img)"
  wout=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" r.img 2>&1) && pass || { fail "write-exercise after rm"; echo "$wout" | tail -15; }
fi
# Hard links fsimg stored (mkfs --from keeps them as links): three names of one file, two in
# one directory. rm of a name leaves the others and the link count one less (istat, ntfsinfo),
# the data where it was; the last name removes the file and frees its clusters.
mkdir -p hl/sub
head -c 70000 /dev/urandom > hl/a.bin && ln hl/a.bin hl/c.bin && ln hl/a.bin hl/sub/b.bin
printf 'other\n' > hl/other.txt
"$FSIMG" mkfs -q -t ntfs -s 16M --from hl h.img || fail "mkfs with hard links"
hlinks() { istat h.img "$(ifind -n "$1" h.img)" | sed -n 's/^Links: //p'; }
[ "$(hlinks /a.bin)" = 3 ] && pass || fail "links before: $(hlinks /a.bin)"
free_before=$("$FSIMG" fsck --json h.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["free_clusters"])')
"$FSIMG" rm h.img /a.bin || fail "rm of one name"
[ "$(hlinks /c.bin)" = 2 ] && pass || fail "links after rm /a.bin: $(hlinks /c.bin)"
[ -z "$(fls h.img | grep -v '^[^ ]* \*' | grep -w a.bin)" ] && pass || fail "sleuthkit still lists /a.bin: $(fls h.img)"
icat h.img "$(ifind -n /sub/b.bin h.img)" | cmp -s - hl/a.bin && pass || fail "icat /sub/b.bin"
ntfscat h.img /c.bin | cmp -s - hl/a.bin && pass || fail "ntfscat /c.bin"
[ "$("$FSIMG" ls h.img / | sort | tr '\n' ' ')" = "c.bin other.txt sub/ " ] && pass || fail "ls /: $("$FSIMG" ls h.img /)"
"$FSIMG" fsck h.img >/dev/null && pass || fail "fsck after rm of a name: $("$FSIMG" fsck h.img)"
ntfsfix -n h.img >/dev/null 2>&1 && pass || fail "ntfsfix -n after rm of a name"
rm hl/a.bin && "$SHARED/oracles/make-manifest" hl > hl.manifest
check h.img -j 2 --manifest hl.manifest
"$FSIMG" rm h.img /c.bin || fail "rm of the second name"
[ "$(hlinks /sub/b.bin)" = 1 ] && pass || fail "links after rm /c.bin: $(hlinks /sub/b.bin)"
"$FSIMG" rm h.img /sub/b.bin || fail "rm of the last name"
free_after=$("$FSIMG" fsck --json h.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["free_clusters"])')
[ $((free_after - free_before)) = 18 ] && pass || fail "clusters freed by the last name: $free_before -> $free_after (70,000 bytes: 18)"
"$FSIMG" fsck h.img >/dev/null && pass || fail "fsck after the last name: $("$FSIMG" fsck h.img)"
rm hl/c.bin hl/sub/b.bin && "$SHARED/oracles/make-manifest" hl > hl.manifest
check h.img -j 2 --manifest hl.manifest
# Every file of a 60-file directory removed one by one, the B+ tree's separators and the last
# entries of INDX blocks too (the index rewritten, copy on write): the rest still read back, the
# volume stays clean, and the index has fewer blocks after.
"$FSIMG" mkfs -q -t ntfs -s 32M --from pre m2.img || fail "mkfs m2"
cp m2.img m2-full.img
"$FSIMG" dump --json --what index /dir m2.img > idx.json
separators=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
nodes = [j["index_root"]] + j.get("blocks", [])
print(sum(1 for n in nodes for e in n["entries"] if e["flags"] & 1 and "name" in e))' idx.json)
[ "$separators" -ge 2 ] && pass || fail "/dir's index has $separators separators"
removed=0
for i in $(seq 1 60); do
  if "$FSIMG" rm m2.img "/dir/inner file number $i.txt" 2> err; then removed=$((removed + 1))
  else fail "rm of file $i: $(cat err)"; fi
  if [ "$i" = 30 ]; then
    mkdir -p pre30; cp -r pre/. pre30/
    for k in $(seq 1 30); do rm "pre30/dir/inner file number $k.txt"; done
    "$SHARED/oracles/make-manifest" pre30 > pre30.manifest
    check m2.img -j 2 --manifest pre30.manifest
  fi
done
echo "60 files: $removed removed ($separators separators in the index before)"
[ $removed = 60 ] && pass || fail "only $removed of 60 removed"
"$FSIMG" fsck m2.img >/dev/null && pass || fail "fsck after 60 rm: $("$FSIMG" fsck m2.img)"
blocks() { "$FSIMG" dump --json --what index /dir "$1" | python3 -c 'import json, sys; print(len(json.load(sys.stdin).get("blocks", [])))'; }
[ "$(blocks m2.img)" -lt "$(blocks m2-full.img)" ] && pass || fail "/dir's index kept its $(blocks m2.img) blocks"
check m2.img -j 2
if [ $fuse = yes ]; then
  wout=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" m2.img 2>&1) && pass || { fail "write-exercise after 60 rm"; echo "$wout" | tail -15; }
fi

# ---- mkdir: in the root, in /dir (an index in INDX blocks: rewritten), -p chains, a long name
# (a DOS name beside it), a name Win32 cannot hold (POSIX), on the mkntfs + ntfs-3g image and on
# fsimg's; every checker reads the new tree, sleuthkit names the DOS aliases, ntfs-3g changes it.
for img in base m; do
  cp "$( [ $img = base ] && echo "$base" || echo m.img)" d.img
  "$FSIMG" mkdir -p d.img /made '/dir/a new directory/below/deepest' /dir/x '/other/colon:name' || fail "$img: mkdir"
  expect_fail 1 'exists' "$FSIMG" mkdir d.img /MADE
  expect_fail 1 'exists' "$FSIMG" mkdir d.img /dir
  cp -r pre made-tree && mkdir -p made-tree/made 'made-tree/dir/a new directory/below/deepest' made-tree/dir/x \
    'made-tree/other/colon:name'
  "$SHARED/oracles/make-manifest" made-tree > made.manifest
  rm -rf made-tree
  check d.img -j 2 --manifest made.manifest
  "$FSIMG" fsck d.img >/dev/null && pass || fail "$img: fsck after mkdir: $("$FSIMG" fsck d.img)"
  istat d.img "$(ifind -n '/dir/a new directory' d.img)" | grep -q '^Name: ANEWDI~1$' && pass ||
    fail "$img: no DOS name for the long name: $(istat d.img "$(ifind -n '/dir/a new directory' d.img)" | grep '^Name')"
  [ "$(ls_names=$("$FSIMG" ls d.img /dir); grep -c -x -e 'a new directory/' -e 'x/' <<<"$ls_names")" = 2 ] && pass ||
    fail "$img: fsimg ls /dir: $("$FSIMG" ls d.img /dir | tail -5)"
  if [ $fuse = yes ] && [ $img = base ]; then  # (one image per command: the foreign writer's)
    wout=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" d.img 2>&1) && pass || { fail "$img: write-exercise after mkdir"; echo "$wout" | tail -15; }
  fi
  "$FSIMG" rm -r d.img /made '/dir/a new directory' && "$FSIMG" fsck d.img > /dev/null && pass || fail "$img: rm -r of what mkdir made"
done

# ---- cp: a tree (empty, resident and non-resident files, a deeper directory) into the root and
# into /dir (an index in INDX blocks), cp -f both ways (clusters over resident data, resident over
# clusters); every checker reads exactly the tree, ntfs-3g's writer goes on changing it.
mkdir -p host/sub && : > host/empty && echo small > host/small.txt && head -c 90000 /dev/urandom > host/sub/big.bin
head -c 2500000 /dev/urandom > host/sub/huge.bin
for img in base m; do
  cp "$( [ $img = base ] && echo "$base" || echo m.img)" c.img
  "$FSIMG" cp -r c.img host / && "$FSIMG" cp -r c.img host/sub /dir/ || fail "$img: cp -r"
  "$FSIMG" cp -f c.img host/sub/big.bin /a.txt && "$FSIMG" cp -f c.img host/small.txt /dir/big.bin || fail "$img: cp -f"
  cp -r pre copied && cp -r host copied/host && cp -r host/sub copied/dir/sub
  cp host/sub/big.bin copied/a.txt && cp host/small.txt copied/dir/big.bin
  "$SHARED/oracles/make-manifest" copied > copied.manifest
  rm -rf copied
  check c.img -j 2 --manifest copied.manifest
  "$FSIMG" fsck c.img >/dev/null && pass || fail "$img: fsck after cp: $("$FSIMG" fsck c.img)"
  ntfscat c.img /host/sub/huge.bin | cmp -s - host/sub/huge.bin && pass || fail "$img: ntfscat of the copied huge.bin"
  if [ $fuse = yes ] && [ $img = m ]; then  # (one image per command: fsimg's, DOS names)
    wout=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" c.img 2>&1) && pass || { fail "$img: write-exercise after cp"; echo "$wout" | tail -15; }
  fi
done

# ---- mv: a rename, a case-only rename, a file into /dir (an index in INDX blocks), a directory
# tree into /other; every checker reads the moved tree, ntfs-3g's writer goes on changing it.
for img in base m; do
  cp "$( [ $img = base ] && echo "$base" || echo m.img)" v.img
  "$FSIMG" mv v.img /a.txt /renamed.txt && "$FSIMG" mv v.img /renamed.txt /RENAMED.TXT &&
    "$FSIMG" mv v.img /RENAMED.TXT /dir/ && "$FSIMG" mv v.img /gone /other/ || fail "$img: mv"
  cp -r pre moved && mv moved/a.txt moved/dir/RENAMED.TXT && mv moved/gone moved/other/
  "$SHARED/oracles/make-manifest" moved > moved.manifest
  rm -rf moved
  check v.img -j 2 --manifest moved.manifest
  "$FSIMG" fsck v.img >/dev/null && pass || fail "$img: fsck after mv: $("$FSIMG" fsck v.img)"
  if [ $fuse = yes ] && [ $img = base ]; then  # (one image per command)
    wout=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" v.img 2>&1) && pass || { fail "$img: write-exercise after mv"; echo "$wout" | tail -15; }
  fi
done

# ---- a fresh fsimg volume (no free MFT record: $MFT grows) filled by the six commands: 400 files
# copied in, directories made, renamed and moved, files replaced and removed; every checker and
# the Linux ntfs3 driver (kernel-check, read-write) read exactly the result.
"$FSIMG" mkfs -q -t ntfs -s 64M -L FRESH g.img || fail "mkfs g.img"
mkdir -p fresh/photos fresh/docs
for i in $(seq 1 400); do printf 'photo %d\n' "$i" > "fresh/photos/IMG_$(printf %04d "$i").JPG"; done
head -c 300000 /dev/urandom > fresh/docs/report.pdf
"$FSIMG" cp -r g.img fresh/photos fresh/docs / && "$FSIMG" mkdir -p g.img /archive/2024 &&
  "$FSIMG" mv g.img /photos /archive/2024/ && "$FSIMG" mv g.img /docs /Documents &&
  "$FSIMG" cp -f g.img pre/a.txt /Documents/report.pdf &&
  "$FSIMG" rm g.img '/archive/2024/photos/IMG_00*' && "$FSIMG" label g.img CHANGED || fail "the six commands on g.img"
mkdir -p expect/archive/2024 && cp -r fresh/photos expect/archive/2024/ && cp -r fresh/docs expect/Documents &&
  cp pre/a.txt expect/Documents/report.pdf && rm expect/archive/2024/photos/IMG_00*
"$SHARED/oracles/make-manifest" expect > expect.manifest
check g.img -j 2 --manifest expect.manifest
"$FSIMG" fsck g.img >/dev/null && pass || fail "g.img: fsck: $("$FSIMG" fsck g.img)"
[ "$(ntfslabel g.img)" = CHANGED ] && pass || fail "g.img: label $(ntfslabel g.img)"
if [ -x "$SHARED/oracles/kernel-check" ]; then
  kout=$("$SHARED/oracles/kernel-check" --write --manifest expect.manifest g.img 2>&1) && pass || { fail "kernel-check g.img"; echo "$kout" | sed 's/^/    /'; }
fi

# ---- a $LogFile Windows has not replayed: refused before any write
cp "$base" log.img
off=$(python3 - log.img <<'EOF'
import subprocess, sys, json
# The first cluster of $LogFile, from sleuthkit (inode 2, $DATA).
out = subprocess.run(["istat", sys.argv[1], "2"], capture_output=True, text=True).stdout
runs = out.split("$DATA")[1].split("\n")[1].split()
bs = int(subprocess.run(["fsstat", sys.argv[1]], capture_output=True, text=True).stdout.split("Cluster Size: ")[1].split()[0])
print(int(runs[0]) * bs)
EOF
)
python3 - log.img "$off" <<'EOF'
import struct, sys
# One restart page of 4096 bytes: "RSTR", the restart area at 0x30 with a
# client in use and no clean flag, fixups applied (NTFS-3G logfile.h layout).
p = bytearray(4096)
p[0:4] = b"RSTR"
struct.pack_into("<HH", p, 4, 0x1E, 9)
struct.pack_into("<IIH", p, 0x10, 4096, 4096, 0x30)
struct.pack_into("<H", p, 0x1C, 1)
struct.pack_into("<QHHHH", p, 0x30, 0x1000, 1, 0xFFFF, 0, 0)
struct.pack_into("<H", p, 0x1E, 7)
for i in range(8):
    end = (i + 1) * 512 - 2
    p[0x20 + 2 * i:0x22 + 2 * i] = p[end:end + 2]
    struct.pack_into("<H", p, end, 7)
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); f.write(p); f.write(p)
EOF
cp log.img log-before.img
expect_fail 3 "LogFile holds transactions Windows has not applied" "$FSIMG" label log.img NEW
cmp -s log.img log-before.img && pass || fail "the refused label changed the image"
expect_fail 3 "LogFile holds transactions" "$FSIMG" attrib log.img +h /a.txt
# fsck warns (exit 0: a warning), dump says so; -p leaves it; -y empties the log as ntfsfix
# does (the dirty flag set first, cleared by its next pass once the volume checks clean).
[ "$(fsck_codes log.img)" = ntfs.logfile.unclean ] && pass || fail "fsck on the unclean log: $(fsck_codes log.img)"
[ "$("$FSIMG" dump --json log.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["volume"]["logfile"])')" = unclean ] &&
  pass || fail "dump does not say unclean"
"$FSIMG" fsck -p log.img > /dev/null 2>&1; cmp -s log.img log-before.img && pass || fail "-p changed the unclean log"
"$FSIMG" fsck -y log.img > rep.out 2>&1
grep -q "^repaired ntfs.logfile.unclean: \$LogFile emptied" rep.out && grep -q "^repaired ntfs.volume.dirty" rep.out &&
  [ -z "$(fsck_codes log.img)" ] && pass || fail "fsck -y of the unclean log: $(cat rep.out)"
# Cut after the first write (the dirty flag, record 3 in $MFT): nothing else changed.
cp log-before.img cut.img
FSIMG_TEST_CUT_AFTER_WRITES=2 "$FSIMG" fsck -y cut.img > /dev/null 2>&1
[ "$(fsck_codes cut.img)" = "ntfs.logfile.unclean ntfs.volume.dirty" ] && pass || fail "-y cut after the flag: $(fsck_codes cut.img)"
"$FSIMG" label log.img AFTER && [ "$(ntfslabel log.img)" = AFTER ] && pass || fail "label after the log was emptied"
check log.img -j 2 --manifest pre.manifest
finish
