#!/usr/bin/env bash
# fsimg ls / cat / extract / dump on exFAT images that other tools wrote:
# mkfs.exfat (exfatprogs) volumes at 512 B, 4 KiB and 32 KiB clusters, filled
# through exfat-fuse (read-write on a loop device, as root) with make-tree
# trees (small, names minus what exFAT refuses, edges): every extracted file
# matches the manifest (type, size, SHA-256), ls -R lists every entry, cat
# gives the same bytes. Fragmentation made through exfat-fuse (a file
# appended to after another was written, a hole refilled after a delete, a
# directory grown after other allocations) gives FAT-chained files and
# directories that read back exactly, and dump --what extents shows several
# runs. extract keeps its safety rules (no overwrite without --force, no
# symbolic link followed) and sets modification times.
# cost: 19
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
for t in mkfs.exfat mount.exfat-fuse losetup fusermount mountpoint; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
[ "$(id -u)" = 0 ] && [ -e /dev/fuse ] || { echo "exfat-fuse needs root and /dev/fuse: skipped"; exit 77; }
MT=$SHARED/trees/make-tree
MKMAN=$SHARED/oracles/make-manifest
MNT=$WORK/mnt; mkdir -p "$MNT"
LOOP= DAEMON=
cleanup_mount() {
  if mountpoint -q "$MNT"; then fusermount -u "$MNT" || umount "$MNT"; fi
  [ -n "$DAEMON" ] && wait "$DAEMON" 2>/dev/null
  DAEMON=
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  LOOP=
  return 0
}
trap 'cleanup_mount; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
mount_rw() {  # mount_rw IMG: exfat-fuse read-write on a loop device at $MNT
  LOOP=$(losetup --find --show "$1") || return 1
  mount.exfat-fuse -d "$LOOP" "$MNT" >/dev/null 2>&1 &
  DAEMON=$!
  for _ in $(seq 1 100); do mountpoint -q "$MNT" && return 0; sleep 0.1; done
  cleanup_mount; return 1
}

# The tree: small + names (without what exFAT cannot store) + edges.
tree=$WORK/tree
"$MT" small "$tree" --scale 0.05 >/dev/null || { fail "make-tree small"; finish; exit; }
"$MT" names "$WORK/names" --scale 0.05 >/dev/null 2>&1
"$MT" edges "$WORK/edges" >/dev/null 2>&1
mkdir -p "$tree/names" "$tree/edges"
for f in "$WORK/names/names/"*; do
  b=$(basename "$f")
  case "$b" in *[\\/:*?\"\<\>\|]*|*$'\t'*|casename.TXT) continue ;; esac
  cp -r "$f" "$tree/names/"
done
cp -r "$WORK/edges/." "$tree/edges/"
"$MKMAN" "$tree" >"$WORK/tree.manifest" || { fail "make-manifest"; finish; exit; }
entries=$(grep -vc '^#' "$WORK/tree.manifest")

for c in 512 4096 32768; do
  img=$WORK/c$c.img; out=$WORK/out-$c
  truncate -s 160M "$img"  # edges holds two 32 MiB files
  mkfs.exfat -c $c -L READ "$img" >/dev/null 2>&1 || { fail "mkfs.exfat -c $c"; continue; }
  mount_rw "$img" || { fail "mount exfat-fuse ($c)"; continue; }
  cp -r --preserve=timestamps "$tree"/. "$MNT"/ || fail "cp into exfat-fuse ($c)"
  sync; cleanup_mount
  if "$FSIMG" extract "$img" -C "$out" 2>"$WORK/err"; then pass; else fail "$c: extract: $(head -3 "$WORK/err")"; fi
  if diff <("$MKMAN" "$out") "$WORK/tree.manifest" >"$WORK/diff"; then pass
  else fail "$c: extracted tree differs from the manifest"; head -20 "$WORK/diff"; fi
  n=$("$FSIMG" ls -R "$img" | wc -l)
  [ "$n" = "$entries" ] && pass || fail "$c: ls -R lists $n entries, the manifest $entries"
  "$FSIMG" ls -R --json "$img" | python3 -c '
import json, sys
j = json.load(sys.stdin)
man = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip(): continue
    t, size, _, path = line.rstrip("\n").split("\t")
    man["/" + path] = (t, size)
got = {e["path"]: ("d" if e["type"] == "directory" else "f", "-" if e["type"] == "directory" else str(e["size"])) for e in j["entries"]}
sys.exit(0 if got == man else 1)' "$WORK/tree.manifest" && pass || fail "$c: ls -R --json differs from the manifest"
  # cat of every file in the names directory, looked up in upper case.
  # (One python for all the names' upper-case forms, one for all the mtimes: a process a file
  # cost more than the reads, issue 43.)
  bad=0 looked=0
  while IFS=$'\t' read -r up sum; do
    looked=$((looked + 1))
    got=$("$FSIMG" cat "$img" "$up" | sha256sum | cut -d' ' -f1)
    [ "$got" = "$sum" ] || { bad=1; echo "  cat $up: $got, want $sum"; }
  done < <(python3 -c '
import sys
sys.stdout.reconfigure(errors="surrogateescape")
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    if line.startswith("#") or not line.strip(): continue
    t, size, digest, path = line.rstrip("\n").split("\t")
    if t == "f" and path.startswith("names/"): print(path.upper() + "\t" + digest)' "$WORK/tree.manifest")
  [ $bad = 0 ] && [ $looked -gt 10 ] && pass || fail "$c: cat of names/* (upper-case lookup; $looked names)"
  # mtimes: exfat-fuse stores UTC (offset 0x80, no 10 ms part); extract sets
  # each file's to the source's, to the second.
  python3 -c '
import os, sys
sys.stdout.reconfigure(errors="surrogateescape")
bad = 0
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    if line.startswith("#") or not line.strip(): continue
    t, size, digest, path = line.rstrip("\n").split("\t")
    if t != "f": continue
    try:
        same = int(os.stat(os.path.join(sys.argv[2], path)).st_mtime) == int(os.stat(os.path.join(sys.argv[3], path)).st_mtime)
    except OSError:
        same = False
    if not same:
        bad = 1
        print("  mtime of " + path)
sys.exit(bad)' "$WORK/tree.manifest" "$out" "$tree" && pass || fail "$c: modification times"
done

# Images fsimg mkfs --from wrote: 4096-byte sectors in a GPT (the partition
# is opened by itself), 512-byte clusters.
for spec in "gpt:--sector-size 4096 --partition-table gpt" "c512:-c 512"; do
  name=${spec%%:*}; img=$WORK/ours-$name.img
  "$FSIMG" mkfs -q -t exfat -s 160M ${spec#*:} --from "$tree" "$img" 2>"$WORK/err" || { fail "fsimg mkfs $name: $(head -3 "$WORK/err")"; continue; }
  "$FSIMG" extract "$img" -C "$WORK/ours-out-$name" 2>"$WORK/err" && pass || fail "$name: extract: $(head -3 "$WORK/err")"
  diff <("$MKMAN" "$WORK/ours-out-$name") "$WORK/tree.manifest" >/dev/null && pass || fail "$name: extracted tree differs"
  rm -f "$img"
done

# Fragmentation through exfat-fuse on 4 KiB clusters.
img=$WORK/frag.img; truncate -s 32M "$img"; mkfs.exfat "$img" >/dev/null 2>&1
src=$WORK/fragsrc; mkdir -p "$src"
head -c 10000 /dev/urandom >"$src/a.bin"; head -c 10000 /dev/urandom >"$src/b.bin"
head -c 30000 /dev/urandom >"$src/a.more"; head -c 100000 /dev/urandom >"$src/c.bin"
if mount_rw "$img"; then
  mkdir "$MNT/grow"
  cp "$src/a.bin" "$MNT/a.bin"; cp "$src/b.bin" "$MNT/b.bin"; sync
  cat "$src/a.more" >>"$MNT/a.bin"; sync       # a grows past b: a FAT chain
  rm "$MNT/b.bin"; sync
  cp "$src/c.bin" "$MNT/c.bin"; sync           # refills b's hole, then continues
  for i in $(seq 1 150); do echo "$i" >"$MNT/grow/entry number $i.txt"; done  # grow/ passes its cluster
  sync; cleanup_mount
  cat "$src/a.bin" "$src/a.more" >"$src/a.all"
  cmp -s <("$FSIMG" cat "$img" A.BIN) "$src/a.all" && pass || fail "cat of the appended (chained) file"
  cmp -s <("$FSIMG" cat "$img" c.bin) "$src/c.bin" && pass || fail "cat of the hole-filling file"
  for f in a.bin c.bin grow; do
    "$FSIMG" dump --json --what extents "$f" "$img" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert len(j["runs"]) >= 2 and not j["contiguous"] and j["allocation"] == "FAT chain", j
assert j["clusters"] == -(-j["size"] // j["cluster_bytes"]) == sum(r["count"] for r in j["runs"]), j' &&
      pass || fail "dump --what extents $f: not a fragmented FAT chain"
  done
  n=$("$FSIMG" ls "$img" /grow | wc -l)
  [ "$n" = 150 ] && pass || fail "ls of the grown directory: $n entries"
  [ "$("$FSIMG" cat "$img" "/GROW/Entry Number 150.TXT")" = 150 ] && pass || fail "cat in the grown directory"
  "$FSIMG" extract "$img" -C "$WORK/frag-out" 2>/dev/null && cmp -s "$WORK/frag-out/a.bin" "$src/a.all" &&
    [ "$(ls "$WORK/frag-out/grow" | wc -l)" = 150 ] && pass || fail "extract of the fragmented image"
  # the bitmap agrees with dump.exfat's count of used clusters
  if command -v dump.exfat >/dev/null; then
    want=$(dump.exfat "$img" 2>/dev/null | awk -F: '/^Total Clusters/ {t=$2} /^Free Clusters/ {f=$2} END {print t-f}')
    got=$("$FSIMG" dump --json --what bitmap "$img" | python3 -c 'import json,sys; print(json.load(sys.stdin)["used_clusters"])')
    [ "$want" = "$got" ] && [ "$got" -gt 150 ] && pass || fail "bitmap: $got used clusters, dump.exfat says $want"
  fi
  "$FSIMG" dump --what dir / "$img" | grep 'STREAM  flags 0x01 (FAT chain)' >/dev/null && pass || fail "dump --what dir shows no FAT-chained stream"
else
  fail "mount exfat-fuse (fragmentation)"
fi

# extract's safety rules on exFAT: no overwrite without --force, no symbolic link followed.
img=$WORK/c4096.img; out=$WORK/out-4096
if "$FSIMG" extract "$img" -C "$out" 2>"$WORK/err"; then fail "second extract without --force succeeded"
elif grep -q "use --force" "$WORK/err"; then pass; else fail "second extract: $(head -3 "$WORK/err")"; fi
"$FSIMG" extract "$img" -C "$out" --force 2>"$WORK/err" && pass || fail "extract --force: $(head -3 "$WORK/err")"
out2=$WORK/out-link; mkdir -p "$out2" "$WORK/outside"
ln -s "$WORK/outside" "$out2/names"
"$FSIMG" extract "$img" -C "$out2" >/dev/null 2>&1
[ -z "$(ls -A "$WORK/outside")" ] && pass || fail "extract wrote through a symbolic link"
# An entry set with a bad SetChecksum is skipped and reported (exit 1), the rest extracted.
cp "$img" "$WORK/bad.img"
off=$("$FSIMG" dump --json --what dir / "$WORK/bad.img" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(next(e["index"] for e in j["entries"] if e["type"] == "file"))')
root=$("$FSIMG" dump --json --what extents / "$WORK/bad.img" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["byte_offset"])')
printf '\x00\x00' | dd of="$WORK/bad.img" bs=1 seek=$((root + off * 32 + 2)) conv=notrunc status=none
"$FSIMG" extract "$WORK/bad.img" -C "$WORK/bad-out" 2>"$WORK/err"; rc=$?
[ $rc = 1 ] && grep -q "SetChecksum" "$WORK/err" && [ -n "$(ls -A "$WORK/bad-out")" ] && pass ||
  fail "bad SetChecksum: rc $rc, $(head -3 "$WORK/err")"
finish
