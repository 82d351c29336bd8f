#!/usr/bin/env bash
# slack vs the reference drivers, exFAT and NTFS: mkfs.exfat + a copy through
# an exfat-fuse mount (on a loop device, as check-image mounts it), mkntfs + a
# copy through an ntfs-3g mount. The tree's clusters (used after the copy
# minus used on the empty volume; dump.exfat and ntfsinfo -m read the
# allocation bitmaps) must be within 1% of the tree's allocated size for the
# make-tree `small` profile; the difference per cluster size is printed and
# explained in docs/slack.md ("Against the reference drivers"). The copy goes
# in sorted order (directories before their files), as populate writes, so
# the result does not depend on the host's readdir order.
# Needs root (loop device, /dev/fuse); skipped otherwise.
# cost: 30
. "$(dirname "$0")/../lib.sh"
need_shared
for t in mkfs.exfat dump.exfat mount.exfat-fuse mkntfs ntfs-3g ntfsinfo fusermount losetup; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
[ -w /dev/fuse ] || { echo "/dev/fuse not usable: skipped"; exit 77; }

SCALE=${SLACK_FUSE_SCALE:-0.2}
python3 "$SHARED/trees/make-tree" small "$WORK/tree" --scale "$SCALE" --zero >/dev/null || { fail make-tree; finish; exit; }
mkdir -p "$WORK/mnt"
LOOP=
cleanup() {
  mountpoint -q "$WORK/mnt" && { fusermount -u "$WORK/mnt" 2>/dev/null || umount -l "$WORK/mnt"; }
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# Copies the tree into DEST in sorted order: each directory, then its files.
copy_sorted() {
  python3 - "$WORK/tree" "$1" <<'EOF'
import os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
for d, dirs, files in os.walk(src):
    dirs.sort()
    rel = os.path.relpath(d, src)
    out = dst if rel == "." else os.path.join(dst, rel)
    if rel != ".":
        os.mkdir(out)
    for f in sorted(files):
        shutil.copyfile(os.path.join(d, f), os.path.join(out, f))
EOF
}
unmount() {  # waits for the FUSE daemon to write everything back and exit
  local pids
  pids=$(pgrep -f -- " $WORK/mnt\$" || true)
  fusermount -u "$WORK/mnt" || { fail "fusermount -u"; return 1; }
  for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
}
predicted() {  # FS CLUSTER -> clusters the tree costs per fsimg slack
  "$FSIMG" slack -t "$1" -c "$2" --json "$WORK/tree" | python3 -c \
    'import json,sys; r=json.load(sys.stdin)["rows"][0]; print(r["data_clusters"], r["metadata_clusters"])'
}
# volume FS CLUSTER: a size in MiB with room for the tree and the fixed overhead
volume() {
  local d m
  read -r d m <<<"$(predicted "$1" "$2")"
  echo $(( ((d + m) * $2 * 5 / 4 >> 20) + 256 + ($2 >> 20) * 64 ))M
}
# compare FS CLUSTER MEASURED [ORDER [EXTRA]]: prints the row; within 1% of the
# measured clusters, and the prediction may exceed the driver by EXTRA more
# clusters (NTFS: one index cluster per directory, because slack predicts
# fsimg's layout, a DOS name beside each long name as Windows stores them,
# while ntfs-3g creates names without DOS names).
compare() {
  local p d m
  read -r d m <<<"$(predicted "$1" "$2")"
  p=$((d + m))
  local diff=$(($3 - p))
  printf '%-5s %8s %-6s: predicted %7d (data %d + metadata %d), driver %7d, difference %+d clusters (%s%%)\n' \
    "$1" "$2" "${4:-sorted}" "$p" "$d" "$m" "$3" "$diff" "$(python3 -c "print(round(100.0 * $diff / $3, 3))")"
  if python3 -c "import sys; sys.exit(0 if -0.01 * $3 - ${5:-0} <= $diff <= 0.01 * $3 else 1)"; then pass; else fail "$1 $2: $diff clusters"; fi
}

exfat_used() { dump.exfat "$1" 2>/dev/null | awk -F: '/Total Clusters/ {t=$2} /Free Clusters/ {f=$2} END {print t - f}'; }
for c in 512 4096 32768 131072 1048576; do
  img="$WORK/e.img"; rm -f "$img"
  truncate -s "$(volume exfat "$c")" "$img"
  mkfs.exfat -c "$c" "$img" >/dev/null || { fail "mkfs.exfat -c $c"; continue; }
  before=$(exfat_used "$img")
  LOOP=$(losetup --find --show "$img") || { fail "losetup"; continue; }
  if ! mount.exfat-fuse "$LOOP" "$WORK/mnt" 2>"$WORK/err"; then
    if grep -q -i 'fuse' "$WORK/err"; then echo "FUSE unavailable: $(cat "$WORK/err"): skipped"; exit 77; fi
    fail "mount.exfat-fuse: $(cat "$WORK/err")"; losetup -d "$LOOP"; LOOP=; continue
  fi
  copy_sorted "$WORK/mnt" || fail "copy into exfat-fuse ($c)"
  unmount
  losetup -d "$LOOP"; LOOP=
  after=$(exfat_used "$img")
  fsck.exfat -n "$img" >/dev/null 2>&1 || fail "fsck.exfat after exfat-fuse ($c)"
  compare exfat "$c" $((after - before))
done

ntfs_used() {
  ntfsinfo -m "$1" 2>/dev/null | awk '/Volume Size in Clusters/ {t=$NF} /Free Clusters/ {f=$3} END {print t - f}'
}
# ORDER=cp: cp -r in the host's readdir order, so names reach ntfs-3g's B-tree
# out of order (blocks split elsewhere than at the right edge).
for c in 512 4096 65536 cp:4096; do
  order=sorted; [ "${c#cp:}" != "$c" ] && { order=cp; c=${c#cp:}; }
  img="$WORK/n.img"; rm -f "$img"
  truncate -s "$(volume ntfs "$c")" "$img"
  mkntfs -Q -F -q -c "$c" "$img" >/dev/null 2>&1 || { fail "mkntfs -c $c"; continue; }
  before=$(ntfs_used "$img")
  if ! ntfs-3g "$img" "$WORK/mnt" 2>"$WORK/err"; then
    if grep -q -i 'fuse' "$WORK/err"; then echo "FUSE unavailable: $(cat "$WORK/err"): skipped"; exit 77; fi
    fail "ntfs-3g: $(cat "$WORK/err")"; continue
  fi
  if [ $order = cp ]; then cp -r "$WORK/tree"/. "$WORK/mnt"/; else copy_sorted "$WORK/mnt"; fi || fail "copy into ntfs-3g ($c)"
  unmount
  after=$(ntfs_used "$img")
  compare ntfs "$c" $((after - before)) "$order" "$(find "$WORK/tree" -type d | wc -l)"
done
finish
