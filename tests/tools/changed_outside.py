#!/usr/bin/env python3
"""changed_outside.py OLD NEW FIRST_LBA SECTORS KIND: prints the first byte
offsets (up to 5) where NEW differs from OLD outside the partition at
FIRST_LBA (SECTORS long, 512-byte sectors), other than what setting the
partition's type may change: for KIND mbr, the type byte of an MBR or EBR
entry (offset 4 of the 16-byte entries at 446..509 of a sector); for gpt,
the GPT headers and entry arrays (LBA 1..33 and the last 33 sectors), which
sgdisk -v and sgdisk -i judge. Prints nothing when nothing else differs.

Only where either file has data is read (SEEK_DATA/SEEK_HOLE): where both
have a hole both hold zeros. The disks are sparse; reading their holes
through the kernel cost seconds per call (issue 43)."""
import os
import sys

from sparse_data import data_runs

old, new, first, count, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
fa, fb = open(old, "rb"), open(new, "rb")
size_a, size_b = os.fstat(fa.fileno()).st_size, os.fstat(fb.fileno()).st_size
if size_a != size_b:
    print("size %d -> %d" % (size_a, size_b))
    sys.exit()
size = size_a
lo, hi, sectors = first * 512, (first + count) * 512, size // 512


def read(f, at, n):
    f.seek(at)
    b = f.read(n)
    return b + bytes(n - len(b))


bad, step = [], 1 << 16
blocks = set()
for start, end in data_runs(fa, size) + data_runs(fb, size):
    blocks.update(range(start // step * step, end, step))
for blk in sorted(blocks):
    n = min(step, size - blk)
    if lo <= blk and blk + n <= hi:
        continue  # inside the partition
    a, b = read(fa, blk, n), read(fb, blk, n)
    if a == b:
        continue
    for i in range(n):
        at = blk + i
        if a[i] == b[i] or lo <= at < hi:
            continue
        s, o = divmod(at, 512)
        if kind == "dos" and 446 <= o < 510 and (o - 446) % 16 == 4:
            continue
        if kind == "gpt" and (1 <= s <= 33 or s >= sectors - 33):
            continue
        bad.append(at)
    if len(bad) >= 5:
        break
print(" ".join(map(str, bad[:5])))
