#!/usr/bin/env python3
"""Damages an exFAT image in one precise way, for fsck tests.

usage: exfat_damage.py IMAGE KIND      (changes IMAGE in place)
       exfat_damage.py --list
       exfat_damage.py --batch          (IMAGE<TAB>KIND lines; see damage_batch.py)

The image is expected to hold what tests/oracle/exfat_fsck_damage.sh puts in
it (fsimg mkfs -t exfat -L TESTLBL --from): /A.TXT and /B.TXT (several
clusters each, contiguous: NoFatChain), /E.TXT (empty), /DIR/ with
/DIR/C.TXT and /DIR/SUB/. Each kind changes what it must so that exactly one
finding code follows: a changed boot-sector field is written to both boot
regions with both checksums recomputed, a changed entry set gets its
SetChecksum (and NameHash) recomputed, a chain damage first turns the file
into a FAT chain (flag cleared, FAT entries written), which is valid by
itself. Prints what it changed.

Facts: docs/formats.md §2 [EXFAT §3.1, §3.4, §4.1, §6-7].
"""
import struct
import sys

# Recommended up-case mapping is identity except a-z (enough for ASCII names).


def upcase(u):
    return u - 32 if 0x61 <= u <= 0x7A else u


def rot16(s, b):
    return (((s & 1) << 15) | (s >> 1)) + b & 0xFFFF


def rot32(s, b):
    return (((s & 1) << 31) | (s >> 1)) + b & 0xFFFFFFFF


class ExFat:
    def __init__(self, path):
        self.f = open(path, "r+b")
        b = self.read(0, 512)
        self.bps = 1 << b[108]
        self.cbytes = self.bps << b[109]
        (self.fat_off, self.fat_len, self.heap_off, self.ccount, self.root) = struct.unpack_from("<IIIII", b, 80)
        self.fat = self.fat_off * self.bps
        self.heap = self.heap_off * self.bps

    def read(self, off, n):
        self.f.seek(off)
        return bytearray(self.f.read(n))

    def write(self, off, data):
        self.f.seek(off)
        self.f.write(bytes(data))

    def coff(self, c):
        return self.heap + (c - 2) * self.cbytes

    def fat_get(self, n):
        return struct.unpack("<I", self.read(self.fat + 4 * n, 4))[0]

    def fat_set(self, n, v):
        self.write(self.fat + 4 * n, struct.pack("<I", v))

    def chain(self, c):
        out = []
        while 2 <= c <= self.ccount + 1 and c not in out:
            out.append(c)
            c = self.fat_get(c)
        return out

    # Boot regions: apply fn(sector0 bytearray) to both, recompute checksums.
    def boot_edit(self, fn, regions=(0, 12)):
        for first in regions:
            s0 = self.read(first * self.bps, self.bps)
            fn(s0)
            self.write(first * self.bps, s0)
            self.fix_checksum(first)

    def fix_checksum(self, first):
        region = self.read(first * self.bps, 11 * self.bps)
        s = 0
        for i, b in enumerate(region):
            if i in (106, 107, 112):
                continue
            s = rot32(s, b)
        self.write((first + 11) * self.bps, struct.pack("<I", s) * (self.bps // 4))

    # Directories: (offset of each 32-byte entry) for the root or a set's clusters.
    def dir_offsets(self, first, length=None, nofat=False):
        clusters = list(range(first, first + length // self.cbytes)) if nofat else self.chain(first)
        return [self.coff(c) + i for c in clusters for i in range(0, self.cbytes, 32)]

    def entries(self, offs):
        return [(o, self.read(o, 32)) for o in offs]

    def find_set(self, offs, name):
        """The offsets of the entry set named `name` in a directory."""
        ents = self.entries(offs)
        for i, (o, e) in enumerate(ents):
            if e[0] != 0x85:
                continue
            n = e[1]
            s = ents[i + 1][1]
            ln = s[3]
            chars = b"".join(bytes(ents[i + 2 + k][1][2:32]) for k in range(n - 1))[: 2 * ln]
            if chars.decode("utf-16-le") == name:
                return [ents[i + k][0] for k in range(n + 1)]
        raise SystemExit(f"no entry set named {name}")

    def root_offs(self):
        return self.dir_offsets(self.root)

    def set_of(self, path):
        parts = path.strip("/").split("/")
        offs = self.root_offs()
        for p in parts[:-1]:
            st = self.stream(self.find_set(offs, p))
            offs = self.dir_offsets(st["first"], st["length"], st["flags"] & 2)
        return self.find_set(offs, parts[-1])

    def stream(self, so):
        s = self.read(so[1], 32)
        return {"flags": s[1], "namelen": s[3], "hash": struct.unpack_from("<H", s, 4)[0],
                "valid": struct.unpack_from("<Q", s, 8)[0], "first": struct.unpack_from("<I", s, 20)[0],
                "length": struct.unpack_from("<Q", s, 24)[0]}

    def set_bytes(self, so):
        return b"".join(bytes(self.read(o, 32)) for o in so)

    def fix_set(self, so, rehash=False):
        if rehash:
            st = self.stream(so)
            raw = b"".join(bytes(self.read(o, 32)[2:32]) for o in so[2:])[: 2 * st["namelen"]]
            h = 0
            for k in range(0, len(raw), 2):
                u = upcase(struct.unpack_from("<H", raw, k)[0])
                h = rot16(rot16(h, u & 0xFF), u >> 8)
            self.write(so[1] + 4, struct.pack("<H", h))
        data = self.set_bytes(so)
        s = 0
        for i, b in enumerate(data):
            if i in (2, 3):
                continue
            s = rot16(s, b)
        self.write(so[0] + 2, struct.pack("<H", s))

    def stream_set(self, so, field, value):
        fmt, off = {"flags": ("<B", 1), "namelen": ("<B", 3), "hash": ("<H", 4), "valid": ("<Q", 8),
                    "first": ("<I", 20), "length": ("<Q", 24)}[field]
        self.write(so[1] + off, struct.pack(fmt, value))

    def make_chained(self, so):
        """Turns a contiguous file into an equivalent FAT chain; returns its clusters."""
        st = self.stream(so)
        n = -(-st["length"] // self.cbytes)
        cl = list(range(st["first"], st["first"] + n))
        for a, b in zip(cl, cl[1:] + [0xFFFFFFFF]):
            self.fat_set(a, b)
        self.stream_set(so, "flags", st["flags"] & ~2)
        self.fix_set(so)
        return cl

    # Allocation bitmap
    def bitmap_off(self):
        if getattr(self, "_bitmap", None) is None:  # read once: no kind moves the bitmap
            for o, e in self.entries(self.root_offs()):
                if e[0] == 0x81:
                    self._bitmap = (self.coff(struct.unpack_from("<I", e, 20)[0]), o)
                    break
            else:
                raise SystemExit("no bitmap entry")
        return self._bitmap

    def bit(self, c, value):
        b, _ = self.bitmap_off()
        i = c - 2
        byte = self.read(b + i // 8, 1)[0]
        byte = byte | (1 << (i % 8)) if value else byte & ~(1 << (i % 8))
        self.write(b + i // 8, bytes([byte]))

    def bit_get(self, c):
        b, _ = self.bitmap_off()
        i = c - 2
        return (self.read(b + i // 8, 1)[0] >> (i % 8)) & 1

    def free_cluster(self):
        for c in range(self.ccount + 1, 1, -1):
            if not self.bit_get(c):
                return c
        raise SystemExit("no free cluster")

    def root_entry(self, etype):
        for o, e in self.entries(self.root_offs()):
            if e[0] == etype:
                return o
        raise SystemExit(f"no root entry 0x{etype:02X}")

    def first_free_slot(self, offs):
        for o in offs:
            if self.read(o, 1)[0] == 0:
                return o
        raise SystemExit("no free directory slot")


def field(offset, fmt, value):
    def fn(s0):
        struct.pack_into(fmt, s0, offset, value)
    return fn


def k_boot_checksum(x):
    x.write(11 * x.bps, struct.pack("<I", 0x12345678))
    return "main checksum sector word 0 = 12345678"


def k_boot_backup_checksum(x):
    x.write(23 * x.bps, struct.pack("<I", 0x12345678))
    return "backup checksum sector word 0 = 12345678"


def k_boot_backup_differs(x):
    x.boot_edit(field(100, "<I", 0xDEADBEEF), regions=(12,))
    return "backup VolumeSerialNumber = DEADBEEF, backup checksum recomputed"


def k_boot_extended_signature(x):
    def both(first):
        x.write((first + 1) * x.bps + x.bps - 4, b"\0\0\0\0")
        x.fix_checksum(first)
    both(0)
    both(12)
    return "ExtendedBootSignature of extended boot sector 1 zeroed in both regions, checksums recomputed"


def k_boot_dirty(x):
    x.write(106, struct.pack("<H", 0x0002))
    return "VolumeFlags = 0002 (VolumeDirty)"


def k_boot_media_failure(x):
    x.write(106, struct.pack("<H", 0x0004))
    return "VolumeFlags = 0004 (MediaFailure)"


def k_percent_in_use(x):
    x.write(112, bytes([90]))
    return "PercentInUse = 90"


BOOT_FIELDS = {
    "boot-jump-boot": (0, "<B", 0xE9),
    "boot-must-be-zero": (20, "<B", 1),
    "boot-signature": (510, "<H", 0),
    "boot-revision": (104, "<H", 0x0200),
    "boot-bytes-per-sector-shift": (108, "<B", 8),
    "boot-sectors-per-cluster-shift": (109, "<B", 20),
    "boot-number-of-fats": (110, "<B", 3),
    "boot-percent-in-use-range": (112, "<B", 150),
    "boot-fat-offset": (80, "<I", 10),
    "boot-fat-length": (84, "<I", 1),
    "boot-root-cluster": (96, "<I", 0),
    "boot-volume-flags": (106, "<H", 0x0001),
}


def boot_field_kind(kind):
    off, fmt, value = BOOT_FIELDS[kind]

    def k(x):
        x.boot_edit(field(off, fmt, value))
        return f"boot sector byte {off} = {value:#x} in both regions, checksums recomputed"
    return k


def k_boot_cluster_count(x):
    x.boot_edit(field(92, "<I", x.ccount - 1))
    return f"ClusterCount = {x.ccount - 1} in both regions, checksums recomputed"


def k_boot_truncated(x):
    x.f.seek(0, 2)
    size = x.f.tell()
    x.f.truncate(size - 65536)
    return f"image cut from {size} to {size - 65536} bytes"


def k_fat_media(x):
    x.fat_set(0, 0xFFFFFFF0)
    return "FatEntry[0] = FFFFFFF0"


def k_bitmap_lost(x):
    c = x.free_cluster()
    x.bit(c, 1)
    return f"bitmap bit of free cluster {c} set"


def k_bitmap_free_in_use(x):
    c = x.stream(x.set_of("/A.TXT"))["first"]
    x.bit(c, 0)
    return f"bitmap bit of /A.TXT's first cluster {c} cleared"


def k_bitmap_free_all(x):
    st = x.stream(x.set_of("/A.TXT"))
    n = -(-st["length"] // x.cbytes)
    for c in range(st["first"], st["first"] + n):
        x.bit(c, 0)
    return f"bitmap bits of /A.TXT's {n} clusters from {st['first']} cleared"


def k_bitmap_missing(x):
    o = x.root_entry(0x81)
    x.write(o, b"\x01")
    return "root Allocation Bitmap entry type 81 -> 01 (not in use)"


def k_bitmap_length(x):
    _, o = x.bitmap_off()
    x.write(o + 24, struct.pack("<Q", 1))
    return "Allocation Bitmap DataLength = 1"


def k_upcase_checksum(x):
    o = x.root_entry(0x82)
    x.write(o + 4, struct.pack("<I", 0x12345678))
    return "Up-case Table TableChecksum = 12345678"


def k_upcase_missing(x):
    o = x.root_entry(0x82)
    x.write(o, b"\x02")
    return "root Up-case Table entry type 82 -> 02 (not in use)"


def k_boot_volume_length(x):
    x.boot_edit(field(72, "<Q", 100))
    return "VolumeLength = 100 sectors in both regions, checksums recomputed"


def k_set_checksum(x):
    so = x.set_of("/A.TXT")
    (v,) = struct.unpack_from("<H", x.read(so[0], 32), 2)
    x.write(so[0] + 2, struct.pack("<H", v ^ 0x5555))
    return "/A.TXT SetChecksum ^= 5555"


def k_set_name_hash(x):
    so = x.set_of("/A.TXT")
    x.stream_set(so, "hash", x.stream(so)["hash"] ^ 1)
    x.fix_set(so)
    return "/A.TXT NameHash ^= 1, SetChecksum recomputed"


def k_set_timestamp(x):
    # Create10msIncrement (File entry byte 20) runs 0..199 [EXFAT 7.4.9].
    so = x.set_of("/A.TXT")
    x.write(so[0] + 20, bytes([250]))
    x.fix_set(so)
    return "/A.TXT Create10msIncrement = 250, SetChecksum recomputed"


def k_boot_main_zeroed(x):
    # fsck.exfat 1.2.0 -n: "Bad fs_name in boot sector", exit 8.
    x.write(0, bytes(x.bps))
    return "main boot sector (sector 0) zeroed"


def k_set_secondary_count(x):
    so = x.set_of("/A.TXT")
    x.write(so[0] + 1, bytes([len(so)]))
    return f"/A.TXT SecondaryCount {len(so) - 1} -> {len(so)} (the next entry is a File entry)"


def k_set_no_stream(x):
    so = x.set_of("/A.TXT")
    x.write(so[1], b"\xC2")
    return "/A.TXT Stream Extension type C0 -> C2"


def k_set_name_length(x):
    so = x.set_of("/A.TXT")
    x.stream_set(so, "namelen", 200)
    x.fix_set(so)
    return "/A.TXT NameLength = 200, SetChecksum recomputed"


def k_set_orphan_secondary(x):
    o = x.first_free_slot(x.root_offs())
    x.write(o, b"\xC1\x00" + "X".encode("utf-16-le") + b"\0" * 28)
    return f"a File Name entry (C1) written at the root's first free slot (byte {o})"


def k_set_unknown_critical(x):
    o = x.first_free_slot(x.root_offs())
    x.write(o, b"\x84" + b"\0" * 31)
    return f"an entry of unknown critical primary type 84 written at byte {o}"


def rename(x, path, new):
    so = x.set_of(path)
    raw = new.encode("utf-16-le")
    assert len(new) == x.stream(so)["namelen"]
    for k, o in enumerate(so[2:]):
        x.write(o + 2, raw[30 * k:30 * k + 30].ljust(30, b"\0"))
    x.fix_set(so, rehash=True)


def k_name_invalid(x):
    rename(x, "/A.TXT", "A:TXT")
    return "/A.TXT renamed A:TXT, NameHash and SetChecksum recomputed"


def k_name_duplicate(x):
    rename(x, "/B.TXT", "a.txt")
    return "/B.TXT renamed a.txt (A.TXT after up-casing), NameHash and SetChecksum recomputed"


def k_stream_valid_length(x):
    so = x.set_of("/A.TXT")
    x.stream_set(so, "valid", x.stream(so)["length"] + 1)
    x.fix_set(so)
    return "/A.TXT ValidDataLength = DataLength + 1"


def k_stream_first_cluster(x):
    so = x.set_of("/E.TXT")
    c = x.free_cluster()
    x.stream_set(so, "first", c)
    x.fix_set(so)
    return f"empty /E.TXT FirstCluster = {c}"


def k_stream_first_cluster_range(x):
    so = x.set_of("/A.TXT")
    x.make_chained(so)
    x.stream_set(so, "first", x.ccount + 10)
    x.fix_set(so)
    return f"/A.TXT (a FAT chain) FirstCluster = {x.ccount + 10}, past the heap; SetChecksum recomputed"


def k_set_unknown_critical_secondary(x):
    so = x.set_of("/E.TXT")
    o = so[-1] + 32
    assert o == x.first_free_slot(x.root_offs()), "/E.TXT is not the root's last set"
    x.write(o, b"\xC5" + b"\0" * 31)
    x.write(so[0] + 1, bytes([len(so)]))
    x.fix_set(so + [o])
    return f"/E.TXT gets a critical secondary of unknown type C5 (byte {o}), SetChecksum recomputed"


def k_stream_outside_heap(x):
    so = x.set_of("/A.TXT")
    st = x.stream(so)
    x.stream_set(so, "length", st["length"] + (x.ccount + 2 - st["first"]) * x.cbytes)
    x.fix_set(so)
    return "/A.TXT (NoFatChain) DataLength grown past the heap's end"


def k_chain_loop(x):
    so = x.set_of("/A.TXT")
    cl = x.make_chained(so)
    x.fat_set(cl[-1], cl[0])
    return f"/A.TXT made a FAT chain {cl[0]}..{cl[-1]}; its last entry links back to {cl[0]}"


def k_chain_out_of_range(x):
    so = x.set_of("/A.TXT")
    cl = x.make_chained(so)
    x.fat_set(cl[-1], x.ccount + 100)
    return f"/A.TXT made a FAT chain; FAT entry {cl[-1]} = {x.ccount + 100} (past the heap)"


def k_chain_bad_cluster(x):
    so = x.set_of("/A.TXT")
    cl = x.make_chained(so)
    x.fat_set(cl[-1], 0xFFFFFFF7)
    return f"/A.TXT made a FAT chain; FAT entry {cl[-1]} = FFFFFFF7 (bad) instead of the end of chain"


def k_chain_cross_link(x):
    a = x.make_chained(x.set_of("/A.TXT"))[0]
    so = x.set_of("/B.TXT")
    cl = x.make_chained(so)
    x.fat_set(cl[-1], a)
    return f"/A.TXT and /B.TXT made FAT chains; /B.TXT's last entry {cl[-1]} links to /A.TXT's first cluster {a}"


def k_chain_too_short(x):
    so = x.set_of("/A.TXT")
    cl = x.make_chained(so)
    x.stream_set(so, "length", x.stream(so)["length"] + 2 * x.cbytes)
    x.fix_set(so)
    return f"/A.TXT made a FAT chain of {len(cl)} clusters; DataLength grown by 2 clusters"


def k_chain_too_long(x):
    so = x.set_of("/A.TXT")
    cl = x.make_chained(so)
    x.stream_set(so, "length", 1)
    x.stream_set(so, "valid", 1)
    x.fix_set(so)
    return f"/A.TXT made a FAT chain of {len(cl)} clusters; DataLength and ValidDataLength = 1"


def k_dir_loop(x):
    so = x.set_of("/DIR/SUB")
    d = x.stream(x.set_of("/DIR"))
    st = x.stream(so)
    x.bit(st["first"], 0)
    x.stream_set(so, "first", d["first"])
    x.stream_set(so, "length", d["length"])
    x.stream_set(so, "valid", d["length"])
    x.stream_set(so, "flags", d["flags"])
    x.fix_set(so)
    return f"/DIR/SUB points at /DIR's cluster {d['first']} (its own cluster {st['first']} freed in the bitmap)"


def k_dir_entry_after_end(x):
    d = x.stream(x.set_of("/DIR"))
    offs = x.dir_offsets(d["first"], d["length"], d["flags"] & 2)
    o = x.first_free_slot(offs)
    x.write(offs[offs.index(o) + 1], x.read(x.set_of("/DIR/C.TXT")[0], 32))
    return "a copy of /DIR/C.TXT's File entry written one slot after /DIR's end-of-directory entry"


def k_dir_system_entry(x):
    o = x.first_free_slot(x.root_offs())
    x.write(o, x.read(x.root_entry(0x82), 32))
    return "a second Up-case Table entry written in the root"


def k_boot_file_system_name(x):
    x.boot_edit(lambda s0: s0.__setitem__(slice(3, 11), b"EXFAX   "), regions=(0,))
    return "main FileSystemName = \"EXFAX   \", main checksum recomputed (the backup region is whole)"


def k_upcase_invalid(x):
    o = x.root_entry(0x82)
    e = x.read(o, 32)
    first = struct.unpack_from("<I", e, 20)[0]
    (length,) = struct.unpack_from("<Q", e, 24)
    table = b"".join(bytes(x.read(x.coff(c), x.cbytes)) for c in x.chain(first))[: length - 1]
    s = 0
    for b in table:
        s = rot32(s, b)
    x.write(o + 4, struct.pack("<I", s))
    x.write(o + 24, struct.pack("<Q", length - 1))
    return f"Up-case Table DataLength {length} -> {length - 1} (odd: no whole mappings), TableChecksum recomputed"


def k_dir_too_large(x):
    so = x.set_of("/DIR/SUB")
    n = (256 << 20) + x.cbytes
    x.stream_set(so, "length", n)
    x.stream_set(so, "valid", n)
    x.fix_set(so)
    return f"/DIR/SUB DataLength and ValidDataLength = {n} (256 MiB + one cluster)"


def add_subdir(x, parent_offs, template, name):
    """Writes a one-cluster directory `name` (NoFatChain) into a free cluster
    and its entry set into the parent's first free slots; returns its slots."""
    c = x.free_cluster()
    x.write(x.coff(c), bytes(x.cbytes))
    x.bit(c, 1)
    o = x.first_free_slot(parent_offs)
    i = parent_offs.index(o)
    so = parent_offs[i:i + 3]
    f, st = bytearray(template[0]), bytearray(template[1])
    f[1] = 2
    st[1] = 0x03  # AllocationPossible, NoFatChain
    st[3] = len(name)
    struct.pack_into("<I", st, 20, c)
    struct.pack_into("<Q", st, 8, x.cbytes)
    struct.pack_into("<Q", st, 24, x.cbytes)
    nm = b"\xC1\x00" + name.encode("utf-16-le").ljust(30, b"\0")
    for off, data in zip(so, (f, st, nm)):
        x.write(off, data)
    x.fix_set(so, rehash=True)
    return x.dir_offsets(c, x.cbytes, True)


def k_dir_too_deep(x):
    d = x.set_of("/DIR")
    template = (x.read(d[0], 32), x.read(d[1], 32))
    st = x.stream(x.set_of("/DIR/SUB"))
    offs = x.dir_offsets(st["first"], st["length"], st["flags"] & 2)
    levels = 256
    for _ in range(levels):
        offs = add_subdir(x, offs, template, "D")
    # PercentInUse follows the clusters taken (it is outside the boot checksum).
    b, _ = x.bitmap_off()
    marked = sum(bin(v).count("1") for v in x.read(b, (x.ccount + 7) // 8))
    x.write(112, bytes([marked * 100 // x.ccount]))
    return f"{levels} directories D nested under /DIR/SUB (depth {levels + 2}; the walk limit is 256), PercentInUse updated"


def k_dir_unreadable(x):
    so = x.set_of("/DIR/SUB")
    st = x.stream(so)
    last = x.ccount + 1
    if x.bit_get(last):
        raise SystemExit("the heap's last cluster is in use")
    x.write(x.coff(last), x.read(x.coff(st["first"]), x.cbytes))
    x.bit(last, 1)
    x.bit(st["first"], 0)
    x.stream_set(so, "first", last)
    x.fix_set(so)
    x.f.truncate(x.coff(last))
    return f"/DIR/SUB moved to the heap's last cluster {last}; the image cut where that cluster starts"


def k_label_invalid(x):
    o = x.root_entry(0x83)
    x.write(o + 1, bytes([12]))
    return "Volume Label CharacterCount = 12"


KINDS = {
    "boot-checksum": k_boot_checksum,
    "boot-main-zeroed": k_boot_main_zeroed,
    "set-timestamp": k_set_timestamp,
    "boot-backup-checksum": k_boot_backup_checksum,
    "boot-backup-differs": k_boot_backup_differs,
    "boot-extended-signature": k_boot_extended_signature,
    "boot-dirty": k_boot_dirty,
    "boot-media-failure": k_boot_media_failure,
    "boot-cluster-count": k_boot_cluster_count,
    "boot-truncated": k_boot_truncated,
    "fat-media": k_fat_media,
    "bitmap-lost": k_bitmap_lost,
    "bitmap-free-in-use": k_bitmap_free_in_use,
    "bitmap-free-all": k_bitmap_free_all,
    "bitmap-missing": k_bitmap_missing,
    "bitmap-length": k_bitmap_length,
    "bitmap-percent-in-use": k_percent_in_use,
    "upcase-checksum": k_upcase_checksum,
    "upcase-missing": k_upcase_missing,
    "boot-volume-length": k_boot_volume_length,
    "set-checksum": k_set_checksum,
    "set-name-hash": k_set_name_hash,
    "set-secondary-count": k_set_secondary_count,
    "set-no-stream": k_set_no_stream,
    "set-name-length": k_set_name_length,
    "set-orphan-secondary": k_set_orphan_secondary,
    "set-unknown-critical": k_set_unknown_critical,
    "name-invalid": k_name_invalid,
    "name-duplicate": k_name_duplicate,
    "stream-valid-length": k_stream_valid_length,
    "stream-first-cluster": k_stream_first_cluster,
    "stream-outside-heap": k_stream_outside_heap,
    "stream-first-cluster-range": k_stream_first_cluster_range,
    "set-unknown-critical-secondary": k_set_unknown_critical_secondary,
    "chain-loop": k_chain_loop,
    "chain-out-of-range": k_chain_out_of_range,
    "chain-bad-cluster": k_chain_bad_cluster,
    "chain-cross-link": k_chain_cross_link,
    "chain-too-short": k_chain_too_short,
    "chain-too-long": k_chain_too_long,
    "dir-loop": k_dir_loop,
    "dir-entry-after-end": k_dir_entry_after_end,
    "dir-system-entry": k_dir_system_entry,
    "label-invalid": k_label_invalid,
    "boot-file-system-name": k_boot_file_system_name,
    "upcase-invalid": k_upcase_invalid,
    "dir-too-large": k_dir_too_large,
    "dir-too-deep": k_dir_too_deep,
    "dir-unreadable": k_dir_unreadable,
}
for _k in BOOT_FIELDS:
    KINDS[_k] = boot_field_kind(_k)


def damage(image, kind):
    """Applies KIND to IMAGE; returns what it changed."""
    if kind not in KINDS:
        raise KeyError("no damage kind %s" % kind)
    x = ExFat(image)
    try:
        return KINDS[kind](x)
    finally:
        x.f.close()


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print("\n".join(sorted(KINDS)))
        return
    if sys.argv[1:] == ["--batch"]:
        import damage_batch

        damage_batch.run(damage)
        return
    if len(sys.argv) != 3 or sys.argv[2] not in KINDS:
        sys.exit(__doc__)
    print(damage(sys.argv[1], sys.argv[2]))


if __name__ == "__main__":
    main()
