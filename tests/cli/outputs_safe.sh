#!/usr/bin/env bash
# Outputs never destroy what the user did not ask to destroy (issue 18):
# slack -o/--chart refuse devices, FIFOs, input images and files holding a
# filesystem; mkfs's temporary image goes with every default-terminating
# signal and a stale one (its process killed by SIGKILL) is removed by the
# next run with a note; extract --force never rewrites in place, never
# writes through a hard link, never replaces the image it reads; cross-linked
# files are written once; runs of zeros extract as holes.
# cost: 10
here=$(dirname "$0"); . "$here/../lib.sh"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
TOOLS=$(cd "$here/../tools" && pwd)
cd "$WORK"

# --- slack -o / --chart
mkdir tree && head -c 5000 /dev/urandom > tree/f
"$FSIMG" mkfs -q -t fat32 -s 64M --from tree in.img
mkfifo fifo
sum=$(sha256sum < in.img)
expect_fail 3 "is a FIFO" timeout 20 "$FSIMG" slack -o fifo tree
expect_fail 3 "is a character device" "$FSIMG" slack --chart /dev/null tree
expect_fail 3 "is the input in.img" "$FSIMG" slack -o in.img in.img
ln in.img alias.img
expect_fail 3 "is the input in.img" "$FSIMG" slack --chart alias.img in.img
"$FSIMG" mkfs -q -t exfat -s 16M other.img
expect_fail 3 "already holds an exFAT filesystem" "$FSIMG" slack -o other.img tree
[ "$(sha256sum < in.img)" = "$sum" ] && pass || fail "in.img changed"
# An earlier report is replaced atomically, keeping its mode.
echo "old report" > report.txt && chmod 600 report.txt
"$FSIMG" slack -q -o report.txt --chart chart.svg tree && pass || fail "slack -o report.txt"
grep -q "cluster" report.txt && [ "$(stat -c %a report.txt)" = 600 ] && pass || fail "report.txt: $(stat -c %a report.txt)"
grep -q "<svg" chart.svg && pass || fail "chart.svg"

# --- mkfs temporaries: every default-terminating signal removes them.
# Job control on: a non-interactive shell starts background jobs with SIGINT
# and SIGQUIT ignored, and mkfs (like nohup's children) leaves ignored signals alone.
set -m
for sig in INT TERM HUP QUIT PIPE ALRM USR1 USR2 XCPU VTALRM PROF; do
  rm -f started sig.img hookpid
  FSIMG_TEST_HOOK_BEFORE_COPY="echo \$\$ > $WORK/hookpid; touch $WORK/started; exec sleep 30" "$FSIMG" mkfs -q -t fat32 -s 64M --from tree sig.img 2>/dev/null &
  pid=$!
  for _ in $(seq 1 100); do [ -e started ] && break; sleep 0.1; done
  ls -A | grep -q '^\.sig\.img\.fsimg-'"$pid"'-' && pass || fail "SIG$sig: no temporary named after pid $pid: $(ls -A)"
  kill -s $sig $pid
  wait $pid; rc=$?
  kill "$(cat hookpid)" 2>/dev/null  # the hook's sleep outlives mkfs
  [ $rc -gt 128 ] && pass || fail "SIG$sig: mkfs exited $rc, not by the signal"
  [ -z "$(ls -A | grep 'sig\.img')" ] && pass || fail "SIG$sig left: $(ls -A | grep sig.img)"
done
# SIGKILL cannot be caught: the next run removes the stale temporary, with a note.
rm -f started hookpid
FSIMG_TEST_HOOK_BEFORE_COPY="echo \$\$ > $WORK/hookpid; touch $WORK/started; exec sleep 30" "$FSIMG" mkfs -q -t fat32 -s 64M --from tree k.img 2>/dev/null &
pid=$!
for _ in $(seq 1 100); do [ -e started ] && break; sleep 0.1; done
kill -9 $pid; wait $pid 2>/dev/null
kill "$(cat hookpid)" 2>/dev/null
set +m
stale=$(ls -A | grep '^\.k\.img\.fsimg-')
[ -n "$stale" ] && pass || fail "SIGKILL left no temporary (the test expects one)"
"$FSIMG" mkfs -t fat32 -s 64M k.img >out 2>err && pass || fail "mkfs after SIGKILL: $(cat err)"
grep -qF "removed ./$stale, a temporary image left by a process that no longer runs" err && pass \
  || fail "no note about the stale temporary: $(cat err)"
[ -z "$(ls -A | grep '^\.k\.img\.fsimg-')" ] && pass || fail "the stale temporary is still there"
# A temporary of a live process is never touched.
sleep 30 & live=$!
: > ".k.img.fsimg-$live-ABCDEF"
"$FSIMG" mkfs -q --force -t fat32 -s 64M k.img || fail "mkfs beside a live temporary"
[ -e ".k.img.fsimg-$live-ABCDEF" ] && pass || fail "a live process's temporary was removed"
kill $live; wait $live 2>/dev/null; rm -f ".k.img.fsimg-$live-ABCDEF"

# --- extract --force: a new file renamed over, never in place.
rm -rf src && mkdir src && head -c 300000 /dev/urandom > src/A.BIN && echo small > src/B.TXT
"$FSIMG" mkfs -q -t fat32 -s 64M -c 512 --from src x.img
mkdir -p xo && echo "outside" > outside.txt && ln outside.txt xo/A.BIN
"$FSIMG" extract -q --force x.img -C xo && pass || fail "extract --force"
[ "$(cat outside.txt)" = outside ] && pass || fail "extract wrote through a hard link"
cmp -s xo/A.BIN src/A.BIN && pass || fail "xo/A.BIN is not the image's file"
[ "$(stat -c %i xo/A.BIN)" != "$(stat -c %i outside.txt)" ] && pass || fail "xo/A.BIN kept the linked inode"
# A damaged image copy (cut in A.BIN's data) keeps the existing file.
echo "keep me" > xo/A.BIN
at=$(python3 -c "import sys; d=open('x.img','rb').read(); print(d.find(open('src/A.BIN','rb').read(4096)))")
[ "$at" -gt 0 ] || fail "A.BIN's data not found in x.img"
head -c $((at + 100000)) x.img > cut.img
"$FSIMG" extract -q --force cut.img -C xo 2>err; rc=$?
[ $rc = 1 ] && [ "$(cat xo/A.BIN)" = "keep me" ] && pass || fail "damaged copy: exit $rc, A.BIN is now $(head -c 20 xo/A.BIN | od -c | head -1)"
[ -z "$(ls -A xo | grep fsimg-)" ] && pass || fail "extract left temporaries: $(ls -A xo)"
# The image being read is never the output.
mkdir -p self && cp x.img self/A.BIN
sum=$(sha256sum < self/A.BIN)
"$FSIMG" extract --force self/A.BIN -C self 2>err; rc=$?
[ $rc = 1 ] && grep -q "is the image being read; never replaced" err && pass || fail "image as output: exit $rc $(cat err)"
[ "$(sha256sum < self/A.BIN)" = "$sum" ] && pass || fail "extract replaced the image it was reading"

# --- Cross-linked files: 100 entries sharing one 2 MB chain are written once.
rm -rf cl && mkdir cl && head -c 2000000 /dev/urandom > cl/BIG.BIN
for i in $(seq 1 100); do echo $i > cl/F$i; done
"$FSIMG" mkfs -q -t fat32 -s 64M -c 512 --from cl c.img
python3 "$TOOLS/make_hostile.py" crosslink c.img 100 >/dev/null || fail "make_hostile crosslink"
rm -rf co && "$FSIMG" extract c.img -C co 2>err; rc=$?
[ "$(du -sk co | cut -f1)" -lt 4000 ] && pass || fail "cross-linked extract wrote $(du -sk co | cut -f1) KiB"
[ $rc = 1 ] && pass || fail "cross-linked files skipped: exit $rc, not 1"
[ "$(grep -c 'warning: .*cross-linked); not written again' err)" = 100 ] && pass || fail "$(grep -c 'warning: .*not written again' err) skipped, not 100"
# ... and the one written is reported too: its clusters are the others' as well.
[ "$(grep -c 'warning: /BIG.BIN: shares clusters with another file' err)" = 1 ] && pass || fail "BIG.BIN not reported: $(grep BIG err)"
rm -rf co2 && "$FSIMG" extract -q --force-crosslinked c.img -C co2 2>/dev/null
[ "$(ls co2 | wc -l)" = 101 ] && cmp -s co2/F7 cl/BIG.BIN && pass || fail "--force-crosslinked: $(ls co2 | wc -l) files"

# --- Zero runs are holes.
rm -rf z && mkdir z && { head -c 4096 /dev/urandom; head -c 8388608 /dev/zero; head -c 4096 /dev/urandom; } > z/Z.BIN
"$FSIMG" mkfs -q -t exfat -s 64M --from z z.img
rm -rf zo && "$FSIMG" extract -q z.img -C zo && cmp -s zo/Z.BIN z/Z.BIN && pass || fail "extract of Z.BIN"
[ $(( $(stat -c %b zo/Z.BIN) * 512 )) -lt 1048576 ] && pass || fail "Z.BIN occupies $(( $(stat -c %b zo/Z.BIN) * 512 )) bytes"
finish
