#!/usr/bin/env bash
# Sizes computed from user input are overflow-checked (issue #10, class 2): a clear usage error
# (exit 2) at the first place the size is known, never a wrapped allocation or a crash.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

# ---- dynamic dims: checked when the arguments are bound -------------------------------------
for m in 9223372036854775807 2305843009213693952 4611686018427387904; do
  run_pto 2 run "$EX/add.ptir" --dim M=$m && expect_out "parameter 'a': shape [${m}x128] f32 is too large"
done
run_pto 2 run "$EX/add.ptir" --dim M=99999999999999999999999 && expect_out "out of range (at most 9223372036854775807)"
run_pto 2 bench "$EX/add.ptir" --dim M=9223372036854775807 --rounds 1 && expect_out "overflows 64 bits"
# Tensors that cannot fit the worker's 1 GiB together are refused before their host copies are
# made (add with M=10000000: 15 GB of host memory filled for 51 s, then "out of device memory";
# under this 3 GB ulimit, a bare "out of memory for parameter 'a'"). 699050 rows fit, 699051 not.
# (ASan's shadow memory cannot live under ulimit -v: no limit in sanitizer builds.)
vmax=3000000
[ -z "$PTO_SANFLAGS" ] || vmax=unlimited
run_status 2 bash -c 'ulimit -v "$2" && exec timeout 60 "$0" run "$1" --dim M=10000000' "$PTO" "$EX/add.ptir" "$vmax" &&
  expect_out "parameter 'a': shape [10000000x128] f32 (5120000000 bytes) brings the run's tensors to more than the 1073741824 bytes of device memory that hold them"
run_pto 2 run "$EX/add.ptir" --dim M=699051 && expect_out "parameter 'c': shape [699051x128] f32 (357914112 bytes) brings"

# ---- static shapes: checked by the verifier, with the position ------------------------------
big=4611686018427387904
cat >"$T/big.ptir" <<PTIR
program big
kernel @k(%a: tensor[$big,4] f32, out %c: tensor[$big,4] f32) -> (tensor[$big,4] f32) {
  %t = tile.load(%a, [0, 0], [32, 4])
  %c1 = tile.store(%t, [0, 0], %c)
  return %c1
}
orch @main(%a: tensor[$big,4] f32, out %c: tensor[$big,4] f32) -> (tensor[$big,4] f32) {
  call @k(%a, %c)
  return %c
}
PTIR
run_pto 2 check "$T/big.ptir" && expect_out "big.ptir:2:22: tensor extent $big: the tensor's size in bytes overflows 64 bits"
run_pto 2 run "$T/big.ptir" && expect_out "overflows 64 bits"
sed "s/\[$big,4\]/[M,$big,$big]/g; s/dynamic.*//; s/program big/program big\ndynamic M/" "$T/big.ptir" >"$T/big3.ptir"
run_pto 2 check "$T/big3.ptir" && expect_out "overflows 64 bits"

# ---- tile shapes ---------------------------------------------------------------------------
cat >"$T/tile.ptir" <<'PTIR'
program tc
kernel @k(out %c: tensor[64,64] f32) -> (tensor[64,64] f32) {
  %t = tile.full([4294967296, 4294967296], f32, 1.0)
  %c1 = tile.store(%t, [0, 0], %c)
  return %c1
}
orch @main(out %c: tensor[64,64] f32) -> (tensor[64,64] f32) {
  call @k(%c)
  return %c
}
PTIR
run_pto 2 check "$T/tile.ptir" && expect_out "tile.ptir:3:8: tile [4294967296, 4294967296] f32: its size in bytes overflows 64 bits"
sed 's/tile.full(\[4294967296, 4294967296\], f32/tile.create([3037000500, 3037000500], f64/; s/, 1.0)/)/' "$T/tile.ptir" >"$T/tile2.ptir"
run_pto 2 check "$T/tile2.ptir" && expect_out "overflows 64 bits"

# ---- sample shapes (--arg) -----------------------------------------------------------------
cat >"$T/unsh.ptir" <<'PTIR'
program unsh
kernel @k(%a: tensor[64,64] f32, out %c: tensor[64,64] f32) -> (tensor[64,64] f32) {
  %t = tile.load(%a, [0, 0], [64, 64])
  %c1 = tile.store(%t, [0, 0], %c)
  return %c1
}
orch @main(%a: tensor f32, out %c: tensor[64,64] f32) -> (tensor[64,64] f32) {
  %s = tensor.slice(%a, [0, 0], [64, 64])
  call @k(%s, %c)
  return %c
}
PTIR
run_pto 2 compile "$T/unsh.ptir" -o "$T/u1" --arg a=4611686018427387904x4611686018427387904 \
  && expect_out "--arg a=4611686018427387904x4611686018427387904: the shape's size in bytes (f32) overflows 64 bits"
run_pto 2 compile "$T/unsh.ptir" -o "$T/u2" --arg a=2305843009213693952x1 && expect_out "overflows 64 bits"
run_pto 2 compile "$T/unsh.ptir" -o "$T/u3" --arg a=99999999999999999999x1 && expect_out "a shape is 1 to 5 positive extents"

finish
