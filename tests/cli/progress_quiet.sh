#!/usr/bin/env bash
# Progress lines and -q/--quiet on every command: --progress draws on stderr
# even into a file (amounts and totals checked), nothing without it when
# stderr is not a terminal, a redrawn line (carriage returns) on a terminal
# (script(1) gives one), and -q leaves only errors and the command's result.
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
mkdir -p tree/sub
head -c 3000000 /dev/urandom > tree/big.bin
head -c 1048576 /dev/urandom > tree/sub/one.bin
for i in $(seq 1 40); do echo "file $i" > "tree/sub/f$i.txt"; done
data=$((3000000 + 1048576 + $(cat tree/sub/f*.txt | wc -c)))
datamib=$(python3 -c "print('%.2f MiB' % ($data / 1048576))")  # format_size: up to 2 decimals

# mkfs --from: one "copying files" phase, 100% of the tree's bytes, on stderr only.
"$FSIMG" mkfs -t fat32 -s 300M -c 4K --volume-id 1234ABCD --progress --from tree a.img >out 2>err
[ $? = 0 ] && pass || fail "mkfs --progress: $(cat err)"
grep -q "^copying files .* 100%  $datamib / $datamib .*" err && pass || fail "mkfs progress: $(cat err)"
grep -q "copying" out && fail "progress went to stdout" || pass
"$FSIMG" mkfs -t exfat -s 64M --force --progress --from tree x.img >out 2>err
grep -q "^copying files .* 100%  $datamib / $datamib" err && pass || fail "exFAT mkfs progress: $(cat err)"
# Without --progress and with stderr not a terminal: no progress line.
"$FSIMG" mkfs -t fat32 -s 64M --force --from tree b.img >out 2>err
grep -q "copying files" err && fail "progress without --progress into a file" || pass

# fsck: the FAT phase over every entry (clusters + 2), then the walk counting paths (root, sub, 42 files).
entries=$(( $("$FSIMG" fsck --json a.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["cluster_count"])') + 2 ))
"$FSIMG" fsck --progress a.img >out 2>err
grep -q "^checking the FATs .* 100%  $(python3 -c "print(f\"{$entries:,}\")") / " err && pass \
  || fail "fsck FAT phase ($entries entries): $(cat err)"
grep -q "^walking directories  44 items" err && pass || fail "fsck walk phase: $(cat err)"
# -q: a clean image prints nothing at all; a damaged one only its findings.
"$FSIMG" fsck -q a.img >out 2>err; rc=$?
[ $rc = 0 ] && [ ! -s out ] && [ ! -s err ] && pass || fail "fsck -q clean: exit $rc, $(cat out err)"
cp a.img d.img
printf '\x00\x00' | dd of=d.img bs=1 seek=510 conv=notrunc status=none  # no boot signature
"$FSIMG" fsck -q d.img >out 2>err; rc=$?
[ $rc != 0 ] && grep -q "^error fat\." out && ! grep -q "clean\|errors, " out && pass \
  || fail "fsck -q damaged: exit $rc, $(cat out)"

# extract and slack.
"$FSIMG" extract --progress a.img -C ex >out 2>err
grep -qE "^extracting  [0-9.]+ MiB" err && cmp -s tree/big.bin ex/big.bin && pass || fail "extract progress: $(cat err)"
"$FSIMG" extract -q a.img -C ex2 >out 2>err
[ ! -s err ] && [ ! -s out ] && cmp -s tree/sub/one.bin ex2/sub/one.bin && pass || fail "extract -q: $(cat err)"
"$FSIMG" slack --progress -t fat32 -c 4K tree >out 2>err
grep -q "^reading the tree (files)  42 items" err && pass || fail "slack progress: $(cat err)"

# -q wins over --progress; ls and cat still print their result.
"$FSIMG" mkfs -q --progress -t fat32 -s 64M --force --from tree c.img >out 2>err
[ ! -s out ] && [ ! -s err ] && pass || fail "mkfs -q --progress printed: $(cat out err)"
[ "$("$FSIMG" ls -q a.img /sub | wc -l)" = 41 ] && pass || fail "ls -q"
"$FSIMG" cat -q a.img /sub/one.bin | cmp -s - tree/sub/one.bin && pass || fail "cat -q"
"$FSIMG" dump -q a.img | grep "FAT32" >/dev/null && pass || fail "dump -q"
# Errors are never silenced.
"$FSIMG" ls -q nope.img >out 2>err; rc=$?
[ $rc = 1 ] && grep -q "fsimg: error:" err && pass || fail "ls -q on a missing image: exit $rc, $(cat err)"

# On a terminal: the line is redrawn in place (CR) and ends with a newline.
if command -v script >/dev/null; then
  script -qec "'$FSIMG' mkfs -q -t exfat -s 64M --force --from tree y.img" /dev/null > tty.out
  [ ! -s tty.out ] && pass || fail "-q on a terminal printed: $(cat -A tty.out | head -3)"
  script -qec "'$FSIMG' mkfs -t exfat -s 64M --force --from tree y.img" /dev/null > tty.out
  grep -q $'\rcopying files .*100%' tty.out && pass || fail "no redrawn progress line on a terminal: $(cat -A tty.out | head -5)"
fi
finish
