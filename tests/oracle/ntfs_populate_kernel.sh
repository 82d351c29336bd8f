#!/usr/bin/env bash
# labels: slow
# The Linux ntfs3 driver (kernel-check in a VM) on the whole 20,000-entry
# directory of make-tree's wide profile populated by mkfs -t ntfs --from:
# read, written to (its full B-tree blocks split as the driver adds files),
# re-checked (kernel-check --write: ntfsfix -n on the copy it wrote). About
# 26 CPU-seconds under TCG, so not in every CI run (issue 43); the small tree
# is in ntfs_populate.sh.
here=$(dirname "$0"); . "$here/../lib.sh"
need_oracles
[ -x "$SHARED/oracles/kernel-check" ] || { echo "kernel-check missing: skipped"; exit 77; }
export SOURCE_DATE_EPOCH=1700000000
T=$WORK/trees
"$SHARED/trees/make-tree" wide "$T/widefull" >/dev/null
"$SHARED/oracles/make-manifest" "$T/widefull" > "$T/widefull.manifest"
"$FSIMG" mkfs -q -t ntfs -s 64M -c 4K --from "$T/widefull" "$WORK/k.img" || fail "mkfs for kernel-check widefull"
if kout=$("$SHARED/oracles/kernel-check" --write --timeout 600 --manifest "$T/widefull.manifest" "$WORK/k.img" 2>&1); then pass; else
  fail "kernel-check widefull"; echo "$kout" | sed 's/^/    /'; fi
echo "kernel-check widefull: $(echo "$kout" | tail -1)"
finish
