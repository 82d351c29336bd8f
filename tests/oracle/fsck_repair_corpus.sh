#!/usr/bin/env bash
# fsck -y on dosfstools' damaged test images (../shared/corpus), against the
# repaired images dosfstools keeps beside them (issue 23). Where fsimg
# repairs the damage: exit 1, our fsck -n and fsck.fat -n clean, a second -y
# changes nothing, and the result is byte for byte dosfstools' repaired image
# (FAT[0]'s media byte, the dirty flags) or holds the same files (chains cut
# or ended; where fsck.fat saved lost chains as FSCKnnnn.REC files, fsimg
# frees them, so only those are missing; invalid short names renamed
# FSCKnnnn.nnn as fsck.fat does; a short name two files share: the second
# gets a new alias from its long name, which it keeps; "." and ".." moved
# back to entries 0 and 1). exfatprogs' damaged images: clean after -y for
# fsimg and fsck.exfat, and every file fsck.exfat -y keeps kept.
# cost: 20
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
CORPUS=$SHARED/corpus
[ -x "$CORPUS/run" ] || { echo "corpus missing: skipped"; exit 77; }
cd "$WORK"
# case                  expected after -y
rows="
fat12_first_cluster     identical
fat16_dos_cln_shut      identical
fat32_first_cluster     identical
chain_to_free_cluster   same-files
chain_too_long          same-files
chain_to_other_file     same-files
bad_names               identical
dot_entries             same-files
"
while read -r c want; do
  [ -n "$c" ] || continue
  "$CORPUS/run" --decode "fat/dosfstools-$c-damaged" d.img > /dev/null 2>&1 &&
    "$CORPUS/run" --decode "fat/dosfstools-$c-repaired" r.img > /dev/null 2>&1 || { fail "$c: cannot decode"; continue; }
  "$FSIMG" fsck -y d.img > out 2>&1; rc=$?
  [ $rc = 1 ] && pass || fail "$c: -y exit $rc: $(cat out)"
  [ -z "$(fsck_codes d.img)" ] && pass || fail "$c: left $(fsck_codes d.img)"
  fsck.fat -n d.img > ref.out 2>&1 && pass || fail "$c: fsck.fat -n: $(cat ref.out)"
  sha=$(content_sum d.img)
  "$FSIMG" fsck -y d.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(content_sum d.img)" = "$sha" ] && pass || fail "$c: second -y: exit $rc or changed"
  if [ "$want" = identical ]; then
    cmp -s d.img r.img && pass || fail "$c: differs from dosfstools' repaired image: $(cmp d.img r.img | head -1)"
  else
    rm -rf xd xr
    "$FSIMG" extract d.img -C xd > /dev/null 2>&1 && "$FSIMG" extract r.img -C xr > /dev/null 2>&1 || fail "$c: extract"
    rm -f xr/FSCK*.REC
    diff -r xd xr > diff.out && pass || fail "$c: the files differ from dosfstools' repaired image: $(head -5 diff.out)"
  fi
done <<< "$rows"
# Two files whose short names collide (TEST_E~1.PFI): the second gets TEST_E~2.PFI, made from its long
# name, which it keeps; dosfstools' repaired image renamed it FSCK0000.000 and lost the long name. The
# same two files with the same bytes either way; the root's label copied into the boot sector, as
# fsck.fat -a does, so fsck.fat -n finds nothing.
c=encryption_with_duplicate_dirent
"$CORPUS/run" --decode "fat/dosfstools-$c-damaged" d.img > /dev/null 2>&1 &&
  "$CORPUS/run" --decode "fat/dosfstools-$c-repaired" r.img > /dev/null 2>&1 || fail "$c: cannot decode"
"$FSIMG" fsck -y d.img > out 2>&1; rc=$?
[ $rc = 1 ] && [ -z "$(fsck_codes d.img)" ] &&
  grep -q 'replaced by "TEST_E~2.PFI", made from the long name' out && pass || fail "$c: -y exit $rc: $(cat out)"
"$FSIMG" cat d.img /test_encrypted_2.txt.PFILE | cmp -s - <("$FSIMG" cat r.img /FSCK0000.000) &&
  "$FSIMG" cat d.img /test_encrypted.txt.PFILE | cmp -s - <("$FSIMG" cat r.img /test_encrypted.txt.PFILE) &&
  pass || fail "$c: the files differ from dosfstools' repaired image"
fsck.fat -n d.img > ref.out 2>&1; grep -qv -e '^fsck.fat' -e '^d.img:' -e '^$' ref.out &&
  fail "$c: fsck.fat -n: $(cat ref.out)" || pass

# exfatprogs' damaged images: after -y exit 1, our fsck -n and fsck.exfat -n clean, a second -y
# changes nothing, and every file fsck.exfat 1.2.0 -y keeps is kept with the same bytes, but where
# fsimg keeps more (a chain ended where its link breaks, not cut; a set whose checksum it
# recomputes, which fsck.exfat deletes, as exfatprogs' expected image of file_invalid_clus keeps
# it) or names it otherwise ("." and ".." renamed "_" and "__", invalid units made '_', where
# fsck.exfat makes FILE000000n.CHK).
rows="
bad_bitmap
bad_file_size
bs_bad_csum
duplicate_clu
duplicated_name
bad_root
bad_dentries        renamed:ne_inv_chars/fil\"_02_bad
bad_first_clu
bad_num_chain       longer:dir_01/bad_child_01
rename_dot_entry    renamed:FILE0000000.CHK,FILE0000001.CHK
file_invalid_clus   longer:file_invalid_clus
2tb_disk
unused-dentries
"
while read -r c except; do
  [ -n "$c" ] || continue
  "$CORPUS/run" --decode "exfat/exfatprogs-$c" d.img > /dev/null 2>&1 || { fail "$c: cannot decode"; continue; }
  cp d.img r.img; fsck.exfat -y r.img > /dev/null 2>&1
  "$FSIMG" fsck -y d.img > out 2>&1; rc=$?
  [ $rc = 1 ] && [ -z "$(fsck_codes d.img)" ] && pass || fail "$c: -y exit $rc, left $(fsck_codes d.img): $(tail -3 out)"
  fsck.exfat -n d.img > ref.out 2>&1 && pass || fail "$c: fsck.exfat -n: $(cat ref.out)"
  sha=$(content_sum d.img)
  "$FSIMG" fsck -y d.img > /dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(content_sum d.img)" = "$sha" ] && pass || fail "$c: second -y: exit $rc or changed"
  rm -rf xd xr
  "$FSIMG" extract d.img -C xd > /dev/null 2>&1 || fail "$c: extract"
  "$FSIMG" extract r.img -C xr > /dev/null 2>&1  # (fsck.exfat's result may hold names fsimg calls invalid)
  n=0
  while IFS= read -r f; do
    f=${f#./}
    case ",${except#*:}," in
      *",$f,"*) [ "${except%%:*}" = renamed ] && continue  # longer: fsck.exfat's bytes begin ours
        [ -f "xd/$f" ] && cmp -s -n "$(wc -c < "xr/$f")" "xr/$f" "xd/$f" || n=$((n + 1)) ;;
      *) cmp -s "xr/$f" "xd/$f" || n=$((n + 1)) ;;
    esac
  done < <(cd xr && find . -type f)
  [ $n = 0 ] && pass || fail "$c: $n files fsck.exfat -y keeps are not kept with the same bytes"
  [ "$(find xd -type f | wc -l)" -ge "$(find xr -type f | wc -l)" ] && pass || fail "$c: fewer files than fsck.exfat -y keeps"
  if [ $c = file_invalid_clus ]; then
    # exfatprogs' expected repair of this image (its test suite's file_invalid_clus-repaired):
    # the same files with the same bytes, smaller_file and larger_file kept with their
    # SetChecksum made right (larger_file's DataLength cut to the one cluster the bitmap marks:
    # its stored checksum fits that length), but file_invalid_clus, whose chain fsimg ends
    # where its link breaks, one cluster past where the expected image cuts it.
    "$CORPUS/run" --decode "exfat/exfatprogs-$c-repaired" e.img > /dev/null 2>&1 || fail "$c: cannot decode the expected image"
    rm -rf xe && "$FSIMG" extract e.img -C xe > /dev/null 2>&1 || fail "$c: extract the expected image"
    (cd xe && find . | LC_ALL=C sort) > e.list; (cd xd && find . | LC_ALL=C sort) > d.list
    diff e.list d.list > /dev/null && pass || fail "$c: other files than the expected repair: $(diff e.list d.list | head -5)"
    n=0
    while IFS= read -r f; do
      if [ "$f" = ./file_invalid_clus ]; then
        cmp -s -n "$(wc -c < "xe/$f")" "xe/$f" "xd/$f" || n=$((n + 1))
      else
        cmp -s "xe/$f" "xd/$f" || n=$((n + 1))
      fi
    done < <(cd xe && find . -type f)
    [ $n = 0 ] && pass || fail "$c: $n files differ from the expected repair"
    grep -q "^repaired exfat.set.checksum: /larger_file: DataLength cut from 12288 to 4096 bytes" out &&
      pass || fail "$c: larger_file: $(grep larger out)"
  fi
done <<< "$rows"
finish
