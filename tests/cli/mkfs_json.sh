#!/usr/bin/env bash
# mkfs --json prints one JSON object (and no summary line) read back from the
# image it wrote, and its values are the ones independent tools read: the MBR
# disk signature, PARTUUID, start and size as sfdisk shows them; the GPT
# partition's unique GUID, type and size as sgdisk shows them; the FAT32 free
# space as mtools' mdir counts it; the exFAT serial as tune.exfat -i prints
# it; partition N of an existing disk (IMAGE@N) at the offset sfdisk gives.
# cost: 6
here=$(dirname "$0"); . "$here/../lib.sh"
for t in sfdisk sgdisk mdir tune.exfat; do
  command -v $t > /dev/null || { echo "$t missing (scripts/install-deps): skipped"; exit 77; }
done
export SOURCE_DATE_EPOCH=1700000000 MTOOLS_SKIP_CHECK=1
cd "$WORK"
mkdir -p t/d && echo hi > t/a.txt && head -c 10000 /dev/urandom > t/d/b.bin
field() {  # field FILE KEY[.KEY]: the value, as Python prints it
  python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(v)' "$1" "$2"
}

# FAT32 in an MBR: the summary is the JSON alone; PARTUUID and placement as sfdisk reads them.
"$FSIMG" mkfs -t fat32 -s 300M --partition-table mbr -L BOOT --from t --json m.img > m.json 2> err &&
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' m.json && pass || fail "fat32: $(cat err m.json)"
sig=$(sfdisk -d m.img | sed -n 's/^label-id: 0x//p')
read -r start size < <(sfdisk -d m.img | sed -n 's/.*start= *\([0-9]*\), size= *\([0-9]*\).*/\1 \2/p')
[ "$(field m.json partition.partuuid)" = "$sig-01" ] &&
  [ "$(field m.json disk.disk_signature)" = "$sig" ] && pass || fail "fat32: partuuid $(field m.json partition.partuuid), sfdisk $sig"
[ "$(field m.json partition.offset)" = $((start * 512)) ] && [ "$(field m.json partition.size)" = $((size * 512)) ] &&
  [ "$(field m.json partition.type)" = 0x0C ] && pass || fail "fat32: placement $(cat m.json)"
free=$(mdir -i m.img@@$((start * 512)) :: | sed -n 's/ bytes free//p' | tr -d ' ')
[ "$(($(field m.json free_clusters) * $(field m.json cluster_bytes)))" = "$free" ] && pass ||
  fail "fat32: free clusters $(field m.json free_clusters) x $(field m.json cluster_bytes), mdir $free bytes"
[ "$(field m.json filesystem) $(field m.json label) $(field m.json files) $(field m.json directories) $(field m.json errors)" = \
  "FAT32 BOOT 2 2 0" ] && pass || fail "fat32: $(cat m.json)"

# NTFS in a GPT: the partition's unique GUID (PARTUUID), type and size as sgdisk reads them.
"$FSIMG" mkfs -t ntfs -s 64M --partition-table gpt --json g.img > g.json 2> err || fail "ntfs: $(cat err)"
sgdisk -i 1 g.img > sg.out
[ "$(field g.json partition.partuuid)" = "$(sed -n 's/^Partition unique GUID: //p' sg.out | tr A-F a-f)" ] &&
  [ "$(field g.json partition.type)" = "$(sed -n 's/^Partition GUID code: \([0-9A-F-]*\).*/\1/p' sg.out)" ] &&
  [ "$(field g.json partition.type_name)" = basic-data ] &&
  [ "$(field g.json partition.size)" = $(($(sed -n 's/^Partition size: \([0-9]*\) sectors.*/\1/p' sg.out) * 512)) ] &&
  [ "$(field g.json filesystem)" = NTFS ] && pass || fail "ntfs: $(cat g.json sg.out)"

# exFAT without a table: no partition, the serial tune.exfat reads.
"$FSIMG" mkfs -t exfat -s 32M --json x.img > x.json 2> err || fail "exfat: $(cat err)"
serial=$(tune.exfat -i x.img | sed -n 's/^volume serial : 0x//p' | tr a-f A-F)
[ "$(field x.json volume_id)" = "${serial:0:4}-${serial:4:4}" ] && [ "$(field x.json partition)" = None ] &&
  [ "$(field x.json disk)" = None ] && pass || fail "exfat: serial $serial: $(cat x.json)"

# Partition 2 of a disk sfdisk made (IMAGE@N).
truncate -s 64M d.img
printf 'label: dos\nstart=2048, size=40960, type=c\nstart=43008, type=7\n' | sfdisk -q d.img
"$FSIMG" mkfs -t exfat --json d.img@2 > d.json 2> err || fail "IMAGE@2: $(cat err)"
[ "$(field d.json partition.number)" = 2 ] && [ "$(field d.json partition.offset)" = $((43008 * 512)) ] &&
  [ "$(field d.json image)" = d.img ] && pass || fail "IMAGE@2: $(cat d.json)"
finish
