#!/usr/bin/env bash
# fsimg dump of NTFS images agrees with ntfs-3g's ntfsinfo and The Sleuth
# Kit's istat, on images made by mkntfs and by fsimg mkfs, fresh and after
# ntfs-3g wrote files into them (grown $MFT, index allocations, non-resident
# and sparse data):
#  - `dump --json`: sector/cluster/record/index sizes, cluster count, $MFT
#    and $MFTMirr LCNs, label, version and flags as `ntfsinfo -m` shows them;
#  - `dump --what mft N --json`, every record in use: the header (update
#    sequence array, sequence number, links, flags, sizes, next instance) and
#    every attribute in order (type, length, residency, name, flags,
#    instance, value size and offset / VCNs, runlist offset, sizes, the
#    runlist row by row with holes) as `ntfsinfo -v -i N` prints them, the
#    decoded $FILE_NAME, $STANDARD_INFORMATION, $VOLUME_NAME,
#    $VOLUME_INFORMATION and $INDEX_ROOT fields; and the attribute list and
#    every cluster of every non-sparse non-resident attribute as `istat`
#    lists them; the $I30 entries dump decodes from index roots and INDX
#    blocks are the names ntfsls lists.
# cost: 40
here=$(dirname "$0"); . "$here/../lib.sh"
for t in ntfsinfo istat mkntfs python3; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
cat >compare.py <<'EOF'
import json, re, subprocess, sys

fsimg, img = sys.argv[1], sys.argv[2]
records = [int(x) for x in sys.argv[3:]]
bad = []

def run(*argv):
    p = subprocess.run(argv, capture_output=True, text=True, errors="replace")
    return p.returncode, p.stdout

def num(text):
    text = text.strip().split()[0]
    return int(text, 16) if text.lower().startswith("0x") else int(text)

# ---- the volume
rc, out = run(fsimg, "dump", "--json", img)
vol = json.loads(out)
rc, mi = run("ntfsinfo", "-m", img)
def m(key):
    mm = re.search(r"^\s*" + re.escape(key) + r":[ \t]*(.*)$", mi, re.M)
    return mm.group(1).strip() if mm else None
g = vol["geometry"]
for key, ours in [("Sector Size", g["bytes_per_sector"]), ("Cluster Size", g["cluster_bytes"]),
                  ("Index Block Size", g["index_block_bytes"]), ("MFT Record Size", g["mft_record_bytes"]),
                  ("Volume Size in Clusters", g["cluster_count"]),
                  ("LCN of Data Attribute for FILE_MFT", vol["boot_sector"]["MftLcn"]),
                  ("LCN of Data Attribute for File_MFTMirr", vol["boot_sector"]["MftMirrLcn"]),
                  ("Volume Version", vol["volume"]["version"]),
                  ("Volume Flags", "0x%04x" % vol["volume"]["flags"]),
                  ("Volume Name", vol["volume"]["label"])]:
    if str(m(key)) != str(ours):
        bad.append(f"volume {key}: ntfsinfo {m(key)!r}, fsimg {ours!r}")
if vol["problems"] or vol["errors"] or vol["backup_boot_sector_identical"] is not True:
    bad.append(f"volume: problems {vol['problems']} errors {vol['errors']}")

# ---- records
flag_bits = {"IN_USE": 1, "DIRECTORY": 2, "IS_4": 4, "VIEW_INDEX": 8}
checked = 0
for n in records:
    rc, ni = run("ntfsinfo", "-v", "-i", str(n), img)
    if rc != 0 or "Dumping Inode" not in ni:
        continue  # ntfsinfo opens records in use only
    rc, out = run(fsimg, "dump", "--json", "--what", "mft", str(n), img)
    if rc != 0:
        bad.append(f"record {n}: fsimg dump failed")
        continue
    j = json.loads(out)
    checked += 1
    head, *blocks = re.split(r"^Dumping attribute ", ni, flags=re.M)
    def field(text, key):
        # "Key:" or "Key<TAB>" ("Lowest VCN" has no colon); "Filename" must not match "Filename Length:".
        mm = re.search(r"^\s*" + re.escape(key) + r"(?::|\t)\s*(.*)$", text, re.M)
        return mm.group(1).strip() if mm else None
    h = j["header"]
    for key, ours in [("Upd. Seq. Array Off.", h["usa_offset"]), ("Upd. Seq. Array Count", h["usa_count"]),
                      ("Upd. Seq. Number", h["update_sequence_number"]), ("LogFile Seq. Number", h["lsn"]),
                      ("MFT Record Seq. Numb.", h["sequence"]), ("Number of Hard Links", h["link_count"]),
                      ("Attribute Offset", h["first_attribute"]), ("Bytes Used", h["bytes_in_use"]),
                      ("Bytes Allocated", h["bytes_allocated"]), ("Next Attribute Instance", h["next_instance"])]:
        v = field(head, key)
        if v is None or num(v) != ours:
            bad.append(f"record {n} {key}: ntfsinfo {v!r}, fsimg {ours}")
    flags = sum(flag_bits.get(w, 0) for w in (field(head, "MFT Record Flags") or "").split())
    if flags != h["flags"]:
        bad.append(f"record {n} flags: ntfsinfo {flags:#x}, fsimg {h['flags']:#x}")
    attrs = j["attributes"]
    # ntfsinfo skips $ATTRIBUTE_LIST's extents in other records; the base record's own attributes match in order.
    if len(blocks) != len(attrs):
        bad.append(f"record {n}: ntfsinfo shows {len(blocks)} attributes, fsimg {len(attrs)}")
        continue
    for b, a in zip(blocks, attrs):
        where = f"record {n} attribute {a['type_name']}:{a['name']}"
        t = re.match(r"\S+ \((0x[0-9a-f]+)\)", b)
        if not t or int(t.group(1), 16) != a["type"]:
            bad.append(f"{where}: type {t.group(1) if t else None}")
            continue
        name = field(b, "Attribute name")
        checks = [("Attribute length", a["length"]), ("Attribute flags", a["flags"]),
                  ("Attribute instance", a["instance"])]
        if (name or "").strip("'") != a["name"]:
            bad.append(f"{where}: name {name!r}")
        if (field(b, "Resident") == "No") != a["non_resident"]:
            bad.append(f"{where}: residency")
            continue
        if a["non_resident"]:
            checks += [("Lowest VCN", a["first_vcn"]), ("Mapping pairs offset", a["runlist_offset"]),
                       ("Compression unit", a["compression_unit"]), ("Data size", a["data_size"]),
                       ("Allocated size", a["allocated_size"]), ("Initialized size", a["initialized_size"])]
            hv = field(b, "Highest VCN")
            if hv is None or num(hv) != (a["last_vcn"] if a["last_vcn"] < 2**63 else a["last_vcn"] - 2**64):
                bad.append(f"{where}: Highest VCN ntfsinfo {hv!r}, fsimg {a['last_vcn']}")
            rows = re.findall(r"^\t\t\t(0x[0-9a-f]+)\t\t(<HOLE>|0x[0-9a-f]+)\t\t(0x[0-9a-f]+)$", b, re.M)
            theirs = [(int(v, 16), None if l == "<HOLE>" else int(l, 16), int(c, 16)) for v, l, c in rows]
            ours = [(r["vcn"], r["lcn"], r["length"]) for r in a["runs"]]
            if theirs != ours:
                bad.append(f"{where}: runlist ntfsinfo {theirs[:6]}, fsimg {ours[:6]}")
        else:
            checks += [("Data size", a["value_length"]), ("Data offset", a["value_offset"]),
                       ("Resident flags", int(a["indexed"]))]
        for key, ours in checks:
            v = field(b, key)
            if v is None or num(v) != ours:
                bad.append(f"{where} {key}: ntfsinfo {v!r}, fsimg {ours}")
        d = a["decoded"]
        if "error" in d:
            bad.append(f"{where}: fsimg could not decode: {d['error']}")
            continue
        more = []
        if a["type"] == 0x30:
            more = [("Parent directory", d["parent"]["record"]), ("Filename", "'" + d["name"] + "'"),
                    ("Namespace", d["namespace"]), ("Allocated Size", d["allocated_size"]),
                    ("Data Size", d["data_size"])]
            ours_attr = d["file_attributes"]
        elif a["type"] == 0x10:
            if "security_id" in d:
                more = [("Security ID", d["security_id"]), ("User ID", d["owner_id"])]
            ours_attr = d["file_attributes"]
        elif a["type"] == 0x60:
            more = [("Volume Name", d["label"] if d["label"] else "unnamed")]
        elif a["type"] == 0x70:
            more = [("Volume Version", d["version"])]
            vf = field(b, "Volume Flags") or ""
            if not vf.endswith("(0x%04x)" % d["flags"]):
                bad.append(f"{where}: Volume Flags {vf!r}, fsimg {d['flags']:#06x}")
        elif a["type"] == 0x90:
            node = d["node"]
            more = [("Collation Rule", d["collation_rule"]), ("Index Block Size", d["index_block_bytes"]),
                    ("Clusters Per Block" if d["index_block_bytes"] >= g["cluster_bytes"] else "512-byte Units Per Block",
                     d["clusters_per_block"]), ("Entries Offset", node["entries_offset"]),
                    ("Index Size", node["index_length"]), ("Allocated Size", node["allocated_length"]),
                    ("Index header flags", node["flags"]),
                    ("Index entries total", len(d["entries"]))]  # ntfsinfo counts the last entry too
        for key, ours in more:
            v = field(b, key)
            if v is None:
                bad.append(f"{where} {key}: ntfsinfo prints nothing, fsimg {ours!r}")
            elif isinstance(ours, int) and num(v) != ours:
                bad.append(f"{where} {key}: ntfsinfo {v!r}, fsimg {ours}")
            elif isinstance(ours, str) and v.strip("'").replace(" ", "") != ours.strip("'").replace(" ", ""):
                bad.append(f"{where} {key}: ntfsinfo {v!r}, fsimg {ours!r}")
        if a["type"] in (0x10, 0x30):
            fa = field(b, "File attributes") or ""
            if not fa.endswith("(0x%08x)" % ours_attr):
                bad.append(f"{where}: File attributes {fa!r}, fsimg {ours_attr:#010x}")

    # istat: the attribute list and every cluster of non-sparse streams.
    rc, st = run("istat", img, str(n))
    listed = re.findall(r"^Type: (\S+) \((\d+)-(\d+)\)\s+Name: (.*?)\s+(Resident|Non-Resident)(?:, \w+)*\s+size: (\d+)"
                        r"(?:\s+init_size: (\d+))?\n((?:[\d ]+\n)*)", st, re.M)
    if len(listed) != len(attrs):
        bad.append(f"record {n}: istat lists {len(listed)} attributes, fsimg {len(attrs)}")
        continue
    for (tname, tcode, inst, name, res, size, init, clusters), a in zip(listed, attrs):
        where = f"record {n} attribute {a['type_name']}:{a['name']} (istat)"
        ours_size = a["data_size"] if a["non_resident"] else a["value_length"]
        if (int(tcode), int(inst), "" if name == "N/A" else name, res == "Non-Resident", int(size)) != \
                (a["type"], a["instance"], a["name"], a["non_resident"], ours_size):
            bad.append(f"{where}: {tname} {tcode}-{inst} {name} {res} {size}")
        if a["non_resident"]:
            if int(init or -1) != a["initialized_size"]:
                bad.append(f"{where}: init_size {init}, fsimg {a['initialized_size']}")
            if all(r["lcn"] is not None for r in a["runs"]):
                ours_cl = [r["lcn"] + i for r in a["runs"] for i in range(r["length"])]
                theirs_cl = [int(x) for x in clusters.split()]
                # istat lists the allocated clusters, as 0 past the data size (sleuthkit 4.11 still
                # names the cluster after a cluster-aligned data size, as $MFT's).
                used = -(-a["data_size"] // g["cluster_bytes"])
                tail_ok = all(t in (0, o) for t, o in zip(theirs_cl[used:], ours_cl[used:]))
                if len(theirs_cl) != len(ours_cl) or theirs_cl[:used] != ours_cl[:used] or not tail_ok:
                    at = next((i for i, (x, y) in enumerate(zip(theirs_cl, ours_cl)) if x != y), min(len(theirs_cl), len(ours_cl)))
                    bad.append(f"{where}: clusters differ at #{at} of {len(theirs_cl)}/{len(ours_cl)}: istat "
                               f"{theirs_cl[at:at+4]}, fsimg {ours_cl[at:at+4]}")

if checked == 0:
    bad.append("no record compared")
print(f"{img}: {checked} records compared")
if bad:
    print("\n".join(bad[:40]))
    sys.exit(1)
EOF
compare() {  # compare IMAGE RECORDS...
  if python3 compare.py "$FSIMG" "$@"; then pass; else fail "$1: dump differs from ntfsinfo/istat"; fi
}
sys_records=$(seq 0 26)

# Fresh volumes: mkntfs' and ours, several geometries.
truncate -s 100M ref.img && mkntfs -Q -F -q -L REF ref.img >/dev/null 2>&1 && compare ref.img $sys_records
truncate -s 64M ref512.img && mkntfs -Q -F -q -c 512 ref512.img >/dev/null 2>&1 && compare ref512.img $sys_records
"$FSIMG" mkfs -q -t ntfs -s 100M -L "Données" ours.img && compare ours.img $sys_records
"$FSIMG" mkfs -q -t ntfs -s 1M ours1m.img && compare ours1m.img $sys_records  # fragmented system files
"$FSIMG" mkfs -q -t ntfs -s 256M -c 64K --mft-record-size 4096 ours64k.img && compare ours64k.img $(seq 0 63)
"$FSIMG" mkfs -q -t ntfs -s 64M --sector-size 4096 ours4kn.img && compare ours4kn.img $sys_records
rm -f ref512.img ours1m.img ours64k.img ours4kn.img

index_names() {  # index_names IMAGE RECORD PATH: the names in the record's $I30 index root and INDX blocks
                # (as dump decodes them) are the names ntfsls lists in PATH
  local ours theirs
  ours=$("$FSIMG" dump --json --what mft "$2" "$1" | python3 -c '
import json, sys
names = set()
for a in json.load(sys.stdin)["attributes"]:
    d = a["decoded"]
    for e in d.get("entries", []) + [e for b in d.get("blocks", []) for e in b.get("entries", [])]:
        if "name" in e and e["name"] != ".":
            names.add(e["name"])
print("\n".join(sorted(names)))')
  theirs=$(ntfsls -a -s -p "$3" "$1" | grep -vx '\.\|\.\.' | LC_ALL=C sort -u)
  if [ -n "$ours" ] && [ "$(LC_ALL=C sort <<<"$ours")" = "$theirs" ]; then pass; else
    fail "$1 record $2: index entries differ from ntfsls $3: $(diff <(LC_ALL=C sort <<<"$ours") <(echo "$theirs") | head -5 | tr '\n' ' ')"; fi
}

# After ntfs-3g wrote into them: a grown $MFT, directories with index
# allocations, resident, non-resident, fragmented and sparse data.
mnt="$WORK/mnt"; mkdir -p "$mnt"
grow() {  # grow IMAGE
  ntfs-3g "$1" "$mnt" 2>"$WORK/err" || return 1
  mkdir -p "$mnt/dir"
  for i in $(seq 1 300); do printf 'file %d\n' "$i" >"$mnt/dir/file_$(printf %03d "$i").txt"; done
  head -c 3000000 /dev/urandom >"$mnt/big.bin"
  for i in 1 2 3 4 5 6; do head -c 40000 /dev/urandom >>"$mnt/frag.bin"; head -c 40000 /dev/urandom >>"$mnt/dir/file_00$i.txt"; done
  truncate -s 50M "$mnt/sparse.bin" && printf 'end' | dd of="$mnt/sparse.bin" bs=1 seek=30000000 conv=notrunc status=none
  umount "$mnt"
}
if [ -e /dev/fuse ] && command -v ntfs-3g >/dev/null; then
  for img in ref.img ours.img; do
    if grow "$img"; then
      # The system records, /dir and every fourth of its 300 small files (alike: one resident
      # $DATA each), then every record from the last of them on (big.bin, frag.bin, sparse.bin).
      compare "$img" $(seq 0 40) $(seq 60 4 359) $(seq 360 400)
      index_names "$img" 5 /
      index_names "$img" 64 /dir  # 300 files: several INDX blocks
    else
      fail "ntfs-3g cannot mount $img: $(cat "$WORK/err")"
    fi
  done
else
  echo "no FUSE here: the grown-volume comparison is skipped"
fi

# Damage is reported, not crashed on: a torn stride in record 5.
"$FSIMG" mkfs -q -t ntfs -s 64M d.img
off=$(( $("$FSIMG" dump --json --what mft 5 d.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["byte_offset"])') + 510 ))
printf '\x55\x55' | dd of=d.img bs=1 seek=$off conv=notrunc status=none
if out=$("$FSIMG" dump --what mft 5 d.img 2>&1); then fail "torn record 5 dumped without error"
elif grep -q "MFT record 5.*fixup mismatch: stride 0" <<<"$out"; then pass
else fail "torn record 5: $out"; fi
"$FSIMG" dump --what mft 4 d.img >/dev/null && pass || fail "record 4 next to a torn one"
finish
