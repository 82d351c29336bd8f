#!/usr/bin/env bash
# The check of what a change touches (--check touched; issue 40), which
# changing commands use instead of the whole-volume ownership walk on FAT
# volumes of more than 16,777,216 clusters (a 2 TiB FAT32 of 8 KiB clusters:
# 0.01 instead of 1.35 s). On a small FAT32 damaged where the change reads,
# each command refuses with exit 3, the code named and the image
# byte-identical: a root directory whose first cluster is free in the FAT, a
# directory whose chain links to a free cluster, a file whose chain loops, a
# cluster to be allocated that FAT copy 2 marks in use. On a clean volume
# every command works and fsck.fat and mtools read the result. Automatic
# choice: a FAT32 of 18.6 million clusters gets the touched check (a note
# says so), --check whole the walk; exFAT refuses --check touched.
# cost: 8
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
export SOURCE_DATE_EPOCH=1700000000
# fat IMAGE get N | set N VALUE [COPY] | mark2 A B | first NAME11 [DIR_CLUSTER]: FAT32 entries
# (COPY 1 or 2; default both; mark2: in FAT 2, those of A..B that FAT 1 has free set to
# end-of-chain) and the first cluster of a short entry in a directory (default the root).
fat() { python3 - "$@" <<'EOF'
import struct, sys
img, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
f = open(img, "r+b")
b = f.read(512)
bps, spc = struct.unpack_from("<H", b, 11)[0], b[13]
res, nfats = struct.unpack_from("<H", b, 14)[0], b[16]
fatsz, root = struct.unpack_from("<I", b, 36)[0], struct.unpack_from("<I", b, 44)[0]
def fat_at(copy, n): return (res + copy * fatsz) * bps + 4 * n
def get(n, copy=0):
    f.seek(fat_at(copy, n)); return struct.unpack("<I", f.read(4))[0] & 0x0FFFFFFF
if cmd == "get":
    print(get(int(args[0])))
elif cmd == "set":
    copies = [int(args[2]) - 1] if len(args) > 2 else range(nfats)
    for c in copies:
        f.seek(fat_at(c, int(args[0]))); f.write(struct.pack("<I", int(args[1], 0)))
elif cmd == "mark2":  # FAT 2 only: entries free in FAT 1 among [A, B] marked end-of-chain
    for n in range(int(args[0]), int(args[1]) + 1):
        if get(n) == 0:
            f.seek(fat_at(1, n)); f.write(struct.pack("<I", 0x0FFFFFFF))
elif cmd == "first":
    d = int(args[1]) if len(args) > 1 else root
    f.seek(((res + nfats * fatsz) + (d - 2) * spc) * bps); data = f.read(spc * bps)
    for i in range(0, len(data), 32):
        e = data[i:i + 32]
        if e[:11] == args[0].encode():
            print(struct.unpack_from("<H", e, 20)[0] << 16 | struct.unpack_from("<H", e, 26)[0]); break
    else:
        sys.exit("no entry " + args[0])
EOF
}
printf 'hello\n' > a.txt
head -c 5000 /dev/urandom > big.bin
"$FSIMG" mkfs -q -t fat32 -s 64M --volume-id 0BADF00D base.img || fail "mkfs"
"$FSIMG" cp -q base.img a.txt /A.TXT && "$FSIMG" cp -q base.img big.bin /BIG.BIN && "$FSIMG" mkdir -q base.img /D &&
  "$FSIMG" cp -q base.img a.txt /D/IN.TXT || fail "populate"
root=$(python3 -c 'import struct; print(struct.unpack_from("<I", open("base.img", "rb").read(48), 44)[0])')  # BPB_RootClus
d=$(fat base.img first "D          ")
big=$(fat base.img first "BIG     BIN")

# refused IMAGE CODE CMD...: exit 3 naming CODE, the image byte-identical.
refused() {
  local img=$1 code=$2; shift 2
  local sum; sum=$(cksum < "$img")
  expect_fail 3 "($code); found by the check of what this change touches" "$@"
  [ "$(cksum < "$img")" = "$sum" ] && pass || fail "$*: a refusal changed the image"
}

# The root directory's first cluster free in the FAT (the whole walk: fat.file.start-free).
cp base.img r.img; fat r.img set "$root" 0
refused r.img fat.file.start-free "$FSIMG" cp --check touched r.img a.txt /NEW.TXT
refused r.img fat.file.start-free "$FSIMG" mkdir --check touched r.img /NEWDIR
refused r.img fat.file.start-free "$FSIMG" label --check touched r.img NEWLABEL
# Without the check the same cp allocates the root's cluster (what issue 40 found): the walk refuses too.
expect_fail 3 "fat.file.start-free" "$FSIMG" cp r.img a.txt /NEW.TXT

# /D's chain links to a free cluster: writing into /D, or stamping an entry of /D, is refused.
cp base.img l.img; fat l.img set "$d" 1000
[ "$(fat l.img get 1000)" = 0 ] || fail "cluster 1000 is not free"
refused l.img fat.chain.free-link "$FSIMG" cp --check touched l.img a.txt /D/NEW.TXT
refused l.img fat.chain.free-link "$FSIMG" attrib --check touched l.img +r /D/IN.TXT
refused l.img fat.chain.free-link "$FSIMG" mv --check touched l.img /A.TXT /D/
refused l.img fat.chain.free-link "$FSIMG" rm --check touched -r l.img /D
# Elsewhere on the volume the change goes on.
"$FSIMG" cp -q --check touched l.img a.txt /ELSE.TXT 2> err && pass || fail "cp beside the damage: $(cat err)"

# /BIG.BIN's chain loops (its last cluster links back to its first): rm and cp -f refuse.
cp base.img p.img; n=$big; while [ "$(fat p.img get "$n")" -lt 268435448 ]; do n=$(fat p.img get "$n"); done
fat p.img set "$n" "$big"
refused p.img fat.chain.loop "$FSIMG" rm --check touched p.img /BIG.BIN
refused p.img fat.chain.loop "$FSIMG" cp -f --check touched p.img a.txt /BIG.BIN
refused p.img fat.chain.loop "$FSIMG" mv -f --check touched p.img /A.TXT /BIG.BIN

# FAT copy 2 says in use what copy 1 says free, where cp allocates.
cp base.img c.img
fat c.img mark2 3 200
refused c.img fat.fat.copies-differ "$FSIMG" cp --check touched c.img big.bin /NEW.BIN
refused c.img fat.fat.copies-differ "$FSIMG" mkdir --check touched c.img /NEWDIR

# A clean volume: every command works with the touched check; the reference tools read the result.
cp base.img ok.img
{ "$FSIMG" cp -q --check touched ok.img big.bin /D/COPY.BIN &&
  "$FSIMG" cp -q -f --check touched ok.img a.txt /BIG.BIN &&
  "$FSIMG" mkdir -q --check touched ok.img /E &&
  "$FSIMG" mv -q --check touched ok.img /D/IN.TXT /E/MOVED.TXT &&
  "$FSIMG" mv -q --check touched ok.img /E /D &&
  "$FSIMG" rm -q --check touched ok.img /A.TXT &&
  "$FSIMG" attrib --check touched ok.img +h /BIG.BIN &&
  "$FSIMG" label -q --check touched ok.img TOUCHED; } 2> err && pass || fail "clean volume: $(cat err)"
"$FSIMG" fsck -n ok.img > out 2>&1 && pass || fail "fsimg fsck after the touched changes: $(tail -3 out)"
if command -v fsck.fat > /dev/null; then
  fsck.fat -n ok.img > out 2>&1 && pass || fail "fsck.fat after the touched changes: $(cat out)"
fi
if command -v mtype > /dev/null; then
  MTOOLS_SKIP_CHECK=1 mtype -i ok.img ::D/COPY.BIN | cmp -s - big.bin && pass || fail "mtools reads another /D/COPY.BIN"
  MTOOLS_SKIP_CHECK=1 mtype -i ok.img ::D/E/MOVED.TXT | cmp -s - a.txt && pass || fail "mtools reads another MOVED.TXT"
fi
[ "$("$FSIMG" label ok.img)" = TOUCHED ] && pass || fail "label not set"

# The automatic choice: more than 2^24 clusters (512-byte clusters on 9 GiB: 18.6 million) gets the
# touched check and says so; --check whole runs the walk; -q silences the note.
"$FSIMG" mkfs -q -t fat32 -c 512 -s 9G large.img || fail "mkfs large"
"$FSIMG" cp large.img a.txt / 2> err && grep -q "checking only what this change touches, not who owns each of its 18,[0-9,]* clusters" err &&
  pass || fail "large volume: no note of the touched check: $(cat err)"
"$FSIMG" cp --check whole large.img a.txt /W.TXT 2> err && [ ! -s err ] && pass || fail "--check whole: $(cat err)"
"$FSIMG" cp -q large.img a.txt /Q.TXT 2> err && [ ! -s err ] && pass || fail "-q: $(cat err)"
"$FSIMG" cp base.img a.txt /SMALL.TXT 2> err && [ ! -s err ] && pass || fail "a small volume got a note: $(cat err)"
"$FSIMG" mkfs -q -t exfat -s 64M ex.img || fail "mkfs exfat"
expect_fail 2 "--check touched is for FAT volumes" "$FSIMG" cp --check touched ex.img a.txt /
expect_fail 2 "" "$FSIMG" cp --check some base.img a.txt /
finish
