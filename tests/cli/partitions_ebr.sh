#!/usr/bin/env bash
# MBR logical partitions (issue 21): a disk laid out by sfdisk with a primary
# FAT partition, an extended partition and two logical partitions holding a
# FAT and an exFAT volume. fsimg numbers the logical partitions 5 and 6 as
# Linux and sfdisk do, at the LBAs sfdisk reports; IMAGE@5/@6 read the files
# back (mtools reads the same bytes at the same offset); dump IMAGE lists the
# table; @2 names the extended partition. Damaged EBR chains (a loop, a link
# outside the extended partition, a missing 55 AA) end the walk with a
# problem line instead of hanging or failing, and the partitions before the
# damage stay readable.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v sfdisk >/dev/null || { echo "sfdisk missing (scripts/install-deps): skipped"; exit 77; }
cd "$WORK"
export SOURCE_DATE_EPOCH=1700000000
truncate -s 96M disk.img
sfdisk -q disk.img <<'EOF' >/dev/null
label: dos
start=2048, size=40960, type=c
start=45056, size=81920, type=5
start=47104, size=20480, type=c
start=69632, size=40960, type=7
EOF
# What sfdisk says the table holds: "N START SIZE TYPE" per partition.
sfdisk --json disk.img | python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    print(p["node"].rsplit("img", 1)[1], p["start"], p["size"], p["type"])' > sfdisk.txt
[ "$(wc -l < sfdisk.txt)" = 4 ] || fail "sfdisk lists $(cat sfdisk.txt)"
start_of() { awk -v n="$1" '$1 == n { print $2 }' sfdisk.txt; }
size_of() { awk -v n="$1" '$1 == n { print $3 }' sfdisk.txt; }

printf 'primary\n' > p1.txt
printf 'logical five\n' > l5.txt
head -c 70001 /dev/urandom > l6.bin
mkdir -p t1 t5 t6 && cp p1.txt t1/ && cp l5.txt t5/ && cp l6.bin t6/
place() {  # place N TYPE DIR: mkfs a volume of partition N's size and copy it in
  local n=$1 type=$2 dir=$3
  "$FSIMG" mkfs -q -t "$type" -s $(($(size_of "$n") * 512)) --from "$dir" "v$n.img" || fail "mkfs v$n"
  dd if="v$n.img" of=disk.img bs=512 seek="$(start_of "$n")" conv=notrunc status=none
}
place 1 fat16 t1
place 5 fat16 t5
place 6 exfat t6

# dump IMAGE: the table, as sfdisk numbers and places it.
"$FSIMG" dump disk.img > table.txt 2>err || fail "dump disk.img: exit $? ($(cat err))"
for n in 1 2 5 6; do
  if grep -q "^  #$n   start LBA $(start_of "$n"), $(size_of "$n") sectors" table.txt; then pass
  else fail "dump lacks partition $n at LBA $(start_of "$n") + $(size_of "$n"): $(cat table.txt)"; fi
done
grep -q "^  #2 .*type 0x05 extended" table.txt && pass || fail "#2 not shown as extended: $(cat table.txt)"
ebr6=$(($(start_of 6) - 2048))  # sfdisk puts each EBR 2048 sectors before its logical
grep -q "^  #6 .*logical, EBR at LBA $ebr6" table.txt && pass || fail "#6 EBR LBA: $(cat table.txt)"
"$FSIMG" dump --json disk.img > t.json || fail "dump --json disk.img"
python3 - t.json sfdisk.txt <<'PY' && pass || fail "dump --json table differs from sfdisk: $(cat t.json)"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["filesystem"] is None and doc["partition_table"]["problems"] == []
got = [(p["index"], p["first_lba"], p["sector_count"], p["role"]) for p in doc["partition_table"]["partitions"]]
want = []
for line in open(sys.argv[2]):
    n, start, size, t = line.split()
    role = "extended" if t == "5" else "logical" if int(n) >= 5 else "primary"
    want.append((int(n), int(start), int(size), role))
assert got == want, (got, want)
PY

# Each logical partition reads back exactly, and as mtools reads it.
"$FSIMG" cat disk.img@5 /l5.txt > got5 && cmp -s got5 l5.txt && pass || fail "cat @5"
"$FSIMG" cat disk.img@6 /l6.bin > got6 && cmp -s got6 l6.bin && pass || fail "cat @6 (exFAT)"
"$FSIMG" cat disk.img@1 /p1.txt > got1 && cmp -s got1 p1.txt && pass || fail "cat @1"
MTOOLS_SKIP_CHECK=1 mtype -i "disk.img@@$(($(start_of 5) * 512))" ::/l5.txt > m5 2>/dev/null
cmp -s m5 l5.txt && pass || fail "mtools reads another file at partition 5's offset"
"$FSIMG" fsck disk.img@5 > /dev/null 2>err && pass || fail "fsck @5: $(cat err)"
"$FSIMG" fsck disk.img@6 > /dev/null 2>err && pass || fail "fsck @6: $(cat err)"
"$FSIMG" ls disk.img@5 | grep -q 'l5.txt' && pass || fail "ls @5"
expect_fail 2 "is an extended partition (type 0x05): it holds the logical partitions disk.img@5, disk.img@6" \
  "$FSIMG" ls disk.img@2
expect_fail 2 "has no partition 7" "$FSIMG" ls disk.img@7

# Damaged chains. The link to the second EBR is entry 2 of the first EBR, at
# LBA start(2), byte 446 + 16 + 8 (relative LBA, u32 little-endian).
ebr1=$(start_of 2)
link_at=$((ebr1 * 512 + 446 + 16 + 8))
put32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($2 & 255)) $(($2 >> 8 & 255)) $(($2 >> 16 & 255)) $(($2 >> 24 & 255)))" |
  dd of="$1" bs=1 seek="$3" conv=notrunc status=none; }

cp disk.img loop.img  # the second EBR links back to the first: a loop
put32 loop.img 0 $((ebr6 * 512 + 446 + 16 + 8))
printf '\x05' | dd of=loop.img bs=1 seek=$((ebr6 * 512 + 446 + 16 + 4)) conv=notrunc status=none
printf '\x01' | dd of=loop.img bs=1 seek=$((ebr6 * 512 + 446 + 16 + 12)) conv=notrunc status=none
timeout 20 "$FSIMG" dump loop.img > loop.txt 2>err || fail "dump loop.img: exit $? ($(cat err))"
grep -q "problem: the EBR at LBA $ebr6 links back to the EBR at LBA $ebr1 (a loop)" loop.txt && pass ||
  fail "no loop problem: $(cat loop.txt)"
[ "$(grep -c '^  #' loop.txt)" = 4 ] && pass || fail "loop.img lists other than 4 partitions: $(cat loop.txt)"
timeout 20 "$FSIMG" cat loop.img@6 /l6.bin > got6 && cmp -s got6 l6.bin && pass || fail "cat loop.img@6"

cp disk.img far.img  # the first EBR links past the extended partition
put32 far.img 4000000 "$link_at"
timeout 20 "$FSIMG" dump far.img > far.txt 2>err || fail "dump far.img: exit $? ($(cat err))"
grep -q "problem: an EBR link points to LBA $((ebr1 + 4000000)), outside the extended partition" far.txt && pass ||
  fail "no outside-link problem: $(cat far.txt)"
grep -q '^  #5 ' far.txt && ! grep -q '^  #6 ' far.txt && pass || fail "far.img: $(cat far.txt)"
"$FSIMG" cat far.img@5 /l5.txt > got5 && cmp -s got5 l5.txt && pass || fail "cat far.img@5"
expect_fail 2 "has no partition 6" "$FSIMG" ls far.img@6

cp disk.img nosig.img  # the second EBR lost its 55 AA
printf '\x00\x00' | dd of=nosig.img bs=1 seek=$((ebr6 * 512 + 510)) conv=notrunc status=none
"$FSIMG" dump --json nosig.img > ns.json || fail "dump --json nosig.img"
python3 -c '
import json, sys
t = json.load(open("ns.json"))["partition_table"]
assert [p["index"] for p in t["partitions"]] == [1, 2, 5], t
assert len(t["problems"]) == 1 and "does not end in 55 AA" in t["problems"][0], t' && pass ||
  fail "nosig.img: $(cat ns.json)"

# A logical partition past its extended partition is listed with a problem.
cp disk.img over.img
put32 over.img $(($(size_of 2) - (ebr6 - ebr1) - 2048 + 100)) $((ebr6 * 512 + 446 + 12))
"$FSIMG" dump over.img > over.txt || fail "dump over.img"
grep -q "problem: logical partition 6 .* runs past the end of its extended partition" over.txt && pass ||
  fail "no overrun problem: $(cat over.txt)"

# fsck of any partition of such a disk reports the table's damage once, by code.
fsck_codes() {  # fsck_codes IMAGE@N: "severity code" per finding
  "$FSIMG" fsck --json "$1" 2>/dev/null | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]: print(f["severity"], f["code"])'
}
[ "$(fsck_codes loop.img@5)" = "error part.ebr.chain" ] && pass || fail "fsck loop.img@5: $(fsck_codes loop.img@5)"
"$FSIMG" fsck loop.img@5 > /dev/null 2>&1; [ $? = 4 ] && pass || fail "fsck loop.img@5 does not exit 4"
[ "$(fsck_codes far.img@1)" = "error part.ebr.chain" ] && pass || fail "fsck far.img@1: $(fsck_codes far.img@1)"
[ "$(fsck_codes over.img@5)" = "warning part.ebr.logical-outside" ] && pass ||
  fail "fsck over.img@5: $(fsck_codes over.img@5)"
[ -z "$(fsck_codes disk.img@6)" ] && pass || fail "fsck of the sound disk: $(fsck_codes disk.img@6)"
finish
