#!/usr/bin/env bash
# Corruption protocol: a clean fsimg mkfs -t exfat --from image damaged in one
# precise way (tests/tools/exfat_damage.py) makes fsimg fsck report exactly
# the intended finding code (errors and warnings; notes only when the note is
# the intended code) and exit 4 (0 for warnings), while the reference
# fsck.exfat -n (exfatprogs) agrees the image is damaged, where it can see
# the damage at all: "blind" rows are damage it does not check. (dir-too-deep
# is our walk limit, 256 levels, not damage by the specification: fsck.exfat
# walks the 258 levels and finds them clean.)
# cost: 18
here=$(dirname "$0"); . "$here/../lib.sh"
command -v fsck.exfat >/dev/null || { echo "fsck.exfat missing: skipped"; exit 77; }
damage="$here/../tools/exfat_damage.py"
src="$WORK/src"; mkdir -p "$src/DIR/SUB"
head -c 20000 /dev/urandom >"$src/A.TXT"; head -c 12000 /dev/urandom >"$src/B.TXT"
: >"$src/E.TXT"; head -c 100 /dev/urandom >"$src/DIR/C.TXT"
base() {  # base NAME MKFS_ARGS...
  local img="$WORK/$1.base"; shift
  "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD "$@" --from "$src" "$img" &&
    fsck.exfat -n "$img" >/dev/null && "$FSIMG" fsck -n "$img" >/dev/null || { fail "base image $img"; return 1; }
}
base c4k -s 8M -c 4K && base c512 -s 4M -c 512 && base s4096 -s 16M -c 4K --sector-size 4096 || { finish; exit; }
all=c4k,c512,s4096
# kind                         expected code                          bases    fsck.exfat
rows="
boot-checksum                  exfat.boot.checksum                    $all     sees
boot-main-zeroed               exfat.boot.main-zeroed                 $all     sees
set-timestamp                  exfat.set.timestamp                    $all     blind
boot-backup-checksum           exfat.boot.backup-checksum             $all     blind
boot-backup-differs            exfat.boot.backup-differs              $all     blind
boot-extended-signature        exfat.boot.extended-signature          $all     blind
boot-dirty                     exfat.boot.dirty                       $all     blind
boot-media-failure             exfat.boot.media-failure               $all     blind
boot-truncated                 exfat.boot.image-truncated             $all     sees
boot-jump-boot                 exfat.boot.jump_boot                   $all     blind
boot-must-be-zero              exfat.boot.must_be_zero                $all     blind
boot-signature                 exfat.boot.signature                   $all     blind
boot-revision                  exfat.boot.revision                    $all     sees
boot-bytes-per-sector-shift    exfat.boot.bytes_per_sector_shift      c4k,c512 sees
boot-sectors-per-cluster-shift exfat.boot.sectors_per_cluster_shift   $all     sees
boot-number-of-fats            exfat.boot.number_of_fats              $all     sees
boot-percent-in-use-range      exfat.boot.percent_in_use              $all     blind
boot-fat-offset                exfat.boot.fat_offset                  $all     sees
boot-fat-length                exfat.boot.fat_length                  $all     blind
boot-cluster-count             exfat.boot.cluster_count               $all     blind
boot-root-cluster              exfat.boot.root_cluster                $all     sees
boot-volume-flags              exfat.boot.volume_flags                $all     blind
fat-media                      exfat.fat.media                        $all     blind
bitmap-lost                    exfat.bitmap.lost                      $all     blind
bitmap-free-in-use             exfat.bitmap.free-in-use               $all     sees
bitmap-free-all                exfat.bitmap.free-in-use               $all     sees
bitmap-missing                 exfat.bitmap.missing                   $all     sees
bitmap-length                  exfat.bitmap.length                    c4k      sees
bitmap-percent-in-use          exfat.bitmap.percent-in-use            $all     blind
upcase-checksum                exfat.upcase.checksum                  $all     sees
set-checksum                   exfat.set.checksum                     $all     sees
set-name-hash                  exfat.set.name-hash                    $all     sees
set-secondary-count            exfat.set.secondary-count              $all     sees
set-no-stream                  exfat.set.no-stream                    $all     sees
set-name-length                exfat.set.name-length                  $all     sees
set-orphan-secondary           exfat.set.orphan-secondary             $all     blind
set-unknown-critical           exfat.set.unknown-critical             $all     blind
name-invalid                   exfat.name.invalid                     $all     blind
name-duplicate                 exfat.name.duplicate                   $all     blind
stream-valid-length            exfat.stream.valid-length              $all     sees
stream-first-cluster           exfat.stream.first-cluster             $all     sees
set-unknown-critical-secondary exfat.set.unknown-critical             $all     sees
chain-loop                     exfat.chain.loop                       $all     sees
chain-out-of-range             exfat.chain.out-of-range               $all     sees
chain-bad-cluster              exfat.chain.bad-cluster                $all     sees
chain-cross-link               exfat.chain.cross-link                 $all     sees
chain-too-short                exfat.chain.too-short                  $all     sees
chain-too-long                 exfat.chain.too-long                   $all     sees
dir-loop                       exfat.dir.loop                         $all     sees
dir-entry-after-end            exfat.dir.entry-after-end              $all     blind
dir-system-entry               exfat.dir.system-entry                 $all     blind
label-invalid                  exfat.label.invalid                    $all     blind
boot-file-system-name          exfat.boot.file_system_name            $all     sees
upcase-invalid                 exfat.upcase.invalid                   $all     sees
dir-too-large                  exfat.dir.too-large                    $all     sees
dir-too-deep                   exfat.dir.too-deep                     $all     blind
"
# Damage whose consequence is a finding of its own, listed with '+': a
# NoFatChain run grown past the heap is not claimed, so its clusters are lost;
# so are the up-case table's without its entry; a VolumeLength below 1 MiB
# no longer holds the cluster heap; a directory's clusters can be unreadable
# only past the end of the image, which is cut short.
rows="$rows
stream-outside-heap            exfat.bitmap.lost+exfat.stream.outside-heap $all sees
stream-first-cluster-range     exfat.bitmap.lost+exfat.stream.first-cluster $all sees
upcase-missing                 exfat.bitmap.lost+exfat.upcase.missing $all sees
boot-volume-length             exfat.boot.cluster_count+exfat.boot.volume_length $all blind
dir-unreadable                 exfat.boot.image-truncated+exfat.dir.unreadable $all sees
"
# Every exfat.* code of the registry (fsck --list-codes) has a row.
listed=" $(echo "$rows" | tr '+' ' ' | tr -s ' \n' '  ') "
# Codes about the partition holding the volume need a partition table: cli.partitions_fit damages those.
listed="$listed exfat.boot.partition-offset "
for c in $("$FSIMG" fsck --list-codes | cut -f1 | grep '^exfat\.'); do
  case "$listed" in *" $c "*) pass ;; *) fail "no damage kind for $c" ;; esac
done
want_rc_of() {
  case "$1" in
    exfat.boot.media-failure | exfat.bitmap.percent-in-use | exfat.set.timestamp) echo 0 ;;
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
      out=$(fsck.exfat -n "$img" 2>&1); frc=$?
      if [ $frc != 0 ]; then pass
      else fail "$b $kind: fsck.exfat -n says clean:"; echo "$out" | sed 's/^/    /' | head -5; fi
    fi
    rm -f "$img"
  done
done <<<"$rows"
echo "$(echo "$rows" | grep -c .) damage kinds"
finish
