#!/usr/bin/env bash
# mkfs -t fat --from with a root of more than 512 entries: the type is still
# chosen by size, and BPB_RootEntCnt grows to hold the root (whole sectors);
# an explicit -t fat16 keeps 512 and refuses, naming the entries needed.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v fsck.fat >/dev/null && command -v mdir >/dev/null || { echo "dosfstools/mtools missing: skipped"; exit 77; }
cd "$WORK"
mkdir wide
(cd wide && for i in $(seq 1 600); do printf '%s' "$i" > "f$i.txt"; done)
root_ent_cnt() { od -An -tu2 -j17 -N2 "$1" | tr -d ' '; }
files_in_root() { mdir -b -i "$1" :: | wc -l; }

# 600 files with 8.3 names (case flags, no LFN): 600 entries, 608 = 38 sectors of 16.
"$FSIMG" mkfs -q -t fat -s 32M --volume-id 1234ABCD --from wide w.img || fail "mkfs -t fat -s 32M"
[ "$(root_ent_cnt w.img)" = 608 ] && pass || fail "BPB_RootEntCnt $(root_ent_cnt w.img), expected 608"
fsck.fat -n w.img >/dev/null && pass || fail "fsck.fat -n w.img"
[ "$(files_in_root w.img)" = 600 ] && pass || fail "mdir lists $(files_in_root w.img) files, expected 600"

# With a label the root needs 601: still 608.
"$FSIMG" mkfs -q -t fat -s 8M -L WIDE --from wide l.img || fail "mkfs -t fat -L"
[ "$(root_ent_cnt l.img)" = 608 ] && pass || fail "labelled: BPB_RootEntCnt $(root_ent_cnt l.img), expected 608"
fsck.fat -n l.img >/dev/null && pass || fail "fsck.fat -n l.img"

# -s auto (no -s): FAT12, sized with the larger root.
"$FSIMG" mkfs -q -t fat --from wide a.img || fail "mkfs -t fat (auto size)"
[ "$(root_ent_cnt a.img)" = 608 ] && pass || fail "auto size: BPB_RootEntCnt $(root_ent_cnt a.img)"
fsck.fat -n a.img >/dev/null && pass || fail "fsck.fat -n a.img"
[ "$(files_in_root a.img)" = 600 ] && pass || fail "auto size: mdir lists $(files_in_root a.img) files"

# A root that fits 512 keeps 512 (no change for ordinary trees).
mkdir few && printf x > few/a.txt
"$FSIMG" mkfs -q -t fat -s 32M --from few f.img || fail "mkfs few"
[ "$(root_ent_cnt f.img)" = 512 ] && pass || fail "few: BPB_RootEntCnt $(root_ent_cnt f.img), expected 512"

# An explicit FAT12/16 type keeps the standard root and refuses, naming the need.
out=$("$FSIMG" mkfs -q -t fat16 -s 32M --from wide x.img 2>&1); rc=$?
[ "$rc" = 2 ] && pass || fail "-t fat16: exit $rc, expected 2"
grep -qF "needs 600 entries" <<<"$out" && pass || fail "-t fat16: need not named: $out"
[ ! -e x.img ] && pass || fail "-t fat16: an image was left"
finish
