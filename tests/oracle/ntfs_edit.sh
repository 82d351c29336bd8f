#!/usr/bin/env bash
# fsimg label and attrib on NTFS (ntfs/edit.hpp), on an image made by mkntfs
# whose files ntfs-3g wrote (fsimg mkfs --from where FUSE cannot run) and on
# one fsimg made with DOS names: the label as ntfslabel and libblkid read
# it (non-ASCII, emptied, 128 units, 129 refused with nothing written), the
# serial as libblkid reads it, attributes as sleuthkit's istat reads
# $STANDARD_INFORMATION and as ntfs-3g's hide_hid_files reads the copy in
# the parent's index entry (one in $INDEX_ROOT, one in an INDX block, a
# hard link named from two directories); every independent checker clean
# after; the real writer (ntfs-3g, write-exercise) goes on changing it.
# Interrupted at any write: each label, serial and attrib change is cut
# after its Nth write for every N; after each cut sleuthkit and ntfs-3g
# read every file byte-exact, our fsck finds nothing but the dirty flag and
# a mirror behind, and once fsimg fsck -a or ntfsfix -d has cleared the flag
# every checker passes. A volume whose $LogFile Windows has not replayed is refused.
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
base=$WORK/base.img
mkdir -p pre/dir pre/other
printf 'root file\n' > pre/a.txt
for i in $(seq 1 60); do printf '%s\n' "$i" > "pre/dir/inner file number $i.txt"; done
printf 'linked\n' > pre/dir/linked.txt
truncate -s 64M "$base"
mkntfs -q -F -f -L BASE -c 4096 "$base" >/dev/null 2>&1 || { fail mkntfs; finish; exit; }
fuse=no
if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ] && command -v ntfs-3g > /dev/null; then
  mkdir -p mnt
  if ntfs-3g "$base" mnt 2>/dev/null; then
    cp -r pre/. mnt/ && ln mnt/dir/linked.txt mnt/other/hardlink.txt && fuse=yes
    fusermount -u mnt
  fi
fi
if [ $fuse = no ]; then
  echo "ntfs-3g cannot run here: the base image is fsimg mkfs --from (no hard link)"
  "$FSIMG" mkfs -q -t ntfs -s 64M -L BASE --from pre "$base" --force || { fail "mkfs --from"; finish; exit; }
else
  cp pre/dir/linked.txt pre/other/hardlink.txt
fi
"$SHARED/oracles/make-manifest" pre > pre.manifest
"$FSIMG" fsck "$base" >/dev/null && pass || fail "the base image is not clean: $("$FSIMG" fsck "$base")"

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

# ---- cut at every write
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
      grep -v -E '^[a-z]+ (ntfs\.volume\.dirty|ntfs\.mftmirr\.differs|ntfs\.boot\.backup-differs):')
    [ -z "$odd" ] || { fail "$name: cut after write $n of $total: fsimg fsck: $odd"; bad=1; }
    # ntfs-3g mounts nothing whose $MFTMirr differs from $MFT in records 0..3
    # (a cut between the two copies of record 3, as for ntfs-3g's own writes).
    local readers=read-sleuthkit,read-ntfs-3g
    grep -q '^error ntfs.mftmirr.differs' fsck.out && { readers=read-sleuthkit; mirror_cuts=$((mirror_cuts + 1)); }
    if ! out=$("$SHARED/oracles/check-image" --only "$readers" --manifest pre.manifest cut.img 2>&1); then
      fail "$name: cut after write $n of $total: readers:"; echo "$out" | grep -v PASS | head -8; bad=1
    fi
    # What a checker does with it: ntfsfix clears the flag (and copies the
    # mirror); then every checker passes (at the middle cut: 2 s each).
    [ "$n" = $((total / 2)) ] || continue
    cp cut.img cut-ours.img
    "$FSIMG" fsck -a cut-ours.img > fsck.out 2>&1
    [ -z "$(fsck_codes cut-ours.img)" ] || { fail "$name: cut $n: fsimg fsck -a left $(fsck_codes cut-ours.img): $(cat fsck.out)"; bad=1; }
    if ! out=$("$SHARED/oracles/check-image" -j 2 --manifest pre.manifest cut-ours.img 2>&1); then
      fail "$name: cut after write $n of $total, after fsimg fsck -a:"; echo "$out" | grep -v PASS | head -8; bad=1
    fi
    ntfsfix -d cut.img >/dev/null 2>&1 || { fail "$name: cut $n: ntfsfix -d"; bad=1; }
    if ! out=$("$SHARED/oracles/check-image" -j 2 --manifest pre.manifest cut.img 2>&1); then
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
