#!/usr/bin/env bash
# fsck repairs damaged MFT record headers and records that cannot be read
# (issue 23), each damage made on /A.TXT's record by tests/tools/ntfs_damage.py:
# - a header field with one right value keeps the file whole: bytes allocated
#   and the record number (-p too), a sequence number 0, flags outside 0x000F,
#   a base reference on a record holding $STANDARD_INFORMATION, a missing
#   $STANDARD_INFORMATION (made from the $FILE_NAME), bytes in use past the
#   record (set where the attributes end): A.TXT reads back whole through
#   fsimg and ntfs-3g; a file without an unnamed $DATA (which ntfs-3g cannot
#   open) gets an empty one;
# - an attribute that does not decode is left out (chkdsk: "deleting corrupt
#   attribute record"): the file stays, without its $DATA;
# - a record whose header, update sequence array or fixups cannot be read is
#   freed (chkdsk: "deleting corrupt file record segment"): A.TXT is gone,
#   its index entry and clusters with it.
# Each time -p leaves what only -y repairs (exit 4, nothing written), -y
# exits 1 with the report line, leaves nothing, ntfsfix -n and check-image
# agree, B.TXT is untouched, and a second -y writes nothing. A repair cut
# after any write leaves B.TXT readable and is finished by -y. Then the
# ntfsprogs-plus images with damaged record and attribute headers
# (../shared/corpus) come out with no error left.
# cost: 40
here=$(cd "$(dirname "$0")" && pwd); . "$here/../lib.sh"
need_oracles
for t in ntfsfix ntfscat; do command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }; done
export SOURCE_DATE_EPOCH=1700000000
damage="$here/../tools/ntfs_damage.py"
cd "$WORK"
mkdir -p src/DIR
head -c 20000 /dev/urandom > src/A.TXT; head -c 12000 /dev/urandom > src/B.TXT
head -c 100 /dev/urandom > src/DIR/C.TXT; : > src/E.TXT
"$FSIMG" mkfs -q -t ntfs -s 4M --from src base.img || { fail "mkfs"; finish; exit; }

# repaired KIND LEVEL CODE REPORT A: damage KIND, repair at LEVEL (p or y), expect CODE among the
# findings before and the line "repaired CODE: REPORT" after; A says what becomes of A.TXT: whole,
# empty (no $DATA: fsimg cat gives nothing) or gone.
repaired() {
  local kind=$1 level=$2 code=$3 report=$4 a=$5 rc
  cp base.img r.img
  python3 "$damage" r.img $kind > /dev/null || { fail "$kind: damage"; return; }
  [[ " $(fsck_codes r.img) " == *" $code "* ]] && pass || fail "$kind: fsck finds $(fsck_codes r.img)"
  cp r.img damaged.img
  if [ $level = y ]; then
    "$FSIMG" fsck -p r.img > rep.out 2>&1; rc=$?
    [ $rc = 4 ] && cmp -s r.img damaged.img && pass || fail "$kind: -p exit $rc, or it wrote: $(cat rep.out)"
  fi
  "$FSIMG" fsck -$level r.img > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && grep -qF "repaired $code: $report" rep.out && pass || fail "$kind: -$level exit $rc: $(cat rep.out)"
  [ -z "$(fsck_codes r.img)" ] && pass || fail "$kind: -$level left $(fsck_codes r.img)"
  ntfsfix -n r.img > fix.out 2>&1 && pass || fail "$kind: ntfsfix -n: $(cat fix.out)"
  ntfscat r.img B.TXT | cmp -s - src/B.TXT && "$FSIMG" cat r.img /DIR/C.TXT | cmp -s - src/DIR/C.TXT && pass ||
    fail "$kind: B.TXT or DIR/C.TXT changed"
  case $a in
    whole) ntfscat r.img A.TXT | cmp -s - src/A.TXT && "$FSIMG" cat r.img /A.TXT | cmp -s - src/A.TXT && pass ||
             fail "$kind: A.TXT does not read back whole" ;;
    empty) [ "$("$FSIMG" cat r.img /A.TXT 2>/dev/null | wc -c)" = 0 ] && "$FSIMG" ls r.img / | grep -qx 'A.TXT' && pass ||
             fail "$kind: A.TXT is not there and empty: $("$FSIMG" ls r.img /)" ;;
    e-empty) ntfscat r.img E.TXT > e.out && [ ! -s e.out ] && ntfscat r.img A.TXT | cmp -s - src/A.TXT && pass ||
               fail "$kind: ntfs-3g does not open E.TXT (empty) or read A.TXT" ;;
    gone) ! "$FSIMG" ls r.img / | grep -q 'A.TXT' && ! ntfscat r.img A.TXT > /dev/null 2>&1 && pass ||
            fail "$kind: A.TXT is still listed" ;;
  esac
  check r.img
  second_y r.img $kind
}

repaired rec-bytes-allocated p ntfs.record.bytes-allocated "1 record given bytes allocated 1024, the boot sector's record size" whole
repaired rec-number p ntfs.record.number "1 record given the header record number of their place in \$MFT" whole
repaired rec-sequence y ntfs.record.sequence "1 record given sequence number 1 (sequence numbers start at 1)" whole
repaired rec-flags y ntfs.record.flags "1 record given the flags of what it holds (bits outside 0x000F cleared)" whole
repaired rec-base y ntfs.record.base "1 record given base reference 0: a system file, or a record holding" whole
repaired attr-missing-std-info y ntfs.attr.missing-std-info "1 record given a \$STANDARD_INFORMATION with the times and attributes of a \$FILE_NAME" whole
repaired attr-missing-data y ntfs.attr.missing-data "1 record given an empty unnamed \$DATA (as chkdsk inserts one)" e-empty
repaired rec-bytes-in-use y ntfs.record.bytes-in-use "1 record given the bytes in use where its attributes end" whole
for kind in attr-header run-decode; do
  repaired $kind y ntfs.${kind/-/.} "1 record rewritten without the 1 attribute that did not decode (as chkdsk deletes a corrupt attribute record); what it held is not kept" empty
done
for kind in rec-baad rec-signature rec-fixup rec-usa rec-first-attribute; do
  code=ntfs.record.${kind#rec-}
  repaired $kind y $code "1 record whose header or update sequence array cannot be read marked not in use (as chkdsk deletes a corrupt file record segment); what it held is not kept" gone
done

# The missing $STANDARD_INFORMATION comes from the $FILE_NAME: its times, its attributes.
cp base.img s.img && python3 "$damage" s.img attr-missing-std-info > /dev/null && "$FSIMG" fsck -y s.img > /dev/null 2>&1
ntfsinfo -F /A.TXT s.img > info.out 2>&1
grep -q 'File Altered Time:.*Nov 14 22:13:20 2023' info.out && grep -q 'File attributes:.*ARCHIVE (0x00000020)' info.out && pass ||
  fail "attr-missing-std-info: ntfsinfo reads: $(grep -E 'Altered|File attributes' info.out | tr '\n' ' ')"

# Cut after every write: B.TXT stays readable, -y then finishes.
for kind in rec-baad attr-header rec-base; do
  cp base.img c.img && python3 "$damage" c.img $kind > /dev/null
  repair_cuts c.img "$kind cut" /B.TXT:src/B.TXT /DIR/C.TXT:src/DIR/C.TXT
done

# ntfsprogs-plus' images: damaged record header fields (eleven records), attribute headers, an
# attribute's value offset, $MFT's own base reference.
for c in ntfsimg-manual-mft_record_bad_fields ntfsimg-manual-mft_attr_bad_fields \
         ntfsimg-use-attr_value_offset_corrupted ntfsimg-manual-mft_file_bad_base_mft_record; do
  [ -d "$SHARED/corpus/ntfs/$c" ] || { fail "$c: not in the corpus"; continue; }
  "$SHARED/corpus/run" --decode ntfs/$c k.img > /dev/null || { fail "$c: decode"; continue; }
  "$FSIMG" fsck -y k.img > rep.out 2>&1; rc=$?
  [ $rc = 1 ] && [ -z "$(fsck_codes k.img)" ] && pass || fail "$c: -y exit $rc, left $(fsck_codes k.img)"
  ntfsfix -n k.img > fix.out 2>&1 && pass || fail "$c: ntfsfix -n: $(cat fix.out)"
  second_y k.img $c
  rm -f k.img
done
finish
