#!/usr/bin/env bash
# A damaged main boot region (sectors 0..11) with a whole backup (sectors
# 12..23): ls, cat, extract and dump read the volume through the backup and
# warn once on stderr; fsck reports the main region's damage and still checks
# the rest of the volume through the backup (a SetChecksum broken further in
# is found, the summary is complete). 512- and 4096-byte sectors, and a
# volume inside a GPT (IMAGE@1).
# cost: 22
here=$(dirname "$0"); . "$here/../lib.sh"
damage="$here/../tools/exfat_damage.py"
src="$WORK/src"; mkdir -p "$src/DIR/SUB"
head -c 20000 /dev/urandom >"$src/A.TXT"; head -c 12000 /dev/urandom >"$src/B.TXT"
: >"$src/E.TXT"; head -c 100 /dev/urandom >"$src/DIR/C.TXT"
warning="reading through the backup boot region"

# main_damage IMAGE OFFSET BPS KIND: damages the main region of the volume at byte OFFSET.
main_damage() {
  local img=$1 at=$2 bps=$3
  case $4 in
    signature) printf '\0\0' | dd of="$img" bs=1 seek=$((at + 510)) conv=notrunc status=none ;;
    zero-sector) dd if=/dev/zero of="$img" bs=1 seek="$at" count="$bps" conv=notrunc status=none ;;
    checksum) printf 'WXYZ' | dd of="$img" bs=1 seek=$((at + 11 * bps)) conv=notrunc status=none ;;
  esac
}
# Codes of the main region's damage, as fsck reports them.
want_codes() {
  case $1 in
    signature) echo "exfat.boot.checksum exfat.boot.signature" ;;
    zero-sector) echo "exfat.boot.main-zeroed" ;;  # the one root cause, none of its consequences
    checksum) echo "exfat.boot.checksum" ;;
  esac
}

# once CMD...: runs CMD with stdout in $WORK/out; the warning must be on stderr exactly once.
once() {
  "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
  local n; n=$(grep -c -- "$warning" "$WORK/err")
  if [ $rc = 0 ] && [ "$n" = 1 ]; then pass; else fail "$*: exit $rc, warning printed $n times: $(head -c 400 "$WORK/err")"; return 1; fi
}

variants="
c4k   0 512  -s 8M -c 4K
s4096 0 4096 -s 16M -c 4K --sector-size 4096
gpt   1 512  -s 16M -c 4K --partition-table gpt
"
while read -r name part bps args; do
  [ -n "$name" ] || continue
  clean="$WORK/$name.clean"
  # shellcheck disable=SC2086
  "$FSIMG" mkfs -q -t exfat -L TESTLBL --volume-id 1234ABCD $args --from "$src" "$clean" || { fail "mkfs $name"; continue; }
  spec=$clean; at=0
  if [ "$part" = 1 ]; then
    spec="$clean@1"
    at=$("$FSIMG" dump --json "$spec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["volume_offset"])')
  fi
  "$FSIMG" ls -R "$spec" >"$WORK/ls.clean" || fail "ls $name clean"
  for kind in signature zero-sector checksum; do
    img="$WORK/$name-$kind.img"; cp --sparse=always "$clean" "$img"
    main_damage "$img" "$at" "$bps" "$kind"
    s="$img"; [ "$part" = 1 ] && s="$img@1"
    what="$name $kind"
    # ls, cat, extract, dump: the files as they went in, one warning each.
    if once "$FSIMG" ls -R "$s"; then
      cmp -s "$WORK/out" "$WORK/ls.clean" && pass || fail "$what: ls -R differs from the clean image's"
    fi
    for f in A.TXT B.TXT E.TXT DIR/C.TXT; do
      if once "$FSIMG" cat "$s" "/$f"; then
        cmp -s "$WORK/out" "$src/$f" && pass || fail "$what: cat /$f differs from the source"
      fi
    done
    rm -rf "$WORK/x"; mkdir "$WORK/x"
    if once "$FSIMG" extract "$s" -C "$WORK/x"; then
      diff -r "$src" "$WORK/x" >/dev/null && pass || fail "$what: extract differs from the source"
    fi
    if once "$FSIMG" dump "$s"; then
      grep -q "in use            BACKUP" "$WORK/out" && grep -q "cluster heap" "$WORK/out" && pass ||
        fail "$what: dump does not say the backup is in use: $(head -c 400 "$WORK/out")"
    fi
    once "$FSIMG" dump --what bitmap "$s"
    "$FSIMG" dump --json "$s" 2>/dev/null | grep '"boot_region_in_use": "backup"' >/dev/null && pass ||
      fail "$what: dump --json lacks boot_region_in_use backup"
    # fsck: the main region's findings, and the rest checked through the
    # backup: on whole images, /A.TXT's SetChecksum is broken first.
    if [ "$part" = 0 ]; then
      cp --sparse=always "$clean" "$img"
      python3 "$damage" "$img" set-checksum >/dev/null || fail "$what: set-checksum damage"
      main_damage "$img" "$at" "$bps" "$kind"
    fi
    json=$("$FSIMG" fsck -n --json "$s" 2>"$WORK/err"); rc=$?
    got=$(echo "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
codes = sorted({f["code"] for f in j["findings"] if f["severity"] != "info"})
print(" ".join(codes), "|", j["summary"]["complete"], j["summary"]["files"], j["summary"]["directories"])')
    want="$(want_codes "$kind")"
    [ "$part" = 0 ] && want="$want exfat.set.checksum"
    ok=1
    for c in $want; do case " ${got%%|*} " in *" $c "*) ;; *) ok=0 ;; esac; done
    case "$got" in *"| True 4 3") ;; *) ok=0 ;; esac
    # A zeroed sector 0 is one finding (issue 21): exactly the codes wanted.
    if [ "$kind" = zero-sector ] && [ "$(echo ${got%%|*})" != "$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" ]; then ok=0; fi
    if [ $rc = 4 ] && [ $ok = 1 ]; then pass
    else fail "$what: fsck exit $rc, got '$got', expected the codes $want and a complete walk of 4 files, 3 directories"; fi
    # Nothing fatal: the check went on.
    echo "$json" | grep -q '"severity": "fatal"' && fail "$what: a fatal finding" || pass
    rm -f "$img"
  done
done <<<"$variants"
finish
