#!/usr/bin/env bash
# Clean NTFS images check clean with fsimg fsck -n (exit 0, no finding at
# all, warnings included): fsimg mkfs -t ntfs empty at several sizes, cluster
# sizes and sector sizes 512/4096; fsimg mkfs -t ntfs --from the make-tree
# profiles small, edges, names and wide; and mkntfs volumes filled through
# an ntfs-3g FUSE mount (a tree, hard links, a symbolic link, a sparse file,
# an alternate data stream, a directory large enough for INDX blocks,
# deletions), at 512 B, 4 KiB and 64 KiB clusters.
# cost: 15
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
[ -x "$SHARED/trees/make-tree" ] || { echo "no make-tree at $SHARED/trees: skipped"; exit 77; }
clean() {  # clean IMAGE WHAT: exit 0 and no finding line
  local out rc
  out=$("$FSIMG" fsck -n "$1" 2>&1); rc=$?
  if [ $rc = 0 ] && ! echo "$out" | grep -qE '^(info|warning|error|fatal) '; then
    pass
  else
    fail "$2: fsck exit $rc"; echo "$out" | head -20 | sed 's/^/    /'
  fi
}
for args in "-s 2M" "-s 16M" "-s 16M -c 512" "-s 8M -c 1K" "-s 64M -c 64K" "-s 300M -c 2K" \
            "-s 32M --sector-size 4096" "-s 64M -c 16K --sector-size 4096"; do
  img="$WORK/empty.img"; rm -f "$img"
  # shellcheck disable=SC2086
  "$FSIMG" mkfs -q -t ntfs $args "$img" || { fail "mkfs $args"; continue; }
  clean "$img" "mkfs -t ntfs $args"
done
for p in small edges names wide; do
  python3 "$SHARED/trees/make-tree" $p "$WORK/t-$p" >/dev/null 2>&1 || { fail "make-tree $p"; continue; }
  for c in 4K 512 64K; do
    [ $p = wide ] && [ $c != 4K ] && continue
    img="$WORK/$p.img"; rm -f "$img"
    "$FSIMG" mkfs -q -t ntfs -c $c --from "$WORK/t-$p" "$img" 2>/dev/null || { fail "mkfs --from $p -c $c"; continue; }
    clean "$img" "mkfs -t ntfs -c $c --from $p"
  done
  rm -rf "$WORK/t-$p"
done
python3 "$SHARED/trees/make-tree" small "$WORK/tree" --scale 0.2 >/dev/null 2>&1 || { fail "make-tree small --scale 0.2"; finish; exit; }

# mkntfs + ntfs-3g (a FUSE mount of the image file, no loop device needed).
for t in mkntfs ntfs-3g fusermount; do command -v $t >/dev/null || { echo "$t missing: mount part skipped"; finish; exit; }; done
[ -w /dev/fuse ] || { echo "/dev/fuse not usable: mount part skipped"; finish; exit; }
mnt="$WORK/mnt"; mkdir -p "$mnt"
trap 'mountpoint -q "$mnt" && fusermount -u "$mnt"; rm -rf "$WORK"' EXIT
unmount() {  # waits for the FUSE daemon to write everything back and exit
  local pids; pids=$(pgrep -f -- " $mnt\$" || true)
  fusermount -u "$mnt" || { fail "fusermount -u"; return 1; }
  for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
}
for c in 512 4096 65536; do
  img="$WORK/mkntfs-$c.img"
  truncate -s 96M "$img" && mkntfs -q -F -Q -c $c "$img" >/dev/null 2>&1 || { fail "mkntfs -c $c"; continue; }
  ntfs-3g "$img" "$mnt" || { fail "ntfs-3g mount"; continue; }
  if ! (set -e
         cp -r "$WORK/tree/." "$mnt/"
         mkdir -p "$mnt/d/big"
         for i in $(seq 1 300); do echo "$i" >"$mnt/d/big/file with a long name number $i.txt"; done
         echo hello >"$mnt/d/f"; ln "$mnt/d/f" "$mnt/d/hard"; ln "$mnt/d/f" "$mnt/hard2"; ln -s d/f "$mnt/sym"
         dd if=/dev/urandom of="$mnt/sparse" bs=4k count=1 seek=1000 2>/dev/null
         setfattr -n user.stream -v abc "$mnt/d/f"
         for i in $(seq 1 100 300); do rm "$mnt/d/big/file with a long name number $i.txt"; done
         rm "$mnt/hard2") >"$WORK/fill.log" 2>&1; then
    fail "filling mkntfs -c $c through ntfs-3g"; sed 's/^/    /' "$WORK/fill.log" | head -5
  fi
  unmount || continue
  clean "$img" "mkntfs -c $c + ntfs-3g"
done
finish
