#!/usr/bin/env bash
# Shell completion: the bash script offers the commands, each command's
# options exactly as its --help lists them, and the values of -t,
# --partition-table and --what; the zsh script parses and names every option
# of every command too.
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
bc=/usr/share/bash-completion/bash_completion
[ -f "$bc" ] || { echo "bash-completion not installed: skipped"; exit 77; }
script="$FSIMG_SOURCE_DIR/completions/fsimg.bash"
zscript="$FSIMG_SOURCE_DIR/completions/_fsimg"
# complete WORDS...: the candidates bash offers for the last word (may be "").
complete_words() {
  bash -c '. "$1"; . "$2"; shift 2
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _fsimg fsimg "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$bc" "$script" "$@"
}
got=$(complete_words fsimg "")
[ "$got" = "--help --version attrib cat cp disk dump extract fsck help label ls mkdir mkfs mv rm slack undo " ] && pass || fail "commands: '$got'"
got=$(complete_words fsimg help e)
[ "$got" = "extract " ] && pass || fail "help e: '$got'"
got=$(complete_words fsimg mkfs -t ex)
[ "$got" = "exfat " ] && pass || fail "mkfs -t ex: '$got'"
got=$(complete_words fsimg mkfs --partition-table "")
[ "$got" = "gpt mbr none " ] && pass || fail "--partition-table: '$got'"
got=$(complete_words fsimg disk --table "")
[ "$got" = "gpt mbr " ] && pass || fail "disk --table: '$got'"
got=$(complete_words fsimg dump --what m)
[ "$got" = "mft " ] && pass || fail "dump --what m: '$got'"
touch disk.img
got=$(complete_words fsimg fsck dis)
[ "$got" = "disk.img " ] && pass || fail "fsck dis (a file): '$got'"
commands=$("$FSIMG" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
for c in $commands; do
  want=$("$FSIMG" $c --help | sed -n '/^Options:/,/^$/s/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sort -u | tr '\n' ' ')
  got=$(complete_words fsimg $c -)
  [ "$got" = "$want" ] && pass || fail "bash: $c options '$got', --help lists '$want'"
  # zsh: every option is named in the command's branch.
  missing=""
  for o in $want; do
    sed -n "/^        $c)/,/;;/p" "$zscript" | grep -qE -- "(^|[^A-Za-z-])$o([^A-Za-z-]|$)" || missing="$missing $o"
  done
  [ -z "$missing" ] && pass || fail "zsh: $c lacks$missing"
done
if command -v zsh >/dev/null; then
  zsh -n "$zscript" && pass || fail "zsh -n _fsimg"
else
  echo "zsh missing: its syntax is not checked"
fi
finish
