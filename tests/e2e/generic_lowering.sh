#!/usr/bin/env bash
# PTO_GENERIC_LOWERING=1 (compiler/lower_x86.c): the kernels are lowered without the host's fast
# paths, into a cache entry of their own (the key text says why), and still compute the same
# results; a value other than 0 or 1 is refused before anything is written.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
export PTO_CACHE_DEBUG=1
unset PTO_GENERIC_LOWERING

run_pto 0 compile "$EX/softmax.ptir" -o "$T/native"
PTO_GENERIC_LOWERING=1 run_pto 0 compile "$EX/softmax.ptir" -o "$T/generic"
run_pto 0 cache stats
expect_out "entries          2"
expect_out "hits             0"
expect_true "the generic entry's key says why" grep -qx 'target.lowering=generic' "$T/generic/key.txt"
expect_true "the native entry's key does not" test "$(grep -c '^target.lowering=' "$T/native/key.txt")" = 0
expect_true "the generic manifest's toolchain says so" grep -q ';lowering=generic"' \
  "$T/generic/manifest.json"
expect_true "the generic kernel calls no x86 intrinsic" \
  test "$(grep -c 'llvm\.x86\.' "$T/generic/kernels/softmax_rows.ll")" = 0
# The exp's vscalefps on an AVX-512 host: the native kernel did take a fast path.
if grep -qw avx512f /proc/cpuinfo; then
  expect_true "the native kernel scales exp with vscalefps" \
    grep -q 'llvm.x86.avx512.mask.scalef.ps.512' "$T/native/kernels/softmax_rows.ll"
fi
for m in 100 7; do
  run_pto 0 run "$T/generic" --dim M=$m --check && expect_out PASS
done

# Each way hits its own entry.
PTO_GENERIC_LOWERING=1 run_pto 0 compile "$EX/softmax.ptir" -o "$T/generic2"
expect_true "the second generic compile is the same entry" \
  cmp -s "$T/generic/manifest.json" "$T/generic2/manifest.json"
run_pto 0 cache stats
expect_out "entries          2"
expect_out "hits             1"

# sin/cos stay vector code without the fast paths: 16-lane vectors whose branch to the exact
# reduction (past 2^20) tests all 16 lanes at once (sc.any); scalar code with that branch per
# element kept LLVM's loop vectorizer off, 5.5x slower (bench/RESULTS.md). N=100: a row's last 4
# columns go one by one.
SC="$PTO_SOURCE_DIR/bench/kernels/sincos.ptir"
for e in sin cos; do
  PTO_GENERIC_LOWERING=1 run_pto 0 compile "$SC" --entry $e -o "$T/sc_$e"
  expect_true "the generic ${e}_rows branches on 16 lanes at once" \
    grep -q '%sc.any = icmp ne i16' "$T/sc_$e/kernels/${e}_rows.ll"
  PTO_GENERIC_LOWERING=1 run_pto 0 run "$T/sc_$e" --dim M=32 --dim N=100 --check && expect_out PASS
done

PTO_GENERIC_LOWERING=yes run_pto 2 compile "$EX/softmax.ptir" -o "$T/bad"
expect_out "PTO_GENERIC_LOWERING is 'yes': expected one of: 0, 1"
expect_true "nothing written for a refused value" test ! -e "$T/bad"

finish
