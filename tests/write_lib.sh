# Helpers for the tests/oracle/*_write*.sh scripts (sourced after lib.sh):
# fsimg images of make-tree trees handed to ../shared/oracles/write-exercise,
# which lets the real writers (mtools, exfat-fuse, ntfs-3g) rename, move,
# delete, overwrite, append to and truncate their EXISTING entries, create
# many files and fill the free space, then runs the reference checkers, reads
# everything back and runs our fsck (--fsck) on the written copy.
need_shared
need_oracles
[ -x "$SHARED/oracles/write-exercise" ] || { echo "write-exercise missing: skipped"; exit 77; }
if [ "$(id -u)" != 0 ] || [ ! -w /dev/fuse ]; then
  echo "write-exercise needs root and /dev/fuse (loop devices, FUSE mounts): skipped"; exit 77
fi
export SOURCE_DATE_EPOCH=1700000000
TREES=$WORK/trees

# tree NAME PROFILE [make-tree args...]: $TREES/NAME/PROFILE holds make-tree
# PROFILE (several profiles may share one NAME); made once per script.
tree() {
  local name=$1 profile=$2; shift 2
  [ -d "$TREES/$name/$profile" ] && return 0
  "$SHARED/trees/make-tree" "$profile" "$TREES/$name/$profile" "$@" >/dev/null 2>&1 \
    || { fail "make-tree $profile $*"; return 1; }
}

# exfat_safe DIR: removes the names exFAT refuses (the characters Win32
# forbids, control characters, the second of two names equal but for case)
# from a make-tree "names" tree, so that the rest can be stored.
exfat_safe() {
  find "$1" -depth \( -name '*[*:?"<>|\\]*' -o -name $'*\t*' \) -exec rm -rf {} +
  rm -f "$1"/names/names/casename.TXT
}

# exercise IMAGE LABEL [write-exercise args...]: every check must pass, our
# fsck included.
exercise() {
  local img=$1 label=$2; shift 2
  local out
  if out=$("$SHARED/oracles/write-exercise" --fsck "$FSIMG fsck" "$@" "$img" 2>&1); then
    pass
  else
    fail "write-exercise $label $*"; echo "$out" | grep -v ': PASS' | sed 's/^/    /'
  fi
}

# mkfs_ex LABEL MKFS-ARGS... -- WRITE-EXERCISE-ARGS...: mkfs (quietly; a
# refusal fails), write-exercise, then the image is removed.
mkfs_ex() {
  local label=$1; shift
  local margs=() wargs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do margs+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  wargs=("$@")
  local img=$WORK/$label.img
  if ! "$FSIMG" mkfs -q "${margs[@]}" "$img" 2>"$WORK/mkfs.err"; then
    fail "mkfs $label ${margs[*]}: $(head -5 "$WORK/mkfs.err")"; return
  fi
  exercise "$img" "$label" "${wargs[@]}"
  rm -f "$img"
}
