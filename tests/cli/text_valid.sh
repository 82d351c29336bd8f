#!/usr/bin/env bash
# Everything printed is valid (issue 18): FAT labels and OEM names are OEM
# bytes (mlabel ::DONNÉES writes CP850 0x90 for É); dump and fsck decode them
# through code page 850, in text and JSON alike, instead of dying with
# "invalid UTF-8"; raw bytes that are not valid UTF-8 are escaped as \xNN.
# --codepage 437 decodes them as the Linux vfat driver does (0x9B: cent
# sign in 437, o with stroke in 850), in ls, dump and fsck.
here=$(dirname "$0"); . "$here/../lib.sh"
command -v mlabel >/dev/null || { echo "mtools missing: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
cd "$WORK"
"$FSIMG" mkfs -q -t fat32 -s 64M -c 512 l.img
LC_ALL=C.UTF-8 mlabel -i l.img ::DONNÉES || fail "mlabel"
od -An -tx1 -j71 -N7 l.img | grep -q "44 4f 4e 4e 90 45 53" && pass || fail "mlabel did not write CP850 0x90: $(od -An -tx1 -j71 -N7 l.img)"
# An OEM name with bytes above 0x7F.
printf 'M\x90\x80IN4.1' | dd of=l.img bs=1 seek=3 conv=notrunc status=none
"$FSIMG" dump --json l.img > d.json 2>err; rc=$?
[ $rc = 0 ] && pass || fail "dump --json: exit $rc $(cat err)"
python3 - <<'PY' && pass || fail "dump --json: $(head -c 400 d.json)"
import json, sys
d = json.load(open("d.json"))
text = json.dumps(d, ensure_ascii=False)
sys.exit(0 if "DONNÉES" in text and "MÉÇIN4.1" in text else 1)
PY
"$FSIMG" dump l.img > d.txt 2>err && grep -q "DONNÉES" d.txt && pass || fail "dump text: $(grep -i label d.txt)"
"$FSIMG" fsck --json l.img > f.json 2>err; rc=$?
[ $rc -lt 8 ] && python3 -c "import json; json.load(open('f.json'))" && pass || fail "fsck --json: exit $rc $(cat err)"
# A boot-sector label that disagrees with the root's: the finding names both, decoded.
printf 'CAF\x90       ' | dd of=l.img bs=1 seek=71 conv=notrunc status=none
"$FSIMG" fsck --json l.img > f2.json 2>err; rc=$?
[ $rc = 4 ] && pass || fail "fsck of the mismatched label: exit $rc $(cat err)"
python3 - <<'PY' && pass || fail "fsck --json of the mismatched label: $(head -c 600 f2.json)"
import json, sys
d = json.load(open("f2.json"))
msgs = [f["message"] for f in d.get("findings", [])]
sys.exit(0 if any("CAFÉ" in m and "DONNÉES" in m for m in msgs) else 1)
PY
# --codepage: a short name and a label with byte 0x9B (437: ¢, 850: ø).
mkdir -p cp && "$FSIMG" mkfs -q -t fat16 -s 16M -L "CP" cp.img || fail "mkfs fat16"
printf 'hi\n' > cp/hi && MTOOLS_NO_VFAT=1 mcopy -i cp.img cp/hi ::HI.TXT || fail "mcopy"
off=$(python3 - <<'PY'
import struct
b = open("cp.img", "rb").read(512)
bps, spc, res, nfats, roots, _, _, spf = struct.unpack_from("<HBHBHHBH", b, 11)
root = (res + nfats * spf) * bps
img = open("cp.img", "rb").read()
for i in range(roots):
    e = img[root + 32 * i: root + 32 * i + 32]
    if e[:11] == b"HI      TXT":
        print(root + 32 * i)
PY
)
[ -n "$off" ] && printf 'H\x9b' | dd of=cp.img bs=1 seek="$off" conv=notrunc status=none || fail "no HI.TXT entry"
[ "$("$FSIMG" ls cp.img)" = "Hø.TXT" ] && pass || fail "ls (850): $("$FSIMG" ls cp.img 2>&1)"
[ "$("$FSIMG" ls --codepage 437 cp.img)" = "H¢.TXT" ] && pass || fail "ls --codepage 437: $("$FSIMG" ls --codepage 437 cp.img 2>&1)"
[ "$("$FSIMG" cat --codepage 437 cp.img /H¢.TXT)" = hi ] && pass || fail "cat --codepage 437 by the decoded name"
printf 'C\x9b' | dd of=cp.img bs=1 seek=43 conv=notrunc status=none  # BS_VolLab (FAT16: offset 43)
"$FSIMG" dump --codepage 437 cp.img | grep -q 'C¢' && pass || fail "dump --codepage 437: $("$FSIMG" dump --codepage 437 cp.img | grep -i label)"
"$FSIMG" dump --json cp.img | grep -q 'Cø' && pass || fail "dump --json (850)"
expect_fail 2 "--codepage" "$FSIMG" ls --codepage 1252 cp.img
finish
