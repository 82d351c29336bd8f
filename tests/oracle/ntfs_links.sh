#!/usr/bin/env bash
# mkfs -t ntfs --from with hard links: one MFT record per host file (st_dev,
# st_ino) with one $FILE_NAME per name, data stored once. Checked with
# check-image --manifest (ntfs-3g, ntfscat, The Sleuth Kit, libfsntfs, 7-Zip
# read every name with the right content), an ntfs-3g mount (link count 2,
# both names one inode), fsimg dump --what mft (two $FILE_NAMEs), and slack
# --verify (prediction == populate: a link costs one index entry, no record,
# no data). Symbolic links are skipped (--symlinks skip, the default) by
# populate and by the slack model alike; --symlinks store keeps relative ones
# as IO_REPARSE_TAG_SYMLINK reparse points (relative flag): ntfs-3g shows
# them as symlinks with their targets, ntfsinfo reads the tag, every
# check-image reader passes, and the kernel's ntfs3 driver shows them as
# symlinks (kernel-check), and ntfs-3g and fsimg rm delete them (each is
# listed in $Extend/$Reparse:$R, and its entry goes with it); absolute
# targets are skipped with a warning, FAT/exFAT refuse store.
# cost: 22
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
export SOURCE_DATE_EPOCH=1700000000
T=$WORK/tree
mkdir -p "$T/a" "$T/b"
head -c 10000 /dev/urandom > "$T/a/big.bin"
ln "$T/a/big.bin" "$T/b/big-link.bin"             # two directories, non-resident data
head -c 50 /dev/urandom > "$T/a/small.txt"
ln "$T/a/small.txt" "$T/a/small-link.txt"         # same directory; data kept out of the record
: > "$T/a/empty"
ln "$T/a/empty" "$T/b/empty-link"                 # empty: resident, no cluster
head -c 700 /dev/urandom > "$T/a/alone.txt"       # resident
"$SHARED/oracles/make-manifest" "$T" > "$WORK/manifest" || fail make-manifest
ln -s big.bin "$T/a/sym"                          # skipped (make-manifest cannot list it)

img=$WORK/links.img
out=$("$FSIMG" mkfs -t ntfs -s 16M -c 4K --from "$T" "$img" 2>&1) || fail "mkfs: $out"
grep -q "skipped symbolic link" <<<"$out" && pass || fail "no symlink warning: $out"
check "$img" -j 2 --manifest "$WORK/manifest"

# Records: a 64, a/alone.txt 65, a/big.bin 66 (with b/big-link.bin), a/empty 67
# (with b/empty-link), a/small-link.txt 68 (with a/small.txt: the first name in
# name order owns the record), b 69: 6 records, not 9.
names() { "$FSIMG" dump --what mft "$1" "$img" | grep -c 'Attribute 0x30 \$FILE_NAME'; }
# a/alone.txt has one name and its DOS name ALONE~1.TXT (the linked names are
# POSIX, without DOS names): 2 as well.
[ "$(names 66)" = 2 ] && [ "$(names 67)" = 2 ] && [ "$(names 68)" = 2 ] && [ "$(names 65)" = 2 ] && pass \
  || fail "\$FILE_NAME counts: 66:$(names 66) 67:$(names 67) 68:$(names 68) 65:$(names 65)"
"$FSIMG" dump --what mft 70 "$img" 2>/dev/null | grep '^  flags .*in use' >/dev/null && fail "record 70 in use" || pass

if command -v ntfs-3g >/dev/null && [ -w /dev/fuse ]; then
  mkdir -p "$WORK/mnt"
  if ntfs-3g -o ro "$img" "$WORK/mnt" 2>"$WORK/err"; then
    m=$WORK/mnt
    got="$(stat -c '%h' "$m/a/big.bin") $(stat -c '%h' "$m/b/big-link.bin") $(stat -c '%h' "$m/a/small.txt") $(stat -c '%h' "$m/a/alone.txt")"
    # ntfs-3g shows the header's link count, which counts a DOS name too
    # (ntfs_delete takes one off per $FILE_NAME it removes): alone.txt has 2.
    [ "$got" = "2 2 2 2" ] && pass || fail "ntfs-3g link counts: $got"
    [ "$(stat -c %i "$m/a/big.bin")" = "$(stat -c %i "$m/b/big-link.bin")" ] && pass || fail "ntfs-3g: two inodes"
    cmp -s "$m/b/big-link.bin" "$T/a/big.bin" && pass || fail "ntfs-3g: link content"
    [ ! -e "$m/a/sym" ] && pass || fail "ntfs-3g: symlink stored"
    fusermount -u "$m" || umount -l "$m"
  else
    echo "ntfs-3g mount failed: $(cat "$WORK/err"): mount checks skipped"
  fi
fi

# --symlinks store: relative links as reparse points.
S=$WORK/sym
mkdir -p "$S/a" "$S/b"
echo "link target" > "$S/a/t.txt"
"$SHARED/oracles/make-manifest" "$S" > "$WORK/sym.manifest" || fail make-manifest
ln -s t.txt "$S/a/rel"
"$FSIMG" mkfs -q -t ntfs -s 16M --symlinks store --from "$S" "$WORK/sym1.img" || fail "mkfs --symlinks store"
check "$WORK/sym1.img" -j 2 --manifest "$WORK/sym.manifest" --ignore a/rel
ntfsinfo -F /a/rel "$WORK/sym1.img" 2>/dev/null | grep 'Reparse point tag:.*0xa000000c (symlink)' >/dev/null && pass \
  || fail "ntfsinfo: no symlink reparse tag"
# A target with "..": 7-Zip refuses such links as dangerous, so only ntfs-3g reads this one.
ln -s ../a/t.txt "$S/b/up"
"$FSIMG" mkfs -q -t ntfs -s 16M --symlinks store --from "$S" "$WORK/sym2.img" || fail "mkfs --symlinks store (..)"
if command -v ntfs-3g >/dev/null && [ -w /dev/fuse ]; then
  mkdir -p "$WORK/mnt2"
  if ntfs-3g -o ro "$WORK/sym2.img" "$WORK/mnt2" 2>"$WORK/err"; then
    m=$WORK/mnt2
    got="$(readlink "$m/a/rel") $(readlink "$m/b/up") $(cat "$m/b/up")"
    [ "$got" = "t.txt ../a/t.txt link target" ] && pass || fail "ntfs-3g symlinks: $got"
    [ -L "$m/b/up" ] && pass || fail "ntfs-3g: b/up is not a symlink"
    fusermount -u "$m" || umount -l "$m"
  else
    echo "ntfs-3g mount failed: $(cat "$WORK/err"): symlink mount checks skipped"
  fi
fi
# $Extend/$Reparse:$R lists every stored link (40: the index needs an INDX
# block). ntfs-3g removes a link's entry when it deletes the link and adds
# one when it sets reparse data, so after rm and setxattr through a
# read-write mount our fsck finds every reparse point listed, in order, and
# no entry left for a deleted one.
R=$WORK/many
mkdir -p "$R"
echo "many" > "$R/T.TXT"
"$SHARED/oracles/make-manifest" "$R" > "$WORK/many.manifest" || fail make-manifest
for i in $(seq 10 49); do ln -s T.TXT "$R/L$i"; done
"$FSIMG" mkfs -q -t ntfs -s 16M --symlinks store --from "$R" "$WORK/many.img" || fail "mkfs --symlinks store (40)"
out=$("$FSIMG" dump --what mft 26 "$WORK/many.img")
grep -q 'Attribute 0xA0 \$INDEX_ALLOCATION "\$R"' <<<"$out" && pass \
  || fail "\$Reparse has no \$INDEX_ALLOCATION:\$R"
[ "$(grep -c '= tag 0xA000000C, record' <<<"$out")" = 40 ] && pass \
  || fail "dump --what mft 26 does not decode the 40 \$R keys"
check "$WORK/many.img" -j 2 --manifest "$WORK/many.manifest" --ignore 'L*'
# dump --what index shows $R: its 40 entries reached by the walk, each the
# symlink tag and the MFT record The Sleuth Kit finds for one link (ifind).
"$FSIMG" dump --what index --json '/$Extend/$Reparse' "$WORK/many.img" > "$WORK/r.json" || fail "dump --what index \$R"
want=$(for i in $(seq 10 49); do ifind -n "/L$i" "$WORK/many.img"; done | sort -n | tr '\n' ' ')
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["index"] == "$R" and d["walk"]["entries"] == 40, (d["index"], d["walk"])
es = [e for b in d["blocks"] for e in b["entries"] if "reparse_tag" in e]
assert all(e["reparse_tag"] == 0xA000000C for e in es), es
print(" ".join(str(r) for r in sorted(e["file_reference"]["record"] for e in es)) + " ")
' "$WORK/r.json")
[ -n "$want" ] && [ "$got" = "$want" ] && pass || fail "dump --what index \$R lists records '$got', ifind '$want'"
python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
' "$FSIMG_SOURCE_DIR/docs/schemas/dump-ntfs-index.schema.json" "$WORK/r.json" && pass \
  || fail "dump --what index \$R: JSON against its schema"
# fsimg rm of stored links: the directory entry, the link's entry in $R, then the record and
# its bits. Ten of the forty go; the others still read as links, $R lists exactly the rest.
cp "$WORK/many.img" "$WORK/rm-links.img"
"$FSIMG" rm "$WORK/rm-links.img" /L1* || fail "fsimg rm of ten stored links"
[ "$(ntfsls "$WORK/rm-links.img" | grep -c '^L')" = 30 ] && pass || fail "ntfsls after fsimg rm: $(ntfsls "$WORK/rm-links.img" | tr '\n' ' ')"
"$FSIMG" fsck "$WORK/rm-links.img" > "$WORK/out" 2>&1 && pass || fail "fsck after fsimg rm of links: $(cat "$WORK/out")"
[ "$(fls "$WORK/rm-links.img" | grep -v '^[^ ]* \*' | grep -c ' L1[0-9]$')" = 0 ] && pass || fail "sleuthkit still lists L1*"
[ "$("$FSIMG" dump --what mft 26 "$WORK/rm-links.img" | grep -c '= tag 0xA000000C, record')" = 30 ] && pass \
  || fail "\$R does not hold 30 keys after rm"
check "$WORK/rm-links.img" -j 2 --manifest "$WORK/many.manifest" --ignore 'L*'
# The one link of sym1.img ($R in its $INDEX_ROOT): gone, $R empty, the volume clean.
cp "$WORK/sym1.img" "$WORK/rm-sym1.img"
"$FSIMG" rm "$WORK/rm-sym1.img" /a/rel || fail "rm of sym1's link"
"$FSIMG" fsck "$WORK/rm-sym1.img" > "$WORK/out" 2>&1 && pass || fail "fsck after rm of sym1's link: $(cat "$WORK/out")"
[ "$("$FSIMG" dump --what mft 26 "$WORK/rm-sym1.img" | grep -c '= tag 0xA000000C, record')" = 0 ] && pass \
  || fail "sym1's \$R still holds a key after rm"
check "$WORK/rm-sym1.img" -j 2 --manifest "$WORK/sym.manifest"
if command -v ntfs-3g >/dev/null && [ -w /dev/fuse ]; then
  mkdir -p "$WORK/mnt3"
  if ntfs-3g "$WORK/many.img" "$WORK/mnt3" 2>"$WORK/err"; then
    m=$WORK/mnt3
    [ "$(readlink "$m/L31")" = T.TXT ] && pass || fail "ntfs-3g: L31 -> $(readlink "$m/L31")"
    out=$(cd "$m" && rm L1* L3* 2>&1) && pass || fail "ntfs-3g could not delete stored symlinks: $out"
    # ntfs-3g inserts into our $R tree: two new files get L21's reparse data.
    python3 -c '
import os, sys
m = sys.argv[1]
v = os.getxattr(m + "/L21", "system.ntfs_reparse_data", follow_symlinks=False)
for n in ("A.TXT", "Z.TXT"):
    open(m + "/" + n, "w").close()
    os.setxattr(m + "/" + n, "system.ntfs_reparse_data", v)
' "$m" && pass || fail "ntfs-3g: setting reparse data"
    fusermount -u "$m" || umount -l "$m"
    [ "$(ntfsls "$WORK/many.img" | grep -c '^L')" = 20 ] && pass || fail "ntfsls after rm: $(ntfsls "$WORK/many.img" | tr '\n' ' ')"
    out=$("$FSIMG" fsck -n "$WORK/many.img" 2>&1) && pass || fail "fsck after ntfs-3g rm: $out"
  else
    echo "ntfs-3g mount failed: $(cat "$WORK/err"): symlink delete checks skipped"
  fi
fi
# Damage to $Extend/$Reparse:$R (sym1.img: one link, its entry in
# $INDEX_ROOT:$R of record 26), one image per ntfs.reparse.* code. No
# reference tool reads $R to list or read files (ntfs-3g looks an entry up
# only to delete a link, and goes on without one), so these are blind to
# them; fsimg fsck -n names each, and fsck -y rebuilds $R (the index the
# undamaged image has).
reparse_damage() {  # reparse_damage IMAGE KIND: edits the first $R entry in place
  python3 - "$1" "$2" <<'PY'
import struct, sys
path, kind = sys.argv[1], sys.argv[2]
with open(path, "r+b") as f:
    boot = f.read(512)
    bps = struct.unpack_from("<H", boot, 11)[0]
    cluster = bps * boot[13]
    c = struct.unpack_from("<b", boot, 0x40)[0]
    rs = cluster * c if c > 0 else 1 << -c
    at = struct.unpack_from("<Q", boot, 0x30)[0] * cluster + 26 * rs
    f.seek(at)
    rec = bytearray(f.read(rs))
    a = struct.unpack_from("<H", rec, 0x14)[0]
    while True:
        t, length = struct.unpack_from("<II", rec, a)
        assert t != 0xFFFFFFFF, "no $INDEX_ROOT:$R"
        if t == 0x90 and rec[a + 9] == 2:
            break
        a += length
    e = a + struct.unpack_from("<H", rec, a + 0x14)[0] + 0x10
    e += struct.unpack_from("<I", rec, e)[0]  # the node header's first-entry offset
    if kind == "missing":    # the entry becomes the end entry: nothing is listed
        struct.pack_into("<H", rec, e + 0x0C, 2)
    elif kind == "stale":    # another reparse tag than the link's
        struct.pack_into("<I", rec, e + 16, 0xA000000D)
    elif kind == "corrupt":  # an 8-byte key
        struct.pack_into("<H", rec, e + 0x0A, 8)
    assert all(not (e <= 512 * k - 2 < e + 24) for k in range(1, rs // 512 + 1)), "edit at a fixup"
    f.seek(at)
    f.write(rec)
PY
}
for kind in missing stale corrupt; do
  cp "$WORK/sym1.img" "$WORK/r-$kind.img"
  reparse_damage "$WORK/r-$kind.img" $kind || fail "damage $kind"
  got=$("$FSIMG" fsck -n --json "$WORK/r-$kind.img" 2>/dev/null | python3 -c 'import json, sys; print("+".join(sorted({f["code"] for f in json.load(sys.stdin)["findings"]})))')
  case $kind in
    missing) want=ntfs.reparse.missing-entry ;;
    stale) want=ntfs.reparse.stale-entry ;;
    corrupt) want=ntfs.reparse.corrupt+ntfs.reparse.missing-entry ;;
  esac
  [ "$got" = "$want" ] && pass || fail "\$R damage $kind: got '$got', want '$want'"
  # fsck -y rebuilds $R from the reparse points the records hold: the index the undamaged image
  # has, entry for entry; -p leaves it; a second -y writes nothing.
  img="$WORK/r-$kind.img"; cp "$img" "$WORK/r-damaged.img"
  "$FSIMG" fsck -p "$img" > /dev/null 2>&1; rc=$?
  [ $rc = 4 ] && cmp -s "$img" "$WORK/r-damaged.img" && pass || fail "\$R damage $kind: -p exit $rc or it wrote"
  "$FSIMG" fsck -y "$img" > "$WORK/rep.out" 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "^repaired ntfs.reparse.*: \$Extend/\$Reparse:\$R rebuilt from the reparse points the records hold (1 entry)$" "$WORK/rep.out" &&
    [ -z "$(fsck_codes "$img")" ] && pass || fail "\$R damage $kind: -y exit $rc, left $(fsck_codes "$img"): $(cat "$WORK/rep.out")"
  "$FSIMG" dump --what index '/$Extend/$Reparse' "$img" | tail -n +2 > "$WORK/idx.new"
  "$FSIMG" dump --what index '/$Extend/$Reparse' "$WORK/sym1.img" | tail -n +2 > "$WORK/idx.old"
  cmp -s "$WORK/idx.new" "$WORK/idx.old" && pass || fail "\$R damage $kind: the rebuilt \$R: $(diff "$WORK/idx.old" "$WORK/idx.new")"
  ntfsfix -n "$img" > /dev/null 2>&1 && pass || fail "\$R damage $kind: ntfsfix -n after -y"
  cp --sparse=always "$img" "$WORK/r-first.img"; "$FSIMG" fsck -y "$img" > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && cmp -s "$img" "$WORK/r-first.img" && pass || fail "\$R damage $kind: second -y exit $rc or it wrote"
done
ln -s /etc/passwd "$S/b/abs"
# An absolute target is skipped with a warning naming it; the others are stored.
out=$("$FSIMG" mkfs -t ntfs -s 16M --symlinks store --from "$S" "$WORK/sym3.img" 2>&1); rc=$?
[ "$rc" = 0 ] && grep -q 'skipped symbolic link .*/b/abs: it points to the absolute path "/etc/passwd"' <<<"$out" \
  && "$FSIMG" ls "$WORK/sym3.img" /a/rel >/dev/null 2>&1 && ! "$FSIMG" ls "$WORK/sym3.img" /b/abs >/dev/null 2>&1 \
  && pass || fail "absolute target: exit $rc: $out"
out=$("$FSIMG" mkfs -q -t fat32 -s 64M --symlinks store --from "$S" "$WORK/f.img" 2>&1); rc=$?
[ "$rc" = 2 ] && grep -q -- '--symlinks store is for NTFS' <<<"$out" && pass || fail "FAT store: exit $rc: $out"

# slack --verify: prediction == populate with hard links.
vout=$("$FSIMG" slack -t ntfs -c 512,4K,64K --verify --json "$T" 2>&1)
if python3 -c '
import json, sys
v = json.loads(sys.argv[1])["verify"]
assert len(v) == 3 and all(r["predicted_clusters"] == r["actual_clusters"] == r["planned_clusters"] for r in v), v
print("slack --verify links:", " ".join("%d:%d" % (r["cluster_bytes"], r["actual_clusters"]) for r in v))
' "$vout"; then pass; else fail "slack --verify: $vout"; fi

# The Linux ntfs3 driver (kernel-check, a VM, ~10-25 s) sees the stored
# symbolic links as symlinks (type l, size = the target's length) and the
# hard links as one file under two names, read-only and after its writes.
if [ -x "$SHARED/oracles/kernel-check" ]; then
  K=$WORK/kc
  mkdir -p "$K/a" "$K/b"
  echo "link target" > "$K/a/t.txt"
  head -c 10000 /dev/urandom > "$K/a/big.bin"
  ln "$K/a/big.bin" "$K/b/big-link.bin"
  "$SHARED/oracles/make-manifest" "$K" > "$WORK/kc.manifest" || fail make-manifest
  printf 'l\t5\t-\ta/rel\nl\t10\t-\tb/up\n' >> "$WORK/kc.manifest"
  ln -s t.txt "$K/a/rel"
  ln -s ../a/t.txt "$K/b/up"
  "$FSIMG" mkfs -q -t ntfs -s 16M --symlinks store --from "$K" "$WORK/kc.img" || fail "mkfs --symlinks store (kernel)"
  # Read-only: kernel-check --write renames one name of the hard link and
  # overwrites the other, and its expected state does not model that both are
  # one file. ntfs3's writes on hard links and symlinks are in write_kernel.sh;
  # ntfs-3g's in ntfs_write.sh.
  if out=$("$SHARED/oracles/kernel-check" --manifest "$WORK/kc.manifest" "$WORK/kc.img" 2>&1); then
    pass
  else
    fail "kernel-check (ntfs3) of links and symlinks"; echo "$out" | sed 's/^/    /'
  fi
fi
finish
