#!/usr/bin/env bash
# fsimg --version, fsimg help [COMMAND] (the same text as COMMAND --help),
# and every command's --help ends with examples of that command.
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
version=$(sed -n 's/^project(fsimg VERSION \([0-9.]*\).*/\1/p' "$FSIMG_SOURCE_DIR/CMakeLists.txt")
[ -n "$version" ] || fail "no version in CMakeLists.txt"
out=$("$FSIMG" --version); rc=$?
[ "$rc" = 0 ] && [ "$out" = "fsimg $version" ] && pass || fail "--version: exit $rc, '$out' (want 'fsimg $version')"

commands=$("$FSIMG" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ "$(echo $commands)" = "mkfs disk dump fsck slack ls cat extract cp rm mkdir mv label attrib undo help" ] && pass \
  || fail "commands in --help: $(echo $commands)"
for c in $commands; do
  "$FSIMG" $c --help > direct.txt; rc=$?
  [ "$rc" = 0 ] && pass || fail "$c --help: exit $rc"
  "$FSIMG" help $c > via_help.txt; rc=$?
  [ "$rc" = 0 ] && cmp -s direct.txt via_help.txt && pass || fail "help $c differs from $c --help (exit $rc)"
  grep -q "^Usage: fsimg $c " direct.txt && pass || fail "$c --help: no usage line"
  # The last lines, after "Examples:", are examples of this very command.
  examples=$(sed -n '/Examples:$/,$p' direct.txt | tail -n +2)
  [ -n "$examples" ] || { fail "$c --help does not end with Examples:"; continue; }
  bad=$(echo "$examples" | grep -v -E "^  (SOURCE_DATE_EPOCH=[0-9]+ |.*\| )?fsimg $c( |$)")
  [ -z "$bad" ] && pass || fail "$c --help: example lines not of fsimg $c: $bad"
done
# The top-level --help and `fsimg help` are the same and end with examples.
"$FSIMG" --help > top.txt; "$FSIMG" help > top_help.txt
cmp -s top.txt top_help.txt && pass || fail "fsimg help differs from fsimg --help"
[ "$(tail -1 top.txt)" = "  fsimg help mkfs" ] && pass || fail "fsimg --help ends with: $(tail -1 top.txt)"
# An unknown command: usage error naming it and the commands.
"$FSIMG" help nope > out 2> err; rc=$?
[ "$rc" = 2 ] && grep -qF 'there is no command "nope"; the commands are mkfs, disk, dump, fsck, slack, ls, cat, extract, cp, rm, mkdir, mv, label, attrib, undo, help' err && pass \
  || fail "help nope: exit $rc, $(cat err)"
finish
