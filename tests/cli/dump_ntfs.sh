#!/usr/bin/env bash
# fsimg dump on NTFS images, the command line: the boot dump inside a GPT
# (IMAGE@1 and the bare image agree), --what mft N on a partitioned image,
# exit status 0 / 1 (damage: a broken boot-sector rule, a torn record) / 2
# (usage: a record past $MFT, a non-number, --what mft on a FAT image), and
# messages that name the record and the offset.
here=$(dirname "$0"); . "$here/../lib.sh"
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
expect() {  # expect STATUS TEXT-IN-OUTPUT ARGS...
  local want=$1 text=$2; shift 2
  local out rc
  out=$("$FSIMG" "$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && grep -qF -- "$text" <<<"$out"; then pass; else
    fail "fsimg $*: exit $rc (want $want), output: $(head -3 <<<"$out")"; fi
}
"$FSIMG" mkfs -q -t ntfs -s 100M -L "Données" --volume-id 0123456789ABCDEF --partition-table gpt g.img
"$FSIMG" mkfs -q -t ntfs -s 64M n.img
"$FSIMG" mkfs -q -t fat32 -s 64M f.img

expect 0 'label             "Données"' dump g.img
expect 0 '0x048  VolumeSerialNumber     0x0123456789ABCDEF' dump g.img@1
expect 0 '"$UpCase" (Win32&DOS)' dump --what mft 5 g.img
expect 0 'sparse          25087' dump --what mft 8 g.img
"$FSIMG" dump --json g.img >a.json && "$FSIMG" dump --json g.img@1 >b.json &&
  python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(not (a["boot_sector"]==b["boot_sector"] and a["boot_sector"]["HiddenSectors"]==2048 and a["volume_offset"]==1048576 and a["mft"]["runs"]==[{"vcn":0,"lcn":4,"length":7}]))' a.json b.json &&
  pass || fail "dump --json of g.img and g.img@1"
"$FSIMG" dump --json --what mft 3 n.img | python3 -c '
import json, sys
j = json.load(sys.stdin)
names = [a["type_name"] for a in j["attributes"]]
vi = [a for a in j["attributes"] if a["type"] == 0x70][0]["decoded"]
ok = (j["record"] == 3 and j["header"]["fixups_verified"] == 2 and j["header"]["flags"] == 1 and
      names == ["$STANDARD_INFORMATION", "$FILE_NAME", "$VOLUME_NAME", "$VOLUME_INFORMATION", "$DATA"] and
      vi == {"version": "3.1", "flags": 0})
sys.exit(not ok)' && pass || fail "dump --json --what mft 3"

expect 2 'MFT record 27 does not exist: $MFT holds 27 records' dump --what mft 27 n.img
expect 2 '"x" is not a record number' dump --what mft x n.img
expect 2 'is for NTFS images' dump --what mft 0 f.img
# Damage: exit 1, the record and the offsets named.
cp n.img t.img
printf '\x55\x55' | dd of=t.img bs=1 seek=$((16384 + 6 * 1024 + 1022)) conv=notrunc status=none
expect 1 'MFT record 6 (volume byte 23550): fixup mismatch: stride 1' dump --what mft 6 t.img
expect 0 '"$Boot" (Win32&DOS)' dump --what mft 7 t.img
cp n.img s.img
printf '\x03' | dd of=s.img bs=1 seek=13 conv=notrunc status=none
expect 1 '[ntfs.boot.cluster_size]' dump s.img
# The backup boot sector (the last sector) stands in for the damaged one (fs::detect) ...
expect 0 'reading through the backup boot sector at byte' dump --what mft 0 s.img
# ... and without it the damaged sector 0 is named.
size=$(stat -c %s s.img)
printf '\x03' | dd of=s.img bs=1 seek=$((size - 512 + 13)) conv=notrunc status=none
expect 1 'NTFS boot sector: sectors per cluster byte 0x03' dump --what mft 0 s.img
finish
