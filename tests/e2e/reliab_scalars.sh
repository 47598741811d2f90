#!/usr/bin/env bash
# Integer division and mod in generated orchestration behave like kernels and the interpreter
# (issue #10, class 3): the minimum value divided by -1 wraps (mod gives 0) instead of raising
# SIGFPE, and division by zero is a launch error (exit 1) naming the cause.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

prog() { # DTYPE
  cat <<PTIR
program div_$1
kernel @k(%x: tensor[1,8] $1, out %y: tensor[1,8] $1, %q: $1, %r: $1) -> (tensor[1,8] $1) {
  %t = tile.load(%x, [0, 0], [1, 8])
  %u = tile.adds(%t, %q)
  %v = tile.adds(%u, %r)
  %y1 = tile.store(%v, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[1,8] $1, out %y: tensor[1,8] $1, %a: $1 = runtime, %b: $1 = runtime) -> (tensor[1,8] $1) {
  %q = %a / %b
  %r = mod(%a, %b)
  call @k(%x, %y, %q, %r)
  return %y
}
PTIR
}
for dt in i8 i16 i32 i64; do prog $dt >"$T/div_$dt.ptir"; done
prog u32 >"$T/div_u32.ptir"

run_pto 0 run "$T/div_i32.ptir" --in a=-2147483648 --in b=-1 --check && expect_out PASS
run_pto 0 run "$T/div_i64.ptir" --in a=-9223372036854775808 --in b=-1 --check && expect_out PASS
run_pto 0 run "$T/div_i16.ptir" --in a=-32768 --in b=-1 --check && expect_out PASS
run_pto 0 run "$T/div_i8.ptir" --in a=-128 --in b=-1 --check && expect_out PASS
run_pto 0 run "$T/div_i32.ptir" --in a=-7 --in b=2 --check && expect_out PASS
run_pto 0 run "$T/div_i64.ptir" --in a=7 --in b=-2 --check && expect_out PASS
for dt in i32 i64 u32; do
  run_pto 1 run "$T/div_$dt.ptir" --in a=7 --in b=0 && expect_out "integer division by zero"
done
run_pto 1 run "$T/div_i64.ptir" --in a=-9223372036854775808 --in b=0 && expect_out "integer division by zero"
# The worker stays usable after a failed launch: bench runs every round.
run_pto 0 bench "$T/div_i32.ptir" --in a=-2147483648 --in b=-1 --rounds 3 --warmup 1

finish
