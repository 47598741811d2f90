#!/usr/bin/env bash
# Environment variables the command line reads: PTO_LOG_LEVEL takes the reference's level names
# (any case; each includes those before it, timing and later write the [STRACE] lines), and
# another value is refused (exit 2) naming the variable, where it was silently ignored (a misspelt
# "timnig" wrote nothing and said nothing).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
ADD=("$EX/add.ptir" --dim M=4)

# ---- PTO_LOG_LEVEL ----------------------------------------------------------------------------
run_pto 0 compile "$EX/add.ptir" -o "$T/wd"
for level in timnig 1 "timing " verbose; do
  run_status 2 env PTO_LOG_LEVEL="$level" "$PTO" run "${ADD[@]}" --out c="$T/c.npy"
  expect_out "PTO_LOG_LEVEL is '$level': expected one of: null, error, warn, timing, info, debug"
  expect_true "PTO_LOG_LEVEL=$level: nothing written" test ! -e "$T/c.npy"
done
run_status 2 env PTO_LOG_LEVEL=timnig "$PTO" bench "$T/wd" --dim M=4 --rounds 1 --warmup 0
expect_out "PTO_LOG_LEVEL is 'timnig'"
run_status 2 env PTO_LOG_LEVEL=timnig "$PTO" run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
expect_out "PTO_LOG_LEVEL is 'timnig'"
for level in "" null error warn WARNING; do
  run_status 0 env PTO_LOG_LEVEL="$level" "$PTO" run "$T/wd" --dim M=4
  expect_true "PTO_LOG_LEVEL='$level' writes no [STRACE] line" \
    test "$(grep -c '^\[STRACE\]' <<<"$OUT")" = 0
done
for level in timing TIMING info Debug; do
  run_status 0 env PTO_LOG_LEVEL="$level" "$PTO" run "$T/wd" --dim M=4
  expect_true "PTO_LOG_LEVEL=$level writes the [STRACE] lines" \
    test "$(grep -c '^\[STRACE\] v=1 ' <<<"$OUT")" -ge 7
done
run_status 0 env PTO_LOG_LEVEL=info "$PTO" run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
expect_true "PTO_LOG_LEVEL=info: a host program's [STRACE] lines" \
  test "$(grep -c '^\[STRACE\] v=1 .* l3=' <<<"$OUT")" -ge 1

finish
