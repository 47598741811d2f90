#!/usr/bin/env bash
# pto bench and pto trace: statistics, the mean tree, JSON samples, logs read back, bad usage.
source "$(dirname "$0")/lib/common.bash"

CHAIN=("$EX/chain.ptir" --dim M=64 --in alpha=1)

# json_check FILE PYTHON-EXPR: FILE parses as JSON and the expression (over d) is true.
json_check() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

# The mean tree: the summary table, then every span nested under chip.run.
run_pto 0 bench "${CHAIN[@]}" --rounds 50 --warmup 5 --tree &&
  expect_out "50 launches after 5 warmup, 12 tasks per launch" &&
  expect_out "mean of 50 launches (warmup 5 excluded); each node: mean ±stdev" &&
  expect_out "chip.run  " && expect_out "|- bind  " && expect_out "|- runner_run  " &&
  expect_out "|  \`- device_wall [dev]  " && expect_out "|     |- orch [dev]  " &&
  expect_out "|     \`- sched [dev]  " && expect_out "\`- copy_back  "
for m in "device wall" "host wall" "effective"; do
  expect_true "the table has a '$m' row of 50 samples" grep -qE "^$m +50 +[0-9.]+us" <<<"$OUT"
done
expect_true "no progress bar when stderr is not a terminal" bash -c '! grep -q "bench \[" <<<"$1"' _ "$OUT"
# On a terminal (script(1) gives one, where installed) a progress bar counts the launches.
if command -v script >/dev/null; then
  TTY_OUT=$(script -qec "$(printf '%q ' "$PTO" bench "${CHAIN[@]}" --rounds 20 --warmup 2)" /dev/null)
  expect_true "a progress bar on a terminal" grep -q "bench \[#*\.*\] 22/22 launches" <<<"$TTY_OUT"
fi

run_pto 0 bench "${CHAIN[@]}" --rounds 5 --warmup 0 --tree 1 --spread both &&
  expect_out "each node: mean ±stdev [min..max]" && expect_out "|- runner_run  "
expect_true "--tree 1 stops above device_wall" bash -c '! grep -q device_wall <<<"$1"' _ "$OUT"
run_pto 0 bench "${CHAIN[@]}" --rounds 3 --spread=none --tree=0 && expect_out "each node: mean"
expect_true "--tree=0 shows chip.run alone" bash -c '! grep -q "bind" <<<"$1"' _ "$OUT"

# JSON: parses and holds the 50 samples of every metric.
"$PTO" bench "${CHAIN[@]}" --rounds 50 --warmup 5 --json >"$T/bench.json" 2>"$T/bench.err"
expect_true "bench --json exits 0" test $? = 0
expect_true "bench --json parses" python3 -m json.tool "$T/bench.json" /dev/null
expect_true "bench --json holds 50 samples per metric" json_check "$T/bench.json" \
  'd["rounds"] == 50 and d["warmup"] == 5 and all(len(d["samples"][m]) == 50 and all(v > 0 for v in d["samples"][m]) for m in ("device_wall", "host_wall", "effective"))'
expect_true "bench --json has the mean tree" json_check "$T/bench.json" \
  '[n["label"] for n in d["mean_tree"]] == ["chip.run", "bind", "runner_run", "device_wall", "orch", "sched", "copy_back"]'

# pto run --trace, read back by pto trace.
"$PTO" run "${CHAIN[@]}" --trace >/dev/null 2>"$T/run.log"
expect_true "run --trace writes 7 [STRACE] lines" test "$(grep -c '^\[STRACE\] v=1 ' "$T/run.log")" = 7
run_pto 0 trace "$T/run.log" && expect_out "1 launch of hid " && expect_out "after 0 warmup; 7 records" &&
  expect_out "device wall  1"
run_pto 0 trace "$T/run.log" --tree --spread minmax && expect_out "|  \`- device_wall [dev]  " &&
  expect_out "each node: mean [min..max]"
run_pto 0 trace - --json <"$T/run.log"
expect_true "trace of stdin as JSON" json_check <(echo "$OUT") 'd["rounds"] == 1 and d["trace"]["records"] == 7'

# A benchmark's own log gives the same numbers as the benchmark.
PTO_LOG_LEVEL=timing "$PTO" bench "${CHAIN[@]}" --rounds 8 --warmup 3 --json >"$T/b.json" 2>"$T/b.log"
"$PTO" trace "$T/b.log" --json >"$T/t.json"
expect_true "trace of a bench log exits 0" test $? = 0
expect_true "a bench and the trace of its log agree" python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a["samples"] == b["samples"] and a["summary"] == b["summary"] and a["mean_tree"] == b["mean_tree"] else 1)' \
  "$T/b.json" "$T/t.json"
expect_true "the trace of a bench log has its tasks and cores (12 tasks)" python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a["ntasks"] == b["ntasks"] == 12 and a["ncores"] == b["ncores"] > 0 else 1)' \
  "$T/b.json" "$T/t.json"
sed 's/ tasks=[0-9]* cores=[0-9]*//' "$T/b.log" >"$T/b-pypto.log"
"$PTO" trace "$T/b-pypto.log" --json >"$T/t0.json"
expect_true "a log without tasks= and cores= (PyPTO's) reports 0 for both" json_check "$T/t0.json" \
  'd["ntasks"] == 0 and d["ncores"] == 0 and d["rounds"] == 8'

# Logger prefixes, two records on a line, a truncated line.
{
  sed 's/^/[2026-01-01 10:00:00][T0x1][TIMING] emit: /' "$T/run.log" | paste -d '' - - | head -3
  sed -n 7p "$T/run.log"
  echo '[STRACE] v=1 pid=1 tid=1 inv=9 hid=ab depth=1 name=chip.run.bi'
} >"$T/mixed.log"
run_pto 0 trace "$T/mixed.log" && expect_out "7 records, 1 truncated or malformed skipped"

# Bad usage and bad logs: exit 2 and a message naming the argument.
run_pto 2 bench && expect_out "pto bench: no program given"
run_pto 2 bench "${CHAIN[@]}" --rounds 0 && expect_out "--rounds 0: expected a positive integer"
run_pto 2 bench "${CHAIN[@]}" --rounds && expect_out "--rounds needs a number"
run_pto 2 bench "${CHAIN[@]}" --warmup -1 && expect_out "--warmup -1: expected an integer 0 or more"
# A count of launches past 100000 is refused before anything runs (it was obeyed for hours in
# silence off a terminal), for L2 and host programs alike, naming the flag.
run_pto 2 bench "${CHAIN[@]}" --warmup 1000000000 && expect_out "--warmup 1000000000: expected 0 to 100000 launches"
run_pto 2 bench "${CHAIN[@]}" --rounds=100001 && expect_out "--rounds 100001: expected 1 to 100000 launches"
run_pto 2 bench "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --rounds 200000 &&
  expect_out "--rounds 200000: expected 1 to 100000 launches"
run_pto 2 bench "${CHAIN[@]}" --spread wide && expect_out "--spread wide: expected stdev, minmax, both or none"
run_pto 2 bench "${CHAIN[@]}" --tree=x && expect_out "--tree x: expected a depth"
run_pto 2 bench "${CHAIN[@]}" --check && expect_out "unknown option '--check'"
run_pto 2 bench "${CHAIN[@]}" --out y="$T/y.npy" && expect_out "unknown option '--out'"
run_pto 2 bench "$EX/chain.ptir" --dim M=64 && expect_out "runtime scalar parameter 'alpha' (f32) has no value"
run_pto 2 bench "${CHAIN[@]}" --in nope=zeros && expect_out "--in nope: @main has no parameter named 'nope'"
run_pto 2 trace && expect_out "pto trace: no log file given"
run_pto 2 trace "$T/run.log" "$T/b.log" && expect_out "one log at a time"
run_pto 2 trace "$T/run.log" --bogus && expect_out "unknown option '--bogus'"
run_pto 2 trace "$T/run.log" --spread && expect_out "--spread needs stdev, minmax, both or none"
run_pto 2 trace "$T/missing.log" && expect_out "missing.log"
echo "no markers here" >"$T/empty.log"
run_pto 2 trace "$T/empty.log" && expect_out "empty.log: no [STRACE] records"
run_pto 2 trace "$T/run.log" --warmup 1 &&
  expect_out "every launch in the log is warmup" && expect_out "--warmup 1 is too many for this log"

# --help, with an example each.
run_pto 0 bench --help && expect_out "example:" && expect_out "pto bench examples/chain.ptir"
# bench takes run's compile options ("[same inputs as run]"): its help names each of them.
for f in --entry -D --arg --platform -O0 --no-cache --remote-cache --devices --transport --in --dim; do
  expect_out "$f"
done
run_pto 0 bench "${CHAIN[@]}" --rounds 1 --warmup 0 --remote-cache http://127.0.0.1:9/c &&
  expect_out "1 launch after 0 warmup, 12 tasks per launch"
run_pto 0 bench "$EX/add.ptir" --dim M=4 --rounds 2 && expect_out "2 launches after 3 warmup, 1 task per launch"
run_pto 0 trace --help && expect_out "example:" && expect_out "pto trace run.log"
finish
