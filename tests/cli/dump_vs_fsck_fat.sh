#!/usr/bin/env bash
# dump's derived geometry equals what fsck.fat -v reads from the same boot
# sector (cluster bytes, first FAT byte, FAT bytes, data start, cluster count,
# total and hidden sectors), for images made by mkfs.fat and by fsimg; dump
# finds the filesystem inside MBR/GPT images and IMAGE@N selects it.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v fsck.fat >/dev/null || { echo "fsck.fat missing: skipped"; exit 77; }
cd "$WORK"
compare() {  # compare IMAGE[@N] RAWFILE: dump of the first vs fsck.fat -v of the second
  local spec=$1 raw=$2
  "$FSIMG" dump --json "$spec" > d.json || { fail "dump $spec"; return; }
  fsck.fat -n -v "$raw" > f.txt 2>&1
  python3 - d.json f.txt <<'PY' && pass || fail "dump $spec disagrees with fsck.fat -v"
import json, re, sys
d = json.load(open(sys.argv[1])); g = d["geometry"]; b = d["boot_sector"]
f = open(sys.argv[2]).read()
def num(pattern):
    m = re.search(pattern, f)
    if not m: sys.exit(f"fsck.fat output lacks {pattern!r}:\n{f}")
    return int(m.group(1))
bps = g["bytes_per_sector"]
want = {
  "cluster_bytes": num(r"(\d+) bytes per cluster"),
  "first_fat_byte": num(r"First FAT starts at byte (\d+)"),
  "fat_bytes": num(r"(\d+) bytes per FAT"),
  "data_start_byte": num(r"Data area starts at byte (\d+)"),
  "cluster_count": num(r"(\d+) data clusters"),
  "total_sectors": num(r"(\d+) sectors total"),
  "hidden_sectors": num(r"(\d+) hidden sectors"),
}
got = {
  "cluster_bytes": g["cluster_bytes"], "first_fat_byte": g["first_fat_sector"] * bps,
  "fat_bytes": g["fat_size_sectors"] * bps, "data_start_byte": g["first_data_sector"] * bps,
  "cluster_count": g["cluster_count"], "total_sectors": g["total_sectors"],
  "hidden_sectors": b["BPB_HiddSec"],
}
bad = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
if bad: sys.exit(f"dump vs fsck.fat: {bad}")
PY
}
# mkfs.fat images
for args in "-F 12" "-F 16" "-F 32" "-F 16 -s 16" "-F 32 -s 1 -S 4096" "-F 12 -S 4096"; do
  rm -f m.img; truncate -s 300M m.img
  case "$args" in *"-F 12"*) truncate -s 8M m.img ;; esac
  mkfs.fat $args m.img >/dev/null 2>&1 || { fail "mkfs.fat $args"; continue; }
  compare m.img m.img
done
# fsimg images, bare and inside partition tables
export SOURCE_DATE_EPOCH=1700000000
for args in "-t fat12 -s 4M" "-t fat16 -s 200M" "-t fat32 -s 1G" "-t fat32 -s 1G --sector-size 4096"; do
  rm -f o.img; "$FSIMG" mkfs -q $args o.img && compare o.img o.img
done
for pt in mbr gpt; do
  rm -f p.img; "$FSIMG" mkfs -q -t fat32 -s 600M --partition-table $pt p.img
  dd if=p.img of=part.raw bs=1M skip=1 status=none
  compare p.img part.raw      # one partition: opened without @N
  compare p.img@1 part.raw
  "$FSIMG" dump --json p.img | python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["partition_table"]; assert d["volume_offset"]==1048576 and t["kind"]=="'$pt'" and t["partitions"][0]["first_lba"]==2048, d' && pass || fail "dump $pt table fields"
  "$FSIMG" dump p.img@2 >out 2>err; rc=$?
  [ $rc = 2 ] && grep -q "no partition 2" err && pass || fail "dump p.img@2: exit $rc, $(cat err)"
done
finish
