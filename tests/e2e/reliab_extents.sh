#!/usr/bin/env bash
# Extents that the orchestration ABI's 32-bit extents (ChipTensor, as PTO2's) cannot hold are
# refused with a clear error (issue #34 item 4): tensor.create and tensor.reshape of a runtime
# extent, and entry tensors, used to convert to 32 bits silently (2^32 + 100 became 100, -1
# became 4294967295) and run with a wrong-sized tensor. Zero-sized tensors keep the runs small.
source "$(dirname "$0")/lib/common.bash"

cat >"$T/create.ptir" <<'PTIR'
program create_extents
kernel @copy(%x: tensor[8,32] f32, out %y: tensor[8,32] f32) -> (tensor[8,32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8,32] f32, out %y: tensor[8,32] f32, %a: index = runtime,
           %b: index = runtime) -> (tensor[8,32] f32) {
  %t = tensor.create([%a, %b], f32)
  %r = tensor.reshape(%x, [%a, %b])
  call @copy(%x, %y)
  return %y
}
PTIR
run_pto 1 run "$T/create.ptir" --in a=4294967396 --in b=0 &&
  expect_out "tensor.create: extent 4294967396 of dim 0 is outside 0 to 4294967295, the extents the orchestration ABI holds (32 bits)"
run_pto 1 run "$T/create.ptir" --in a=0 --in b=-1 &&
  expect_out "tensor.create: extent -1 of dim 1 is outside 0 to 4294967295"
# tensor.create fits, the reshape to the same extents does not.
sed 's/  %t = tensor.create(\[%a, %b\], f32)//' "$T/create.ptir" >"$T/reshape.ptir"
run_pto 1 run "$T/reshape.ptir" --in a=4294967552 --in b=0 &&
  expect_out "tensor.reshape: extent 4294967552 of dim 0 is outside 0 to 4294967295"
run_pto 0 run "$T/create.ptir" --in a=16 --in b=16 --check && expect_out PASS

# An entry tensor with an extent past 32 bits (and no elements).
cat >"$T/entry.ptir" <<'PTIR'
program entry_extents
dynamic Z, N
kernel @copy(%x: tensor[8,32] f32, out %y: tensor[8,32] f32) -> (tensor[8,32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8,32] f32, out %y: tensor[8,32] f32, %z: tensor[Z,N] f32)
    -> (tensor[8,32] f32) {
  call @copy(%x, %y)
  return %y
}
PTIR
run_pto 2 run "$T/entry.ptir" --dim Z=0 --dim N=4294967396 &&
  expect_out "parameter 2 'z': extent 4294967396 of dim 1 is outside 0 to 4294967295, the extents the orchestration ABI holds (32 bits)"
run_pto 0 run "$T/entry.ptir" --dim Z=0 --dim N=100 --check && expect_out PASS

# A slice clamped at the edge of its tensor, passed to a kernel parameter with a static extent,
# is a launch error naming the call and the parameter (docs/language.md), as in the interpreter: it used
# to run (exit 0), the kernel writing 4 rows through a 2-row view, past the end of y. A negative
# runtime slice extent is refused by name (it became a 4-billion-row view).
cat >"$T/clamped.ptir" <<'PTIR'
program clamped
dynamic M
kernel @k(%x: tensor[4,8] f32, %w: tensor[M,8] f32, out %y: tensor[4,8] f32) -> (tensor[4,8] f32) {
  %t = tile.load(%x, [0, 0], [4, 8])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[M,8] f32, out %y: tensor[M,8] f32, %i: index = runtime,
           %n: index = runtime) -> (tensor[M,8] f32) {
  %xs = tensor.slice(%x, [%i, 0], [%n, 8])
  %ys = tensor.slice(%y, [%i, 0], [4, 8])
  call @k(%xs, %x, %ys)
  return %y
}
PTIR
run_pto 0 run "$T/clamped.ptir" --dim M=8 --in i=4 --in n=4 --check && expect_out PASS
run_pto 1 run "$T/clamped.ptir" --dim M=8 --in i=6 --in n=4 &&
  expect_out "clamped.ptir:12:3: call @k: orchestration: reported a fatal error (code 1): call @k: parameter %x: extent of dim 0 is 2, expected 4"
run_pto 1 run "$T/clamped.ptir" --dim M=8 --in i=0 --in n=9223372036854775807 &&
  expect_out "call @k: parameter %x: extent of dim 0 is 8, expected 4"
run_pto 1 run "$T/clamped.ptir" --dim M=8 --in i=0 --in n=-4 &&
  expect_out "clamped.ptir:10:9: tensor.slice: orchestration: reported a fatal error (code 1): tensor.slice: extent -4 of dim 0 is negative"
finish
