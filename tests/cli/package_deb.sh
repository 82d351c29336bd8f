#!/usr/bin/env bash
# labels: package
# `cmake --install` and `cpack -G DEB` (run on this test's build folder, the
# one holding $FSIMG) install the binary, a manual page per command, the bash
# and zsh completion and the manual of docs/*.md; the .deb has the binary
# stripped, the Debian fields (shared-library dependencies from
# dpkg-shlibdeps), and its fsimg runs from the unpacked tree.
# cost: 14
here=$(dirname "$0"); . "$here/../lib.sh"
cd "$WORK"
for t in cpack dpkg-deb; do
  command -v $t >/dev/null || { echo "$t missing: skipped"; exit 77; }
done
build=$(dirname "$FSIMG")
[ -f "$build/CPackConfig.cmake" ] || { fail "no CPackConfig.cmake in $build"; finish; exit; }
version=$(sed -n 's/^project(fsimg VERSION \([0-9.]*\).*/\1/p' "$FSIMG_SOURCE_DIR/CMakeLists.txt")
pages=$(cd "$FSIMG_SOURCE_DIR/docs/man" && ls *.1)
[ "$(echo $pages | wc -w)" -ge 8 ] && pass || fail "docs/man has $(echo $pages | wc -w) pages"
expected="usr/bin/fsimg usr/share/bash-completion/completions/fsimg usr/share/zsh/vendor-completions/_fsimg"
for p in $pages; do expected="$expected usr/share/man/man1/$p.gz"; done
docs=$(cd "$FSIMG_SOURCE_DIR/docs" && ls *.md)
for d in $docs; do expected="$expected usr/share/doc/fsimg/$d"; done

# cmake --install into a prefix.
cmake --install "$build" --prefix "$WORK/inst/usr" > install.log 2>&1 || fail "cmake --install: $(tail -3 install.log)"
for f in $expected; do
  [ -f "inst/$f" ] && pass || fail "cmake --install did not install $f"
done
for p in $pages; do  # gzip -9n of docs/man: the same text, no name or time in the header
  gunzip -c "inst/usr/share/man/man1/$p.gz" | cmp -s - "$FSIMG_SOURCE_DIR/docs/man/$p" && pass \
    || fail "installed $p.gz differs from docs/man/$p"
  [ "$(od -An -tx1 -j3 -N5 "inst/usr/share/man/man1/$p.gz" | tr -d ' ')" = 0000000000 ] && pass \
    || fail "$p.gz records a name or a time"
done
"inst/usr/bin/fsimg" --version | grep -x "fsimg $version" >/dev/null && pass || fail "installed fsimg --version"
MANWIDTH=80 man -l inst/usr/share/man/man1/fsimg.1.gz 2>&1 | grep -E "fsimg +- +create, +check +and +inspect" >/dev/null && pass \
  || fail "man -l on the installed fsimg.1"

# cpack -G DEB.
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$WORK/pkg" > cpack.log 2>&1 || fail "cpack: $(tail -5 cpack.log)"
deb=$(ls pkg/*.deb 2>/dev/null)
[ "$deb" = "pkg/fsimg_${version}_amd64.deb" ] && pass || fail "package file: '$deb'"
[ -n "$deb" ] || { finish; exit; }
dpkg-deb -c "$deb" > listing.txt || fail "dpkg-deb -c"
awk '{print $6}' listing.txt | sed 's#^\./##' | grep -v '/$' | sort > contents
[ "$(tr '\n' ' ' < contents)" = "$(echo $expected | tr ' ' '\n' | sort | tr '\n' ' ')" ] && pass \
  || fail "dpkg-deb -c lists: $(tr '\n' ' ' < contents)"
grep -q '^-rwxr-xr-x root/root .* \./usr/bin/fsimg$' listing.txt && pass || fail "usr/bin/fsimg not 0755 root"
[ "$(dpkg-deb -f "$deb" Package)" = fsimg ] && pass || fail "Package: $(dpkg-deb -f "$deb" Package)"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] && pass || fail "Version: $(dpkg-deb -f "$deb" Version)"
depends=$(dpkg-deb -f "$deb" Depends)
# Depends names the package of every shared library the binary needs, and no
# other: none for the default static PIE (FSIMG_STATIC_RUNTIME); libc6,
# zlib1g, libblkid1, libfmt9 and libstdc++6 when built with FSIMG_STATIC_RUNTIME=OFF (the
# sanitizer build is).
needed=$(readelf -d "$FSIMG" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for pair in libc.so.6:libc6 libz.so.1:zlib1g libblkid.so.1:libblkid1 libfmt.so.9:libfmt9 libstdc++.so.6:libstdc++6; do
  so=${pair%%:*} pkg=${pair#*:}
  if grep -qxF "$so" <<<"$needed"; then
    echo "$depends" | grep -q "$pkg" && pass || fail "Depends lacks $pkg ($so is needed): $depends"
  else
    echo "$depends" | grep -q "$pkg" && fail "Depends has $pkg, $so is not needed: $depends" || pass
  fi
done
# FSIMG_STATIC_RUNTIME: the build's effective setting (tests/CMakeLists.txt; 0 under the sanitizers).
if [ "${FSIMG_STATIC_RUNTIME:-0}" = 1 ]; then
  # A static PIE: no interpreter, no shared library, still position-independent (ASLR).
  [ -z "$needed" ] && pass || fail "the static fsimg needs shared libraries: $needed"
  readelf -lW "$FSIMG" | grep 'Requesting program interpreter' >/dev/null && fail "the static fsimg has an interpreter" || pass
  readelf -hW "$FSIMG" | grep 'Type: *DYN' >/dev/null && pass || fail "the static fsimg is not position-independent"
  [ -z "$depends" ] && pass || fail "the static fsimg's package depends on: $depends"
else
  case "$needed" in *libc.so.6*) pass ;; *) fail "readelf found no NEEDED libc.so.6 in $FSIMG: $needed" ;; esac
fi
dpkg-deb -x "$deb" root || fail "dpkg-deb -x"
# Stripped: no symbol table and no debug sections (the size depends on the
# build: a sanitizer build is several times larger).
sections=$(readelf -S -W root/usr/bin/fsimg) || fail "readelf"
if grep -qE '\.symtab|\.debug_' <<<"$sections"; then fail "packaged fsimg is not stripped"; else pass; fi
[ "$(stat -c %s root/usr/bin/fsimg)" -lt "$(stat -c %s "$FSIMG")" ] && pass \
  || fail "packaged fsimg is not smaller than the built one"
root/usr/bin/fsimg --version | grep -x "fsimg $version" >/dev/null && pass || fail "packaged fsimg --version"
SOURCE_DATE_EPOCH=0 root/usr/bin/fsimg mkfs -q -t fat32 -s 64M --volume-id 1234ABCD a.img && \
  SOURCE_DATE_EPOCH=0 "$FSIMG" mkfs -q -t fat32 -s 64M --volume-id 1234ABCD b.img && cmp -s a.img b.img && pass \
  || fail "the packaged fsimg writes other bytes than the built one"

# dpkg installs it (into a private root with its own, empty, package database:
# nothing on this machine changes), and removes it again leaving nothing.
mkdir -p sys/var/lib/dpkg/info sys/var/lib/dpkg/updates && : > sys/var/lib/dpkg/status
dpk() { dpkg --root="$WORK/sys" --force-not-root --force-depends --force-script-chrootless --log=/dev/null "$@"; }
if dpk -i "$deb" > dpkg.log 2>&1; then pass; else fail "dpkg -i: $(tail -3 dpkg.log)"; fi
[ "$(dpkg-query --admindir="$WORK/sys/var/lib/dpkg" -W -f '${Status} ${Version}' fsimg 2>/dev/null)" = \
  "install ok installed $version" ] && pass || fail "dpkg does not list fsimg $version as installed"
sys/usr/bin/fsimg --version | grep -x "fsimg $version" >/dev/null && pass || fail "dpkg-installed fsimg --version"
MANWIDTH=80 man -l sys/usr/share/man/man1/fsimg-fsck.1.gz 2>&1 | grep "fsimg-fsck" >/dev/null && pass \
  || fail "man -l on the dpkg-installed fsimg-fsck.1.gz"
dpk -r fsimg > dpkg.log 2>&1 || fail "dpkg -r: $(tail -3 dpkg.log)"
left=$(find sys -type f -not -path 'sys/var/*')
[ -z "$left" ] && pass || fail "dpkg -r left: $left"
# Its dependencies resolve against this Debian's packages (a simulation: needs no root).
if command -v apt-get >/dev/null; then
  apt-get -s -o Debug::NoLocking=1 install "$PWD/$deb" > apt.log 2>&1 && grep -q "^Inst fsimg\|^Conf fsimg" apt.log && pass \
    || fail "apt-get -s install: $(tail -3 apt.log)"
fi
finish
