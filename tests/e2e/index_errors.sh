#!/usr/bin/env bash
# Indices out of range in the second set's gathers, scatters and extracts fail the launch naming
# the kernel, the op's file:line:col (in a kernel function and in an incore scope, which becomes
# a kernel), the position of the index and its value (a row index: "%ix[2,0] = 10 is not a row
# of %tab (0 to 9)": the index tile's and the tensor's names and the tensor's rows); a work dir
# reports the same through its positions.json. (The interpreter's messages: test_ops_struct.)
source "$(dirname "$0")/lib/common.bash"

cat >"$T/rows.ptir" <<'PTIR'
program rows
dynamic V

kernel @put(%s: tensor[4,8] f32, inout %cache: tensor[V,8] f32, %row: i32)
    -> (tensor[V,8] f32) {
  %t = tile.load(%s, [0, 0], [4, 8])
  %c = tile.ci(%row, [1, 4], dtype=i32)
  %ix = tile.transpose(%c)
  %c1 = tile.scatter_rows(%t, %ix, [0], %cache)
  return %c1
}

orch @main(%tab: tensor[V,8] f32, %s: tensor[4,8] f32, inout %cache: tensor[V,8] f32,
           out %y: tensor[4,8] f32, %row: i32 = runtime, %c0: index = runtime, %prow: i32 = runtime)
    -> (tensor[V,8] f32, tensor[4,8] f32) {
  incore "look" {
    %ix = tile.full([4, 1], i32, %row)
    %e = tile.gather_rows(%tab, %ix, [0], [4, 8])
    %x = tile.extract(%e, [0, %c0], [4, 4])
    %x2 = tile.concat(%x, %x)
    tile.store(%x2, [0, 0], %y)
  }
  call @put(%s, %cache, %prow)
  return %cache, %y
}
PTIR

MSG="nothing outside a tensor was read or written"
# look and put are independent tasks that may run at once: each case makes only one of them fail
# (%row feeds the gather, %prow the scatter), so which error the launch reports is not a race.
run_pto 1 run "$T/rows.ptir" --dim V=10 --in row=10 --in c0=0 --in prow=0
expect_out "kernel 'look'" && expect_out "rows.ptir:18:10: tile.gather_rows: %ix[0,0] = 10 is not a row of %tab (0 to 9); $MSG"
run_pto 1 run "$T/rows.ptir" --dim V=10 --in row=-1 --in c0=0 --in prow=0
expect_out "tile.gather_rows: %ix[0,0] = -1 is not a row of %tab (0 to 9)"
run_pto 1 run "$T/rows.ptir" --dim V=10 --in row=2 --in c0=5 --in prow=0
expect_out "rows.ptir:19:10: tile.extract: offset 5 of dim 1 is outside 0..4 (the sub-tile must fit in the tile)"
# ids 8, 9, 10, 11: the launch fails at the third row (checked before any row is written)
run_pto 1 run "$T/rows.ptir" --dim V=10 --in row=0 --in c0=0 --in prow=8
expect_out "kernel 'put'" && expect_out "rows.ptir:9:9: tile.scatter_rows: %ix[2,0] = 10 is not a row of %cache (0 to 9)"
# a table of no rows: no index is one of its rows
run_pto 1 run "$T/rows.ptir" --dim V=0 --in row=0 --in c0=0 --in prow=0
expect_out "tile.gather_rows: %ix[0,0] = 0 is not a row of %tab (it has no rows)"
# in range: both paths agree
run_pto 0 run "$T/rows.ptir" --dim V=10 --in row=6 --in c0=4 --in prow=6 --check
expect_out PASS
# a work dir reports through positions.json
run_pto 0 compile "$T/rows.ptir" -o "$T/wd"
run_pto 1 run "$T/wd" --dim V=10 --in row=10 --in c0=0 --in prow=0
expect_out "rows.ptir:18:10: tile.gather_rows: %ix[0,0] = 10 is not a row of %tab (0 to 9)"

# A gather read by the matmul through its index tile instead of copied (plan_row_views: the
# attention's P . V) keeps the same checks and messages: rows, then the column offset.
cat >"$T/pv.ptir" <<'PTIR'
program pv
dynamic V

kernel @pv(%p: tensor[1,4] f32, %tab: tensor[V,8] f32, out %y: tensor[1,4] f32, %row: i32,
           %c0: index) -> (tensor[1,4] f32) {
  %tp = tile.load(%p, [0, 0], [1, 4], space=mat)
  %c = tile.ci(%row, [1, 4], dtype=i32)
  %ix = tile.transpose(%c)
  %e = tile.gather_rows(%tab, %ix, [%c0], [4, 4])
  %em = tile.move(%e, space=mat)
  %r = tile.move(%em, space=right)
  %l = tile.move(%tp, space=left)
  %o = tile.matmul(%l, %r)
  tile.store(%o, [0, 0], %y)
  return %y
}

orch @main(%p: tensor[1,4] f32, %tab: tensor[V,8] f32, out %y: tensor[1,4] f32,
           %row: i32 = runtime, %c0: index = runtime) -> (tensor[1,4] f32) {
  call @pv(%p, %tab, %y, %row, %c0)
  return %y
}
PTIR
run_pto 1 run "$T/pv.ptir" --dim V=10 --in row=8 --in c0=0
expect_out "kernel 'pv'" && expect_out "pv.ptir:9:8: tile.gather_rows: %ix[2,0] = 10 is not a row of %tab (0 to 9); $MSG"
run_pto 1 run "$T/pv.ptir" --dim V=10 --in row=-3 --in c0=0
expect_out "tile.gather_rows: %ix[0,0] = -3 is not a row of %tab (0 to 9)"
run_pto 1 run "$T/pv.ptir" --dim V=10 --in row=2 --in c0=5
expect_out "pv.ptir:9:8: tile.gather_rows: offset 5 of dim 1 is outside 0..4 (the rows' columns must fit in the tensor); $MSG"
run_pto 1 run "$T/pv.ptir" --dim V=10 --in row=2 --in c0=-2
expect_out "pv.ptir:9:8: tile.gather_rows: offset -2 of dim 1 is outside 0..4"
run_pto 0 run "$T/pv.ptir" --dim V=10 --in row=3 --in c0=4 --check
expect_out PASS
# The column offset where no offset fits (a tensor narrower than the rows) or where the tensor
# has 2^20 columns or more: named as the others are, not as a value at [0,1].
sed -e 's/^program pv$/program pvw/' -e 's/^dynamic V$/dynamic V, W/' -e 's/tensor\[V,8\]/tensor[V,W]/g' \
  "$T/pv.ptir" >"$T/pvw.ptir"
run_pto 1 run "$T/pvw.ptir" --dim V=4 --dim W=3 --in row=0 --in c0=0
expect_out "pvw.ptir:9:8: tile.gather_rows: offset 0 of dim 1: no offset fits (the rows' columns are 1 more than the tensor's); $MSG"
run_pto 1 run "$T/pvw.ptir" --dim V=4 --dim W=1048584 --in row=0 --in c0=1048581
expect_out "pvw.ptir:9:8: tile.gather_rows: offset 1048581 of dim 1 is outside 0..1048580 (the rows' columns must fit in the tensor); $MSG"
run_pto 1 run "$T/pvw.ptir" --dim V=4 --dim W=1048584 --in row=0 --in c0=-1
expect_out "tile.gather_rows: offset -1 of dim 1 is outside 0..1048580"
run_pto 0 run "$T/pvw.ptir" --dim V=4 --dim W=1048584 --in row=0 --in c0=1048580 --check
expect_out PASS

# An assemble's runtime offset past the edge names the dim and the offsets that fit, as the
# interpreter does; a negative one too.
cat >"$T/asm.ptir" <<'PTIR'
program asm
kernel @k(%x: tensor[16,16] f32, out %y: tensor[16,16] f32, %r: index) -> (tensor[16,16] f32) {
  %a = tile.load(%x, [0, 0], [16, 16])
  %b = tile.load(%x, [0, 0], [4, 8])
  %c = tile.assemble(%a, %b, [%r, 8])
  %y1 = tile.store(%c, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[16,16] f32, out %y: tensor[16,16] f32, %r: index = runtime)
    -> (tensor[16,16] f32) {
  call @k(%x, %y, %r)
  return %y
}
PTIR
run_pto 1 run "$T/asm.ptir" --in r=13
expect_out "asm.ptir:5:8: tile.assemble: offset 13 of dim 0 is outside 0..12 (the sub-tile must fit in the tile); $MSG"
run_pto 1 run "$T/asm.ptir" --in r=-1
expect_out "tile.assemble: offset -1 of dim 0 is outside 0..12"
run_pto 0 run "$T/asm.ptir" --in r=12 --check
expect_out PASS

# A tile.gather position out of range gives the range of the source tile's positions, in the
# interpreter's words (test_ops_struct): "index 16 at [0,2] is outside [0, 16) (positions of the
# source tile)", where kernels built before said only "value 16 at [0,2]".
cat >"$T/gat.ptir" <<'PTIR'
program gat
kernel @k(%a: tensor[4,4] f32, out %y: tensor[1,4] f32, %p: i32) -> (tensor[1,4] f32) {
  %t = tile.load(%a, [0, 0], [4, 4])
  %ix = tile.ci(%p, [1, 4], dtype=i32)
  %g = tile.gather(%t, %ix)
  %y1 = tile.store(%g, [0, 0], %y)
  return %y1
}
orch @main(%a: tensor[4,4] f32, out %y: tensor[1,4] f32, %p: i32 = runtime) -> (tensor[1,4] f32) {
  call @k(%a, %y, %p)
  return %y
}
PTIR
run_pto 1 run "$T/gat.ptir" --in p=14
expect_out "kernel 'k'" && expect_out "gat.ptir:5:8: tile.gather: index 16 at [0,2] is outside [0, 16) (positions of the source tile); $MSG"
run_pto 1 run "$T/gat.ptir" --in p=-2
expect_out "tile.gather: index -2 at [0,0] is outside [0, 16) (positions of the source tile)"
run_pto 0 run "$T/gat.ptir" --in p=12 --check
expect_out PASS
finish
