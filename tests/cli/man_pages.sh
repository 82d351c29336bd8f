#!/usr/bin/env bash
# docs/man: one page per command, made with the shell completions from the
# command line's definition (src/docgen; the committed files are what
# fsimg_docgen writes now), formatted by groff and man without a warning,
# each naming every option its command's --help lists and defining no option
# --help does not list (both directions: they cannot drift apart), with the
# project's version, and the examples of `fsimg COMMAND --help` in it.
# cost: 11
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
command -v groff >/dev/null && command -v man >/dev/null || { echo "groff or man missing: skipped"; exit 77; }
mandir="$FSIMG_SOURCE_DIR/docs/man"
# The committed pages and completions are what the definition makes now. The
# sanitizer build has no fsimg_docgen (it builds what its tests run); the
# normal build's run of this test compares.
docgen=$(dirname "$FSIMG")/fsimg_docgen
if [ -x "$docgen" ]; then
  "$docgen" "$FSIMG_SOURCE_DIR" gen 2> docgen.err && pass || fail "fsimg_docgen: $(cat docgen.err)"
  for f in $(cd gen && find docs completions -type f | sort); do
    cmp -s "gen/$f" "$FSIMG_SOURCE_DIR/$f" && pass || fail "$f is not what fsimg_docgen makes from the definition: run scripts/gen-docs ($(diff "$FSIMG_SOURCE_DIR/$f" "gen/$f" | head -5 | tr '\n' ' '))"
  done
  [ "$(cd gen && find docs completions -type f | wc -l)" -ge 18 ] && pass || fail "fsimg_docgen wrote too few files"
  # A page's .in that names an option the command does not have is refused.
  mkdir -p bad/docs/man bad/completions
  cp "$FSIMG_SOURCE_DIR"/docs/man/*.1.in bad/docs/man/ && cp "$FSIMG_SOURCE_DIR"/completions/*.in bad/completions/
  sed -i 's/^\.\\" @option --json$/.\\" @option --jsno/' bad/docs/man/fsimg-ls.1.in
  "$docgen" bad bad-out 2> bad.err; rc=$?
  [ "$rc" = 1 ] && grep -q 'fsimg-ls.1.in: @option --jsno: fsimg ls has no such option' bad.err && pass \
    || fail "an @option naming no option: exit $rc $(cat bad.err)"
else
  echo "no fsimg_docgen beside $FSIMG: the pages are compared with the definition in the normal build"
fi
version=$(sed -n 's/^project(fsimg VERSION \([0-9.]*\).*/\1/p' "$FSIMG_SOURCE_DIR/CMakeLists.txt")
commands=$("$FSIMG" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | grep -v '^help$')
pages="fsimg.1"
for c in $commands; do pages="$pages fsimg-$c.1"; done
[ "$(cd "$mandir" && ls *.1 | sort | tr '\n' ' ')" = "$(echo $pages | tr ' ' '\n' | sort | tr '\n' ' ')" ] && pass \
  || fail "docs/man holds $(cd "$mandir" && ls *.1 | tr '\n' ' '), expected $pages"
[ "$(cd "$mandir" && ls *.1.in | sort | tr '\n' ' ')" = "$(for p in $pages; do echo "$p.in"; done | sort | tr '\n' ' ')" ] && pass \
  || fail "docs/man has a .1.in per page: $(cd "$mandir" && ls *.1.in | tr '\n' ' ')"
for p in $pages; do
  f="$mandir/$p"
  [ -f "$f" ] || { fail "$p missing"; continue; }
  warnings=$(groff -man -Tutf8 -ww "$f" 2>&1 >/dev/null)
  [ -z "$warnings" ] && pass || fail "groff -ww $p: $warnings"
  MANWIDTH=80 man -l "$f" > "$p.txt" 2> "$p.err"; rc=$?
  [ "$rc" = 0 ] && [ ! -s "$p.err" ] && pass || fail "man -l $p: exit $rc $(cat "$p.err")"
  grep -q "^\.TH [^ ]* 1 [0-9-]* \"fsimg $version\"" "$f" && pass || fail "$p: .TH does not name fsimg $version"
  grep -q "^NAME" "$p.txt" && grep -q "^EXAMPLES" "$p.txt" && grep -q "^SEE ALSO" "$p.txt" && pass \
    || fail "$p: NAME, EXAMPLES or SEE ALSO missing"
done
# Every option of every command is described in its page.
for c in $commands; do
  txt="fsimg-$c.1.txt"
  [ -f "$txt" ] || continue
  for o in $("$FSIMG" $c --help | sed -n '/^Options:/,/^$/s/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sort -u); do
    grep -qE -- "(^|[^A-Za-z-])$o([^A-Za-z-]|$)" "$txt" && pass || fail "fsimg-$c.1 does not describe $o"
  done
  # ... and every option the page defines (a .TP item's first line) is one --help lists.
  "$FSIMG" $c --help | sed -n '/^Options:/,/^$/s/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sort -u > help-opts
  awk 'prev == ".TP" && /^\.B[IR]? +\\-/ { print } { prev = $0 }' "$mandir/fsimg-$c.1" |
    grep -oE '\\-(\\-[a-z0-9]+(\\-[a-z0-9]+)*|[A-Za-z0-9])' | sed 's/\\//g' | sort -u > man-opts
  extra=$(comm -13 help-opts man-opts | tr '\n' ' ')
  [ -z "$extra" ] && pass || fail "fsimg-$c.1 describes options --help does not list: $extra"
  # ... and the examples of --help are in the page.
  "$FSIMG" $c --help | sed -n '/Examples:$/,$p' | tail -n +2 | sed 's/^  //; s/   (.*//' | while read -r ex; do
    grep -qF -- "$ex" "$txt" || echo "$ex"
  done > missing
  [ ! -s missing ] && pass || fail "fsimg-$c.1 lacks the --help examples: $(cat missing)"
done
finish
