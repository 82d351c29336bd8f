#!/usr/bin/env python3
"""changed_outside.py OLD NEW FIRST_LBA SECTORS KIND: prints the first byte
offsets (up to 5) where NEW differs from OLD outside the partition at
FIRST_LBA (SECTORS long, 512-byte sectors), other than what setting the
partition's type may change: for KIND mbr, the type byte of an MBR or EBR
entry (offset 4 of the 16-byte entries at 446..509 of a sector); for gpt,
the GPT headers and entry arrays (LBA 1..33 and the last 33 sectors), which
sgdisk -v and sgdisk -i judge. Prints nothing when nothing else differs."""
import sys

old, new, first, count, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
with open(old, "rb") as f:
    a = f.read()
with open(new, "rb") as f:
    b = f.read()
if len(a) != len(b):
    print("size %d -> %d" % (len(a), len(b)))
    sys.exit()
lo, hi, sectors = first * 512, (first + count) * 512, len(a) // 512
bad, step = [], 1 << 16
for blk in range(0, len(a), step):
    if a[blk:blk + step] == b[blk:blk + step]:
        continue
    for i in range(blk, min(len(a), blk + step)):
        if a[i] == b[i] or lo <= i < hi:
            continue
        s, o = divmod(i, 512)
        if kind == "dos" and 446 <= o < 510 and (o - 446) % 16 == 4:
            continue
        if kind == "gpt" and (1 <= s <= 33 or s >= sectors - 33):
            continue
        bad.append(i)
    if len(bad) >= 5:
        break
print(" ".join(map(str, bad[:5])))
