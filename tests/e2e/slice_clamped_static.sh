#!/usr/bin/env bash
# A tensor.slice whose tensor extent, offset and requested extent are all static but which runs
# past the edge has a dynamic extent, bound at launch (docs/language.md): min(8, 20 - 16) rows,
# not a folded 4. Passing it where another static extent is declared is a launch error naming the
# call and the parameter (exit 1, compiled and --check alike, orch and host programs); it was a
# verifier error (exit 2). Where the parameter's extent is dynamic, or static and equal to the
# clamped one, the call runs. pto check / pto compile warn when the mismatch is known statically.
source "$(dirname "$0")/lib/common.bash"

# Rows 0-7 and 8-15 fit (static slices), rows 16.. asked as 8 are clamped to 4.
cat >"$T/orch.ptir" <<'PTIR'
program clamped_static
dynamic R
kernel @k8(%x: tensor[8, 16] f32, out %y: tensor[8, 16] f32) -> (tensor[8, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
kernel @k4(%x: tensor[4, 16] f32, out %y: tensor[4, 16] f32) -> (tensor[4, 16] f32) {
  %t = tile.load(%x, [0, 0], [4, 16])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
kernel @kd(%x: tensor[R, 16] f32, out %y: tensor[R, 16] f32) -> (tensor[R, 16] f32) {
  %t = tile.load(%x, [0, 0], [8, 16], valid=[R, 16])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[20, 16] f32, out %y: tensor[20, 16] f32) -> (tensor[20, 16] f32) {
  %x0 = tensor.slice(%x, [0, 0], [8, 16])
  %y0 = tensor.slice(%y, [0, 0], [8, 16])
  call @k8(%x0, %y0)
  %x1 = tensor.slice(%x, [8, 0], [8, 16])
  %y1 = tensor.slice(%y, [8, 0], [8, 16])
  call @k8(%x1, %y1)
  %x2 = tensor.slice(%x, [16, 0], [8, 16])
  %y2 = tensor.slice(%y, [16, 0], [8, 16])
  call @LAST(%x2, %y2)
  return %y
}
PTIR
for k in k8 k4 kd; do sed "s/@LAST/@$k/" "$T/orch.ptir" >"$T/$k.ptir"; done

# Mismatch: verifies, with a warning per argument naming the call, the parameter and both extents.
W1="pto: warning: $T/k8.ptir:30:12: call @k8: argument 1 for %x: %x2 has extent 4 in dim 0 (a tensor.slice clamped at its tensor's edge), the parameter declares 8: the launch will fail"
W2="$T/k8.ptir:30:17: call @k8: argument 2 for %y: %y2 has extent 4 in dim 0"
run_pto 0 check "$T/k8.ptir" && expect_out "$W1" && expect_out "$W2"
run_pto 0 compile "$T/k8.ptir" -o "$T/k8.out" && expect_out "$W1"
# The warning goes to stderr; the status and stdout are as without it.
"$PTO" check "$T/k8.ptir" >"$T/check.stdout" 2>/dev/null
expect_true "pto check prints nothing on stdout" test ! -s "$T/check.stdout"
# The launch fails, naming the call and the parameter, compiled and with --check.
LAUNCH="$T/k8.ptir:30:3: call @k8: orchestration: reported a fatal error (code 1): call @k8: parameter %x: extent of dim 0 is 4, expected 8"
run_pto 1 run "$T/k8.ptir" && expect_out "$LAUNCH"
run_pto 1 run "$T/k8.ptir" --check && expect_out "call @k8: parameter %x: extent of dim 0 is 4, expected 8"
run_pto 1 run "$T/k8.out" && expect_out "$LAUNCH"

# Equal static extent, and a dynamic one: no warning, they run, and --check agrees bit for bit.
for k in k4 kd; do
  run_pto 0 check "$T/$k.ptir" && expect_true "no warning for @$k" test -z "$OUT"
  run_pto 0 run "$T/$k.ptir" --check && expect_out "max abs err 0 " && expect_out PASS
done

# A static slice that fits stays static: passing it where another extent is declared is still
# a verifier error.
sed 's/call @k8(%x1, %y1)/call @k4(%x1, %y1)/; s/@LAST/@k4/' "$T/orch.ptir" >"$T/fits.ptir"
run_pto 2 check "$T/fits.ptir" &&
  expect_out "$T/fits.ptir:27:12: call @k4: argument 1 for %x: %x1: tensor[8, 16] f32 does not match tensor[4, 16] f32 (dim 0 is 8, the parameter's 4)"

# A host program: the clamped slice reaches the orch function's launch.
cat >"$T/host.ptir" <<'PTIR'
program clamped_host
kernel @k(%x: tensor[B, 16] f32, inout %y: tensor[B, 16] f32) -> (tensor[B, 16] f32) {
  %t = tile.load(%x, [0, 0], [B, 16])
  %u = tile.load(%y, [0, 0], [B, 16])
  %s = tile.add(%t, %u)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}
orch @blk(%x: tensor[B, 16] f32, inout %y: tensor[B, 16] f32) -> (tensor[B, 16] f32) {
  %y1 = call @k(%x, %y)
  return %y1
}
host @main(%x: tensor[20, 16] f32, inout %y: tensor[20, 16] f32) {
  %xs = tensor.slice(%x, [16, 0], [8, 16])
  %ys = tensor.slice(%y, [16, 0], [8, 16])
  call @blk(%xs, %ys)
}
PTIR
sed 's/\bB\b/8/g' "$T/host.ptir" >"$T/host8.ptir"
sed 's/\bB\b/4/g' "$T/host.ptir" >"$T/host4.ptir"
run_pto 0 check "$T/host8.ptir" &&
  expect_out "pto: warning: $T/host8.ptir:16:13: call @blk: argument 1 for %x: %xs has extent 4 in dim 0 (a tensor.slice clamped at its tensor's edge), the parameter declares 8: the launch will fail"
run_pto 1 run "$T/host8.ptir" && expect_out "@blk: launch of 'blk': parameter 'x': expected shape [8,16], got [4,16]"
run_pto 1 run "$T/host8.ptir" --check && expect_out "parameter 'x': expected shape [8,16], got [4,16]"
run_pto 0 check "$T/host4.ptir" && expect_true "no warning for the host's equal extent" test -z "$OUT"
run_pto 0 run "$T/host4.ptir" --check && expect_out "max abs err 0 " && expect_out PASS

# An incore scope over a clamped static slice: the outlined kernel is compiled for the extent the
# slice will have (4 rows, not a fresh dynamic symbol), as when the slice's extent was folded.
cat >"$T/incore.ptir" <<'PTIR'
program clamped_incore
orch @main(%x: tensor[20, 64] f32, out %z: tensor[20, 64] f32) -> (tensor[20, 64] f32) {
  %x0 = tensor.slice(%x, [0, 0], [16, 64])
  %z0 = tensor.slice(%z, [0, 0], [16, 64])
  incore "head" {
    %t = tile.load(%x0, [0, 0], [16, 64])
    %s = tile.muls(%t, 2.0)
    tile.store(%s, [0, 0], %z0)
  }
  %xs = tensor.slice(%x, [16, 0], [8, 64])
  %zs = tensor.slice(%z, [16, 0], [8, 64])
  incore "edge" {
    %t = tile.load(%xs, [0, 0], [8, 64], valid=[4, 64])
    %s = tile.muls(%t, 2.0)
    tile.store(%s, [0, 0], %zs)
  }
  return %z
}
PTIR
run_pto 0 compile "$T/incore.ptir" -o "$T/incore.out"
expect_true "the outlined kernel has the static extent" \
  grep -qF 'kernel @edge(%xs: tensor[4, 64] f32, out %zs: tensor[4, 64] f32)' "$T/incore.out/program.ptir"
run_pto 0 run "$T/incore.ptir" --check && expect_out "max abs err 0 " && expect_out PASS
finish
