#!/usr/bin/env bash
# examples/cmake against pto installed into a temporary prefix (and against this build tree):
# find_package(pto), pto_add_program compiling a .ptir at build time, the work dir exposed to a
# C program that loads and runs it; an unchanged build does nothing, an edited .ptir recompiles.
source "$(dirname "$0")/lib/common.bash"
command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 77; }
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
BUILD=$(cd "$(dirname "$PTO")/.." && pwd)
# A sanitized pto build needs a sanitized application (the runtime must come first).
san=(-DCMAKE_C_FLAGS="$PTO_SANFLAGS")
export PTO_CACHE_DIR="$T/cache"
cp -r "$PTO_SOURCE_DIR/examples/cmake" "$T/src"

log() { "$@" >"$T/step.log" 2>&1 || { cat "$T/step.log"; return 1; }; }
expect_true "cmake --install into a temporary prefix" log cmake --install "$BUILD" --prefix "$T/prefix"
expect_true "the prefix has the package config" test -f "$T/prefix/lib/cmake/pto/ptoConfig.cmake"
expect_true "configure the example against the install" \
  log cmake -S "$T/src" -B "$T/ex" "${gen[@]}" -DCMAKE_PREFIX_PATH="$T/prefix" "${san[@]}"
expect_true "build it (pto compile runs at build time)" log cmake --build "$T/ex"
expect_true "the work dir was made" test -f "$T/ex/vadd.pto/manifest.json"
expect_true "the depfile was written" test -f "$T/ex/vadd.pto.d"
if [ -n "$PTO_SANFLAGS" ]; then
  expect_true "the demo was built with the sanitizers pto was ($PTO_SANFLAGS)" \
    grep -q 'lib[at]san' <<<"$(ldd "$T/ex/vadd_demo")"
fi
OUT=$("$T/ex/vadd_demo" 2>&1)
expect_true "the program runs: $OUT" grep -q PASS <<<"$OUT"
expect_true "ctest runs it" log ctest --test-dir "$T/ex" --output-on-failure
if [ ${#gen[@]} -gt 0 ]; then
  expect_true "nothing to do when nothing changed" \
    bash -c "cmake --build '$T/ex' | grep -q 'no work to do'"
  sleep 1.1
  sed -i 's/16 rows per task/16 rows per task (edited)/' "$T/src/vadd.ptir"
  expect_true "an edited .ptir recompiles the work dir" \
    bash -c "cmake --build '$T/ex' | grep -q 'pto compile vadd'"
fi
OUT=$("$T/ex/vadd_demo" 2>&1)
expect_true "still runs after the rebuild" grep -q PASS <<<"$OUT"

# The same against the build tree, without installing.
expect_true "configure the example against the build tree" \
  log cmake -S "$T/src" -B "$T/ex2" "${gen[@]}" -Dpto_DIR="$BUILD/cmake" "${san[@]}"
expect_true "build it" log cmake --build "$T/ex2"
OUT=$("$T/ex2/vadd_demo" 2>&1)
expect_true "the build-tree program runs: $OUT" grep -q PASS <<<"$OUT"
finish
