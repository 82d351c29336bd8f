#!/usr/bin/env python3
"""Low-level FAT12/16/32 edits for the repair tests (damage no writer makes on purpose).

usage: fat_entries.py IMAGE set COPY N VALUE...   FAT entries N, N+1, ... set to the VALUEs in
                                                  FAT copy COPY (1, 2, ...) or "all"; FAT32's top
                                                  4 bits kept
       fat_entries.py IMAGE unlink SHORTNAME      the root's entry with the 11-byte short name
                                                  SHORTNAME ("GONE1   BIN") and its LFN entries
                                                  marked deleted (0xE5), the FAT left as it is
"""
import struct
import sys

img, op = sys.argv[1], sys.argv[2]
f = open(img, "r+b")
b = f.read(512)
bps, spc, res, nfats = struct.unpack_from("<H", b, 11)[0], b[13], struct.unpack_from("<H", b, 14)[0], b[16]
fatsz = struct.unpack_from("<H", b, 22)[0] or struct.unpack_from("<I", b, 36)[0]
root = struct.unpack_from("<H", b, 17)[0]
total = struct.unpack_from("<H", b, 19)[0] or struct.unpack_from("<I", b, 32)[0]
rootdir = (res + nfats * fatsz) * bps
data = rootdir + (root * 32 + bps - 1) // bps * bps
clusters = (total - res - nfats * fatsz - (root * 32 + bps - 1) // bps) // spc
kind = 12 if clusters < 4085 else 16 if clusters < 65525 else 32
if op == "set":
    copy, n = sys.argv[3], int(sys.argv[4])
    values = [int(v, 0) for v in sys.argv[5:]]
    for k in (range(nfats) if copy == "all" else [int(copy) - 1]):
        base = (res + k * fatsz) * bps
        for i, v in enumerate(values):
            m = n + i
            if kind == 32:
                f.seek(base + 4 * m)
                old = struct.unpack("<I", f.read(4))[0]
                f.seek(base + 4 * m)
                f.write(struct.pack("<I", (old & 0xF0000000) | v))
            elif kind == 16:
                f.seek(base + 2 * m)
                f.write(struct.pack("<H", v))
            else:
                o = m + m // 2
                f.seek(base + o)
                w = struct.unpack("<H", f.read(2))[0]
                w = (w & 0x000F) | (v << 4) if m & 1 else (w & 0xF000) | v
                f.seek(base + o)
                f.write(struct.pack("<H", w))
elif op == "unlink":
    short = sys.argv[3].encode()
    if kind == 32:
        at, size = data + (struct.unpack_from("<I", b, 44)[0] - 2) * spc * bps, spc * bps
    else:
        at, size = rootdir, root * 32
    f.seek(at)
    d = f.read(size)
    for i in range(0, size, 32):
        if d[i:i + 11] == short:
            j = i
            while j >= 32 and d[j - 32 + 11] == 0x0F:
                j -= 32
            for k in range(j, i + 32, 32):
                f.seek(at + k)
                f.write(b"\xe5")
            break
    else:
        sys.exit("no entry " + sys.argv[3])
else:
    sys.exit(__doc__)
