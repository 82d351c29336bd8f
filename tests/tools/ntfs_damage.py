#!/usr/bin/env python3
"""Damages an NTFS image in one precise way, for fsck tests.

usage: ntfs_damage.py IMAGE KIND      (changes IMAGE in place)
       ntfs_damage.py --list

The image is expected to hold what tests/oracle/ntfs_fsck_damage.sh puts in
it (fsimg mkfs -t ntfs --from, 4 KiB clusters, 1 KiB records): /A.TXT and
/B.TXT (non-resident, several clusters each), /E.TXT (empty), /DIR/ with
/DIR/C.TXT (resident; /DIR/L.TXT is a hard link of it: one record, two
$FILE_NAMEs), /DIR/E2.TXT (empty) and /DIR/SUB/, and /BIG/ with 80 files
"a file with a long name number N.txt" holding "N\\n" (an index in INDX
blocks). Records are found by name through their $FILE_NAME. A
changed MFT record is written back with its fixups applied, and to $MFTMirr
too when the mirror holds it (so that only the intended rule breaks); a
changed boot-sector field is written to both boot sectors unless the kind is
about one of them. Prints what it changed.

Facts: docs/formats.md §3 (boot sector §3.1, FILE records and
fixups §3.4, attributes §3.5, runlists §3.6, $FILE_NAME §3.7, indexes §3.8).
"""
import struct
import sys


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def record_size(raw, cluster):
    v = struct.unpack("b", bytes([raw]))[0]
    return cluster * v if v > 0 else 1 << -v


def decode_runs(b, o):
    runs, lcn = [], 0
    while b[o]:
        h = b[o]
        nl, no = h & 15, h >> 4
        length = int.from_bytes(b[o + 1:o + 1 + nl], "little")
        if no:
            lcn += int.from_bytes(b[o + 1 + nl:o + 1 + nl + no], "little", signed=True)
            runs.append((lcn, length))
        else:
            runs.append((None, length))
        o += 1 + nl + no
    return runs


def encode_runs(runs):
    out, prev = bytearray(), 0
    for lcn, length in runs:
        lb = length.to_bytes((length.bit_length() + 8) // 8, "little")
        if lcn is None:
            out += bytes([len(lb)]) + lb
            continue
        d = lcn - prev
        n = 1
        while not -(1 << (8 * n - 1)) <= d < (1 << (8 * n - 1)):
            n += 1
        out += bytes([len(lb) | n << 4]) + lb + d.to_bytes(n, "little", signed=True)
        prev = lcn
    return out + b"\0"


class Ntfs:
    def __init__(self, path):
        self.f = open(path, "r+b")
        b = self.read(0, 512)
        self.bps = u16(b, 11)
        spc = b[13] if b[13] <= 128 else 1 << (256 - b[13])
        self.cbytes = self.bps * spc
        self.total = u64(b, 40)
        self.mft_lcn, self.mirr_lcn = u64(b, 48), u64(b, 56)
        self.rs = record_size(b[64], self.cbytes)
        self.ibs = record_size(b[68], self.cbytes)
        self.mft_runs = [(self.mft_lcn, 1 << 40)]
        r0 = self.rec(0)
        a = self.attr(r0, 0x80)
        self.mft_runs = decode_runs(r0, a["off"] + u16(r0, a["off"] + 0x20))
        self.records = u64(r0, a["off"] + 0x30) // self.rs
        self.mirrored = 4 if self.cbytes <= 4 * self.rs else self.cbytes // self.rs

    def read(self, off, n):
        self.f.seek(off)
        return bytearray(self.f.read(n))

    def write(self, off, data):
        self.f.seek(off)
        self.f.write(data)

    def rec_off(self, n):
        pos = n * self.rs
        for lcn, length in self.mft_runs:
            if pos < length * self.cbytes:
                return lcn * self.cbytes + pos
            pos -= length * self.cbytes
        raise SystemExit("record %d is not mapped" % n)

    @staticmethod
    def unfix(b):
        usa, cnt = u16(b, 4), u16(b, 6)
        for i in range(1, cnt):
            b[i * 512 - 2:i * 512] = b[usa + 2 * i:usa + 2 * i + 2]
        return b

    @staticmethod
    def fix(b):
        b = bytearray(b)
        usa, cnt = u16(b, 4), u16(b, 6)
        usn = b[usa:usa + 2]
        for i in range(1, cnt):
            b[usa + 2 * i:usa + 2 * i + 2] = b[i * 512 - 2:i * 512]
            b[i * 512 - 2:i * 512] = usn
        return b

    def rec(self, n):
        return self.unfix(self.read(self.rec_off(n), self.rs))

    def put(self, n, b, mirror=True, raw=False):
        data = b if raw else self.fix(b)
        self.write(self.rec_off(n), data)
        if mirror and n < self.mirrored:
            self.write(self.mirr_lcn * self.cbytes + n * self.rs, data)

    def attrs(self, b):
        o = u16(b, 0x14)
        while u32(b, o) != 0xFFFFFFFF:
            ln = u32(b, o + 4)
            nl, no = b[o + 9], u16(b, o + 10)
            yield {"off": o, "type": u32(b, o), "len": ln, "nonres": b[o + 8],
                   "name": b[o + no:o + no + 2 * nl].decode("utf-16-le")}
            o += ln

    def attr(self, b, t, name=""):
        for a in self.attrs(b):
            if a["type"] == t and a["name"] == name:
                return a
        raise SystemExit("no attribute 0x%X %r" % (t, name))

    def value_off(self, b, a):
        return a["off"] + u16(b, a["off"] + 0x14)

    def file_name(self, b):
        a = self.attr(b, 0x30)
        return self.value_off(b, a)

    def find(self, name):
        for n in range(16, self.records):
            b = self.rec(n)
            if b[:4] != b"FILE" or not u16(b, 0x16) & 1:
                continue
            for a in self.attrs(b):
                if a["type"] == 0x30:
                    v = self.value_off(b, a)
                    if b[v + 66:v + 66 + 2 * b[v + 64]].decode("utf-16-le") == name:
                        return n
        raise SystemExit("no file named %s" % name)

    def runs(self, b, a):
        return decode_runs(b, a["off"] + u16(b, a["off"] + 0x20))

    def stream(self, n, t=0x80, name=""):
        """(record bytes, attribute, runs) of a non-resident attribute."""
        b = self.rec(n)
        a = self.attr(b, t, name)
        return b, a, self.runs(b, a)

    def set_runs(self, n, b, a, runs):
        o = a["off"] + u16(b, a["off"] + 0x20)
        enc = encode_runs(runs)
        end = a["off"] + a["len"]
        if o + len(enc) > end:  # the attribute grows, what follows it moves
            grow = o + len(enc) - end + -(o + len(enc) - end) % 8
            self.splice(b, end, end, bytes(grow))
            set32(b, a["off"] + 4, a["len"] + grow)
            end += grow
        b[o:end] = enc + bytes(end - o - len(enc))
        self.put(n, b)

    def index_entries(self, b, a):
        """(offset, length) of each entry of an $INDEX_ROOT value, the last one included."""
        v = self.value_off(b, a)
        node = v + 16
        o, end, out = node + u32(b, node), node + u32(b, node + 4), []
        while o < end:
            ln = u16(b, o + 8)
            out.append((o, ln))
            if u16(b, o + 12) & 2:
                break
            o += ln
        return out

    def index_block_offset(self, n, block):
        b, a, runs = self.stream(n, 0xA0, "$I30")
        pos = block * self.ibs
        for lcn, length in runs:
            if pos < length * self.cbytes:
                return lcn * self.cbytes + pos
            pos -= length * self.cbytes
        raise SystemExit("index block %d is not mapped" % block)

    def bitmap_bit(self, cluster, value):
        b, a, runs = self.stream(6)
        off = runs[0][0] * self.cbytes + cluster // 8
        byte = self.read(off, 1)[0]
        byte = byte | (1 << cluster % 8) if value else byte & ~(1 << cluster % 8)
        self.write(off, bytes([byte]))

    def bitmap_test(self, cluster):
        b, a, runs = self.stream(6)
        return self.read(runs[0][0] * self.cbytes + cluster // 8, 1)[0] >> (cluster % 8) & 1

    def splice(self, b, start, end, new=b""):
        """Replaces b[start:end] of a record by new, moving what follows and
        keeping bytes in use right; the caller fixes the attribute lengths."""
        used = u32(b, 0x18)
        body = bytes(b[:start]) + bytes(new) + bytes(b[end:used])
        if len(body) > self.rs:
            raise SystemExit("the record overflows")
        b[:] = body + bytes(self.rs - len(body))
        set32(b, 0x18, len(body))

    def free_record(self):
        """The first record past the system ones that is neither in use nor in $MFT's bitmap."""
        for n in range(24, self.records - 1):
            if not self.rec(n)[0x16] & 1 and not mft_bitmap_test(self, n):
                return n
        raise SystemExit("no free MFT record")

    def boot_field(self, off, data, main=True, backup=True):
        if main:
            self.write(off, data)
        if backup:
            self.write(self.total * self.bps + off, data)


def set16(b, o, v):
    struct.pack_into("<H", b, o, v)


def set32(b, o, v):
    struct.pack_into("<I", b, o, v)


def set64(b, o, v):
    struct.pack_into("<Q", b, o, v)


KINDS = {}


def kind(fn):
    KINDS[fn.__name__.replace("_", "-")] = fn
    return fn


# ---- boot sector (the main one broken: the backup stands in)

@kind
def boot_oem(v):
    v.boot_field(3, b"NTF     ", backup=False)


@kind
def boot_signature(v):
    v.boot_field(510, b"\x55\x00", backup=False)


@kind
def boot_bytes_per_sector(v):
    v.boot_field(11, struct.pack("<H", 500), backup=False)


@kind
def boot_cluster_size(v):
    v.boot_field(13, bytes([127]), backup=False)


@kind
def boot_mft_record_size(v):
    v.boot_field(64, bytes([7]), backup=False)  # 7 clusters: not a power of two


@kind
def boot_index_block_size(v):
    v.boot_field(68, bytes([7]), backup=False)


@kind
def boot_total_sectors(v):
    v.boot_field(40, struct.pack("<Q", 1), backup=False)


@kind
def boot_mft_lcn(v):
    v.boot_field(48, struct.pack("<Q", 1 << 40), backup=False)


@kind
def boot_mftmirr_lcn(v):
    v.boot_field(56, struct.pack("<Q", 1 << 40), backup=False)


@kind
def boot_both_broken(v):
    """Both boot sectors broken: fatal, nothing more can be checked."""
    v.boot_field(3, b"NTFS    ")  # still detected as NTFS
    v.boot_field(11, struct.pack("<H", 500))


@kind
def boot_backup_differs(v):
    v.boot_field(72, b"\x12\x34", main=False)  # serial number


@kind
def boot_truncated(v):
    v.f.truncate(v.total * v.bps - 64 * 1024)


@kind
def boot_backup_missing(v):
    v.f.truncate(v.total * v.bps)


# ---- $MFT, $MFTMirr, $MFT bitmap

@kind
def record_unreadable(v):
    """$MFT's 4th cluster (records 12..15 with 1 KiB records: reserved, in
    use) mapped to the volume's last cluster instead, as a $MFT grown in a
    second extent, and the image cut short before that cluster: the records
    cannot be read. (A run past the volume's last cluster is refused when
    $MFT is opened.)"""
    b, a, runs = v.stream(0)
    k = 12 * v.rs // v.cbytes
    lcn, length = runs[0]
    if length <= k + 1:
        raise SystemExit("$MFT's first run is too short")
    last = v.total // (v.cbytes // v.bps) - 1
    v.set_runs(0, b, a, [(lcn, k), (last, 1), (lcn + k + 1, length - k - 1)] + runs[1:])
    v.bitmap_bit(lcn + k, 0)
    v.bitmap_bit(last, 1)
    v.f.truncate(last * v.cbytes)


@kind
def mft_unreadable(v):
    b = v.rec(0)
    b[0:4] = b"FILX"
    v.put(0, b, mirror=False)


@kind
def mftmirr_differs(v):
    b = v.rec(2)
    set64(b, 8, u64(b, 8) + 1)  # LSN
    v.write(v.mirr_lcn * v.cbytes + 2 * v.rs, v.fix(b))


@kind
def mftmirr_location(v):
    v.boot_field(56, struct.pack("<Q", v.mirr_lcn - 1))


@kind
def mftmirr_unreadable(v):
    b = v.rec(1)
    a = v.attr(b, 0x80)
    for f in (0x30, 0x38):
        set64(b, a["off"] + f, v.rs)
    v.put(1, b)


@kind
def mft_bitmap_missing(v):
    b = v.rec(0)
    a = v.attr(b, 0xB0)
    set32(b, a["off"], 0xB8)
    v.put(0, b)


@kind
def mft_bitmap_size(v):
    b = v.rec(0)
    a = v.attr(b, 0xB0)
    if a["nonres"]:
        for f in (0x30, 0x38):
            set64(b, a["off"] + f, 1)
    else:
        set32(b, a["off"] + 0x10, 1)
    v.put(0, b)


@kind
def mft_unmapped(v):
    b = v.rec(0)
    a = v.attr(b, 0x80)
    for f in (0x28, 0x30, 0x38):
        set64(b, a["off"] + f, u64(b, a["off"] + f) + 64 * v.cbytes)
    v.put(0, b)


def mft_bitmap_offset(v, n):
    b, a, runs = v.stream(0, 0xB0)
    if a["nonres"]:
        return runs[0][0] * v.cbytes + n // 8
    return v.rec_off(0) + v.value_off(b, a) + n // 8


def mft_bitmap_test(v, n):
    off = mft_bitmap_offset(v, n)
    return v.read(off, 1)[0] >> (n % 8) & 1


def mft_bitmap_mark(v, n):
    off = mft_bitmap_offset(v, n)
    v.write(off, bytes([v.read(off, 1)[0] | (1 << n % 8)]))


@kind
def mft_bitmap_unmarked(v):
    n = v.find("E.TXT")
    off = mft_bitmap_offset(v, n)
    if not v.attr(v.rec(0), 0xB0)["nonres"]:
        raise SystemExit("resident $MFT bitmap: not supported")
    v.write(off, bytes([v.read(off, 1)[0] & ~(1 << n % 8)]))


@kind
def mft_bitmap_marked_free(v):
    # A record that is FILE but not in use: E.TXT's record with the in-use flag cleared
    # would orphan its entry; use a fresh copy of it in a free slot instead.
    n = v.find("E.TXT")
    free = v.records - 1
    b = v.rec(n)
    set16(b, 0x16, u16(b, 0x16) & ~1)
    set32(b, 0x2C, free)
    v.put(free, b)
    off = mft_bitmap_offset(v, free)
    v.write(off, bytes([v.read(off, 1)[0] | (1 << free % 8)]))


# ---- record headers (on /A.TXT unless said)

def record_kind(name, edit, file="A.TXT", mirror=True):
    def fn(v):
        n = v.find(file)
        b = v.rec(n)
        raw = edit(v, b)
        v.put(n, b, raw=bool(raw), mirror=mirror)
    KINDS[name] = fn


def _baad(v, b):
    b[0:4] = b"BAAD"


def _signature(v, b):
    b[0:4] = b"FILX"


def _fixup(v, b):
    b[:] = v.fix(b)
    b[510] ^= 0xFF
    return True


def _usa(v, b):
    set16(b, 6, 5)
    return True  # written as is: the array no longer fits the record


def _bytes_allocated(v, b):
    set32(b, 0x1C, 4096)


def _bytes_in_use(v, b):
    set32(b, 0x18, v.rs + 8)


def _first_attribute(v, b):
    set16(b, 0x14, 0x31)


def _flags(v, b):
    set16(b, 0x16, u16(b, 0x16) | 0x0100)


def _sequence(v, b):
    set16(b, 0x10, 0)


def _number(v, b):
    set32(b, 0x2C, 999)


def _base(v, b):
    set64(b, 0x20, 3)  # $Volume: a system file


def _link_count(v, b):
    set16(b, 0x12, 3)


record_kind("rec-baad", _baad)
record_kind("rec-signature", _signature)
record_kind("rec-fixup", _fixup)
record_kind("rec-usa", _usa)
record_kind("rec-bytes-allocated", _bytes_allocated)
record_kind("rec-bytes-in-use", _bytes_in_use)
record_kind("rec-first-attribute", _first_attribute)
record_kind("rec-flags", _flags)
record_kind("rec-sequence", _sequence)
record_kind("rec-number", _number)
record_kind("rec-base", _base)
record_kind("rec-link-count", _link_count)


# ---- attributes and runs

def _attr_header(v, b):
    a = v.attr(b, 0x80)
    set32(b, a["off"] + 4, a["len"] + 4)


def _attr_instance(v, b):
    si, data = v.attr(b, 0x10), v.attr(b, 0x80)
    set16(b, data["off"] + 0x0E, u16(b, si["off"] + 0x0E))


def _attr_sizes(v, b):
    a = v.attr(b, 0x80)
    set64(b, a["off"] + 0x38, u64(b, a["off"] + 0x30) + 1)


def _attr_vcn(v, b):
    a = v.attr(b, 0x80)
    set64(b, a["off"] + 0x18, u64(b, a["off"] + 0x18) + 1)
    set64(b, a["off"] + 0x28, u64(b, a["off"] + 0x28) + v.cbytes)


def _missing_std_info(v, b):
    set32(b, v.attr(b, 0x10)["off"], 0x11)


def _missing_data(v, b):
    a = v.attr(b, 0x80)
    v.splice(b, a["off"], a["off"] + a["len"])


def _run_decode(v, b):
    a = v.attr(b, 0x80)
    b[a["off"] + u16(b, a["off"] + 0x20)] = 0x19  # a 9-byte length field


record_kind("attr-header", _attr_header)
record_kind("attr-instance", _attr_instance)
record_kind("attr-sizes", _attr_sizes)
record_kind("attr-vcn", _attr_vcn)
record_kind("attr-missing-std-info", _missing_std_info)
record_kind("run-decode", _run_decode)
record_kind("attr-missing-data", _missing_data, file="E.TXT")  # empty: no clusters to lose


@kind
def run_outside(v):
    n = v.find("A.TXT")
    b, a, runs = v.stream(n)
    v.set_runs(n, b, a, [(v.total // (v.cbytes // v.bps) - 1, runs[0][1])] + runs[1:])


@kind
def run_cross_link(v):
    a_runs = v.stream(v.find("A.TXT"))[2]
    n = v.find("B.TXT")
    b, a, runs = v.stream(n)
    v.set_runs(n, b, a, [(a_runs[0][0], runs[0][1])] + runs[1:])


@kind
def run_sparse(v):
    n = v.find("A.TXT")
    b, a, runs = v.stream(n)
    v.set_runs(n, b, a, [(None, runs[0][1])] + runs[1:])


# ---- $ATTRIBUTE_LIST (fsimg writes none: attrlist_build makes one by hand)

def extension_record(v, base, attributes):
    """A free record made an in-use extension record of record base, holding
    the attribute bytes given (instances kept). Returns (number, sequence)."""
    m = v.free_record()
    old = v.rec(m)
    seq = u16(old, 0x10) if old[:4] == b"FILE" and u16(old, 0x10) else 1
    b = v.rec(base)
    first = u16(b, 0x14)
    e = bytearray(b[:first]) + bytes(v.rs - first)  # the base's header and update sequence array
    body = b"".join(attributes)
    e[first:first + len(body)] = body
    set32(e, first + len(body), 0xFFFFFFFF)
    set64(e, 0x08, 0)  # LSN
    set16(e, 0x10, seq)
    set16(e, 0x12, 0)  # link count: names count in base records only
    set16(e, 0x16, 1)  # in use, not a directory
    set32(e, 0x18, first + len(body) + 8)
    set64(e, 0x20, base | u16(b, 0x10) << 48)
    set16(e, 0x28, max([u16(x, 0x0E) + 1 for x in attributes], default=0))
    set32(e, 0x2C, m)
    v.put(m, e)
    mft_bitmap_mark(v, m)
    return m, seq


def list_entry(t, name, vcn, ref, instance):
    n = name.encode("utf-16-le")
    e = struct.pack("<IHBBQQH", t, 0, len(name), 0x1A, vcn, ref, instance) + n
    e += bytes(-len(e) % 8)
    return e[:4] + struct.pack("<H", len(e)) + e[6:]


def attrlist_build(v, file="A.TXT"):
    """Moves the file's $DATA to an extension record and gives the base an
    $ATTRIBUTE_LIST naming $STANDARD_INFORMATION, $FILE_NAME (base) and
    $DATA (extension), as ntfs-3g and Windows do when a record fills up.
    Returns (base record, extension record, offset of the list's value)."""
    n = v.find(file)
    b = v.rec(n)
    seq = u16(b, 0x10)
    data = v.attr(b, 0x80)
    data_bytes = bytes(b[data["off"]:data["off"] + data["len"]])
    m, mseq = extension_record(v, n, [data_bytes])
    b = v.rec(n)
    entries = []
    for a in v.attrs(b):
        if a["type"] != 0x80:
            vcn = u64(b, a["off"] + 0x10) if a["nonres"] else 0
            entries.append((a["type"], a["name"], vcn, n | seq << 48, u16(b, a["off"] + 0x0E)))
    entries.append((0x80, "", 0, m | mseq << 48, u16(data_bytes, 0x0E)))
    value = b"".join(list_entry(*e) for e in sorted(entries, key=lambda e: (e[0], e[1], e[2])))
    instance = u16(b, 0x28)
    set16(b, 0x28, instance + 1)
    length = 24 + len(value) + -len(value) % 8  # resident: the value follows a 24-byte header
    attr = struct.pack("<IIBBHHHIHBB", 0x20, length, 0, 0, 0x18, 0, instance, len(value), 0x18, 0, 0)
    attr += value + bytes(-len(value) % 8)
    v.splice(b, data["off"], data["off"] + data["len"])
    at = next(a["off"] for a in v.attrs(b) if a["type"] > 0x20)
    v.splice(b, at, at, attr)
    v.put(n, b)
    return n, m, at + 24


KINDS["attrlist-build"] = lambda v: attrlist_build(v)  # no damage: the list is sound


@kind
def attrlist_decode(v):
    """The $DATA entry's length passes the end of the list."""
    n, m, o = attrlist_build(v)
    b = v.rec(n)
    end = o + u32(b, o - 24 + 0x10)
    while u32(b, o) != 0x80:
        o += u16(b, o + 4)
    set16(b, o + 4, end - o + 8)
    v.put(n, b)


@kind
def attrlist_entry(v):
    """The $DATA entry says VCN 1: the extension record holds $DATA from VCN 0."""
    n, m, o = attrlist_build(v)
    b = v.rec(n)
    while u32(b, o) != 0x80:
        o += u16(b, o + 4)
    set64(b, o + 8, 1)
    v.put(n, b)


@kind
def attrlist_entry_sequence(v):
    """The $DATA entry names the extension record with another sequence
    number: a stale reference, and the record is then named by no entry."""
    n, m, o = attrlist_build(v)
    b = v.rec(n)
    while u32(b, o) != 0x80:
        o += u16(b, o + 4)
    set64(b, o + 16, u64(b, o + 16) + (1 << 48))
    v.put(n, b)


@kind
def attrlist_missing(v):
    """A free record made an extension record of /A.TXT (holding nothing);
    A.TXT has no $ATTRIBUTE_LIST to name it."""
    extension_record(v, v.find("A.TXT"), [])


def _drop_file_names(v, n):
    """Every $FILE_NAME of record n cut out (what follows moves up)."""
    b = v.rec(n)
    for a in sorted((a for a in v.attrs(b) if a["type"] == 0x30), key=lambda a: -a["off"]):
        v.splice(b, a["off"], a["off"] + a["len"])
    v.put(n, b)


@kind
def filename_lost(v):
    """/A.TXT's $FILE_NAME cut out and the root's entry for it made stale
    (another sequence number): nothing names the record any more."""
    _drop_file_names(v, v.find("A.TXT"))
    index_stale_entry(v, "A.TXT")


@kind
def filename_lost_empty(v):
    """The same for the empty /E.TXT: a record that holds nothing."""
    _drop_file_names(v, v.find("E.TXT"))
    index_stale_entry(v, "E.TXT")


def _fill_with_data(v, n, keep=0):
    """Record n's resident unnamed $DATA grown (0xA5 bytes appended) until
    the record has fewer than keep + 8 bytes free (keep 0: no name fits in
    it any more)."""
    b = v.rec(n)
    a = v.attr(b, 0x80)
    voff, vlen = u16(b, a["off"] + 0x14), u32(b, a["off"] + 0x10)
    pad = a["len"] - voff - vlen  # the attribute's bytes after its value
    grow = (u32(b, 0x1C) - u32(b, 0x18) - keep) // 8 * 8
    v.splice(b, a["off"] + voff + vlen, a["off"] + a["len"], b"\xa5" * (pad + grow))
    set32(b, a["off"] + 4, a["len"] + grow)
    set32(b, a["off"] + 0x10, vlen + pad + grow)
    v.put(n, b)


@kind
def attrlist_missing_full(v):
    """/E.TXT's $FILE_NAME moved into a free record made its extension (no
    $ATTRIBUTE_LIST names it), its resident $DATA grown until the base has
    room for the name again but not for a list of its attributes."""
    n = v.find("E.TXT")
    b = v.rec(n)
    a = v.attr(b, 0x30)
    fn = bytes(b[a["off"]:a["off"] + a["len"]])
    v.splice(b, a["off"], a["off"] + a["len"])
    v.put(n, b)
    extension_record(v, n, [fn])
    _fill_with_data(v, n, keep=len(fn) + 8)  # a list: 24 bytes and 32 per attribute (3 here)


@kind
def filename_lost_full(v):
    """/E.TXT's $FILE_NAME cut out, its resident $DATA grown to fill the
    record, the root's entry for it stale: a name for it in found.000 only
    fits once the data goes out to a cluster."""
    n = v.find("E.TXT")
    _drop_file_names(v, n)
    _fill_with_data(v, n)
    index_stale_entry(v, "E.TXT")


@kind
def filename_missing_full(v):
    """The same with the root's entry for /E.TXT kept: its name comes back
    from the entry once the data has gone out to a cluster."""
    n = v.find("E.TXT")
    _drop_file_names(v, n)
    _fill_with_data(v, n)


@kind
def filename_missing_list(v):
    """/A.TXT with an $ATTRIBUTE_LIST ($DATA in an extension record) loses
    the $FILE_NAME of its base; the list still names it, the root's index
    still names the file."""
    n, m, o = attrlist_build(v)
    _drop_file_names(v, n)


# ---- $Bitmap

@kind
def bitmap_lost(v):
    c = v.total // (v.cbytes // v.bps) - 2
    while v.bitmap_test(c):
        c -= 1
    v.bitmap_bit(c, 1)


@kind
def bitmap_free_in_use(v):
    v.bitmap_bit(v.stream(v.find("A.TXT"))[2][0][0], 0)


@kind
def bitmap_size(v):
    b = v.rec(6)
    a = v.attr(b, 0x80)
    for f in (0x30, 0x38):
        set64(b, a["off"] + f, 8)
    v.put(6, b)


# ---- $FILE_NAME

def _fn_bad(v, b):
    b[v.file_name(b) + 64] = 0


def _fn_missing(v, b):
    set32(b, v.attr(b, 0x30)["off"], 0x31)


def _fn_parent(v, b):
    set64(b, v.file_name(b), 3 | 3 << 48)  # $Volume, sequence 3: not a directory


def _fn_parent_sequence(v, b):
    o = v.file_name(b)
    set64(b, o, u64(b, o) + (1 << 48))


def _fn_flags(v, b):
    o = v.file_name(b) + 0x38
    set32(b, o, u32(b, o) | 0x10000000)


record_kind("filename-bad", _fn_bad)
record_kind("filename-missing", _fn_missing)
record_kind("attr-order", lambda v, b: set32(b, v.attr(b, 0x30)["off"], 0))  # type 0: out of order
record_kind("filename-parent", _fn_parent)
record_kind("filename-parent-sequence", _fn_parent_sequence)
record_kind("filename-flags", _fn_flags)


# ---- indexes (the root's $INDEX_ROOT; /BIG's INDX blocks)

class Entry:
    """An $I30 entry of the root found by name, in $INDEX_ROOT or an INDX
    block; b[o:o+ln] is the entry, save() writes its node back."""

    def __init__(self, v, name, dir_record=5):
        self.v, self.n = v, dir_record
        b = v.rec(dir_record)
        a = v.attr(b, 0x90, "$I30")
        if self.search(b, v.value_off(b, a) + 16, name):
            self.block = None
            return
        alloc = v.attr(b, 0xA0, "$I30")
        blocks = u64(b, alloc["off"] + 0x30) // v.ibs
        for i in range(blocks):
            off = v.index_block_offset(dir_record, i)
            blk = v.unfix(v.read(off, v.ibs))
            if blk[:4] == b"INDX" and self.search(blk, 0x18, name):
                self.block, self.block_off = i, off
                return
        raise SystemExit("no entry %s in record %d" % (name, dir_record))

    def search(self, b, node, name):
        o, end = node + u32(b, node), node + u32(b, node + 4)
        prev = None
        while o < end:
            ln, flags = u16(b, o + 8), u16(b, o + 12)
            if flags & 2:
                return False
            if b[o + 16 + 66:o + 16 + 66 + 2 * b[o + 16 + 64]].decode("utf-16-le") == name:
                self.b, self.o, self.ln, self.prev = b, o, ln, prev
                return True
            prev = (o, ln)
            o += ln
        return False

    def save(self):
        if self.block is None:
            self.v.put(self.n, self.b)
        else:
            self.v.write(self.block_off, self.v.fix(self.b))


@kind
def index_order(v):
    e = Entry(v, "B.TXT")  # swapped with the entry before it (A.TXT)
    if not e.prev or e.prev[0] + e.prev[1] != e.o or u16(e.b, e.prev[0] + 12) & 1 or u16(e.b, e.o + 12) & 1:
        raise SystemExit("B.TXT has no leaf entry right before it")
    oa, la = e.prev
    ea, eb = bytes(e.b[oa:oa + la]), bytes(e.b[e.o:e.o + e.ln])
    e.b[oa:oa + la + e.ln] = eb + ea
    e.save()


@kind
def index_stale_entry(v, name="E.TXT"):
    e = Entry(v, name)
    set64(e.b, e.o, u64(e.b, e.o) + (1 << 48))
    e.save()


@kind
def index_entry_mismatch(v):
    e = Entry(v, "E.TXT")
    o = e.o + 16 + 0x38
    set32(e.b, o, u32(e.b, o) ^ 0x10000000)  # the key's directory flag
    e.save()


@kind
def index_sizes(v):
    e = Entry(v, "A.TXT")
    o = e.o + 16 + 0x30
    set64(e.b, o, u64(e.b, o) + 1)
    e.save()


@kind
def index_missing_entry(v):
    """/DIR/L.TXT (a hard link of /DIR/C.TXT) loses its entry in /DIR's
    $INDEX_ROOT: the record keeps both $FILE_NAMEs, one index entry names it."""
    d = v.find("DIR")
    e = Entry(v, "L.TXT", d)
    if e.block is not None:
        raise SystemExit("L.TXT's entry is in an INDX block: not supported")
    b = e.b
    a = v.attr(b, 0x90, "$I30")
    node = v.value_off(b, a) + 16
    for o in (node + 4, node + 8, a["off"] + 0x10, a["off"] + 4):  # index length, allocated, value, attribute
        set32(b, o, u32(b, o) - e.ln)
    v.splice(b, e.o, e.o + e.ln)
    v.put(d, b)


@kind
def index_root_missing(v):
    n = v.find("SUB")
    b = v.rec(n)
    set32(b, v.attr(b, 0x90, "$I30")["off"], 0x91)
    v.put(n, b)


@kind
def index_corrupt(v):
    off = v.index_block_offset(v.find("BIG"), 0)
    v.write(off, b"INDY")


@kind
def index_bitmap(v):
    n = v.find("BIG")
    b = v.rec(n)
    a = v.attr(b, 0xB0, "$I30")
    o = v.value_off(b, a)
    b[o] = 0
    v.put(n, b)


@kind
def index_extra_entry(v):
    """/E.TXT's entry points to /DIR/E2.TXT (also empty): E.TXT is unreachable, E2.TXT named twice."""
    t = v.find("E2.TXT")
    e = Entry(v, "E.TXT")
    set64(e.b, e.o, t | u16(v.rec(t), 0x10) << 48)
    e.save()


@kind
def tree_root(v):
    b = v.rec(5)
    set16(b, 0x16, u16(b, 0x16) & ~2)
    v.put(5, b)


@kind
def tree_dir_freed(v):
    """/DIR's record marked not in use (its $MFT bit left set): what it held
    (C.TXT with its hard link L.TXT, E2.TXT, SUB/) is orphaned with no
    directory to go back to, and the root's entries for DIR are stale."""
    n = v.find("DIR")
    b = v.rec(n)
    set16(b, 0x16, u16(b, 0x16) & ~1)
    v.put(n, b)


@kind
def tree_cycle(v):
    """/DIR's $FILE_NAMEs name its own subdirectory /DIR/SUB as parent: DIR
    and SUB lead to each other and never to the root (the root's index
    still names DIR, with the old key)."""
    n, sub = v.find("DIR"), v.find("SUB")
    ref = sub | u16(v.rec(sub), 0x10) << 48
    b = v.rec(n)
    for a in v.attrs(b):
        if a["type"] == 0x30:
            set64(b, v.value_off(b, a), ref)
    v.put(n, b)


@kind
def tree_cycle_stale(v):
    """tree-cycle, and the root's entry for DIR names another sequence
    number: no index names DIR any more."""
    tree_cycle(v)
    index_stale_entry(v, "DIR")


# ---- $Volume, $UpCase

@kind
def volume_dirty(v):
    b = v.rec(3)
    o = v.value_off(b, v.attr(b, 0x70)) + 10
    set16(b, o, u16(b, o) | 1)
    v.put(3, b)


@kind
def volume_information(v):
    b = v.rec(3)
    set32(b, v.attr(b, 0x70)["off"], 0x71)
    v.put(3, b)


@kind
def upcase_ascii(v):
    runs = v.stream(10)[2]
    v.write(runs[0][0] * v.cbytes + 2 * ord("a"), struct.pack("<H", ord("a")))


@kind
def upcase_size(v):
    b = v.rec(10)
    a = v.attr(b, 0x80)
    for f in (0x30, 0x38):
        set64(b, a["off"] + f, 131070)
    v.put(10, b)


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(sorted(KINDS)))
        return
    if len(sys.argv) != 3 or sys.argv[2] not in KINDS:
        sys.exit(__doc__)
    v = Ntfs(sys.argv[1])
    KINDS[sys.argv[2]](v)
    v.f.close()
    print("%s: %s" % (sys.argv[1], sys.argv[2]))


if __name__ == "__main__":
    main()
