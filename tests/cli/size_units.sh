#!/usr/bin/env bash
# Size units in every command (issue 26): K, M, G... and KiB, MiB, GiB... are
# powers of 1024, kB/KB, MB, GB... powers of 1000, as coreutils truncate(1)
# reads them; fractions and spaces are refused with a clear message.
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1

# mkfs -s 1GB: an image of exactly 10^9 bytes (1,953,125 sectors of 512 bytes:
# no rounding), and the summary says both units (10^9 / 2^20 = 953.67 MiB).
out=$("$FSIMG" mkfs -t fat32 -s 1GB g.img) || fail "mkfs -s 1GB: $out"
[ "$(stat -c %s g.img)" = 1000000000 ] && pass || fail "mkfs -s 1GB made $(stat -c %s g.img) bytes"
grep -qF "FAT32 1 GB (953.67 MiB)" <<<"$out" && pass || fail "mkfs summary: $out"
# 1G stays 2^30 bytes.
"$FSIMG" mkfs -q -t exfat -s 1G G.img || fail "mkfs -s 1G"
[ "$(stat -c %s G.img)" = 1073741824 ] && pass || fail "mkfs -s 1G made $(stat -c %s G.img) bytes"
# A size that is not a whole number of sectors: 10^6 = 1953 sectors + 64
# bytes; mkfs keeps the file at the size given and leaves the tail unused.
out=$("$FSIMG" mkfs -t fat12 -s 1MB m.img 2>&1) || fail "mkfs -s 1MB: $out"
[ "$(stat -c %s m.img)" = 1000000 ] && pass || fail "mkfs -s 1MB made $(stat -c %s m.img) bytes"
grep -qF "the last 64 bytes stay unused" <<<"$out" && pass || fail "mkfs -s 1MB: no tail warning: $out"
# The cluster size option reads the same rule: 4kB is 4000 bytes, not a power of two.
expect_fail 2 "4000" "$FSIMG" mkfs -t exfat -s 64M -c 4kB c.img
"$FSIMG" mkfs -q -t exfat -s 64MiB -c 4KiB c.img && [ "$(stat -c %s c.img)" = 67108864 ] && pass \
  || fail "mkfs -s 64MiB -c 4KiB"

# Refusals name the text and say why.
expect_fail 2 'invalid size "1.5G": fractions are not accepted: write 1536M;' "$FSIMG" mkfs -t fat32 -s 1.5G f.img
# The hint keeps the kind of unit: decimal GB in MB (before: "write 1536M" for 1.5GB too).
expect_fail 2 'invalid size "1.5GB": fractions are not accepted: write 1500MB;' "$FSIMG" mkfs -t fat32 -s 1.5GB f.img
expect_fail 2 'invalid size "1.0G": fractions are not accepted: write 1G;' "$FSIMG" mkfs -t fat32 -s 1.0G f.img
expect_fail 2 'invalid size "256 M": it must not contain spaces' "$FSIMG" mkfs -t fat32 -s "256 M" f.img
expect_fail 2 'invalid size "4kb": a lower-case b' "$FSIMG" mkfs -t fat32 -s 4kb f.img
[ ! -e f.img ] && pass || fail "a refused size left f.img"

# slack --volume-size 256GB is 256,000,000,000 bytes; 256G is 2^38.
mkdir t && head -c 45 /dev/zero > t/a.txt
out=$("$FSIMG" slack -t exfat -c 128K --volume-size 256GB t) || fail "slack 256GB: $out"
grep -qxF "Volume: 256 GB (238.42 GiB)" <<<"$out" && pass || fail "slack header: $out"
v=$("$FSIMG" slack --json -t exfat -c 128K --volume-size 256GB t | python3 -c 'import json,sys; print(json.load(sys.stdin)["volume_bytes"])')
[ "$v" = 256000000000 ] && pass || fail "slack --volume-size 256GB: $v"
v=$("$FSIMG" slack --json -t exfat -c 128K --volume-size 256G t | python3 -c 'import json,sys; print(json.load(sys.stdin)["volume_bytes"])')
[ "$v" = 274877906944 ] && pass || fail "slack --volume-size 256G: $v"
out=$("$FSIMG" slack -t exfat -c 128K --volume-size 256G t) || fail "slack 256G"
grep -qxF "Volume: 256 GiB (274.88 GB)" <<<"$out" && pass || fail "slack header 256G: $out"
expect_fail 2 'invalid size "1.5G"' "$FSIMG" slack --volume-size 1.5G t
finish
