#!/usr/bin/env bash
# A kernel's if/for tensor result names one tensor parameter on every path: tensors in a kernel
# are its parameters, fixed when it is compiled (tests/programs/kernel_tensor_results.ptir runs
# the kinds that do). One that names %y on one path and %z on another is a compile error naming
# the result and both parameters, not the lowering's "'%w' is not a scalar here"; pto check
# (which the interpreter's programs pass too) refuses it in the same words, as does an incore
# scope (it becomes a kernel), so check and compile agree.
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
run_pto 2 check "$T/if_two.ptir" &&
  expect_out 'if_two.ptir:5:8: if result %w is %y on one path and %z on another: a kernel'"'"'s tensors are its parameters'

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
run_pto 2 check "$T/for_two.ptir" &&
  expect_out 'for_two.ptir:7:5: loop-carried tensor %a is %y on one path and %z on another'

cat >"$T/incore_two.ptir" <<'PTIR'
program incore_two
orch @main(%x: tensor[4, 8] f32, %u: tensor[4, 8] f32, out %y: tensor[4, 8] f32, %c: i32 = runtime)
    -> (tensor[4, 8] f32) {
  incore "k" {
    %s = if %c > 0 {
      yield %x
    } else {
      yield %u
    }
    %t = tile.load(%s, [0, 0], [4, 8])
    tile.store(%t, [0, 0], %y)
  }
  return %y
}
PTIR
run_pto 2 check "$T/incore_two.ptir" &&
  expect_out 'incore_two.ptir:5:10: if result %s is %x on one path and %u on another'
# two views of one buffer are two parameters of the scope's kernel: refused as compile does
cat >"$T/incore_views.ptir" <<'PTIR'
program incore_views
orch @main(%x: tensor[8, 8] f32, out %y: tensor[4, 8] f32, %c: i32 = runtime) -> (tensor[4, 8] f32) {
  %v1 = tensor.slice(%x, [0, 0], [4, 8])
  %v2 = tensor.slice(%x, [4, 0], [4, 8])
  incore "k" {
    %s = if %c > 0 {
      yield %v1
    } else {
      yield %v2
    }
    %t = tile.load(%s, [0, 0], [4, 8])
    tile.store(%t, [0, 0], %y)
  }
  return %y
}
PTIR
run_pto 2 check "$T/incore_views.ptir" &&
  expect_out 'incore_views.ptir:6:10: if result %s is %v1 on one path and %v2 on another'
# one parameter on every path (a store's alias on one, the parameter on the other) still checks
cat >"$T/if_one.ptir" <<'PTIR'
program if_one
kernel @k(%x: tensor[4, 8] f32, out %y: tensor[4, 8] f32, %c: bool) -> (tensor[4, 8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %w = if %c {
    %y1 = tile.store(%t, [0, 0], %y)
    yield %y1
  } else {
    yield %y
  }
  return %w
}
PTIR
run_pto 0 check "$T/if_one.ptir"
finish
