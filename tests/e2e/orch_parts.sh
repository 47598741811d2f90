#!/usr/bin/env bash
# A long orchestration is written in parts (docs/cli.md, pto compile): the shorter
# sibling of orch_long_slow.sh, kept out of the slow label so that every run of the suite checks
# the parts (about 200 calls: the entry and a loop body of 300 statements split, values defined
# in the first part used in the last, a tensor carried through the split loop body to its yield).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/long_orch.bash"

long_orch_check 200 4
expect_true "no waiting line when stderr is not a terminal" \
  bash -c '! grep -q "waiting for" <<<"$1"' _ "$OUT"

# A loop body that is a scope (it creates intermediates, PTO2_SCOPE) split in parts, as the last
# statement but the return: the return opens no part of its own (no empty part).
{
  cat <<'PTIR'
program scoped

kernel @addk(%x: tensor[1,16] f32, out %y: tensor[1,16] f32, %k: f32) -> (tensor[1,16] f32) {
  %t = tile.load(%x, [0, 0], [1, 16])
  %s = tile.adds(%t, %k)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}

orch @main(%x: tensor[8,16] f32, out %y: tensor[8,16] f32) -> (tensor[8,16] f32) {
  for %i in range(0, 8) {
    %xs = tensor.slice(%x, [%i, 0], [1, 16])
    %t0 = tensor.create([1, 16], f32)
    call @addk(%xs, %t0, 1.0)
PTIR
  for ((j = 1; j <= 140; j++)); do
    printf '    %%t%d = tensor.create([1, 16], f32)\n    call @addk(%%t%d, %%t%d, 1.0)\n' \
      "$j" $((j - 1)) "$j"
  done
  printf '    %%ys = tensor.slice(%%y, [%%i, 0], [1, 16])\n    call @addk(%%t140, %%ys, 0.5)\n'
  printf '  }\n  return %%y\n}\n'
} >"$T/scoped.ptir"
run_pto 0 compile "$T/scoped.ptir" -o "$T/ws"
expect_true "the scope's body is written in parts" \
  grep -q '^      \[&\]() __attribute__((noinline)) {  // part 2' "$T/ws/orchestration/main.cpp"
grep -A1 '// part [0-9]* of this block' "$T/ws/orchestration/main.cpp" >"$T/opens" || true
expect_true "no empty part" bash -c '! grep -q "^ *}();" "$1"' _ "$T/opens"
run_pto 0 run "$T/scoped.ptir" --check && expect_out PASS

# On a terminal (script(1), where installed), the compile says what it waits for once the kernels
# are done: the long orchestration's C++ compile. A short one gets no such line.
if command -v script >/dev/null; then
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" compile "$T/long.ptir" -o "$T/w2" --no-cache)" \
    /dev/null)
  expect_true "a long orchestration's compile says what it waits for" \
    grep -qE "compile: waiting for the orchestration C\+\+, [0-9]+ calls in [0-9]+ functions" \
    <<<"$TTY_OUT"
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" compile "$EX/chain.ptir" -o "$T/chain" --no-cache)" \
    /dev/null)
  expect_true "a short one does not" bash -c '! grep -q "waiting for" <<<"$1"' _ "$TTY_OUT"
else
  echo "script(1) not found: the terminal checks are skipped"
fi

# bench/compile_orch.sh writes its programs with this lib's kernels and calls (long_orch_kernels,
# long_orch_calls): its smallest run compiles both of its shapes.
run_status 0 env TMPDIR="$T" "$PTO_SOURCE_DIR/bench/compile_orch.sh" "$(dirname "$(dirname "$PTO")")" \
  4 "straight loop" 1
expect_true "the bench compiled its straight program" grep -qE '^\| straight \| 4 \| 1 \|' <<<"$OUT"
expect_true "the bench compiled its loop program" grep -qE '^\| loop \| 4 \| 1 \|' <<<"$OUT"
finish
