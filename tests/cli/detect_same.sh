#!/usr/bin/env bash
# One detector (fs::detect) behind every command: an image is read as the
# same filesystem by fsck, dump, ls, cat, extract and slack, also when its
# sector 0 is damaged and a backup boot sector stands in.
#  - images/ntfs-boot-oem_id.img.gz: NTFS whose OEM ID is overwritten (its
#    jump EB 52 90 is also a FAT jump): every command reads it as NTFS,
#    through the backup boot sector, with the files of ntfs-clean.img.gz.
#  - a FAT32 image with sector 0 zeroed: read and checked through the
#    backup boot sector at sector 6 (fat.boot.main-damaged).
#  - sector 0 of zeros with no backup: every command says what it holds.
here=$(dirname "$0"); . "$here/../lib.sh"
I="$FSIMG_SOURCE_DIR/images"
bad="$I/ntfs-boot-oem_id.img.gz" good="$I/ntfs-clean.img.gz"
json_field() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval("j" + sys.argv[1]))' "$1"; }

"$FSIMG" fsck --json "$bad" >"$WORK/fsck.json"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["filesystem"] == "ntfs" and j["fat_type"] is None, j
assert j["exit_code"] == 4 and [f["code"] for f in j["findings"]] == ["ntfs.boot.oem_id"], j
assert j["summary"]["complete"] and j["summary"]["files"] >= 4, j["summary"]' "$WORK/fsck.json" && pass || fail "fsck: $(cat "$WORK/fsck.json")"
"$FSIMG" dump --json "$bad" >"$WORK/d.json" 2>"$WORK/err"; rc=$?
[ "$rc" = 1 ] && python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["filesystem"] == "ntfs" and j["boot_sector_in_use"] == "backup", j
assert [p["code"] for p in j["problems"]] == ["ntfs.boot.oem_id"], j["problems"]
assert j["geometry"]["cluster_bytes"] == 4096 and j["backup_boot_sector_identical"] is False, j
assert j["volume"]["label"] == "TESTLBL", j' "$WORK/d.json" && pass || fail "dump: rc $rc $(cat "$WORK/err")"
"$FSIMG" dump "$bad" >"$WORK/d.txt" && fail "dump text: exit 0" || true
grep -q 'read through      the backup boot sector at byte' "$WORK/d.txt" && pass || fail "dump text: $(head "$WORK/d.txt")"
[ "$("$FSIMG" dump --what mft 5 --json "$bad" 2>/dev/null | json_field '["record"]')" = 5 ] && pass || fail "dump --what mft 5"
# ls, cat and extract read the same tree as the undamaged twin, with one warning.
"$FSIMG" ls -l -R "$bad" >"$WORK/ls.bad" 2>"$WORK/err" && pass || fail "ls: $(cat "$WORK/err")"
"$FSIMG" ls -l -R "$good" >"$WORK/ls.good"
cmp -s "$WORK/ls.bad" "$WORK/ls.good" && [ -s "$WORK/ls.good" ] && pass || fail "ls -l -R differs: $(diff "$WORK/ls.bad" "$WORK/ls.good")"
grep -q 'warning: .*the boot sector (sector 0) is damaged (.*ntfs.boot.oem_id.*reading through the backup boot sector' \
  "$WORK/err" && [ "$(wc -l <"$WORK/err")" = 1 ] && pass || fail "ls warning: $(cat "$WORK/err")"
"$FSIMG" ls --json -R "$bad" 2>/dev/null | python3 -c 'import json,sys; e=json.load(sys.stdin)["entries"]; assert {x["path"] for x in e} >= {"/A.TXT", "/DIR/C.TXT"}, e' \
  && pass || fail "ls --json"
cmp -s <("$FSIMG" cat -q "$bad" /DIR/C.TXT) <("$FSIMG" cat "$good" /DIR/C.TXT) && pass || fail "cat /DIR/C.TXT"
"$FSIMG" extract -q "$bad" -C "$WORK/x.bad" && "$FSIMG" extract -q "$good" -C "$WORK/x.good" \
  && diff -r "$WORK/x.bad" "$WORK/x.good" >/dev/null && pass || fail "extract trees differ"
# mkfs's overwrite guard names it NTFS as well (not FAT, whose jump it also carries).
gzip -dc "$bad" >"$WORK/oem.img"
cd "$WORK" || exit 1
expect_fail 3 "already holds an NTFS filesystem, readable through its backup boot sector" \
  "$FSIMG" mkfs -t fat32 -s 40M "$WORK/oem.img"
# slack charges the same tree (the undamaged twin's numbers).
"$FSIMG" slack -q --json -t ntfs,exfat -c 4K "$bad" | python3 -c 'import json,sys; j=json.load(sys.stdin); j.pop("sources", None); print(json.dumps(j["rows"], sort_keys=True))' >"$WORK/s.bad"
"$FSIMG" slack -q --json -t ntfs,exfat -c 4K "$good" | python3 -c 'import json,sys; j=json.load(sys.stdin); j.pop("sources", None); print(json.dumps(j["rows"], sort_keys=True))' >"$WORK/s.good"
[ -s "$WORK/s.good" ] && cmp -s "$WORK/s.bad" "$WORK/s.good" && pass || fail "slack rows differ"

# FAT32 with sector 0 zeroed: read through the backup at sector 6 by every command.
mkdir -p "$WORK/tree/DIR"; printf 'hello\n' >"$WORK/tree/DIR/H.TXT"
f="$WORK/f32.img"
"$FSIMG" mkfs -q -t fat32 -s 40M --volume-id 1234ABCD --from "$WORK/tree" "$f" || fail "mkfs fat32"
dd if=/dev/zero of="$f" bs=512 count=1 conv=notrunc status=none
"$FSIMG" fsck --json "$f" >"$WORK/f.json"; rc=$?
[ "$rc" = 4 ] && python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["filesystem"] == "fat" and j["fat_type"] == "FAT32", j
assert [f["code"] for f in j["findings"]] == ["fat.boot.main-damaged"], j["findings"]
assert j["summary"]["complete"] and j["summary"]["files"] == 1, j["summary"]' "$WORK/f.json" && pass || fail "fsck fat32 backup: rc $rc $(cat "$WORK/f.json")"
[ "$("$FSIMG" cat -q "$f" /dir/h.txt)" = hello ] && pass || fail "cat through the FAT32 backup"
[ "$("$FSIMG" ls -q -R "$f" | tr '\n' ' ')" = "/DIR/ /DIR/H.TXT " ] && pass || fail "ls through the FAT32 backup"
[ "$("$FSIMG" dump -q --json "$f" | json_field '["geometry"]["fat_type"]')" = FAT32 ] && pass || fail "dump through the FAT32 backup"
"$FSIMG" slack -q --json -t fat32 -c 4K "$f" | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["tree"]["files"] == 1, j["tree"]' \
  && pass || fail "slack through the FAT32 backup"
expect_fail 3 "already holds a FAT filesystem, readable through its backup boot sector at sector 6" \
  "$FSIMG" mkfs -t fat32 -s 40M "$f"

# Nothing fsimg reads: each command says what sector 0 holds.
head -c 1048576 /dev/zero >"$WORK/zero.img"
for c in "fsck" "ls" "dump" "cat" "slack"; do
  arg=; [ "$c" = cat ] && arg=/x
  "$FSIMG" $c "$WORK/zero.img" $arg >/dev/null 2>"$WORK/err"
  grep -q 'not FAT, exFAT or NTFS: it holds only zeros' "$WORK/err" && pass || fail "$c of zeros: $(cat "$WORK/err")"
done
finish
