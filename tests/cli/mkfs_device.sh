#!/usr/bin/env bash
# --device formats a block device in place (a loop device over a file full of
# random bytes): refused without --device, the metadata regions are zeroed
# (the result passes the checkers), and a second run needs --force.
here=$(dirname "$0"); . "$here/../lib.sh"
[ "$(id -u)" = 0 ] || { echo "needs root for a loop device: skipped"; exit 77; }
cd "$WORK"
truncate -s 64M dev.img
head -c 8000000 /dev/urandom | dd of=dev.img conv=notrunc status=none
loop=$(losetup -f --show dev.img 2>/dev/null) || { echo "no loop device: skipped"; exit 77; }
trap 'losetup -d "$loop"; rm -rf "$WORK"' EXIT
"$FSIMG" mkfs -q -t fat32 -c 512 "$loop" 2>err; rc=$?
[ $rc = 3 ] && grep -q -- "--device" err && pass || fail "device without --device: exit $rc $(cat err)"
"$FSIMG" mkfs -q -t fat32 -c 512 --device "$loop" && pass || fail "mkfs --device"
"$FSIMG" mkfs -q -t fat16 --device "$loop" 2>err; rc=$?
[ $rc = 3 ] && grep -q "already holds a FAT filesystem" err && pass || fail "second mkfs without --force: exit $rc"
sync
if [ -x "$SHARED/oracles/check-image" ]; then
  "$SHARED/oracles/check-image" --quick dev.img >out 2>&1 && pass || { fail "check-image after --device"; cat out; }
fi
fsck.fat -n dev.img >/dev/null 2>&1 && pass || fail "fsck.fat after --device"
finish
