#!/usr/bin/env bash
# --device formats a block device in place (a loop device over a file full of
# random bytes): refused without --device, the metadata regions are zeroed
# (the result passes the checkers), and a second run needs --force. A busy
# device (held open with O_EXCL, as a mount holds it) is refused even with
# --force. The reading commands accept a block device as it is.
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
# The reading commands read a block device without any option.
"$FSIMG" fsck "$loop" >out 2>&1 && pass || fail "fsck of the device: $(cat out)"
"$FSIMG" ls "$loop" >out 2>&1 && pass || fail "ls of the device: $(cat out)"
# Busy: another process holds an exclusive claim (what a mount does); refused with --force too.
python3 -c "import os,sys,time; fd=os.open(sys.argv[1], os.O_RDONLY|os.O_EXCL); open('held','w').close(); time.sleep(30)" "$loop" &
holder=$!
for _ in $(seq 1 50); do [ -e held ] && break; sleep 0.1; done
"$FSIMG" mkfs -q -t fat32 -c 512 --device --force "$loop" 2>err; rc=$?
kill $holder 2>/dev/null; wait $holder 2>/dev/null
[ $rc = 3 ] && grep -q "in use" err && pass || fail "busy device with --force: exit $rc $(cat err)"
sync
if [ -x "$SHARED/oracles/check-image" ]; then
  "$SHARED/oracles/check-image" --quick dev.img >out 2>&1 && pass || { fail "check-image after --device"; cat out; }
fi
fsck.fat -n dev.img >/dev/null 2>&1 && pass || fail "fsck.fat after --device"
finish
