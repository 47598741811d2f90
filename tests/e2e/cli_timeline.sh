#!/usr/bin/env bash
# pto run|bench --timeline, --timeline-svg and pto trace LOG --timeline: the terminal timeline of
# a launch (one row per core at the requested width, busy %, the critical path), its SVG, and the
# [STASK] lines 'pto run --trace' leaves in a log. The exact text is golden-tested in
# tests/unit/test_timeline.c; here the commands are wired up.
source "$(dirname "$0")/lib/common.bash"

CHAIN=("$EX/chain.ptir" --dim M=64 --in alpha=1)

# rows_are_wide WIDTH: every "core N" row of $OUT is WIDTH columns.
rows_are_wide() {
  python3 - "$1" "$OUT" <<'PY'
import sys
w, out = int(sys.argv[1]), sys.argv[2]
rows = [l for l in out.splitlines() if l.startswith("core ")]
sys.exit(0 if rows and all(len(r) == w for r in rows) else 1)
PY
}

run_pto 0 run "${CHAIN[@]}" --timeline --timeline-width 72 &&
  expect_out "timeline: 12 tasks on " && expect_out "critical path: " && expect_out "% busy"
expect_true "run --timeline rows are 72 columns" rows_are_wide 72

COLUMNS=50 run_pto 0 run "${CHAIN[@]}" --timeline
expect_true "without a terminal the width comes from COLUMNS" rows_are_wide 50

run_pto 0 bench "${CHAIN[@]}" --rounds 3 --warmup 1 --timeline --timeline-width 64 \
  --timeline-svg "$T/b.svg" && expect_out "timeline of the last measured launch:" &&
  expect_out "timeline: 12 tasks on "
expect_true "bench --timeline rows are 64 columns" rows_are_wide 64
expect_true "bench --timeline-svg writes an SVG with every task" \
  bash -c '[ "$(grep -c "class=\"task\"" "$1")" = 12 ] && grep -q "</svg>" "$1"' _ "$T/b.svg"

"$PTO" run "${CHAIN[@]}" --trace >/dev/null 2>"$T/run.log"
expect_true "run --trace writes one [STASK] line per task" \
  bash -c '[ "$(grep -c "^\[STASK\] v=1 " "$1")" = 12 ]' _ "$T/run.log"
run_pto 0 trace "$T/run.log" --timeline --timeline-width 60 --timeline-svg "$T/t.svg" &&
  expect_out "timeline of launch inv=" && expect_out "timeline: 12 tasks on " &&
  expect_out "device wall"
expect_true "trace --timeline rows are 60 columns" rows_are_wide 60
expect_true "trace --timeline-svg writes the SVG" grep -q "</svg>" "$T/t.svg"
run_pto 0 trace - --timeline --timeline-width 40 <"$T/run.log" && expect_out "timeline: 12 tasks"

grep -v STASK "$T/run.log" >"$T/spans.log"
run_pto 2 trace "$T/spans.log" --timeline && expect_out "no [STASK] task lines" &&
  expect_out "pto run --trace"
run_pto 2 trace "$T/run.log" --timeline --inv 999 && expect_out "inv=999"
run_pto 2 run "${CHAIN[@]}" --timeline-width 10 && expect_out "--timeline-width is '10'"
# Bounded above too (issue #34 item 23: 2^31 grew the process until it was killed).
run_pto 2 run "${CHAIN[@]}" --timeline --timeline-width 2147483648 &&
  expect_out "--timeline-width is '2147483648': expected an integer from 30 to 10000"
run_pto 2 run "${CHAIN[@]}" --timeline --timeline-width=10001 &&
  expect_out "expected an integer from 30 to 10000"
run_pto 0 run "${CHAIN[@]}" --timeline --timeline-width=10000 && expect_out "timeline:"
run_pto 2 run "${CHAIN[@]}" --timeline-svg && expect_out "--timeline-svg needs a file name"
# Checked before the run, like every output path (issue #34, item 18).
run_pto 2 run "${CHAIN[@]}" --timeline-svg "$T/no/such/dir/x.svg" &&
  expect_out "--timeline-svg $T/no/such/dir/x.svg: directory $T/no/such/dir does not exist"

finish
