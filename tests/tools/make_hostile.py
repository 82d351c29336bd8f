#!/usr/bin/env python3
"""Turns an image fsimg made into a hostile one, for the safety tests.

usage: make_hostile.py dag IMAGE           (changes IMAGE in place)
       make_hostile.py crosslink IMAGE N
       make_hostile.py sparse IMAGE NAME BYTES

dag: IMAGE (FAT, exFAT or NTFS) holds /A/A/.../A, each level's directory
     holding two subdirectories A and B (B empty). Every B entry is pointed at
     its sibling A's directory (FAT: first cluster; exFAT: the stream's first
     cluster, length and NoFatChain flag, SetChecksum recomputed; NTFS: the
     index entry's file reference, MFT and INDX fixups respected). A DAG of
     depth D then has 2^D paths to the deepest directory though the image
     holds D + 1 directories.
crosslink: a FAT image whose root holds /BIG.BIN and N files F1..FN (FAT 8.3
     names): every Fk entry is pointed at BIG.BIN's chain and given its size.
sparse: an NTFS image holding a one-cluster file NAME (ASCII, at most 8.3):
     its unnamed $DATA becomes one sparse run of BYTES (a multiple of the
     cluster size), with the sparse flag, as a file of BYTES holding nothing;
     its old cluster stays marked in $Bitmap.
Prints what it changed.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exfat_damage import ExFat  # noqa: E402
from fat_damage import Fat  # noqa: E402


def kind_of(path):
    with open(path, "rb") as f:
        b = f.read(512)
    if b[3:11] == b"EXFAT   ":
        return "exfat"
    if b[3:11] == b"NTFS    ":
        return "ntfs"
    return "fat"


def fat_dag(path):
    x = Fat(path)
    d, levels = 0, 0
    while True:
        try:
            a = x.find(d, b"A          ")
            b = x.find(d, b"B          ")
        except SystemExit:
            break
        e = x.read(b["off"], 32)
        struct.pack_into("<H", e, 20, a["cluster"] >> 16)
        struct.pack_into("<H", e, 26, a["cluster"] & 0xFFFF)
        x.write(b["off"], e)
        levels += 1
        d = a["cluster"]
    print(f"FAT: {levels} B entries now lead to their sibling A")
    return levels


def exfat_dag(path):
    x = ExFat(path)
    offs = x.root_offs()
    levels = 0
    while True:
        try:
            a = x.find_set(offs, "A")
            b = x.find_set(offs, "B")
        except SystemExit:
            break
        sa = x.stream(a)
        for f in ("first", "length", "valid"):
            x.stream_set(b, f, sa[f])
        sb = x.stream(b)
        x.stream_set(b, "flags", (sb["flags"] & ~2) | (sa["flags"] & 2))
        x.fix_set(b)
        levels += 1
        offs = x.dir_offsets(sa["first"], sa["length"], sa["flags"] & 2)
    print(f"exFAT: {levels} B entry sets now lead to their sibling A")
    return levels


def fixup(buf, restore):
    """Applies (restore=True) or re-applies the update sequence array of a FILE/INDX record."""
    usa_off, usa_count = struct.unpack_from("<HH", buf, 4)
    usn = buf[usa_off:usa_off + 2]
    for i in range(1, usa_count):
        end = i * 512 - 2
        if end + 2 > len(buf):
            break
        slot = usa_off + 2 * i
        if restore:
            buf[end:end + 2] = buf[slot:slot + 2]
        else:
            buf[slot:slot + 2] = buf[end:end + 2]
            buf[end:end + 2] = usn


def ntfs_dag(path):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        blocks = []  # (offset, size) of every FILE record and INDX block
        for off in range(0, len(data) - 1024, 512):
            if data[off:off + 4] == b"FILE":
                blocks.append((off, 1024 if struct.unpack_from("<H", data, off + 6)[0] <= 3 else 4096))
            elif data[off:off + 4] == b"INDX":
                blocks.append((off, 512 * (struct.unpack_from("<H", data, off + 6)[0] - 1)))
        entries = {}  # parent reference -> {name: [(block offset, entry offset)]}
        fixed = {}
        for off, size in blocks:
            buf = bytearray(data[off:off + size])
            fixup(buf, True)
            fixed[off] = buf
            for o in range(0, size - 0x52, 8):
                elen, klen = struct.unpack_from("<HH", buf, o + 8)
                if elen < 0x52 or elen > 0x300 or klen < 0x42 or klen > elen:
                    continue
                if buf[o + 16 + 64] != 1 or buf[o + 16 + 65] > 3:
                    continue
                name = bytes(buf[o + 16 + 66:o + 16 + 68])
                if name not in (b"A\0", b"B\0"):
                    continue
                parent = bytes(buf[o + 16:o + 24])
                entries.setdefault(parent, {}).setdefault(name, []).append((off, o))
        levels = 0
        touched = set()
        for parent, names in entries.items():
            if b"A\0" not in names or b"B\0" not in names:
                continue
            boff, eo = names[b"A\0"][0]
            ref = fixed[boff][eo:eo + 8]
            for boff2, eo2 in names[b"B\0"]:
                fixed[boff2][eo2:eo2 + 8] = ref
                touched.add(boff2)
            levels += 1
        for off in touched:
            buf = fixed[off]
            fixup(buf, False)
            f.seek(off)
            f.write(buf)
    print(f"NTFS: {levels} B index entries now lead to their sibling A")
    return levels


def ntfs_sparse(path, name, nbytes):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        bps = struct.unpack_from("<H", data, 0x0B)[0]
        cluster = bps * data[0x0D]
        if nbytes % cluster:
            sys.exit(f"{nbytes} is not a multiple of the {cluster}-byte cluster")
        want = name.encode("utf-16-le")
        for off in range(0, len(data) - 1024, 1024):
            if data[off:off + 4] != b"FILE":
                continue
            rec = bytearray(data[off:off + 1024])
            fixup(rec, True)
            a = struct.unpack_from("<H", rec, 0x14)[0]
            named, data_at = False, None
            while a + 16 <= len(rec):
                t, ln = struct.unpack_from("<II", rec, a)
                if t == 0xFFFFFFFF or ln == 0:
                    break
                if t == 0x30 and rec[a + 8] == 0:
                    v = a + struct.unpack_from("<H", rec, a + 0x14)[0]
                    if rec[v + 64] * 2 == len(want) and bytes(rec[v + 66:v + 66 + len(want)]) == want:
                        named = True
                if t == 0x80 and rec[a + 8] == 1 and rec[a + 9] == 0:
                    data_at = a
                a += ln
            if not named or data_at is None:
                continue
            a = data_at
            ln = struct.unpack_from("<I", rec, a + 4)[0]
            mp = struct.unpack_from("<H", rec, a + 0x20)[0]
            clusters = nbytes // cluster
            lb = (clusters.bit_length() + 8) // 8
            runlist = bytes([lb]) + clusters.to_bytes(lb, "little") + b"\0"
            if mp + len(runlist) > ln:
                sys.exit("the runlist does not fit the attribute")
            rec[a + mp:a + ln] = runlist + bytes(ln - mp - len(runlist))
            struct.pack_into("<H", rec, a + 0x0C, struct.unpack_from("<H", rec, a + 0x0C)[0] | 0x8000)
            struct.pack_into("<Q", rec, a + 0x18, clusters - 1)
            for field in (0x28, 0x30, 0x38):
                struct.pack_into("<Q", rec, a + field, nbytes)
            fixup(rec, False)
            f.seek(off)
            f.write(rec)
            print(f"NTFS: {name} (record at byte {off}) is now a sparse file of {nbytes} bytes")
            return
    sys.exit(f"no non-resident file named {name}")


def crosslink(path, n):
    x = Fat(path)
    big = x.find(0, b"BIG     BIN")
    for k in range(1, n + 1):
        name = (f"F{k}".ljust(8) + "   ").encode()
        e = x.find(0, name)
        raw = x.read(e["off"], 32)
        x.free_chain(e["cluster"]) if e["cluster"] >= 2 else None
        struct.pack_into("<H", raw, 20, big["cluster"] >> 16)
        struct.pack_into("<H", raw, 26, big["cluster"] & 0xFFFF)
        struct.pack_into("<I", raw, 28, big["size"])
        x.write(e["off"], raw)
    x.sync_fsinfo()
    print(f"FAT: {n} files now share BIG.BIN's chain ({big['size']} bytes)")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "dag":
        kind = kind_of(sys.argv[2])
        levels = {"fat": fat_dag, "exfat": exfat_dag, "ntfs": ntfs_dag}[kind](sys.argv[2])
        sys.exit(0 if levels > 0 else 1)
    if len(sys.argv) == 5 and sys.argv[1] == "sparse":
        ntfs_sparse(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "crosslink":
        crosslink(sys.argv[2], int(sys.argv[3]))
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
