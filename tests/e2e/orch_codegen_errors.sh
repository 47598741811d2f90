#!/usr/bin/env bash
# Launch-time errors of emitted orchestration code, which the verifier cannot see: a runtime
# loop step of zero (a launch error naming the loop, never an endless loop), a dynamic
# tensor.slice offset or tensor.read index outside the tensor (launch errors with the numbers,
# as in the reference interpreter). In-range values of the same programs pass --check.
source "$(dirname "$0")/lib/common.bash"

KERNEL='kernel @inc(%x: tensor[R,32] f32, out %y: tensor[R,32] f32) -> (tensor[R,32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32], valid=[R, 32])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}'

cat >"$T/zero_step.ptir" <<EOF
program zero_step
dynamic M, R
$KERNEL
orch @main(%x: tensor[M,32] f32, out %y: tensor[M,32] f32, %step: index = runtime)
    -> (tensor[M,32] f32) {
  for %b in range(0, M, %step) {
    %xs = tensor.slice(%x, [%b, 0], [8, 32])
    %ys = tensor.slice(%y, [%b, 0], [8, 32])
    call @inc(%xs, %ys)
  }
  return %y
}
EOF
cat >"$T/slice_offset.ptir" <<EOF
program slice_offset
dynamic M, R
$KERNEL
orch @main(%x: tensor[M,32] f32, out %y: tensor[M,32] f32, %off: index = runtime)
    -> (tensor[M,32] f32) {
  %xs = tensor.slice(%x, [%off, 0], [8, 32])
  %ys = tensor.slice(%y, [%off, 0], [8, 32])
  call @inc(%xs, %ys)
  return %y
}
EOF
cat >"$T/read_index.ptir" <<'EOF'
program read_index
kernel @addk(%x: tensor[8,32] f32, out %y: tensor[8,32] f32, %k: f32) -> (tensor[8,32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32])
  %s = tile.adds(%t, %k)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8,32] f32, out %y: tensor[8,32] f32, %i: index = runtime)
    -> (tensor[8,32] f32) {
  %v = tensor.read(%x, [%i, 0])
  call @addk(%x, %y, %v)
  return %y
}
EOF

# A zero step used to loop forever: the timeout turns a regression into a failure, not a hang.
run_pto_limited() { OUT=$(timeout 60 "$PTO" "$@" 2>&1); }
run_pto_limited run "$T/zero_step.ptir" --dim M=16 --in step=0
expect_true "zero step: exit 1, got $?" test "$?" = 1
expect_out "for: the step is zero"
run_pto 0 run "$T/zero_step.ptir" --dim M=20 --in step=8 --check && expect_out PASS
run_pto 0 run "$T/zero_step.ptir" --dim M=20 --in step=-8 --check && expect_out PASS

run_pto 1 run "$T/slice_offset.ptir" --dim M=16 --in off=16 &&
  expect_out "tensor.slice: offset 16 of dim 0 is outside the extent 16"
run_pto 1 run "$T/slice_offset.ptir" --dim M=16 --in off=-1 &&
  expect_out "tensor.slice: offset -1 of dim 0 is outside the extent 16"
run_pto 0 run "$T/slice_offset.ptir" --dim M=16 --in off=15 --check && expect_out PASS

run_pto 1 run "$T/read_index.ptir" --in i=8 && expect_out "tensor.read: index 8 of dim 0"
run_pto 0 run "$T/read_index.ptir" --in i=7 --check && expect_out PASS

# The first fatal error stops the orchestration (issue #34 item 26): a slice out of range in the
# first of 2e9 iterations used to run every remaining one (~30 minutes) before the launch
# returned. The timeout turns a regression into a failure.
cat >"$T/fatal_loop.ptir" <<EOF
program fatal_loop
dynamic M, R
$KERNEL
orch @main(%x: tensor[M,32] f32, out %y: tensor[M,32] f32, %off: index = runtime,
           %n: index = runtime) -> (tensor[M,32] f32) {
  for %i in range(0, %n) {
    %xs = tensor.slice(%x, [%off, 0], [8, 32])
    %ys = tensor.slice(%y, [0, 0], [8, 32])
    call @inc(%xs, %ys)
  }
  return %y
}
EOF
run_pto_limited run "$T/fatal_loop.ptir" --dim M=16 --in off=16 --in n=2000000000
expect_true "fatal in a long loop: exit 1, got $?" test "$?" = 1
expect_out "tensor.slice: offset 16 of dim 0 is outside the extent 16"
sed -e 's/range(0, %n)/range(0, %n, 3)/' -e 's/program fatal_loop/program fatal_loop3/' \
  "$T/fatal_loop.ptir" >"$T/fatal_loop3.ptir"
run_pto_limited run "$T/fatal_loop3.ptir" --dim M=16 --in off=16 --in n=6000000000
expect_true "fatal in a long loop with a step: exit 1, got $?" test "$?" = 1
expect_out "tensor.slice: offset 16 of dim 0 is outside the extent 16"
run_pto 0 run "$T/fatal_loop.ptir" --dim M=16 --in off=8 --in n=3 --check && expect_out PASS
finish
