#!/usr/bin/env bash
# mkfs --from: byte-reproducible (also from a copy of the tree made in another
# order), refusals list every offender and leave no image (4 GiB file, bad
# names, case-only duplicates, symlinks with --symlinks error, a tree larger
# than -s, an unreadable file), --rename, symlink and special-file policies, -s auto
# with --free, attributes (read-only, --dot-hidden) and timestamps (UTC,
# --local-time, SOURCE_DATE_EPOCH clamp) as mtools reads them; --overlay.
# cost: 10
here=$(dirname "$0"); . "$here/../lib.sh"
[ -x "$SHARED/trees/make-tree" ] || { echo "../shared/trees/make-tree missing: skipped"; exit 77; }
command -v mdir >/dev/null || { echo "mtools missing: skipped"; exit 77; }
MT=$SHARED/trees/make-tree
cd "$WORK"
export SOURCE_DATE_EPOCH=1700000000   # 2023-11-14 22:13:20 UTC

expect_refusal() {  # expect_refusal WHAT PATTERN... -- MKFS ARGS: exit 2, every pattern in the output, no image
  local what=$1; shift
  local pats=()
  while [ "$1" != -- ]; do pats+=("$1"); shift; done; shift
  local out rc img=${@: -1} existed=no
  [ -e "$img" ] && existed=yes
  out=$("$FSIMG" mkfs "$@" 2>&1); rc=$?
  [ "$rc" = 2 ] && pass || fail "$what: exit $rc, expected 2: $out"
  for p in "${pats[@]}"; do
    grep -qF -- "$p" <<<"$out" && pass || fail "$what: '$p' missing from: $out"
  done
  [ -z "$(ls -A "$WORK" | grep -E 'fsimg-')" ] && { [ $existed = yes ] || [ ! -e "$img" ]; } && pass ||
    fail "$what: left $(ls -A "$WORK")"
}

# --- Reproducible bytes, also from a copy made in reverse order elsewhere.
"$MT" small tree --scale 0.03 >/dev/null
mkdir -p tree/empty/dir && printf 'x' > tree/MixCase.txt && : > tree/zero
for i in 1 2; do "$FSIMG" mkfs -q -t fat32 --volume-id 12345678 --from tree r$i.img || fail "mkfs r$i"; done
cmp -s r1.img r2.img && pass || fail "two runs differ"
mkdir copy
(cd tree && find . -type d | sort -r | while read -r d; do mkdir -p "../copy/$d"; done
 find . -type f | sort -r | while read -r f; do cp "$f" "../copy/$f"; done)
"$FSIMG" mkfs -q -t fat32 --volume-id 12345678 --from copy r3.img || fail "mkfs r3"
cmp -s r1.img r3.img && pass || fail "the copied tree gives different bytes"
# Reading the tree moves the host access times (relatime updates an atime
# older than the mtime): the next build must still give the same bytes.
mkdir atree && printf 'a' > atree/a.txt && printf 'b' > atree/b.txt
touch -m -d @1500000000 atree/a.txt atree/b.txt && touch -a -d @1400000000 atree/a.txt atree/b.txt
for t in fat32 exfat; do
  "$FSIMG" mkfs -q -t $t -s 64M --volume-id 12345678 --from atree a1-$t.img || fail "mkfs a1 $t"
  "$FSIMG" mkfs -q -t $t -s 64M --volume-id 12345678 --from atree a2-$t.img || fail "mkfs a2 $t"
  cmp -s a1-$t.img a2-$t.img && pass || fail "$t: a build after the tree was read differs (access times)"
done
"$FSIMG" mkfs -q -t fat32 --volume-id 12345679 --from tree r4.img
cmp -s r1.img r4.img && fail "volume ID did not change the image" || pass
rm -rf r?.img copy

# --- Options that would do nothing for the type or mode are refused (issue 21),
# before anything is written: each names itself.
expect_refusal "--mft-record-size for exfat" "--mft-record-size is only for -t ntfs" -- -t exfat -s 8M --mft-record-size 4096 idle.img
expect_refusal "--align for ntfs" "--align is only for -t exfat" -- -t ntfs -s 8M --align 1M idle.img
expect_refusal "--mft-record-size for fat" "--mft-record-size is only for -t ntfs" -- -t fat32 -s 64M --mft-record-size 1024 idle.img
for o in --local-time --dot-hidden --rename "--symlinks follow" "--free 4M"; do
  # shellcheck disable=SC2086
  expect_refusal "$o without --from" "${o%% *} only applies to files copied with --from" -- -t fat -s 8M $o idle.img
done
expect_refusal "--free with -s" "--free is the room left when the size follows the tree" -- -t exfat -s 8M --free 4M --from tree idle.img
# DIR:PATH with a path that does not start with '/' is named as the mistake (a name with a colon that
# exists is a source like any other).
expect_refusal "relative :PATH" "--from tree:photos: the path in the image after ':' must start with '/' (--from tree:/photos)" \
  -- -t fat32 -s 64M --from tree:photos idle.img
# Single files: FILE into the root, FILE:/PATH as /PATH, FILE:/DIR/ into /DIR (a link named so is
# followed); a name two sources give is refused; so are a special file and "/.." as a name.
mkdir -p one && echo "cfg=1" > one/config.txt && ln -s config.txt one/link.txt && head -c 70000 /dev/urandom > one/big.bin
for t in fat32 exfat ntfs; do
  "$FSIMG" mkfs -q -t $t -s 64M --from tree --from one/config.txt:/boot/config.txt --from one/link.txt \
    --from one/big.bin:/boot/sub/ one-$t.img || fail "$t: mkfs with single files"
  [ "$("$FSIMG" cat one-$t.img /boot/config.txt)" = cfg=1 ] && [ "$("$FSIMG" cat one-$t.img /link.txt)" = cfg=1 ] &&
    "$FSIMG" cat one-$t.img /boot/sub/big.bin | cmp -s - one/big.bin && pass || fail "$t: single files: $("$FSIMG" ls -R one-$t.img)"
  "$FSIMG" fsck one-$t.img > /dev/null && pass || fail "$t: fsck of the image with single files"
done
[ "$(mtype -i one-fat32.img ::/boot/config.txt)" = cfg=1 ] && mtype -i one-fat32.img ::/boot/sub/big.bin | cmp -s - one/big.bin &&
  pass || fail "mtools reads the single files otherwise"
rm -f one-*.img
expect_refusal "a file two sources give" "/MixCase.txt: exists in two --from sources" -- -t fat32 -s 64M --from tree --from tree/MixCase.txt idle.img
expect_refusal "a special file" "--from /dev/null: not a directory or a regular file (character device)" -- -t fat32 -s 64M --from /dev/null idle.img
expect_refusal "/.. as a file name" "cannot name a file in the image" -- -t fat32 -s 64M --from one/config.txt:/.. idle.img
mkdir -p "co:lon" && echo c > "co:lon/c.txt"
"$FSIMG" mkfs -q -t fat32 -s 64M --from "co:lon" colon.img && [ "$("$FSIMG" cat colon.img /c.txt)" = c ] && pass ||
  fail "a source folder whose name holds a colon"
rm -rf colon.img "co:lon"

# --- -s auto (and no -s) with --free; an explicit -s is used as given.
out=$("$FSIMG" mkfs -t fat -c 4K -s auto --free 10M --from tree a.img 2>&1) || fail "-s auto: $out"
free=$(fsck.fat -n a.img | sed -n 's/.* files, \([0-9]*\)\/\([0-9]*\) clusters$/\2 - \1/p')
[ $(( ($free) * 4096 )) -ge $((10 << 20)) ] && [ $(( ($free) * 4096 )) -lt $((12 << 20)) ] && pass || fail "-s auto --free 10M left $(( ($free) * 4096 )) bytes free"
"$FSIMG" mkfs -q -t fat --from tree b.img && [ -s b.img ] && pass || fail "no -s with --from"
"$FSIMG" mkfs -q -t fat32 -s 100M --from tree c.img && [ "$(stat -c %s c.img)" = $((100 << 20)) ] && pass || fail "-s 100M"
"$FSIMG" mkfs -q -t fat32 --partition-table gpt --from tree d.img && pass || fail "-s auto with GPT"
rm -f ?.img
out=$("$FSIMG" mkfs -t fat32 -s auto x.img 2>&1); [ $? = 2 ] && pass || fail "-s auto without --from: $out"
out=$("$FSIMG" mkfs -t fat32 --from nowhere x.img 2>&1); [ $? = 2 ] && grep -q nowhere <<<"$out" && pass || fail "--from nowhere: $out"

# --- Refusals: every offender listed, nothing left behind.
"$MT" huge huge >/dev/null
expect_refusal "huge" "/huge/over4gib.bin" "4,294,967,297 bytes" "4 GiB - 1" -- -t fat32 --from huge h.img
mkdir bad && touch bad/'a:b' bad/'what?' bad/Same bad/SAME bad/'dot.' && mkdir bad/ok && ln -s ../Same bad/ok/link
expect_refusal "names" "/a:b:" "/what?:" "/dot.:" "differs only in letter case" "(5 problems)" \
  -- -t fat32 --symlinks error --from bad n.img
out=$("$FSIMG" mkfs -t fat32 --rename --from bad rn.img 2>&1) && pass || fail "--rename: $out"
grep -q 'renamed /a:b -> /a_b' <<<"$out" && grep -q 'renamed /dot. -> /dot_' <<<"$out" &&
  grep -q 'renamed /Same -> /Same~2' <<<"$out" && pass || fail "--rename mapping: $out"
[ "$(mdir -i rn.img -b ::/ | sort | tr '\n' ' ')" = "::/SAME ::/Same~2 ::/a_b ::/dot_ ::/ok/ ::/what_ " ] && pass ||
  fail "--rename names: $(mdir -i rn.img -b ::/)"
rm -f rn.img
expect_refusal "symlink error" "/ok/link: " "symbolic link" -- -t fat32 --symlinks error --from bad n.img
expect_refusal "too small" "the tree needs" "the volume has" -- -t fat16 -s 4M --from tree s.img
# An existing image is left as it was.
"$FSIMG" mkfs -q -t fat16 -s 4M keep.img && cp keep.img keep.orig
expect_refusal "existing image" "the tree needs" -- -t fat16 -s 4M --force --from tree keep.img 2>/dev/null
cmp -s keep.img keep.orig && pass || fail "a refused mkfs --force changed the existing image"
mv keep.img keep.bak
# Unreadable file (as an unprivileged user: root reads everything).
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  mkdir -p unr/src && echo secret > unr/src/secret.txt && echo ok > unr/src/ok.txt && chmod 000 unr/src/secret.txt
  chmod 777 unr && chmod 755 unr/src "$WORK"
  out=$(cd unr && setpriv --reuid=65534 --regid=65534 --clear-groups "$FSIMG" mkfs -t fat32 --from src u.img 2>&1); rc=$?
  [ "$rc" = 2 ] && grep -q "/secret.txt: cannot read" <<<"$out" && pass || fail "unreadable: exit $rc: $out"
  [ -z "$(ls unr | grep -v src)" ] && pass || fail "unreadable: left $(ls unr)"
  rm -rf unr
fi

# --- Symlinks and special files.
mkdir sl && echo data > sl/target.txt && ln -s target.txt sl/link.txt && mkfifo sl/fifo
out=$("$FSIMG" mkfs -t fat32 --from sl s1.img 2>&1) || fail "skip: $out"
grep -q "skipped symbolic link .*link.txt" <<<"$out" && pass || fail "no symlink warning: $out"
grep -q "skipped FIFO .*fifo" <<<"$out" && pass || fail "no FIFO warning: $out"
# -q: nothing but errors, so not these warnings either.
out=$("$FSIMG" mkfs -q -t fat32 --force --from sl s1.img 2>&1) && [ -z "$out" ] && pass || fail "mkfs -q printed: $out"
grep -q link.txt <<<"$(mdir -i s1.img -b ::/)" && fail "skipped link stored" || pass
"$FSIMG" mkfs -q -t fat32 --symlinks follow --from sl s2.img 2>/dev/null || fail "follow"
[ "$(mtype -i s2.img ::/link.txt)" = data ] && pass || fail "followed link content"
# A followed link leading outside the --from directory is named (its content,
# /etc/passwd say, is copied); one inside it is not.
ln -s /etc/hostname sl/outside; ln -s link.txt sl/inside
out=$("$FSIMG" mkfs -t fat32 --symlinks follow --from sl s4.img 2>&1) || fail "follow outside: $out"
grep -q "followed symbolic link sl/outside leads outside the --from directory, to /etc/hostname" <<<"$out" \
  && ! grep -q "sl/inside leads outside" <<<"$out" && pass || fail "follow outside warning: $out"
rm -f sl/outside sl/inside s4.img
ln -s missing sl/dangling
expect_refusal "dangling" "/dangling: symbolic link" -- -t fat32 --symlinks follow --from sl s3.img
rm -f sl/dangling s?.img

# --- Attributes and timestamps.
mkdir at && echo hi > at/.hid && echo ro > at/ro.txt && chmod 444 at/ro.txt && echo x > at/plain.txt
touch -d '2001-02-03 04:05:06 UTC' at/plain.txt
"$FSIMG" mkfs -q -t fat16 --dot-hidden --from at t1.img || fail "mkfs attrs"
attrs=$(mattrib -i t1.img ::/.hid ::/ro.txt ::/plain.txt)
grep -q 'A   H .*::/.hid' <<<"$attrs" && pass || fail "--dot-hidden: $attrs"
grep -q 'A    R .*::/ro.txt' <<<"$attrs" && pass || fail "read-only: $attrs"
grep -Eq '^  A +::/plain.txt' <<<"$attrs" && pass || fail "plain: $attrs"
listing=$(mdir -i t1.img ::/)
grep -q '^plain .* 2001-02-03   4:05' <<<"$listing" && pass || fail "mtime in UTC (even seconds): $listing"
grep -q '^ro .* 2023-11-14  22:13' <<<"$listing" && pass || fail "newer times clamped to SOURCE_DATE_EPOCH: $listing"
"$FSIMG" mkfs -q -t fat16 --from at t2.img
grep -q H <<<"$(mattrib -i t2.img ::/.hid)" && fail "hidden without --dot-hidden" || pass
TZ=Etc/GMT-2 "$FSIMG" mkfs -q -t fat16 --local-time --from at t3.img
listing=$(mdir -i t3.img ::/)
grep -q '^plain .* 2001-02-03   6:05' <<<"$listing" && pass || fail "--local-time UTC+2: $listing"
grep -q '^ro .* 2023-11-15   0:13' <<<"$listing" && pass || fail "--local-time clamp: $listing"
# NTFS: --from works (tests/oracle/ntfs_populate.sh); --rename and --local-time are FAT/exFAT ideas.
"$FSIMG" mkfs -q -t ntfs -s 64M --from at e.img && [ -s e.img ] && pass || fail "ntfs --from refused"
for opt in --rename --local-time; do
  "$FSIMG" mkfs -q -t ntfs -s 64M "$opt" --from at e2.img >/dev/null 2>&1
  [ $? = 2 ] && [ ! -e e2.img ] && pass || fail "ntfs --from $opt accepted"
done
# --overlay: a later source's file replaces an earlier one's of the same name (directories merge as
# always), a single FILE:/PATH too; the file the image holds is the last one, with its size and
# time; a file and a directory of one name stay refused; without --overlay the clash is refused,
# naming the option; --overlay without --from is refused.
mkdir -p ov/base/boot ov/base/etc ov/over/boot ov/over/extra
echo "console=tty1 root=/dev/sda2" > ov/base/boot/cmdline.txt; echo base > ov/base/boot/config.txt
echo keep > ov/base/etc/keep; echo "console=serial0,115200" > ov/over/boot/cmdline.txt
echo new > ov/over/extra/add.txt; echo "dtoverlay=x" > ov/config.txt
touch -d '2020-01-01 00:00:00' ov/over/boot/cmdline.txt
for t in fat32 exfat ntfs; do
  "$FSIMG" mkfs -q -t $t -s 64M --overlay --from ov/base --from ov/over --from ov/config.txt:/boot/config.txt o-$t.img ||
    fail "$t --overlay"
  [ "$("$FSIMG" cat o-$t.img /boot/cmdline.txt)" = "console=serial0,115200" ] &&
    [ "$("$FSIMG" cat o-$t.img /boot/config.txt)" = "dtoverlay=x" ] && [ "$("$FSIMG" cat o-$t.img /etc/keep)" = keep ] &&
    [ "$("$FSIMG" ls -R o-$t.img / | tr '\n' ' ')" = "/boot/ /etc/ /extra/ /boot/cmdline.txt /boot/config.txt /etc/keep /extra/add.txt " ] &&
    pass || fail "$t --overlay: $("$FSIMG" ls -lR o-$t.img /)"
done
[ "$(mtype -i o-fat32.img ::/boot/cmdline.txt)" = "console=serial0,115200" ] &&
  mdir -i o-fat32.img ::/boot | grep -q "^cmdline  txt        23 2020-01-01   0:00" && pass ||
  fail "--overlay as mtools reads it: $(mdir -i o-fat32.img ::/boot)"
expect_refusal "a clash without --overlay" "/boot/cmdline.txt: exists in two --from sources" "--overlay lets a later" -- \
  -t fat32 -s 64M --from ov/base --from ov/over ov1.img
mkdir -p ov/dir/boot/cmdline.txt
expect_refusal "--overlay, a directory over a file" "/boot/cmdline.txt: a file and a directory of this name" -- \
  -t fat32 -s 64M --overlay --from ov/base --from ov/dir ov2.img
expect_refusal "--overlay without --from" "--overlay only applies to files copied with --from" -- -t fat32 -s 64M --overlay ov3.img
finish
