#!/usr/bin/env bash
# Memory follows real content (issue 18), on the form ntfs-3g really writes:
# `truncate -s 16T` through an ntfs-3g mount of an 8 MiB fsimg image makes a
# $DATA attribute flagged sparse (0x8000) with compression unit 2^4 and one
# sparse run of 2^32 clusters. fsimg fsck finds the image clean within a
# small, bounded memory (not per claimed cluster), ls -l shows the 16 TiB,
# and extract writes it as a sparse host file in seconds (or, on a host
# filesystem that cannot hold 16 TiB, refuses that one file and goes on),
# next to a small file read back byte-exact. (tests/cli/ntfs_sparse.sh holds the crafted
# form without a compression unit.)
here=$(dirname "$0"); . "$here/../lib.sh"
for t in ntfs-3g fusermount; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
[ -w /dev/fuse ] || { echo "/dev/fuse not usable: skipped"; exit 77; }
cd "$WORK"
"$FSIMG" mkfs -q -t ntfs -s 8M -c 4K n.img || fail "mkfs"
mkdir -p m
if ntfs-3g n.img m 2>mount.err; then
  truncate -s 16T m/big && printf 'small file\n' > m/small || fail "writing through ntfs-3g"
  fusermount -u m || umount m
else
  fail "ntfs-3g mount: $(cat mount.err)"; finish
fi
rec=$("$FSIMG" ls --json n.img / | python3 -c 'import json,sys; print([e["mft_record"] for e in json.load(sys.stdin)["entries"] if e["name"]=="big"][0])')
"$FSIMG" dump --json --what mft "$rec" n.img > mft.json 2>/dev/null
python3 - mft.json <<'PY' && pass || fail "the \$DATA of /big is not ntfs-3g's sparse form: $(head -c 600 mft.json)"
import json, sys
j = json.load(open(sys.argv[1]))
data = [a for a in j["attributes"] if a["type"] == 0x80]
assert data and data[0]["flags"] & 0x8000 and data[0]["compression_unit"] == 4, data
PY
/usr/bin/time -f '%M' -o rss timeout 120 "$FSIMG" fsck n.img > fsck.out 2>&1; rc=$?
[ $rc = 0 ] && pass || fail "fsck: exit $rc $(tail -3 fsck.out)"
[ "$(tail -1 rss)" -lt 100000 ] && pass || fail "fsck of the 16 TiB claim used $(tail -1 rss) KiB"
"$FSIMG" ls -l n.img > ls.out 2>&1
grep -q "17592186044416 .*big$" ls.out && pass || fail "ls -l: $(cat ls.out)"
# extract: a sparse host file where the host filesystem holds 16 TiB in one
# file (ext4 with 4 KiB blocks stops 4 KiB short); elsewhere that one file is
# refused with the reason and the others are still extracted (exit 1).
if truncate -s 16T host-probe 2>/dev/null; then
  timeout 120 "$FSIMG" extract -q n.img -C out 2>err && pass || fail "extract: $(cat err)"
  [ "$(stat -c %s out/big 2>/dev/null)" = 17592186044416 ] && pass || fail "extracted size: $(stat -c %s out/big 2>&1)"
  [ "$(stat -c %b out/big 2>/dev/null)" -lt 1024 ] 2>/dev/null && pass || fail "out/big occupies $(stat -c %b out/big) blocks"
else
  timeout 120 "$FSIMG" extract n.img -C out 2>err; rc=$?  # no -q: it silences the reason
  [ $rc = 1 ] && grep -q "/big.*more than the host filesystem holds in one file" err && pass \
    || fail "extract on a host that cannot hold 16 TiB: exit $rc: $(cat err)"
  [ ! -e out/big ] && pass || fail "a partial out/big is left"
fi
rm -f host-probe
[ "$(cat out/small)" = "small file" ] && pass || fail "small: $(cat out/small)"
finish
