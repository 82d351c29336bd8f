#!/usr/bin/env bash
# Every line printed is true and safe (issue 21): a name holding control
# characters (ESC, BEL, a newline that would split a line) is printed in one
# spelling by every command, the one ls uses (core::escape_name: \x1b,
# lower-case hex, a backslash doubled), in fsck's findings, dump's record,
# index and directory views, ls, warnings and error messages; JSON keeps
# the decoded name. The names come from the real writers: ntfs-3g (POSIX
# namespace, which allows every character but '/' and NUL) and, on FAT,
# bytes written where mtools put an 8.3 name and a long name.
here=$(dirname "$0"); . "$here/../lib.sh"
for t in ntfs-3g fusermount mcopy python3; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
cd "$WORK"

# raw FILE...: fails when any file holds a control character other than a line end.
raw() { ! LC_ALL=C grep -q -P '[\x00-\x09\x0b-\x1f\x7f]' "$@"; }

# --- NTFS, names written by ntfs-3g
"$FSIMG" mkfs -q -t ntfs -s 16M n.img || fail "mkfs ntfs"
mkdir m
if ntfs-3g n.img m 2>err; then
  printf x > m/$'a\x1bb\nc' && mkdir m/$'d\x07ir' && printf y > m/$'d\x07ir/back\\slash'
  fusermount -u m
  "$FSIMG" ls -R n.img > ls.txt 2>&1 && raw ls.txt &&
    grep -qxF '/a\x1bb\x0ac' ls.txt && grep -qxF '/d\x07ir/back\\slash' ls.txt && pass ||
    fail "ls -R: $(cat -A ls.txt)"
  "$FSIMG" ls --json n.img / | python3 -c '
import json, sys
names = {e["name"] for e in json.load(sys.stdin)["entries"]}
sys.exit(0 if "a\x1bb\nc" in names and "d\x07ir" in names else 1)' && pass || fail "ls --json: the decoded names"
  rec=$("$FSIMG" ls --json n.img / | python3 -c '
import json, sys
print([e["mft_record"] for e in json.load(sys.stdin)["entries"] if e["name"] == "a\x1bb\nc"][0])')
  "$FSIMG" dump --what mft "$rec" n.img > rec.txt 2>&1 && raw rec.txt &&
    grep -qF '"a\x1bb\x0ac" (POSIX)' rec.txt && pass || fail "dump --what mft: $(cat -A rec.txt | grep -i name)"
  "$FSIMG" dump --what index / n.img > idx.txt 2>&1 && raw idx.txt &&
    grep -qF '"a\x1bb\x0ac"' idx.txt && pass || fail "dump --what index: $(cat -A idx.txt | tail -5)"
  # The record marked not in use: fsck names the index entry that points to it.
  cp n.img d.img
  python3 - d.img "$rec" <<'PY' || fail "damaging d.img"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    b = f.read(512)
    cluster = struct.unpack_from("<H", b, 11)[0] * b[13]
    f.seek(struct.unpack_from("<Q", b, 0x30)[0] * cluster + int(sys.argv[2]) * 1024 + 0x16)
    f.write(b"\0\0")  # FILE record flags: not in use
PY
  "$FSIMG" fsck d.img > fsck.txt 2>&1; rc=$?
  [ $rc = 4 ] && raw fsck.txt && grep -q '^error ntfs.index.stale-entry: .*entry "a\\x1bb\\x0ac" points to record' fsck.txt &&
    [ "$(grep -c '' fsck.txt)" = "$(grep -c '^\(error\|warning\|info\) \|^d.img\|clusters' fsck.txt)" ] && pass ||
    fail "fsck (exit $rc): $(cat -A fsck.txt)"
  "$FSIMG" fsck --json d.img > fsck.json
  python3 -c '
import json, sys
m = [f["message"] for f in json.load(sys.stdin)["findings"] if f["code"] == "ntfs.index.stale-entry"]
sys.exit(0 if m and "\"a\x1bb\nc\"" in m[0] else 1)' < fsck.json && pass || fail "fsck --json: the decoded name"
else
  echo "ntfs-3g cannot mount here ($(cat err)): the NTFS part is skipped"
fi

# --- an error message naming what the user typed
"$FSIMG" cat n.img $'/no\x1bpe' > out 2> err; rc=$?
[ $rc != 0 ] && raw err && grep -qF '"/no\x1bpe" does not exist' err && pass || fail "cat error: $(cat -A err)"

# --- FAT: control bytes in an 8.3 name and in a long name
mkdir src && printf 'hi\n' > src/hi && printf 'long\n' > src/l
"$FSIMG" mkfs -q -t fat16 -s 16M f.img || fail "mkfs fat16"
MTOOLS_NO_VFAT=1 mcopy -i f.img src/hi ::HI.TXT && mcopy -i f.img src/l "::long name.txt" || fail "mcopy"
python3 - f.img <<'PY' || fail "patching the names"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    b = f.read(512)
    bps, spc, res, nfats, roots, _, _, spf = struct.unpack_from("<HBHBHHBH", b, 11)
    root = (res + nfats * spf) * bps
    f.seek(root); d = f.read(32 * roots)
    done = 0
    for i in range(roots):
        e = d[32 * i: 32 * i + 32]
        if e[:11] == b"HI      TXT":
            f.seek(root + 32 * i + 1); f.write(b"\x1b"); done += 1   # H\x1b.TXT
        if e[11] == 0x0F and e[1:3] == b"l\0":
            f.seek(root + 32 * i + 3); f.write(b"\n\0"); done += 1   # l\nng name.txt
    sys.exit(0 if done == 2 else 1)
PY
"$FSIMG" ls f.img > fls.txt 2>&1 && raw fls.txt && grep -qxF 'H\x1b.TXT' fls.txt &&
  grep -qxF 'l\x0ang name.txt' fls.txt && pass || fail "FAT ls: $(cat -A fls.txt)"
"$FSIMG" fsck f.img > ffsck.txt 2>&1; rc=$?
[ $rc = 4 ] && raw ffsck.txt && grep -qF 'fat.name.invalid-short: /H\x1b.TXT: the short name "H\x1b.TXT"' ffsck.txt &&
  grep -qF 'fat.name.invalid-long: /l\x0ang name.txt:' ffsck.txt && pass || fail "FAT fsck (exit $rc): $(cat -A ffsck.txt)"
"$FSIMG" dump --what dir / f.img > fdir.txt 2>&1 && raw fdir.txt && grep -qF 'SFN   H\x1b.TXT' fdir.txt &&
  grep -qF '"l\x0ang name.txt"' fdir.txt && pass || fail "FAT dump --what dir: $(cat -A fdir.txt)"
finish
