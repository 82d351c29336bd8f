#!/usr/bin/env bash
# Every --json output validates against its JSON Schema in docs/schemas/
# (Draft 2020-12, checked with Debian's python3-jsonschema): dump, fsck, ls,
# mkfs, slack and each dump --what view, on FAT12/16/32, exFAT and NTFS, with and
# without a partition table, clean and damaged. The schemas fix the field set
# (no undocumented top-level field) and types; each has schema_version 1.
# cost: 20
here=$(dirname "$0"); . "$here/../lib.sh"
PY=/usr/bin/python3
$PY -c 'import jsonschema' 2>/dev/null || { echo "python3-jsonschema missing (scripts/install-deps): skipped"; exit 77; }
S="$FSIMG_SOURCE_DIR/docs/schemas"
cd "$WORK"
mkdir -p t/d && echo hi > t/a.txt && head -c 10000 /dev/zero > t/d/b.bin && echo x > "t/Long name here.txt"
export SOURCE_DATE_EPOCH=1700000000
"$FSIMG" mkfs -q -t fat12 -s 4M -L SMALL t12.img
"$FSIMG" mkfs -q -t fat16 -s 64M --partition-table mbr --from t t16.img
"$FSIMG" mkfs -q -t fat32 -s 300M --partition-table gpt --from t t32.img
"$FSIMG" mkfs -q -t exfat -s 64M -L EX --from t x.img
"$FSIMG" mkfs -q -t exfat -s 64M --partition-table gpt xg.img
"$FSIMG" mkfs -q -t ntfs -s 64M -L NT n.img
"$FSIMG" mkfs -q -t ntfs -s 64M --from t nf.img
cp t32.img bad.img  # BPB_BytsPerSec = 0 in the partition's boot sector and its backup: geometry underivable
off=$("$FSIMG" dump --json t32.img@1 | $PY -c 'import json,sys; print(json.load(sys.stdin)["volume_offset"])')
for at in $((off + 11)) $((off + 6 * 512 + 11)); do
  printf '\x00\x00' | dd of=bad.img bs=1 seek=$at conv=notrunc status=none
done

validate() {  # validate SCHEMA CMD...: the command's JSON stdout is valid
  local schema=$1; shift
  "$@" --json > out.json 2>err; local rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 4 ]; then fail "$* --json: exit $rc: $(cat err)"; return; fi
  if msg=$($PY - "$S/$schema.schema.json" out.json 2>&1 <<'PYEOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors[:5]:
    print("/".join(map(str, e.path)) or "(top)", ":", e.message[:200])
assert doc.get("schema_version") == 1, "schema_version is not 1"
sys.exit(1 if errors else 0)
PYEOF
  ); then pass; echo "$schema" >> used; else fail "$* --json against $schema: $msg"; fi
}
validate dump-fat "$FSIMG" dump t12.img
validate mkfs "$FSIMG" mkfs -t fat12 -s 4M -L SMALL m12.img
validate mkfs "$FSIMG" mkfs -t fat32 -s 300M --partition-table mbr --from t m32.img
validate mkfs "$FSIMG" mkfs -t exfat -s 64M --partition-table gpt mx.img
validate mkfs "$FSIMG" mkfs -t ntfs -s 64M --from t mn.img
head -c 100000 /dev/zero > raw.bin
validate disk "$FSIMG" disk --table mbr --part size=16M,fs=fat,from=t,bootable --part size=4M,image=raw.bin \
  --part size=4M --part size=4M --part size=8M,fs=exfat dm.img
validate disk "$FSIMG" disk --table gpt --part size=8M,type=esp,fs=fat,name=EFI --part size=16M,fs=ntfs,from=t dg.img
validate dump-fat "$FSIMG" dump t16.img@1
validate dump-fat "$FSIMG" dump t32.img@1
validate dump-fat "$FSIMG" dump bad.img@1
validate dump-exfat "$FSIMG" dump x.img
validate dump-exfat "$FSIMG" dump xg.img@1
validate dump-ntfs "$FSIMG" dump n.img
truncate -s 8M two.img  # two primary and two logical partitions: dump IMAGE prints the table only
printf 'label: dos\nstart=2048, size=4096, type=c\nstart=6144, size=8192, type=5\nstart=8192, size=2048, type=7\nstart=12288, size=2048, type=c\n' |
  sfdisk -q two.img >/dev/null
validate dump-table "$FSIMG" dump two.img
cp two.img loop.img  # the second EBR (LBA 10240) links back to the first: fsck @5 reports part.ebr.chain
printf '\x05' | dd of=loop.img bs=1 seek=$((10240 * 512 + 446 + 16 + 4)) conv=notrunc status=none
printf '\x01' | dd of=loop.img bs=1 seek=$((10240 * 512 + 446 + 16 + 12)) conv=notrunc status=none
validate dump-table "$FSIMG" dump loop.img
"$FSIMG" mkfs -q -t fat12 -s 1M loop5.img && dd if=loop5.img of=loop.img bs=512 seek=8192 conv=notrunc status=none
validate fsck "$FSIMG" fsck loop.img@5
grep -q '"part.ebr.chain"' out.json && pass || fail "fsck loop.img@5 --json lacks part.ebr.chain"
validate fsck "$FSIMG" fsck t12.img
validate fsck "$FSIMG" fsck t32.img@1
validate fsck "$FSIMG" fsck bad.img@1
validate fsck "$FSIMG" fsck x.img
validate fsck "$FSIMG" fsck n.img
validate fsck "$FSIMG" fsck "$FSIMG_SOURCE_DIR/images/ntfs-boot-oem_id.img.gz"
validate ls "$FSIMG" ls -R t32.img@1
validate ls "$FSIMG" ls -R x.img
validate ls "$FSIMG" ls t16.img@1 /d
cp t16.img del.img && "$FSIMG" rm -q -r del.img@1 /d || fail "rm for ls --deleted"
validate ls "$FSIMG" ls --deleted del.img@1
grep -q '"state": "recoverable"' out.json && pass || fail "ls --deleted --json lists no recoverable entry"
validate dump-fat-fat "$FSIMG" dump --what fat t16.img@1
validate dump-fat-fat "$FSIMG" dump --what fat t32.img@1
validate dump-fat-dir "$FSIMG" dump --what dir / t32.img@1
validate dump-fat-extents "$FSIMG" dump --what extents /d/b.bin t32.img@1
validate dump-exfat-bitmap "$FSIMG" dump --what bitmap x.img
validate dump-exfat-dir "$FSIMG" dump --what dir / x.img
validate dump-exfat-extents "$FSIMG" dump --what extents /d/b.bin x.img
validate dump-ntfs-mft "$FSIMG" dump --what mft 0 n.img
validate dump-ntfs-mft "$FSIMG" dump --what mft 5 n.img
validate dump-ntfs-index "$FSIMG" dump --what index / nf.img
validate dump-ntfs-index "$FSIMG" dump --what index /d nf.img
validate dump-ntfs-extents "$FSIMG" dump --what extents /d/b.bin nf.img
validate dump-ntfs-extents "$FSIMG" dump --what extents /a.txt nf.img
validate ls "$FSIMG" ls -R nf.img
validate slack "$FSIMG" slack t
validate slack "$FSIMG" slack -t fat32,exfat,ntfs -c 4K,64K --volume-size 1G t
validate slack "$FSIMG" slack -t fat32 -c 4K --verify t

# The damaged FAT image really has findings and a null fat_type (the schema's other branch).
"$FSIMG" fsck --json bad.img@1 > bad.json; $PY -c 'import json,sys; j=json.load(sys.stdin); assert j["findings"] and j["fat_type"] is None, j' < bad.json \
  && pass || fail "bad.img@1: no findings or a fat_type"
# Every schema file is used above.
for f in "$S"/*.schema.json; do
  grep -qx "$(basename "$f" .schema.json)" used && pass || fail "$(basename "$f") is not checked"
done
# The check can fail: an undocumented field or a missing schema_version is refused.
"$FSIMG" fsck --json t12.img | $PY -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1])); doc = json.load(sys.stdin)
v = jsonschema.Draft202012Validator(schema)
assert v.is_valid(doc)
assert not v.is_valid(dict(doc, undocumented=1))
d = dict(doc); del d["schema_version"]; assert not v.is_valid(d)
' "$S/fsck.schema.json" && pass || fail "the fsck schema does not refuse a wrong document"
finish
