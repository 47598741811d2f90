#!/usr/bin/env bash
# A kernel's if/for tensor result names one tensor parameter on every path: tensors in a kernel
# are its parameters, fixed when it is compiled (tests/programs/kernel_tensor_results.ptir runs
# the kinds that do). One that names %y on one path and %z on another is a compile error naming
# the result and both parameters, not the lowering's "'%w' is not a scalar here".
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

cat >"$T/if_two.ptir" <<'PTIR'
program if_two
kernel @k(%x: tensor[4, 8] f32, out %y: tensor[4, 8] f32, out %z: tensor[4, 8] f32, %c: bool)
    -> (tensor[4, 8] f32, tensor[4, 8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %w = if %c {
    yield %y
  } else {
    yield %z
  }
  tile.store(%t, [0, 0], %w)
  return %y, %z
}
PTIR
run_pto 2 run "$T/if_two.ptir" --entry k -D c=runtime --in c=true &&
  expect_out 'if_two.ptir:5:8: if result %w is %y on one path and %z on another'

cat >"$T/for_two.ptir" <<'PTIR'
program for_two
kernel @k(%x: tensor[4, 8] f32, out %y: tensor[4, 8] f32, out %z: tensor[4, 8] f32)
    -> (tensor[4, 8] f32, tensor[4, 8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %w = for %i in range(0, 2) iter(%a = %y) {
    %a1 = tile.store(%t, [0, 0], %a)
    yield %z
  }
  return %y, %z
}
PTIR
run_pto 2 run "$T/for_two.ptir" --entry k &&
  expect_out 'loop-carried tensor %a is %y on one path and %z on another'
finish
