#!/usr/bin/env bash
# mkfs --from reads its sources race-free (issue 18): between the scan and
# the copy a test-only hook (FSIMG_TEST_HOOK_BEFORE_COPY, run once before the
# first file is opened) swaps a scanned file for a symbolic link to a secret,
# for a FIFO (which would hang a plain open), for a bigger file, and a scanned
# directory for a symbolic link. On FAT32, exFAT and NTFS each is an error
# naming the file and what changed, nothing is renamed into place, no
# temporary is left, and the secret is in no image.
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
echo "TOPSECRET-4711" > secret
chmod 600 secret

# make_tree: src/ with a file to swap (big enough to be non-resident on NTFS) and a subdirectory.
make_tree() {
  rm -rf src && mkdir -p src/sub
  head -c 20000 /dev/urandom > src/victim
  echo hello > src/sub/inner
}

# race FS WHAT HOOK EXPECTED: mkfs with HOOK between scan and copy; exit 1 and EXPECTED in stderr.
race() {
  local fs=$1 what=$2 hook=$3 expected=$4
  make_tree
  rm -f out.img
  FSIMG_TEST_HOOK_BEFORE_COPY="$hook" timeout 60 "$FSIMG" mkfs -q -t "$fs" -s 64M --from src out.img >out 2>err
  local rc=$?
  [ $rc = 1 ] && pass || fail "$fs $what: exit $rc, expected 1 ($(cat err))"
  grep -qF -- "$expected" err && pass || fail "$fs $what: stderr lacks '$expected': $(cat err)"
  [ ! -e out.img ] && pass || fail "$fs $what: out.img was created"
  [ -z "$(ls -A | grep fsimg-)" ] && pass || fail "$fs $what: temporaries left: $(ls -A | grep fsimg-)"
}

for fs in fat32 exfat ntfs; do
  race $fs symlink "rm src/victim && ln -s $WORK/secret src/victim" \
    "src/victim was replaced by a symbolic link after the scan"
  race $fs fifo "rm src/victim && mkfifo src/victim" "src/victim was a regular file when scanned and is now a FIFO"
  race $fs bigger "head -c 30000 /dev/urandom > src/victim" \
    "src/victim changed after the scan: it is 30000 bytes now, 20000 when scanned"
  race $fs replaced "cp src/victim src/v2 && mv src/v2 src/victim" "src/victim was replaced by another file after the scan"
  race $fs directory "mv src/sub src/sub.old && ln -s sub.old src/sub" \
    "src/sub was replaced by a symbolic link after the scan"
  # Without a race the same tree goes in, and the secret never does.
  make_tree
  "$FSIMG" mkfs -q -t $fs -s 64M --from src ok-$fs.img && pass || fail "$fs: mkfs without a race"
  grep -c TOPSECRET ok-$fs.img >/dev/null && fail "$fs: the secret is in the image" || pass
done

# --symlinks follow: a link re-pointed to the secret after the scan is refused too.
make_tree
echo public > public.txt
ln -s "$WORK/public.txt" src/link
FSIMG_TEST_HOOK_BEFORE_COPY="ln -sfn $WORK/secret src/link" "$FSIMG" mkfs -q -t fat32 -s 64M \
  --symlinks follow --from src f.img >out 2>err
rc=$?
[ $rc = 1 ] && grep -qF "src/link was replaced by another file after the scan" err && pass \
  || fail "--symlinks follow re-pointed: exit $rc, $(cat err)"
[ ! -e f.img ] && pass || fail "--symlinks follow re-pointed: f.img was created"
finish
