#!/usr/bin/env bash
# NTFS compressed files (LZNT1 in compression units of 16 clusters, issue
# 8): images made by mkntfs (512 B, 1 KiB and 4 KiB clusters) and filled
# through an ntfs-3g FUSE mount with -o compression inside a directory
# given the compressed attribute (system.ntfs_attrib_be 0x800), so every
# new file in it is compressed: text larger than a unit (compressed units),
# random data (units stored as is, the last one as uncompressed chunks), a
# file with a hole (sparse units), a file smaller than a unit, one of
# exactly 64 KiB, an empty one, a file grown to 1 MiB past its initialized
# size, and one overwritten in the middle after creation. Checked: the
# $DATA attribute carries the compressed flag and unit 4 (fsimg dump --json
# --what mft) and at least one unit is really compressed (fewer clusters
# than data); fsimg cat and fsimg extract give the source's bytes (sha256),
# ls -l the sizes, fsck -n finds the image clean (the sparse runs of
# compression units are no finding) and 64 KiB clusters refuse compression.
here=$(dirname "$0"); . "$here/../lib.sh"
for t in mkntfs ntfs-3g fusermount python3 sha256sum; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
[ -w /dev/fuse ] || { echo "/dev/fuse not usable: skipped"; exit 77; }

S=$WORK/src
mkdir -p "$S"
python3 - "$S" <<'EOF' || fail "making the source files"
import os, random, sys
s = sys.argv[1]
r = random.Random(8)
def put(name, data):
    open(os.path.join(s, name), "wb").write(data)
put("text.txt", "".join("line %d: the quick brown fox %s\n" % (i, "jumps" * (i % 7)) for i in range(12000)).encode())
put("random.bin", bytes(r.getrandbits(8) for _ in range(200000)))
put("small.txt", b"hello, compressed world\n" * 150)
put("small-random.bin", bytes(r.getrandbits(8) for _ in range(10000)))
put("exact-64k.bin", b"".join(b"%08d" % i for i in range(8192)))
put("empty", b"")
put("tiny", b"x")
EOF
mkdir -p "$WORK/mnt"

# fill IMG CLUSTER: mkntfs, mount with compression, write the files into /z.
fill() {
  local img=$1 c=$2 m=$WORK/mnt
  truncate -s 48M "$img"
  mkntfs -F -Q -q -c "$c" "$img" >/dev/null 2>&1 || { fail "mkntfs -c $c"; return 1; }
  ntfs-3g -o compression "$img" "$m" 2>"$WORK/err" || { fail "ntfs-3g mount -c $c: $(cat "$WORK/err")"; return 1; }
  mkdir "$m/z"
  mkdir -p "$WORK/src-$c"
  cp "$S"/* "$WORK/src-$c/"
  python3 - "$m/z" "$S" "$WORK/src-$c" <<'EOF' || fail "writing through ntfs-3g -c $c"
import os, shutil, sys
z, s, ref = sys.argv[1], sys.argv[2], sys.argv[3]
os.setxattr(z, "system.ntfs_attrib_be", bytes.fromhex("00000800"))  # FILE_ATTRIBUTE_COMPRESSED
for n in os.listdir(s):
    shutil.copyfile(os.path.join(s, n), os.path.join(z, n))
def both(name, write):  # the same writes on the mount and in the reference directory
    for d in (z, ref):
        p = os.path.join(d, name)
        with open(p, "r+b" if os.path.exists(p) else "wb") as f:
            write(f)
def holey(f):  # 5,000 bytes, a hole to 1 MiB, 12,000 bytes
    f.write(b"head" * 1250); f.seek(1 << 20); f.write(b"tail" * 3000)
both("holey.bin", holey)
def grown(f):  # grown by truncate: bytes past the written ones read as zeros
    f.write(b"grow" * 4000); f.truncate(1 << 20)
both("grown.bin", grown)
shutil.copyfile(os.path.join(s, "text.txt"), os.path.join(z, "patched.txt"))
shutil.copyfile(os.path.join(s, "text.txt"), os.path.join(ref, "patched.txt"))
def patch(f):  # rewritten in the middle of its second unit
    f.seek(70000); f.write(b"PATCHED" * 100)
both("patched.txt", patch)
EOF
  fusermount -u "$m" || { fail "fusermount -u"; return 1; }
}

# The $DATA attribute of /z/NAME as fsimg dump --json shows it: "flags unit data_size runs_allocated_clusters".
data_attr() {
  local img=$1 name=$2 rec
  rec=$("$FSIMG" ls --json "$img" /z | python3 -c 'import json,sys
e = [x for x in json.load(sys.stdin)["entries"] if x["name"] == sys.argv[1]]
print(e[0]["mft_record"] if e else "")' "$name")
  [ -n "$rec" ] || return 1
  "$FSIMG" dump --json --what mft "$rec" "$img" | python3 -c 'import json,sys
r = json.load(sys.stdin)
a = [a for a in r["attributes"] if a["type"] == 128 and a["name"] == ""][0]
if not a["non_resident"]:
    print(a["flags"], "resident", 0, 0); sys.exit()
alloc = sum(x["length"] for x in a["runs"] if x["lcn"] is not None)
print(a["flags"], a["compression_unit"], a["data_size"], alloc)'
}

for c in 4096 1024 512; do
  img=$WORK/comp-$c.img
  fill "$img" "$c" || continue
  ref=$WORK/src-$c
  names=$(cd "$ref" && ls)
  # Compressed flag and unit on the big files; text.txt takes fewer clusters than its size.
  read -r flags unit size alloc <<<"$(data_attr "$img" text.txt)"
  [ "$flags" = 1 ] && [ "$unit" = 4 ] && pass || fail "-c $c text.txt: flags $flags unit $unit (not compressed)"
  [ -n "$alloc" ] && [ $((alloc * c)) -lt $((size / 2)) ] && pass ||
    fail "-c $c text.txt: $alloc clusters for $size bytes: not really compressed"
  read -r flags unit size alloc <<<"$(data_attr "$img" random.bin)"
  [ "$flags" = 1 ] && [ $((alloc * c)) -ge "$size" ] && pass || fail "-c $c random.bin: flags $flags, $alloc clusters"
  # cat and extract: byte for byte.
  for n in $names; do
    want=$(sha256sum < "$ref/$n" | cut -d' ' -f1)
    got=$("$FSIMG" cat "$img" "/z/$n" 2>"$WORK/err" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$want" ] && pass || fail "-c $c cat /z/$n differs: $(cat "$WORK/err")"
  done
  out=$WORK/out-$c
  if "$FSIMG" extract -q "$img" /z -C "$out" 2>"$WORK/err"; then pass; else fail "-c $c extract: $(cat "$WORK/err")"; fi
  diff -r "$ref" "$out/z" >"$WORK/diff" 2>&1 && pass || { fail "-c $c extract differs"; head "$WORK/diff"; }
  # ls -l sizes against the sources.
  want=$(cd "$ref" && for n in $names; do echo "$(stat -c %s "$n") $n"; done | sort -k2)
  got=$("$FSIMG" ls --json "$img" /z | python3 -c 'import json,sys
for x in sorted(json.load(sys.stdin)["entries"], key=lambda x: x["name"]): print(x["size"], x["name"])')
  [ "$got" = "$want" ] && pass || fail "-c $c ls sizes: $got"
  "$FSIMG" ls -l "$img" /z | grep ' 1060576 .*holey.bin$' >/dev/null && pass ||
    fail "-c $c ls -l holey.bin: $("$FSIMG" ls -l "$img" /z | grep holey)"
  "$FSIMG" ls --json "$img" /z | python3 -c 'import json,sys
e = {x["name"]: x for x in json.load(sys.stdin)["entries"]}
sys.exit(0 if e["text.txt"].get("compressed") else 1)' && pass || fail "-c $c ls --json: text.txt not marked compressed"
  # fsck: clean, sparse runs of compression units are no finding.
  "$FSIMG" fsck -n "$img" >"$WORK/fsck" 2>&1; rc=$?
  [ $rc = 0 ] && pass || { fail "-c $c fsck -n exit $rc"; sed 's/^/    /' "$WORK/fsck" | head -20; }
  echo "-c $c: $(echo $names | wc -w) compressed files read back"
done

# --salvage of a compressed file whose second unit's LZNT1 data is damaged (its first chunk header
# says 4 KiB of compressed data that is not there): plain cat refuses it naming the unit; cat
# --salvage writes every other unit as it decompresses and the damaged one (64 KiB) as zeros,
# exit 1, the damage named.
img=$WORK/comp-4096.img
if [ -f "$img" ]; then
  cp "$img" "$WORK/salv.img"
  lcn=$(python3 - "$WORK/salv.img" <<'EOF'
import json, subprocess, sys, os
fsimg = os.environ["FSIMG"]
ls = json.loads(subprocess.check_output([fsimg, "ls", "--json", sys.argv[1], "/z"]))
rec = [e["mft_record"] for e in ls["entries"] if e["name"] == "text.txt"][0]
r = json.loads(subprocess.check_output([fsimg, "dump", "--json", "--what", "mft", str(rec), sys.argv[1]]))
a = [a for a in r["attributes"] if a["type"] == 128 and a["name"] == ""][0]
for x in a["runs"]:  # the LCN holding VCN 16 (unit 1's first cluster)
    if x["lcn"] is not None and x["vcn"] <= 16 < x["vcn"] + x["length"]:
        print(x["lcn"] + 16 - x["vcn"]); break
EOF
)
  if [ -n "$lcn" ]; then
    printf '\xff\xbf' | dd of="$WORK/salv.img" bs=1 seek=$((lcn * 4096)) conv=notrunc status=none
    if "$FSIMG" cat "$WORK/salv.img" /z/text.txt > /dev/null 2> "$WORK/err"; then fail "salvage: cat read a damaged unit"
    else grep -q "compression unit at VCN 16" "$WORK/err" && pass || fail "salvage: cat: $(cat "$WORK/err")"; fi
    "$FSIMG" cat --salvage "$WORK/salv.img" /z/text.txt > "$WORK/salv.out" 2> "$WORK/err"; rc=$?
    python3 - "$WORK/salv.out" "$S/text.txt" <<'EOF' && [ $rc = 1 ] && grep -q "compression unit at VCN 16" "$WORK/err" && grep -q "65,536 bytes of zeros (compressed data at cluster [0-9]* that does not decompress)" "$WORK/err" &&
import sys
got, want = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
u = 65536
assert len(got) == len(want), (len(got), len(want))
assert got[:u] == want[:u] and got[2 * u:] == want[2 * u:], "units 0 and 2.. differ"
assert got[u:2 * u] == bytes(u), "unit 1 is not zeros"
EOF
      pass || fail "salvage: cat --salvage exit $rc: $(cat "$WORK/err")"
  else
    fail "salvage: no cluster maps VCN 16 of text.txt"
  fi
fi

# A compressed attribute with 64 KiB clusters is refused (NTFS compresses
# only up to 4 KiB): flip the flag on a stored file and cat must say why.
img=$WORK/big-cluster.img
truncate -s 64M "$img"
mkntfs -F -Q -q -c 65536 "$img" >/dev/null 2>&1 || fail "mkntfs -c 64K"
if ntfs-3g -o compression "$img" "$WORK/mnt" 2>"$WORK/err"; then
  mkdir "$WORK/mnt/z"
  python3 -c 'import os,sys; os.setxattr(sys.argv[1], "system.ntfs_attrib_be", bytes.fromhex("00000800"))' \
    "$WORK/mnt/z" 2>/dev/null
  cp "$S/text.txt" "$WORK/mnt/z/"
  fusermount -u "$WORK/mnt"
  read -r flags _ <<<"$(data_attr "$img" text.txt)"
  # ntfs-3g does not compress here either: the file reads as stored.
  [ "$flags" != 1 ] && pass || fail "-c 64K: ntfs-3g compressed a file"
  "$FSIMG" cat "$img" /z/text.txt | cmp -s - "$S/text.txt" && pass || fail "-c 64K cat text.txt"
else
  fail "ntfs-3g mount -c 64K: $(cat "$WORK/err")"
fi
finish
