#!/usr/bin/env bash
# range(lo, hi, step) whose induction variable would step past INT64_MAX (or below INT64_MIN)
# (issue #34 item 9): the loop runs exactly its iterations and ends, in the kernel, the
# orchestration, host code and the reference interpreter alike. Each iteration adds 1 to y, so
# --check (the interpreter's y against the compiled code's) and the y written prove the count;
# the timeout turns a regression (an endless loop) into a failure, not a hang.
source "$(dirname "$0")/lib/common.bash"

MAX=9223372036854775807
MIN=-9223372036854775808

cat >"$T/range.ptir" <<'PTIR'
program range_overflow
kernel @count(%x: tensor[8,32] f32, out %y: tensor[8,32] f32, %lo: index, %hi: index,
              %step: index) -> (tensor[8,32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32])
  %r = for %i in range(%lo, %hi, %step) iter(%a = %t) {
    %b = tile.adds(%a, 1.0)
    yield %b
  }
  %y1 = tile.store(%r, [0, 0], %y)
  return %y1
}
kernel @inc(inout %y: tensor[8,32] f32) -> (tensor[8,32] f32) {
  %t = tile.load(%y, [0, 0], [8, 32])
  %b = tile.adds(%t, 1.0)
  %y1 = tile.store(%b, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8,32] f32, out %y: tensor[8,32] f32, %lo: index = runtime,
           %hi: index = runtime, %step: index = runtime) -> (tensor[8,32] f32) {
  call @count(%x, %y, %lo, %hi, %step)
  for %i in range(%lo, %hi, %step) {
    call @inc(%y)
  }
  return %y
}
PTIR

# A static step other than 1 takes another path in the generated code than a runtime one.
sed -e 's/range(%lo, %hi, %step)/range(%lo, %hi, 5)/' -e 's/program range_overflow/program range_static/' \
  "$T/range.ptir" >"$T/range_static.ptir"

run_limited() { OUT=$(timeout 120 "$PTO" "$@" 2>&1); }
# y_is N: every element of the y written by the last run is N.
y_is() {
  /usr/bin/python3 -c 'import numpy, sys; a = numpy.load(sys.argv[1]); sys.exit(0 if (a == float(sys.argv[2])).all() else 1)' "$T/y.npy" "$1"
}

# case LO HI STEP COUNT: the kernel and the orchestration loop each run COUNT times: y = x + 2*COUNT.
case_of() {
  local file=$1 lo=$2 hi=$3 step=$4 count=$5
  rm -f "$T/y.npy"
  run_limited run "$file" --in lo="$lo" --in hi="$hi" --in step="$step" --in x=zeros --out y="$T/y.npy" --check
  local rc=$?
  expect_true "range($lo, $hi, $step) in $(basename "$file"): exit 0, got $rc" test "$rc" = 0
  expect_out PASS
  expect_true "range($lo, $hi, $step): $count iterations each" y_is $((2 * count))
}
case_of "$T/range.ptir" $((MAX - 10)) "$MAX" 8 2
case_of "$T/range.ptir" $((MAX - 1)) "$MAX" "$MAX" 1
case_of "$T/range.ptir" $((MIN + 10)) "$MIN" -8 2
case_of "$T/range.ptir" 0 "$MIN" "$MIN" 1
case_of "$T/range_static.ptir" $((MAX - 7)) "$MAX" 5 2
case_of "$T/range.ptir" 0 10 3 4

# Host code: the same loop around a callee.
cat >"$T/range_host.ptir" <<'PTIR'
program range_host
kernel @inc(inout %y: tensor[8,32] f32) -> (tensor[8,32] f32) {
  %t = tile.load(%y, [0, 0], [8, 32])
  %b = tile.adds(%t, 1.0)
  %y1 = tile.store(%b, [0, 0], %y)
  return %y1
}
orch @step(inout %y: tensor[8,32] f32) -> (tensor[8,32] f32) {
  %y1 = call @inc(%y)
  return %y1
}
host @main(inout %y: tensor[8,32] f32, %lo: index = runtime, %hi: index = runtime,
           %step: index = runtime) {
  for %i in range(%lo, %hi, %step) {
    call @step(%y) device=0
  }
}
PTIR
host_case() {
  local lo=$1 hi=$2 step=$3 count=$4
  rm -f "$T/y.npy"
  run_limited run "$T/range_host.ptir" --in lo="$lo" --in hi="$hi" --in step="$step" --in y=zeros \
    --out y="$T/y.npy" --check
  local rc=$?
  expect_true "host range($lo, $hi, $step): exit 0, got $rc" test "$rc" = 0
  expect_out PASS
  expect_true "host range($lo, $hi, $step): $count iterations" y_is "$count"
}
host_case $((MAX - 10)) "$MAX" 8 2
host_case $((MIN + 10)) "$MIN" -8 2
finish
