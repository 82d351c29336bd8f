#!/usr/bin/env bash
# labels: slow
# Sparse files fsimg stored (issue 19; ntfs_sparse_populate.sh checks their
# form) changed by a real writer and read back whole: write-exercise lets
# ntfs-3g rename, delete, overwrite, append to, truncate and fill around a
# tree of sparse files (hole at the start, in the middle, at the end, all
# hole) at 4 KiB clusters and then checks the result with ntfsfix,
# ntfsresize, ntfsls, The Sleuth Kit, 7-Zip and fsimg fsck; and the 4 GiB
# file with one byte at its end is read back whole by fsimg cat (SHA-256
# against the source) at 512 B and 64 KiB clusters.
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_shared
need_oracles
for t in python3 sha256sum; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
cd "$WORK"
mkdir t
python3 "$here/../tools/make_sparse_tree.py" t 20 || fail "making the sparse tree"
[ "$(stat -c %b t/all-hole.bin)" -lt 64 ] || { echo "the host filesystem does not keep holes: skipped"; exit 77; }
"$FSIMG" mkfs -q -t ntfs -s 24M -c 4096 --from t n.img 2>err || fail "mkfs: $(cat err)"
out=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" n.img 2>&1) && pass ||
  { fail "write-exercise n.img"; echo "$out" | sed 's/^/    /'; }
mkdir big && truncate -s 4G big/f && echo x >> big/f
want=$(sha256sum < big/f | cut -d' ' -f1)
for c in 512 65536; do
  "$FSIMG" mkfs -q -t ntfs -s auto -c $c --from big b$c.img 2>err || { fail "mkfs -c $c: $(cat err)"; continue; }
  got=$("$FSIMG" cat b$c.img /f | sha256sum | cut -d' ' -f1)
  [ "$got" = "$want" ] && pass || fail "-c $c: fsimg cat of the 4 GiB file differs"
done
finish
