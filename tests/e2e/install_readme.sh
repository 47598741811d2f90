#!/usr/bin/env bash
# The README's build line, as written, against pto installed into a temporary prefix and against
# the build tree (pto-uninstalled.pc): `cc quick.c $(pkg-config --cflags --libs pto)` builds the
# README's C block and it runs with no LD_LIBRARY_PATH. The staged install also has versioned
# libraries (SONAME libpto_X.so.MAJOR, pto_version exported and printed by pto --version), the
# man page pto(1), and the Python package where Debian's python3.X looks.
source "$(dirname "$0")/lib/common.bash"
command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 77; }
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
B=$(cd "$(dirname "$PTO")/.." && pwd)
P="$T/prefix"
log() { "$@" >"$T/step.log" 2>&1 || { cat "$T/step.log"; return 1; }; }
expect_true "cmake --install into a temporary prefix" log cmake --install "$B" --prefix "$P"
unset LD_LIBRARY_PATH PTO_LIB_DIR

# Versioned shared libraries.
VERSION=$("$P/bin/pto" --version | sed -n '1s/^pto \([0-9][0-9.]*\) .*/\1/p')
expect_true "pto --version prints a version: $VERSION" test -n "$VERSION"
for m in base ir loader runtime stats compiler; do
  lib=$(find "$P" -name "libpto_$m.so.$VERSION" | head -1)
  expect_true "libpto_$m.so.$VERSION is installed" test -f "$lib"
  SONAME=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
  expect_true "libpto_$m has the SONAME libpto_$m.so.${VERSION%%.*} (got '$SONAME')" \
    test "$SONAME" = "libpto_$m.so.${VERSION%%.*}"
done
BASE=$(find "$P" -name "libpto_base.so.$VERSION" | head -1)
expect_true "libpto_base exports pto_version" bash -c "nm -D --defined-only '$BASE' | grep -qw pto_version"

# The README's C block, built with the README's line.
sed -n '/<!-- quickstart:begin -->/,/<!-- quickstart:end -->/p' "$PTO_SOURCE_DIR/README.md" |
  sed '1,2d;$d' | sed '$d' >"$T/quick.c"
LINE=$(grep -o 'cc quick\.c \$(pkg-config --cflags --libs pto)' "$PTO_SOURCE_DIR/README.md" | head -1)
expect_true "the README gives the build line" test -n "$LINE"
build_and_run() { # build_and_run WHAT PKG_CONFIG_PATH
  local what=$1
  rm -f "$T/a.out"
  # shellcheck disable=SC2086 # PTO_SANFLAGS is a flag list; LINE is the README's command
  if ! (cd "$T" && PKG_CONFIG_PATH=$2 eval "$LINE $PTO_SANFLAGS") >"$T/cc.log" 2>&1; then
    echo "FAIL: $what: '$LINE' failed:"
    sed 's/^/  | /' "$T/cc.log"
    FAILS=$((FAILS + 1))
    return
  fi
  PASSES=$((PASSES + 1))
  OUT=$(cd "$PTO_SOURCE_DIR" && "$T/a.out" 2>&1)
  expect_true "$what: the README block runs without LD_LIBRARY_PATH: $OUT" grep -qF "y[3] = 3.5" <<<"$OUT"
}
PC=$(dirname "$(find "$P" -name pto.pc -path '*/pkgconfig/*' | head -1)")
build_and_run "installed prefix" "$PC"
expect_true "it ran the installed runtime" \
  bash -c "ldd '$T/a.out' > '$T/ldd.txt'; grep libpto_runtime '$T/ldd.txt' | grep -qF '$P'"
OUT=$(PKG_CONFIG_PATH=$B pkg-config --cflags pto 2>&1)
expect_true "the build tree's pkg-config includes the source headers: $OUT" \
  test -f "$(sed -n 's/^-I\([^ ]*\).*/\1/p' <<<"$OUT")/pto/runtime.h"
build_and_run "build tree (pto-uninstalled.pc)" "$B"
expect_true "the build tree has no pto.pc at its top (only pto-uninstalled.pc)" test ! -e "$B/pto.pc"

# The man page and the Python package.
expect_true "the man page is installed under share/man/man1" test -f "$P/share/man/man1/pto.1"
PY=$(ls -d "$P"/lib/python3.*/dist-packages/pto 2>/dev/null | head -1)
expect_true "the Python package is under lib/python3.X/dist-packages" test -f "$PY/__init__.py"
finish
