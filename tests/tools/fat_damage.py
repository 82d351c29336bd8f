#!/usr/bin/env python3
"""Damages a FAT image in one precise way, for fsck tests.

usage: fat_damage.py IMAGE KIND      (changes IMAGE in place)
       fat_damage.py --list
       fat_damage.py --batch          (IMAGE<TAB>KIND lines; see damage_batch.py)

The image is expected to hold what tests/oracle/fat_fsck_damage.sh puts in
it: /A.TXT and /B.TXT (several clusters each, no long names), /DIR/C.TXT,
"/Long name file.txt", and a volume label. Each kind changes what it must so
that exactly one finding code follows (e.g. freeing the chain of an entry it
breaks, so the clusters are not also reported lost). Prints what it changed.
"""
import struct
import sys


class Fat:
    def __init__(self, path):
        self.path = path
        self.f = open(path, "r+b")
        b = self.read(0, 512)
        self.boot = b
        (self.bps,) = struct.unpack_from("<H", b, 11)
        self.spc = b[13]
        (self.rsvd,) = struct.unpack_from("<H", b, 14)
        self.nfats = b[16]
        (self.root_ent,) = struct.unpack_from("<H", b, 17)
        (tot16,) = struct.unpack_from("<H", b, 19)
        (fsz16,) = struct.unpack_from("<H", b, 22)
        (tot32,) = struct.unpack_from("<I", b, 32)
        self.fat32 = fsz16 == 0
        self.fatsz = struct.unpack_from("<I", b, 36)[0] if self.fat32 else fsz16
        self.total = tot16 or tot32
        self.root_secs = (self.root_ent * 32 + self.bps - 1) // self.bps
        self.first_data = self.rsvd + self.nfats * self.fatsz + self.root_secs
        self.clusters = (self.total - self.first_data) // self.spc
        self.bits = 32 if self.fat32 else (12 if self.clusters < 4085 else 16)
        self.root_clus = struct.unpack_from("<I", b, 44)[0] if self.fat32 else 0
        self.cbytes = self.bps * self.spc

    def read(self, off, n):
        self.f.seek(off)
        return bytearray(self.f.read(n))

    def write(self, off, data):
        self.f.seek(off)
        self.f.write(bytes(data))

    # FAT entries, in every copy
    def get(self, n, copy=0):
        base = (self.rsvd + copy * self.fatsz) * self.bps
        if self.bits == 32:
            return struct.unpack("<I", self.read(base + n * 4, 4))[0] & 0x0FFFFFFF
        if self.bits == 16:
            return struct.unpack("<H", self.read(base + n * 2, 2))[0]
        v = struct.unpack("<H", self.read(base + n + n // 2, 2))[0]
        return v >> 4 if n & 1 else v & 0xFFF

    def set(self, n, value, copies=None):
        for copy in copies if copies is not None else range(self.nfats):
            base = (self.rsvd + copy * self.fatsz) * self.bps
            if self.bits == 32:
                old = struct.unpack("<I", self.read(base + n * 4, 4))[0]
                self.write(base + n * 4, struct.pack("<I", (old & 0xF0000000) | (value & 0x0FFFFFFF)))
            elif self.bits == 16:
                self.write(base + n * 2, struct.pack("<H", value))
            else:
                at = base + n + n // 2
                v = struct.unpack("<H", self.read(at, 2))[0]
                v = (v & 0x000F) | (value << 4) if n & 1 else (v & 0xF000) | value
                self.write(at, struct.pack("<H", v))

    def eoc(self):
        return {12: 0xFFF, 16: 0xFFFF, 32: 0x0FFFFFFF}[self.bits]

    def bad(self):
        return {12: 0xFF7, 16: 0xFFF7, 32: 0x0FFFFFF7}[self.bits]

    def sync_fsinfo(self):
        """Keeps FSInfo's free count true after a FAT change (FAT32)."""
        if not self.fat32:
            return
        (fsinfo,) = struct.unpack_from("<H", self.boot, 48)
        raw = self.read(self.rsvd * self.bps, (self.clusters + 2) * 4)
        free = sum(1 for n in range(2, self.clusters + 2)
                   if struct.unpack_from("<I", raw, n * 4)[0] & 0x0FFFFFFF == 0)
        self.write(fsinfo * self.bps + 488, struct.pack("<I", free))

    def chain(self, start):
        out = []
        c = start
        while 2 <= c < self.clusters + 2 and len(out) <= self.clusters:
            out.append(c)
            c = self.get(c)
        return out

    def free_chain(self, start):
        for c in self.chain(start):
            self.set(c, 0)

    def free_cluster(self, exclude=()):
        return self.free_clusters(1, exclude)[0]

    def free_clusters(self, count, exclude=()):
        # `count` free clusters from the top of the volume, in one pass over
        # the FAT (picking them one by one rescans it: minutes for 4096).
        exclude = set(exclude)
        found = []
        for n in range(self.clusters + 1, 1, -1):
            if len(found) == count:
                break
            if n not in exclude and self.get(n) == 0:
                found.append(n)
        if len(found) < count:
            raise SystemExit("no free cluster")
        return found

    def cluster_off(self, n):
        return (self.first_data + (n - 2) * self.spc) * self.bps

    # Directories: list of (byte offset of each 32-byte slot)
    def dir_slots(self, first):
        if first == 0 and not self.fat32:
            base = (self.rsvd + self.nfats * self.fatsz) * self.bps
            return [base + i * 32 for i in range(self.root_ent)]
        if first == 0:
            first = self.root_clus
        out = []
        for c in self.chain(first):
            out += [self.cluster_off(c) + i * 32 for i in range(self.cbytes // 32)]
        return out

    def entry(self, off):
        e = self.read(off, 32)
        return {"name": bytes(e[0:11]), "attr": e[11],
                "cluster": (struct.unpack_from("<H", e, 20)[0] << 16) | struct.unpack_from("<H", e, 26)[0],
                "size": struct.unpack_from("<I", e, 28)[0], "off": off}

    def find(self, dir_first, name11):
        for off in self.dir_slots(dir_first):
            e = self.entry(off)
            if e["name"][0] == 0:
                break
            if e["name"] == name11 and e["attr"] != 0x0F:
                return e
        raise SystemExit(f"entry {name11!r} not found")

    def lfn_slots(self, dir_first, short_off):
        slots = self.dir_slots(dir_first)
        i = slots.index(short_off)
        out = []
        while i > 0 and self.read(slots[i - 1] + 11, 1)[0] == 0x0F:
            i -= 1
            out.append(slots[i])
        return out  # nearest first (ordinal 1 first)

    def set_cluster(self, e, n):
        self.write(e["off"] + 20, struct.pack("<H", n >> 16))
        self.write(e["off"] + 26, struct.pack("<H", n & 0xFFFF))

    def set_size(self, e, n):
        self.write(e["off"] + 28, struct.pack("<I", n))

    def boot_write(self, off, data):
        """Writes a boot-sector field in sector 0 and, on FAT32, in the backup."""
        self.write(off, data)
        self.boot[off:off + len(data)] = data
        if self.fat32:
            self.write(6 * self.bps + off, data)

    def free_slot(self, dir_first):
        """The first unused 32-byte slot of a directory (its end marker)."""
        for off in self.dir_slots(dir_first):
            if self.read(off, 1)[0] == 0:
                return off
        raise SystemExit("directory full")

    @staticmethod
    def dir_entry(name11, attr, cluster, size=0):
        e = bytearray(32)
        e[0:11] = name11
        e[11] = attr
        struct.pack_into("<HHHHHHHI", e, 14, 0, 0x5A21, 0x5A21, cluster >> 16, 0, 0x5A21, cluster & 0xFFFF,
                         size)
        return bytes(e)


A, B, C, DIR = b"A       TXT", b"B       TXT", b"C       TXT", b"DIR        "


def long_entry(v):
    for off in v.dir_slots(0):
        e = v.entry(off)
        if e["name"][0] == 0:
            break
        if e["attr"] not in (0x0F, 0x08) and e["name"].startswith(b"LONGNA"):
            return e
    raise SystemExit("long-named file not found")


def kinds():
    k = {}

    def kind(f):
        k[f.__name__.replace("_", "-")] = f
        return f

    @kind
    def boot_signature(v):
        v.write(510, b"\0\0")
        return "bytes 510-511 zeroed"

    @kind
    def boot_geometry(v):
        v.write(11, struct.pack("<H", 300))
        return "BPB_BytsPerSec = 300"

    @kind
    def boot_media(v):
        v.write(21, b"\x12")
        for copy in range(v.nfats):
            v.write((v.rsvd + copy * v.fatsz) * v.bps, b"\x12")
        return "BPB_Media and FAT[0] = 0x12"

    @kind
    def boot_dirty(v):
        at = 0x41 if v.fat32 else 0x25
        v.write(at, bytes([v.read(at, 1)[0] | 1]))
        return f"BS_Reserved1 (0x{at:X}) |= 1"

    @kind
    def boot_truncated(v):
        v.f.truncate(v.total * v.bps - 8 * v.bps)
        return "last 8 sectors cut off"

    @kind
    def boot_backup_differs(v):
        at = 6 * v.bps + 0x18
        (n,) = struct.unpack("<H", v.read(at, 2))
        v.write(at, struct.pack("<H", n ^ 0x3F))
        return "backup boot sector BPB_SecPerTrk changed"

    @kind
    def boot_backup_boot_code(v):
        # What a boot-loader installer leaves: sector 0's jump, OEM name and
        # boot code rewritten, the backup as mkfs.fat wrote it. fsck.fat 4.2
        # -n: "This is mostly harmless", exit 0.
        v.write(3, b"SYSLINUX")
        v.write(0x100, b"\xfa\x31\xc0\x8e\xd8")
        return "sector 0 OEM name and boot code rewritten, backup unchanged"

    @kind
    def fsinfo_signature(v):
        v.write(v.bps, b"XXXX")
        return "FSInfo lead signature destroyed"

    @kind
    def fsinfo_free_count(v):
        (n,) = struct.unpack("<I", v.read(v.bps + 488, 4))
        v.write(v.bps + 488, struct.pack("<I", n - 7))
        return "FSInfo free count - 7"

    @kind
    def fat_copies_differ(v):
        n = v.free_cluster()
        v.set(n, v.eoc(), copies=[1])
        return f"FAT 2 entry {n} = end of chain"

    @kind
    def fat_media(v):
        for copy in range(v.nfats):
            v.write((v.rsvd + copy * v.fatsz) * v.bps, b"\x12")
        return "FAT[0] low byte = 0x12 in every copy"

    @kind
    def fat_dirty(v):
        v.set(1, v.get(1) & ~(0x08000000 if v.fat32 else 0x8000))
        return "FAT[1] clean-shutdown bit cleared"

    @kind
    def dirty_both(v):
        # An unclean unmount as both flags record it; fsck.fat 4.2 -n says
        # "Dirty bit is set" once.
        at = 0x41 if v.fat32 else 0x25
        v.write(at, bytes([v.read(at, 1)[0] | 1]))
        v.set(1, v.get(1) & ~(0x08000000 if v.fat32 else 0x8000))
        return f"BS_Reserved1 (0x{at:X}) |= 1 and FAT[1] clean-shutdown bit cleared"

    @kind
    def chain_free_link(v):
        last = v.chain(v.find(0, A)["cluster"])[-1]
        n = v.free_cluster()
        v.set(last, n)
        return f"last cluster {last} of A.TXT links to free cluster {n}"

    @kind
    def chain_out_of_range(v):
        last = v.chain(v.find(0, A)["cluster"])[-1]
        v.set(last, v.clusters + 5)
        return f"last cluster {last} of A.TXT links to {v.clusters + 5}"

    @kind
    def chain_loop(v):
        ch = v.chain(v.find(0, A)["cluster"])
        v.set(ch[-1], ch[0])
        return f"last cluster {ch[-1]} of A.TXT links back to {ch[0]}"

    @kind
    def chain_cross_link(v):
        a = v.find(0, A)["cluster"]
        b = v.chain(v.find(0, B)["cluster"])
        v.set(b[-1], a)
        return f"last cluster {b[-1]} of B.TXT links to A.TXT's first cluster {a}"

    @kind
    def chain_lost(v):
        n = v.free_cluster()
        v.set(n, v.eoc())
        return f"free cluster {n} marked end of chain"

    @kind
    def chain_too_short(v):
        e = v.find(0, A)
        v.set_size(e, e["size"] + 3 * v.cbytes)
        return "A.TXT size + 3 clusters"

    @kind
    def chain_too_long(v):
        v.set_size(v.find(0, A), 1)
        return "A.TXT size = 1"

    @kind
    def chain_bad_cluster(v):
        last = v.chain(v.find(0, A)["cluster"])[-1]
        v.set(last, v.bad())
        return f"last cluster {last} of A.TXT marked bad"

    @kind
    def file_start_free(v):
        v.free_chain(v.find(0, A)["cluster"])
        return "A.TXT's chain freed in the FAT"

    @kind
    def file_start_out_of_range(v):
        e = v.find(0, A)
        v.free_chain(e["cluster"])
        v.set_cluster(e, v.clusters + 100)
        return f"A.TXT starts at {v.clusters + 100}, its chain freed"

    @kind
    def dir_dot(v):
        d = v.find(0, DIR)
        v.set_cluster(v.entry(v.cluster_off(d["cluster"])), d["cluster"] + 1)
        return "\".\" of DIR points to the next cluster"

    @kind
    def dir_dotdot(v):
        d = v.find(0, DIR)
        v.set_cluster(v.entry(v.cluster_off(d["cluster"]) + 32), d["cluster"])
        return "\"..\" of DIR points to DIR"

    @kind
    def dir_loop(v):
        d = v.find(0, DIR)
        c = v.find(d["cluster"], C)
        v.free_chain(c["cluster"])
        v.write(c["off"] + 11, b"\x10")
        v.set_cluster(c, d["cluster"])
        v.set_size(c, 0)
        return "DIR/C.TXT made a directory pointing at DIR"

    @kind
    def dir_nonzero_size(v):
        v.set_size(v.find(0, DIR), 100)
        return "DIR's size = 100"

    @kind
    def dir_bad_attr(v):
        e = v.find(0, B)
        v.free_chain(e["cluster"])
        v.write(e["off"] + 11, b"\x18")
        return "B.TXT attribute = 0x18, its chain freed"

    @kind
    def dir_no_cluster(v):
        d = v.find(0, DIR)
        v.free_chain(v.find(d["cluster"], C)["cluster"])
        v.free_chain(d["cluster"])
        v.set_cluster(d, 0)
        return "DIR first cluster = 0, its chains freed"

    @kind
    def name_invalid_short(v):
        v.write(v.find(0, B)["off"], b"?")
        return "B.TXT renamed ?.TXT"

    @kind
    def name_invalid_long(v):
        e = long_entry(v)
        first = v.lfn_slots(0, e["off"])[0]
        v.write(first + 1, ":".encode("utf-16-le"))
        return "first long-name character = ':'"

    @kind
    def name_dotdot(v):
        e = long_entry(v)
        first = v.lfn_slots(0, e["off"])[0]
        v.write(first + 1, "..\0".encode("utf-16-le"))
        return "long name = '..'"

    @kind
    def name_slash(v):
        e = long_entry(v)
        first = v.lfn_slots(0, e["off"])[0]
        v.write(first + 1, "a/b\0".encode("utf-16-le"))
        return "long name = 'a/b'"

    @kind
    def name_duplicate(v):
        v.write(v.find(0, B)["off"], A)
        return "B.TXT renamed A.TXT"

    @kind
    def lfn_checksum(v):
        e = long_entry(v)
        for s in v.lfn_slots(0, e["off"]):
            v.write(s + 13, bytes([(v.read(s + 13, 1)[0] + 1) & 0xFF]))
        return "long-name checksums + 1"

    @kind
    def lfn_orphan(v):
        e = long_entry(v)
        v.free_chain(e["cluster"])
        v.write(e["off"], b"\xE5")
        return "short entry of the long-named file deleted, its chain freed"

    @kind
    def lfn_sequence(v):
        e = long_entry(v)
        s = v.lfn_slots(0, e["off"])[0]
        v.write(s, b"\x03")
        return "ordinal 1 -> 3"

    @kind
    def label_mismatch(v):
        v.write(0x47 if v.fat32 else 0x2B, b"OTHER      ")
        return "BS_VolLab = OTHER"

    @kind
    def label_invalid(v):
        for off in v.dir_slots(0):
            e = v.entry(off)
            if e["attr"] == 0x08:
                v.write(off + 1, b"*")
                return "second character of the root label = *"
        raise SystemExit("no label")

    @kind
    def boot_backup_dirty_only(v):
        at = 6 * v.bps + 0x41
        v.write(at, bytes([v.read(at, 1)[0] | 1]))
        return "dirty flag set in the backup boot sector only"

    @kind
    def boot_backup_missing(v):
        v.boot_write(50, struct.pack("<H", 0))
        return "BPB_BkBootSec = 0"

    @kind
    def boot_fat_too_small(v):
        # Shrink every FAT copy by enough sectors that it no longer covers the
        # last clusters (free ones), keep the data region where it is by
        # growing the reserved region, and move the FAT contents to match.
        per_sector = v.bps * 8 // v.bits
        cut = (v.fatsz * per_sector - (v.clusters + 2)) // per_sector + 1
        new_fatsz = v.fatsz - cut
        keep = [v.read((v.rsvd + i * v.fatsz) * v.bps, new_fatsz * v.bps) for i in range(v.nfats)]
        new_rsvd = v.rsvd + cut * v.nfats
        v.write(v.rsvd * v.bps, bytes(v.nfats * v.fatsz * v.bps))
        for i, data in enumerate(keep):
            v.write((new_rsvd + i * new_fatsz) * v.bps, data)
        v.boot_write(14, struct.pack("<H", new_rsvd))
        if v.fat32:
            v.boot_write(36, struct.pack("<I", new_fatsz))
            # The entries cut off were free: FSInfo's count follows the FAT.
            (fsinfo,) = struct.unpack_from("<H", v.boot, 48)
            (free,) = struct.unpack("<I", v.read(fsinfo * v.bps + 488, 4))
            lost = v.clusters + 2 - new_fatsz * per_sector
            v.write(fsinfo * v.bps + 488, struct.pack("<I", free - lost))
        else:
            v.boot_write(22, struct.pack("<H", new_fatsz))
        return f"FATSz {v.fatsz} -> {new_fatsz} sectors, reserved {v.rsvd} -> {new_rsvd}"

    @kind
    def boot_fs_version(v):
        v.boot_write(42, struct.pack("<H", 0x0100))
        return "BPB_FSVer = 1.0"

    @kind
    def boot_root_cluster(v):
        v.boot_write(44, struct.pack("<I", v.clusters + 50))
        return f"BPB_RootClus = {v.clusters + 50}"

    @kind
    def boot_root_entries(v):
        # FAT32 only: a FAT12/16 root region cannot change size in place.
        v.boot_write(17, struct.pack("<H", 512))
        return "BPB_RootEntCnt = 512 on FAT32"

    @kind
    def boot_total_sectors(v):
        (tot16,) = struct.unpack_from("<H", v.boot, 19)
        v.boot_write(32, struct.pack("<I", tot16 - 8))
        return f"BPB_TotSec32 = {tot16 - 8} beside BPB_TotSec16 = {tot16}"

    @kind
    def boot_type_mismatch(v):
        # A FAT16 volume rebuilt by hand with 65,600 one-sector clusters: the
        # FAT16 BPB and FAT are self-consistent, only the count is FAT32's.
        clusters, rsvd, root_ent = 65600, 4, 512
        fatsz = ((clusters + 2) * 2 + v.bps - 1) // v.bps
        total = rsvd + 2 * fatsz + root_ent * 32 // v.bps + clusters
        v.f.truncate(0)
        v.f.truncate(total * v.bps)
        b = bytearray(v.boot[:62])
        struct.pack_into("<HBHBHHBHHHII", b, 11, v.bps, 1, rsvd, 2, root_ent, 0, 0xF8, fatsz, 32, 64,
                         0, total)
        b[36:62] = b"\x80\x00\x29\x78\x56\x34\x12NO NAME    FAT16   "
        v.write(0, b)
        v.write(510, b"\x55\xAA")
        for i in range(2):
            v.write((rsvd + i * fatsz) * v.bps, b"\xF8\xFF\xFF\xFF")
        return f"rebuilt as FAT16 BPB with {clusters} clusters of 1 sector"

    @kind
    def dir_dot_in_root(v):
        off = v.free_slot(0)
        v.write(off, b".          \x10" + bytes(20))
        return "'.' entry added to the root directory"

    @kind
    def dir_too_deep(v):
        # 300 nested one-cluster directories under /DEEP.
        levels = 300
        chain = v.free_clusters(levels)
        for i, n in enumerate(chain):
            v.set(n, v.eoc())
            parent = chain[i - 1] if i else 0
            slots = bytearray(v.cbytes)
            slots[0:32] = v.dir_entry(b".          ", 0x10, n)
            slots[32:64] = v.dir_entry(b"..         ", 0x10, parent)
            if i + 1 < levels:
                slots[64:96] = v.dir_entry(b"D          ", 0x10, chain[i + 1])
            v.write(v.cluster_off(n), slots)
        v.write(v.free_slot(0), v.dir_entry(b"DEEP       ", 0x10, chain[0]))
        return f"{levels} nested directories under /DEEP"

    @kind
    def dir_too_large(v):
        # /BIG: a directory of 65,537 deleted entries and one file entry.
        need = (65538 * 32 + v.cbytes - 1) // v.cbytes
        chain = sorted(v.free_clusters(need))
        for a, b in zip(chain, chain[1:] + [None]):
            v.set(a, b if b is not None else v.eoc())
        data = bytearray(need * v.cbytes)
        data[0:32] = v.dir_entry(b".          ", 0x10, chain[0])
        data[32:64] = v.dir_entry(b"..         ", 0x10, 0)
        for i in range(2, 65538):
            data[i * 32] = 0xE5
            data[i * 32 + 1:i * 32 + 11] = b"DELETED   "
        data[65538 * 32 - 32:65538 * 32] = v.dir_entry(b"LAST    TXT", 0x20, 0)
        for i, n in enumerate(chain):
            v.write(v.cluster_off(n), data[i * v.cbytes:(i + 1) * v.cbytes])
        v.write(v.free_slot(0), v.dir_entry(b"BIG        ", 0x10, chain[0]))
        return f"/BIG holds 65,538 entries in {need} clusters"

    @kind
    def dir_unreadable(v):
        d = v.find(0, DIR)
        v.f.truncate(v.cluster_off(d["cluster"]))
        return f"image cut at DIR's first cluster {d['cluster']}"

    @kind
    def fat_hard_error(v):
        v.set(1, v.get(1) & ~(0x04000000 if v.fat32 else 0x4000))
        return "FAT[1] no-hard-error bit cleared"

    @kind
    def fsinfo_location(v):
        reserved = struct.unpack("<H", v.read(14, 2))[0]
        v.boot_write(48, struct.pack("<H", reserved + 8))
        return f"BPB_FSInfo = {reserved + 8}, past the {reserved} reserved sectors"

    @kind
    def fsinfo_none(v):
        # fsck.fat 4.2 -n: "No FSINFO sector / Not automatically creating it", exit 0.
        v.boot_write(48, struct.pack("<H", 0))
        return "BPB_FSInfo = 0 (no FSInfo sector)"

    @kind
    def fsinfo_next_free(v):
        v.write(v.bps + 492, struct.pack("<I", v.clusters + 100))
        return f"FSInfo next free = {v.clusters + 100}"

    @kind
    def label_duplicate(v):
        v.write(v.free_slot(0), v.dir_entry(b"SECOND     ", 0x08, 0))
        return "second volume label SECOND added to the root"

    @kind
    def label_outside_root(v):
        d = v.find(0, DIR)
        v.write(v.free_slot(d["cluster"]), v.dir_entry(b"INDIR      ", 0x08, 0))
        return "volume label INDIR added to DIR"

    return k


def damage(image, kind):
    """Applies KIND to IMAGE (then FSInfo follows the FAT, but for the FSInfo and boot kinds); returns what it changed."""
    k = kinds()
    if kind not in k:
        raise KeyError("no damage kind %s" % kind)
    v = Fat(image)
    try:
        what = k[kind](v)
        if not kind.startswith(("fsinfo-", "boot-")):
            v.sync_fsinfo()
        return what
    finally:
        v.f.close()


def main():
    k = kinds()
    if sys.argv[1:] == ["--list"]:
        print("\n".join(k))
        return 0
    if sys.argv[1:] == ["--batch"]:
        import damage_batch

        damage_batch.run(damage)
        return 0
    if len(sys.argv) != 3 or sys.argv[2] not in k:
        print(__doc__, file=sys.stderr)
        return 2
    print(damage(sys.argv[1], sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
