#!/usr/bin/env bash
# fsimg ls / cat / extract on NTFS images, against the source trees and
# against independent readers:
#  (a) make-tree small (scaled 0.1), edges, names and wide (20,000 entries in
#      one directory) populated at 4 KiB clusters (small also at 512 B and
#      64 KiB) by fsimg mkfs -t ntfs --from, extracted: diff -r with the
#      tree (names and bytes), ls -R lists as many entries as find, the
#      modification time of a file equals the source's (clamped by
#      SOURCE_DATE_EPOCH), cat gives the same bytes.
#  (b) images the reference tools made (mkntfs + ntfs-3g at 512 B, 4 KiB and
#      64 KiB clusters; Windows 10 volumes): ls -R equals The Sleuth Kit's
#      fls -r -p -u without system files (names, directories, streams), and
#      every file and stream extracted equals TSK's bytes (tsk_recover, icat).
#  (c) an image filled through an ntfs-3g FUSE mount (mkntfs -F -Q, then
#      ntfs-3g -o streams_interface=windows): hard links listed under each
#      name with one record, alternate data streams (ls name:stream, cat
#      FILE:STREAM, extract as name:stream files or --streams skip), ln -s
#      (Interix links) and a reparse-point symlink set through the
#      system.ntfs_reparse_data xattr (ls -l shows the targets; extract
#      makes the ones inside OUTDIR and skips absolute ones with a warning),
#      a sparse file, a file whose streams and names spill into extension
#      records ($ATTRIBUTE_LIST), a compressed file (LZNT1; more in
#      ntfs_compressed.sh), each compared with ntfscat.
# cost: 25
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
for t in fls icat ntfscat mkntfs; do command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }; done
export SOURCE_DATE_EPOCH=1700000000
MT=$SHARED/trees/make-tree
T=$WORK/trees
mkdir -p "$T"

# ---- (a) our own images against the trees
"$MT" small "$T/small" --scale 0.1 >/dev/null
"$MT" edges "$T/edges" >/dev/null
"$MT" names "$T/names" >/dev/null 2>&1
"$MT" wide "$T/wide" >/dev/null
touch -d @1800000000 "$T/small/future.txt"  # newer than SOURCE_DATE_EPOCH: clamped
touch -d @1600000000.1234567 "$T/edges/past.txt"

roundtrip() {  # roundtrip PROFILE CLUSTER
  local p=$1 c=$2 img=$WORK/$1-$2.img out=$WORK/out-$1-$2
  if ! "$FSIMG" mkfs -q -t ntfs -c "$c" -s auto --from "$T/$p" "$img" 2>"$WORK/err"; then
    fail "mkfs --from $p -c $c: $(cat "$WORK/err")"; return
  fi
  if "$FSIMG" extract -q "$img" -C "$out"; then pass; else fail "extract $p -c $c: exit $?"; fi
  if diff -r "$T/$p" "$out" >"$WORK/diff" 2>&1; then pass; else fail "$p -c $c: extract differs"; head "$WORK/diff"; fi
  local want got
  want=$(cd "$T/$p" && find . -mindepth 1 | wc -l)
  got=$("$FSIMG" ls -R "$img" | wc -l)
  [ "$want" = "$got" ] && pass || fail "$p -c $c: ls -R lists $got entries, find $want"
  rm -rf "$out"
  echo "$p -c $c: $want entries read back"
}
roundtrip small 4K
roundtrip small 512
roundtrip small 64K
roundtrip edges 4K
roundtrip names 4K
roundtrip wide 4K

img=$WORK/small-4K.img
f=$(cd "$T/small" && find . -type f -size +100k | sort | head -1)
"$FSIMG" cat "$img" "$f" | cmp -s - "$T/small/$f" && pass || fail "cat $f differs"
# case-insensitive paths
"$FSIMG" cat "$img" "$(echo "$f" | tr a-z A-Z)" | cmp -s - "$T/small/$f" && pass || fail "cat upper-case $f"
"$FSIMG" extract -q "$img" /future.txt -C "$WORK/t1" && [ "$(stat -c %Y "$WORK/t1/future.txt")" = 1700000000 ] &&
  pass || fail "future.txt: mtime $(stat -c %Y "$WORK/t1/future.txt" 2>&1), expected the clamp 1700000000"
"$FSIMG" extract -q "$WORK/edges-4K.img" /past.txt -C "$WORK/t1" &&
  [ "$(stat -c %.7Y "$WORK/t1/past.txt")" = 1600000000.1234567 ] && pass ||
  fail "past.txt: mtime $(stat -c %.7Y "$WORK/t1/past.txt" 2>&1), expected 1600000000.1234567 (100 ns)"
"$FSIMG" ls -l "$WORK/edges-4K.img" /past.txt | grep ' 2020-09-13 12:26:40.1234567 +00:00  past.txt$' >/dev/null &&
  pass || fail "ls -l past.txt: $("$FSIMG" ls -l "$WORK/edges-4K.img" /past.txt)"
# dump --what index on the 20,000-entry directory (40,000 index entries:
# each name and its DOS name): every block reached once;
# then one INDX block torn (a stride's last bytes): ls, extract and dump stop
# cleanly with the record and block named, exit 1.
w=$WORK/wide-4K.img
"$FSIMG" dump --what index --json /wide "$w" > "$WORK/idx.json" || fail "dump --what index /wide: exit $?"
read -r entries blocks inuse off < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
b = [x for x in j["blocks"] if x["depth"] is not None and x["node_flags"] == 0][0]
r = j["allocation"]["runs"][0]
print(j["walk"]["entries"], j["walk"]["blocks_reached"], len(j["bitmap_in_use"]), r["byte_offset"] + b["block"] * 4096 + 1022)
' "$WORK/idx.json")
[ "$entries" = 40000 ] && [ "$blocks" = "$inuse" ] && pass || fail "index walk: $entries entries, $blocks of $inuse blocks reached"
rec=$("$FSIMG" ls --json "$w" / | python3 -c 'import json,sys; print([e["mft_record"] for e in json.load(sys.stdin)["entries"] if e["name"]=="wide"][0])')
printf '\xEE\xEE' | dd of="$w" bs=1 seek="$off" conv=notrunc status=none
expect_fail 1 "MFT record $rec" "$FSIMG" ls "$w" /wide
grep -q "fixup" err && pass || fail "ls after the torn block: $(cat err)"
"$FSIMG" extract -q "$w" /wide -C "$WORK/torn" 2>/dev/null; rc=$?
[ $rc = 1 ] && pass || fail "extract of the torn directory: exit $rc"
"$FSIMG" dump --what index /wide "$w" > "$WORK/idx.txt"; rc=$?
[ $rc = 1 ] && grep -q "^walk: STOPPED" "$WORK/idx.txt" && grep -q "CANNOT DECODE" "$WORK/idx.txt" && pass ||
  fail "dump --what index of the torn directory: exit $rc, $(tail -2 "$WORK/idx.txt")"
rm -f "$WORK"/*.img

# ---- (b) images made by the reference tools, against The Sleuth Kit
# fls -r -p -u: "r/r 36-128-1:<TAB>dir/name[:stream]"; system files (MFT
# records below 16, and what lies under $Extend) and TSK's virtual
# $OrphanFiles are left out, as fsimg ls leaves them out.
fls_list() {
  fls -r -p -u "$1" | awk -F'\t' '{
      split($1, a, " "); split(a[2], id, "-"); rec = id[1] + 0
      if (a[1] == "V/V" || rec < 16 || $2 ~ /^\$Extend(\/|$)/) next
      p = "/" $2; if (a[1] == "d/d") p = p "/"; print p "\t" a[2] }' | sed 's/:\t/\t/'
}
corpus_case() {
  local c=$1 img=$WORK/$1.img out=$WORK/out-$1
  "$SHARED/corpus/run" --decode "ntfs/$c" "$img" >/dev/null 2>&1 || { fail "decode $c"; return; }
  fls_list "$img" | sort > "$WORK/fls"
  cut -f1 "$WORK/fls" > "$WORK/fls.names"
  "$FSIMG" ls -R "$img" | sort > "$WORK/ours" || fail "ls -R $c"
  if cmp -s "$WORK/fls.names" "$WORK/ours"; then pass; else
    fail "$c: ls -R differs from fls -r"; diff "$WORK/fls.names" "$WORK/ours" | head
  fi
  "$FSIMG" extract -q "$img" -C "$out" || fail "extract $c: exit $?"
  # TSK's bytes of every file and stream: tsk_recover writes the unnamed $DATA of each
  # allocated name at once; a named stream, or a name tsk_recover did not write, is read
  # with icat (a process per file cost 1,000 processes here, issue 43).
  tsk_recover -a "$img" "$WORK/tsk-$c" >/dev/null 2>&1
  local res
  res=$(python3 -c '
import os, subprocess, sys
img, out, tsk = sys.argv[1:4]
n = bad = 0
for line in open(sys.argv[4], encoding="utf-8", errors="surrogateescape"):
    path, ident = line.rstrip("\n").split("\t")
    if path.endswith("/"):
        continue
    n += 1
    ident = ident.rstrip(":")
    ours = open(out + path, "rb").read() if os.path.isfile(out + path) else None
    theirs = None
    if ":" not in path.rsplit("/", 1)[1]:
        try:
            theirs = open(tsk + path, "rb").read()
        except OSError:
            pass
    if theirs is None:
        theirs = subprocess.run(["icat", img, ident], capture_output=True).stdout
    if ours != theirs:
        bad += 1
        if bad <= 3:
            print("  %s differs from TSK (%s)" % (path, ident), file=sys.stderr)
print(n, bad)' "$img" "$out" "$WORK/tsk-$c" "$WORK/fls")
  local n=${res% *} bad=${res#* }
  [ -n "$res" ] && [ "$bad" = 0 ] && pass || fail "$c: $bad of $n files differ from TSK"
  echo "$c: $(wc -l < "$WORK/ours") entries, $n files and streams equal to TSK's"
  rm -rf "$out" "$img" "$WORK/tsk-$c"
}
for c in local-mkntfs-64m-c4096-tree local-mkntfs-16m-c512-tree local-mkntfs-64m-c65536-tree \
         ntfsimg-default-win10 ntfsimg-checkonly-formatted_on_windows; do
  corpus_case $c
done

# ---- (c) an image filled through ntfs-3g
if ! command -v ntfs-3g >/dev/null || ! command -v fusermount >/dev/null || [ ! -e /dev/fuse ]; then
  echo "ntfs-3g FUSE not available: part (c) skipped"
  finish; exit
fi
MNT=$WORK/mnt; mkdir -p "$MNT"
trap 'mountpoint -q "$MNT" && fusermount -u "$MNT"; rm -rf "$WORK"' EXIT
img=$WORK/fuse.img
truncate -s 32M "$img"
mkntfs -Q -F -q "$img" >/dev/null 2>&1 || fail "mkntfs"
ntfs-3g -o streams_interface=windows "$img" "$MNT" || { fail "ntfs-3g mount"; finish; exit; }
S=$WORK/src; mkdir -p "$S"
mkdir "$MNT/d" "$MNT/comp"
head -c 100000 /dev/urandom > "$S/a.bin"; cp "$S/a.bin" "$MNT/d/a.bin"
ln "$MNT/d/a.bin" "$MNT/d/hard.bin"; ln "$MNT/d/a.bin" "$MNT/top-link.bin"
echo "stream one" > "$MNT/d/a.bin:one"
head -c 5000 /dev/urandom > "$S/two"; cp "$S/two" "$MNT/d/a.bin:two"
ln -s a.bin "$MNT/d/sym"; ln -s ../d/a.bin "$MNT/d/up"; ln -s ../../etc/passwd "$MNT/d/escape"
ln -s /etc/passwd "$MNT/d/abs"
truncate -s 10M "$MNT/sparse.bin"; printf middle | dd of="$MNT/sparse.bin" bs=1 seek=5000000 conv=notrunc 2>/dev/null
head -c 50000 /dev/urandom > "$S/many.bin"; cp "$S/many.bin" "$MNT/many.bin"
for i in $(seq 1 20); do head -c 300 /dev/urandom > "$MNT/many.bin:s$i"; done
for i in $(seq 1 12); do ln "$MNT/many.bin" "$MNT/link_with_a_longer_name_$i.bin"; done
echo target > "$MNT/tgt.txt"; touch "$MNT/rp"
python3 - "$MNT" <<'EOF' || fail "xattrs through ntfs-3g"
import os, struct, sys
m = sys.argv[1]
# IO_REPARSE_TAG_SYMLINK, relative, substitute = print = "tgt.txt" [MS-FSCC 2.1.2.4]
t = "tgt.txt".encode("utf-16-le")
body = struct.pack("<HHHHI", 0, len(t), len(t), len(t), 1) + t + t
os.setxattr(m + "/rp", "system.ntfs_reparse_data", struct.pack("<IHH", 0xA000000C, len(body), 0) + body)
os.setxattr(m + "/comp", "system.ntfs_attrib_be", bytes.fromhex("00000800"))  # compressed directory
open(m + "/comp/z.bin", "wb").write(b"abc" * 100000)
EOF
echo plain > "$MNT/plain.txt"
fusermount -u "$MNT" || fail "fusermount -u"

"$FSIMG" ls -lR "$img" > "$WORK/ls" || fail "ls -lR: exit $?"
want='/d/a.bin
/d/a.bin:one
/d/a.bin:two
/d/abs -> /etc/passwd
/d/escape -> ../../etc/passwd
/d/hard.bin
/d/hard.bin:one
/d/hard.bin:two
/d/sym -> a.bin
/d/up -> ../d/a.bin'
got=$(grep ' /d/.' "$WORK/ls" | sed 's/.*  //')
[ "$got" = "$want" ] && pass || fail "ls -lR /d: $got"
grep -q '^l.*  /rp -> tgt.txt$' "$WORK/ls" && pass || fail "reparse-point symlink not shown: $(grep rp "$WORK/ls")"
[ "$(grep -c '^-.* 100000 .* /d/a.bin$\|^-.* 100000 .* /d/hard.bin$\|^-.* 100000 .* /top-link.bin$' "$WORK/ls")" = 3 ] &&
  pass || fail "hard links: $(grep 100000 "$WORK/ls")"
recs=$("$FSIMG" ls --json "$img" /d | python3 -c 'import json,sys; e=json.load(sys.stdin)["entries"]; print(sorted({x["mft_record"] for x in e if x["name"] in ("a.bin","hard.bin")}), [x["link_count"] for x in e if x["name"]=="a.bin"])')
echo "$recs" | grep -q '^\[[0-9]*\] \[3\]$' && pass || fail "hard links: one record with link count 3: $recs"
[ "$(grep -c '/many.bin:s\|/link_with_a_longer_name_[0-9]*.bin:s' "$WORK/ls")" = $((13 * 20)) ] && pass ||
  fail "many.bin: $(grep -c many "$WORK/ls") stream entries"
"$FSIMG" cat "$img" /d/A.BIN:one | cmp -s - <(echo "stream one") && pass || fail "cat a.bin:one"
"$FSIMG" cat "$img" '/d/hard.bin:two:$DATA' | cmp -s - "$S/two" && pass || fail "cat hard.bin:two:\$DATA"
"$FSIMG" cat "$img" '/d/a.bin::$DATA' | cmp -s - "$S/a.bin" && pass || fail "cat a.bin::\$DATA"
"$FSIMG" cat "$img" /many.bin | cmp -s - "$S/many.bin" && pass || fail "cat many.bin (attribute list)"
for i in 1 13 20; do
  "$FSIMG" cat "$img" "/link_with_a_longer_name_7.bin:s$i" | cmp -s - <(ntfscat -q "$img" /many.bin -n "s$i") &&
    pass || fail "many.bin:s$i differs from ntfscat"
done
"$FSIMG" cat "$img" /sparse.bin | cmp -s - <(ntfscat -q "$img" /sparse.bin) && pass || fail "sparse.bin differs from ntfscat"
"$FSIMG" cat "$img" /comp/z.bin | cmp -s - <(ntfscat -q "$img" /comp/z.bin) && pass || fail "compressed z.bin differs from ntfscat"
expect_fail 1 "is a symbolic link" "$FSIMG" cat "$img" /d/sym

out=$WORK/out
"$FSIMG" extract "$img" -C "$out" 2>"$WORK/err"; rc=$?
[ $rc = 0 ] && pass || fail "extract: exit $rc: $(cat "$WORK/err")"
grep -q '/d/abs: symbolic link to "/etc/passwd" skipped: the target is an absolute path' "$WORK/err" && pass ||
  fail "abs link: $(cat "$WORK/err")"
grep -q '/d/escape: symbolic link to "../../etc/passwd" skipped: the target climbs above' "$WORK/err" && pass ||
  fail "escape link: $(cat "$WORK/err")"
cmp -s "$out/comp/z.bin" <(ntfscat -q "$img" /comp/z.bin) && pass || fail "compressed z.bin extracted wrong"
cmp -s "$out/d/a.bin" "$S/a.bin" && cmp -s "$out/d/hard.bin" "$S/a.bin" && cmp -s "$out/top-link.bin" "$S/a.bin" &&
  pass || fail "hard links extracted wrong"
cmp -s "$out/d/a.bin:two" "$S/two" && [ "$(cat "$out/d/a.bin:one")" = "stream one" ] && pass || fail "streams as name:stream files"
[ "$(readlink "$out/d/sym")" = a.bin ] && [ "$(readlink "$out/d/up")" = ../d/a.bin ] && [ "$(readlink "$out/rp")" = tgt.txt ] &&
  pass || fail "links: $(ls -l "$out/d" "$out/rp")"
[ ! -e "$out/d/abs" ] && [ ! -L "$out/d/escape" ] && pass || fail "a link leading out of OUTDIR was made"
cmp -s "$out/sparse.bin" <(ntfscat -q "$img" /sparse.bin) && cmp -s "$out/many.bin" "$S/many.bin" && pass ||
  fail "sparse.bin or many.bin extracted wrong"
cmp -s "$out/plain.txt" <(echo plain) && pass || fail "plain.txt"
"$FSIMG" extract -q "$img" /d -C "$WORK/out2" --streams skip 2>/dev/null
[ -f "$WORK/out2/d/a.bin" ] && [ ! -e "$WORK/out2/d/a.bin:one" ] && pass || fail "--streams skip: $(ls "$WORK/out2/d")"
finish
