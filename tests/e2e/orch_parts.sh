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
finish
