#!/usr/bin/env bash
# Corruption protocol: a clean fsimg mkfs -t ntfs --from image damaged in one
# precise way (tests/tools/ntfs_damage.py) makes fsimg fsck report exactly
# the listed finding codes (the intended one, plus the consequences named in
# the row: a record that no longer parses also leaves its directory entry
# stale) and exit 4 (0 when they are warnings). A reference tool must agree
# the image is damaged where one can see it: ntfsfix -n (ntfs-3g: boot
# sector, $MFT/$MFTMirr, $MFT's $BITMAP and $UpCase at mount), an ntfs-3g
# FUSE mount read-only with ls -laR and every file read ("mount"), The Sleuth
# Kit's fls -r (errors or messages) and fsstat. "blind" rows are damage none
# of them checks: $Bitmap against the clusters files own (ntfs-3g and TSK
# trust the bitmap), the $MFT bitmap against the records in use, link
# counts, sequence numbers of records and parent references, attribute
# instance numbers, header fields ntfs-3g does not judge (flags, record
# number, the update sequence array when the fixups still verify), index
# order of keys nobody looks up, the sizes index entries duplicate, and
# $Volume's dirty flag (ntfsfix -n leaves it to Windows). ntfsck
# (ntfsprogs-plus) sees most of those; it is not packaged here.
# fsimg writes no $ATTRIBUTE_LIST: the attrlist-* kinds first move /A.TXT's
# $DATA to an extension record and list it by hand (attrlist-build alone,
# the row whose codes are "-": no finding, and ntfs-3g, ntfscat, TSK's icat
# and fsimg cat read A.TXT back whole through it). Blind there: an entry whose VCN its record does not
# hold (ntfs-3g and TSK find $DATA by type in the named record) and an
# extension record no list names (both reach extension records only through
# a list). The base tree holds a hard link (/DIR/L.TXT = /DIR/C.TXT: one
# record, two $FILE_NAMEs); index-missing-entry drops one of its two index
# entries, which no reference tool notices (they list directories through
# their indexes and compare no link counts). record-unreadable needs an
# image cut short: a record is read through $MFT's runs, which must lie
# inside the volume ($MFT is not opened otherwise: ntfs.mft.unreadable) and
# map every record counted (ntfs.mft.unmapped), so only a device shorter
# than the volume leaves a record unreadable; TSK's fls fails on it.
# The ntfs.reparse.* codes ($Extend/$Reparse:$R) are damaged in ntfs_links.sh,
# on an image with a stored symbolic link (blind to every reference tool).
# cost: 39
here=$(dirname "$0"); . "$here/../lib.sh"
for t in ntfsfix ntfs-3g fusermount fls fsstat ifind icat istat ntfscat; do command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }; done
[ -w /dev/fuse ] || { echo "/dev/fuse not usable: skipped"; exit 77; }
damage="$here/../tools/ntfs_damage.py"
src="$WORK/src"; mkdir -p "$src/DIR/SUB" "$src/BIG"
head -c 20000 /dev/urandom >"$src/A.TXT"; head -c 12000 /dev/urandom >"$src/B.TXT"
: >"$src/E.TXT"; : >"$src/DIR/E2.TXT"; head -c 100 /dev/urandom >"$src/DIR/C.TXT"
ln "$src/DIR/C.TXT" "$src/DIR/L.TXT"
for i in $(seq 1 80); do echo $i >"$src/BIG/a file with a long name number $i.txt"; done
base="$WORK/base.img"
"$FSIMG" mkfs -q -t ntfs -s 4M --from "$src" "$base" && "$FSIMG" fsck -n "$base" >/dev/null &&
  ntfsfix -n "$base" >/dev/null || { fail "base image"; finish; exit; }
mnt="$WORK/mnt"; mkdir -p "$mnt"
trap 'mountpoint -q "$mnt" && fusermount -u "$mnt"; rm -rf "$WORK"' EXIT
refs() {  # refs IMAGE: the reference tools that see damage, comma-separated, or "blind"
  local img=$1 seen="" out rc
  ntfsfix -n "$img" >/dev/null 2>&1 || seen+=",ntfsfix"
  if ntfs-3g -o ro "$img" "$mnt" 2>/dev/null; then
    out=$( { ls -laR "$mnt" >/dev/null; find "$mnt" -type f -exec cat {} + >/dev/null; } 2>&1 )
    fusermount -u "$mnt"
    [ -n "$out" ] && seen+=",mount"
  else
    seen+=",mount"
  fi
  out=$(fls -r "$img" 2>&1 >/dev/null); rc=$?
  { [ $rc != 0 ] || [ -n "$out" ]; } && seen+=",fls"
  fsstat "$img" >/dev/null 2>&1 || seen+=",fsstat"
  echo "${seen:-,blind}" | cut -c2-
}
codes_of() { python3 -c 'import json, sys; print("+".join(sorted({f["code"] for f in json.load(sys.stdin)["findings"]})))'; }
# kind                     expected codes                                                 reference tools that see it
rows="
attr-header               ntfs.attr.header+ntfs.index.stale-entry                        mount
attrlist-build            -                                                              blind
attrlist-decode           ntfs.attrlist.decode+ntfs.attrlist.missing                     mount
attrlist-entry            ntfs.attrlist.entry                                            blind
attrlist-entry-sequence   ntfs.attrlist.entry+ntfs.attrlist.missing                      mount
attrlist-missing          ntfs.attrlist.missing                                          blind
attrlist-missing-full     ntfs.attrlist.missing+ntfs.index.sizes                         blind
attr-instance             ntfs.attr.instance                                             blind
attr-missing-data         ntfs.attr.missing-data                                         mount
attr-missing-std-info     ntfs.attr.missing-std-info                                     mount
attr-order                ntfs.attr.order+ntfs.filename.missing                          mount
attr-sizes                ntfs.attr.sizes                                                blind
attr-vcn                  ntfs.attr.vcn                                                  mount
bitmap-free-in-use        ntfs.bitmap.free-in-use                                        blind
bitmap-lost               ntfs.bitmap.lost                                               blind
bitmap-size               ntfs.bitmap.size                                               blind
boot-backup-differs       ntfs.boot.backup-differs                                       ntfsfix
boot-backup-missing       ntfs.boot.backup-missing                                       ntfsfix
boot-both-broken          ntfs.boot.bytes_per_sector                                     ntfsfix,mount,fls,fsstat
boot-bytes-per-sector     ntfs.boot.bytes_per_sector                                     ntfsfix,mount,fls,fsstat
boot-cluster-size         ntfs.boot.cluster_size                                         ntfsfix,mount,fls,fsstat
boot-index-block-size     ntfs.boot.index_block_size                                     ntfsfix,mount
boot-mft-lcn              ntfs.boot.mft_lcn                                              ntfsfix,mount,fls,fsstat
boot-mft-record-size      ntfs.boot.mft_record_size                                      ntfsfix,mount,fls,fsstat
boot-mftmirr-lcn          ntfs.boot.mftmirr_lcn                                          ntfsfix,mount
boot-oem                  ntfs.boot.oem_id                                               ntfsfix,mount
boot-signature            ntfs.boot.signature                                            ntfsfix,fls,fsstat
boot-total-sectors        ntfs.boot.total_sectors                                        ntfsfix,mount,fls,fsstat
boot-truncated            ntfs.boot.image-truncated                                      ntfsfix
filename-bad              ntfs.filename.bad+ntfs.filename.missing                        mount
filename-flags            ntfs.filename.flags+ntfs.index.entry-mismatch                  blind
filename-missing          ntfs.filename.missing                                          blind
filename-missing-list     ntfs.attrlist.entry+ntfs.filename.missing                      blind
filename-lost             ntfs.filename.missing+ntfs.index.stale-entry                   blind
filename-lost-empty       ntfs.filename.missing+ntfs.index.stale-entry                   blind
filename-lost-full        ntfs.filename.missing+ntfs.index.stale-entry                   blind
filename-missing-full     ntfs.filename.missing+ntfs.index.sizes                         blind
filename-parent           ntfs.filename.parent+ntfs.index.entry-mismatch                 blind
filename-parent-sequence  ntfs.filename.parent-sequence+ntfs.index.entry-mismatch        blind
index-bitmap              ntfs.index.bitmap                                              blind
index-corrupt             ntfs.index.corrupt+ntfs.index.missing-entry                    mount
index-entry-mismatch      ntfs.index.entry-mismatch                                      blind
index-extra-entry         ntfs.index.extra-entry+ntfs.tree.orphan                        blind
index-missing-entry       ntfs.index.missing-entry                                       blind
index-order               ntfs.index.order                                               mount
index-root-missing        ntfs.index.root-missing                                        mount
index-sizes               ntfs.index.sizes                                               blind
index-stale-entry         ntfs.index.stale-entry+ntfs.tree.orphan                        blind
mft-bitmap-marked-free    ntfs.mft-bitmap.marked-free                                    blind
mft-bitmap-missing        ntfs.mft.bitmap-missing                                        ntfsfix,mount
mft-bitmap-size           ntfs.mft.bitmap-size                                           blind
mft-bitmap-unmarked       ntfs.mft-bitmap.unmarked                                       blind
mft-unmapped              ntfs.attr.sizes+ntfs.mft.unmapped                              ntfsfix,mount,fls
mft-unreadable            ntfs.mft.unreadable                                            ntfsfix,mount
mftmirr-differs           ntfs.mftmirr.differs                                           ntfsfix,mount
mftmirr-location          ntfs.mftmirr.location                                          ntfsfix,mount
mftmirr-unreadable        ntfs.mftmirr.unreadable                                        blind
rec-baad                  ntfs.index.stale-entry+ntfs.record.baad                        mount
rec-base                  ntfs.index.stale-entry+ntfs.record.base                        blind
rec-bytes-allocated       ntfs.record.bytes-allocated                                    mount
rec-bytes-in-use          ntfs.index.stale-entry+ntfs.record.bytes-in-use                mount
rec-first-attribute       ntfs.index.stale-entry+ntfs.record.first-attribute             mount
rec-fixup                 ntfs.index.stale-entry+ntfs.record.fixup                       mount
rec-flags                 ntfs.record.flags                                              blind
rec-link-count            ntfs.record.link-count                                         blind
rec-number                ntfs.record.number                                             blind
rec-sequence              ntfs.index.stale-entry+ntfs.record.sequence+ntfs.tree.orphan   blind
rec-signature             ntfs.index.stale-entry+ntfs.record.signature                   mount
rec-usa                   ntfs.index.stale-entry+ntfs.record.usa                         blind
record-unreadable         ntfs.boot.image-truncated+ntfs.record.unreadable               ntfsfix,fls
run-cross-link            ntfs.bitmap.lost+ntfs.run.cross-link                           blind
run-decode                ntfs.index.stale-entry+ntfs.run.decode                         mount
run-outside               ntfs.bitmap.lost+ntfs.run.outside                              mount
run-sparse                ntfs.bitmap.lost+ntfs.run.sparse                               blind
tree-root                 ntfs.filename.flags+ntfs.tree.orphan+ntfs.tree.root            mount
tree-cycle                ntfs.index.entry-mismatch                                      blind
tree-cycle-stale          ntfs.index.stale-entry+ntfs.tree.orphan                        blind
tree-dir-freed            ntfs.filename.parent+ntfs.index.stale-entry+ntfs.mft-bitmap.marked-free+ntfs.tree.orphan blind
upcase-ascii              ntfs.upcase.ascii                                              ntfsfix,mount
upcase-size               ntfs.upcase.size                                               blind
volume-dirty              ntfs.volume.dirty                                              blind
volume-information        ntfs.volume.information                                        ntfsfix,mount,fls,fsstat
"
[ "$(echo "$rows" | grep -c .)" = "$(python3 "$damage" --list | wc -l)" ] && pass || fail "a kind of $damage has no row"
while read -r kind want tools; do
  [ -n "$kind" ] || continue
  img="$WORK/d.img"; cp "$base" "$img"
  python3 "$damage" "$img" "$kind" >/dev/null || { fail "$kind: damage"; continue; }
  got=$("$FSIMG" fsck -n --json "$img" | codes_of); rc=${PIPESTATUS[0]}
  exp_rc=4
  case "$want" in ntfs.boot.backup-missing|ntfs.record.number|ntfs.volume.dirty) exp_rc=0 ;; -) exp_rc=0 want= ;; esac
  if [ "$got" = "$want" ] && [ "$rc" = $exp_rc ]; then pass; else fail "$kind: fsck exit $rc codes '$got', expected $exp_rc '$want'"; fi
  seen=$(refs "$img")
  if [ "$tools" = blind ]; then
    [ "$seen" = blind ] && pass || { pass; echo "note: $kind is now seen by $seen (row says blind)"; }
  else
    ok=0
    for t in ${tools//,/ }; do case ",$seen," in *",$t,"*) ok=1 ;; esac; done
    [ $ok = 1 ] && pass || fail "$kind: no reference tool of '$tools' sees it (seen: $seen)"
  fi
  if [ "$kind" = attrlist-decode ]; then  # the consequence names its cause
    out=$("$FSIMG" fsck -n "$img")
    grep -q "ntfs.attrlist.missing.*the base's \$ATTRIBUTE_LIST does not decode" <<<"$out" && pass \
      || fail "attrlist-decode: ntfs.attrlist.missing does not say the base's list does not decode: $out"
  fi
  if [ "$kind" = attrlist-build ]; then  # the list is sound: every reader finds A.TXT's $DATA through it
    n=$(ifind -n /A.TXT "$img")
    "$FSIMG" cat "$img" /A.TXT | cmp -s - "$src/A.TXT" && ntfscat "$img" A.TXT | cmp -s - "$src/A.TXT" &&
      icat "$img" "$n" | cmp -s - "$src/A.TXT" && [[ $(istat "$img" "$n") == *'Type: $ATTRIBUTE_LIST'* ]] &&
      pass || fail "attrlist-build: A.TXT does not read back through its \$ATTRIBUTE_LIST"
    if ntfs-3g -o ro "$img" "$mnt" 2>/dev/null; then
      cmp -s "$mnt/A.TXT" "$src/A.TXT" && pass || fail "attrlist-build: ntfs-3g reads another A.TXT"
      fusermount -u "$mnt"
    else
      fail "attrlist-build: ntfs-3g mount"
    fi
  fi
done <<<"$rows"
finish
