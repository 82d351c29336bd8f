#!/usr/bin/env bash
# Corruption protocol: a clean mkfs.fat + mcopy image damaged in one precise
# way (tests/tools/fat_damage.py) makes fsimg fsck report exactly the intended
# finding code (errors and warnings; notes only when the note is the intended
# code) and exit 4 (0 for warnings and notes; a FAT32 whose sector 0 is
# damaged is read through its backup boot sector: fat.boot.main-damaged),
# while the reference fsck.fat -n agrees the image is damaged (where it can
# see the damage at all: "blind" rows are damage fsck.fat does not check).
# cost: 20
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
# kind               expected code                 bases              fsck.fat
rows="
boot-signature       fat.boot.signature            fat12,fat16        blind
boot-geometry        fat.boot.geometry             fat16              sees
boot-geometry        fat.boot.main-damaged         fat32              sees
boot-media           fat.boot.media                fat16              blind
boot-dirty           fat.boot.dirty                fat16,fat32        sees
boot-truncated       fat.boot.image-truncated      fat16,fat32        sees
boot-backup-differs  fat.boot.backup-differs       fat32              sees
boot-backup-boot-code fat.boot.backup-boot-code    fat32              sees
fsinfo-signature     fat.fsinfo.signature          fat32              blind
fsinfo-free-count    fat.fsinfo.free-count         fat32              sees
fat-copies-differ    fat.fat.copies-differ         fat12,fat16,fat32  sees
fat-media            fat.fat.media                 fat12,fat16,fat32  sees
fat-dirty            fat.fat.dirty                 fat16,fat32        sees
dirty-both           fat.boot.dirty                fat16,fat32        sees
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
boot-backup-dirty-only fat.boot.backup-dirty-only  fat32              sees
boot-backup-missing  fat.boot.backup-missing       fat32              sees
boot-fat-too-small   fat.boot.fat-too-small        fat16,fat32        sees
boot-fs-version      fat.boot.fs-version           fat32              blind
boot-root-cluster    fat.boot.root-cluster         fat32              sees
boot-total-sectors   fat.boot.total-sectors        fat12              blind
boot-type-mismatch   fat.boot.type-mismatch        fat16              sees
dir-dot-in-root      fat.dir.dot-in-root           fat16,fat32        sees
dir-too-deep         fat.dir.too-deep              fat16,fat32        blind
dir-too-large        fat.dir.too-large             fat16,fat32        blind
fat-hard-error       fat.fat.hard-error            fat16,fat32        blind
fsinfo-location      fat.fsinfo.location           fat32              sees
fsinfo-none          fat.fsinfo.none               fat32              sees
fsinfo-next-free     fat.fsinfo.next-free          fat32              blind
label-duplicate      fat.label.duplicate           fat16,fat32        blind
label-outside-root   fat.label.outside-root        fat16,fat32        blind
"
# Damage whose consequences are findings of their own, listed with '+': the
# data region moves with BPB_RootEntCnt (as in the Linux driver and fsck.fat),
# and a directory past the end of the image cannot be read.
rows_consequences="
boot-root-entries    fat.boot.root-entries+fat.chain.lost+fat.fsinfo.free-count+fat.label.mismatch fat32 sees
dir-unreadable       fat.boot.image-truncated+fat.dir.unreadable fat16,fat32 sees
"
rows="$rows$rows_consequences"
# Exit 0 when every expected code is a warning or a note.
want_rc_of() {
  case "$1" in
    fat.fsinfo.free-count | fat.boot.backup-dirty-only | fat.boot.backup-missing | fat.fat.hard-error | \
      fat.fsinfo.next-free | fat.fsinfo.none | fat.label.mismatch | fat.boot.backup-boot-code) echo 0 ;;
    *) echo 4 ;;
  esac
}
damage_rows "$damage" "$rows"  # every damaged image first, by one process of the damage tool
while read -r kind code bases ref; do
  [ -n "$kind" ] || continue
  for b in ${bases//,/ }; do
    img="$WORK/$b-$kind.img"
    if ! damaged "$img"; then fail "$b $kind: damage: $WHAT"; rm -f "$img"; continue; fi
    what=$WHAT
    "$FSIMG" fsck -n "$img" > "$WORK/out" 2>"$WORK/err"; rc=$?; got=$(codes_of "$code" < "$WORK/out")
    want_rc=$(want_rc_of "$code")
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
