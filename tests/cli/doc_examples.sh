#!/usr/bin/env bash
# The examples in docs/*.md marked <!-- example: FIXTURE --> are run and their
# output compared with the page (tests/tools/doc_examples.py), so the docs
# cannot go stale; every command page must have at least one checked example.
# cost: 22
here=$(dirname "$0"); . "$here/../lib.sh"
for t in mkfs.fat mcopy ntfscp; do
  command -v $t >/dev/null || { echo "$t missing (scripts/install-deps): skipped"; exit 77; }
done
python3 "$FSIMG_SOURCE_DIR/tests/tools/doc_examples.py" "$FSIMG" "$FSIMG_SOURCE_DIR/docs" "$WORK" && pass \
  || fail "documented examples differ from what fsimg prints (above)"
finish
