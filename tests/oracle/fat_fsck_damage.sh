#!/usr/bin/env bash
# Corruption protocol: a clean mkfs.fat + mcopy image damaged in one precise
# way (tests/tools/fat_damage.py) makes fsimg fsck report exactly the intended
# finding code (errors and warnings; notes aside) and exit 4 (0 for warnings),
# while the reference fsck.fat -n agrees the image is damaged (where it can
# see the damage at all: "blind" rows are damage fsck.fat does not check).
here=$(dirname "$0"); . "$here/../lib.sh"
command -v mkfs.fat >/dev/null && command -v mcopy >/dev/null || { echo "mkfs.fat/mtools missing: skipped"; exit 77; }
export MTOOLS_SKIP_CHECK=1
damage="$here/../tools/fat_damage.py"
src="$WORK/src"; mkdir -p "$src/DIR"
head -c 5000 /dev/urandom >"$src/A.TXT"; head -c 3000 /dev/urandom >"$src/B.TXT"
head -c 100 /dev/urandom >"$src/DIR/C.TXT"; echo "long" >"$src/Long name file.txt"
base() {  # base NAME SIZE_MIB MKFS_ARGS...
  local img="$WORK/$1.base"; local size=$2; shift 2
  truncate -s "${size}M" "$img"
  mkfs.fat -i 1234ABCD -n TESTLBL "$@" "$img" >/dev/null &&
    mcopy -i "$img" "$src/A.TXT" "$src/B.TXT" "$src/DIR" "$src/Long name file.txt" ::/ &&
    fsck.fat -n "$img" >/dev/null || { fail "base image $img"; return 1; }
}
base fat12 4 -F 12 -s 2 && base fat16 32 -F 16 -s 2 && base fat32 300 -F 32 -s 1 || { finish; exit; }
codes_of() { python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join(sorted({f["code"] for f in j["findings"] if f["severity"] != "info"})))'; }
# kind               expected code                 bases              fsck.fat
rows="
boot-signature       fat.boot.signature            fat12,fat16        blind
boot-geometry        fat.boot.geometry             fat16,fat32        sees
boot-media           fat.boot.media                fat16              blind
boot-dirty           fat.boot.dirty                fat16,fat32        sees
boot-truncated       fat.boot.image-truncated      fat16,fat32        sees
boot-backup-differs  fat.boot.backup-differs       fat32              sees
fsinfo-signature     fat.fsinfo.signature          fat32              blind
fsinfo-free-count    fat.fsinfo.free-count         fat32              sees
fat-copies-differ    fat.fat.copies-differ         fat12,fat16,fat32  sees
fat-media            fat.fat.media                 fat12,fat16,fat32  sees
fat-dirty            fat.fat.dirty                 fat16,fat32        sees
chain-free-link      fat.chain.free-link           fat12,fat16,fat32  sees
chain-out-of-range   fat.chain.out-of-range        fat12,fat16,fat32  sees
chain-loop           fat.chain.loop                fat12,fat16,fat32  sees
chain-cross-link     fat.chain.cross-link          fat12,fat16,fat32  sees
chain-lost           fat.chain.lost                fat12,fat16,fat32  sees
chain-too-short      fat.chain.too-short           fat12,fat16,fat32  sees
chain-too-long       fat.chain.too-long            fat12,fat16,fat32  sees
chain-bad-cluster    fat.chain.bad-cluster         fat16,fat32        sees
file-start-free      fat.file.start-free           fat12,fat16,fat32  sees
file-start-out-of-range fat.file.start-out-of-range fat16,fat32       sees
dir-dot              fat.dir.dot                   fat16,fat32        sees
dir-dotdot           fat.dir.dotdot                fat16,fat32        sees
dir-loop             fat.dir.loop                  fat16,fat32        sees
dir-nonzero-size     fat.dir.nonzero-size          fat16,fat32        sees
dir-bad-attr         fat.dir.bad-attr              fat16,fat32        sees
dir-no-cluster       fat.dir.no-cluster            fat16,fat32        sees
name-invalid-short   fat.name.invalid-short        fat16,fat32        sees
name-invalid-long    fat.name.invalid-long         fat16,fat32        blind
name-duplicate       fat.name.duplicate            fat16,fat32        sees
lfn-checksum         fat.lfn.checksum              fat16,fat32        sees
lfn-orphan           fat.lfn.orphan                fat16,fat32        sees
lfn-sequence         fat.lfn.sequence              fat16,fat32        sees
label-mismatch       fat.label.mismatch            fat12,fat16        sees
label-invalid        fat.label.invalid             fat16,fat32        sees
"
while read -r kind code bases ref; do
  [ -n "$kind" ] || continue
  for b in ${bases//,/ }; do
    img="$WORK/$b-$kind.img"; cp --sparse=always "$WORK/$b.base" "$img"
    if ! what=$(python3 "$damage" "$img" "$kind" 2>&1); then fail "$b $kind: damage: $what"; continue; fi
    json=$("$FSIMG" fsck -n --json "$img" 2>"$WORK/err"); rc=$?
    got=$(echo "$json" | codes_of 2>/dev/null)
    want_rc=4; case "$code" in fat.fsinfo.free-count) want_rc=0 ;; esac
    if [ "$got" = "$code" ] && [ $rc = $want_rc ]; then pass
    else fail "$b $kind ($what): expected $code (exit $want_rc), got '$got' (exit $rc) $(head -c 300 "$WORK/err")"; fi
    if [ "$ref" = sees ]; then
      # fsck.fat -n exits 0 on some problems it will not fix ("Not
      # auto-correcting"): anything besides its version and summary lines counts.
      out=$(fsck.fat -n "$img" 2>&1); frc=$?
      if [ $frc != 0 ] || [ "$(echo "$out" | wc -l)" -gt 2 ]; then pass
      else fail "$b $kind: fsck.fat -n says clean:"; echo "$out" | sed 's/^/    /' | head -5; fi
    fi
    rm -f "$img"
  done
done <<<"$rows"
finish
