#!/usr/bin/env bash
# Launch errors point at the source: the .ptir file:line:col of the op or call that failed, and
# for a kernel's "dynamic dimension bound twice" the symbol and the two parameters. Positions
# stay out of the cache key: a program that differs only in layout shares the binary and still
# reports its own lines; a work dir reports through its positions.json (outside the manifest).
source "$(dirname "$0")/lib/common.bash"

KERNEL='kernel @inc(%x: tensor[R,32] f32, out %y: tensor[R,32] f32) -> (tensor[R,32] f32) {
  %t = tile.load(%x, [0, 0], [8, 32], valid=[R, 32])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}'
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
cat >"$T/dim.ptir" <<EOF
program dim
dynamic M, R
$KERNEL
orch @main(%x: tensor[M,32] f32, out %y: tensor[M,32] f32) -> (tensor[M,32] f32) {
  %xs = tensor.slice(%x, [0, 0], [8, 32])
  %ys = tensor.slice(%y, [0, 0], [4, 32])
  call @inc(%xs, %ys)
  return %y
}
EOF
cat >"$T/zero_step.ptir" <<EOF
program zero_step
dynamic M, R
$KERNEL
orch @main(%x: tensor[M,32] f32, out %y: tensor[M,32] f32, %step: index = runtime)
    -> (tensor[M,32] f32) {
  for %b in range(0, M, %step) {
    incore {
      %t = tile.load(%x, [%b, 0], [8, 32])
      %u = tile.store(%t, [%b, 0], %y)
    }
  }
  return %y
}
EOF
# The same program three lines further down, indented differently: same structure, same key.
{ printf '\n\n\n'; sed 's/^  %xs = /    %xs = /' "$T/slice_offset.ptir"; } >"$T/moved.ptir"

export PTO_CACHE_DIR="$T/cache"
run_pto 1 run "$T/slice_offset.ptir" --dim M=16 --in off=16 &&
  expect_out "launch of 'main': $T/slice_offset.ptir:11:9: tensor.slice: orchestration: reported a fatal error (code 1): tensor.slice: offset 16 of dim 0 is outside the extent 16"
run_pto 1 run "$T/dim.ptir" --dim M=16 &&
  expect_out "$T/dim.ptir:12:3: call @inc: kernel 'inc' (id 0, task 0) failed with code 2 (a dynamic dimension bound twice with different values: 8 and 4): dynamic symbol R is 8 from parameter 'x' (dim 0) but 4 from parameter 'y' (dim 0)"

OUT=$(timeout 60 "$PTO" run "$T/zero_step.ptir" --dim M=16 --in step=0 2>&1)
expect_true "a zero step fails the launch" test $? = 1
expect_out "$T/zero_step.ptir:11:3: for: orchestration: reported a fatal error (code 1): for: the step is zero"

run_pto 1 run "$T/moved.ptir" --dim M=16 --in off=16 &&
  expect_out "$T/moved.ptir:14:11: tensor.slice: orchestration"
run_pto 0 cache stats && expect_out "hits             1"
expect_true "the moved program shared the binary (3 entries: slice_offset, dim, zero_step)" \
  bash -c '[ "$(ls -d "$1"/??/* | wc -l)" = 3 ]' _ "$PTO_CACHE_DIR"

# Work dirs: the key is the same whatever the layout; each dir reports its own lines.
run_pto 0 compile "$T/slice_offset.ptir" -o "$T/w1"
run_pto 0 compile "$T/moved.ptir" -o "$T/w2"
key() { sed -n 's/.*"cache_key": "\([0-9a-f]*\)".*/\1/p' "$1/manifest.json"; }
expect_true "positions are not in the cache key" test "$(key "$T/w1")" = "$(key "$T/w2")"
expect_true "the binaries are the same" cmp -s "$T/w1/orchestration/main.so" "$T/w2/orchestration/main.so"
expect_true "positions.json is beside the work dir" test -f "$T/w2/positions.json"
expect_true "positions.json is not in the manifest" bash -c '! grep -q positions "$1/manifest.json"' _ "$T/w2"
run_pto 1 run "$T/w1" --dim M=16 --in off=16 && expect_out "slice_offset.ptir:11:9: tensor.slice"
run_pto 1 run "$T/w2" --dim M=16 --in off=16 && expect_out "moved.ptir:14:11: tensor.slice"
# A work dir without the table still runs and reports, without a position.
rm "$T/w2/positions.json"
run_pto 1 run "$T/w2" --dim M=16 --in off=16 &&
  expect_out "launch of 'main': orchestration: reported a fatal error (code 1): tensor.slice"
echo '{"schema": "pto.positions/1", "ops": 7' >"$T/w1/positions.json" # unreadable: ignored
run_pto 1 run "$T/w1" --dim M=16 --in off=16 &&
  expect_out "launch of 'main': orchestration: reported a fatal error (code 1): tensor.slice"
run_pto 0 run "$T/w1" --dim M=16 --in off=8 --check && expect_out PASS

# A scalar division by a runtime zero names its assignment (a division by a literal cannot fail
# and carries no op id: the golden orchestration texts show none).
cat >"$T/div.ptir" <<EOF
program div
kernel @put(out %y: tensor[1,8] i64, %v: i64) -> (tensor[1,8] i64) {
  %t = tile.full([1, 8], i64, %v)
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(out %y: tensor[1,8] i64, %z: i64 = runtime) -> (tensor[1,8] i64) {
  %h = i64(10 / 2)
  %q = %h / %z
  %y1 = call @put(%y, %q)
  return %y1
}
EOF
run_pto 1 run "$T/div.ptir" --in z=0 &&
  expect_out "$T/div.ptir:9:3: %q =: orchestration: reported a fatal error (code 1): integer division by zero"
run_pto 0 run "$T/div.ptir" --in z=2 --check && expect_out PASS

# A kernel's tile divide by a runtime zero names the dividing op, in a fused run of divides and
# in an expand op, from a .ptir and from a work dir (positions.json), as the interpreter does.
cat >"$T/kdiv.ptir" <<EOF
program kdiv
kernel @k(%x: tensor[8,16] i32, %v: tensor[8,1] i32, out %y: tensor[8,16] i32, %d: i32)
    -> (tensor[8,16] i32) {
  %a = tile.load(%x, [0, 0], [8, 16])
  %b = tile.adds(%a, 1)
  %c = tile.divs(%b, 3)
  %e = tile.rems(%c, %d)
  %w = tile.load(%v, [0, 0], [8, 1])
  %f = tile.row_expand_div(%e, %w)
  %g = tile.div(%f, %a)
  %y1 = tile.store(%g, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[8,16] i32, %v: tensor[8,1] i32, out %y: tensor[8,16] i32,
           %d: i32 = runtime) -> (tensor[8,16] i32) {
  call @k(%x, %v, %y, %d)
  return %y
}
EOF
ZMSG="failed with code 1 (integer division by zero)"
run_pto 1 run "$T/kdiv.ptir" --in x=ones --in v=ones --in d=0 &&
  expect_out "kernel 'k' (id 0, task 0) $ZMSG: $T/kdiv.ptir:7:8: tile.rems"
run_pto 1 run "$T/kdiv.ptir" --in x=ones --in v=zeros --in d=5 &&
  expect_out "$ZMSG: $T/kdiv.ptir:9:8: tile.row_expand_div"
run_pto 0 compile "$T/kdiv.ptir" -o "$T/kdiv_wd"
run_pto 1 run "$T/kdiv_wd" --in x=zeros --in v=ones --in d=5 &&
  expect_out "$ZMSG: $T/kdiv.ptir:10:8: tile.div"
run_pto 0 run "$T/kdiv.ptir" --in x=ones --in v=ones --in d=5 --check && expect_out PASS

# A kernel's scalar assignment that divides (or takes mod) by a runtime zero names its line, as
# the tile divides do; from a work dir too.
cat >"$T/sdiv.ptir" <<EOF
program sdiv
kernel @k(%x: tensor[1,8] i32, out %y: tensor[1,8] i32, %a: i32, %b: i32) -> (tensor[1,8] i32) {
  %t = tile.load(%x, [0, 0], [1, 8])
  %q = %a / %b
  %r = mod(%a, %b + 1)
  %u = tile.adds(%t, %q + %r)
  %y1 = tile.store(%u, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[1,8] i32, out %y: tensor[1,8] i32, %a: i32 = runtime, %b: i32 = runtime)
    -> (tensor[1,8] i32) {
  call @k(%x, %y, %a, %b)
  return %y
}
EOF
run_pto 1 run "$T/sdiv.ptir" --in a=7 --in b=0 &&
  expect_out "kernel 'k' (id 0, task 0) $ZMSG: $T/sdiv.ptir:4:3: %q ="
run_pto 1 run "$T/sdiv.ptir" --in a=7 --in b=-1 && expect_out "$ZMSG: $T/sdiv.ptir:5:3: %r ="
run_pto 0 compile "$T/sdiv.ptir" -o "$T/sdiv_wd"
run_pto 1 run "$T/sdiv_wd" --in a=7 --in b=0 && expect_out "$ZMSG: $T/sdiv.ptir:4:3: %q ="
run_pto 0 run "$T/sdiv.ptir" --in a=7 --in b=2 --check && expect_out PASS

# A scalar divide elsewhere in a kernel names its statement too: an op's argument (here in a
# fused, streamed run), a loop bound; from a work dir too.
cat >"$T/adiv.ptir" <<EOF
program adiv
kernel @k(%x: tensor[1,8] i32, out %y: tensor[1,8] i32, %a: i32, %b: i32, %c: index)
    -> (tensor[1,8] i32) {
  %t = tile.load(%x, [0, 0], [1, 8])
  %u0 = tile.adds(%t, %a / %b)
  %u = tile.muls(%u0, mod(%a, %b - 1))
  %v = for %i in range(0, 8 / %c) iter(%w = %u) {
    %w2 = tile.adds(%w, 1)
    yield %w2
  }
  %y1 = tile.store(%v, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[1,8] i32, out %y: tensor[1,8] i32, %a: i32 = runtime, %b: i32 = runtime,
           %c: index = runtime) -> (tensor[1,8] i32) {
  call @k(%x, %y, %a, %b, %c)
  return %y
}
EOF
run_pto 1 run "$T/adiv.ptir" --in x=ones --in a=7 --in b=0 --in c=1 &&
  expect_out "kernel 'k' (id 0, task 0) $ZMSG: $T/adiv.ptir:5:9: tile.adds"
run_pto 1 run "$T/adiv.ptir" --in x=ones --in a=7 --in b=1 --in c=1 &&
  expect_out "$ZMSG: $T/adiv.ptir:6:8: tile.muls"
run_pto 1 run "$T/adiv.ptir" --in x=ones --in a=7 --in b=2 --in c=0 &&
  expect_out "$ZMSG: $T/adiv.ptir:7:8: for"
run_pto 0 compile "$T/adiv.ptir" -o "$T/adiv_wd"
run_pto 1 run "$T/adiv_wd" --in x=ones --in a=7 --in b=2 --in c=0 &&
  expect_out "$ZMSG: $T/adiv.ptir:7:8: for"
run_pto 0 run "$T/adiv.ptir" --in x=ones --in a=7 --in b=2 --in c=3 --check && expect_out PASS
# ... a yield's value, an if's condition
cat >"$T/ydiv.ptir" <<EOF
program ydiv
kernel @k(%x: tensor[1,8] i32, out %y: tensor[1,8] i32, %a: i32, %b: i32, %c: i32)
    -> (tensor[1,8] i32) {
  %t = tile.load(%x, [0, 0], [1, 8])
  %s = for %i in range(0, 2) iter(%w = %a) {
    yield %w / %b
  }
  if %s / %c > 0 {
    %u = tile.adds(%t, 1)
  }
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[1,8] i32, out %y: tensor[1,8] i32, %a: i32 = runtime, %b: i32 = runtime,
           %c: i32 = runtime) -> (tensor[1,8] i32) {
  call @k(%x, %y, %a, %b, %c)
  return %y
}
EOF
run_pto 1 run "$T/ydiv.ptir" --in x=ones --in a=7 --in b=0 --in c=1 &&
  expect_out "$ZMSG: $T/ydiv.ptir:6:5: yield"
run_pto 1 run "$T/ydiv.ptir" --in x=ones --in a=7 --in b=1 --in c=0 &&
  expect_out "$ZMSG: $T/ydiv.ptir:8:3: if"
run_pto 0 run "$T/ydiv.ptir" --in x=ones --in a=7 --in b=1 --in c=2 --check && expect_out PASS

finish
