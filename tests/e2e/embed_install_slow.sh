#!/usr/bin/env bash
# examples/embed against pto installed into a temporary prefix, built both ways: with CMake
# (find_package(pto), pto_add_program) and with its Makefile (pkg-config --cflags --libs pto).
# Each build compiles dense.ptir into a work dir at build time; the program loads it, keeps the
# weights resident, registers once, runs a loop of batches and checks them.
source "$(dirname "$0")/lib/common.bash"
command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 77; }
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
BUILD=$(cd "$(dirname "$PTO")/.." && pwd)
export PTO_CACHE_DIR="$T/cache"
cp -r "$PTO_SOURCE_DIR/examples/embed" "$T/src"

log() { "$@" >"$T/step.log" 2>&1 || { cat "$T/step.log"; return 1; }; }
# A sanitized pto build needs sanitized applications (the sanitizer runtime must load first).
SANFLAGS=$PTO_SANFLAGS
expect_true "cmake --install into a temporary prefix" log cmake --install "$BUILD" --prefix "$T/prefix"
PC=$(find "$T/prefix" -name pto.pc -path '*/pkgconfig/*' | head -1)
expect_true "the prefix has pto.pc" test -n "$PC"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$PC")

# pkg-config: the flags point into the prefix, wherever it is.
OUT=$(pkg-config --cflags --libs pto 2>&1)
expect_true "pkg-config --cflags --libs pto: $OUT" grep -q -- "-lpto_runtime" <<<"$OUT"
expect_true "pkg-config include dir exists" test -f "$(pkg-config --variable=includedir pto)/pto/runtime.h"
expect_true "pkg-config libdir has the runtime" test -f "$(pkg-config --variable=libdir pto)/libpto_runtime.so"
expect_true "pkg-config bindir has pto" test -x "$(pkg-config --variable=bindir pto)/pto"

# With the Makefile (pkg-config).
expect_true "make (pkg-config) builds the example" \
  log make -C "$T/src" O="$T/mk" CFLAGS="-O2 -Wall -Wextra $SANFLAGS"
expect_true "the Makefile made the work dir" test -f "$T/mk/dense.pto/manifest.json"
OUT=$("$T/mk/embed_demo" 2>&1)
expect_true "the pkg-config build runs: $OUT" grep -q PASS <<<"$OUT"
expect_true "it uses the installed runtime" \
  bash -c "ldd '$T/mk/embed_demo' | grep libpto_runtime | grep -qF '$T/prefix'"

# With CMake (find_package).
if [ -f "$T/prefix/lib/cmake/pto/ptoConfig.cmake" ] || [ -n "$(find "$T/prefix" -name ptoConfig.cmake)" ]; then
  expect_true "configure with find_package(pto)" \
    log cmake -S "$T/src" -B "$T/cm" "${gen[@]}" -DCMAKE_PREFIX_PATH="$T/prefix" \
    -DCMAKE_C_FLAGS="$SANFLAGS"
  expect_true "build it (pto compile runs at build time)" log cmake --build "$T/cm"
  OUT=$("$T/cm/embed_demo" 2>&1)
  expect_true "the find_package build runs: $OUT" grep -q PASS <<<"$OUT"
  expect_true "ctest runs it" log ctest --test-dir "$T/cm" --output-on-failure
else
  echo "FAIL: no ptoConfig.cmake installed: find_package(pto) cannot be tested"
  FAILS=$((FAILS + 1))
fi
finish
