#!/usr/bin/env bash
# fsimg slack, honest rows and the image's own row (issue 26): a row that
# cannot store every file shows what it leaves out in place of +best and is
# never best (*) or recommended (R); rows and the recommendation stay within
# what fsimg mkfs writes; an image SOURCE's own layout is marked = and the
# recommendation says what reformatting frees. --json and --csv leave such a
# row's over_best_bytes out (null, empty): it stores less, so it is no better
# or worse by bytes. Without --volume-size the recommendation says what it
# does not count; counts of one are singular.
. "$(dirname "$0")/../lib.sh"
cd "$WORK" || exit 1

# Three 5 GiB videos (sparse host files) and a few small files: FAT32 stores
# no file of 4 GiB or more (4 GiB - 1 is its limit).
# The prose is checked whole below: no wrapping (the width checks set COLUMNS themselves).
export COLUMNS=1000
mkdir -p cam/DCIM
for i in 1 2 3; do truncate -s 5G "cam/DCIM/V$i.MP4"; done
for i in 1 2 3 4 5; do head -c $((i * 1000)) /dev/zero > "cam/DCIM/P$i.JPG"; done
"$FSIMG" slack --wide cam > t.txt || fail "slack cam: $(cat t.txt)"
# 3 x 5 x 2^30 = 16,106,127,360 bytes = 15 GiB
n=$(grep -c '^ *FAT32 .*3 files (15 GiB) not stored' t.txt)
m=$(grep -c '^[*R=]* *FAT32 ' t.txt)
[ "$n" -gt 0 ] && [ "$n" = "$m" ] && pass || fail "FAT32 rows: $n of $m say what they leave out: $(cat t.txt)"
grep -Eq '^[*R]+ +FAT32 ' t.txt && fail "a FAT32 row is marked best or recommended: $(grep FAT32 t.txt)" || pass
grep -Eq '^\*?R +(exFAT|NTFS) ' t.txt && pass || fail "no exFAT/NTFS row recommended: $(cat t.txt)"
grep -qF "FAT32 leaves 3 files (15 GiB) out." t.txt && pass || fail "recommendation: $(grep Recommendation t.txt)"
"$FSIMG" slack --json cam | python3 -c '
import json, sys
j = json.load(sys.stdin)
rec = j["rows"][j["recommendation"]["row"]]
assert rec["filesystem"] != "fat32" and rec["complete"], rec
for r in j["rows"]:
    if r["filesystem"] == "fat32":
        assert r["unstorable_files"] == 3 and r["unstorable_bytes"] == 3 * 5 * 2**30, r
        assert not r["complete"] and not r["best"] and not r["recommended"] and r["over_best_bytes"] is None, r
    else:
        assert r["over_best_bytes"] is not None and r["over_best_bytes"] >= 0, r
    # fsimg mkfs writes NTFS clusters up to 64 KiB only (ntfs/layout.cpp).
    if r["filesystem"] == "ntfs":
        assert r["cluster_bytes"] <= 65536, r
' && pass || fail "json rows"
"$FSIMG" slack --csv cam > c.csv && python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert (r["over_best_bytes"] == "") == (r["complete"] == "0"), r
' c.csv && pass || fail "csv over_best_bytes: $(cat c.csv)"
# What mkfs accepts bounds the rows: NTFS 64 KiB yes, 128 KiB no.
"$FSIMG" mkfs -q -t ntfs -c 64K -s 64M n64.img && pass || fail "mkfs -t ntfs -c 64K"
expect_fail 2 "clusters above 64 KiB" "$FSIMG" mkfs -t ntfs -c 128K -s 64M n128.img
# -t fat32 alone: no row stores every file, so none is best or recommended.
"$FSIMG" slack -t fat32 cam > f.txt || fail "slack -t fat32"
grep -Eq '^[*R=]+ +FAT32 ' f.txt && fail "-t fat32: a row is marked: $(cat f.txt)" || pass
grep -qF "No choice stores every file, so none is recommended. FAT32 leaves 3 files (15 GiB) out." f.txt && pass || fail "-t fat32: $(cat f.txt)"
# A volume too small: rows that do not fit say by how much and are never marked.
"$FSIMG" slack -t exfat -c 4K,32K --volume-size 8G cam > s.txt || fail "slack 8G"
grep -Eq '^ +exFAT .*short by ' s.txt && ! grep -Eq '^[*R=]+ +exFAT ' s.txt && pass || fail "short rows: $(cat s.txt)"
grep -qF "No choice stores every file and fits the volume" s.txt && pass || fail "8G: $(grep Recomm s.txt)"

# --for: only the filesystems every named device reads (docs/slack.md).
"$FSIMG" slack --for camera cam > c.txt || fail "--for camera: $(cat c.txt)"
grep -Eq '^[*R= ]+ +(NTFS|FAT32) ' c.txt && fail "--for camera shows NTFS or FAT32: $(cat c.txt)" || pass
grep -Eq '^\*?R +exFAT ' c.txt && grep -qF "(--for camera: exFAT, what these devices read.)" c.txt && pass \
  || fail "--for camera: $(grep -A1 Recomm c.txt)"
"$FSIMG" slack --json --for camera cam | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["rows"] and all(r["filesystem"] == "exfat" for r in j["rows"]), [r["filesystem"] for r in j["rows"]]
' && pass || fail "--for camera json"
# macOS and a TV: FAT32 and exFAT, never NTFS; with the 5 GiB videos exFAT is recommended.
"$FSIMG" slack --for macos,tv cam > m.txt || fail "--for macos,tv"
grep -Eq '^[*R= ]+ +NTFS ' m.txt && fail "--for macos,tv shows NTFS" || pass
grep -Eq '^[*R= ]+ +FAT32 ' m.txt && grep -Eq '^\*?R +exFAT ' m.txt && pass || fail "--for macos,tv: $(cat m.txt)"
# Without --for the recommendation says what it assumes.
grep -qF "(No --for: assumes the devices read every filesystem shown.)" t.txt && pass || fail "no assumption: $(grep Recomm t.txt)"
expect_fail 2 "--for phone: unknown device; known: camera, sdxc" "$FSIMG" slack --for phone cam
expect_fail 2 "no filesystem is read by every device named" "$FSIMG" slack --for sdhc,sdxc cam
expect_fail 2 "-t and --for leave no filesystem" "$FSIMG" slack -t ntfs --for uefi cam

# The image's own row: an exFAT image at 1 MiB clusters as SOURCE.
mkdir -p pics
sizes=(45 1000 4096 70000 131072 200001 333333 1048576 1048577 2500000)
for i in "${!sizes[@]}"; do head -c "${sizes[$i]}" /dev/zero > "pics/f$i.bin"; done
"$FSIMG" mkfs -q -t exfat -c 1M --from pics ex.img || fail "mkfs exfat 1M"
"$FSIMG" slack -t exfat ex.img > e.txt || fail "slack ex.img: $(cat e.txt)"
grep -Eq '^[*R]*= +exFAT +1 MiB ' e.txt && pass || fail "current row not marked: $(cat e.txt)"
[ "$(grep -c '^[*R]*=' e.txt)" = 1 ] && pass || fail "more than one = row"
# Independently: exFAT slack at C = sum of (ceil(s / C) * C - s) over the files.
"$FSIMG" slack --json -t exfat ex.img | python3 -c '
import json, sys
sizes = [int(s) for s in sys.argv[1].split()]
slack = lambda c: sum(-(-s // c) * c - s for s in sizes)
j = json.load(sys.stdin)
cur = j["current"]
assert cur["filesystem"] == "exfat" and cur["cluster_bytes"] == 1 << 20, cur
assert j["rows"][cur["row"]]["current"]
rec = j["rows"][j["recommendation"]["row"]]
freed = slack(1 << 20) - slack(rec["cluster_bytes"])
assert j["recommendation"]["freed_bytes"] == freed, (j["recommendation"], freed)
assert freed > 0, freed
print(rec["cluster_bytes"], freed)
' "${sizes[*]}" > freed.txt && pass || fail "freed bytes"
read -r rc freed < freed.txt
# The table says it in words: "reformatting as exFAT with C clusters frees F of slack".
want=$(python3 -c '
import sys
c, f = int(sys.argv[1]), int(sys.argv[2])
def fmt(b):
    names = ["B", "KiB", "MiB", "GiB"]
    u = 0
    while u + 1 < len(names) and b >= 1 << (10 * (u + 1)): u += 1
    if u == 0: return f"{b} B"
    w, r = divmod(b, 1 << (10 * u)); h = int(r * 100 / (1 << (10 * u)) + 0.5)
    if h >= 100: w, h = w + 1, h - 100
    return f"{w} {names[u]}" if h == 0 else (f"{w}.{h // 10} {names[u]}" if h % 10 == 0 else f"{w}.{h:02} {names[u]}")
print(f"reformatting as exFAT with {fmt(c)} clusters frees {fmt(f)} of slack")
' "$rc" "$freed")
grep -qF "$want" e.txt && pass || fail "recommendation lacks '$want': $(grep -A1 Recommendation e.txt)"
# A name the tree holds is printed escaped (as ls and fsck print names): a
# FAT-forbidden name holding a line feed and an ESC is one line, "\x0a" and
# "\x1b" spelt out, no raw control byte in the output.
mkdir -p esc
printf 'x' > "esc/bad$(printf '\n\033'):name"
"$FSIMG" slack esc > s.txt || fail "slack esc: $(cat s.txt)"
grep -qF '  /bad\x0a\x1b:name: ' s.txt && pass || fail "escaped name line missing: $(cat -A s.txt | grep -i bad)"
LC_ALL=C grep -q "$(printf '\033')" s.txt && fail "raw ESC in slack output" || pass
# Without --volume-size the recommendation says what it leaves out; with it, not. Counts of one
# are singular (a link skipped, a file in a size class).
mkdir -p one && printf 'abc' > one/a.txt && ln -s a.txt one/link
"$FSIMG" slack -t exfat one > o.txt 2>&1
grep -q "^Recommendation: .* Without --volume-size the volume's own overhead (FAT or bitmap, MFT) and a card's standard layout are not counted" o.txt &&
  grep -q "^exFAT: 1 symbolic link skipped$" o.txt && grep -Eq "^ +2 B \.\. < 4 B +1 file +3 B$" o.txt && pass ||
  fail "assumption or singular: $(cat o.txt)"
"$FSIMG" slack -t exfat --volume-size 64M one > v.txt 2>&1
grep -q "Without --volume-size" v.txt && fail "--volume-size given, still said missing: $(cat v.txt)" || pass
# The text fits the terminal (issue 42): at 80 columns (COLUMNS, as ls takes it) every line but the
# escaped names is at most 80 wide, the table shows the columns that decide, the prose wraps at
# spaces and keeps a size's unit with its number; --wide shows every column, --columns those named.
COLUMNS=80 "$FSIMG" slack -t fat32,exfat --volume-size 64G cam > w80.txt || fail "slack at 80 columns"
grep -Eq '^ +FAT32 .* 3 files not stored ' w80.txt && pass || fail "short +best cell: $(grep FAT32 w80.txt | head -2)"
long=$(awk 'length($0) > 80 && !/^  \//' w80.txt)  # a name line stays whole (a path to copy)
[ -z "$long" ] && pass || fail "lines over 80 columns: $long"
head -4 w80.txt | grep -Eq '^ +FS +cluster +slack% +total +\+best +overhead +fits$' && pass ||
  fail "default columns: $(sed -n 4p w80.txt)"
grep -Eq '(^| )[0-9.]+$' w80.txt && fail "a number ends a line, its unit on the next: $(grep -E '[0-9.]+$' w80.txt)" || pass
COLUMNS=60 "$FSIMG" slack -t fat32,exfat --volume-size 64G cam > w60.txt
awk '/^Recommendation:/,/^$/' w60.txt > rec60.txt
[ "$(wc -l < rec60.txt)" -ge 3 ] && [ -z "$(awk 'length($0) > 60' rec60.txt)" ] && pass ||
  fail "the recommendation at 60 columns: $(cat rec60.txt)"
COLUMNS=80 "$FSIMG" slack --wide --volume-size 64G cam > wide.txt
grep -Eq '^ +FS +cluster +data +slack +slack% +metadata +total +\+best +overhead +free +fits +unstorable$' wide.txt &&
  pass || fail "--wide header: $(sed -n 4p wide.txt)"
"$FSIMG" slack --columns total,fs,data cam > cols.txt
grep -Eq '^ +FS +data +total$' cols.txt && pass || fail "--columns header: $(sed -n 3p cols.txt)"
expect_fail 2 '--columns: no column "size" (columns: FS, cluster, data' "$FSIMG" slack --columns fs,size cam
expect_fail 2 "--wide and --columns shape the table" "$FSIMG" slack --json --wide cam
# Sparse files (cam's videos: truncate -s 5G) are stored sparse on NTFS, their holes in no cluster:
# slack counts only what clusters hold, so it never exceeds the data (it wrapped below zero before).
"$FSIMG" slack --json -t ntfs cam | python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
bad = [(r["cluster_bytes"], r["slack_bytes"], r["data_bytes"]) for r in rows if r["slack_bytes"] > r["data_bytes"]]
assert rows and not bad, bad' && pass || fail "NTFS slack of sparse files exceeds the data"
finish
