#!/usr/bin/env python3
"""Makes the tree of files with holes the NTFS sparse tests store.

usage: make_sparse_tree.py DIR SEED

Writes into DIR (which must exist) a file with a hole at the start, one in
the middle, one at the end, one that is all hole, one smaller than an NTFS
compression unit with a hole, a dense file and a tiny text file with a
hole; the data bytes are random from SEED, so two runs with one seed make
the same tree.
"""
import os
import random
import sys

d, seed = sys.argv[1], int(sys.argv[2])
r = random.Random(seed)


def rnd(n):
    return bytes(r.getrandbits(8) for _ in range(n))


def make(name, size, pieces):  # pieces: (offset, bytes); the rest stays a hole
    with open(os.path.join(d, name), "wb") as f:
        for off, b in pieces:
            f.seek(off)
            f.write(b)
        f.truncate(size)


make("hole-start.bin", (1 << 20) + 100000, [((1 << 20), rnd(100000))])
make("hole-middle.bin", 200000 + (2 << 20) + 50000, [(0, rnd(200000)), (200000 + (2 << 20), rnd(50000))])
make("hole-end.bin", 3 << 20, [(0, rnd(300000))])
make("all-hole.bin", 5 << 20, [])
make("small-hole.bin", 40000, [(30000, rnd(10000))])
make("dense.bin", 300000, [(0, rnd(300000))])
make("tiny-hole.txt", 200, [(150, b"end\n")])
