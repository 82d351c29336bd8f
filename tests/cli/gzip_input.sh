#!/usr/bin/env bash
# .gz input (issue 18): decompressed lazily, only as far as the volume the
# boot sector declares and the reads reach, with a cap on temporary space
# (FSIMG_GZIP_TEMP_LIMIT); every member's CRC32/ISIZE trailer is checked
# (fsck decompresses the rest to do so), a cut or damaged stream is reported
# (never "clean"), and trailing garbage is reported as a warning.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
cd "$WORK"

# A 64 MiB exFAT volume whose 48 MiB file is random: its data is what would fill the temporary file.
mkdir t && head -c 50000000 /dev/urandom > t/R.BIN
"$FSIMG" mkfs -q -t exfat -s 64M --from t r.img
gzip -1 -c r.img > r.img.gz
# Lazy: dump and ls read the metadata only, well under an 8 MiB cap; cat of the file needs it all.
FSIMG_GZIP_TEMP_LIMIT=8M "$FSIMG" dump r.img.gz >/dev/null 2>err && pass || fail "dump under an 8 MiB cap: $(cat err)"
FSIMG_GZIP_TEMP_LIMIT=8M "$FSIMG" ls -l r.img.gz >out 2>err && grep -q "R.BIN" out && pass || fail "ls under an 8 MiB cap: $(cat err)"
FSIMG_GZIP_TEMP_LIMIT=8M "$FSIMG" cat r.img.gz /R.BIN >/dev/null 2>err; rc=$?
[ $rc = 1 ] && grep -q "needs more than 8 MiB (8.39 MB) of temporary space" err && pass || fail "cat past the cap: exit $rc $(cat err)"
"$FSIMG" cat r.img.gz /R.BIN | cmp -s - t/R.BIN && pass || fail "cat of R.BIN from the .gz"
"$FSIMG" fsck r.img.gz >out 2>err && pass || fail "fsck of a sound .gz: $(cat out err)"

# A cut trailer: no longer clean.
size=$(stat -c %s r.img.gz)
head -c $((size - 4)) r.img.gz > cut.img.gz
"$FSIMG" fsck cut.img.gz >out 2>err; rc=$?
[ $rc = 8 ] && grep -q "ends early, before its trailer" err && pass || fail "cut trailer: exit $rc $(cat err)"
# A CRC32 that does not match.
cp r.img.gz crc.img.gz
python3 -c "
import sys; f=open('crc.img.gz','r+b'); f.seek(-8,2); b=f.read(1); f.seek(-8,2); f.write(bytes([b[0]^0xFF]))"
"$FSIMG" fsck crc.img.gz >out 2>err; rc=$?
[ $rc = 8 ] && grep -q "CRC32 in the trailer does not match" err && pass || fail "bad CRC32: exit $rc $(cat err)"
# Trailing garbage: a warning, the check stands.
{ cat r.img.gz; printf 'garbage!'; } > tg.img.gz
"$FSIMG" fsck tg.img.gz >out 2>err; rc=$?
[ $rc = 0 ] && grep -q "8 bytes of trailing garbage" err && pass || fail "trailing garbage: exit $rc $(cat err)"
# Cut inside the first MiB (what opening decompresses): refused at once, naming it;
# cut further on: ls reads what it needs, fsck reports the cut.
"$FSIMG" mkfs -q -t fat32 -s 64M small.img && gzip -c small.img > small.img.gz
head -c 200 small.img.gz > scut.img.gz
"$FSIMG" ls scut.img.gz >out 2>err; rc=$?
[ $rc = 1 ] && grep -q "scut.img.gz" err && grep -q "ends early" err && pass || fail "cut small .gz: exit $rc $(cat err)"
head -c $(( $(stat -c %s small.img.gz) * 3 / 4 )) small.img.gz > lcut.img.gz
"$FSIMG" ls lcut.img.gz >out 2>err && pass || fail "ls of a .gz cut after its metadata: $(cat err)"
"$FSIMG" fsck lcut.img.gz >out 2>err; rc=$?
[ $rc = 8 ] && grep -q "ends early" err && pass || fail "fsck of a .gz cut late: exit $rc $(cat err)"
finish
