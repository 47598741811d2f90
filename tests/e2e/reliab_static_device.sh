#!/usr/bin/env bash
# A call's device= that is a constant outside the device set (device=3 compiled with --devices 2)
# was found only when the host ran it ("host @main: call @o: device=3 is outside the 2 devices",
# no position): it is now a compile error (exit 2) naming FILE:LINE:COL of the device=, before
# anything runs, and a negative constant is one of pto check. A device= known only at run time
# (a loop variable) is still checked at launch (docs/language.md, "L3: host programs").
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
host() { # host DEVICE_LINES: the host body's calls
  cat <<PTIR
program devx
kernel @k(%x: tensor[4,8] f32, out %y: tensor[4,8] f32) -> (tensor[4,8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @o(%x: tensor[4,8] f32, out %y: tensor[4,8] f32) -> (tensor[4,8] f32) {
  call @k(%x, %y)
  return %y
}
host @main(%x: tensor[4,8] f32, out %y: tensor[4,8] f32) -> (tensor[4,8] f32) {
  call @o(%x, %y) device=0
$1
  return %y
}
PTIR
}
host "  if true {
    call @o(%x, %y) device=1 + 2
  }" >"$T/three.ptir"
host "  for %r in range(0, 3) {
    call @o(%x, %y) device=%r
  }" >"$T/loop.ptir"
host "  call @o(%x, %y) device=-1" >"$T/neg.ptir"

where="$T/three.ptir:14:30: call @o: device=3 is outside the 2 devices (0..1) the program is compiled for: compile it with --devices 4 or more"
run_pto 2 compile "$T/three.ptir" --devices 2 -o "$T/wd" && expect_out "$where"
expect_true "a refused compile leaves no work dir" test ! -e "$T/wd"
for check in "" --check; do
  run_pto 2 run "$T/three.ptir" --devices 2 $check && expect_out "$where"
done
run_pto 2 run "$T/three.ptir" && expect_out "device=3 is outside the 1 device (0..0)"
run_pto 0 check "$T/three.ptir" # the device set is the compile's: a file alone has none
run_pto 0 run "$T/three.ptir" --devices 4 --check && expect_out PASS
run_pto 2 check "$T/neg.ptir" &&
  expect_out "$T/neg.ptir:13:26: call @o: device=-1 is negative: a call goes to device 0 .. N-1"

# Known only when the host runs: compiled, then refused at launch, compiled and interpreted.
run_pto 0 compile "$T/loop.ptir" --devices 2 -o "$T/loopwd"
OUT=$(timeout 120 "$PTO" run "$T/loopwd" 2>&1)
expect_true "a device= beyond the set at launch fails, exit 1, got $?" test "$?" = 1
expect_out "host @main: call @o: device=2 is outside the 2 devices (0..1)"
OUT=$(timeout 120 "$PTO" run "$T/loop.ptir" --devices 2 --check 2>&1)
expect_true "--check fails too, exit 1, got $?" test "$?" = 1
expect_out "call @o: device=2 is outside"
run_pto 0 run "$T/loop.ptir" --devices 3 --check && expect_out PASS
finish
