#!/usr/bin/env bash
# Sparse sources cost their data, not their size (issue 19): mkfs -t ntfs
# --from stores the holes of a host file as sparse runs, the way ntfs-3g
# writes a sparse file: unnamed $DATA flagged 0x8000 with compression unit 4
# and the compressed size (the clusters it has), FILE_ATTRIBUTE_SPARSE_FILE
# (0x200) in $STANDARD_INFORMATION and $FILE_NAME, holes only of whole
# aligned compression units (16 clusters; the rest are real zero clusters).
# A tree with a hole at the start, in the middle, at the end, a file that is
# all hole, one smaller than a compression unit with a hole, and a dense
# file, at 512 B, 4 KiB and 64 KiB clusters: check-image --manifest (ntfs-3g,
# The Sleuth Kit, libfsntfs and 7-Zip read exact contents), ntfsinfo sees the
# sparse flags, the clusters of every $DATA are exactly the compression units
# holding data (computed here from the source's holes), fsck is clean. A
# 4 GiB file with one byte at its end: an image of a few MiB (-s auto), read
# back through ntfs-3g (size, last bytes, st_blocks), fsimg cat and extract
# (holes stay holes). ntfs_sparse_write.sh (slow) lets ntfs-3g change such
# files and compares the whole 4 GiB.
# cost: 30
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_shared
need_oracles
for t in python3 ntfsinfo ntfs-3g fusermount sha256sum; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
cd "$WORK"
mkdir t
python3 "$here/../tools/make_sparse_tree.py" t 19 || fail "making the sparse tree"
# The host must keep the holes, or the test proves nothing.
[ "$(stat -c %b t/all-hole.bin)" -lt 64 ] || { echo "the host filesystem does not keep holes: skipped"; exit 77; }
"$SHARED/oracles/make-manifest" t > t.manifest || fail "make-manifest"
mkdir dense && cp --sparse=never t/* dense/ || fail "the tree without holes"

# data_runs IMG PATH: "flags unit allocated_clusters compressed_size si_attributes" of PATH's unnamed $DATA.
data_runs() {
  local rec
  rec=$("$FSIMG" ls --json "$1" / | python3 -c 'import json,sys
e = [x for x in json.load(sys.stdin)["entries"] if x["name"] == sys.argv[1]]
print(e[0]["mft_record"] if e else "")' "$2")
  [ -n "$rec" ] || { echo "no-record"; return; }
  "$FSIMG" dump --json --what mft "$rec" "$1" | python3 -c 'import json,sys
r = json.load(sys.stdin)
a = [a for a in r["attributes"] if a["type"] == 128 and a["name"] == ""][0]
if not a["non_resident"]:
    print(a["flags"], "resident", 0, 0); sys.exit()
alloc = sum(x["length"] for x in a["runs"] if x["lcn"] is not None)
print(a["flags"], a["compression_unit"], alloc, a.get("compressed_size", "-"))'
}

# expected C FILE: "sparse CLUSTERS" or "dense CLUSTERS": the compression
# units of 16 clusters that hold data (SEEK_DATA/SEEK_HOLE on the source).
expected() {
  python3 - "$1" "$2" <<'EOF'
import os, sys
c, path = int(sys.argv[1]), sys.argv[2]
size = os.path.getsize(path)
n = -(-size // c)
units = set()
fd = os.open(path, os.O_RDONLY)
at = 0
while at < size:
    try: b = os.lseek(fd, at, os.SEEK_DATA)
    except OSError: break
    e = min(os.lseek(fd, b, os.SEEK_HOLE), size)
    units.update(range(b // c // 16, (e - 1) // c // 16 + 1))
    at = e
if len(units) * 16 < n:  # sparse: whole units of 16 clusters, the last one too
    print("sparse", len(units) * 16)
else:
    print("dense", n)
EOF
}

for c in 512 4096 65536; do
  img=n$c.img
  if ! "$FSIMG" mkfs -q -t ntfs -s 24M -c $c --from t $img 2>err; then fail "mkfs -c $c: $(cat err)"; continue; fi
  check $img --manifest t.manifest
  "$FSIMG" fsck $img >fsck.out 2>&1 && pass || fail "-c $c fsck: $(tail -5 fsck.out)"
  for f in hole-start.bin hole-middle.bin hole-end.bin all-hole.bin small-hole.bin dense.bin; do
    read -r kind clusters <<<"$(expected $c t/$f)"
    read -r flags unit alloc compressed <<<"$(data_runs $img $f)"
    if [ "$kind" = sparse ]; then
      [ "$flags" = 32768 ] && [ "$unit" = 4 ] && [ "$alloc" = "$clusters" ] && [ "$compressed" = $((clusters * c)) ] && pass ||
        fail "-c $c $f: flags $flags unit $unit, $alloc clusters (compressed size $compressed), expected sparse with $clusters"
      ntfsinfo -F /$f $img >info 2>&1
      grep -q 'SPARSE_FILE' info && grep -q 'Attribute flags:.*0x8000' info && pass ||
        fail "-c $c $f: ntfsinfo does not see a sparse file: $(grep -iE 'attributes|flags' info | head -8)"
    else
      [ "$flags" = 0 ] && [ "$unit" = 0 ] && [ "$alloc" = "$clusters" ] && pass ||
        fail "-c $c $f: flags $flags unit $unit, $alloc clusters, expected dense with $clusters"
    fi
  done
  # The volume's free clusters (ntfsinfo reads $Bitmap): exactly the holes'
  # clusters more than on the image of the same tree without holes.
  "$FSIMG" mkfs -q -t ntfs -s 24M -c $c --from dense d$c.img 2>err || fail "mkfs dense -c $c: $(cat err)"
  saved=0
  for f in t/*; do
    read -r kind clusters <<<"$(expected $c $f)"
    size=$(stat -c %s $f)
    [ "$kind" = sparse ] && saved=$((saved + (size + c - 1) / c - clusters))  # may be negative: the last unit is whole
  done
  free_s=$(ntfsinfo -m $img 2>/dev/null | sed -n 's/.*Free Clusters: \([0-9]*\).*/\1/p')
  free_d=$(ntfsinfo -m d$c.img 2>/dev/null | sed -n 's/.*Free Clusters: \([0-9]*\).*/\1/p')
  [ -n "$free_s" ] && [ -n "$free_d" ] && [ $((free_s - free_d)) = $saved ] && [ $((saved * c)) -gt $((4 << 20)) ] && pass ||
    fail "-c $c: $free_s free clusters, $free_d without holes: expected $saved more"
done

# 4 GiB with one byte at its end: a small image, read back by ntfs-3g and fsimg.
mkdir big && truncate -s 4G big/f && echo x >> big/f
for c in 512 4096 65536; do
  img=big$c.img
  if ! "$FSIMG" mkfs -q -t ntfs -s auto -c $c --from big $img 2>err; then fail "mkfs 4 GiB -c $c: $(cat err)"; continue; fi
  vol=$(stat -c %s $img)
  [ "$vol" -lt $((64 << 20)) ] && pass || fail "-c $c: -s auto made a $vol-byte volume for a 4 GiB sparse file"
  "$FSIMG" fsck $img >fsck.out 2>&1 && pass || fail "-c $c 4 GiB fsck: $(tail -5 fsck.out)"
  read -r kind clusters <<<"$(expected $c big/f)"
  read -r flags unit alloc compressed <<<"$(data_runs $img f)"
  [ "$kind" = sparse ] && [ "$flags" = 32768 ] && [ "$unit" = 4 ] && [ "$alloc" = "$clusters" ] && pass ||
    fail "-c $c 4 GiB: flags $flags unit $unit, $alloc clusters, expected $kind with $clusters"
  check $img --quick
done
mkdir -p m
if ntfs-3g -o ro big4096.img m 2>mount.err; then
  [ "$(stat -c %s m/f)" = $((4 * 1024 * 1024 * 1024 + 2)) ] && pass || fail "ntfs-3g size of f: $(stat -c %s m/f)"
  [ "$(tail -c 2 m/f)" = x ] && pass || fail "ntfs-3g: the last bytes of f: $(tail -c 2 m/f | od -c | head -2)"
  [ "$(stat -c %b m/f)" -lt 1024 ] && pass || fail "ntfs-3g: f occupies $(stat -c %b m/f) blocks"
  fusermount -u m
else
  fail "ntfs-3g mount: $(cat mount.err)"
fi
# fsimg cat and extract: the last bytes, and extract writes the holes as holes.
[ "$("$FSIMG" cat big65536.img /f | tail -c 2)" = x ] && pass || fail "fsimg cat: the last bytes of f"
"$FSIMG" extract -q big512.img -C out 2>err && pass || fail "extract: $(cat err)"
[ "$(stat -c %s out/f 2>/dev/null)" = $((4 * 1024 * 1024 * 1024 + 2)) ] && [ "$(stat -c %b out/f)" -lt 1024 ] &&
  [ "$(tail -c 2 out/f)" = x ] && pass || fail "extracted f: $(stat -c '%s bytes, %b blocks' out/f 2>&1)"
finish
