#!/usr/bin/env bash
# Interrupted at any write, nothing that was there is lost (exFAT). For each
# of cp (into a directory that grows), cp -f (replace), rm, rm -r, mkdir, mv
# (rename in place, to a longer name, to another directory), attrib, label
# and the serial on an image made by mkfs.exfat (its files put in by
# exfat-fuse where it can run, else by fsimg mkfs --from), the process is cut
# after its Nth write (FSIMG_TEST_CUT_AFTER_WRITES=N: exit 99 with no later
# write), for every N the command makes. After each cut, exfat-fuse and
# sleuthkit must read every file that was there byte-exact (check-image
# --manifest, the changed path ignored: absent or complete); fsck.exfat -n
# must call the volume clean, and our fsck may report only what a crash
# leaves and a checker cleans: the dirty flag, bitmap marks without owner,
# PercentInUse; a move to another directory (and a rename that has to grow
# the directory) may also leave both names on the same clusters for a
# moment, and the serial's two boot regions may differ (exfat/edit.hpp says
# why).
# cost: 45
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
base=$WORK/base.img
truncate -s 34M "$base"
mkfs.exfat -c 512 -L BASE "$base" >/dev/null || { fail mkfs.exfat; finish; exit; }
mkdir -p pre/dir pre/other
printf 'old content\n' > "pre/Old File.txt"
head -c 20000 /dev/urandom > pre/dir/DATA.BIN
# Eight sets of four entries: /dir's 512-byte first cluster is full, a new name makes it grow.
for i in 1 2 3 4 5 6 7; do printf '%s\n' "$i" > "pre/dir/inner file number $i.txt"; done
printf 'other\n' > pre/other/o.txt
put_by_fuse() {
  [ "$(id -u)" = 0 ] && [ -w /dev/fuse ] || return 1
  local lo; lo=$(losetup -f --show "$base" 2>/dev/null) || return 1
  mkdir -p mnt
  if ! timeout 30 mount.exfat-fuse "$lo" mnt >/dev/null 2>&1; then losetup -d "$lo"; return 1; fi
  # In sorted order, so that the layout does not follow the host's directory order.
  local rc=0 f
  while IFS= read -r f; do mkdir -p "mnt/$f" || rc=1; done < <(cd pre && find . -mindepth 1 -type d | LC_ALL=C sort)
  while IFS= read -r f; do cp "pre/$f" "mnt/$f" || rc=1; done < <(cd pre && find . -type f | LC_ALL=C sort)
  umount mnt; losetup -d "$lo"
  return $rc
}
if ! put_by_fuse; then
  echo "exfat-fuse cannot run here: the base image is fsimg mkfs --from"
  "$FSIMG" mkfs -q -t exfat -s 34M -c 512 -L BASE --from pre "$base" --force || { fail "mkfs --from"; finish; exit; }
fi
head -c 9000 /dev/urandom > new.bin
"$SHARED/oracles/make-manifest" pre > pre.manifest || fail make-manifest
"$FSIMG" fsck "$base" >/dev/null && pass || fail "the base image is not clean: $("$FSIMG" fsck "$base")"

# sweep NAME IGNORE ALLOW_CROSS CMD...: every cut of fsimg CMD on a copy of base.
# FSCK_ALLOW: the one fsck.exfat complaint this sweep's documented transient
# state may draw (a regular expression over its ERROR lines), or empty.
sweep() {
  local name=$1 ignore=$2 cross=$3; shift 3
  cp "$base" full.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" "$@" full.img "${ARGS[@]}" 2> count.err >/dev/null || { fail "$name: $(cat count.err)"; return; }
  local total; total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$total" ] && [ "$total" -ge 1 ] && pass || { fail "$name: no write count: $(cat count.err)"; return; }
  "$FSIMG" fsck full.img >/dev/null && pass || fail "$name: not clean when complete: $("$FSIMG" fsck full.img)"
  local n rc bad=0 allowed='exfat\.boot\.dirty|exfat\.bitmap\.lost|exfat\.bitmap\.percent-in-use'
  [ "$cross" = 1 ] && allowed="$allowed|exfat\\.chain\\.cross-link"
  [ -n "${FSCK_ALLOW:-}" ] && [ "$cross" != 1 ] && allowed="$allowed|exfat\\.chain\\.too-long"
  [ "$name" = serial ] && allowed="$allowed|exfat\\.boot\\.backup-differs"
  for n in $(seq 1 "$total"); do
    cp "$base" cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" "$@" cut.img "${ARGS[@]}" >/dev/null 2>&1; rc=$?
    if [ $rc != 99 ]; then fail "$name: cut after write $n of $total: exit $rc"; bad=1; continue; fi
    if ! fsck.exfat -n cut.img > fsck.out 2>&1; then
      local errs; errs=$(grep '^ERROR' fsck.out)
      if [ -z "${FSCK_ALLOW:-}" ] || [ -z "$errs" ] || echo "$errs" | grep -q -v -E "$FSCK_ALLOW"; then
        fail "$name: cut after write $n of $total: fsck.exfat -n: $(cat fsck.out)"; bad=1
      fi
    fi
    local odd
    odd=$("$FSIMG" fsck cut.img 2>&1 | grep -E '^(error|warning|info) ' | grep -v -E "^[a-z]+ ($allowed):")
    if [ -n "$odd" ]; then fail "$name: cut after write $n of $total: fsimg fsck: $odd"; bad=1; fi
    # Every file that was there, byte-exact.
    local ig=() p pats
    IFS='|' read -r -a pats <<< "$ignore"
    for p in "${pats[@]}"; do p=${p#/}; ig+=(--ignore "$p" --ignore "$p/*"); done
    # sleuthkit at every cut, exfat-fuse (a mount: 2 s) at the middle one.
    local readers=read-sleuthkit
    [ "$n" = $(( (total + 1) / 2 )) ] && readers=read-sleuthkit,read-exfat-fuse
    if ! out=$("$SHARED/oracles/check-image" --only "$readers" --manifest pre.manifest \
           "${ig[@]}" cut.img 2>&1); then
      fail "$name: cut after write $n of $total: readers:"; echo "$out" | grep -v PASS | head -8 | sed 's/^/    /'; bad=1
    fi
    # The changed file itself: its old content or its new one, under its old or its new name.
    if [ -n "${KEEP:-}" ]; then
      local got=no nm names
      IFS='|' read -r -a names <<< "$KEEP"
      for nm in "${names[@]}"; do
        if "$FSIMG" cat cut.img "$nm" > kept 2>/dev/null && { cmp -s kept "$KEEP_OLD" || cmp -s kept "${KEEP_NEW:-/nonexistent}"; }; then got=yes; fi
      done
      [ $got = yes ] || { fail "$name: cut after write $n of $total: $KEEP holds neither the old nor the new content"; bad=1; }
    fi
  done
  [ $bad = 0 ] && pass
  echo "$name: $total writes, every cut checked"
}

old=$WORK/pre/Old\ File.txt
# /dir grows: a FAT-chained directory is linked to its new cluster before its
# DataLength says so (exfat/edit.hpp): a cut between leaves the chain one
# cluster longer, which fsck.exfat offers to truncate.
FSCK_ALLOW='more clusters are allocated'
KEEP=; ARGS=("$WORK/new.bin" "/dir/a new file with a long name.bin"); sweep cp '/dir/a new file with a long name.bin' 0 cp
FSCK_ALLOW=
KEEP='/Old File.txt' KEEP_OLD=$old KEEP_NEW=$WORK/new.bin; ARGS=("$WORK/new.bin" "/Old File.txt"); sweep replace '/Old File.txt' 0 cp -f
KEEP=; ARGS=("/Old File.txt"); sweep rm '/Old File.txt' 0 rm
ARGS=("/dir"); sweep rm-r '/dir' 0 rm -r
ARGS=("/New Directory"); sweep mkdir '/New Directory' 0 mkdir
KEEP='/Old File.txt' KEEP_OLD=$old KEEP_NEW=; ARGS=("/Old File.txt" "/OLD FILE.TXT"); sweep mv-case '/Old File.txt|/OLD FILE.TXT' 0 mv
# Both names on the same clusters for a moment (the new set is written
# first): a move, and a longer name when the root has to grow for it (how
# full the root is depends on the order exfat-fuse was given the files).
FSCK_ALLOW='cluster is already allocated for the other file'
KEEP='/Old File.txt|/A much longer name than the old one.txt'; ARGS=("/Old File.txt" "/A much longer name than the old one.txt"); sweep mv-long '/Old File.txt|/A much longer name than the old one.txt' 1 mv
KEEP='/Old File.txt|/other/Old File.txt'; ARGS=("/Old File.txt" "/other"); sweep mv-dir '/Old File.txt|/other/Old File.txt' 1 mv
FSCK_ALLOW=
KEEP='/Old File.txt'; ARGS=(+r +h "/Old File.txt"); sweep attrib '/nothing' 0 attrib
KEEP=; ARGS=("New Label"); sweep label '/nothing' 0 label
ARGS=(--volume-id 1234ABCD); sweep serial '/nothing' 0 label
finish
