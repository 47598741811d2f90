#!/usr/bin/env bash
# The language's contract (docs/language.md) read sentence by sentence: every rule the other
# contract tests do not reach, as a program checked by `pto check` (the error, its file:line:col)
# or run compiled with --check (numpy's values, the interpreter's bits). Cases are in
# tests/e2e/data/contract_sentences.py.
source "$(dirname "$0")/lib/contract.bash"
run_contract "$PTO_SOURCE_DIR/tests/e2e/data/contract_sentences.py"

# print(parse(print(p))) equals print(p) byte for byte, over every construct of the grammar:
# literals of each form (hex, 1., 2.5E+1, inf, nan, a u64 maximum, an exact f16 default), typed
# results and iter variables, tile types with a space and a valid region, strings with escapes
# and a '#', comments, dynamic declarations on two lines, parallel loops with an empty body.
cat >"$T/rt.ptir" <<'PTIR'
program rt # header comment
dynamic M, N
dynamic K
kernel @k(%x: tensor[M, 16] f32, out %y: tensor[M, 16] f32, %s: f32 = -inf, %n: f64 = 1e-300,
          %u: u64 = 0xffffffffffffffff, %b: bool = false, %i: i8 = -128, %r: i32 = runtime)
    -> (tensor[M, 16] f32) {
  %t: tile[8, 16] f32 @vec valid[M, 16] = tile.load(%x, [0, 0], [8, 16], valid=[M, 16], pad=min)
  %c = 1.
  %d = 2.5E+1
  %e = nan
  %f = 0x10 * 3 - -2
  %g = !(%b || true) && %b != false
  %m = min(%r, 3)
  %q = mod(%r, -4) / 2
  %w = f32(%f) + %c
  %z, %z2 = if %g {
    yield %w, %d
  } else {
    yield %e, 1.0
  }
  %o = for %i2 in range(0, 4, 2) iter(%acc: f32 = %z) {
    yield %acc + 1.5
  }
  for %j in parallel(0, 2) {
  }
  %t2 = tile.muls(%t, %o)
  %y1 = tile.store(%t2, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[M, 16] f32, out %y: tensor[M, 16] f32) -> (tensor[M, 16] f32) {
  incore "a \"b\"\t\\ # c" { # the string holds a '#'
    %t = tile.load(%x, [0, 0], [8, 16], valid=[M, 16])
    tile.store(%t, [0, 0], %y)
  }
  return %y
}
PTIR
"$PTO" fmt "$T/rt.ptir" >"$T/rt1.ptir" 2>"$T/fmt.err" && "$PTO" fmt "$T/rt1.ptir" >"$T/rt2.ptir"
expect_true "pto fmt is a fixed point on its own output" cmp -s "$T/rt1.ptir" "$T/rt2.ptir"
expect_true "the printed program verifies" "$PTO" check "$T/rt1.ptir"
expect_true "the string keeps its escapes and its '#'" grep -qF 'incore "a \"b\"\t\\ # c"' "$T/rt1.ptir"
expect_true "u64's maximum prints whole" grep -qF '%u: u64 = 18446744073709551615' "$T/rt1.ptir"

# Dynamic values are excluded from the cache key: one entry serves every M.
export PTO_CACHE_DIR="$T/cache-dims"
run_pto 0 run "$T/rt.ptir" --dim M=5 --check && expect_out PASS
run_pto 0 run "$T/rt.ptir" --dim M=11 --check && expect_out PASS
run_pto 0 cache stats
expect_out "entries          1"
expect_out "hits             1"
finish
