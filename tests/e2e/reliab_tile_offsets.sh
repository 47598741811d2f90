#!/usr/bin/env bash
# A tile.load / tile.store offset out of range at run time (issue #34 item 24): the compiled
# kernel fails the launch with the interpreter's words (it used to load zeros or store nothing
# and exit 0). A negative offset of any dim, and a leading dim's offset past its extent, are
# errors; a row or column offset past the edge only clips the tile, in both.
source "$(dirname "$0")/lib/common.bash"

cat >"$T/offs.ptir" <<'PTIR'
program tile_offsets
kernel @shift(%x: tensor[4,16,32] f32, out %y: tensor[4,16,32] f32, %b: index, %r: index,
              %c: index, %sb: index, %sr: index) -> (tensor[4,16,32] f32) {
  %t = tile.load(%x, [%b, %r, %c], [8, 32])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [%sb, %sr, 0], %y)
  return %y1
}
orch @main(%x: tensor[4,16,32] f32, out %y: tensor[4,16,32] f32, %b: index = runtime,
           %r: index = runtime, %c: index = runtime, %sb: index = runtime,
           %sr: index = runtime) -> (tensor[4,16,32] f32) {
  call @shift(%x, %y, %b, %r, %c, %sb, %sr)
  return %y
}
PTIR

# run_both EXPECTED_TEXT ARGS...: the compiled kernel fails the launch with EXPECTED_TEXT, the
# reference interpreter's own message for these offsets (ir/interp.c window_of, whose texts
# test_interp checks).
run_both() {
  local want=$1
  shift
  run_pto 1 run "$T/offs.ptir" "$@" && expect_out "$want"
  expect_out "kernel 'shift'"
}
ok=(--in b=0 --in r=0 --in c=0 --in sb=0 --in sr=0)
run_pto 0 run "$T/offs.ptir" "${ok[@]}" --check && expect_out PASS
run_both "tile.load: offset -1 of dim 1 is negative" --in b=0 --in r=-1 --in c=0 --in sb=0 --in sr=0
run_both "tile.load: offset -8 of dim 2 is negative" --in b=1 --in r=0 --in c=-8 --in sb=0 --in sr=0
run_both "tile.load: offset -1 of dim 0 is negative" --in b=-1 --in r=0 --in c=0 --in sb=0 --in sr=0
run_both "tile.load: offset 4 of dim 0 is outside the tensor's extent 4" \
  --in b=4 --in r=0 --in c=0 --in sb=0 --in sr=0
run_both "tile.store: offset -3 of dim 1 is negative" --in b=0 --in r=0 --in c=0 --in sb=0 --in sr=-3
run_both "tile.store: offset 7 of dim 0 is outside the tensor's extent 4" \
  --in b=0 --in r=0 --in c=0 --in sb=7 --in sr=0
# Past the edge of the rows or columns: clipped (padded loads, partial stores), no error.
run_pto 0 run "$T/offs.ptir" --in b=3 --in r=12 --in c=40 --in sb=3 --in sr=20 --check &&
  expect_out PASS
finish
