#!/usr/bin/env bash
# Interrupted at any write, nothing that was there is lost (FAT). For each of
# cp, cp -f (replace), rm, rm -r, mkdir, mv (rename in place, to another
# directory) and label on an image made by mkfs.fat + mcopy, the process is
# cut after its Nth write (FSIMG_TEST_CUT_AFTER_WRITES=N: exit 99 with no
# later write), for every N the command makes. After each cut, mtools and
# sleuthkit must read every file that was there byte-exact (check-image
# --manifest, the changed path ignored: absent or complete), and fsck.fat
# must report nothing worse than what a checker cleans up after a crash:
# the dirty bit, lost clusters, a free-cluster count, FATs that differ; a
# move to another directory may also leave the moved file under both names
# (fat/edit.hpp says why).
# cost: 53
here=$(dirname "$0"); . "$here/../lib.sh"
need_shared
need_oracles
export SOURCE_DATE_EPOCH=1700000000
cd "$WORK"
base=$WORK/base.img
truncate -s 34M "$base"
mkfs.fat -F 32 -S 512 -s 1 -n BASE "$base" >/dev/null || { fail mkfs.fat; finish; exit; }
mkdir -p pre/dir pre/other
printf 'old content\n' > "pre/Old File.txt"
head -c 20000 /dev/urandom > pre/dir/DATA.BIN
for i in 1 2 3 4 5 6; do printf '%s\n' "$i" > "pre/dir/inner file number $i.txt"; done
printf 'other\n' > pre/other/o.txt
mcopy -s -i "$base" pre/* :: || fail mcopy
head -c 9000 /dev/urandom > new.bin

# What fsck.fat -n says about what a crash leaves and a checker cleans: the
# dirty bit, lost clusters, the free-cluster count, FAT copies that differ,
# a boot sector and its backup differing in the bytes being changed (label,
# serial), and a root label entry differing from BS_VolLab (label).
CLEANED='^fsck\.fat |^ *Dirty bit is set|^ *Automatically removing dirty bit|^ *Free cluster summary (wrong|uninitialized)|^ *Reclaimed [0-9]+ unused clusters?|^ *Leaving filesystem unchanged|^ *Auto-correcting\.|^ *Auto-copying volume label from root directory to boot sector|^ *Using first FAT|^ *FATs differ|^ *There are differences between boot sector and its backup|^ *This is mostly harmless|^ *Differences: |^[ ,0-9a-f:/]+$|^ *Not automatically fixing this|^ *Volume label .* stored in root directory and label .* stored in boot sector and different|^ *[0-9]+\) (Copy|No action|Remove|Set)|files?, [0-9]+/[0-9]+ clusters|^ *$'

# sweep NAME IGNORE ALLOW_CROSS CMD...: every cut of fsimg CMD on a copy of base.
sweep() {
  local name=$1 ignore=$2 cross=$3; shift 3
  cp "$base" full.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" "$@" full.img "${ARGS[@]}" 2> count.err >/dev/null || { fail "$name: $(cat count.err)"; return; }
  local total; total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$total" ] && [ "$total" -ge 1 ] && pass || { fail "$name: no write count: $(cat count.err)"; return; }
  local n rc bad=0
  for n in $(seq 1 "$total"); do
    cp "$base" cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" "$@" cut.img "${ARGS[@]}" >/dev/null 2>&1; rc=$?
    if [ $rc != 99 ] && [ "$n" != "$total" ]; then fail "$name: cut after write $n of $total: exit $rc"; bad=1; continue; fi
    # fsck.fat -n: only what a crash leaves and a checker cleans.
    fsck.fat -n cut.img > fsck.out 2>&1
    local odd
    odd=$(grep -v -E "$CLEANED" fsck.out)
    if [ "$cross" = 1 ]; then odd=$(echo "$odd" | grep -v -E 'share clusters|Truncating|File size is|Cluster chain|^\s*$|^ */' ); fi
    if [ -n "$odd" ]; then fail "$name: cut after write $n of $total: fsck.fat -n: $odd"; bad=1; fi
    # Every file that was there, byte-exact.
    local ig=() p
    IFS='|' read -r -a pats <<< "$ignore"
    for p in "${pats[@]}"; do p=${p#/}; ig+=(--ignore "$p" --ignore "$p/*"); done
    if ! out=$("$SHARED/oracles/check-image" --only read-mtools,read-sleuthkit --manifest pre.manifest \
           "${ig[@]}" cut.img 2>&1); then
      fail "$name: cut after write $n of $total: readers:"; echo "$out" | grep -v PASS | head -8 | sed 's/^/    /'; bad=1
    fi
    # The changed file itself: its old content or its new one, under its old or its new name.
    if [ -n "${KEEP:-}" ]; then
      local got=no nm
      IFS='|' read -r -a names <<< "$KEEP"
      for nm in "${names[@]}"; do
        if mtype -i cut.img "::$nm" > kept 2>/dev/null && { cmp -s kept "$KEEP_OLD" || cmp -s kept "${KEEP_NEW:-/nonexistent}"; }; then got=yes; fi
      done
      [ $got = yes ] || { fail "$name: cut after write $n of $total: $KEEP holds neither the old nor the new content"; bad=1; }
    fi
  done
  [ $bad = 0 ] && pass
  echo "$name: $total writes, every cut checked"
}
"$SHARED/oracles/make-manifest" pre > pre.manifest || fail make-manifest

old=$WORK/pre/Old\ File.txt
KEEP=; ARGS=("$WORK/new.bin" "/dir/a new file with a long name.bin"); sweep cp '/dir/a new file with a long name.bin' 0 cp
KEEP='/Old File.txt' KEEP_OLD=$old KEEP_NEW=$WORK/new.bin; ARGS=("$WORK/new.bin" "/Old File.txt"); sweep replace '/Old File.txt' 0 cp -f
KEEP=; ARGS=("/Old File.txt"); sweep rm '/Old File.txt' 0 rm
ARGS=("/dir"); sweep rm-r '/dir' 0 rm -r
ARGS=("/New Directory"); sweep mkdir '/New Directory' 0 mkdir
KEEP='/Old File.txt' KEEP_OLD=$old KEEP_NEW=; ARGS=("/Old File.txt" "/OLD FILE.TXT"); sweep mv-case '/Old File.txt|/OLD FILE.TXT' 0 mv
KEEP='/Old File.txt|/A much longer name than the old one.txt'; ARGS=("/Old File.txt" "/A much longer name than the old one.txt"); sweep mv-long '/Old File.txt|/A much longer name than the old one.txt' 0 mv
KEEP='/Old File.txt|/other/Old File.txt'; ARGS=("/Old File.txt" "/other"); sweep mv-dir '/Old File.txt|/other/Old File.txt' 1 mv
KEEP=; ARGS=(NEWLABEL); sweep label '/nothing' 0 label
finish
