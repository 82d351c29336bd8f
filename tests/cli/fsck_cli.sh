#!/usr/bin/env bash
# fsimg fsck's command line: fsck(8) exit codes, --json, -v, --list-codes (FAT and exFAT);
# ls/cat/extract/dump --what usage errors.
# cost: 10
here=$(dirname "$0"); . "$here/../lib.sh"
img="$WORK/a.img"
"$FSIMG" mkfs -q -t fat16 -s 32M --volume-id 1234ABCD -L TEST "$img" || { fail "mkfs"; finish; exit; }
expect() {  # expect RC DESCRIPTION CMD...
  local want=$1 what=$2; shift 2
  "$@" >"$WORK/out" 2>&1; local rc=$?
  if [ $rc = "$want" ]; then pass; else fail "$what: exit $rc, expected $want: $(head -3 "$WORK/out")"; fi
}
expect 0 "clean image" "$FSIMG" fsck -n "$img"
expect 0 "clean image, -v" "$FSIMG" fsck -v "$img"
grep -q '^  /$' "$WORK/out" && pass || fail "-v does not print the walk"
expect 8 "missing image" "$FSIMG" fsck "$WORK/nope.img"
head -c 1048576 /dev/zero >"$WORK/zero.img"
expect 8 "not a FAT image" "$FSIMG" fsck "$WORK/zero.img"
expect 16 "unknown option" "$FSIMG" fsck --bogus "$img"
expect 16 "no image" "$FSIMG" fsck
sha_before=$(sha256sum < "$img")
expect 0 "-y on a clean image changes nothing" "$FSIMG" fsck -y "$img"
[ "$(sha256sum < "$img")" = "$sha_before" ] && pass || fail "fsck -y changed a clean image"
expect 16 "-n and -y exclude each other" "$FSIMG" fsck -n -y "$img"
expect 0 "--list-codes" "$FSIMG" fsck --list-codes
grep -q '^fat.chain.cross-link	error	' "$WORK/out" && pass || fail "--list-codes lacks fat.chain.cross-link"
# Damage: FAT[1] clean-shutdown bit cleared in both FATs (FAT16: entry 1 at byte 2 of each FAT).
fat1=$("$FSIMG" dump --json "$img" | python3 -c 'import json,sys; g=json.load(sys.stdin)["geometry"]; print(g["first_fat_sector"]*512, g["fat_size_sectors"]*512)')
read -r first size <<<"$fat1"
for at in $((first + 3)) $((first + size + 3)); do printf '\x7f' | dd of="$img" bs=1 seek=$at conv=notrunc status=none; done
expect 4 "dirty volume" "$FSIMG" fsck "$img"
"$FSIMG" fsck --json "$img" >"$WORK/j"
if python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema_version"] == 1 and j["status"] == "errors" and j["exit_code"] == 4, j
assert [f["code"] for f in j["findings"]] == ["fat.fat.dirty"], j["findings"]
assert j["summary"]["complete"] and j["summary"]["directories"] == 1' "$WORK/j"; then pass; else fail "--json"; fi
# exFAT is detected from the boot sector: same exit codes and JSON schema.
x="$WORK/x.img"
"$FSIMG" mkfs -q -t exfat -s 8M --volume-id 1234ABCD -L TEST "$x" || fail "mkfs exfat"
expect 0 "clean exFAT image, -v" "$FSIMG" fsck -v "$x"
grep -q '^  /$' "$WORK/out" && grep -q 'exFAT, ' "$WORK/out" && pass || fail "exFAT -v: $(head -3 "$WORK/out")"
printf '\x02' | dd of="$x" bs=1 seek=106 conv=notrunc status=none  # VolumeFlags: VolumeDirty
expect 4 "dirty exFAT volume" "$FSIMG" fsck "$x"
"$FSIMG" fsck --json "$x" >"$WORK/j"
if python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["filesystem"] == "exfat" and j["exit_code"] == 4, j
assert j["fat_type"] is None, j  # FAT volumes only (docs/json.md)
assert [f["code"] for f in j["findings"]] == ["exfat.boot.dirty"], j["findings"]
assert j["summary"]["complete"] and j["summary"]["directories"] == 1 and j["summary"]["cluster_bytes"] == 4096' "$WORK/j"; then pass; else fail "exFAT --json"; fi
# Usage errors of the read commands
expect 2 "ls of a missing path" "$FSIMG" ls "$img" /nothing
expect 2 "cat of a directory" "$FSIMG" cat "$img" /
# A host directory given as the image cannot be opened: a failure (1), not a
# safety refusal (3); fsck says 8 (operational error).
expect 1 "ls of a host directory" "$FSIMG" ls "$WORK"
grep -q '^fsimg: error: .*is not a regular file' "$WORK/out" && pass || fail "directory message: $(cat "$WORK/out")"
expect 8 "fsck of a host directory" "$FSIMG" fsck "$WORK"
# Parser errors read like every other error.
expect 2 "cat without PATH" "$FSIMG" cat "$img"
grep -q '^fsimg: error: PATH is required; see fsimg help cat$' "$WORK/out" && pass || fail "parser message: $(cat "$WORK/out")"
expect 2 "an unknown command" "$FSIMG" nosuch "$img"
grep -q '^fsimg: error: "nosuch" is not a command' "$WORK/out" && pass || fail "unknown command: $(cat "$WORK/out")"
# A mistyped command or option gets the closest one; nothing close, no guess.
expect_fail 2 '"lst" is not a command (did you mean "ls"?)' "$FSIMG" lst card.img
expect_fail 2 'not expected: --delted (did you mean --deleted?); see fsimg help ls' "$FSIMG" ls --delted card.img
expect_fail 2 'not expected: --salvge (did you mean --salvage?)' "$FSIMG" extract --salvge card.img -C out
"$FSIMG" cat --xyzzy a b 2> "$WORK/err"; grep -q "did you mean" "$WORK/err" && fail "a guess for --xyzzy" || pass
expect 16 "fsck with an unknown option" "$FSIMG" fsck --nope "$img"
grep -q '^fsimg: error: ' "$WORK/out" && pass || fail "fsck parser message: $(cat "$WORK/out")"
expect 2 "dump --what extents without PATH" "$FSIMG" dump --what extents "$img"
expect 2 "dump --what bogus" "$FSIMG" dump --what bogus "$img"
expect 0 "dump --what fat" "$FSIMG" dump --what fat "$img"
expect 0 "dump --what dir /" "$FSIMG" dump --what dir / "$img"
# An NTFS image given to ls/cat/extract: they read it (no subshells here: a
# fail inside ( ) would not reach finish).
mkdir -p "$WORK/nt" && printf 'hello ntfs\n' > "$WORK/nt/x"
"$FSIMG" mkfs -q -t ntfs -s 16M --from "$WORK/nt" "$WORK/n.img" || fail "mkfs ntfs"
cd "$WORK"
[ "$("$FSIMG" cat n.img /x)" = "hello ntfs" ] && pass || fail "cat of an NTFS file"
[ "$("$FSIMG" ls n.img /)" = x ] && pass || fail "ls of an NTFS root: $("$FSIMG" ls n.img / 2>&1)"
rm -rf nx && "$FSIMG" extract -q n.img -C nx && cmp -s nx/x nt/x && pass || fail "extract of an NTFS image"
for c in "ls" "cat" "extract -C $WORK/nx2"; do
  expect_fail 2 '"/nope" does not exist in n.img' "$FSIMG" $c n.img /nope
done
# A FAT16 too large for BPB_TotSec32: the suggestions are other types, not a smaller FAT16.
expect_fail 2 "and FAT16 holds at most 65,524 clusters" "$FSIMG" mkfs -t fat16 -s 8T "$WORK/big.img"
grep -q -- "-t fat32 --sector-size 4096" "$WORK/err" && grep -q -- "-t exfat" "$WORK/err" \
  && ! grep -q "one sector short" "$WORK/err" && pass || fail "fat16 8T suggestions: $(cat "$WORK/err")"
# undo takes IMAGE@N as fsck did: the undo file's offsets are the image file's.
"$FSIMG" mkfs -q -t fat32 -s 300M --partition-table mbr "$WORK/ud.img"
poke "$WORK/ud.img" $((1048576 + 512 + 488)) 05000000  # FSInfo's free count, wrong
cp "$WORK/ud.img" "$WORK/ud0.img"
"$FSIMG" fsck -p --undo "$WORK/ud.undo" "$WORK/ud.img@1" > /dev/null; rc=$?
[ $rc = 1 ] && ! cmp -s "$WORK/ud.img" "$WORK/ud0.img" && pass || fail "fsck -p of a partition: exit $rc"
"$FSIMG" undo "$WORK/ud.undo" "$WORK/ud.img@1" > /dev/null && cmp -s "$WORK/ud.img" "$WORK/ud0.img" && pass ||
  fail "undo FILE IMAGE@N did not restore the image"
# "Not a filesystem" names the file and what it holds.
printf '\x89PNG\r\n\x1a\n' > "$WORK/photo.png"; head -c 4096 /dev/urandom >> "$WORK/photo.png"
expect_fail 1 "photo.png: the volume is not FAT, exFAT or NTFS: it holds a PNG image" "$FSIMG" ls "$WORK/photo.png"
expect_fail 8 "photo.png: the volume is not FAT, exFAT or NTFS: it holds a PNG image" "$FSIMG" fsck "$WORK/photo.png"
# fsck.fat's options: -f is --salvage, -l is -v, -V and -w are accepted, -r and -t refused with what to use.
cp "$WORK/ud0.img" "$WORK/ud.img"
"$FSIMG" fsck -y -f -V -w "$WORK/ud.img@1" > "$WORK/out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "1 repair made; clean" "$WORK/out" && pass || fail "fsck -y -f -V -w: exit $rc: $(cat "$WORK/out")"
"$FSIMG" fsck -l "$WORK/ud.img@1" | grep -q "Walking the directory tree" && pass || fail "fsck -l"
expect_fail 16 "does not ask; use -y" "$FSIMG" fsck -r "$WORK/ud.img@1"
expect_fail 16 "nothing to test" "$FSIMG" fsck -t "$WORK/ud.img@1"
expect_fail 16 "give it with -y" "$FSIMG" fsck -f "$WORK/ud.img@1"
finish
