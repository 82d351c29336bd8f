# Helpers for the script tests (sourced). Requires FSIMG and SHARED.
set -uo pipefail
: "${FSIMG:?FSIMG must name the fsimg binary}"
: "${SHARED:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fsimg-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0
PASSES=0
pass() { PASSES=$((PASSES + 1)); }
fail() { FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
# need_shared: ../shared (make-tree, corpus, oracles) is part of the test
# environment (CI has it); without it, as in a clone outside the workspace,
# a script that needs it skips instead of failing.
need_shared() {
  if [ ! -x "$SHARED/trees/make-tree" ]; then
    echo "no $SHARED/trees/make-tree (../shared is missing): skipped"; exit 77
  fi
}
# The answer of oracles/install --check (16 dpkg-query calls, about 0.2 CPU-s) is kept in a
# stamp file of this user's, valid while it is newer than dpkg's database and the script.
oracles_installed() {
  local stamp="${TMPDIR:-/tmp}/fsimg-oracles-ok.$(id -u)"
  if [ -f "$stamp" ] && [ -O "$stamp" ] && [ "$stamp" -nt /var/lib/dpkg/status ] &&
     [ "$stamp" -nt "$SHARED/oracles/install" ]; then
    return 0
  fi
  "$SHARED/oracles/install" --check >/dev/null 2>&1 || return 1
  touch "$stamp" 2>/dev/null
  return 0
}
need_oracles() {
  if [ ! -x "$SHARED/oracles/check-image" ] || ! oracles_installed; then
    echo "oracles not installed (run scripts/install-deps): skipped"; exit 77
  fi
}
# check IMAGE [check-image args...]: every oracle must pass (SKIP is allowed).
check() {
  local img=$1; shift
  local out
  if out=$("$SHARED/oracles/check-image" "$@" "$img" 2>&1); then
    pass
  else
    fail "check-image $* $img"; echo "$out" | sed 's/^/    /'
  fi
}
# poke IMAGE OFFSET HEX: writes the bytes HEX at byte OFFSET of IMAGE (damage for fsck tests).
poke() { python3 -c '
import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2], 0)); f.write(bytes.fromhex(sys.argv[3]))' "$@"; }
# fsck_codes IMAGE: the codes of fsimg fsck's findings other than notes, sorted, on one line
# (from the text report, whose lines are "SEVERITY CODE: where: what"). Two processes: it is
# called about a thousand times a run, and each process costs milliseconds (issue 43).
fsck_codes() { "$FSIMG" fsck "$1" 2>/dev/null | LC_ALL=C awk '
  $1 == "warning" || $1 == "error" || $1 == "fatal" { sub(/:$/, "", $2); c[n++] = $2 }
  END { for (i = 1; i < n; i++) { v = c[i]; for (j = i - 1; j >= 0 && c[j] > v; j--) c[j + 1] = c[j]; c[j + 1] = v }
        for (i = 0; i < n; i++) printf "%s%s", (i ? " " : ""), c[i]; if (n) print "" }'; }
# codes_of WANT: from fsimg fsck's text report on stdin, the codes of its errors and warnings and of
# the notes whose code is in WANT (codes joined by "+"), sorted, unique, joined by "+" (the
# fsck damage tests' expected codes).
codes_of() { LC_ALL=C awk -v want="+$1+" '
  $1 == "warning" || $1 == "error" || $1 == "fatal" || ($1 == "info" && index(want, "+" substr($2, 1, length($2) - 1) "+")) {
    sub(/:$/, "", $2); if (!($2 in seen)) { seen[$2] = 1; c[n++] = $2 } }
  END { for (i = 1; i < n; i++) { v = c[i]; for (j = i - 1; j >= 0 && c[j] > v; j--) c[j + 1] = c[j]; c[j + 1] = v }
        for (i = 0; i < n; i++) printf "%s%s", (i ? "+" : ""), c[i]; print "" }'; }
# damage_all TOOL < LIST: applies the damages of LIST (lines IMAGE<TAB>KIND) with one process of
# TOOL (tests/tools/*_damage.py --batch) and fills DAMAGE[IMAGE] with "ok<TAB>WHAT" or
# "error<TAB>MESSAGE" (a process per damage costs about 40 ms, issue 43).
declare -A DAMAGE=()
damage_all() {
  local image answer
  while IFS=$'\t' read -r image answer; do DAMAGE[$image]=$answer; done < <(python3 "$1" --batch)
}
# damage_rows TOOL ROWS: for each row "KIND CODE BASES ..." of ROWS and each base B of BASES (comma-
# separated), $WORK/B-KIND.img, a sparse copy of $WORK/B.base damaged by KIND (damage_all).
damage_rows() {
  local kind code bases b
  while read -r kind code bases _; do
    [ -n "$kind" ] || continue
    for b in ${bases//,/ }; do
      cp --sparse=always "$WORK/$b.base" "$WORK/$b-$kind.img"
      printf '%s\t%s\n' "$WORK/$b-$kind.img" "$kind"
    done
  done <<<"$2" > "$WORK/damages"
  damage_all "$1" < "$WORK/damages"
}
# damaged IMAGE: exit 0 when damage_all made IMAGE, with what it changed in WHAT; else 1, the
# tool's message in WHAT.
damaged() {
  WHAT=${DAMAGE[$1]:-error	no answer}
  [ "${WHAT%%	*}" = ok ] || { WHAT=${WHAT#*	}; return 1; }
  WHAT=${WHAT#ok	}
}
# expect_fail RC TEXT CMD...: CMD exits with RC and prints TEXT on stderr
# (in the current folder, its output is left in files out and err).
expect_fail() {  # expect_fail RC TEXT CMD...: exit status RC and TEXT in stderr
  local rc=$1 text=$2; shift 2
  "$@" >out 2>err; local got=$?
  if [ $got != "$rc" ]; then fail "$*: exit $got, expected $rc ($(cat err))"; return; fi
  if ! grep -qF -- "$text" err; then fail "$*: stderr lacks '$text': $(cat err)"; return; fi
  pass
}
# same_bytes A B: exit 0 when the two files hold the same bytes, as cmp -s,
# but reading only where either file has data (SEEK_DATA/SEEK_HOLE): where
# both have a hole both read as zeros. cmp reads a sparse 2 GiB image's
# zeros through the kernel (seconds of system time each, issue 43).
same_bytes() { python3 -c '
import os, sys
sys.path.insert(0, sys.argv[3])
from sparse_data import data_runs
fa, fb = (open(p, "rb") for p in sys.argv[1:3])
size = os.fstat(fa.fileno()).st_size
if size != os.fstat(fb.fileno()).st_size:
    sys.exit(1)
runs = sorted(data_runs(fa, size) + data_runs(fb, size))
for start, end in runs:
    fa.seek(start); fb.seek(start)
    while start < end:
        n = min(end - start, 1 << 20)
        if fa.read(n) != fb.read(n):
            sys.exit(1)
        start += n' "$1" "$2" "$(dirname "${BASH_SOURCE[0]}")/tools"; }
# content_sum FILE: the SHA-256 of FILE's bytes as they read (its size and every 64 KiB block that
# is not all zeros, with its number), reading only where the file holds data: equal for equal
# bytes whether a zero block is a hole or written. sha256sum hashes a sparse 1 GiB image's
# zeros for 2.5 CPU-s (issue 43).
content_sum() { python3 -c '
import hashlib, os, sys
sys.path.insert(0, sys.argv[2])
from sparse_data import data_runs
B = 1 << 16
f = open(sys.argv[1], "rb")
size = os.fstat(f.fileno()).st_size
h = hashlib.sha256(b"%d;" % size)
zero = bytes(B)
for start, end in data_runs(f, size):
    block = start // B
    while block * B < end:
        f.seek(block * B)
        b = f.read(B)
        if b != zero[:len(b)]:
            h.update(b"%d;" % block + b)
        block += 1
print(h.hexdigest())' "$1" "$(dirname "${BASH_SOURCE[0]}")/tools"; }
# repair_cuts ORIG LABEL PATH:FILE...: fsck -y of a copy of ORIG cut after each of its writes (but the
# last): the cut exits 99, each image PATH still reads through fsimg as host FILE, and a second -y
# finishes the repair (exit 1, nothing left).
repair_cuts() {
  local orig=$1 label=$2 total n rc f; shift 2
  cp "$orig" cut.img
  FSIMG_TEST_COUNT_WRITES=1 "$FSIMG" fsck -y cut.img > /dev/null 2> count.err
  total=$(sed -n 's/^fsimg: test: \([0-9]*\) writes$/\1/p' count.err)
  [ -n "$total" ] && [ "$total" -ge 2 ] && pass || fail "$label: write count: $(cat count.err)"
  for n in $(seq 1 $((${total:-1} - 1))); do
    cp "$orig" cut.img
    FSIMG_TEST_CUT_AFTER_WRITES=$n "$FSIMG" fsck -y cut.img > /dev/null 2>&1; rc=$?
    [ $rc = 99 ] || fail "$label: cut after write $n: exit $rc"
    for f in "$@"; do "$FSIMG" cat cut.img "${f%%:*}" | cmp -s - "${f#*:}" || fail "$label: ${f%%:*} unreadable after cut $n"; done
    "$FSIMG" fsck -y cut.img > /dev/null 2>&1; rc=$?
    [ $rc = 1 ] && [ -z "$(fsck_codes cut.img)" ] && pass || fail "$label: -y after cut $n: exit $rc, left $(fsck_codes cut.img)"
  done
}
# second_y IMAGE LABEL: a second fsck -y finds nothing and writes nothing (in the current directory).
second_y() {
  cp --sparse=always "$1" first.img
  "$FSIMG" fsck -y "$1" > /dev/null 2>&1; local rc=$?
  [ $rc = 0 ] && same_bytes "$1" first.img && pass || fail "$2: second -y exit $rc or changed the image"
  rm -f first.img
}
finish() {
  echo "$PASSES passed, $FAILS failed"
  [ "$FAILS" = 0 ]
}
