#!/usr/bin/env bash
# A runtime for-loop step of zero fails the launch in a kernel as in an orch (and as the reference
# interpreter reports it), rather than running no iteration; a negative one counts down.
source "$(dirname "$0")/lib/common.bash"

cat >"$T/step.ptir" <<'PTIR'
program step

kernel @k(out %y: tensor[1,8] f32, %s: index) -> (tensor[1,8] f32) {
  %t = tile.full([1, 8], f32, 0.0)
  %u = for %i in range(0, 4, %s) iter(%c = %t) {
    %c2 = tile.adds(%c, 1.0)
    yield %c2
  }
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}

orch @main(out %y: tensor[1,8] f32, %s: index = runtime, %o: index = runtime)
    -> (tensor[1,8] f32) {
  for %j in range(0, 1, %o) {
    call @k(%y, %s)
  }
  return %y
}
PTIR

run_pto 1 run "$T/step.ptir" --in s=0 --in o=1
expect_out "kernel 'k'" && expect_out "a for loop's step is zero"
run_pto 1 run "$T/step.ptir" --in s=0 --in o=1 --check
expect_out "a for loop's step is zero"
run_pto 1 run "$T/step.ptir" --in s=1 --in o=0
expect_out "the step is zero"
run_pto 0 run "$T/step.ptir" --in s=-1 --in o=1 --check && expect_out PASS
run_pto 0 run "$T/step.ptir" --in s=3 --in o=1 --check && expect_out PASS
finish
