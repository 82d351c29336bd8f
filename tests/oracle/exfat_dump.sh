#!/usr/bin/env bash
# fsimg dump of exFAT images agrees with dump.exfat (exfatprogs) on images
# made by mkfs.exfat and by fsimg mkfs: every boot-sector field dump.exfat
# prints, the root's bitmap and up-case entries, the label; fsimg also
# verifies both boot checksums and the up-case TableChecksum.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v dump.exfat >/dev/null && command -v mkfs.exfat >/dev/null || { echo "exfatprogs missing: skipped"; exit 77; }
cd "$WORK"
compare() {  # compare IMAGE: dump.exfat's numbers == fsimg dump --json's
  local img=$1
  dump.exfat "$img" >ref.txt 2>&1 || { fail "dump.exfat $img"; return; }
  "$FSIMG" dump --json "$img" >ours.json || { fail "fsimg dump $img"; return; }
  if python3 - ref.txt ours.json <<'EOF'; then pass; else fail "$img: dump differs from dump.exfat"; fi
import json, re, sys
ref = open(sys.argv[1]).read()
j = json.load(open(sys.argv[2]))
bs, root = j["boot_sector"], j["root_directory"]
def val(label):
    m = re.search(r"^" + re.escape(label) + r":\s*(\S*)\s*$", ref, re.M)
    return m.group(1) if m else None
want = {
    "Volume Length(sectors)": bs["VolumeLength"],
    "FAT Offset(sector offset)": bs["FatOffset"],
    "FAT Length(sectors)": bs["FatLength"],
    "Cluster Heap Offset (sector offset)": bs["ClusterHeapOffset"],
    "Cluster Count": bs["ClusterCount"],
    "Root Cluster (cluster offset)": bs["FirstClusterOfRootDirectory"],
    "Volume Serial": "0x%x" % bs["VolumeSerialNumber"],  # dump.exfat prints no leading zeros
    "Sector Size Bits": bs["BytesPerSectorShift"],
    "Sector per Cluster bits": bs["SectorsPerClusterShift"],
    "Bitmap start cluster": root["allocation_bitmap"]["first_cluster"],
    "Bitmap size": root["allocation_bitmap"]["data_length"],
    "Upcase table start cluster": root["upcase_table"]["first_cluster"],
    "Upcase table size": root["upcase_table"]["data_length"],
    "Volume label character count": len(root["label"].encode("utf-16-le")) // 2,
}
bad = [f"{k}: dump.exfat {val(k)!r}, fsimg {v!r}" for k, v in want.items() if str(val(k)).lower() != str(v).lower()]
checks = [j["main_boot_region"]["checksum_ok"], j["backup_boot_region"]["checksum_ok"], j["backup_identical"],
          root["upcase_table"]["checksum_computed"] == root["upcase_table"]["table_checksum"] == 0xE619D30D,
          j["problems"] == []]
if bad or not all(checks):
    print("\n".join(bad), checks)
    sys.exit(1)
EOF
}
for size in 64M 300M 1G; do
  truncate -s $size ref-$size.img && mkfs.exfat -L REF ref-$size.img >/dev/null 2>&1
  compare ref-$size.img
  "$FSIMG" mkfs -q -t exfat -s $size -L "Données" ours-$size.img
  compare ours-$size.img
  rm -f ref-$size.img ours-$size.img
done
# 4096-byte sectors and a partition table (fsimg opens the partition itself;
# dump.exfat gets the volume cut out of the image).
"$FSIMG" mkfs -q -t exfat -s 300M --sector-size 4096 --partition-table gpt g.img
dd if=g.img of=g-vol.img bs=1M skip=1 count=297 status=none
"$FSIMG" dump --json g.img >g.json && "$FSIMG" dump --json g-vol.img >gv.json &&
  python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a['boot_sector']!=b['boot_sector'])" g.json gv.json &&
  pass || fail "dump of a GPT image differs from dump of its volume"
compare g-vol.img
# The OEM parameters sector: null for fsimg, 0xFF for mkfs.exfat 1.2.0.
truncate -s 64M m.img && mkfs.exfat m.img >/dev/null 2>&1
"$FSIMG" mkfs -q -t exfat -s 64M --volume-id 12345678 o.img  # a fixed serial: byte 100 below is its low byte (0x78)
[ "$("$FSIMG" dump --json m.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["main_boot_region"]["oem_parameters"])')" = 0xFF ] && pass || fail "mkfs.exfat OEM sector"
[ "$("$FSIMG" dump --json o.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["main_boot_region"]["oem_parameters"])')" = null ] && pass || fail "fsimg OEM sector"
# A damaged boot checksum is shown as such (the serial's low byte 0x78 becomes 0x01; with a
# serial from the clock it was 0x01 one time in 256, and the test failed).
printf '\x01' | dd of=o.img bs=1 seek=100 conv=notrunc status=none
"$FSIMG" dump o.img | grep "MISMATCH" >/dev/null && pass || fail "damaged checksum not reported"
finish
