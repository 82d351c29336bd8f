# Sourced by tests/oracle/ntfs_edit.sh and ntfs_edit_cut.sh: $base, an NTFS
# image made by mkntfs whose files ntfs-3g wrote (fsimg mkfs --from where
# FUSE cannot run: no hard link then; $fuse says which), the tree in pre/
# and its manifest pre.manifest, in the current folder ($WORK).
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
base=$WORK/base.img
mkdir -p pre/dir pre/other
printf 'root file\n' > pre/a.txt
for i in $(seq 1 60); do printf '%s\n' "$i" > "pre/dir/inner file number $i.txt"; done
printf 'linked\n' > pre/dir/linked.txt
head -c 300000 /dev/urandom > pre/dir/big.bin
mkdir -p pre/gone/deeper; head -c 90000 /dev/urandom > pre/gone/deeper/g.bin; printf 'g\n' > pre/gone/g.txt
truncate -s 64M "$base"
mkntfs -q -F -f -L BASE -c 4096 "$base" >/dev/null 2>&1 || { fail mkntfs; finish; exit; }
fuse=no
if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ] && command -v ntfs-3g > /dev/null; then
  mkdir -p mnt
  if ntfs-3g "$base" mnt 2>/dev/null; then
    cp -r pre/. mnt/ && ln mnt/dir/linked.txt mnt/other/hardlink.txt && fuse=yes
    fusermount -u mnt
  fi
fi
if [ $fuse = no ]; then
  echo "ntfs-3g cannot run here: the base image is fsimg mkfs --from (no hard link)"
  "$FSIMG" mkfs -q -t ntfs -s 64M -L BASE --from pre "$base" --force || { fail "mkfs --from"; finish; exit; }
else
  cp pre/dir/linked.txt pre/other/hardlink.txt
fi
"$SHARED/oracles/make-manifest" pre > pre.manifest
"$FSIMG" fsck "$base" >/dev/null && pass || fail "the base image is not clean: $("$FSIMG" fsck "$base")"
